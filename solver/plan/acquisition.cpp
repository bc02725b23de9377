#include "solver/plan/acquisition.hpp"

#include "kernels/elastic_point.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "solver/case/errors.hpp"

namespace specwave {
namespace {

// sin(a d) / d, with its limit a at d = 0.
template <class R>
R sin_over(R a, R d) {
  return d == 0 ? a : std::sin(a * d) / d;
}

// Solves the dense system m x = b in place (Gaussian elimination, partial pivoting); n <= 21 here.
template <class R>
std::vector<R> solve_dense(std::vector<R> m, std::vector<R> b) {
  const std::size_t n = b.size();
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t p = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::abs(m[r * n + c]) > std::abs(m[p * n + c])) p = r;
    if (p != c) {
      for (std::size_t k = 0; k < n; ++k) std::swap(m[c * n + k], m[p * n + k]);
      std::swap(b[c], b[p]);
    }
    for (std::size_t r = c + 1; r < n; ++r) {
      const R f = m[r * n + c] / m[c * n + c];
      for (std::size_t k = c; k < n; ++k) m[r * n + k] -= f * m[c * n + k];
      b[r] -= f * b[c];
    }
  }
  for (std::size_t c = n; c-- > 0;) {
    for (std::size_t k = c + 1; k < n; ++k) b[c] -= m[c * n + k] * b[k];
    b[c] /= m[c * n + c];
  }
  return b;
}

// Gauss-Legendre nodes and weights on [-1, 1] (Newton on P_n from Chebyshev guesses; exact for degree 2n - 1).
void gauss_legendre(int n, std::vector<long double>& nodes, std::vector<long double>& weights) {
  nodes.assign(n, 0);
  weights.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    long double x = std::cos(std::numbers::pi_v<long double> * (i + 0.75L) / (n + 0.5L)), dp = 1;
    for (int it = 0; it < 100; ++it) {
      long double p0 = 1, p1 = x;  // P_0, P_1; P_k by the three-term recurrence
      for (int k = 2; k <= n; ++k) {
        const long double pk = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
        p0 = p1;
        p1 = pk;
      }
      dp = n * (x * p1 - p0) / (x * x - 1);
      const long double dx = p1 / dp;
      x -= dx;
      if (std::abs(dx) < 1e-19L) break;
    }
    nodes[i] = x;
    weights[i] = 2 / ((1 - x * x) * dp * dp);
  }
}

// 1-D weights on the consecutive nodes first, first + 1, ...
Weights1D weights_of(int first, std::vector<double> w) {
  Weights1D out;
  for (std::size_t i = 0; i < w.size(); ++i) {
    out.index.push_back(first + int(i));
    out.weight.push_back(w[i]);
  }
  return out;
}

// How weights above z = 0 fold onto the grid at a free surface: not at all (they must not occur), onto their mirror
// node with a minus sign (odd: the pressure, the normal stress s_zz), or with a plus sign onto the mirror node (even:
// the elastic scheme's v_x and v_y) or onto the mirror half node (v_z, whose index i is the point i + 1/2: -k mirrors
// k - 1).
enum class ZFold { none, odd, even_node, even_half };

// The product stencil of three 1-D weight sets, folded at a free surface as `fold` says. Throws Error(invalid_case)
// when a weight's node leaves the grid.
PointStencil product_stencil(const GridSpec& g, const Vec3& position, ZFold fold, const std::string& what, int radius,
                             const Weights1D (&w)[3]) {
  const auto mirror = [&](int i) { return fold == ZFold::even_half ? -i - 1 : -i; };
  for (int a = 0; a < 3; ++a)
    for (int i : w[a].index) {
      const bool mirrored = a == 0 && fold != ZFold::none && i < 0;
      if ((i < 0 && !mirrored) || i >= g.shape[a] || (mirrored && mirror(i) >= g.shape[0]))
        throw Error(
            ExitCode::invalid_case,
            fmt::format("{} at ({}, {}, {}) m: its interpolation stencil (radius {} points) leaves the grid along {}; "
                        "move it at least {} points inside the grid",
                        what, position[0], position[1], position[2], radius, "zyx"[a], radius));
    }
  PointStencil s;
  s.position = position;
  for (std::size_t kz = 0; kz < w[0].index.size(); ++kz)
    for (std::size_t ky = 0; ky < w[1].index.size(); ++ky)
      for (std::size_t kx = 0; kx < w[2].index.size(); ++kx) {
        int iz = w[0].index[kz];
        double weight = w[0].weight[kz] * w[1].weight[ky] * w[2].weight[kx];
        if (iz < 0) {  // the image above the free surface
          iz = mirror(iz);
          if (fold == ZFold::odd) weight = -weight;
        }
        s.points.push_back({iz, w[1].index[ky], w[2].index[kx], weight});
      }
  return s;
}

}  // namespace

double spectral_point_band(double f_max, double v_min, double h) {
  const double k = 2 * std::numbers::pi * f_max * h / v_min;
  return std::clamp(0.9 * k, std::numbers::pi / 2, 0.8 * std::numbers::pi);
}

namespace {

// The least-squares fit shared by the spectral points and the derivative weights: n weights w_i at the nodes
// j0 + i (x_i = j0 + i - q) minimising int_0^a |H(k) - T(k)|^2 dk, H(k) = sum_i w_i exp(i k x_i), subject to
// `rows` . w = `rhs`, where T(k) = G(k) (a point) or i k G(k) (its derivative d/dq), G(k) = exp(-(courant k)^2 / 24).
// Normal equations with the multipliers (KKT system):
//   sum_l w_l sin(a (x_i - x_l)) / (x_i - x_l) + sum_c rows_ci mu_c = int_0^a G(k) c_i(k) dk,
// c_i = cos(k x_i) for a point, k sin(k x_i) for a derivative. The right side by 48-point Gauss-Legendre (the
// integrand is entire; its error is at rounding). In long double: the system's condition number reaches ~3e5.
using R = long double;
std::vector<double> fit_weights(int j0, int n, double q, double band, double courant, bool derivative,
                                const std::vector<std::vector<R>>& rows, const std::vector<R>& rhs) {
  const int m = n + int(rows.size());
  const R a = band;
  static const auto rule = [] {  // on [-1, 1], once
    std::pair<std::vector<R>, std::vector<R>> r;
    gauss_legendre(48, r.first, r.second);
    return r;
  }();
  std::vector<R> nodes(rule.first.size()), target(nodes.size());
  for (std::size_t g = 0; g < nodes.size(); ++g) {
    nodes[g] = (rule.first[g] + 1) * a / 2;
    const R ck = R(courant) * nodes[g];
    target[g] = rule.second[g] * a / 2 * std::exp(-ck * ck / 24) * (derivative ? nodes[g] : R(1));
  }
  const R x0 = R(j0) - R(q);  // x_i = x0 + i
  // x_i - x_l = i - l: the matrix takes 2n - 1 values. cos(k x_i), sin(k x_i) by rotation from x_0 in steps of 1.
  std::vector<R> sinc(2 * n - 1), mat(std::size_t(m) * m, 0), b(m, 0);
  for (int d = 1 - n; d < n; ++d) sinc[d + n - 1] = sin_over(a, R(d));
  for (std::size_t g = 0; g < nodes.size(); ++g) {
    R c = std::cos(nodes[g] * x0), s = std::sin(nodes[g] * x0);
    const R cs = std::cos(nodes[g]), sn = std::sin(nodes[g]);
    for (int i = 0; i < n; ++i) {
      b[i] += target[g] * (derivative ? s : c);
      const R next = c * cs - s * sn;
      s = s * cs + c * sn;
      c = next;
    }
  }
  for (int i = 0; i < n; ++i) {
    for (int l = 0; l < n; ++l) mat[std::size_t(i) * m + l] = sinc[i - l + n - 1];
    for (std::size_t c = 0; c < rows.size(); ++c)
      mat[std::size_t(i) * m + n + c] = mat[std::size_t(n + c) * m + i] = rows[c][std::size_t(i)];
  }
  for (std::size_t c = 0; c < rows.size(); ++c) b[std::size_t(n) + c] = rhs[c];
  const std::vector<R> w = solve_dense(std::move(mat), std::move(b));
  return std::vector<double>(w.begin(), w.begin() + n);
}

}  // namespace

Weights1D spectral_point_weights(double q, double courant, double band, int radius, bool derivative) {
  if (radius < 2 || radius > 8) throw std::invalid_argument("spectral_point_weights: radius must be 2..8");
  if (!(courant >= 0 && courant <= 2)) throw std::invalid_argument("spectral_point_weights: courant must be in [0, 2]");
  if (!(band >= std::numbers::pi / 4 && band <= 0.9 * std::numbers::pi))
    throw std::invalid_argument("spectral_point_weights: band must be in [pi/4, 0.9 pi]");
  // Target exp(-(courant k)^2 / 24) (times i k for the derivative), subject to H(0) = 1 (derivative: H(0) = 0 and
  // H'(0) = i, exact for linear functions) and H(pi) = 0, i.e. sum w_i = 1 (0; sum w_i x_i = 1) and
  // sum (-1)^j_i w_i = 0. On the grid a point's weights are symmetric, so H'(pi) = 0 too.
  const int j0 = int(std::round(q)) - radius, n = 2 * radius + 1;
  std::vector<std::vector<R>> rows(derivative ? 3 : 2, std::vector<R>(std::size_t(n)));
  for (int i = 0; i < n; ++i) {
    rows[0][std::size_t(i)] = 1;
    rows[1][std::size_t(i)] = (j0 + i) % 2 == 0 ? 1 : -1;
    if (derivative) rows[2][std::size_t(i)] = R(j0 + i) - R(q);
  }
  const std::vector<R> rhs = derivative ? std::vector<R>{0, 0, 1} : std::vector<R>{1, 0};
  return weights_of(j0, fit_weights(j0, n, q, band, courant, derivative, rows, rhs));
}

Weights1D derivative_weights(double q, int radius) {
  if (radius < 1 || radius > 6) throw std::invalid_argument("derivative_weights: radius must be 1..6");
  // The fit of i k over 0..interpolation_band on the 2r + 1 nodes round(q) - r .. round(q) + r, exact for constants
  // and linear functions (sum w_i = 0, sum w_i x_i = 1). On the grid the weights are antisymmetric.
  const int j0 = int(std::round(q)) - radius, n = 2 * radius + 1;
  std::vector<std::vector<R>> rows(2, std::vector<R>(std::size_t(n)));
  for (int i = 0; i < n; ++i) {
    rows[0][std::size_t(i)] = 1;
    rows[1][std::size_t(i)] = R(j0 + i) - R(q);
  }
  return weights_of(j0, fit_weights(j0, n, q, interpolation_band, 0.0, true, rows, {0, 1}));
}

Weights1D interpolation_weights(double q, int radius) {
  if (radius < 1 || radius > 6) throw std::invalid_argument("interpolation_weights: radius must be 1..6");
  Weights1D w;
  const double nearest = std::round(q);
  if (std::abs(q - nearest) < 1e-9 * std::max(1.0, std::abs(q))) {
    w.index.push_back(int(nearest));
    w.weight.push_back(1.0);
    return w;
  }
  // Least squares over the band: minimise int_0^a |sum_i w_i exp(i k x_i) - 1|^2 dk, x_i = i - q, subject to
  // sum_i w_i = 1 (exact for constants). The normal equations with the constraint's multiplier (KKT system):
  //   sum_l w_l sin(a (x_i - x_l)) / (x_i - x_l) + mu = sin(a x_i) / x_i,   sum_l w_l = 1.
  const int i0 = int(std::floor(q)), n = 2 * radius;
  const double a = interpolation_band;
  std::vector<double> m(std::size_t(n + 1) * (n + 1), 0.0), b(n + 1, 0.0);
  for (int i = 0; i < n; ++i) {
    for (int l = 0; l < n; ++l) m[std::size_t(i) * (n + 1) + l] = sin_over(a, double(i - l));
    m[std::size_t(i) * (n + 1) + n] = 1;
    m[std::size_t(n) * (n + 1) + i] = 1;
    b[i] = sin_over(a, double(i0 - radius + 1 + i) - q);
  }
  b[n] = 1;
  const std::vector<double> x = solve_dense(std::move(m), std::move(b));
  for (int i = 0; i < n; ++i) {
    w.index.push_back(i0 - radius + 1 + i);
    w.weight.push_back(x[i]);
  }
  return w;
}

PointStencil make_point_stencil(const GridSpec& g, const Vec3& position, bool free_surface, const std::string& what,
                                int radius) {
  Weights1D w[3];
  for (int a = 0; a < 3; ++a) w[a] = interpolation_weights((position[a] - g.origin[a]) / g.spacing[a], radius);
  return product_stencil(g, position, free_surface ? ZFold::odd : ZFold::none, what, radius, w);
}

namespace {
// The weight along the inactive axis of a 2-D grid (GridSpec::active): 1 at its one node, where the preflight has put
// every point (check_inside).
Weights1D flat_axis_weights() {
  Weights1D w;
  w.index.push_back(0);
  w.weight.push_back(1.0);
  return w;
}
}  // namespace

PointStencil make_spectral_point_stencil(const GridSpec& g, const Vec3& position, const std::array<double, 3>& courant,
                                         const std::array<double, 3>& band, const std::string& what) {
  Weights1D w[3];
  for (int a = 0; a < 3; ++a)
    w[a] = !g.active(a) ? flat_axis_weights()
                        : spectral_point_weights((position[a] - g.origin[a]) / g.spacing[a], courant[a], band[a],
                                                 spectral_point_radius);
  return product_stencil(g, position, ZFold::none, what, spectral_point_radius, w);
}

namespace {

// sum_a d_a / h_a times the stencil `axis_stencil(a)` of the derivative along axis a, its points merged (sorted, one
// entry per grid point).
template <class AxisStencil>
PointStencil directional(const GridSpec& g, const Vec3& position, const Vec3& direction, const std::string& what,
                         AxisStencil&& axis_stencil) {
  PointStencil out;
  out.position = position;
  for (int a = 0; a < 3; ++a) {
    if (direction[a] == 0) continue;
    if (!g.active(a))
      throw Error(
          ExitCode::invalid_case,
          fmt::format("{} at ({}, {}, {}) m: a 2-D grid (grid.shape[1] = 1) has no {} axis: a particle-velocity "
                      "receiver or a force must lie in the x-z plane (no \"v{}\" component, direction[{}] = 0)",
                      what, position[0], position[1], position[2], "zyx"[a], "zyx"[a], a));
    const PointStencil s = axis_stencil(a);
    for (GridPointWeight p : s.points) {
      p.weight *= direction[a] / g.spacing[a];
      out.points.push_back(p);
    }
  }
  const auto key = [](const GridPointWeight& p) { return std::array<int, 3>{p.iz, p.iy, p.ix}; };
  std::stable_sort(out.points.begin(), out.points.end(),
                   [&](const GridPointWeight& x, const GridPointWeight& y) { return key(x) < key(y); });
  std::vector<GridPointWeight> merged;
  for (const auto& p : out.points)
    if (!merged.empty() && key(merged.back()) == key(p))
      merged.back().weight += p.weight;
    else
      merged.push_back(p);
  out.points = std::move(merged);
  return out;
}

}  // namespace

PointStencil make_derivative_stencil(const GridSpec& g, const Vec3& position, const Vec3& direction, bool free_surface,
                                     const std::string& what, int radius) {
  return directional(g, position, direction, what, [&](int axis) {
    Weights1D w[3];
    for (int a = 0; a < 3; ++a) {
      const double q = (position[a] - g.origin[a]) / g.spacing[a];
      w[a] = a == axis ? derivative_weights(q, radius) : interpolation_weights(q, radius);
    }
    return product_stencil(g, position, free_surface ? ZFold::odd : ZFold::none, what, radius, w);
  });
}

PointStencil make_spectral_derivative_stencil(const GridSpec& g, const Vec3& position, const Vec3& direction,
                                              const std::array<double, 3>& courant, const std::array<double, 3>& band,
                                              const std::string& what) {
  return directional(g, position, direction, what, [&](int axis) {
    Weights1D w[3];
    for (int a = 0; a < 3; ++a)
      w[a] = !g.active(a) ? flat_axis_weights()
                          : spectral_point_weights((position[a] - g.origin[a]) / g.spacing[a], courant[a], band[a],
                                                   spectral_point_radius, a == axis);
    return product_stencil(g, position, ZFold::none, what, spectral_point_radius, w);
  });
}

namespace {

// A point of the elastic scheme whose stencil lies on fields without an image above a free surface (the normal and
// shear stresses, a derivative of the velocities) must not reach above it: the interpolation weights of its depth
// (`z`, the position shifted to the field's grid; the derivative's weights when `derivative`) must stay on nodes >= 0.
// The refusal gives the depth that does for this point's field: on that field's grid the interpolation weights need
// a node or q >= R - 1, the derivative's q >= R - 1/2 (its nodes round(q) - R .. round(q) + R).
void check_below_surface(const GridSpec& g, const Vec3& position, double z, bool free_surface, const std::string& what,
                         const std::string& kind, bool derivative = false) {
  if (!free_surface) return;
  const double q = (z - g.origin[0]) / g.spacing[0];
  const Weights1D w = derivative ? derivative_weights(q) : interpolation_weights(q);
  if (*std::min_element(w.index.begin(), w.index.end()) >= 0) return;
  const double h = g.spacing[0], shift = position[0] - z;  // 0: the field on the nodes along z; h / 2: half way
  const double depth = (derivative ? interpolation_radius - 0.5 : interpolation_radius - 1.0) * h + shift;
  const std::string nodes = shift == 0 ? "nodes" : "half nodes";
  throw Error(
      ExitCode::invalid_case,
      fmt::format(
          "{} at ({}, {}, {}) m lies {} m below the free surface: its stencil on the {} of the elastic grid "
          "along z ({} there) would reach above the surface, where the stresses and the velocities' "
          "derivatives have no image. {} needs {} m ({} points) or more here{}; move it down, or record "
          "particle velocity there",
          what, position[0], position[1], position[2], position[0] - g.origin[0], nodes,
          derivative ? "a derivative" : "interpolation", kind, depth, depth / h,
          derivative ? std::string() : fmt::format(", or a depth on those {} ({} m + k x {} m)", nodes, shift, h)));
}

}  // namespace

PointStencil make_elastic_derivative_stencil(const GridSpec& g, const Vec3& position, ReceiverComponent component,
                                             bool free_surface, const std::string& what) {
  // (velocity axis, derivative axis, sign) of each term.
  struct Term {
    int velocity, axis;
    double sign;
  };
  std::vector<Term> terms;
  switch (component) {
    case ReceiverComponent::divergence: terms = {{0, 0, 1}, {1, 1, 1}, {2, 2, 1}}; break;
    case ReceiverComponent::curl_z: terms = {{2, 1, 1}, {1, 2, -1}}; break;
    case ReceiverComponent::curl_y: terms = {{0, 2, 1}, {2, 0, -1}}; break;
    case ReceiverComponent::curl_x: terms = {{1, 0, 1}, {0, 1, -1}}; break;
    default: throw std::logic_error("make_elastic_derivative_stencil: not a divergence or curl component");
  }
  PointStencil out;
  out.position = position;
  for (const Term& t : terms) {
    if (!g.active(t.axis)) continue;  // (2-D: no derivative along y)
    Vec3 shifted = position;
    if (g.active(t.velocity)) shifted[t.velocity] -= g.spacing[t.velocity] / 2;
    check_below_surface(
        g, position, shifted[0], free_surface, what,
        fmt::format("A \"{}\" receiver (its d v_{} / d{})", to_string(component), "zyx"[t.velocity], "zyx"[t.axis]),
        t.axis == 0);
    Weights1D w[3];
    for (int a = 0; a < 3; ++a) {
      const double q = (shifted[a] - g.origin[a]) / g.spacing[a];
      w[a] = a == t.axis ? derivative_weights(q) : interpolation_weights(q);
    }
    const PointStencil s = product_stencil(
        g, shifted, ZFold::none, fmt::format("{} (its d v_{} / d{} points)", what, "zyx"[t.velocity], "zyx"[t.axis]),
        interpolation_radius, w);
    for (const GridPointWeight& p : s.points)
      out.points.push_back(
          {p.iz, p.iy, p.ix, t.sign * p.weight / g.spacing[t.axis], std::uint8_t(ElasticField::vz + t.velocity)});
  }
  return out;
}

PointStencil make_elastic_moment_stencil(const GridSpec& g, const Vec3& position, const std::array<double, 6>& m,
                                         bool free_surface, const std::string& what) {
  PointStencil out;
  out.position = position;
  for (int c = 0; c < 6; ++c) {
    if (m[std::size_t(c)] == 0) continue;
    Vec3 shifted = position;
    for (int a = 0; a < 3; ++a)
      if (elastic_half(c, a) && g.active(a)) shifted[a] -= g.spacing[a] / 2;
    check_below_surface(
        g, position, shifted[0], free_surface, what,
        fmt::format("A moment source (its m_{})", std::array{"zz", "yy", "xx", "zy", "zx", "yx"}[std::size_t(c)]));
    const PointStencil s = make_point_stencil(
        g, shifted, false,
        fmt::format("{} (its m_{} points)", what, std::array{"zz", "yy", "xx", "zy", "zx", "yx"}[std::size_t(c)]));
    for (const GridPointWeight& p : s.points)
      out.points.push_back({p.iz, p.iy, p.ix, m[std::size_t(c)] * p.weight, std::uint8_t(c + moment_field_offset)});
  }
  return out;
}

PointStencil make_elastic_stencil(const GridSpec& g, const Vec3& position, const Vec3& direction, bool source,
                                  bool free_surface, const std::string& what, std::span<const double> surface_ratio) {
  const auto weights = [&](const Vec3& at, Weights1D(&w)[3]) {
    for (int a = 0; a < 3; ++a) w[a] = interpolation_weights((at[a] - g.origin[a]) / g.spacing[a]);
  };
  PointStencil out;
  out.position = position;
  if (direction == Vec3{0, 0, 0}) {
    check_below_surface(g, position, position[0], free_surface, what,
                        source ? "A pressure source" : "A pressure receiver");
    Weights1D w[3];
    weights(position, w);
    const PointStencil node = product_stencil(g, position, ZFold::none, what, interpolation_radius, w);
    const double scale = source ? 1.0 : -1.0 / 3.0;
    for (const GridPointWeight& p : node.points)
      for (std::uint8_t f : {ElasticField::szz, ElasticField::syy, ElasticField::sxx})
        out.points.push_back({p.iz, p.iy, p.ix, scale * p.weight, f});
    return out;
  }
  for (int a = 0; a < 3; ++a) {
    if (direction[a] == 0) continue;
    Vec3 shifted = position;
    if (g.active(a)) shifted[a] -= g.spacing[a] / 2;  // v_a's index i is the point i + 1/2 (2-D: v_y on the nodes)
    // With a free surface the weights above z = 0 fold onto the mirror node (v_x, v_y) or half node (v_z), and the
    // images take the surface's conditions (below).
    Weights1D w[3];
    weights(shifted, w);
    const std::string name = fmt::format("{} (its v_{} points)", what, "zyx"[a]);
    const PointStencil half = product_stencil(g, shifted,
                                              !free_surface ? ZFold::none
                                              : a == 0      ? ZFold::even_half
                                                            : ZFold::even_node,
                                              name, interpolation_radius, w);
    for (const GridPointWeight& p : half.points)
      out.points.push_back({p.iz, p.iy, p.ix, direction[a] * p.weight, std::uint8_t(ElasticField::vz + a)});
    if (!free_surface || w[0].index.front() >= 0 || !g.active(a)) continue;
    // The images above the surface take its conditions (the even images make d v / dz = 0 there, so a point within
    // reach of them carries a first-order error):
    // - v_z's image at the height e = (k + 1/2) dz (the weight of half node -k - 1) is v_z(-e) = v_z(e) - 2 e d v_z /
    //   dz (0) + O(e^3), with d v_z / dz = -r (d v_x / dx + d v_y / dy) on the surface from s_zz = 0, r = lambda /
    //   (lambda + 2 mu) at the surface node (`surface_ratio`), the horizontal derivatives by the second-order
    //   differences of v_x and v_y on the surface plane about the node: the image's weight w adds 2 e r w / h_x at
    //   v_x(0, y, x + 1/2), minus that at v_x(0, y, x - 1/2), and the same along y;
    // - v_x's image at the height e = k dz (node -k) is v_x(e) - 2 e d v_x / dz (0), with d v_x / dz = -d v_z / dx from
    //   s_zx = 0 in a solid, by the difference of v_z on the surface about x + 1/2 (each v_z(0) from half node 0 as
    //   above, v_z(1/2) + dz / 2 r (d v_x / dx + d v_y / dy)): w adds 2 e w / h_x times v_z(0, y, x + 1) - v_z(0, y,
    //   x); v_y alike along y. Where either node is fluid (vs = 0, r = 1) the even image stays (in a fluid v_x has no
    //   such condition).
    if (surface_ratio.size() != std::size_t(g.shape[1]) * std::size_t(g.shape[2]))
      throw std::logic_error("make_elastic_stencil: a free surface needs lambda / (lambda + 2 mu) on its nodes");
    const auto ratio = [&](int iy, int ix) {
      return surface_ratio[std::size_t(iy) * std::size_t(g.shape[2]) + std::size_t(ix)];
    };
    const auto reach = [&](int b, int i) {
      if (i < 0 || i >= g.shape[b])
        throw Error(ExitCode::invalid_case,
                    fmt::format("{} at ({}, {}, {}) m: its surface correction reaches past the grid's {} face; move "
                                "it at least {} points inside the grid",
                                name, position[0], position[1], position[2], "zyx"[b], interpolation_radius + 1));
    };
    // c (d v_x / dx + d v_y / dy) on the surface at node (y, x), by the differences about it.
    const auto surface_divergence = [&](int iy, int ix, double c) {
      for (int b : {1, 2}) {
        if (!g.active(b)) continue;
        reach(b, (b == 1 ? iy : ix) - 1);
        const std::uint8_t f = std::uint8_t(ElasticField::vz + b);
        out.points.push_back({0, iy, ix, c / g.spacing[b], f});
        out.points.push_back({0, b == 1 ? iy - 1 : iy, b == 2 ? ix - 1 : ix, -c / g.spacing[b], f});
      }
    };
    // c v_z on the surface at node (y, x): v_z at half node 0 plus dz / 2 r (d v_x / dx + d v_y / dy) there.
    const auto surface_vz = [&](int iy, int ix, double c) {
      out.points.push_back({0, iy, ix, c, std::uint8_t(ElasticField::vz)});
      surface_divergence(iy, ix, c * g.spacing[0] / 2 * ratio(iy, ix));
    };
    std::size_t q = 0;  // the point of `half` (product_stencil's order: z, then y, then x)
    for (std::size_t kz = 0; kz < w[0].index.size(); ++kz)
      for (std::size_t ky = 0; ky < w[1].index.size(); ++ky)
        for (std::size_t kx = 0; kx < w[2].index.size(); ++kx, ++q) {
          const int iz = w[0].index[kz], iy = w[1].index[ky], ix = w[2].index[kx];
          if (iz >= 0) continue;
          const double weight = direction[a] * half.points[q].weight;
          if (a == 0) {
            surface_divergence(iy, ix, 2 * (-iz - 0.5) * g.spacing[0] * ratio(iy, ix) * weight);
          } else {
            const int ny = a == 1 ? iy + 1 : iy, nx = a == 2 ? ix + 1 : ix;  // the node after x + 1/2 (y + 1/2)
            reach(a, a == 1 ? ny : nx);
            if (ratio(iy, ix) >= 1 || ratio(ny, nx) >= 1) continue;
            const double c = 2 * -iz * g.spacing[0] * weight / g.spacing[a];
            surface_vz(ny, nx, c);
            surface_vz(iy, ix, -c);
          }
        }
  }
  // A node on the free surface holds half a cell (its z-derivative of s_zy or s_zx is 2 s(h/2) / h, the odd images'):
  // a source's weight there acts on half the mass, so it is doubled. The stencil is then the transpose of the
  // receiver's in the scheme's energy inner product (half weight on the surface's nodes), and reciprocity holds; in
  // the mirror picture the surface force and its image add at the nodes.
  if (source && free_surface)
    for (GridPointWeight& p : out.points)
      if (p.iz == 0 && (p.field == ElasticField::vy || p.field == ElasticField::vx)) p.weight *= 2;
  return out;
}

}  // namespace specwave
