#pragma once
#include "solver/propagators/propagator.hpp"

namespace specwave {
class Comm;
// The elastic velocity-stress scheme (forward) on plan.device: the whole grid, one rank a shot (a `domain` of several
// ranks is refused, Error invalid_case). A build without the CUDA backend has a stub that refuses
// (elastic_no_cuda.cpp).
std::unique_ptr<Propagator> make_elastic_cuda_propagator(const Case& c, const Plan& plan, const Comm* domain);
}  // namespace specwave
