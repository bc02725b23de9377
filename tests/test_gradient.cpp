// The adjoint of the FDTD scheme and the gradient (docs/numerics.md, "Adjoint and gradient"): dot-product
// tests of the Born operator and its transpose, Taylor tests of the gradient, history strategies.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "case_builders.hpp"
#include "solver/boundary_history.hpp"
#include "solver/gradient.hpp"
#include "solver/gradient_check.hpp"
#include "solver/errors.hpp"
#include "solver/plan.hpp"

using namespace specwave;

namespace {

// A small heterogeneous case: 2 sources in 2 shots, receivers off the grid, CPML on every face (or a free
// surface on top), order 8.
Case adjoint_case(bool free_surface, Precision precision, int order = 8) {
  Case c = specwave::testing::small_case(30, 10, 2000, order, 6, 25, 0.08);
  c.grid.shape = {30, 28, 32};
  c.model.kind = ModelSpec::Kind::gaussian;
  c.model.anomaly = 300;
  c.model.center = {150, 140, 160};
  c.model.radius = 50;
  c.boundary.free_surface = free_surface;
  c.shots[0].sources[0].position = {free_surface ? 33.0 : 103.0, 131.0, 95.0};
  SourceSpec s2 = c.shots[0].sources[0];
  s2.position = {120.0, 150.0, 221.0};
  c.shots.push_back({{s2}});
  c.receivers = {{free_surface ? 12.5 : 91.0, 110.0, 205.0}, {180.0, 133.0, 140.0}, {104.0, 171.0, 102.5}};
  c.run.precision = precision;
  c.inversion.present = true;
  c.inversion.velocity_max = 2600;
  return c;
}

}  // namespace

TEST_CASE("FDTD Born operator and its adjoint: dot-product test") {
  struct Config {
    const char* name;
    bool free_surface;
    Precision precision;
    int order;
    double tolerance;
  };
  for (const Config& cfg : {Config{"fp64, CPML on all faces, order 8", false, Precision::fp64, 8, 1e-10},
                            Config{"fp64, free surface + CPML, order 8", true, Precision::fp64, 8, 1e-10},
                            Config{"fp64, free surface + CPML, order 2", true, Precision::fp64, 2, 1e-10},
                            Config{"fp32, CPML on all faces, order 8", false, Precision::fp32, 8, 1e-4},
                            Config{"fp32, free surface + CPML, order 4", true, Precision::fp32, 4, 1e-4}}) {
    const std::string config = cfg.name;
    CAPTURE(config);
    const Case c = adjoint_case(cfg.free_surface, cfg.precision, cfg.order);
    const Plan plan = make_plan(c);
    for (int shot = 0; shot < 2; ++shot) {
      const DotTestResult r = born_dot_test(c, plan, shot, 1234 + shot);
      MESSAGE(config << " shot " << shot << ": <F dm, dd> = " << r.lhs << ", <dm, F^T dd> = " << r.rhs
                     << ", relative mismatch " << r.mismatch);
      CHECK(r.lhs != 0);
      CHECK(r.mismatch <= cfg.tolerance);
    }
  }
}

TEST_CASE("dot-product test on a thin grid whose only z layer (free surface on top) starts above z = W") {
  // nz = W + 2R + 1: the high-z layer begins at iz = 2R + 1 < W. Both the forward CPML and its adjoint must
  // file those points under the high face.
  Case c = adjoint_case(true, Precision::fp64, 4);
  c.grid.shape[0] = 6 + 4 + 1;
  c.receivers = {{12.5, 110.0, 205.0}, {40.0, 133.0, 140.0}};
  c.shots.resize(1);
  c.model.center[0] = 50;
  const Plan plan = make_plan(c);
  const DotTestResult r = born_dot_test(c, plan, 0, 99);
  MESSAGE("thin grid: relative mismatch " << r.mismatch);
  CHECK(r.mismatch <= 1e-10);
}

namespace {

// The case with observed data from a shifted anomaly: the starting model is the case's own.
Case taylor_case(Parameterisation p) {
  Case c = adjoint_case(true, Precision::fp64);
  ModelSpec truth = c.model;
  truth.center = {120, 150, 150};
  truth.anomaly = 200;
  c.inversion.true_model = truth;
  c.inversion.parameterisation = p;
  return c;
}

}  // namespace

TEST_CASE("Taylor test of the gradient: first-order remainder slope 1, second-order slope 2 (fp64)") {
  for (Parameterisation p : {Parameterisation::velocity, Parameterisation::slowness2}) {
    const std::string parameterisation = to_string(p);
    CAPTURE(parameterisation);
    const Case c = taylor_case(p);
    const Plan plan = make_plan(c);
    auto propagator = make_gradient_propagator(c, plan, HistoryChoice{});
    LeastSquaresMisfit misfit;
    Objective objective(*propagator, misfit, observed_data(c, plan, *propagator), p, plan.dt);
    const std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
    const std::vector<double> model = parameter_from_velocity(p, velocity);
    const std::vector<double> direction = smooth_direction(c.grid, model, 0.02);
    const TaylorResult r = taylor_test(objective, model, direction, taylor_steps);
    for (const auto& row : r.rows) MESSAGE(parameterisation << " h " << row.h << " r1 " << row.first << " r2 " << row.second);
    MESSAGE(parameterisation << ": J = " << r.misfit << ", g.dm = " << r.directional_derivative << ", slopes " << r.slope_first
                             << ", " << r.slope_second);
    CHECK(std::abs(r.slope_first - 1) <= 0.1);
    CHECK(std::abs(r.slope_second - 2) <= 0.1);
  }
}

TEST_CASE("every wavefield history strategy gives bitwise the same gradient") {
  for (Precision precision : {Precision::fp64, Precision::fp32}) {
    const std::string name = to_string(precision);
    CAPTURE(name);
    Case c = taylor_case(Parameterisation::velocity);
    c.run.precision = precision;
    const Plan plan = make_plan(c);
    const std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
    LeastSquaresMisfit misfit;
    std::vector<MisfitGradient> results;
    std::vector<std::string> names;
    for (const HistoryChoice& h : {HistoryChoice{WavefieldStorage::memory, 0, 0}, HistoryChoice{WavefieldStorage::checkpoints, 7, 0},
                                   HistoryChoice{WavefieldStorage::checkpoints, 1, 0},
                                   HistoryChoice{WavefieldStorage::checkpoints, plan.nt + 3, 0}}) {
      auto propagator = make_gradient_propagator(c, plan, h);
      Objective objective(*propagator, misfit, observed_data(c, plan, *propagator), Parameterisation::velocity, plan.dt);
      results.push_back(objective.evaluate(velocity, true));
      names.push_back(propagator->history_name());
    }
    for (std::size_t k = 1; k < results.size(); ++k) {
      CAPTURE(names[k]);
      CHECK(results[k].misfit == results[0].misfit);
      CHECK(results[k].gradient == results[0].gradient);
    }
    double norm = 0;
    for (double g : results[0].gradient) norm += g * g;
    CHECK(norm > 0);
  }
}

namespace {

struct Reversal {
  double field = 0;     // max_n ||r^n - u^n|| / max_n ||u^n||: rebuilt (r) against stored (u) fields
  double gradient = 0;  // ||g_boundary - g_memory|| / ||g_memory|| over two shots
  double gradient_norm = 0;
  int nt = 0;
};

double norm2(std::span<const double> a) {
  double s = 0;
  for (double v : a) s += v * v;
  return std::sqrt(s);
}

Reversal measure_reversal(const Case& c) {
  const Plan plan = make_plan(c);
  const std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
  Reversal out;
  out.nt = plan.nt;
  for (int shot = 0; shot < 2; ++shot) {
    std::vector<std::vector<double>> stored(plan.nt + 1);
    double scale = 0;
    visit_fdtd_cpu_history(c, plan, {WavefieldStorage::memory, 0, 0}, velocity, shot, [&](int n, std::span<const double> u) {
      stored[n].assign(u.begin(), u.end());
      scale = std::max(scale, norm2(u));
    });
    int expected = plan.nt;
    visit_fdtd_cpu_history(c, plan, {WavefieldStorage::boundary, 0, 0}, velocity, shot, [&](int n, std::span<const double> r) {
      CHECK(n == expected--);
      double d = 0;
      for (std::size_t k = 0; k < r.size(); ++k) d += (r[k] - stored[n][k]) * (r[k] - stored[n][k]);
      out.field = std::max(out.field, std::sqrt(d) / scale);
    });
  }
  LeastSquaresMisfit misfit;
  std::vector<std::vector<double>> g;
  for (const HistoryChoice& h : {HistoryChoice{WavefieldStorage::memory, 0, 0}, HistoryChoice{WavefieldStorage::boundary, 0, 0}}) {
    auto propagator = make_gradient_propagator(c, plan, h);
    Objective objective(*propagator, misfit, observed_data(c, plan, *propagator), Parameterisation::velocity, plan.dt);
    g.push_back(objective.evaluate(velocity, true).gradient);
  }
  std::vector<double> diff(g[0].size());
  for (std::size_t k = 0; k < diff.size(); ++k) diff[k] = g[1][k] - g[0][k];
  out.gradient_norm = norm2(g[0]);
  out.gradient = norm2(diff) / out.gradient_norm;
  return out;
}

}  // namespace

TEST_CASE("boundary saving: rebuilt fields and gradient against every step stored") {
  // The reverse step differs from the forward one by rounding only; the leapfrog carries those errors without
  // amplifying them, and errors of different steps add like a random walk: relative error about
  // c u sqrt(n_steps) with u the unit roundoff and c = O(1) (docs/numerics.md, "Boundary saving": the analysis;
  // measured c <= 0.9). The tolerance takes c = 16 and all nt steps (the field's energy leaves through the CPML
  // long before, so fewer steps count): a wrong point set, source term or free surface gives errors of order 1.
  for (bool free_surface : {false, true})
    for (int order : {2, 8})
      for (Precision precision : {Precision::fp64, Precision::fp32}) {
        Case c = adjoint_case(free_surface, precision, order);
        ModelSpec truth = c.model;
        truth.center = {120, 150, 150};
        truth.anomaly = 200;
        c.inversion.true_model = truth;
        c.time.duration = 0.3;
        const Reversal r = measure_reversal(c);
        const double unit_roundoff = precision == Precision::fp64 ? 0x1p-53 : 0x1p-24;
        const double tolerance = 16 * unit_roundoff * std::sqrt(double(r.nt));
        const std::string config = std::string(free_surface ? "free surface + CPML" : "CPML on all faces") + ", order " +
                                   std::to_string(order) + ", " + to_string(precision);
        CAPTURE(config);
        MESSAGE(config << ", nt " << r.nt << ": fields " << r.field << ", gradient " << r.gradient << " (tolerance "
                       << tolerance << ")");
        CHECK(r.field <= tolerance);
        CHECK(r.gradient <= tolerance);
        CHECK(r.gradient_norm > 0);
      }
}

TEST_CASE("boundary saving keeps the layer points of nt - 1 steps and two fields") {
  for (bool free_surface : {false, true})
    for (Precision precision : {Precision::fp64, Precision::fp32}) {
      const Case c = adjoint_case(free_surface, precision, 4);
      const Plan plan = make_plan(c);
      auto propagator = make_gradient_propagator(c, plan, {WavefieldStorage::boundary, 0, 0});
      propagator->set_velocity(std::vector<double>(plan.model.velocity.begin(), plan.model.velocity.end()));
      propagator->forward(1, true);
      const double value = precision == Precision::fp64 ? 8 : 4;
      const auto& shape = c.grid.shape;
      // Independent count of the layer points: every point minus the box inside the layers.
      const double inner = (shape[0] - (free_surface ? 1 : 2) * 6.0) * (shape[1] - 2 * 6.0) * (shape[2] - 2 * 6.0);
      const double layer = double(c.grid.points()) - inner;
      CHECK(double(cpml_update_points(shape, 6, free_surface)) == layer);
      CHECK(double(propagator->history_bytes()) == (plan.nt - 1) * layer * value + 2 * double(c.grid.points()) * value);
      CHECK(propagator->history_name().find("absorbing-layer") != std::string::npos);
    }
  CHECK(cpml_update_points({20, 30, 40}, 0, false) == 0);
}

TEST_CASE("wavefield_storage = \"boundary\": chosen by auto when only it fits; refused for the spectral method") {
  const double field = 1e6, state = 2.6e6, layer = 2e5;
  // memory 1001e6, boundary 999 * 2e5 + 2e6 = 201.8e6, checkpoints about 1.1e8
  CHECK(choose_history(WavefieldStorage::auto_select, 1000, field, state, 2e9, layer).storage == WavefieldStorage::memory);
  const HistoryChoice b = choose_history(WavefieldStorage::auto_select, 1000, field, state, 5e8, layer);
  CHECK(b.storage == WavefieldStorage::boundary);
  CHECK(b.bytes == doctest::Approx(999 * layer + 2 * field));
  CHECK(choose_history(WavefieldStorage::auto_select, 1000, field, state, 5e8).storage == WavefieldStorage::checkpoints);
  CHECK(choose_history(WavefieldStorage::auto_select, 1000, field, state, 2e8, layer).storage == WavefieldStorage::checkpoints);
  CHECK(choose_history(WavefieldStorage::boundary, 1000, field, state, 5e8, layer).storage == WavefieldStorage::boundary);
  try {
    choose_history(WavefieldStorage::boundary, 1000, field, state, 2e8, layer);
    FAIL("no error above the budget");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::resources);
  }

  Case c = adjoint_case(false, Precision::fp64, 8);
  c.inversion.wavefield_storage = WavefieldStorage::boundary;
  CHECK(history_for(c, make_plan(c)).storage == WavefieldStorage::boundary);
  c.scheme.method = Method::spectral;
  try {
    history_for(c, make_plan(c));
    FAIL("spectral with boundary saving accepted");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::invalid_case);
    CHECK(std::string(e.what()).find("inversion.wavefield_storage = \"boundary\"") != std::string::npos);
    CHECK(std::string(e.what()).find("\"checkpoints\"") != std::string::npos);
  }
}

TEST_CASE("choose_history: every step when the budget allows, else checkpoints near sqrt(nt) steps apart") {
  const double field = 1e6, state = 2.6e6;
  const HistoryChoice all = choose_history(WavefieldStorage::auto_select, 1000, field, state, 2e9);
  CHECK(all.storage == WavefieldStorage::memory);
  CHECK(all.bytes == doctest::Approx(1001 * field));
  const HistoryChoice cp = choose_history(WavefieldStorage::auto_select, 1000, field, state, 2e8);
  CHECK(cp.storage == WavefieldStorage::checkpoints);
  CHECK(cp.segment == 51);  // sqrt(1000 * 2.6)
  CHECK(cp.bytes <= 2e8);
  CHECK_THROWS_AS(choose_history(WavefieldStorage::memory, 1000, field, state, 2e8), Error);
  CHECK_THROWS_AS(choose_history(WavefieldStorage::auto_select, 1000, field, state, 1e7), Error);
  CHECK(choose_history(WavefieldStorage::checkpoints, 1000, field, state, 2e9).storage == WavefieldStorage::checkpoints);
}

TEST_CASE("least-squares misfit: value and adjoint source") {
  const std::vector<double> syn = {1.0, 2.0, -1.0, 0.5}, obs = {0.5, 2.0, 1.0, 0.0};
  std::vector<double> adj(4);
  const double j = LeastSquaresMisfit().evaluate(syn, obs, 0.1, adj);
  CHECK(j == doctest::Approx(0.5 * 0.1 * (0.25 + 0 + 4 + 0.25)));
  CHECK(adj[0] == doctest::Approx(0.05));
  CHECK(adj[2] == doctest::Approx(-0.2));
  CHECK_THROWS_AS(make_misfit("l1"), Error);
}

TEST_CASE("low-passed least-squares misfit: the filter's gain, and the adjoint source is the derivative") {
  const int nt = 400, n_rec = 2;
  const double dt = 0.002, cutoff = 10.0;
  const LowPassMisfit lp(nt, dt, cutoff);
  auto sine = [&](double f) {
    std::vector<double> t(nt);
    for (int n = 0; n < nt; ++n) t[n] = std::sin(2 * M_PI * f * n * dt) * std::pow(std::sin(M_PI * n / (nt - 1)), 2);
    return t;
  };
  for (double f : {4.0, 25.0}) {  // below the cutoff: kept; above 1.5 cutoff: removed
    std::vector<double> t = sine(f);
    const std::vector<double> original = t;
    lp.filter(t);
    double err = 0, norm = 0;
    for (int n = 0; n < nt; ++n) err += std::pow(t[n] - (f < cutoff ? original[n] : 0.0), 2), norm += original[n] * original[n];
    CAPTURE(f);
    CHECK(std::sqrt(err / norm) < 0.02);
  }
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> syn(nt * n_rec), obs(nt * n_rec), adj(nt * n_rec), scratch(nt * n_rec);
  for (auto& v : syn) v = u(rng);
  for (auto& v : obs) v = u(rng);
  lp.evaluate(syn, obs, dt, adj);
  for (int k : {3, 150, 399, 400 + 77}) {  // J is quadratic: the central difference is exact up to rounding
    const double h = 1e-3;
    std::vector<double> plus = syn, minus = syn;
    plus[k] += h, minus[k] -= h;
    const double d = (lp.evaluate(plus, obs, dt, scratch) - lp.evaluate(minus, obs, dt, scratch)) / (2 * h);
    CAPTURE(k);
    CHECK(adj[k] == doctest::Approx(d).epsilon(1e-7));
  }
}

TEST_CASE("the gradient propagator refuses a model beyond the frozen dt's stability limit") {
  const Case c = adjoint_case(false, Precision::fp64);
  const Plan plan = make_plan(c);
  auto propagator = make_gradient_propagator(c, plan, HistoryChoice{});
  std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
  CHECK_NOTHROW(propagator->set_velocity(velocity));
  velocity[17] = 1.01 * plan.v_reference / plan.cfl;
  CHECK_THROWS_AS(propagator->set_velocity(velocity), Error);
  velocity[17] = -1;
  CHECK_THROWS_AS(propagator->set_velocity(velocity), Error);
  CHECK(plan.v_reference == 2600);  // inversion.velocity_max above the model's 2300 m/s sets dt and the CPML
}
