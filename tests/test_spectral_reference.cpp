// Self-checks of the independent spectral reference (validation/spectral_reference.*), against
// mathematical facts only (no engine code involved).
#include "validation/spectral_reference.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <stdexcept>
#include <vector>

namespace sv = specwave::validation;

namespace {

constexpr double kPi = std::numbers::pi;

// A homogeneous cube with one Ricker source on the centre grid point.
sv::ReferenceProblem spectral_problem(int n, double h, double v, double dt, int nt, double f_peak) {
  sv::ReferenceProblem pb;
  pb.shape = {n, n, n};
  pb.spacing = {h, h, h};
  pb.velocity.assign(std::size_t(n) * n * n, v);
  pb.dt = dt;
  pb.nt = nt;
  pb.pml_frequency = f_peak;
  const double c = (n / 2) * h;
  pb.sources = {{c, c, c}};
  std::vector<double> s(nt);
  for (int i = 0; i < nt; ++i) s[i] = sv::reference_ricker(i * dt, f_peak, 1.5 / f_peak);
  pb.source_wavelets = {s};
  return pb;
}


// The same spatial discretisation solved without any FFT: the periodic grid's Fourier modes are
// independent oscillators. A Kronecker source 1/(dz dy dx) on a grid point has DFT 1/h^3 in every
// mode m, so the band-limited, continuous-time solution at a grid point offset by j h along x is
//   u(t) = (1/N) sum_m cos(2 pi m_x j / n) U(|k_m|, t),   U'' + c^2 |k|^2 U = c^2 s(t) / h^3,
// (the sine parts cancel in the symmetric sum). Modes with equal |k|^2 share U, so they are grouped
// by M2 = m_z'^2 + m_y'^2 + m_x'^2. Each U is marched on a fine step delta with the recurrence that
// is exact for the oscillator and a source quadrature exact up to O(delta^2 s''):
//   U(t+delta) - 2 cos(w delta) U(t) + U(t-delta) = c^2/h^3 int_{-delta}^{delta} sin(w(delta-|r|))/w s(t+r) dr
//                                                  ~ c^2/h^3 delta^2 sinc^2(w delta/2) s(t),   w = c |k|.
std::vector<double> band_limited_trace(int n, double h, double c, int j, double dt, int nt, int sub,
                                       double f_peak) {
  const int max_m2 = 3 * (n / 2) * (n / 2);
  std::vector<double> weight(std::size_t(max_m2) + 1, 0.0);
  std::vector<int> count(std::size_t(max_m2) + 1, 0);
  auto signed_m = [n](int m) { return m <= n / 2 ? m : m - n; };  // m' of docs/numerics.md
  for (int mz = 0; mz < n; ++mz)
    for (int my = 0; my < n; ++my)
      for (int mx = 0; mx < n; ++mx) {
        const int a = signed_m(mz), b = signed_m(my), e = signed_m(mx);
        weight[std::size_t(a * a + b * b + e * e)] += std::cos(2 * kPi * mx * j / n);
        ++count[std::size_t(a * a + b * b + e * e)];
      }
  const double N = double(n) * n * n, delta = dt / sub, dk = 2 * kPi / (n * h);
  const int n_fine = (nt - 1) * sub;
  std::vector<double> s_fine(std::size_t(n_fine) + 1);
  for (int i = 0; i <= n_fine; ++i) s_fine[std::size_t(i)] = sv::reference_ricker(i * delta, f_peak, 1.5 / f_peak);
  std::vector<double> trace(nt, 0.0);
  for (int m2 = 0; m2 <= max_m2; ++m2) {
    if (count[std::size_t(m2)] == 0) continue;  // no mode has this |m'|^2
    const double w = c * dk * std::sqrt(double(m2)), x = w * delta / 2;
    const double sinc = x == 0 ? 1.0 : std::sin(x) / x;
    const double gain = c * c / (h * h * h) * delta * delta * sinc * sinc, two_cos = 2 * std::cos(w * delta);
    double u_prev = 0, u = 0;  // U(-delta) = U(0) = 0
    for (int step = 0; step < n_fine; ++step) {
      if (step % sub == 0) trace[std::size_t(step / sub)] += weight[std::size_t(m2)] * u / N;
      const double u_next = two_cos * u - u_prev + gain * s_fine[std::size_t(step)];
      u_prev = u;
      u = u_next;
    }
    trace[std::size_t(nt - 1)] += weight[std::size_t(m2)] * u / N;
  }
  return trace;
}

}  // namespace

TEST_CASE("spectral reference: homogeneous point source matches u = s(t - r/v) / (4 pi r)") {
  // 64^3, h = 10 m, v = 2000 m/s, f = 20 Hz: 10 points per wavelength at the peak, ~4 at 2.4 f.
  const int n = 64, nt = 250;
  const double h = 10, v = 2000, dt = 1e-3, f = 20, t0 = 1.5 / f;
  sv::ReferenceProblem pb = spectral_problem(n, h, v, dt, nt, f);
  pb.pml_width = 0;  // periodic box
  const double c = (n / 2) * h;
  const std::vector<double> offsets{60.0, 100.0};
  for (double r : offsets) pb.receivers.push_back({c, c, c + r});
  // Window: the nearest periodic image of the source is n h - r = 540 m from the far receiver
  // (arrival 270 ms; the Ricker is negligible before t0 - 1.2/f = 15 ms after it), so the direct
  // wave alone is seen up to t = 249 ms; it has left both receivers by then (r/v + 3/f <= 200 ms).
  REQUIRE((nt - 1) * dt < (n * h - offsets.back()) / v);

  const sv::ReferenceResult res = sv::run_spectral_reference(pb);
  REQUIRE(res.traces.rows() == 2);
  REQUIRE(res.traces.cols() == nt);
  CHECK(res.traces(0, 0) == 0.0);  // u^0 = 0 is recorded before the first step

  std::vector<double> err_analytic(offsets.size()), err_modes(offsets.size());
  for (std::size_t k = 0; k < offsets.size(); ++k) {
    const double r = offsets[k];
    std::vector<double> num(nt), ana(nt);
    for (int i = 0; i < nt; ++i) {
      num[i] = res.traces(Eigen::Index(k), i);
      ana[i] = sv::reference_ricker(i * dt - r / v, f, t0) / (4 * kPi * r);
    }
    const std::vector<double> modes = band_limited_trace(n, h, v, int(std::lround(r / h)), dt, nt, 10, f);
    err_analytic[k] = sv::relative_l2(num.data(), ana.data(), std::size_t(nt));
    err_modes[k] = sv::relative_l2(num.data(), modes.data(), std::size_t(nt));
    MESSAGE("spectral reference, r = " << r << " m: relative L2 misfit vs analytic " << err_analytic[k]
            << ", vs mode-by-mode band-limited solution " << err_modes[k] << " (band-limited vs analytic "
            << sv::relative_l2(modes.data(), ana.data(), std::size_t(nt)) << ")");
  }
  // Measured (dt = 1 ms): vs analytic 2.06e-2 (60 m), 1.32e-2 (100 m); vs the mode sum 1.9e-3, 1.9e-3.
  // The analytic misfit is above the 1e-2 first asked for, and it is not a defect of the scheme: the
  // FFT-free mode sum of the same band-limited problem differs from u = s(t - r/v)/(4 pi r) by the same
  // 2.05e-2 / 1.31e-2. The Kronecker source's spectrum stops at the Nyquist cube, which cuts the 1/k^2
  // tail of the Green's function: an instantaneous near-field term ~ s(t) that decays like h/r relative
  // to the direct wave (30 m: 3.7e-2, 60 m: 2.1e-2, 100 m: 1.4e-2, 150 m: 1.0e-2), is independent of dt
  // (2.05e-2 at dt = 0.5 ms) and of the Ricker's content near Nyquist (which is ~1e-10 here).
  // The remaining misfit vs the mode sum is the sampling of s(t) at t_n in the source term (with the k-space
  // correction it fell from 3.8e-3 to 1.9e-3); the propagation itself is exact in time.
  // Bounds: ~1.5x the measured values.
  CHECK(err_analytic[0] < 3e-2);
  CHECK(err_analytic[1] < 2e-2);
  CHECK(err_analytic[1] < err_analytic[0]);  // the near-field error decays with r
  CHECK(err_modes[0] < 3e-3);
  CHECK(err_modes[1] < 3e-3);
}

TEST_CASE("spectral reference: the damping layer absorbs the outgoing wave") {
  const int n = 48, nt = 500;
  const double h = 10, v = 2000, dt = 1e-3, f = 20;
  sv::ReferenceProblem pb = spectral_problem(n, h, v, dt, nt, f);
  pb.pml_width = 12;
  const sv::ReferenceResult res = sv::run_spectral_reference(pb);
  // Measured: energy/peak ~2.5e-3 at 300 ms (layer reflections), 4e-4 at 400 ms, 3.1e-5 at 500 ms.
  REQUIRE(res.energy.size() == std::size_t(nt) + 1);
  const double peak = *std::max_element(res.energy.begin(), res.energy.end());
  const double last = res.energy.back();
  MESSAGE("spectral damping layer: energy peak " << peak << ", final " << last << ", ratio " << last / peak);
  CHECK(peak > 0);
  CHECK(last < 1e-3 * peak);
  // Everything stays finite and the final field is the last energy sample.
  double e = 0;
  bool finite = true;
  for (double u : res.final_field) {
    finite = finite && std::isfinite(u);
    e += u * u;
  }
  CHECK(finite);
  CHECK(e == doctest::Approx(last).epsilon(1e-12));
}

TEST_CASE("spectral reference: input checks") {
  sv::ReferenceProblem pb = spectral_problem(16, 10, 2000, 1e-3, 4, 20);
  CHECK_NOTHROW(sv::run_spectral_reference(pb));
  pb.free_surface = true;  // no odd mirror for the periodic transform: not supported
  CHECK_THROWS_AS(sv::run_spectral_reference(pb), std::invalid_argument);
  pb.free_surface = false;
  pb.receivers = {{80, 80, 200}};  // x beyond the last grid point (150 m)
  CHECK_THROWS_AS(sv::run_spectral_reference(pb), std::invalid_argument);
}
