// Hicks interpolation: weights, and sampling as the exact adjoint of injection.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "solver/case/errors.hpp"
#include "solver/plan/acquisition.hpp"

using namespace specwave;

TEST_CASE("on-grid points get a single unit weight; off-grid weights interpolate band-limited signals") {
  auto w = hicks_weights(7.0);
  REQUIRE(w.index.size() == 1);
  CHECK(w.index[0] == 7);
  CHECK(w.weight[0] == 1.0);
  for (double q : {5.25, 5.5, 5.9, 6.01}) {
    w = hicks_weights(q);
    CHECK(w.index.size() == 8);
    double interpolated = 0;
    for (std::size_t k = 0; k < w.index.size(); ++k) interpolated += w.weight[k] * std::sin(0.3 * w.index[k]);
    // sin(0.3 x) has 21 points per wavelength: the r = 4 Kaiser-windowed sinc is accurate to ~1e-3 there.
    CHECK(interpolated == doctest::Approx(std::sin(0.3 * q)).epsilon(2e-3));
  }
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
