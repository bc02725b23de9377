#pragma once
#include "solver/propagators/propagator.hpp"

namespace specwave {
// Only in builds with the CUDA backend (SPECWAVE_HAVE_CUDA).
std::unique_ptr<Propagator> make_spectral_cuda_propagator(const Case& c, const Plan& plan);
}
