#pragma once
// Off-grid sources and receivers by band-limited interpolation (docs/numerics.md, "Sources and receivers"): per
// axis 2r weights, exact for constants and least-squares optimal over wavenumbers 0..pi/2 per sample (the
// role of Hicks' (2002) Kaiser-windowed sinc, whose weights sum to 0.996 half-way between nodes). The 3-D
// stencil is their product. Injection spreads s(t) over the stencil's points with weight w / (dz dy dx);
// sampling returns sum w u.
// With the grid inner product <u, g> = sum u g dz dy dx, sampling is exactly the adjoint of injection.
#include <array>
#include <cstdint>
#include <numbers>
#include <span>
#include <vector>

#include "solver/case/case.hpp"

namespace specwave {

inline constexpr int interpolation_radius = 4;
// The band of the least-squares fit, in radians per sample: pi/2 is 4 points per wavelength (order 8's floor).
inline constexpr double interpolation_band = std::numbers::pi / 2;

struct GridPointWeight {
  int iz, iy, ix;
  double weight;
  // Which of the scheme's fields the weight addresses: 0 for the acoustic schemes (their one field u); the elastic
  // scheme's ElasticField (kernels/elastic_point.hpp), whose half-way fields hold the point i + 1/2 at index i.
  std::uint8_t field = 0;
  bool operator==(const GridPointWeight&) const = default;
};

struct PointStencil {
  Vec3 position{0, 0, 0};
  std::vector<GridPointWeight> points;
  bool operator==(const PointStencil&) const = default;
};

struct Weights1D {
  std::vector<int> index;
  std::vector<double> weight;
};

// Weights along one axis for a position q in grid units: indices floor(q) - r + 1 .. floor(q) + r, or a single
// weight 1 when q is on the grid. Throws std::invalid_argument unless 1 <= radius <= 6 (the least-squares system's
// condition number grows ~30x per unit of radius: 1e8 at 6).
Weights1D interpolation_weights(double q, int radius = interpolation_radius);

// The spectral method's points (docs/numerics.md, "Sources and receivers of the spectral method"): per axis
// 2 r + 1 weights at the nodes round(q) - r .. round(q) + r, on the grid as well as off it. They are the least-squares
// fit over 0..band rad per sample of exp(-(courant k)^2 / 24) exp(i k (q - j)) (the split share of the k-space source
// factor sinc^2(c_ref |k| dt / 2) that each of source and receiver carries), exact for constants, with a zero at the
// Nyquist wavenumber (H(pi) = 0; a double zero for a point on the grid, whose weights are symmetric). Sources and
// receivers use the same weights, so sampling stays the adjoint of injection and reciprocity holds to rounding; the
// zero at Nyquist removes the instantaneous precursor of a point whose spectrum fills the wavenumber cube.
inline constexpr int spectral_point_radius = 6;
// The band of an axis: 0.9 of the case's highest significant wavenumber 2 pi f_max h / v_min, within
// [pi/2, 0.8 pi] (0.8 pi: 2.5 points per wavelength, the method's floor).
double spectral_point_band(double f_max, double v_min, double h);
// courant = c_ref dt / h of the axis (>= 0). Throws std::invalid_argument unless 2 <= radius <= 8,
// 0 <= courant <= 2 and pi/4 <= band <= 0.9 pi.
// With `derivative`, the weights of d/dq of that point (the fit of i k times the same target, exact for constants and
// linear functions, H(pi) = 0): a force source's and a particle-velocity receiver's axis.
Weights1D spectral_point_weights(double q, double courant, double band, int radius = spectral_point_radius,
                                 bool derivative = false);
// The derivative d/dq at q (grid units) for FDTD's force sources and particle-velocity receivers: 2 r + 1 weights at
// the nodes round(q) - r .. round(q) + r, the least-squares fit of i k over 0..interpolation_band, exact for constants
// and linear functions (antisymmetric on the grid). Throws std::invalid_argument unless 1 <= radius <= 6.
Weights1D derivative_weights(double q, int radius = interpolation_radius);

// The 3-D stencil of a point. With a free surface, weights above z = 0 fold onto their mirror with a minus sign.
// Throws Error(invalid_case) when the stencil leaves the grid; `what` names the point in the message.
PointStencil make_point_stencil(const GridSpec& grid, const Vec3& position, bool free_surface, const std::string& what,
                                int radius = interpolation_radius);
// The spectral method's stencil of a point (no free surface): spectral_point_weights on each axis, with
// courant[a] = c_ref dt / h_a and band[a]. Throws Error(invalid_case) when the stencil leaves the grid.
PointStencil make_spectral_point_stencil(const GridSpec& grid, const Vec3& position,
                                         const std::array<double, 3>& courant, const std::array<double, 3>& band,
                                         const std::string& what);

// The derivative along the unit vector `direction` (z, y, x) at a point, per metre (docs/numerics.md, "Force sources
// and particle-velocity receivers"): sum_a d_a / h_a times derivative_weights on axis a and the interpolation weights
// on the other two, merged into one list. Sampling with it gives d . grad u at the point; a force source d s(t)
// injects s(t) times it / (dz dy dx) (f = -div(d delta)), so the two stay each other's adjoint.
PointStencil make_derivative_stencil(const GridSpec& grid, const Vec3& position, const Vec3& direction,
                                     bool free_surface, const std::string& what, int radius = interpolation_radius);
// The same for the spectral method, from spectral_point_weights (derivative on axis a).
PointStencil make_spectral_derivative_stencil(const GridSpec& grid, const Vec3& position, const Vec3& direction,
                                              const std::array<double, 3>& courant, const std::array<double, 3>& band,
                                              const std::string& what);

// The elastic scheme's stencil of a point (docs/numerics.md, "Isotropic elastic waves"; no free surface): with a zero
// `direction`, a pressure point on the three normal stresses (a source: weight w each; a receiver of -(s_zz + s_yy +
// s_xx) / 3: -w / 3 each); else, for each axis a with direction[a] != 0, the stencil of the position shifted by -h_a /
// 2 along a on v_a, weight direction[a] w (a force source along the direction, or a particle-velocity receiver of the
// component along it). With a free surface the velocities' weights above z = 0 fold onto their images: v_x and v_y
// even on the mirror node; v_z's image at height e the mirror half node's value minus 2 e d v_z / dz, with d v_z / dz
// = -r (d v_x / dx + d v_y / dy) on the surface (s_zz = 0; r = lambda / (lambda + 2 mu) on the surface's nodes,
// `surface_ratio`, ny x nx in C order: Plan::surface_ratio), so a point on the surface sees v_z there
// (docs/numerics.md, "Free surface"). A source's weights on the surface's nodes (v_x, v_y there, which hold half a
// cell) are doubled, so that its stencil is the receiver's transpose in the scheme's energy inner product
// (reciprocity). A pressure point must lie interpolation_radius - 1 points below it. Throws Error(invalid_case) when a
// stencil leaves the grid or a pressure point is too shallow.
PointStencil make_elastic_stencil(const GridSpec& grid, const Vec3& position, const Vec3& direction, bool source,
                                  bool free_surface, const std::string& what, std::span<const double> surface_ratio);
// A moment-tensor source of the elastic scheme: for each non-zero component m_c (m_zz, m_yy, m_xx, m_zy, m_zx, m_yx)
// the stencil of the position shifted to that stress's grid (-h_a / 2 along each axis where it lies half way), weight
// m_c w, on field c + moment_field_offset (kernels/elastic_point.hpp: the propagator injects it as a moment rate). With
// a free surface the source must lie 3 points below it, as a pressure point.
// The elastic scheme's divergence (d v_z / dz + d v_y / dy + d v_x / dx) or curl component (curl_z = d v_x / dy -
// d v_y / dx, curl_y = d v_z / dx - d v_x / dz, curl_x = d v_y / dz - d v_z / dy) at a point: for each derivative,
// derivative_weights / h along its axis and the interpolation weights along the others, on the velocity's own grid
// (shifted by -h_a / 2 along its axis a); none along an inactive axis. With a free surface the point must lie 3 points
// below it. Throws Error(invalid_case) when a stencil leaves the grid.
PointStencil make_elastic_derivative_stencil(const GridSpec& grid, const Vec3& position, ReceiverComponent component,
                                             bool free_surface, const std::string& what);
PointStencil make_elastic_moment_stencil(const GridSpec& grid, const Vec3& position, const std::array<double, 6>& m,
                                         bool free_surface, const std::string& what);

}  // namespace specwave
