#include "solver/inversion/lame.hpp"

#include <cmath>
#include <stdexcept>

namespace specwave {
namespace {

void require_sizes(std::size_t n, std::initializer_list<std::size_t> sizes, const char* what) {
  for (const std::size_t s : sizes)
    if (s != n) throw std::invalid_argument(std::string(what) + ": one value a grid point in every array");
}

}  // namespace

LameModel lame_of(std::span<const double> vp, std::span<const double> vs, std::span<const double> rho) {
  require_sizes(vp.size(), {vs.size(), rho.size()}, "lame_of");
  LameModel m{std::vector<double>(vp.size()), std::vector<double>(vp.size())};
  for (std::size_t k = 0; k < vp.size(); ++k) {
    m.mu[k] = rho[k] * vs[k] * vs[k];
    m.lambda[k] = rho[k] * vp[k] * vp[k] - 2 * m.mu[k];
  }
  return m;
}

ElasticVelocities velocities_of(std::span<const double> lambda, std::span<const double> mu,
                                std::span<const double> rho) {
  require_sizes(lambda.size(), {mu.size(), rho.size()}, "velocities_of");
  ElasticVelocities v{std::vector<double>(lambda.size()), std::vector<double>(lambda.size())};
  for (std::size_t k = 0; k < lambda.size(); ++k) {
    const double m = lambda[k] + 2 * mu[k];
    v.vp[k] = m > 0 && rho[k] > 0 ? std::sqrt(m / rho[k]) : NAN;
    v.vs[k] = mu[k] >= 0 && rho[k] > 0 ? std::sqrt(mu[k] / rho[k]) : NAN;
  }
  return v;
}

void lame_gradients(double dt, std::span<const double> vp, std::span<const double> vs, std::span<const double> rho,
                    std::span<double> g_a, std::span<double> g_b, std::span<double> g_rho) {
  require_sizes(vp.size(), {vs.size(), rho.size(), g_a.size()}, "lame_gradients");
  if (!g_b.empty() || !g_rho.empty()) require_sizes(vp.size(), {g_b.size()}, "lame_gradients (the shear sums)");
  if (!g_rho.empty()) require_sizes(vp.size(), {g_rho.size()}, "lame_gradients");
  const double dt2 = dt * dt;
  for (std::size_t k = 0; k < vp.size(); ++k) {
    const double ga = g_a[k], a = vp[k] * vp[k] * dt2;
    g_a[k] = dt2 / rho[k] * ga;
    if (g_b.empty()) continue;
    const double gb = g_b[k], b = vs[k] * vs[k] * dt2;
    g_b[k] = dt2 / rho[k] * (2 * ga + gb);
    if (!g_rho.empty()) g_rho[k] -= (a * ga + b * gb) / rho[k];
  }
}

void velocity_gradients(std::span<const double> vp, std::span<const double> vs, std::span<const double> rho,
                        std::span<double> g_lambda, std::span<double> g_mu, std::span<double> g_rho) {
  require_sizes(vp.size(), {vs.size(), rho.size(), g_lambda.size(), g_mu.size()}, "velocity_gradients");
  if (!g_rho.empty()) require_sizes(vp.size(), {g_rho.size()}, "velocity_gradients");
  for (std::size_t k = 0; k < vp.size(); ++k) {
    const double gl = g_lambda[k], gm = g_mu[k];
    g_lambda[k] = 2 * rho[k] * vp[k] * gl;
    g_mu[k] = 2 * rho[k] * vs[k] * (gm - 2 * gl);
    if (!g_rho.empty()) g_rho[k] += (vp[k] * vp[k] - 2 * vs[k] * vs[k]) * gl + vs[k] * vs[k] * gm;
  }
}

}  // namespace specwave
