// Off-grid interpolation: weights, and sampling as the exact adjoint of injection.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <random>

#include "solver/case/errors.hpp"
#include "solver/forward/particle_velocity.hpp"
#include "solver/plan/acquisition.hpp"
#include "validation/reference.hpp"
#include "validation/spectral_reference.hpp"

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

TEST_CASE("spectral point weights: those of the independent reference, exact for constants, zero at Nyquist") {
  // The engine solves the KKT system by Gaussian elimination with Gauss-Legendre moments; the reference solves on the
  // constraints' null space by QR with Simpson's rule; both in long double (the condition number reaches ~3e5 at the
  // band pi/2). Agreement to 1e-12.
  double worst = 0, misfit[3] = {0, 0, 0};
  for (double band : {M_PI / 2, 0.6 * M_PI, 0.8 * M_PI})
    for (double courant : {0.0, 0.29, 0.5})
      for (double q : {7.0, 5.25, 5.5, 5.9, 6.01, 1234.875}) {
        const Weights1D w = spectral_point_weights(q, courant, band);
        const auto ref = validation::reference_spectral_point_weights(q, courant, band, spectral_point_radius);
        REQUIRE(w.index == ref.index);
        REQUIRE(int(w.index.size()) == 2 * spectral_point_radius + 1);
        CHECK(w.index.front() == int(std::round(q)) - spectral_point_radius);
        double sum = 0, alternating = 0;
        std::complex<double> response = 0;  // H(k) = sum w exp(i k (j - q)) at k = pi / 3
        for (std::size_t k = 0; k < w.index.size(); ++k) {
          worst = std::max(worst, std::abs(w.weight[k] - ref.weight[k]));
          sum += w.weight[k];
          alternating += (w.index[k] % 2 == 0 ? 1 : -1) * w.weight[k];
          response += w.weight[k] * std::exp(std::complex<double>(0, M_PI / 3 * (w.index[k] - q)));
        }
        CAPTURE(band);
        CAPTURE(courant);
        CAPTURE(q);
        CHECK(std::abs(sum - 1) < 1e-13);      // H(0) = 1
        CHECK(std::abs(alternating) < 1e-13);  // H(pi) = 0
        // At k = pi/3 the response is the target exp(-(courant k)^2 / 24) to the fit's accuracy, which falls as the
        // band widens (docs/numerics.md).
        const double target = std::exp(-std::pow(courant * M_PI / 3, 2) / 24);
        const int b = band < 0.55 * M_PI ? 0 : band < 0.7 * M_PI ? 1 : 2;
        misfit[b] = std::max(misfit[b], std::abs(response - target));
        if (q == 7.0)  // on the grid the weights are symmetric: H is real and H'(pi) = 0 too
          for (int k = 0; k < spectral_point_radius; ++k)
            CHECK(std::abs(w.weight[k] - w.weight[2 * spectral_point_radius - k]) < 1e-13);
      }
  MESSAGE("spectral point weights: largest difference from the reference " << worst << "; largest |H - target| at "
                                                                           << "k = pi/3 with the bands pi/2, 0.6 pi, "
                                                                           << "0.8 pi: " << misfit[0] << ", "
                                                                           << misfit[1] << ", " << misfit[2]);
  // Measured 3.4e-5, 2.6e-4, 9.7e-3 (2026-12-05); bounds 1.5x.
  CHECK(misfit[0] < 5e-5);
  CHECK(misfit[1] < 4e-4);
  CHECK(misfit[2] < 1.5e-2);
  CHECK(worst < 1e-12);
  CHECK_THROWS_AS(spectral_point_weights(3.3, 0.3, M_PI / 2, 1), std::invalid_argument);
  CHECK_THROWS_AS(spectral_point_weights(3.3, -0.1, M_PI / 2), std::invalid_argument);
  CHECK_THROWS_AS(spectral_point_weights(3.3, 0.3, 0.95 * M_PI), std::invalid_argument);
  // The band: 0.9 of the highest wavenumber 2 pi f_max h / v_min, within [pi/2, 0.8 pi].
  CHECK(spectral_point_band(50, 2000, 10) == doctest::Approx(M_PI / 2));             // 4 points per wavelength
  CHECK(spectral_point_band(2000.0 / 30, 2000, 10) == doctest::Approx(0.6 * M_PI));  // 3
  CHECK(spectral_point_band(2000.0 / 20, 2000, 10) == doctest::Approx(0.8 * M_PI));  // 2
}

TEST_CASE("spectral point stencils: (2 r + 1)^3 weights summing to 1, and they must stay in the grid") {
  GridSpec g;
  g.shape = {20, 18, 22};
  g.spacing = {10, 12, 8};
  g.origin = {0, -50, 100};
  const std::array<double, 3> courant{0.29, 0.24, 0.36}, band{M_PI / 2, 0.6 * M_PI, M_PI / 2};
  for (const Vec3& p : {Vec3{90, 40, 180}, Vec3{93.7, 51.1, 187.3}}) {
    const PointStencil s = make_spectral_point_stencil(g, p, courant, band, "point");
    CHECK(s.points.size() == std::size_t(std::pow(2 * spectral_point_radius + 1, 3)));
    double sum = 0;
    for (const auto& q : s.points) sum += q.weight;
    CHECK(sum == doctest::Approx(1).epsilon(1e-13));
  }
  // 5 points from the low z face: the radius-6 stencil leaves the grid.
  CHECK_THROWS_AS(make_spectral_point_stencil(g, {50, 40, 180}, courant, band, "point"), Error);
}

TEST_CASE("derivative weights: exact for constants and linear functions, accurate up to the band, antisymmetric") {
  // FDTD's (radius 4, band pi/2) and the spectral method's (radius 6, three bands): sum w = 0, sum w (j - q) = 1 to
  // rounding; on the grid w_{-j} = -w_j; the spectral ones vanish at Nyquist. The fit's error |H(k) - i k G(k)| / k
  // (G = 1 for FDTD) is reported and bounded at k = pi/3 (6 points per wavelength), where the FDTD points' own
  // interpolation error is 3.8e-4 (docs/numerics.md).
  double fdtd = 0, spectral[3] = {0, 0, 0};
  for (double q : {7.0, 5.25, 5.5, 5.9, 6.01, -3.3, 1234.875}) {
    CAPTURE(q);
    const auto check = [&](const Weights1D& w, double courant, bool nyquist) {
      double sum = 0, first = 0, alternating = 0;
      std::complex<double> response = 0;
      const double k = M_PI / 3;
      for (std::size_t i = 0; i < w.index.size(); ++i) {
        const double x = w.index[i] - q;
        sum += w.weight[i];
        first += w.weight[i] * x;
        alternating += (w.index[i] % 2 == 0 ? 1 : -1) * w.weight[i];
        response += w.weight[i] * std::exp(std::complex<double>(0, k * x));
      }
      CHECK(std::abs(sum) < 1e-12);
      CHECK(std::abs(first - 1) < 1e-12);
      if (nyquist) CHECK(std::abs(alternating) < 1e-12);
      if (q == 7.0)
        for (std::size_t i = 0; i < w.index.size(); ++i)
          CHECK(std::abs(w.weight[i] + w.weight[w.index.size() - 1 - i]) < 1e-12);
      const std::complex<double> target(0, k * std::exp(-std::pow(courant * k, 2) / 24));
      return std::abs(response - target) / k;
    };
    const Weights1D w = derivative_weights(q);
    REQUIRE(int(w.index.size()) == 2 * interpolation_radius + 1);
    CHECK(w.index.front() == int(std::round(q)) - interpolation_radius);
    fdtd = std::max(fdtd, check(w, 0.0, false));
    int b = 0;
    for (double band : {M_PI / 2, 0.6 * M_PI, 0.8 * M_PI}) {
      const Weights1D s = spectral_point_weights(q, 0.29, band, spectral_point_radius, true);
      REQUIRE(int(s.index.size()) == 2 * spectral_point_radius + 1);
      spectral[b] = std::max(spectral[b], check(s, 0.29, true));
      ++b;
    }
  }
  MESSAGE("derivative weights, |H - i k G| / k at k = pi/3: FDTD " << fdtd << "; spectral with the bands pi/2, 0.6 pi, "
                                                                   << "0.8 pi: " << spectral[0] << ", " << spectral[1]
                                                                   << ", " << spectral[2]);
  // Measured 5.4e-4; 8.6e-5, 6.7e-4, 2.6e-2 (2026-12-05); bounds 1.5x.
  CHECK(fdtd < 8e-4);
  CHECK(spectral[0] < 1.3e-4);
  CHECK(spectral[1] < 1e-3);
  CHECK(spectral[2] < 4e-2);
  CHECK_THROWS_AS(derivative_weights(3.3, 0), std::invalid_argument);
  CHECK_THROWS_AS(derivative_weights(3.3, 7), std::invalid_argument);
}

TEST_CASE("derivative stencils: d . grad of a linear field exactly, a plane wave's to the fit's accuracy") {
  // u = a . x + b: the derivative weights are exact for linear functions and the other axes' weights for constants,
  // so sum w u = d . a to rounding at any point, with or without the free surface's fold (away from it), for FDTD and
  // the spectral stencils alike. A plane wave at 6 points per wavelength: within the 1-D errors above (x 3 axes).
  GridSpec g;
  g.shape = {24, 22, 26};
  g.spacing = {10, 12, 8};
  g.origin = {0, -50, 100};
  const Vec3 a{0.3, -1.2, 2.1};
  const double b = 5;
  const std::array<double, 3> courant{0.29, 0.24, 0.36}, band{M_PI / 2, 0.6 * M_PI, M_PI / 2};
  for (const Vec3& p : {Vec3{110, 40, 200}, Vec3{113.7, 51.1, 207.3}, Vec3{120, 43.3, 204}})
    for (const Vec3& d : {Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, 1}, Vec3{0.48, -0.6, 0.64}}) {
      CAPTURE(p[0]);
      CAPTURE(d[2]);
      for (int kind = 0; kind < 3; ++kind) {
        const PointStencil s = kind == 2 ? make_spectral_derivative_stencil(g, p, d, courant, band, "point")
                                         : make_derivative_stencil(g, p, d, kind == 1, "point");
        double sampled = 0, wave = 0;
        const Vec3 k{2 * M_PI / 60 * 0.6, 2 * M_PI / 60 * 0.48, 2 * M_PI / 60 * 0.64};  // |k| = 2 pi / 60 m
        for (const auto& q : s.points) {
          const Vec3 x = g.position(q.iz, q.iy, q.ix);
          sampled += q.weight * (a[0] * x[0] + a[1] * x[1] + a[2] * x[2] + b);
          wave += q.weight * std::sin(k[0] * x[0] + k[1] * x[1] + k[2] * x[2]);
        }
        const double expected = d[0] * a[0] + d[1] * a[1] + d[2] * a[2];
        CHECK(std::abs(sampled - expected) < 1e-12);
        const double phase = k[0] * p[0] + k[1] * p[1] + k[2] * p[2];
        const double exact = (d[0] * k[0] + d[1] * k[1] + d[2] * k[2]) * std::cos(phase);
        const double norm = std::hypot(k[0], k[1], k[2]);
        // Spectral: the target carries exp(-(courant k)^2 / 24) per axis, a 1e-3 low-pass at these wavenumbers.
        CHECK(std::abs(wave - exact) < (kind == 2 ? 4e-3 : 2e-3) * norm);
      }
    }
  // Each point once, and the stencil of a point next to a face still refused.
  const PointStencil s = make_derivative_stencil(g, {113.7, 51.1, 207.3}, {0.48, -0.6, 0.64}, false, "point");
  for (std::size_t i = 1; i < s.points.size(); ++i)
    CHECK(std::array{s.points[i - 1].iz, s.points[i - 1].iy, s.points[i - 1].ix} <
          std::array{s.points[i].iz, s.points[i].iy, s.points[i].ix});
  CHECK_THROWS_AS(make_derivative_stencil(g, {30, 40, 200}, {1, 0, 0}, false, "point"), Error);
}

TEST_CASE("the velocity's time integral: fourth order on a smooth signal, and its transpose exact") {
  // integrate_in_time (solver/forward/particle_velocity.hpp) on a Gaussian pulse g = exp(-a (t - t0)^2) that is at
  // rest at t = 0 (as a trace from a field at rest): the error of the end-corrected trapezoidal rule falls as dt^4
  // (the plain rule's as dt^2); its transpose satisfies <I g, y> = <g, I^T y> to rounding for random g, y of every
  // length from 1.
  const double a = 1 / (0.015 * 0.015), t0 = 0.1, t_end = 0.2;
  double previous = 0;
  for (int steps : {50, 100, 200}) {
    const double dt = t_end / steps;
    std::vector<double> g(std::size_t(steps) + 1);
    for (std::size_t n = 0; n < g.size(); ++n) g[n] = std::exp(-a * std::pow(dt * double(n) - t0, 2));
    integrate_in_time(g, dt);
    double err = 0;
    const double total = std::sqrt(M_PI / a);
    for (std::size_t n = 0; n < g.size(); ++n) {
      const double t = dt * double(n);
      const double exact = total / 2 * (std::erf(std::sqrt(a) * (t - t0)) + std::erf(std::sqrt(a) * t0));
      err = std::max(err, std::abs(g[n] - exact) / total);
    }
    MESSAGE(steps << " steps: largest error " << err);
    if (previous > 0) CHECK(previous / err > 12);  // 16 for fourth order (4 for second)
    previous = err;
  }
  std::mt19937 rng(5);
  std::normal_distribution<double> normal;
  for (std::size_t nt : {1, 2, 3, 4, 7, 100}) {
    std::vector<double> g(nt), y(nt);
    for (std::size_t n = 0; n < nt; ++n) g[n] = normal(rng), y[n] = normal(rng);
    std::vector<double> ig = g, ity = y;
    integrate_in_time(ig, 0.003);
    integrate_in_time_transpose(ity, 0.003);
    double lhs = 0, rhs = 0, scale = 0;
    for (std::size_t n = 0; n < nt; ++n)
      lhs += ig[n] * y[n], rhs += g[n] * ity[n], scale += std::abs(ig[n] * y[n]) + std::abs(g[n] * ity[n]);
    CAPTURE(nt);
    CHECK(std::abs(lhs - rhs) <= 1e-14 * scale);
  }
}
