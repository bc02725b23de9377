#pragma once
#include "solver/propagators/propagator.hpp"

namespace specwave {
class Comm;
// The staggered velocity-pressure scheme (a density model) on the CPU: the whole grid, or with a `domain` of several
// ranks this rank's block of plan.process_grid.
std::unique_ptr<Propagator> make_staggered_cpu_propagator(const Case& c, const Plan& plan, const Comm* domain);
}  // namespace specwave
