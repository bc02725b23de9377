// The staggered scheme's adjoint and gradient (docs/numerics.md, "The staggered scheme's adjoint"): dot-product tests
// of its Born operator and the transpose (CPML, free surface, force sources, attenuation, orders 2 to 8, fp64 and
// fp32), Taylor tests of the velocity gradient with the density and Q fixed, and the gradient propagator's forward
// against the forward propagator's.
#include <doctest/doctest.h>

#include <array>
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

namespace {

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

}  // namespace

TEST_CASE("staggered density gradient: Taylor test at fixed velocity, slopes 1 and 2 (fp64)") {
  // inversion.parameters = ["velocity", "density"]: the density gradient (buoyancy, dt K, the memory variables'
  // drives, the sources' densities; with four-component receivers, each velocity receiver's density 1 / rho_r) against
  // J at rho + h drho along a smooth direction.
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
    const Plan plan = make_plan(c);
    auto g = make_gradient_propagator(c, plan, HistoryChoice{});
    const std::vector<double> rho0 = g->density();
    REQUIRE(rho0.size() == std::size_t(c.grid.points()));
    // The observed data of a density 10% above the model's in a blob between the sources and receivers.
    std::vector<double> truth = rho0;
    const auto& n = c.grid.shape;
    for (int z = 0; z < n[0]; ++z)
      for (int y = 0; y < n[1]; ++y)
        for (int x = 0; x < n[2]; ++x) {
          const double d2 = std::pow(z - 10.0, 2) + std::pow(y - 14.0, 2) + std::pow(x - 15.0, 2);
          truth[(std::size_t(z) * n[1] + y) * n[2] + x] *= 1 + 0.1 * std::exp(-d2 / 32.0);
        }
    DensityObjective objective{*g, {}, int(c.shots.size())};
    if (velocity_receivers) objective.trace_weights = testing::component_weights(c, 4e12).front();
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
      MESSAGE("at " << where << ": central difference " << central << ", gradient " << gradient[k0]);
      CHECK(std::abs(central - gradient[k0]) <= 1e-5 * std::abs(central));
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
    MESSAGE("free surface " << free_surface << ", attenuation " << attenuation << ", velocity receivers "
                            << velocity_receivers << ": J = " << j0 << ", g.drho = " << gd << ", r2 at the smallest h "
                            << r2.back() << ", slopes " << slope(r1) << ", " << slope(r2));
    CHECK(gd != 0);
    CHECK(std::abs(slope(r1) - 1) <= 0.1);
    CHECK(std::abs(slope(r2) - 2) <= 0.1);
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
