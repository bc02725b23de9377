#pragma once
// The density gradient's checks, shared by the staggered scheme's tests and the spectral method's: a Taylor test at
// fixed velocity, the invariance under a constant factor, central differences of J at a source node and at a velocity
// receiver's node, and the dot-product test of the density's Born operator (fp64 <= 1e-10, fp32 <= 1e-4).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "case_builders.hpp"
#include "solver/inversion/gradient_check.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/gradient_propagator.hpp"

namespace specwave::testing {

// J(rho) = 1/2 sum over the shots of |d(rho) - d_observed|^2 at the case's velocity, and its gradient.
// trace_weights (one a trace, empty: 1) weigh each trace's squared residual.
struct DensityObjective {
  GradientPropagator& g;
  std::vector<std::vector<double>> observed;
  int shots;
  std::vector<double> trace_weights = {};
  double value(std::span<const double> rho, std::vector<double>* gradient) {
    g.set_density(rho);
    double j = 0;
    if (gradient) gradient->assign(rho.size(), 0.0);
    for (int shot = 0; shot < shots; ++shot) {
      std::vector<double> r = g.forward(shot, gradient != nullptr);
      const std::size_t nt = trace_weights.empty() ? r.size() : r.size() / trace_weights.size();
      for (std::size_t i = 0; i < r.size(); ++i) {
        const double w = trace_weights.empty() ? 1.0 : trace_weights[i / nt];
        r[i] -= observed[std::size_t(shot)][i];
        j += 0.5 * w * r[i] * r[i];
        r[i] *= w;
      }
      if (gradient) {
        std::vector<double> velocity_gradient(rho.size(), 0.0);
        g.adjoint(r, velocity_gradient);
        g.add_density_gradient(*gradient);
      }
    }
    return j;
  }
};

// The checks of case c (fp64, inversion.parameters naming "density", two shots or more; with velocity receivers
// when c has any), the observed data made at a density 10% above the model's in a Gaussian blob at `blob` (grid
// indices z, y, x): the slopes 1 and 2 of the Taylor remainders within 0.1, sum g rho = 0 within 1e-10 without
// velocity receivers, and the gradient within `tolerance` of the central differences.
inline void check_density_gradient(const Case& c, const std::array<double, 3>& blob, double tolerance) {
  const bool velocity_receivers = has_velocity_receivers(c);
  const Plan plan = make_plan(c);
  auto g = make_gradient_propagator(c, plan, HistoryChoice{});
  const std::vector<double> rho0 = g->density();
  REQUIRE(rho0.size() == std::size_t(c.grid.points()));
  std::vector<double> truth = rho0;
  const auto& n = c.grid.shape;
  for (int z = 0; z < n[0]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[2]; ++x) {
        const double d2 = std::pow(z - blob[0], 2) + std::pow(y - blob[1], 2) + std::pow(x - blob[2], 2);
        truth[(std::size_t(z) * n[1] + y) * n[2] + x] *= 1 + 0.1 * std::exp(-d2 / 32.0);
      }
  DensityObjective objective{*g, {}, int(c.shots.size())};
  if (velocity_receivers) objective.trace_weights = component_weights(c, 4e12).front();
  g->set_density(truth);
  for (int shot = 0; shot < objective.shots; ++shot) objective.observed.push_back(g->forward(shot, false));
  std::vector<double> gradient;
  const double j0 = objective.value(rho0, &gradient);
  // A constant density changes no pressure (docs/numerics.md): scaling rho by 1 + eps leaves J as it is, so
  // sum_k g_k rho_k = 0 (the image over rho against the buoyancy's share).
  double scaled = 0, scale = 0;
  for (std::size_t k = 0; k < gradient.size(); ++k)
    scaled += gradient[k] * rho0[k], scale += std::abs(gradient[k] * rho0[k]);
  MESSAGE("sum g rho = " << scaled << " of sum |g rho| = " << scale);
  // (A velocity trace scales as 1 / rho_r: J is not invariant then.)
  if (!velocity_receivers) CHECK(std::abs(scaled) <= 1e-10 * scale);
  // At a node of the second shot's source, where rho_p / rho_s enters, and at a node of a vz receiver's stencil,
  // where rho_r does (a central difference of J, 0.05% of rho).
  std::vector<std::pair<std::string, GridPointWeight>> nodes = {{"a source node", plan.sources[1][0].points[2]}};
  if (velocity_receivers) {  // the vz receiver's node of largest weight
    const auto& points = plan.receivers[1].points;
    nodes.push_back({"a vz receiver's node", *std::max_element(points.begin(), points.end(), [](auto& a, auto& b) {
                       return std::abs(a.weight) < std::abs(b.weight);
                     })});
  }
  for (const auto& [where, p] : nodes) {
    const std::size_t k0 = (std::size_t(p.iz) * n[1] + p.iy) * n[2] + p.ix;
    std::array<double, 2> j_pm{};
    for (int side = 0; side < 2; ++side) {
      std::vector<double> rho = rho0;
      rho[k0] *= side == 0 ? 1.0005 : 0.9995;
      j_pm[std::size_t(side)] = objective.value(rho, nullptr);
    }
    const double central = (j_pm[0] - j_pm[1]) / (0.001 * rho0[k0]);
    MESSAGE("at " << where << ": central difference " << central << ", gradient " << gradient[k0] << ", relative "
                  << std::abs(central - gradient[k0]) / std::abs(central));
    CHECK(std::abs(central - gradient[k0]) <= tolerance * std::abs(central));
  }
  // The density's Born operator against its transpose (born_density, add_density_gradient), shot 0.
  for (const auto& [precision, limit] : {std::pair{Precision::fp64, 1e-10}, std::pair{Precision::fp32, 1e-4}}) {
    Case cp = c;
    cp.run.precision = precision;
    const DotTestResult r = density_dot_test(cp, plan, 0, 555);
    MESSAGE(g->name() << ", velocity receivers " << velocity_receivers << ", density dot test "
                      << std::string(to_string(precision)) << ": <F_rho drho, dd> = " << r.lhs << ", mismatch "
                      << r.mismatch);
    CHECK(r.lhs != 0);
    CHECK(r.mismatch <= limit);
  }
  const std::vector<double> direction = smooth_direction(c.grid, rho0, 0.02);
  double gd = 0;
  for (std::size_t k = 0; k < gradient.size(); ++k) gd += gradient[k] * direction[k];
  std::vector<double> h_values, r1, r2;
  for (double h : taylor_steps) {
    std::vector<double> rho = rho0;
    for (std::size_t k = 0; k < rho.size(); ++k) rho[k] += h * direction[k];
    const double j = objective.value(rho, nullptr);
    h_values.push_back(h);
    r1.push_back(std::abs(j - j0));
    r2.push_back(std::abs(j - j0 - h * gd));
  }
  const auto slope = [&](const std::vector<double>& r) {
    return std::log(r.front() / r.back()) / std::log(h_values.front() / h_values.back());
  };
  MESSAGE(g->name() << ", velocity receivers " << velocity_receivers << ": J = " << j0 << ", g.drho = " << gd
                    << ", r2 at the smallest h " << r2.back() << ", slopes " << slope(r1) << ", " << slope(r2));
  CHECK(gd != 0);
  CHECK(std::abs(slope(r1) - 1) <= 0.1);
  CHECK(std::abs(slope(r2) - 2) <= 0.1);
}

}  // namespace specwave::testing
