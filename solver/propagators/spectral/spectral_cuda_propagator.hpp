#pragma once
#include "solver/propagators/propagator.hpp"

namespace specwave {
// A build without the CUDA backend has a stub that refuses (spectral_no_cuda.cpp).
std::unique_ptr<Propagator> make_spectral_cuda_propagator(const Case& c, const Plan& plan);
}  // namespace specwave
