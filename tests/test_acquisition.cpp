// Off-grid interpolation: weights, and sampling as the exact adjoint of injection.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "solver/case/errors.hpp"
#include "solver/plan/acquisition.hpp"
#include "validation/reference.hpp"

using namespace specwave;

TEST_CASE("interpolation weights: on-grid a single unit weight, off-grid those of the independent reference") {
  auto w = interpolation_weights(7.0);
  REQUIRE(w.index.size() == 1);
  CHECK(w.index[0] == 7);
  CHECK(w.weight[0] == 1.0);
  double worst[6] = {};
  // The engine solves the design's normal equations in closed form; the reference integrates the misfit numerically
  // and solves by QR on the constraint's null space. The system's condition number grows ~30x per unit of radius
  // (9e4 at r = 4, 1e8 at r = 6, the largest allowed): agreement to 1e-11 at r <= 4 (1.6e-12
  // measured), 1e-8 at r = 5, 6 (1.8e-9).
  for (int r = 1; r <= 6; ++r)
    for (double q : {5.25, 5.5, 5.9, 6.01, -3.3, 1234.875}) {
      w = interpolation_weights(q, r);
      const auto ref = validation::reference_interpolation_weights(q, r);
      REQUIRE(w.index == ref.index);
      double sum = 0;
      for (std::size_t k = 0; k < w.index.size(); ++k) {
        worst[r - 1] = std::max(worst[r - 1], std::abs(w.weight[k] - ref.weight[k]));
        sum += w.weight[k];
      }
      CAPTURE(r);
      CAPTURE(q);
      CHECK(std::abs(sum - 1) < 1e-13);
    }
  for (int r = 1; r <= 6; ++r) {
    MESSAGE("radius " << r << ": largest difference from the reference " << worst[r - 1]);
    CHECK(worst[r - 1] < (r <= 4 ? 1e-11 : 1e-8));
  }
  CHECK_THROWS_AS(interpolation_weights(3.3, 0), std::invalid_argument);
  CHECK_THROWS_AS(interpolation_weights(3.3, 7), std::invalid_argument);
}

TEST_CASE("a point half-way between nodes on every axis samples a plane wave to the design's accuracy") {
  // u = cos(k . x + 0.4) at 6 points per wavelength along the grid diagonal: the 3-D stencil is the product of
  // three 1-D ones, so its error is at most about 3 x 3.8e-4 (the 1-D bound for k <= pi/3 per axis; here k is
  // 0.19 pi per axis). Measured 9.9e-5; Hicks' Kaiser-windowed sinc gave 1.6e-3 (python, same points).
  GridSpec g;
  g.shape = {16, 16, 16};
  g.spacing = {10, 10, 10};
  g.origin = {0, 0, 0};
  const double k = 2 * M_PI / (6 * 10) / std::sqrt(3.0);
  double worst = 0;
  for (const Vec3& p : {Vec3{75, 75, 75}, Vec3{72.5, 77.5, 75}, Vec3{75, 71, 79}}) {
    const PointStencil s = make_point_stencil(g, p, false, "point");
    double sampled = 0;
    for (const auto& q : s.points) sampled += q.weight * std::cos(k * 10 * (q.iz + q.iy + q.ix) + 0.4);
    worst = std::max(worst, std::abs(sampled - std::cos(k * (p[0] + p[1] + p[2]) + 0.4)));
  }
  MESSAGE("largest error sampling a unit plane wave at 6 points per wavelength: " << worst);
  CHECK(worst < 1.2e-3);
}

TEST_CASE("receiver sampling is the exact adjoint of source injection (grid inner product)") {
  GridSpec g;
  g.shape = {20, 18, 22};
  g.spacing = {10, 12, 8};
  g.origin = {0, -50, 100};
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> uni(-1, 1);
  std::vector<double> u(g.points());
  for (auto& v : u) v = uni(rng);
  const double dv = g.spacing[0] * g.spacing[1] * g.spacing[2];
  for (bool free_surface : {false, true}) {
    // z = 17 m is 1.7 points deep: its stencil reaches above z = 0, legal only with the free-surface mirror.
    std::vector<Vec3> points = {{53.3, 41.0, 171.7}, {80.0, 40.0, 180.0}};
    if (free_surface) points.push_back({17.0, 7.7, 150.2});
    for (const Vec3& p : points) {
      const PointStencil s = make_point_stencil(g, p, free_surface, "point");
      const double amplitude = 0.37;
      // Injection: g = amplitude * sum_p w_p delta_p / dV; sampling: r = sum_p w_p u_p.
      std::vector<double> injected(g.points(), 0.0);
      double sampled = 0;
      for (const auto& q : s.points) {
        const std::size_t i = (std::size_t(q.iz) * g.shape[1] + q.iy) * g.shape[2] + q.ix;
        injected[i] += amplitude * q.weight / dv;
        sampled += q.weight * u[i];
      }
      double inner = 0;
      for (std::size_t i = 0; i < u.size(); ++i) inner += injected[i] * u[i] * dv;
      CHECK(inner == doctest::Approx(amplitude * sampled).epsilon(1e-13));
    }
  }
}

TEST_CASE("free surface folds weights above z = 0 onto their mirror with a minus sign") {
  GridSpec g;
  g.shape = {20, 20, 20};
  g.spacing = {10, 10, 10};
  const PointStencil s = make_point_stencil(g, {12.5, 100, 100}, true, "point");
  double sum_negative = 0;
  for (const auto& p : s.points) {
    CHECK(p.iz >= 0);
    if (p.weight < 0 && p.iz >= 1) sum_negative += p.weight;
  }
  CHECK(sum_negative < 0);
  CHECK_THROWS_AS(make_point_stencil(g, {12.5, 100, 100}, false, "point"), Error);
  CHECK_THROWS_AS(make_point_stencil(g, {100, 100, 188.5}, false, "point"), Error);
}
