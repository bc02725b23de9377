#include "solver/optim/line_search.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace specwave::optim {

Vector project(const Bounds& b, const Vector& x) {
  if (!b.active()) return x;
  return x.cwiseMax(b.lower).cwiseMin(b.upper);
}

Vector feasible_direction(const Bounds& b, const Vector& x, const Vector& d) {
  if (!b.active()) return d;
  Vector out = d;
  for (Eigen::Index k = 0; k < x.size(); ++k)
    if ((x[k] <= b.lower[k] && d[k] < 0) || (x[k] >= b.upper[k] && d[k] > 0)) out[k] = 0;
  return out;
}

LineSearchFailure::LineSearchFailure(const std::string& why, std::vector<LineSearchTrial> trials)
    : std::runtime_error(why), trials_(std::move(trials)) {}

std::string describe_trials(const std::vector<LineSearchTrial>& trials, double f0, double slope0) {
  std::string out = fmt::format("  step 0: f = {:.10e}, phi' = {:.4e}\n", f0, slope0);
  for (std::size_t k = 0; k < trials.size(); ++k) {
    const auto& t = trials[k];
    out += fmt::format(
        "  trial {}: step {:.6e}: f = {:.10e} ({:+.3e} relative), phi' = {:.4e}, sufficient decrease {}, "
        "curvature {}\n",
        k + 1, t.step, t.value, f0 != 0 ? (t.value - f0) / std::abs(f0) : 0.0, t.slope, t.armijo ? "yes" : "no",
        t.curvature ? "yes" : "no");
  }
  return out;
}

namespace {

// The minimiser of the cubic through (a, fa, ga) and (b, fb, gb) (Nocedal & Wright, eq. 3.59), else of the
// quadratic through fa, ga and fb; NaN when neither exists.
double interpolate(double a, double fa, double ga, double b, double fb, double gb) {
  const double d1 = ga + gb - 3 * (fa - fb) / (a - b);
  const double disc = d1 * d1 - ga * gb;
  if (disc >= 0) {
    const double d2 = std::copysign(std::sqrt(disc), b - a);
    const double denom = gb - ga + 2 * d2;
    if (denom != 0) return b - (b - a) * (gb + d2 - d1) / denom;
  }
  const double curvature = fb - fa - ga * (b - a);
  if (curvature > 0) return a - ga * (b - a) * (b - a) / (2 * curvature);
  return std::numeric_limits<double>::quiet_NaN();
}

// Bracketing, zoom and the fallbacks on phi alone; the caller keeps the points.
class Search {
 public:
  Search(const std::function<LineSearchTrial(double)>& phi, double f0, double slope0, const LineSearchOptions& o,
         std::vector<LineSearchTrial>& trials)
      : phi_(phi), f0_(f0), slope0_(slope0), o_(o), trials(trials) {}

  double slope0() const { return slope0_; }

  // Evaluates phi at a (the caller keeps the point) and records the trial with its Armijo and curvature flags.
  const LineSearchTrial& trial(double a) {
    LineSearchTrial t = phi_(a);
    t.step = a;
    t.armijo = std::isfinite(t.value) && t.value <= f0_ + o_.c1 * a * slope0_;
    t.curvature = std::abs(t.slope) <= o_.c2 * std::abs(slope0_);
    trials.push_back(t);
    return trials.back();
  }
  AcceptedTrial accept(std::size_t k, bool wolfe) const { return {k, wolfe}; }
  bool budget() const { return int(trials.size()) < o_.max_evaluations; }

  // Nocedal & Wright algorithm 3.6: lo satisfies sufficient decrease and has the lowest f so far; the
  // interval between lo and hi contains steps satisfying the strong Wolfe conditions.
  std::optional<AcceptedTrial> zoom(double lo, double f_lo, double g_lo, double hi, double f_hi, double g_hi) {
    while (budget()) {
      const double width = std::abs(hi - lo);
      if (width <= 1e-12 * std::max(std::abs(lo), std::abs(hi))) return std::nullopt;
      double a = interpolate(lo, f_lo, g_lo, hi, f_hi, g_hi);
      const double left = std::min(lo, hi) + 0.1 * width, right = std::max(lo, hi) - 0.1 * width;
      if (!std::isfinite(a) || a < left || a > right) a = 0.5 * (lo + hi);  // safeguard: bisection
      const LineSearchTrial t = trial(a);
      if (!t.armijo || t.value >= f_lo) {
        hi = a, f_hi = t.value, g_hi = t.slope;
      } else {
        if (t.curvature) return accept(trials.size() - 1, true);
        if (t.slope * (hi - lo) >= 0) hi = lo, f_hi = f_lo, g_hi = g_lo;
        lo = a, f_lo = t.value, g_lo = t.slope;
      }
    }
    return std::nullopt;
  }

  // Nocedal & Wright algorithm 3.5: expand until a step brackets a Wolfe point, then zoom.
  std::optional<AcceptedTrial> wolfe(double a) {
    double a_prev = 0, f_prev = f0_, g_prev = slope0_;
    while (budget()) {
      const LineSearchTrial t = trial(a);
      if (!t.armijo || (trials.size() > 1 && t.value >= f_prev))
        return zoom(a_prev, f_prev, g_prev, a, t.value, t.slope);
      if (t.curvature) return accept(trials.size() - 1, true);
      if (t.slope >= 0) return zoom(a, t.value, t.slope, a_prev, f_prev, g_prev);
      a_prev = a, f_prev = t.value, g_prev = t.slope;
      a *= o_.expansion;
    }
    return std::nullopt;
  }

 private:
  const std::function<LineSearchTrial(double)>& phi_;
  double f0_, slope0_;
  const LineSearchOptions& o_;

 public:
  std::vector<LineSearchTrial>& trials;
};

}  // namespace

AcceptedTrial search_steps(const std::function<LineSearchTrial(double a)>& phi, double f0, double slope0,
                           double initial_step, const LineSearchOptions& options,
                           std::vector<LineSearchTrial>& trials) {
  Search s(phi, f0, slope0, options, trials);
  if (!(s.slope0() < 0))
    throw LineSearchFailure(
        fmt::format("the search direction is not a descent direction (phi'(0) = g.d = {:.4e} >= 0); "
                    "the gradient may be wrong (run specwave check-gradient)",
                    s.slope0()),
        {});
  if (!(initial_step > 0) || !std::isfinite(initial_step))
    throw LineSearchFailure(fmt::format("invalid initial step {}", initial_step), {});
  if (auto r = s.wolfe(initial_step)) return *r;

  // Fallback 1: the lowest trial that met sufficient decrease (the curvature condition did not hold in budget).
  std::size_t best = s.trials.size();
  for (std::size_t k = 0; k < s.trials.size(); ++k)
    if (s.trials[k].armijo && (best == s.trials.size() || s.trials[k].value < s.trials[best].value)) best = k;
  if (best < s.trials.size()) return s.accept(best, false);

  // Fallback 2: backtracking Armijo, halving from the smallest step tried.
  double a = initial_step;
  for (const auto& t : s.trials) a = std::min(a, t.step);
  for (int k = 0; k < options.max_backtracks; ++k) {
    a *= 0.5;
    if (s.trial(a).armijo) return s.accept(s.trials.size() - 1, false);
  }
  throw LineSearchFailure(
      fmt::format("no step met the sufficient-decrease condition f(a) <= f(0) + {} a phi'(0) in {} evaluations "
                  "({} of the Wolfe search, then Armijo backtracking by halving down to step {:.3e}); the gradient may "
                  "be inaccurate, the model at a bound, or the misfit at its noise floor. Steps tried:\n{}",
                  options.c1, s.trials.size(), std::min<int>(int(s.trials.size()), options.max_evaluations), a,
                  describe_trials(s.trials, f0, s.slope0())),
      s.trials);
}

LineSearchResult line_search(const Function& f, const Bounds& bounds, const Vector& x0, const Evaluation& f0,
                             const Vector& d, double initial_step, const LineSearchOptions& options) {
  std::vector<std::pair<Vector, Evaluation>> points;
  const std::function<LineSearchTrial(double)> phi = [&](double a) {
    Vector x = project(bounds, x0 + a * d);
    Evaluation e = f(x);
    // dx/da: d where x0 + a d stays inside the box, 0 where P clips it.
    Vector dx = d;
    if (bounds.active())
      for (Eigen::Index k = 0; k < dx.size(); ++k) {
        const double raw = x0[k] + a * d[k];
        if (raw < bounds.lower[k] || raw > bounds.upper[k]) dx[k] = 0;
      }
    LineSearchTrial t;
    t.value = e.value;
    t.slope = e.gradient.dot(dx);
    points.push_back({std::move(x), std::move(e)});
    return t;
  };
  LineSearchResult r;
  const AcceptedTrial accepted = search_steps(phi, f0.value, f0.gradient.dot(d), initial_step, options, r.trials);
  r.step = r.trials[accepted.index].step;
  r.x = std::move(points[accepted.index].first);
  r.at = std::move(points[accepted.index].second);
  r.wolfe = accepted.wolfe;
  return r;
}

}  // namespace specwave::optim
