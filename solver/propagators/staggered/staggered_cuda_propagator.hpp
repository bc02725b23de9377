#pragma once
#include "solver/propagators/propagator.hpp"

namespace specwave {
class Comm;
// The staggered velocity-pressure scheme (a density model, attenuation) on plan.device: the whole grid, one rank a
// shot (a `domain` of several ranks is refused, Error invalid_case). A build without the CUDA backend has a stub that
// refuses (staggered_no_cuda.cpp).
std::unique_ptr<Propagator> make_staggered_cuda_propagator(const Case& c, const Plan& plan, const Comm* domain);
}  // namespace specwave
