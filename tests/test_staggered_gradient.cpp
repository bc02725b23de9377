// The staggered scheme's adjoint and gradient (docs/numerics.md, "The staggered scheme's adjoint"): dot-product tests
// of its Born operator and the transpose (CPML, free surface, force sources, attenuation, orders 2 to 8, fp64 and
// fp32), Taylor tests of the velocity gradient with the density and Q fixed, and the gradient propagator's forward
// against the forward propagator's.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "case_builders.hpp"
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
    "staggered gradient: its forward is bitwise the forward propagator's; every history gives the same gradient") {
  for (const Precision precision : {Precision::fp64, Precision::fp32}) {
    CAPTURE(to_string(precision));
    const Case c = staggered_gradient_case(true, precision, 8, true);
    const Plan plan = make_plan(c);
    auto forward = make_propagator(c, plan);
    forward->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
    forward->advance(0, plan.nt);
    const std::vector<double> expected(forward->traces().begin(), forward->traces().end());
    std::vector<double> gradient0;
    for (const HistoryChoice& history :
         {HistoryChoice{}, segment_checkpoint_choice(plan.nt, 7, 0, 0), binomial_choice(plan.nt, 4, 0, 0)}) {
      auto g = make_gradient_propagator(c, plan, history);
      const std::vector<double> traces = g->forward(0, true);
      REQUIRE(traces.size() == expected.size());
      long long mismatch = 0;
      for (std::size_t i = 0; i < traces.size(); ++i) mismatch += !testing::same_bits(traces[i], expected[i]);
      CHECK(mismatch == 0);
      std::vector<double> gradient(std::size_t(c.grid.points()), 0.0);
      g->adjoint(traces, gradient);
      if (gradient0.empty()) {
        gradient0 = gradient;
        continue;
      }
      long long differ = 0;
      for (std::size_t i = 0; i < gradient.size(); ++i) differ += !testing::same_bits(gradient[i], gradient0[i]);
      MESSAGE(g->history_name() << ": " << differ << " of " << gradient.size() << " values differ from every step's");
      CHECK(differ == 0);
    }
  }
}

TEST_CASE("staggered gradient: particle-velocity receivers are refused by the gradient commands, naming the key") {
  Case c = staggered_gradient_case(true, Precision::fp64, 4, false);
  c.receiver_components = {ReceiverComponent::pressure, ReceiverComponent::vz, ReceiverComponent::vx};
  const Plan plan = make_plan(c);
  try {
    make_gradient_propagator(c, plan, HistoryChoice{});
    FAIL("expected the refusal");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::invalid_case);
    CHECK(std::string(e.what()).find("receivers.components") != std::string::npos);
  }
}
