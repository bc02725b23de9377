#pragma once
// Off-grid sources and receivers by band-limited interpolation (docs/numerics.md, "Sources and receivers"): per
// axis 2r weights, exact for constants and least-squares optimal over wavenumbers 0..pi/2 per sample (the
// role of Hicks' (2002) Kaiser-windowed sinc, whose weights sum to 0.996 half-way between nodes). The 3-D
// stencil is their product. Injection spreads s(t) over the stencil's points with weight w / (dz dy dx);
// sampling returns sum w u.
// With the grid inner product <u, g> = sum u g dz dy dx, sampling is exactly the adjoint of injection.
#include <numbers>
#include <vector>

#include "solver/case/case.hpp"

namespace specwave {

inline constexpr int interpolation_radius = 4;
// The band of the least-squares fit, in radians per sample: pi/2 is 4 points per wavelength (order 8's floor).
inline constexpr double interpolation_band = std::numbers::pi / 2;

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

// Weights along one axis for a position q in grid units: indices floor(q) - r + 1 .. floor(q) + r, or a single
// weight 1 when q is on the grid. Throws std::invalid_argument unless 1 <= radius <= 6 (the least-squares system's
// condition number grows ~30x per unit of radius: 1e8 at 6).
Weights1D interpolation_weights(double q, int radius = interpolation_radius);

// The 3-D stencil of a point. With a free surface, weights above z = 0 fold onto their mirror with a minus sign.
// Throws Error(invalid_case) when the stencil leaves the grid; `what` names the point in the message.
PointStencil make_point_stencil(const GridSpec& grid, const Vec3& position, bool free_surface, const std::string& what,
                                int radius = interpolation_radius);

}  // namespace specwave
