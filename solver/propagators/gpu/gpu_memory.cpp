#include "solver/propagators/gpu/gpu_memory.hpp"

#include <cmath>

#include "solver/plan/acquisition.hpp"
#include "solver/propagators/gpu/trace_ring.hpp"

namespace specwave {

double device_acquisition_bytes(const Case& c, int nt, double value_bytes) {
  const double ring = 8.0 * max_shot_receivers(c) * 2 * TraceRing::for_steps(nt).columns;
  // FDTD's derivative stencils (force sources, particle-velocity receivers) take 2 r + 1 nodes along their axes.
  bool derivative = has_velocity_receivers(c);
  for (const auto& shot : c.shots)
    for (const auto& s : shot.sources) derivative = derivative || s.kind == SourceKind::force;
  const double taps = c.scheme.method == Method::spectral ? 2.0 * spectral_point_radius + 1
                                                          : 2.0 * interpolation_radius + (derivative ? 1 : 0);
  const double per_point = std::pow(taps, 3) * (8.0 /* index_t */ + value_bytes + 4.0);
  return ring + (double(max_shot_receivers(c)) + double(max_shot_sources(c))) * per_point;
}

}  // namespace specwave
