#include "solver/inversion/gradient_check.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <random>

#include "solver/case/errors.hpp"
#include "solver/inversion/lame.hpp"
#include "solver/plan/plan.hpp"

namespace specwave {
namespace {

std::vector<double> uniform(std::size_t n, std::uint64_t seed, double scale) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> out(n);
  for (double& v : out) v = scale * dist(rng);
  return out;
}

double dot(std::span<const double> a, std::span<const double> b) {
  double s = 0;
  for (std::size_t k = 0; k < a.size(); ++k) s += a[k] * b[k];
  return s;
}

}  // namespace

namespace {

// <F dm, dd> against <dm, F^T dd> for one parameter of `propagator` (model: its current values): dm of the size of the
// parameter itself and dd of the size of the traces keep both sides well scaled in fp32. `transpose(dd, out)` adds
// F^T dd after forward(shot, true); `born(dm)` is F dm.
template <class Transpose, class Born>
DotTestResult dot_test(GradientPropagator& propagator, std::span<const double> model, int shot, std::uint64_t seed,
                       Transpose&& transpose, Born&& born) {
  double mean = 0;
  for (double v : model) mean += v / double(model.size());
  const std::vector<double> dm = uniform(model.size(), seed, mean);
  const std::vector<double> traces = propagator.forward(shot, true);
  double rms = 0;
  for (double t : traces) rms += t * t / double(traces.size());
  const std::vector<double> dd = uniform(traces.size(), seed + 1, std::sqrt(rms) > 0 ? std::sqrt(rms) : 1.0);
  std::vector<double> adjoint(model.size(), 0.0);
  transpose(dd, adjoint);
  const std::vector<double> f_dm = born(dm);
  DotTestResult r;
  r.lhs = dot(f_dm, dd);
  r.rhs = dot(dm, adjoint);
  r.mismatch = std::abs(r.lhs - r.rhs) / std::max({std::abs(r.lhs), std::abs(r.rhs), 1e-300});
  return r;
}

}  // namespace

DotTestResult born_dot_test(const Case& c, const Plan& plan, int shot, std::uint64_t seed) {
  auto propagator = make_gradient_propagator(c, plan, all_steps_choice(plan.nt, 0));
  const std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
  propagator->set_velocity(velocity);
  return dot_test(
      *propagator, propagator->vel2dt2(), shot, seed,
      [&](std::span<const double> dd, std::span<double> out) { propagator->adjoint(dd, out, {}); },
      [&](std::span<const double> dm) { return propagator->born(shot, dm); });
}

DotTestResult density_dot_test(const Case& c, const Plan& plan, int shot, std::uint64_t seed) {
  auto propagator = make_gradient_propagator(c, plan, all_steps_choice(plan.nt, 0));
  return dot_test(
      *propagator, propagator->density(), shot, seed,
      [&](std::span<const double> dd, std::span<double> out) {
        std::vector<double> velocity_gradient(out.size(), 0.0);
        propagator->adjoint(dd, velocity_gradient, {});
        propagator->add_density_gradient(out);
      },
      [&](std::span<const double> drho) { return propagator->born_density(shot, drho); });
}

DotTestResult shear_dot_test(const Case& c, const Plan& plan, int shot, std::uint64_t seed) {
  auto propagator = make_gradient_propagator(c, plan, all_steps_choice(plan.nt, 0));
  std::vector<double> ms = propagator->shear_velocity();
  for (double& v : ms) v = v * v * plan.dt * plan.dt;
  return dot_test(
      *propagator, ms, shot, seed,
      [&](std::span<const double> dd, std::span<double> out) {
        std::vector<double> velocity_gradient(out.size(), 0.0);
        propagator->adjoint(dd, velocity_gradient, {});
        propagator->add_shear_gradient(out);
      },
      [&](std::span<const double> dms) { return propagator->born_shear(shot, dms); });
}

double log_log_slope(std::span<const double> x, std::span<const double> y) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = double(x.size());
  for (std::size_t k = 0; k < x.size(); ++k) {
    const double lx = std::log(x[k]), ly = std::log(y[k]);
    sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

TaylorResult taylor_rows(double misfit, double derivative, const std::vector<double>& steps,
                         const std::function<double(double)>& misfit_at) {
  TaylorResult r;
  r.misfit = misfit;
  r.directional_derivative = derivative;
  std::vector<double> hs, first, second;
  for (double h : steps) {
    const double j = misfit_at(h);
    TaylorRow row{h, j, std::abs(j - r.misfit), std::abs(j - r.misfit - h * r.directional_derivative)};
    r.rows.push_back(row);
    hs.push_back(h), first.push_back(row.first), second.push_back(row.second);
  }
  r.slope_first = log_log_slope(hs, first);
  r.slope_second = log_log_slope(hs, second);
  r.floor = TaylorResult::floor_relative * std::abs(r.misfit);
  int measurable = 0;
  // The signed remainder d = a h + b h^2, least squares over the rows: a is the gradient's error along dm.
  double s2 = 0, s3 = 0, s4 = 0, t1 = 0, t2 = 0;
  for (const TaylorRow& row : r.rows) {
    measurable += row.second >= 100 * r.floor;
    const double h = row.h, d = row.misfit - r.misfit - h * r.directional_derivative;
    s2 += h * h, s3 += h * h * h, s4 += h * h * h * h, t1 += h * d, t2 += h * h * d;
  }
  r.second_at_floor = measurable < 3;
  const double det = s2 * s4 - s3 * s3, a = det != 0 ? (t1 * s4 - t2 * s3) / det : INFINITY;
  r.gradient_error = std::abs(a) / std::abs(r.directional_derivative);
  return r;
}

TaylorResult taylor_test(Objective& objective, std::span<const double> model, std::span<const double> direction,
                         const std::vector<double>& steps) {
  const MisfitGradient base = objective.evaluate(model, true);
  std::vector<double> perturbed(model.size());
  return taylor_rows(base.misfit, dot(base.gradient, direction), steps, [&](double h) {
    for (std::size_t k = 0; k < model.size(); ++k) perturbed[k] = model[k] + h * direction[k];
    return objective.evaluate(perturbed, false).misfit;
  });
}

namespace {

// The Taylor test of a parameter besides the velocity (`on` switches its gradient on in the objective; `gradient_of`
// picks it from an evaluation; `get` and `set` read and write it on the propagator, restored after).
template <class On, class Of, class Get, class Set>
TaylorResult held_velocity_taylor(Objective& objective, std::span<const double> model,
                                  std::span<const double> direction, const std::vector<double>& steps, On&& on,
                                  Of&& gradient_of, Get&& get, Set&& set) {
  on(true);
  const std::vector<double> p0 = get();
  const MisfitGradient base = objective.evaluate(model, true);
  std::vector<double> perturbed(p0.size());
  TaylorResult r = taylor_rows(base.misfit, dot(gradient_of(base), direction), steps, [&](double h) {
    for (std::size_t k = 0; k < p0.size(); ++k) perturbed[k] = p0[k] + h * direction[k];
    set(perturbed);
    return objective.evaluate(model, false).misfit;
  });
  set(p0);
  return r;
}

}  // namespace

TaylorResult density_taylor_test(Objective& objective, GradientPropagator& propagator, std::span<const double> model,
                                 std::span<const double> direction, const std::vector<double>& steps) {
  return held_velocity_taylor(
      objective, model, direction, steps, [&](bool on) { objective.with_density_gradient(on); },
      [](const MisfitGradient& m) { return std::span<const double>(m.density_gradient); },
      [&] { return propagator.density(); }, [&](std::span<const double> v) { propagator.set_density(v); });
}

TaylorResult shear_taylor_test(Objective& objective, GradientPropagator& propagator, std::span<const double> model,
                               std::span<const double> direction, const std::vector<double>& steps) {
  return held_velocity_taylor(
      objective, model, direction, steps, [&](bool on) { objective.with_shear_gradient(on); },
      [](const MisfitGradient& m) { return std::span<const double>(m.shear_gradient); },
      [&] { return propagator.shear_velocity(); },
      [&](std::span<const double> v) { propagator.set_shear_velocity(v); });
}

namespace {

// The Taylor test of one of the Lame blocks (0: lambda, 1: mu, 2: the density at fixed lambda and mu) at (lambda, mu,
// rho), the objective in its Lame mode (every evaluation sets all three).
TaylorResult lame_taylor_test(Objective& objective, const std::array<std::vector<double>, 3>& model, int block,
                              std::span<const double> direction, const std::vector<double>& steps) {
  objective.with_lame(true);
  objective.with_shear_gradient(block == 1);
  objective.with_density_gradient(block == 2);
  const MisfitGradient base = objective.evaluate(model[0], true, false, model[2], model[1]);
  const std::vector<double>& g = block == 0 ? base.gradient : block == 1 ? base.shear_gradient : base.density_gradient;
  std::array<std::vector<double>, 3> perturbed = model;
  return taylor_rows(base.misfit, dot(g, direction), steps, [&](double h) {
    for (std::size_t k = 0; k < direction.size(); ++k)
      perturbed[std::size_t(block)][k] = model[std::size_t(block)][k] + h * direction[k];
    return objective.evaluate(perturbed[0], false, false, perturbed[2], perturbed[1]).misfit;
  });
}

}  // namespace

std::vector<double> smooth_direction(const GridSpec& g, std::span<const double> model, double relative) {
  double mean = 0;
  for (double m : model) mean += std::abs(m) / double(model.size());
  const double sigma = std::min({g.shape[0], g.shape[1], g.shape[2]}) / 6.0;
  std::vector<double> out(model.size());
  for (int z = 0; z < g.shape[0]; ++z)
    for (int y = 0; y < g.shape[1]; ++y)
      for (int x = 0; x < g.shape[2]; ++x) {
        const double dz = z - (g.shape[0] - 1) / 2.0, dy = y - (g.shape[1] - 1) / 2.0, dx = x - (g.shape[2] - 1) / 2.0;
        out[(std::size_t(z) * g.shape[1] + y) * g.shape[2] + x] =
            relative * mean * std::exp(-(dz * dz + dy * dy + dx * dx) / (2 * sigma * sigma));
      }
  return out;
}

bool GradientCheckReport::dot_passed(std::size_t k) const {
  return dot[k].second.mismatch <= (dot[k].first == "fp64" ? tolerances.dot_fp64 : tolerances.dot_fp32);
}
bool GradientCheckReport::density_dot_passed(std::size_t k) const {
  const auto& [name, r] = density_dot[k];
  return r.mismatch <= (name == "fp64" ? tolerances.dot_fp64 : tolerances.dot_fp32);
}
bool GradientCheckReport::shear_dot_passed(std::size_t k) const {
  const auto& [name, r] = shear_dot[k];
  return r.mismatch <= (name == "fp64" ? tolerances.dot_fp64 : tolerances.dot_fp32);
}
bool TaylorResult::passed(double slope_tolerance) const {
  if (!(std::abs(slope_first - 1) <= slope_tolerance)) return false;
  return second_at_floor ? gradient_error <= gradient_bound : std::abs(slope_second - 2) <= slope_tolerance;
}
bool GradientCheckReport::shear_taylor_passed() const {
  return !shear_taylor || shear_taylor->passed(tolerances.slope);
}
bool GradientCheckReport::taylor_passed() const { return taylor.passed(tolerances.slope); }
bool GradientCheckReport::density_taylor_passed() const {
  return !density_taylor || density_taylor->passed(tolerances.slope);
}
bool GradientCheckReport::passed() const {
  for (std::size_t k = 0; k < dot.size(); ++k)
    if (!dot_passed(k)) return false;
  for (std::size_t k = 0; k < density_dot.size(); ++k)
    if (!density_dot_passed(k)) return false;
  for (std::size_t k = 0; k < shear_dot.size(); ++k)
    if (!shear_dot_passed(k)) return false;
  return taylor_passed() && density_taylor_passed() && shear_taylor_passed();
}

std::string GradientCheckReport::text() const {
  std::string out = plan_text;
  out += fmt::format("gradient    {}, wavefields: {}\n\n", propagator, history);
  out += "Dot-product test of the Born operator F (d(v dt)^2 -> traces) and its adjoint, shot 0\n";
  out +=
      "| precision | <F dm, dd> | <dm, F^T dd> | relative mismatch | tolerance | result |\n|---|---|---|---|---|---|\n";
  for (std::size_t k = 0; k < dot.size(); ++k) {
    const auto& [name, r] = dot[k];
    out += fmt::format("| {} | {:.15e} | {:.15e} | {:.2e} | {:.0e} | {} |\n", name, r.lhs, r.rhs, r.mismatch,
                       name == "fp64" ? tolerances.dot_fp64 : tolerances.dot_fp32, dot_passed(k) ? "pass" : "FAIL");
  }
  for (const bool shear : {false, true}) {
    const auto& rows = shear ? shear_dot : density_dot;
    if (rows.empty()) continue;
    const char* f = shear ? "F_s" : "F_rho";
    const char* d = shear ? "dm_s" : "drho";
    out += shear
               ? "\nDot-product test of the shear velocity's Born operator F_s (d(vs dt)^2 -> traces) and its adjoint, "
                 "shot 0\n"
               : "\nDot-product test of the density's Born operator F_rho (d rho -> traces) and its adjoint, shot 0\n";
    out += fmt::format(
        "| precision | <{0} {1}, dd> | <{1}, {0}^T dd> | relative mismatch | tolerance | result |\n"
        "|---|---|---|---|---|---|\n",
        f, d);
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const auto& [name, r] = rows[k];
      out += fmt::format("| {} | {:.15e} | {:.15e} | {:.2e} | {:.0e} | {} |\n", name, r.lhs, r.rhs, r.mismatch,
                         name == "fp64" ? tolerances.dot_fp64 : tolerances.dot_fp32,
                         (shear ? shear_dot_passed(k) : density_dot_passed(k)) ? "pass" : "FAIL");
    }
  }
  const auto table = [&](const TaylorResult& t, const std::string& title, bool ok) {
    out += fmt::format("\n{}: J(m) = {:.10e}, g.dm = {:.10e}\n", title, t.misfit, t.directional_derivative);
    out +=
        "| h | J(m + h dm) | r1 = |J(m+h dm) - J(m)| | r2 = |J(m+h dm) - J(m) - h g.dm| | slope r1 | slope r2 |\n"
        "|---|---|---|---|---|---|\n";
    for (std::size_t k = 0; k < t.rows.size(); ++k) {
      const auto& row = t.rows[k];
      std::string s1 = "", s2 = "";
      if (k > 0) {
        const auto& prev = t.rows[k - 1];
        s1 = fmt::format("{:.3f}", std::log(row.first / prev.first) / std::log(row.h / prev.h));
        s2 = fmt::format("{:.3f}", std::log(row.second / prev.second) / std::log(row.h / prev.h));
      }
      out += fmt::format("| {:.4g} | {:.10e} | {:.4e} | {:.4e} | {} | {} |\n", row.h, row.misfit, row.first, row.second,
                         s1, s2);
    }
    if (t.second_at_floor)
      out += fmt::format(
          "least-squares slope r1 {:.3f} (expected 1 +- {}); r2 is at the rounding of J (fewer than 3 rows above "
          "100 x {:.2e} = 1e-10 |J|), so its slope means nothing: instead the gradient's error along dm, a / g.dm "
          "from J(m+h dm) - J(m) - h g.dm = a h + b h^2 fitted over the rows, is {:.2e} (expected <= {:.0e}): {}\n",
          t.slope_first, tolerances.slope, t.floor, t.gradient_error, TaylorResult::gradient_bound,
          ok ? "pass" : "FAIL");
    else
      out += fmt::format("least-squares slopes: r1 {:.3f} (expected 1 +- {}), r2 {:.3f} (expected 2 +- {}): {}\n",
                         t.slope_first, tolerances.slope, t.slope_second, tolerances.slope, ok ? "pass" : "FAIL");
  };
  table(taylor,
        lame ? std::string("Taylor test of the gradient of lambda at fixed mu and density (fp64, m = lambda in Pa)")
             : fmt::format("Taylor test of the gradient (fp64, parameter {})", to_string(parameterisation)),
        taylor_passed());
  if (density_taylor)
    table(*density_taylor,
          lame ? "Taylor test of the density gradient at fixed lambda and mu (fp64, m = rho in kg/m^3)"
               : "Taylor test of the density gradient at fixed velocity (fp64, m = rho in kg/m^3)",
          density_taylor_passed());
  if (shear_taylor)
    table(*shear_taylor,
          lame ? "Taylor test of the gradient of mu at fixed lambda and density (fp64, m = mu in Pa)"
               : "Taylor test of the shear-velocity gradient at fixed vp and density (fp64, m = vs in m/s)",
          shear_taylor_passed());
  return out;
}

GradientCheckReport check_gradient(const Case& case_in) {
  GradientCheckReport report;
  Case c = case_in;
  if (!c.inversion.present)
    throw Error(ExitCode::invalid_case,
                fmt::format("{}: check-gradient needs an [inversion] table with true_model or observed data "
                            "(docs/case-file.md)",
                            c.label()));
  c.run.precision = Precision::fp64;
  const Plan plan = make_plan(c);
  const auto& inv = c.inversion;
  if ((inv.velocity_min && plan.model.v_min < *inv.velocity_min) ||
      (inv.velocity_max && plan.model.v_max > *inv.velocity_max))
    throw Error(
        ExitCode::invalid_case,
        fmt::format("{}: the starting model ([model]) spans [{:.6g}, {:.6g}] m/s, outside inversion.velocity_min/max = "
                    "[{}, {}] m/s; widen the bounds or change the starting model",
                    c.label(), plan.model.v_min, plan.model.v_max, inv.velocity_min.value_or(0),
                    inv.velocity_max ? fmt::format("{}", *inv.velocity_max) : "none"));
  // The history of the Taylor test: the strategy the case asks for (or the one its budget allows), refused now
  // rather than after the dot-product tests when it does not fit.
  const HistoryChoice history = history_for(c, plan);
  check_observed(c, plan);
  report.plan_text = describe_plan(c, plan) + describe_wavefields(plan, history);
  report.parameterisation = c.inversion.parameterisation;
  for (Precision p : {Precision::fp64, Precision::fp32}) {
    Case cp = c;
    cp.run.precision = p;
    report.dot.emplace_back(to_string(p), born_dot_test(cp, plan, 0, 20240601));
    if (const DotTestResult& r = report.dot.back().second; r.lhs == 0 && r.rhs == 0)
      throw Error(ExitCode::invalid_case,
                  fmt::format("{}: shot 0's traces do not change with the model (its Born operator's output and "
                              "adjoint are both exactly zero), so the dot-product and Taylor tests would compare "
                              "zeros; check that the receivers record what the sources radiate (the plan's notes: "
                              "e.g. a 2-D elastic run's P-SV and SH waves do not meet) and that they lie in the time "
                              "the waves reach them",
                              c.label()));
    if (c.inversion.density_parameter)
      report.density_dot.emplace_back(to_string(p), density_dot_test(cp, plan, 0, 20240602));
    if (c.inversion.shear_parameter || c.inversion.lame)
      report.shear_dot.emplace_back(to_string(p), shear_dot_test(cp, plan, 0, 20240603));
  }
  auto propagator = make_gradient_propagator(c, plan, history);
  const ObservedData observed = observed_data(c, plan, *propagator);
  const std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
  // inversion.source_estimation: the misfit at the wavelet estimated at the model, held fixed (as invert's).
  const TraceWeights weights = read_trace_weights(c);
  std::shared_ptr<const SourceFilters> filters;
  if (c.inversion.source_estimation != "none")
    filters = std::make_shared<const SourceFilters>(
        estimate_source_filters(c, plan, *propagator, observed, velocity, weights));
  const auto misfit = case_misfit(c, plan, 0, &weights, filters);
  Objective objective(*propagator, *misfit, observed, c.inversion.parameterisation, plan.dt);
  objective.regularise(regularisation_of(c, plan), c.grid);
  report.propagator = propagator->name();
  report.history = propagator->history_name();
  if (c.inversion.lame) {  // lambda, then mu (fluid points stay fluid), then the density at fixed lambda and mu
    report.lame = true;
    const std::vector<double> rho = propagator->density();
    const LameModel lame = lame_of(velocity, propagator->shear_velocity(), rho);
    const std::array<std::vector<double>, 3> m = {lame.lambda, lame.mu, rho};
    report.taylor = lame_taylor_test(objective, m, 0, smooth_direction(c.grid, m[0], 0.02), taylor_steps);
    std::vector<double> d = smooth_direction(c.grid, m[1], 0.02);
    for (std::size_t k = 0; k < d.size(); ++k)
      if (m[1][k] == 0) d[k] = 0;  // fluid points stay fluid (as invert's bounds keep them)
    report.shear_taylor = lame_taylor_test(objective, m, 1, d, taylor_steps);
    if (c.inversion.density_parameter)
      report.density_taylor = lame_taylor_test(objective, m, 2, smooth_direction(c.grid, m[2], 0.02), taylor_steps);
    return report;
  }
  const std::vector<double> model = parameter_from_velocity(c.inversion.parameterisation, velocity);
  const std::vector<double> direction = smooth_direction(c.grid, model, 0.02);
  report.taylor = taylor_test(objective, model, direction, taylor_steps);
  if (c.inversion.density_parameter) {
    const std::vector<double> rho = propagator->density();
    report.density_taylor =
        density_taylor_test(objective, *propagator, model, smooth_direction(c.grid, rho, 0.02), taylor_steps);
  }
  if (c.inversion.shear_parameter) {
    const std::vector<double> vs = propagator->shear_velocity();
    report.shear_taylor =
        shear_taylor_test(objective, *propagator, model, smooth_direction(c.grid, vs, 0.02), taylor_steps);
  }
  report.propagator = propagator->name();
  report.history = propagator->history_name();
  return report;
}

}  // namespace specwave
