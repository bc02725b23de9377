#pragma once
// Off-grid sources and receivers by windowed-sinc interpolation (Hicks 2002; docs/numerics.md).
// Injection spreads s(t) over the stencil's points with weight w / (dz dy dx); sampling returns sum w u.
// With the grid inner product <u, g> = sum u g dz dy dx, sampling is exactly the adjoint of injection.
#include <vector>

#include "solver/case/case.hpp"

namespace specwave {

inline constexpr int hicks_radius = 4;

struct GridPointWeight {
  int iz, iy, ix;
  double weight;
};

struct PointStencil {
  Vec3 position{0, 0, 0};
  std::vector<GridPointWeight> points;
};

struct Weights1D {
  std::vector<int> index;
  std::vector<double> weight;
};

// Weights along one axis for a position q in grid units (a single weight 1 when q is on the grid).
Weights1D hicks_weights(double q, int radius = hicks_radius);

// The 3-D stencil of a point. With a free surface, weights above z = 0 fold onto their mirror with a minus sign.
// Throws Error(invalid_case) when the stencil leaves the grid; `what` names the point in the message.
PointStencil make_point_stencil(const GridSpec& grid, const Vec3& position, bool free_surface, const std::string& what,
                                int radius = hicks_radius);

}  // namespace specwave
