#pragma once
#include "solver/propagators/propagator.hpp"

namespace specwave {
// Only in builds with the CUDA backend (SPECWAVE_HAVE_CUDA). With `domain` (more than one rank): this rank's
// block of plan.process_grid on its GPU, with the halo exchange.
std::unique_ptr<Propagator> make_fdtd_cuda_propagator(const Case& c, const Plan& plan, const Comm* domain = nullptr);
}
