#include "solver/plan/acquisition.hpp"

#include <fmt/format.h>
#include <cmath>

#include "solver/case/errors.hpp"

namespace specwave {
namespace {

// Kaiser window shape parameters for half-widths r = 1..10 (Hicks 2002, table 2).
constexpr double hicks_beta[] = {1.24, 2.94, 3.33, 4.14, 5.26, 6.40, 7.51, 8.56, 9.56, 10.64};

// Modified Bessel function of the first kind, order 0, by its power series sum_k ((x/2)^k / k!)^2.
double bessel_i0(double x) {
  double term = 1, sum = 1;
  for (int k = 1; k < 60; ++k) {
    term *= (x / (2 * k)) * (x / (2 * k));
    sum += term;
    if (term < 1e-17 * sum) break;
  }
  return sum;
}

}  // namespace

Weights1D hicks_weights(double q, int radius) {
  Weights1D w;
  const double nearest = std::round(q);
  if (std::abs(q - nearest) < 1e-9 * std::max(1.0, std::abs(q))) {
    w.index.push_back(int(nearest));
    w.weight.push_back(1.0);
    return w;
  }
  const int i0 = int(std::floor(q));
  const double beta = hicks_beta[radius - 1];
  const double i0_beta = bessel_i0(beta);
  for (int i = i0 - radius + 1; i <= i0 + radius; ++i) {
    // w = sinc(x) * I0(beta sqrt(1 - (x/r)^2)) / I0(beta), x = i - q.
    const double x = i - q;
    const double sinc = std::sin(M_PI * x) / (M_PI * x);
    const double s = 1 - (x / radius) * (x / radius);
    const double window = s > 0 ? bessel_i0(beta * std::sqrt(s)) / i0_beta : 0.0;
    w.index.push_back(i);
    w.weight.push_back(sinc * window);
  }
  return w;
}

PointStencil make_point_stencil(const GridSpec& g, const Vec3& position, bool free_surface, const std::string& what,
                                int radius) {
  Weights1D w[3];
  for (int a = 0; a < 3; ++a) {
    const double q = (position[a] - g.origin[a]) / g.spacing[a];
    w[a] = hicks_weights(q, radius);
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
