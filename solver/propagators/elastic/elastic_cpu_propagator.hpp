#pragma once
#include "solver/propagators/propagator.hpp"

namespace specwave {
// The elastic velocity-stress scheme (docs/numerics.md, "Isotropic elastic waves") on the CPU, the whole grid on one
// rank (the plan refuses a grid split over ranks). Its field (snapshots, the final field, the blow-up check) is the
// pressure -(s_zz + s_yy + s_xx) / 3.
std::unique_ptr<Propagator> make_elastic_cpu_propagator(const Case& c, const Plan& plan);
}  // namespace specwave
