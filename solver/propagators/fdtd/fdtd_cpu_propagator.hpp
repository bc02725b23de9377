#pragma once
#include "solver/propagators/propagator.hpp"

namespace specwave {
// With `domain` (more than one rank), this rank's block of plan.process_grid, with halo exchange.
std::unique_ptr<Propagator> make_fdtd_cpu_propagator(const Case& c, const Plan& plan, const Comm* domain = nullptr);
}  // namespace specwave
