#pragma once
#include "solver/propagators/propagator.hpp"

namespace specwave {
class Comm;
// The elastic velocity-stress scheme (docs/numerics.md, "Isotropic elastic waves") on the CPU: the whole grid, or with
// a `domain` of several ranks this rank's block of plan.process_grid (bitwise the single-rank run). Its field
// (snapshots, the final field, the blow-up check) is the pressure -(s_zz + s_yy + s_xx) / 3.
std::unique_ptr<Propagator> make_elastic_cpu_propagator(const Case& c, const Plan& plan, const Comm* domain);
}  // namespace specwave
