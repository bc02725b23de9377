// The staggered scheme's adjoint and gradient (docs/numerics.md, "The staggered scheme's adjoint"): dot-product tests
// of its Born operator and the transpose (CPML, free surface, force sources, attenuation, orders 2 to 8, fp64 and
// fp32), Taylor tests of the velocity gradient with the density and Q fixed, and the gradient propagator's forward
// against the forward propagator's.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "case_builders.hpp"
#include "density_check.hpp"
#include "solver/case/errors.hpp"
#include "solver/inversion/gradient_check.hpp"
#include "solver/inversion/misfit.hpp"
#include "solver/inversion/objective.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/gradient_propagator.hpp"
#include "solver/propagators/history/wavefield_history.hpp"
#include "solver/propagators/propagator.hpp"

using namespace specwave;

namespace {

// The gradient tests' case (tests/case_builders.hpp) on the staggered scheme: three layers of velocity and density
// (and Q with `attenuation`); the first interface passes between the first shot's source and two receivers.
Case staggered_gradient_case(bool free_surface, Precision precision, int order, bool attenuation) {
  Case c = testing::gradient_test_case(free_surface, precision, order);
  c.model.kind = ModelSpec::Kind::layered;
  c.model.interfaces = {95.0, 185.0};
  c.model.velocities = {1800.0, 2200.0, 2450.0};
  c.model.densities = {1100.0, 2000.0, 2300.0};
  c.scheme.formulation = Formulation::staggered;
  if (attenuation) {
    c.attenuation.present = true;
    c.attenuation.q_layers = {30.0, 60.0, 120.0};
  }
  return c;
}

}  // namespace

TEST_CASE("staggered Born operator and its adjoint: dot-product test (fp64 <= 1e-10, fp32 <= 1e-4)") {
  struct Config {
    const char* name;
    bool free_surface;
    Precision precision;
    int order;
    bool attenuation;
    bool force;
    double tolerance;
  };
  for (const Config& cfg :
       {Config{"fp64, CPML on all faces, order 8", false, Precision::fp64, 8, false, false, 1e-10},
        Config{"fp64, free surface + CPML, order 8, attenuation", true, Precision::fp64, 8, true, false, 1e-10},
        Config{"fp64, CPML, order 4, attenuation, force source", false, Precision::fp64, 4, true, true, 1e-10},
        Config{"fp64, free surface + CPML, order 2, force source", true, Precision::fp64, 2, false, true, 1e-10},
        Config{"fp32, free surface + CPML, order 8, attenuation", true, Precision::fp32, 8, true, false, 1e-4}}) {
    const std::string config = cfg.name;
    CAPTURE(config);
    Case c = staggered_gradient_case(cfg.free_surface, cfg.precision, cfg.order, cfg.attenuation);
    if (cfg.force) {
      c.shots[1].sources[0].kind = SourceKind::force;
      c.shots[1].sources[0].direction = {0.6, 0.0, -0.8};
    }
    const Plan plan = make_plan(c);
    for (int shot = 0; shot < 2; ++shot) {
      const DotTestResult r = born_dot_test(c, plan, shot, 4321 + shot);
      MESSAGE(config << " shot " << shot << ": <F dm, dd> = " << r.lhs << ", <dm, F^T dd> = " << r.rhs
                     << ", relative mismatch " << r.mismatch);
      CHECK(r.lhs != 0);
      CHECK(r.mismatch <= cfg.tolerance);
    }
  }
}

TEST_CASE("staggered gradient: Taylor test, first-order remainder slope 1, second-order slope 2 (fp64)") {
  for (const bool attenuation : {false, true}) {
    CAPTURE(attenuation);
    Case c = staggered_gradient_case(true, Precision::fp64, 8, attenuation);
    ModelSpec truth = c.model;
    truth.velocities = {2000.0, 2000.0, 2700.0};
    c.inversion.true_model = truth;
    const Plan plan = make_plan(c);
    auto propagator = make_gradient_propagator(c, plan, HistoryChoice{});
    LeastSquaresMisfit misfit;
    const Parameterisation p = Parameterisation::velocity;
    Objective objective(*propagator, misfit, observed_data(c, plan, *propagator), p, plan.dt);
    const std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
    const std::vector<double> model = parameter_from_velocity(p, velocity);
    const std::vector<double> direction = smooth_direction(c.grid, model, 0.02);
    const TaylorResult r = taylor_test(objective, model, direction, taylor_steps);
    for (const auto& row : r.rows) MESSAGE("h " << row.h << " r1 " << row.first << " r2 " << row.second);
    MESSAGE("attenuation " << attenuation << ": J = " << r.misfit << ", g.dm = " << r.directional_derivative
                           << ", slopes " << r.slope_first << ", " << r.slope_second);
    CHECK(r.directional_derivative != 0);
    CHECK(std::abs(r.slope_first - 1) <= 0.1);
    CHECK(std::abs(r.slope_second - 2) <= 0.1);
  }
}

TEST_CASE(
    "staggered gradient: its forward is bitwise the forward propagator's; every history gives the same gradients") {
  for (const Precision precision : {Precision::fp64, Precision::fp32}) {
    CAPTURE(to_string(precision));
    // (With the density's gradient: the history's field holds the velocity increments beside D.)
    Case c = staggered_gradient_case(true, precision, 8, true);
    c.inversion.density_parameter = true;
    const Plan plan = make_plan(c);
    auto forward = make_propagator(c, plan);
    forward->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
    forward->advance(0, plan.nt);
    const std::vector<double> expected(forward->traces().begin(), forward->traces().end());
    std::vector<double> gradient0, density0;
    for (const HistoryChoice& history :
         {HistoryChoice{}, segment_checkpoint_choice(plan.nt, 7, 0, 0), binomial_choice(plan.nt, 4, 0, 0)}) {
      auto g = make_gradient_propagator(c, plan, history);
      const std::vector<double> traces = g->forward(0, true);
      REQUIRE(traces.size() == expected.size());
      long long mismatch = 0;
      for (std::size_t i = 0; i < traces.size(); ++i) mismatch += !testing::same_bits(traces[i], expected[i]);
      CHECK(mismatch == 0);
      std::vector<double> gradient(std::size_t(c.grid.points()), 0.0), density(gradient.size(), 0.0);
      g->adjoint(traces, gradient);
      g->add_density_gradient(density);
      CHECK(std::any_of(density.begin(), density.end(), [](double v) { return v != 0; }));
      if (gradient0.empty()) {
        gradient0 = gradient, density0 = density;
        continue;
      }
      long long differ = 0;
      for (std::size_t i = 0; i < gradient.size(); ++i)
        differ += !testing::same_bits(gradient[i], gradient0[i]) + !testing::same_bits(density[i], density0[i]);
      MESSAGE(g->history_name() << ": " << differ << " of " << 2 * gradient.size()
                                << " values differ from every step's");
      CHECK(differ == 0);
    }
  }
}

TEST_CASE("staggered gradient with four-component receivers and a force source: dot-product and Taylor tests (fp64)") {
  // p, vz, vy, vx at each position: the velocity traces divide by each receiver's own density (|w|-weighted over its
  // derivative stencil), in the forward and in the transposed conversion of the adjoint source.
  Case c = staggered_gradient_case(true, Precision::fp64, 8, true);
  ModelSpec truth = c.model;
  truth.velocities = {2000.0, 2000.0, 2700.0};
  c.inversion.true_model = truth;
  c.shots[1].sources[0].kind = SourceKind::force;
  c.shots[1].sources[0].direction = {0.0, 0.6, 0.8};
  testing::four_component_receivers(c);
  const Plan plan = make_plan(c);
  for (int shot = 0; shot < 2; ++shot) {
    const DotTestResult r = born_dot_test(c, plan, shot, 99 + shot);
    MESSAGE("velocity receivers, shot " << shot << ": relative mismatch " << r.mismatch);
    CHECK(r.lhs != 0);
    CHECK(r.mismatch <= 1e-10);
  }
  auto propagator = make_gradient_propagator(c, plan, HistoryChoice{});
  const ObservedData observed = observed_data(c, plan, *propagator);
  TraceWeightedMisfit misfit(std::make_unique<LeastSquaresMisfit>(), testing::component_weights(c, 4e12), plan.nt);
  Objective objective(*propagator, misfit, observed, Parameterisation::velocity, plan.dt);
  const std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
  const TaylorResult t = taylor_test(objective, velocity, smooth_direction(c.grid, velocity, 0.02), taylor_steps);
  MESSAGE("velocity receivers: J = " << t.misfit << ", slopes " << t.slope_first << ", " << t.slope_second);
  CHECK(std::abs(t.slope_first - 1) <= 0.1);
  CHECK(std::abs(t.slope_second - 2) <= 0.1);
}

TEST_CASE("staggered density gradient: Taylor test at fixed velocity, slopes 1 and 2 (fp64)") {
  // inversion.parameters = ["velocity", "density"]: the density gradient (buoyancy, dt K, the memory variables'
  // drives, the sources' densities; with four-component receivers, each velocity receiver's density 1 / rho_r) against
  // J at rho + h drho along a smooth direction (tests/density_check.hpp).
  struct Config {
    bool free_surface, attenuation, velocity_receivers;
  };
  for (const auto& [free_surface, attenuation, velocity_receivers] :
       {Config{true, false, false}, Config{false, true, false}, Config{true, false, true}}) {
    CAPTURE(free_surface);
    CAPTURE(attenuation);
    CAPTURE(velocity_receivers);
    Case c = staggered_gradient_case(free_surface, Precision::fp64, 8, attenuation);
    c.inversion.density_parameter = true;
    if (velocity_receivers) testing::four_component_receivers(c);
    testing::check_density_gradient(c, {10.0, 14.0, 15.0}, 1e-5);
  }
}

TEST_CASE(
    "staggered gradient: the history counts its fields (D, and dw with a density parameter); no boundary saving") {
  Case c = staggered_gradient_case(true, Precision::fp32, 8, false);
  const Plan plan = make_plan(c);
  const HistoryChoice velocity_only = history_for(c, plan);
  c.inversion.density_parameter = true;
  const HistoryChoice with_density = history_for(c, plan);
  CHECK(velocity_only.storage == WavefieldStorage::memory);
  // D (4 bytes a point) a step; with the density, three padded increments more.
  CHECK(velocity_only.memory_bytes == doctest::Approx(4.0 * double(c.grid.points()) * (plan.nt + 1)).epsilon(0.01));
  CHECK(with_density.memory_bytes > 4 * velocity_only.memory_bytes);
  c.inversion.wavefield_storage = WavefieldStorage::boundary;
  try {
    history_for(c, plan);
    FAIL("expected the refusal");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::invalid_case);
    CHECK(std::string(e.what()).find("wavefield_storage") != std::string::npos);
  }
}

TEST_CASE("staggered gradient: a model that a density contrast makes unstable at the fixed dt is refused") {
  // 100:1 density contrast: the operator's largest eigenvalue exceeds the constant-density bound (docs/numerics.md,
  // "Stability"), which v_reference / CFL number stands for; dt is set at 0.99 of the limit for velocity_max.
  Case c = staggered_gradient_case(false, Precision::fp64, 8, false);
  c.model.densities = {20.0, 2000.0, 2000.0};
  c.inversion.velocity_max = 3000;
  c.time.cfl_safety = 0.99;
  const Plan plan = make_plan(c);
  auto g = make_gradient_propagator(c, plan, HistoryChoice{});
  std::vector<double> v(std::size_t(c.grid.points()), 2000.0);
  CHECK_NOTHROW(g->set_velocity(v));
  std::fill(v.begin(), v.end(), 2990.0);  // below v_reference / CFL number = 3030 m/s
  try {
    g->set_velocity(v);
    FAIL("expected the refusal");
  } catch (const Error& e) {
    MESSAGE(std::string(e.what()));
    CHECK(e.code() == ExitCode::invalid_case);
    CHECK(std::string(e.what()).find("unstable") != std::string::npos);
  }
}
