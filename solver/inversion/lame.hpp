#pragma once
// The elastic scheme's Lame parameterisation (inversion.parameters = ["lambda", "mu", "density"]; docs/numerics.md,
// "Lame parameters"): lambda = rho (vp^2 - 2 vs^2) and mu = rho vs^2 (Pa), and the gradients' chain rule between the
// two sets. Every function works point by point on (nz, ny, nx) arrays; fluid points have mu = vs = 0.
#include <span>
#include <vector>

namespace specwave {

struct LameModel {
  std::vector<double> lambda, mu;  // Pa
};
struct ElasticVelocities {
  std::vector<double> vp, vs;  // m/s; a point with lambda + 2 mu <= 0 or mu < 0 gets NaN (set_velocity refuses it)
};

LameModel lame_of(std::span<const double> vp, std::span<const double> vs, std::span<const double> rho);
ElasticVelocities velocities_of(std::span<const double> lambda, std::span<const double> mu,
                                std::span<const double> rho);

// The gradient propagator's sums, dJ/da, dJ/db (a = (vp dt)^2, b = (vs dt)^2) and dJ/d rho at fixed a and b, into
// dJ/d lambda, dJ/d mu (per Pa) and dJ/d rho at fixed lambda and mu, in place (a = dt^2 (lambda + 2 mu) / rho,
// b = dt^2 mu / rho):
//   dJ/d lambda = dt^2 / rho  dJ/da,   dJ/d mu = dt^2 / rho (2 dJ/da + dJ/db),
//   dJ/d rho |lambda, mu = dJ/d rho |a, b - (a dJ/da + b dJ/db) / rho.
// g_b may be empty when neither mu's nor the density's gradient is wanted (both need it); g_rho may be empty (the
// density's is not wanted). Fluid points are no exception: dJ/d mu there is the sensitivity to a small mu (the
// optimiser's bounds keep it 0).
void lame_gradients(double dt, std::span<const double> vp, std::span<const double> vs, std::span<const double> rho,
                    std::span<double> g_a, std::span<double> g_b, std::span<double> g_rho);

// Back: dJ/d lambda, dJ/d mu and dJ/d rho at fixed lambda and mu into dJ/d vp, dJ/d vs and dJ/d rho, each at fixed
// other two of (vp, vs, rho) (the gradients `invert` records beside vp, vs and the density), in place:
//   dJ/d vp = 2 rho vp g_lambda,   dJ/d vs = 2 rho vs (g_mu - 2 g_lambda),
//   dJ/d rho = (vp^2 - 2 vs^2) g_lambda + vs^2 g_mu + g_rho.
// An empty g_rho: the density's is not wanted.
void velocity_gradients(std::span<const double> vp, std::span<const double> vs, std::span<const double> rho,
                        std::span<double> g_lambda, std::span<double> g_mu, std::span<double> g_rho);

}  // namespace specwave
