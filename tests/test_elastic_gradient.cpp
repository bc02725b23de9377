// The elastic scheme's adjoint and gradient (docs/numerics.md, "The elastic adjoint"): dot-product tests of the Born
// operators of (vp dt)^2, (vs dt)^2 and rho against their transposes (CPML, free surface, pressure, force and moment
// sources, pressure and velocity receivers, orders 2 to 8, 2-D, fp64 and fp32), Taylor tests of each parameter's
// gradient, and the gradient propagator's forward against the forward propagator's; the Lame parameters' conversions
// and chain rule, and their gradients' Taylor tests under a water layer.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "case_builders.hpp"
#include "solver/case/errors.hpp"
#include "solver/inversion/gradient_check.hpp"
#include "solver/inversion/lame.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/gradient_propagator.hpp"
#include "solver/propagators/history/wavefield_history.hpp"
#include "solver/propagators/propagator.hpp"

using namespace specwave;

namespace {

using testing::elastic_gradient_case;

// J = 1/2 |d - d_obs|^2 over both shots as a function of one parameter p (vp, vs or rho, m/s or kg/m^3) at fixed
// others, and its gradient: dJ/dvp = 2 vp dt^2 dJ/dm_p, dJ/dvs = 2 vs dt^2 dJ/dm_s, dJ/drho as it comes.
struct ParameterObjective {
  GradientPropagator& g;
  int parameter;  // 0 vp, 1 vs, 2 rho
  double dt;
  std::vector<std::vector<double>> observed;
  std::vector<double> weights;  // per trace: the velocity traces weigh alike with the pressure's

  void set(std::span<const double> p) {
    if (parameter == 0) g.set_velocity(p);
    if (parameter == 1) g.set_shear_velocity(p);
    if (parameter == 2) g.set_density(p);
  }
  double value(std::span<const double> p, std::vector<double>* gradient) {
    set(p);
    double j = 0;
    if (gradient) gradient->assign(p.size(), 0.0);
    for (int shot = 0; shot < int(observed.size()); ++shot) {
      std::vector<double> r = g.forward(shot, gradient != nullptr);
      const std::size_t nt = r.size() / weights.size();
      for (std::size_t i = 0; i < r.size(); ++i) {
        r[i] -= observed[std::size_t(shot)][i];
        j += 0.5 * weights[i / nt] * r[i] * r[i];
        r[i] *= weights[i / nt];
      }
      if (!gradient) continue;
      std::vector<double> gm(p.size(), 0.0);
      g.adjoint(r, gm);
      if (parameter == 1) std::fill(gm.begin(), gm.end(), 0.0), g.add_shear_gradient(gm);
      if (parameter == 2) std::fill(gm.begin(), gm.end(), 0.0), g.add_density_gradient(gm);
      for (std::size_t k = 0; k < p.size(); ++k) (*gradient)[k] += parameter == 2 ? gm[k] : gm[k] * 2 * p[k] * dt * dt;
    }
    return j;
  }
};

std::vector<double> parameter_of(const GradientPropagator& g, int parameter, double dt) {
  if (parameter == 1) return g.shear_velocity();
  if (parameter == 2) return g.density();
  std::vector<double> vp = g.vel2dt2();
  for (double& v : vp) v = std::sqrt(v) / dt;
  return vp;
}

}  // namespace

TEST_CASE(
    "elastic Born operators and their adjoints: dot-product tests of vp, vs and rho (fp64 <= 1e-10, fp32 <= 1e-4)") {
  struct Config {
    const char* name;
    bool free_surface;
    Precision precision;
    int order;
    bool two_d, fluid;
    double tolerance;
  };
  for (const Config& cfg :
       {Config{"fp64, CPML on all faces, order 8", false, Precision::fp64, 8, false, false, 1e-10},
        Config{"fp64, free surface + CPML, order 4", true, Precision::fp64, 4, false, false, 1e-10},
        Config{"fp64, 2-D, free surface + CPML, order 2", true, Precision::fp64, 2, true, false, 1e-10},
        Config{"fp64, a fluid top layer (vs = 0) under a free surface, order 8", true, Precision::fp64, 8, false, true,
               1e-10},
        Config{"fp32, free surface + CPML, order 8", true, Precision::fp32, 8, false, false, 1e-4}}) {
    const std::string config = cfg.name;
    CAPTURE(config);
    const Case c = elastic_gradient_case(cfg.free_surface, cfg.precision, cfg.order, cfg.two_d, cfg.fluid);
    const Plan plan = make_plan(c);
    for (int shot = 0; shot < 2; ++shot) {
      const std::pair<std::string, DotTestResult> tests[] = {{"vp", born_dot_test(c, plan, shot, 4321 + shot)},
                                                             {"vs", shear_dot_test(c, plan, shot, 5321 + shot)},
                                                             {"rho", density_dot_test(c, plan, shot, 6321 + shot)}};
      for (const auto& [name, r] : tests) {
        MESSAGE(config << " shot " << shot << " " << name << ": <F dm, dd> = " << r.lhs << ", <dm, F^T dd> = " << r.rhs
                       << ", relative mismatch " << r.mismatch);
        CHECK(r.lhs != 0);
        CHECK(r.mismatch <= cfg.tolerance);
      }
    }
  }
}

TEST_CASE("elastic gradient: Taylor tests of vp, vs and rho, first-order remainder slope 1, second-order slope 2") {
  const Case c = elastic_gradient_case(true, Precision::fp64, 8);
  const Plan plan = make_plan(c);
  auto g = make_gradient_propagator(c, plan, HistoryChoice{});
  const std::vector<double> weights = testing::component_weights(c, 4e12).front();
  for (int parameter = 0; parameter < 3; ++parameter) {
    const std::string names[] = {"vp", "vs", "rho"};
    CAPTURE(names[parameter]);
    ParameterObjective objective{*g, parameter, plan.dt, {}, weights};
    const std::vector<double> p0 = parameter_of(*g, parameter, plan.dt);
    // The observed data: 8% more of the parameter in a blob beside the first shot's path.
    std::vector<double> truth = p0;
    const auto& n = c.grid.shape;
    for (int z = 0; z < n[0]; ++z)
      for (int y = 0; y < n[1]; ++y)
        for (int x = 0; x < n[2]; ++x) {
          const double d2 = std::pow(z - 12.0, 2) + std::pow(y - 13.0, 2) + std::pow(x - 14.0, 2);
          truth[(std::size_t(z) * n[1] + y) * n[2] + x] *= 1 + 0.08 * std::exp(-d2 / 18.0);
        }
    objective.set(truth);
    for (int shot = 0; shot < 2; ++shot) objective.observed.push_back(g->forward(shot, false));
    std::vector<double> gradient;
    const double j0 = objective.value(p0, &gradient);
    const std::vector<double> direction = smooth_direction(c.grid, p0, 0.02);
    double derivative = 0;
    for (std::size_t k = 0; k < p0.size(); ++k) derivative += gradient[k] * direction[k];
    std::vector<double> hs, first, second, p(p0.size());
    for (double h : taylor_steps) {
      for (std::size_t k = 0; k < p0.size(); ++k) p[k] = p0[k] + h * direction[k];
      const double j = objective.value(p, nullptr);
      hs.push_back(h), first.push_back(std::abs(j - j0)), second.push_back(std::abs(j - j0 - h * derivative));
      MESSAGE(names[parameter] << ": h " << h << " r1 " << first.back() << " r2 " << second.back());
    }
    objective.set(p0);
    const double s1 = log_log_slope(hs, first), s2 = log_log_slope(hs, second);
    MESSAGE(names[parameter] << ": J = " << j0 << ", g.dm = " << derivative << ", slopes " << s1 << ", " << s2);
    CHECK(derivative != 0);
    CHECK(std::abs(s1 - 1) <= 0.1);
    CHECK(std::abs(s2 - 2) <= 0.1);
  }
}

TEST_CASE("elastic gradient: its forward is bitwise the forward propagator's; every history gives the same gradient") {
  for (const Precision precision : {Precision::fp64, Precision::fp32}) {
    CAPTURE(to_string(precision));
    const Case c = elastic_gradient_case(true, precision, 8);
    const Plan plan = make_plan(c);
    auto forward = make_propagator(c, plan);
    forward->begin_shot(plan.sources[1], plan.wavelets[1], plan.receivers);
    forward->advance(0, plan.nt);
    const std::span<const double> traces = forward->traces();
    const std::vector<double> expected(traces.begin(), traces.end());
    std::vector<double> gradient0, shear0;
    for (const HistoryChoice& history :
         {HistoryChoice{}, segment_checkpoint_choice(plan.nt, 7, 0, 0), binomial_choice(plan.nt, 4, 0, 0)}) {
      auto g = make_gradient_propagator(c, plan, history);
      const std::vector<double> own = g->forward(1, true);
      REQUIRE(own.size() == expected.size());
      long long mismatch = 0;
      for (std::size_t i = 0; i < own.size(); ++i) mismatch += !testing::same_bits(own[i], expected[i]);
      CHECK(mismatch == 0);
      std::vector<double> gradient(std::size_t(c.grid.points()), 0.0), shear(gradient.size(), 0.0);
      g->adjoint(own, gradient);
      g->add_shear_gradient(shear);
      if (gradient0.empty()) {
        gradient0 = gradient, shear0 = shear;
        continue;
      }
      long long differ = 0;
      for (std::size_t i = 0; i < gradient.size(); ++i)
        differ += !testing::same_bits(gradient[i], gradient0[i]) + !testing::same_bits(shear[i], shear0[i]);
      MESSAGE(g->history_name() << ": " << differ << " values differ from every step's");
      CHECK(differ == 0);
    }
  }
}

TEST_CASE("Lame parameters: lambda and mu from vp, vs and rho and back; the gradients' chain rule both ways") {
  // Solid points and fluid points (vs = 0), random within the ranges invert allows.
  std::mt19937_64 rng(20261206);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const std::size_t n = 64;
  std::vector<double> vp(n), vs(n), rho(n), ga(n), gb(n), gr(n);
  for (std::size_t k = 0; k < n; ++k) {
    vp[k] = 1500 + 1500 * u(rng);
    vs[k] = k % 5 == 0 ? 0.0 : vp[k] * (0.3 + 0.55 * u(rng));
    rho[k] = 1000 + 1600 * u(rng);
    ga[k] = u(rng) - 0.5, gb[k] = u(rng) - 0.5, gr[k] = u(rng) - 0.5;
  }
  const LameModel lame = lame_of(vp, vs, rho);
  const ElasticVelocities back = velocities_of(lame.lambda, lame.mu, rho);
  for (std::size_t k = 0; k < n; ++k) {
    CHECK(lame.mu[k] == doctest::Approx(rho[k] * vs[k] * vs[k]).epsilon(1e-15));
    CHECK(lame.lambda[k] + 2 * lame.mu[k] == doctest::Approx(rho[k] * vp[k] * vp[k]).epsilon(1e-14));
    CHECK(std::abs(back.vp[k] - vp[k]) <= 1e-13 * vp[k]);
    CHECK(std::abs(back.vs[k] - vs[k]) <= 1e-13 * vp[k]);
  }
  CHECK(
      std::isnan(velocities_of(std::vector<double>{-3e9}, std::vector<double>{1e9}, std::vector<double>{2000}).vp[0]));

  // J = sum ga (vp dt)^2 + gb (vs dt)^2 + gr rho: its sums are ga, gb, gr, and it is linear in lambda and mu (central
  // differences exact to rounding), smooth in rho.
  const double dt = 1e-3;
  const auto J = [&](std::size_t k, double l, double m, double r) {
    const ElasticVelocities v = velocities_of(std::vector<double>{l}, std::vector<double>{m}, std::vector<double>{r});
    return ga[k] * v.vp[0] * v.vp[0] * dt * dt + gb[k] * v.vs[0] * v.vs[0] * dt * dt + gr[k] * r;
  };
  std::vector<double> gl = ga, gm = gb, grho = gr;
  lame_gradients(dt, vp, vs, rho, gl, gm, grho);
  double worst = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const double l = lame.lambda[k], m = lame.mu[k], r = rho[k], hl = 1e-4 * l, hm = 1e-4 * (m > 0 ? m : l),
                 hr = 1e-4 * r;
    const double fd_l = (J(k, l + hl, m, r) - J(k, l - hl, m, r)) / (2 * hl);
    // (mu = 0: the one-sided difference, exact as J is linear in mu.)
    const double fd_m =
        m > 0 ? (J(k, l, m + hm, r) - J(k, l, m - hm, r)) / (2 * hm) : (J(k, l, hm, r) - J(k, l, 0, r)) / hm;
    const double fd_r = (J(k, l, m, r + hr) - J(k, l, m, r - hr)) / (2 * hr);
    worst = std::max({worst, std::abs(fd_l - gl[k]) / std::abs(gl[k]), std::abs(fd_m - gm[k]) / std::abs(gm[k]),
                      std::abs(fd_r - grho[k]) / std::abs(grho[k])});
  }
  MESSAGE("largest relative difference from finite differences: " << worst);
  CHECK(worst <= 1e-6);

  // And back: the Lame gradients as vp's, vs' and rho's are the velocity parameterisation's own (2 v dt^2 times the
  // sums, and the density's at fixed vp and vs).
  velocity_gradients(vp, vs, rho, gl, gm, grho);
  for (std::size_t k = 0; k < n; ++k) {
    CHECK(gl[k] == doctest::Approx(2 * vp[k] * dt * dt * ga[k]).epsilon(1e-12));
    CHECK(std::abs(gm[k] - 2 * vs[k] * dt * dt * gb[k]) <= 1e-12 * std::abs(2 * vp[k] * dt * dt * gb[k]));
    CHECK(grho[k] == doctest::Approx(gr[k]).epsilon(1e-10));
  }
}

TEST_CASE(
    "Lame parameters under a water layer: check-gradient's Taylor tests of lambda, mu and rho at fixed lambda "
    "and mu (fp64)") {
  Case c = elastic_gradient_case(true, Precision::fp64, 8, false, true);
  c.inversion.lame = true;
  c.inversion.density_parameter = true;
  ModelSpec truth = c.model;  // the solids' moduli and densities change, the water stays
  truth.velocities = {1800.0, 2300.0, 2400.0};
  truth.shear_velocities = {0.0, 1200.0, 1450.0};
  truth.densities = {1900.0, 2100.0, 2300.0};
  c.inversion.true_model = truth;
  const GradientCheckReport r = check_gradient(c);
  MESSAGE(r.text());
  REQUIRE(r.lame);
  REQUIRE(r.shear_taylor);
  REQUIRE(r.density_taylor);
  // The dot-product tests in fp64 (the Born operators are the velocities'; fp32's are test_elastic_gradient's above).
  for (std::size_t k = 0; k < r.dot.size(); ++k)
    if (r.dot[k].first == "fp64") CHECK(r.dot_passed(k));
  CHECK(r.taylor.directional_derivative != 0);
  CHECK(r.shear_taylor->directional_derivative != 0);
  CHECK(r.density_taylor->directional_derivative != 0);
  CHECK(r.taylor_passed());
  CHECK(r.shear_taylor_passed());
  CHECK(r.density_taylor_passed());
}

TEST_CASE(
    "check-gradient refuses a shot whose traces cannot change with the model (2-D: an SH source, P-SV receivers)") {
  // The dot-product tests would compare 0 with 0 and pass, the Taylor slopes would be NaN: refused with the reason.
  Case c = elastic_gradient_case(false, Precision::fp64, 4, true);
  SourceSpec& s = c.shots[0].sources[0];
  s.kind = SourceKind::force;
  s.direction = {0, 1, 0};
  c.shots[0].sources.resize(1);
  ModelSpec truth = c.model;
  truth.velocities = {1850.0, 2250.0, 2450.0};
  c.inversion.true_model = truth;
  CHECK_THROWS_WITH_AS(check_gradient(c), doctest::Contains("shot 0's traces do not change with the model"), Error);
}
