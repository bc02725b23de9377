#pragma once
#include "solver/propagators/propagator.hpp"

namespace specwave {
// A build without the CUDA backend has a stub that refuses (fdtd_no_cuda.cpp). With `domain` (more than one rank): this
// rank's block of plan.process_grid on its GPU, with the halo exchange.
std::unique_ptr<Propagator> make_fdtd_cuda_propagator(const Case& c, const Plan& plan, const Comm* domain = nullptr);
}  // namespace specwave
