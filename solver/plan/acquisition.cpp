#include "solver/plan/acquisition.hpp"

#include <fmt/format.h>
#include <cmath>
#include <stdexcept>

#include "solver/case/errors.hpp"

namespace specwave {
namespace {

// sin(a d) / d, with its limit a at d = 0.
double sin_over(double a, double d) { return d == 0 ? a : std::sin(a * d) / d; }

// Solves the dense system m x = b in place (Gaussian elimination, partial pivoting); n <= 21 here.
std::vector<double> solve_dense(std::vector<double> m, std::vector<double> b) {
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
      const double f = m[r * n + c] / m[c * n + c];
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

}  // namespace

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
    b[i] = sin_over(a, (i0 - radius + 1 + i) - q);
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
  for (int a = 0; a < 3; ++a) {
    const double q = (position[a] - g.origin[a]) / g.spacing[a];
    w[a] = interpolation_weights(q, radius);
    for (int i : w[a].index) {
      const bool mirrored = a == 0 && free_surface && i < 0;
      if ((i < 0 && !mirrored) || i >= g.shape[a] || (mirrored && -i >= g.shape[0]))
        throw Error(
            ExitCode::invalid_case,
            fmt::format("{} at ({}, {}, {}) m: its interpolation stencil (radius {} points) leaves the grid along {}; "
                        "move it at least {} points inside the grid",
                        what, position[0], position[1], position[2], radius, "zyx"[a], radius));
    }
  }
  PointStencil s;
  s.position = position;
  for (std::size_t kz = 0; kz < w[0].index.size(); ++kz)
    for (std::size_t ky = 0; ky < w[1].index.size(); ++ky)
      for (std::size_t kx = 0; kx < w[2].index.size(); ++kx) {
        int iz = w[0].index[kz];
        double weight = w[0].weight[kz] * w[1].weight[ky] * w[2].weight[kx];
        if (iz < 0) {  // odd image above the free surface
          iz = -iz;
          weight = -weight;
        }
        s.points.push_back({iz, w[1].index[ky], w[2].index[kx], weight});
      }
  return s;
}

}  // namespace specwave
