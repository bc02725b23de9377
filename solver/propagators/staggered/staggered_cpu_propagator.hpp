#pragma once
#include "solver/propagators/propagator.hpp"

namespace specwave {
// The staggered velocity-pressure scheme (a density model) on the CPU, the whole grid on one rank.
std::unique_ptr<Propagator> make_staggered_cpu_propagator(const Case& c, const Plan& plan);
}  // namespace specwave
