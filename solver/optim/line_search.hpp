#pragma once
// Line search along a projected path x(a) = P(x + a d), P the projection onto the bounds (docs/numerics.md,
// "Optimisation"). The strong Wolfe conditions on phi(a) = f(x(a)):
//   sufficient decrease  phi(a) <= phi(0) + c1 a phi'(0)
//   curvature            |phi'(a)| <= c2 |phi'(0)|
// with phi'(a) = g(x(a)) . dx/da, where dx/da is d with the components clipped by P set to zero (exact away from
// the kinks of the path). Bracketing and zoom follow Nocedal & Wright, algorithms 3.5 and 3.6, with a safeguarded
// cubic (else quadratic, else bisection) interpolation; when they fail, a backtracking Armijo search is the
// fallback, and when that fails too, LineSearchFailure says why and lists every step tried.
#include <Eigen/Core>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace specwave::optim {

using Vector = Eigen::VectorXd;

// f(x) and its gradient.
struct Evaluation {
  double value = 0;
  Vector gradient;
};
using Function = std::function<Evaluation(const Vector& x)>;

// Box constraints lower <= x <= upper, component-wise; empty vectors: unbounded.
struct Bounds {
  Vector lower, upper;
  bool active() const { return lower.size() > 0; }
};
Vector project(const Bounds& b, const Vector& x);
// d with the components that would leave the box at x (x at a bound, d pointing out) set to zero.
Vector feasible_direction(const Bounds& b, const Vector& x, const Vector& d);

struct LineSearchOptions {
  double c1 = 1e-4, c2 = 0.9;
  int max_evaluations = 12;  // Wolfe bracketing + zoom
  int max_backtracks = 8;    // then the Armijo fallback, halving from the smallest step tried that rose
  double expansion = 3.0;    // bracketing: a_{i+1} = expansion a_i
};

struct LineSearchTrial {
  double step = 0, value = 0, slope = 0;
  bool armijo = false, curvature = false;
};

struct LineSearchResult {
  double step = 0;
  Vector x;       // P(x0 + step d)
  Evaluation at;  // f and gradient there
  std::vector<LineSearchTrial> trials;
  bool wolfe = false;  // the strong Wolfe conditions hold; false: accepted by the Armijo fallback
  int evaluations() const { return int(trials.size()); }
};

class LineSearchFailure : public std::runtime_error {
 public:
  LineSearchFailure(const std::string& why, std::vector<LineSearchTrial> trials);
  const std::vector<LineSearchTrial>& trials() const { return trials_; }

 private:
  std::vector<LineSearchTrial> trials_;
};

// The scalar part of the search, shared by the Eigen vectors here and the VectorOps ones (solver/optim/optimizer.hpp):
// phi(a) evaluates f at P(x0 + a d), keeps the point, and returns the step, value and slope phi'(a) (the Armijo and
// curvature flags are set here). Returns the index of the accepted trial in `trials` and whether it is a Wolfe step;
// throws LineSearchFailure like line_search.
struct AcceptedTrial {
  std::size_t index = 0;
  bool wolfe = false;
};
AcceptedTrial search_steps(const std::function<LineSearchTrial(double a)>& phi, double f0, double slope0,
                           double initial_step, const LineSearchOptions& options, std::vector<LineSearchTrial>& trials);

// Searches from x0 (f0 = f(x0) with its gradient) along the descent direction d (g0 . d < 0), starting at
// initial_step. Throws LineSearchFailure when d is not a descent direction or no step decreases f enough.
LineSearchResult line_search(const Function& f, const Bounds& bounds, const Vector& x0, const Evaluation& f0,
                             const Vector& d, double initial_step, const LineSearchOptions& options);

// A text table of the trials (step, f, phi', Armijo, curvature), for reports and failures.
std::string describe_trials(const std::vector<LineSearchTrial>& trials, double f0, double slope0);

}  // namespace specwave::optim
