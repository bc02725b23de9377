// Attenuation in the staggered scheme (docs/numerics.md, "Attenuation"): the SLS fit, Q measured from the spectral
// ratio of two receivers in a homogeneous visco-acoustic medium, the traces against Kjartansson's constant-Q Green's
// function, and the case file's [attenuation] keys.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <map>
#include <numbers>
#include <string>

#include "case_builders.hpp"
#include "case_text.hpp"
#include "memory_state.hpp"
#include "solver/case/errors.hpp"
#include "solver/forward/forward.hpp"
#include "solver/plan/attenuation.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/capabilities.hpp"
#include "solver/propagators/gradient_propagator.hpp"
#include "solver/propagators/history/wavefield_history.hpp"
#include "solver/propagators/propagator.hpp"
#include "validation/validate.hpp"

using namespace specwave;
using testing::rel_l2;
using cd = std::complex<double>;

namespace {

constexpr double pi = std::numbers::pi;

// A homogeneous visco-acoustic medium (v = 2000 m/s, rho = 1800 kg/m^3, Q = `q`), a 15 Hz Ricker source on a node and
// receivers on nodes along x at `offsets` (m), a CPML of 10, order 8, fp64. With `spectral`, the k-space method (its
// split-field PML of 10 points, no density: the acoustic response does not depend on a constant one).
Case visco_case(double q, const std::vector<double>& offsets, double duration, bool spectral = false) {
  Case c = testing::small_case(40, 10, 2000, 8, 10, 15, duration);
  c.grid.shape = {40, 40, 110};
  c.scheme.formulation = Formulation::staggered;
  c.model.density = 1800;
  if (spectral) {
    c.scheme.method = Method::spectral;
    c.scheme.formulation = Formulation::second_order;
    c.model.density = 0;
    c.boundary.spectral_absorber = SpectralAbsorber::pml;
  }
  c.attenuation.present = true;
  c.attenuation.q = q;
  c.model.kind = ModelSpec::Kind::homogeneous;
  const double z = 200, y = 200, x0 = 150;
  c.shots[0].sources[0].position = {z, y, x0};
  for (double r : offsets) c.receivers.push_back({z, y, x0 + r});
  return c;
}

// |sum_n x_n exp(-i 2 pi f n dt)|: the amplitude spectrum of a trace at f.
double amplitude(const std::vector<double>& x, double dt, double f) {
  cd sum = 0;
  for (std::size_t n = 0; n < x.size(); ++n) sum += x[n] * std::exp(cd(0, -2 * pi * f * double(n) * dt));
  return std::abs(sum);
}

}  // namespace

TEST_CASE("attenuation: the engine matches the Eigen reference with memory variables (fp64 <= 1e-12, fp32 <= 1e-5)") {
  for (const bool free_surface : {false, true}) {
    Case c = testing::forward_comparison_case(8, 6, free_surface, ModelSpec::Kind::layered);
    c.scheme.formulation = Formulation::staggered;
    c.model.densities = {1000, 2100, 2600};
    c.attenuation.present = true;
    c.attenuation.q_layers = {20, 60, 150};
    const ValidationReport report = validate_case(c, 1'000'000);
    MESSAGE((free_surface ? "free surface\n" : "CPML on all faces\n") << report.text());
    for (const auto& n : report.norms) {
      CAPTURE(n.what);
      if (n.tolerance > 0) CHECK(n.value <= n.tolerance);
    }
  }
}

TEST_CASE("attenuation: Q from the spectral ratio of two receivers is within 5% of the target over the band") {
  // ln(A_2 r_2 / (A_1 r_1)) = -pi f (r_2 - r_1) / (Q c): the amplitude spectra of receivers 200 m and 600 m from the
  // source, 6-30 Hz (the 15 Hz Ricker's band, inside the fit's 3.75-37.5 Hz), c = v, each ratio divided by that of the
  // same run without attenuation (which leaves the geometric spreading, the absorbing layer's reflections and the
  // grid's own amplitude errors out of the measurement).
  const std::vector<double> offsets{200, 600};
  for (const bool spectral : {false, true}) {
    CAPTURE(spectral);
    Case lossless = visco_case(100, offsets, 0.56, spectral);
    lossless.attenuation = {};
    const Plan lossless_plan = make_plan(lossless);
    const auto base = simulate_shot(lossless, lossless_plan, 0).traces;
    for (const double q : {30.0, 100.0}) {
      const Case c = visco_case(q, offsets, 0.56, spectral);
      const Plan plan = make_plan(c);
      REQUIRE(plan.dt == doctest::Approx(lossless_plan.dt).epsilon(0.05));
      const auto out = simulate_shot(c, plan, 0);
      const auto near = testing::trace_row(out.traces, plan.nt, 0), far = testing::trace_row(out.traces, plan.nt, 1);
      const auto near0 = testing::trace_row(base, lossless_plan.nt, 0),
                 far0 = testing::trace_row(base, lossless_plan.nt, 1);
      double worst = 0, worst_f = 0, worst_raw = 0;
      for (double f = 6; f <= 30.01; f += 2) {
        const double ratio = amplitude(far, plan.dt, f) / amplitude(near, plan.dt, f);
        const double ratio0 = amplitude(far0, lossless_plan.dt, f) / amplitude(near0, lossless_plan.dt, f);
        const double measured = -pi * f * (offsets[1] - offsets[0]) / (2000 * std::log(ratio / ratio0));
        const double raw = -pi * f * (offsets[1] - offsets[0]) / (2000 * std::log(ratio * offsets[1] / offsets[0]));
        worst_raw = std::max(worst_raw, std::abs(raw / q - 1));
        if (std::abs(measured / q - 1) > worst) worst = std::abs(measured / q - 1), worst_f = f;
      }
      MESSAGE(std::string(spectral ? "k-space method" : "staggered scheme")
              << ", Q = " << q << ": the measured Q's largest error over 6-30 Hz is " << 100 * worst << "% (at "
              << worst_f << " Hz); with 1/r spreading alone instead of the lossless run's ratio " << 100 * worst_raw
              << "%");
      CHECK(worst <= 0.05);
    }
  }
}

TEST_CASE("attenuation: the traces against Kjartansson's constant-Q Green's function") {
  // p(omega) = (v^2 rho / M(omega)) S(omega) exp(-i k r) / (4 pi r), k = omega_d sqrt(rho / M(omega)), with
  // Kjartansson's M(omega) = M_0 (i omega / omega_r)^(2 gamma), gamma = arctan(1 / Q) / pi, and M_0 such that the
  // phase velocity at f_r is v: sqrt(M_0 / rho) = v cos(pi gamma / 2). omega_d = (2 / dt) sin(omega dt / 2) takes the
  // leapfrog's time error out, as green_time_discrete does for the lossless case. The SLS fit is not exactly constant Q
  // (docs/validation.md), so the difference is stated and held to a loose bound.
  const double q = 50, v = 2000;
  const std::vector<double> offsets{200, 400, 600};
  for (const bool spectral : {false, true}) {
    CAPTURE(spectral);
    const Case c = visco_case(q, offsets, 0.56, spectral);
    const Plan plan = make_plan(c);
    const auto out = simulate_shot(c, plan, 0);
    const int nt = plan.nt, N = 4 * nt;
    const double dt = plan.dt, gamma = std::atan(1 / q) / pi, wr = 2 * pi * plan.sls.f_ref;
    std::vector<cd> spectrum(static_cast<std::size_t>(N), cd(0, 0));
    const auto& s = plan.wavelets[0][0];
    for (int k = 0; k < N; ++k)
      for (int n = 0; n < nt; ++n) spectrum[std::size_t(k)] += s[std::size_t(n)] * std::polar(1.0, -2 * pi * k * n / N);
    for (std::size_t r = 0; r < offsets.size(); ++r) {
      const double dist = offsets[r];
      std::vector<double> expected(std::size_t(nt), 0.0);
      for (int k = 1; k < N / 2; ++k) {
        // (The k-space method's time stepping is exact for a lossless homogeneous medium at c_ref: omega itself.)
        const double w = 2 * pi * k / (N * dt), wd = spectral ? w : 2 / dt * std::sin(w * dt / 2);
        const cd m = std::pow(cd(0, w / wr), 2 * gamma) * std::pow(std::cos(pi * gamma / 2), 2);  // M / (rho v^2)
        const cd p =
            spectrum[std::size_t(k)] / m * std::exp(cd(0, -1) * wd * dist / (v * std::sqrt(m))) / (4 * pi * dist);
        for (int n = 0; n < nt; ++n)
          expected[std::size_t(n)] += 2 * std::real(p * std::polar(1.0, 2 * pi * k * n / N)) / N;
      }
      const double e = rel_l2(testing::trace_row(out.traces, nt, int(r)), expected);
      MESSAGE(std::string(spectral ? "k-space method" : "staggered scheme")
              << ", Q = 50, " << dist << " m: relative L2 against Kjartansson's solution " << e);
      CHECK(e <= 5e-2);
    }
  }
}

TEST_CASE("attenuation: the case file's [attenuation] keys and their refusals") {
  const auto parse = testing::parse_case_tables;
  const auto refused = testing::check_refused;
  const std::string& layered = testing::two_layers;
  {
    const Case c = parse(layered + "[attenuation]\nq = [10000.0, 80.0]\nband = [2.0, 40.0]\nmechanisms = 4\n" +
                         "[boundary]\npml_width = 8\n");
    CHECK(c.attenuation.present);
    CHECK(c.attenuation.q_layers == std::vector<double>{10000, 80});
    CHECK(c.attenuation.mechanisms == 4);
    CHECK(c.scheme.formulation == Formulation::staggered);
    const Plan plan = make_plan(c);
    CHECK(plan.sls.tau.size() == 4);
    CHECK(plan.model.q_min == 80);
  }
  CHECK(parse(layered + "[attenuation]\nq = 50.0\n").attenuation.q == 50);
  refused(layered + "[attenuation]\nq = [50.0]\n", "attenuation.q");
  refused(layered + "[attenuation]\nq = 0.5\n", "attenuation.q");
  // Finite in the file but not in the float Q is kept in: the case's key, not a model file's "Q inf" (exit 3).
  refused(layered + "[attenuation]\nq = 1e300\n", "attenuation.q: must be <= 1e+30");
  refused(layered + "[attenuation]\nq = [50.0, 1e300]\n", "attenuation.q: every entry must be >= 1 and <= 1e+30");
  refused(layered + "[attenuation]\nband = [2.0, 40.0]\n", "attenuation");
  refused(layered + "[attenuation]\nq = 50.0\nband = [40.0, 2.0]\n", "attenuation.band");
  refused(layered + "[attenuation]\nq = 50.0\nmechanisms = 9\n", "attenuation.mechanisms");
  refused(layered + "[attenuation]\nq = 50.0\nqq = 1\n", "attenuation.qq");
  refused(layered + "[attenuation]\nq_dataset = \"/q\"\n", "attenuation.q_dataset");
  refused("[model]\ntype = \"homogeneous\"\nvelocity = 2000.0\n[attenuation]\nq = [50.0, 60.0]\n", "attenuation.q");
  {  // the k-space method takes Q with its split-field PML, not with the damping layer
    const Case spectral =
        parse(layered + "[attenuation]\nq = 50.0\n[scheme]\nmethod = \"spectral\"\n[boundary]\n" + "pml_width = 10\n");
    CHECK(spectral.scheme.method == Method::spectral);
    CHECK(make_plan(spectral).sls.tau.size() == 3);
    Case damping = spectral;
    damping.boundary.spectral_absorber = SpectralAbsorber::damping;
    CHECK_THROWS_WITH_AS(make_plan(damping), doctest::Contains("boundary.spectral_absorber = \"pml\""), Error);
  }
  refused(layered + "[attenuation]\nq = 50.0\n[scheme]\nformulation = \"second_order\"\n", "scheme.formulation");
}

TEST_CASE("attenuation: the fit's error and the preflight's refusal of a non-physical fit") {
  const SlsFit fit = fit_sls(3, 30, 3);
  CHECK(fit.tau.size() == 3);
  for (const double q : {10.0, 100.0}) CHECK(fit.largest_error(q) < 1e-2);
  // Eight mechanisms over a wide band give negative weights: refused, naming the key.
  Case c = visco_case(20, {200}, 0.2);
  c.attenuation.mechanisms = 8;
  c.attenuation.band = std::array<double, 2>{3.0, 30.0};
  CHECK_THROWS_WITH_AS(make_plan(c), doctest::Contains("attenuation.mechanisms"), Error);
  // The refusal names a count whose fit is physical, and that count runs.
  try {
    (void)make_plan(c);
  } catch (const Error& e) {
    const std::string what = e.what();
    const std::size_t at = what.find("set attenuation.mechanisms = ");
    REQUIRE(at != std::string::npos);
    c.attenuation.mechanisms = std::stoi(what.substr(at + 29));
    CAPTURE(c.attenuation.mechanisms);
    CHECK(c.attenuation.mechanisms < 8);
    CHECK_NOTHROW(make_plan(c));
  }
  // Three mechanisms over seven decades: every weight positive, but Q missed by up to ~10x: refused.
  c.attenuation.mechanisms = 3;
  c.attenuation.band = std::array<double, 2>{1e-3, 1e4};
  CHECK_THROWS_WITH_AS(make_plan(c), doctest::Contains("misses the target by up to"), Error);
}

TEST_CASE("attenuation: a staggered or k-space run resumed from its saved state continues bit for bit") {
  // The state (u, w, the CPML's phi and chi, the memory variables r_l, the traces; the k-space method's p, p_a, w_a and
  // r_l) saved after step k and loaded into a new propagator: the rest of the run is bitwise the uninterrupted one's
  // (the checkpoint contract).
  for (const bool spectral : {false, true})
    for (const bool attenuation : {false, true}) {
      Case c = visco_case(40, {200, 300}, 0.2, spectral);
      c.run.precision = Precision::fp32;
      c.boundary.free_surface = !spectral;
      if (!attenuation) c.attenuation = {};
      CAPTURE(spectral);
      const testing::ResumedRun run = testing::run_whole_and_resumed(c);
      const std::vector<double>&expected = run.whole, &resumed = run.resumed;
      CAPTURE(attenuation);
      CHECK(resumed == expected);
    }
}

TEST_CASE("attenuation: the k-space method's refusals (validate) and what it runs (gradients, the CUDA backend)") {
  // On the CPU in this version (its gradients too: tests/test_gradient_spectral.cpp): each refusal names what runs
  // instead (exit 3).
  const Case c = visco_case(40, {200}, 0.1, true);
  const Plan plan = make_plan(c);
  CHECK_NOTHROW(make_gradient_propagator(c, plan, all_steps_choice(plan.nt, 1.0)));
  CHECK_THROWS_WITH_AS(validate_case(c, 1'000'000), doctest::Contains("[attenuation]"), Error);
  CHECK(capability(Method::spectral, BackendKind::cuda).cannot_run(c).empty());  // (kernels/cuda/spectral_cuda.cu)
}
