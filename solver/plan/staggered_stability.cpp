// The staggered scheme's dt limit where the density varies (docs/numerics.md, "Stability"): along one axis the
// operator is -K D- beta D+ (K = rho v^2 at the nodes, beta = 1/rho at the half nodes), whose largest eigenvalue a
// density contrast raises above the constant-density bound (g_max / h)^2 v^2. For a given model the column of the
// largest contrast is iterated (staggered_dt_max); for an inversion's densities, any field within its bounds
// (staggered_density_bounds_dt).
#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/stencil.hpp"
#include "solver/plan/plan.hpp"

namespace specwave {
namespace {

// The largest eigenvalue of the staggered operator -K D- beta D+ along axis `axis` over the grid's column through
// (i0, i1) of the other two axes (docs/numerics.md, "Stability"), by 400 power iterations from a Nyquist pattern on
// the symmetric form (D+ K^(1/2))^T beta (D+ K^(1/2)); the Rayleigh quotient (from below).
double column_eigenvalue(const Case& c, const VelocityModel& m, int axis, int i0, int i1) {
  const int n = c.grid.shape[axis], R = c.scheme.order / 2;
  const double h = c.grid.spacing[axis];
  const auto g = staggered_derivative_coefficients(R);
  const auto node = [&](int i) {
    std::array<int, 3> p{};
    int k = 0;
    for (int a = 0; a < 3; ++a) p[std::size_t(a)] = a == axis ? std::clamp(i, 0, n - 1) : (k++ == 0 ? i0 : i1);
    return p;
  };
  std::vector<double> sqrt_k(static_cast<std::size_t>(n), 0.0), beta(static_cast<std::size_t>(n + 2 * R), 0.0);
  for (int i = 0; i < n; ++i) {
    const auto p = node(i);
    const double v = m.at(p[0], p[1], p[2]);
    sqrt_k[std::size_t(i)] = std::sqrt(double(m.density_at(p[0], p[1], p[2])) * v * v);
  }
  for (int j = -R; j < n + R; ++j) {  // half node j + 1/2
    const auto a = node(j), b = node(j + 1);
    beta[std::size_t(j + R)] = 2 / (double(m.density_at(a[0], a[1], a[2])) + double(m.density_at(b[0], b[1], b[2])));
  }
  std::vector<double> x(static_cast<std::size_t>(n), 0.0), y(static_cast<std::size_t>(n), 0.0),
      half(static_cast<std::size_t>(n + 2 * R), 0.0);
  for (int i = 0; i < n; ++i) x[std::size_t(i)] = (i % 2 ? -1.0 : 1.0) * (1 + 0.01 * std::sin(0.7 * i));
  double lambda = 0;
  for (int it = 0; it < 400; ++it) {
    // half = beta D+ (K^(1/2) x), y = -K^(1/2) D- half: the symmetric operator applied to x.
    for (int j = -R; j < n + R; ++j) {
      double sum = 0;
      for (int k = 1; k <= R; ++k) {
        const int hi = j + k, lo = j - k + 1;
        sum += g[std::size_t(k)] * ((hi >= 0 && hi < n ? sqrt_k[std::size_t(hi)] * x[std::size_t(hi)] : 0.0) -
                                    (lo >= 0 && lo < n ? sqrt_k[std::size_t(lo)] * x[std::size_t(lo)] : 0.0));
      }
      half[std::size_t(j + R)] = beta[std::size_t(j + R)] * sum / h;
    }
    double xy = 0, xx = 0;
    for (int i = 0; i < n; ++i) {
      double sum = 0;
      for (int k = 1; k <= R; ++k)
        sum += g[std::size_t(k)] * (half[std::size_t(i + k - 1 + R)] - half[std::size_t(i - k + R)]);
      y[std::size_t(i)] = -sqrt_k[std::size_t(i)] * sum / h;
      xy += x[std::size_t(i)] * y[std::size_t(i)], xx += x[std::size_t(i)] * x[std::size_t(i)];
    }
    lambda = xy / xx;
    double norm = 0;
    for (double v : y) norm += v * v;
    norm = std::sqrt(norm);
    if (!(norm > 0)) break;
    for (int i = 0; i < n; ++i) x[std::size_t(i)] = y[std::size_t(i)] / norm;
  }
  return lambda;
}

// The largest eigenvalue of -K D- beta D+ on a periodic line of unit spacing and velocity, densities `rho` at the
// nodes (the symmetric form, dense: the lines are short).
double periodic_line_eigenvalue(const std::vector<double>& rho, const std::vector<double>& g) {
  const int n = int(rho.size()), R = int(g.size()) - 1;
  Eigen::MatrixXd dplus = Eigen::MatrixXd::Zero(n, n);  // nodes -> half nodes j + 1/2
  for (int j = 0; j < n; ++j)
    for (int k = 1; k <= R; ++k) {
      dplus(j, (j + k) % n) += g[std::size_t(k)];
      dplus(j, ((j - k + 1) % n + n) % n) -= g[std::size_t(k)];
    }
  Eigen::VectorXd beta(n), sqrt_k(n);
  for (int j = 0; j < n; ++j) {
    beta(j) = 2 / (rho[std::size_t(j)] + rho[std::size_t((j + 1) % n)]);
    sqrt_k(j) = std::sqrt(rho[std::size_t(j)]);
  }
  const Eigen::MatrixXd b = dplus * sqrt_k.asDiagonal();
  const Eigen::MatrixXd a = b.transpose() * beta.asDiagonal() * b;
  return Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(a, Eigen::EigenvaluesOnly).eigenvalues().maxCoeff();
}

}  // namespace

double staggered_density_growth(int R, double ratio) {
  if (!(ratio > 1)) return 1;
  const std::vector<double> g = staggered_derivative_coefficients(R);
  const double g_max = staggered_derivative_symbol_max(R);
  double growth = 1;
  for (int p = 2; p <= 4 * R + 3; ++p) {
    int n = p;  // whole periods, at least 4R + 4 nodes and an even count (the Nyquist mode of the constant density)
    while (n < 4 * R + 4 || n % 2) n += p;
    std::vector<double> rho(static_cast<std::size_t>(n));
    for (int w = 1; w < p; ++w) {
      for (int i = 0; i < n; ++i) rho[std::size_t(i)] = i % p < w ? ratio : 1.0;
      growth = std::max(growth, periodic_line_eigenvalue(rho, g) / (g_max * g_max));
    }
  }
  return growth;
}

double staggered_density_bounds_dt(const Case& c, double v_stable) {
  const InversionSpec& inv = c.inversion;
  // (The elastic scheme's P waves meet the same buoyancies: the same bound, as staggered_dt_max applies to it.)
  if ((c.scheme.formulation != Formulation::staggered && c.scheme.formulation != Formulation::elastic) ||
      !inv.density_parameter || !inv.density_min || !inv.density_max || !(*inv.density_min > 0) ||
      !(*inv.density_max > *inv.density_min))
    return std::numeric_limits<double>::infinity();
  const double growth = staggered_density_growth(c.scheme.order / 2, *inv.density_max / *inv.density_min);
  return stable_dt_staggered(c.grid, c.scheme.order, v_stable) / std::sqrt(growth);
}

// dt_max of the staggered scheme (docs/numerics.md, "Stability"): the analytic limit at v_max (times the attenuation's
// speed-up) holds at a constant density; across a strong density contrast a half node's buoyancy meets moduli up to R
// nodes away and the operator's largest eigenvalue grows (1.09 times the bound at 100:1, order 8). So along each axis
// the column with the largest density contrast is iterated, and its eigenvalue replaces the axis' bound when larger
// (with 2% for the Rayleigh quotient's approach from below).
double staggered_dt_max(const Case& c, const VelocityModel& m, double v_stable, double speedup) {
  double dt = stable_dt_staggered(c.grid, c.scheme.order, v_stable);
  if (m.density.empty() || !(m.rho_max > m.rho_min) || !m.whole_grid()) return dt;
  const int R = c.scheme.order / 2;
  const double g_max = staggered_derivative_symbol_max(R);
  double total = 0;
  bool larger = false;
  for (int axis = 0; axis < 3; ++axis) {
    if (!c.grid.active(axis)) continue;
    const int o1 = axis == 0 ? 1 : 0, o2 = axis == 2 ? 1 : 2, n = c.grid.shape[axis];
    // The column of the largest ratio of densities within R nodes of each other along the axis.
    double worst = 1;
    int w0 = 0, w1 = 0;
    for (int i0 = 0; i0 < c.grid.shape[o1]; ++i0)
      for (int i1 = 0; i1 < c.grid.shape[o2]; ++i1)
        for (int i = 0; i + 1 < n; ++i) {
          int p[3], q[3];
          p[o1] = q[o1] = i0, p[o2] = q[o2] = i1, p[axis] = i, q[axis] = std::min(n - 1, i + R);
          const double a = m.density_at(p[0], p[1], p[2]), b = m.density_at(q[0], q[1], q[2]);
          const double ratio = std::max(a, b) / std::min(a, b);
          if (ratio > worst) worst = ratio, w0 = i0, w1 = i1;
        }
    const double bound = (g_max / c.grid.spacing[axis]) * (g_max / c.grid.spacing[axis]) * v_stable * v_stable;
    double lambda = bound;
    if (worst > 1) {
      const double column = 1.02 * column_eigenvalue(c, m, axis, w0, w1) * speedup * speedup;
      if (column > bound) lambda = column, larger = true;
    }
    total += lambda;
  }
  return larger ? std::min(dt, 2 / std::sqrt(total)) : dt;
}

}  // namespace specwave
