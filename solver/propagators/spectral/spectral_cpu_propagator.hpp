#pragma once
#include "solver/propagators/propagator.hpp"

namespace specwave {
// With `domain` (more than one rank): this rank's blocks of the distributed FFT over plan.process_grid
// (pz, py, 1) (solver/parallel/distributed_fft.hpp).
std::unique_ptr<Propagator> make_spectral_cpu_propagator(const Case& c, const Plan& plan, const Comm* domain = nullptr);
}  // namespace specwave
