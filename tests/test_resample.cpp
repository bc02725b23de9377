// TraceResampler (solver/plan/resample.hpp): band-limited resampling between the simulation's sampling and the
// data's, against the analytic Ricker wavelet at the output times, and its transpose (dot-product test).
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <random>
#include <tuple>
#include <vector>

#include "solver/plan/resample.hpp"

using specwave::TraceResampler;

namespace {

double ricker(double t, double f = 15.0, double delay = 0.1) {
  const double a = std::numbers::pi * f * (t - delay);
  return (1 - 2 * a * a) * std::exp(-a * a);
}

std::vector<double> sampled(int n, double dt) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) v[std::size_t(k)] = ricker(k * dt);
  return v;
}

// |R ricker(t_in) - ricker(t_out)| / |ricker(t_out)| over the output samples at least `guard` s from the end of the
// input record (the window needs input on both sides).
double relative_error(int n_in, double dt_in, int n_out, double dt_out) {
  const TraceResampler r(n_in, dt_in, n_out, dt_out);
  std::vector<double> out(static_cast<std::size_t>(n_out));
  r.apply(sampled(n_in, dt_in), out);
  const std::vector<double> exact = sampled(n_out, dt_out);
  double num = 0, den = 0;
  for (int m = 0; m < n_out; ++m) {
    num += (out[std::size_t(m)] - exact[std::size_t(m)]) * (out[std::size_t(m)] - exact[std::size_t(m)]);
    den += exact[std::size_t(m)] * exact[std::size_t(m)];
  }
  return std::sqrt(num / den);
}

}  // namespace

TEST_CASE("TraceResampler: a band-limited trace resampled matches it at the new times") {
  // 0.5 ms simulation -> 4 ms data (decimation by 8, anti-aliased at 125 Hz), 1 s.
  const double decimated = relative_error(2001, 0.0005, 250, 0.004);
  // 4 ms -> 1 ms (interpolation), and an interval ratio that is not a whole number (a simulation's dt -> 2 ms).
  const double refined = relative_error(250, 0.004, 997, 0.001);
  const double odd = relative_error(718, 0.0013934, 500, 0.002);
  MESSAGE("relative L2 error: 0.5 -> 4 ms " << decimated << ", 4 -> 1 ms " << refined << ", 1.3934 -> 2 ms " << odd);
  CHECK(decimated < 3e-6);  // measured 3.3e-7, 1.1e-6 and 4.2e-7 (half width 12, Kaiser beta 11)
  CHECK(refined < 3e-6);
  CHECK(odd < 3e-6);
}

TEST_CASE("TraceResampler: the same sampling is the identity to rounding") {
  const std::vector<double> in = sampled(400, 0.001);
  std::vector<double> out(in.size());
  TraceResampler(400, 0.001, 400, 0.001).apply(in, out);
  for (std::size_t k = 0; k < in.size(); ++k) CHECK(out[k] == doctest::Approx(in[k]).epsilon(1e-14).scale(1));
}

TEST_CASE("TraceResampler: transpose is the exact transpose of apply (dot-product test)") {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  for (const auto& [n_in, dt_in, n_out, dt_out] :
       {std::tuple{2001, 0.0005, 250, 0.004}, std::tuple{250, 0.004, 997, 0.001},
        std::tuple{718, 0.0013934, 500, 0.002}}) {
    const TraceResampler r(n_in, dt_in, n_out, dt_out);
    std::vector<double> x(static_cast<std::size_t>(n_in)), y(static_cast<std::size_t>(n_out)), rx(y.size()),
        rty(x.size());
    for (double& v : x) v = normal(rng);
    for (double& v : y) v = normal(rng);
    r.apply(x, rx);
    r.transpose(y, rty);
    double a = 0, b = 0;
    for (std::size_t k = 0; k < y.size(); ++k) a += rx[k] * y[k];
    for (std::size_t k = 0; k < x.size(); ++k) b += x[k] * rty[k];
    CHECK(std::abs(a - b) <= 1e-13 * std::abs(a));
  }
}
