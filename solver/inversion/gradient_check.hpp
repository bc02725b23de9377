#pragma once
// `specwave check-gradient`: the dot-product test of the Born operator and its adjoint, and the Taylor test of
// the gradient (docs/numerics.md, "Adjoint and gradient"; docs/cli.md).
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "solver/case/case.hpp"
#include "solver/inversion/objective.hpp"

namespace specwave {

struct Plan;

// <F dm, dd> against <dm, F^T dd> for pseudo-random dm (a perturbation of (v dt)^2 at every grid point) and dd
// (every trace sample), at the plan's model; F is the Born operator of one shot in the case's precision.
struct DotTestResult {
  double lhs = 0, rhs = 0, mismatch = 0;  // mismatch = |lhs - rhs| / max(|lhs|, |rhs|)
};
DotTestResult born_dot_test(const Case& c, const Plan& plan, int shot, std::uint64_t seed);
// The same for the density at fixed velocity (inversion.parameters naming "density"): <F_rho drho, dd> against
// <drho, F_rho^T dd>, F_rho = GradientPropagator::born_density, its transpose add_density_gradient after adjoint().
DotTestResult density_dot_test(const Case& c, const Plan& plan, int shot, std::uint64_t seed);
// The same for the elastic scheme's shear velocity: F_s = GradientPropagator::born_shear of (vs dt)^2 at fixed vp and
// rho, its transpose add_shear_gradient after adjoint().
DotTestResult shear_dot_test(const Case& c, const Plan& plan, int shot, std::uint64_t seed);

// Taylor test along `direction`: for each h, r1(h) = |J(m + h dm) - J(m)| and r2(h) = |J(m + h dm) - J(m) - h g.dm|.
// A correct gradient gives r1 ~ h (slope 1 on a log-log plot) and r2 ~ h^2 (slope 2).
struct TaylorRow {
  double h = 0, misfit = 0, first = 0, second = 0;
};
// r2 is J's difference less its first-order part: where it falls to the rounding of J (`floor`, 1e-12 |J| in fp64,
// above the error of a sum of nt x receivers terms) its slope means nothing. With fewer than 3 rows whose r2 is at
// least 100 floors (`second_at_floor`: J large against the perturbation's effect) the verdict is instead the
// gradient's error along dm, `gradient_error`: the coefficient a of a least-squares fit of the signed remainder
// J(m + h dm) - J(m) - h g.dm = a h + b h^2 over the rows, relative to g.dm, which must be at most `gradient_bound`
// (1e-3; a gradient wrong along dm by e gives a = e, the curvature goes to b). Otherwise the slopes over all rows.
struct TaylorResult {
  double misfit = 0, directional_derivative = 0;  // J(m), g.dm
  std::vector<TaylorRow> rows;
  double slope_first = 0, slope_second = 0;  // least-squares slopes of log r against log h over all rows
  double floor = 0;                          // 1e-12 |J|
  bool second_at_floor = false;              // fewer than 3 rows with r2 >= 100 floor
  double gradient_error = 0;                 // |a| / |g.dm|
  static constexpr double floor_relative = 1e-12, gradient_bound = 1e-3;
  bool passed(double slope_tolerance) const;
};
TaylorResult taylor_test(Objective& objective, std::span<const double> model, std::span<const double> direction,
                         const std::vector<double>& steps);
// The rows, slopes and verdict's figures from J(m), g.dm and J(m + h dm) = misfit_at(h) at each step h.
TaylorResult taylor_rows(double misfit, double derivative, const std::vector<double>& steps,
                         const std::function<double(double)>& misfit_at);
// The same for the density gradient at fixed velocity (inversion.parameters naming "density"): J at the objective's
// `model` with the density rho + h drho set on the propagator (restored after).
TaylorResult density_taylor_test(Objective& objective, GradientPropagator& propagator, std::span<const double> model,
                                 std::span<const double> direction, const std::vector<double>& steps);
// The same for the elastic scheme's shear velocity at fixed vp and density (vs + h dvs, m/s).
TaylorResult shear_taylor_test(Objective& objective, GradientPropagator& propagator, std::span<const double> model,
                               std::span<const double> direction, const std::vector<double>& steps);

// The steps of `check-gradient` along smooth_direction(..., 0.02): perturbations of 0.2% down to 0.0125% of the
// mean parameter, where the first-order remainder is still dominated by h g.dm and the second-order one (about
// 1e-6 J at the smallest step) far above rounding.
inline const std::vector<double> taylor_steps = {0.1, 0.05, 0.025, 0.0125, 0.00625};

// A smooth direction for the Taylor test: a Gaussian bump at the centre of the grid (standard deviation a sixth
// of the smallest extent), its peak `relative` times the mean |model|.
std::vector<double> smooth_direction(const GridSpec& grid, std::span<const double> model, double relative);

// Least-squares slope of log y against log x.
double log_log_slope(std::span<const double> x, std::span<const double> y);

struct GradientCheckTolerances {
  double dot_fp64 = 1e-10, dot_fp32 = 1e-4, slope = 0.1;
};

// The whole check of a case with an [inversion] table: the dot test in fp64 and fp32 (shot 0), the Taylor test in
// fp64 (all shots, the case's misfit and parameterisation, data from inversion.true_model or observed).
struct GradientCheckReport {
  std::string plan_text;
  std::vector<std::pair<std::string, DotTestResult>> dot;          // precision, result
  std::vector<std::pair<std::string, DotTestResult>> density_dot;  // with a density parameter
  TaylorResult taylor;
  std::optional<TaylorResult> density_taylor;                    // with a density parameter
  std::vector<std::pair<std::string, DotTestResult>> shear_dot;  // with a shear-velocity parameter (elastic)
  std::optional<TaylorResult> shear_taylor;
  Parameterisation parameterisation = Parameterisation::velocity;
  // The Lame parameters (inversion.parameters names "lambda"): taylor is lambda's, shear_taylor mu's and
  // density_taylor the density's at fixed lambda and mu (the dot-product tests are the same Born operators').
  bool lame = false;
  std::string propagator, history;
  GradientCheckTolerances tolerances;
  bool dot_passed(std::size_t k) const;
  bool density_dot_passed(std::size_t k) const;
  bool taylor_passed() const;
  bool density_taylor_passed() const;
  bool shear_dot_passed(std::size_t k) const;
  bool shear_taylor_passed() const;
  bool passed() const;
  std::string text() const;
};
GradientCheckReport check_gradient(const Case& c);

}  // namespace specwave
