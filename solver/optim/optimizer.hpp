#pragma once
// Local optimisation with bounds (docs/numerics.md, "Optimisation"): search directions (L-BFGS two-loop recursion,
// Polak-Ribiere+ nonlinear conjugate gradients, steepest descent), each projected onto the feasible set, and one
// driver that takes one iteration at a time so the caller can report, write and checkpoint between them.
// Vectors are Eigen fp64 on the CPU. `specwave invert` runs the same method as OpsOptimizer
// (solver/optim/ops_optimizer.hpp), on host or device vectors; Optimizer, written with Eigen expressions, is the
// reference that OpsOptimizer is tested against bitwise (tests/test_optimizer.cpp) and a host API.
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "kernels/vector_ops.hpp"
#include "solver/optim/line_search.hpp"

namespace specwave::optim {

enum class Method { lbfgs, nlcg, steepest };
const char* to_string(Method m);

// L-BFGS memory: the last m pairs s = x_{k+1} - x_k, y = g_{k+1} - g_k.
class LbfgsHistory {
 public:
  explicit LbfgsHistory(int memory) : memory_(memory) {}
  // Keeps (s, y) when s.y > epsilon |s| |y| (positive curvature, so H stays positive definite); returns whether kept.
  bool push(const Vector& s, const Vector& y, double epsilon = 1e-10);
  // H g by the two-loop recursion, H0 = (s.y / y.y) P from the newest pair (P without pairs); P the
  // preconditioner (identity when empty).
  Vector apply_inverse_hessian(const Vector& g, const std::function<Vector(const Vector&)>& preconditioner = {}) const;
  int size() const { return int(s_.size()); }
  void clear() { s_.clear(), y_.clear(); }
  const std::deque<Vector>& s() const { return s_; }
  const std::deque<Vector>& y() const { return y_; }

 private:
  int memory_;
  std::deque<Vector> s_, y_;
};

// The two-loop recursion on n-vectors through `ops`, so that the same code runs on host vectors (Eigen) and on
// device vectors (cuBLAS): r = H g for the pairs (s[i], y[i]), oldest first, with H0 = (s.y / y.y) P from the newest
// pair (P alone without pairs); `precondition` applies P to q in place (empty: identity). r must not alias g.
void lbfgs_two_loop(const VectorOps& ops, std::size_t n, const std::vector<const double*>& s,
                    const std::vector<const double*>& y, const double* g, double* r,
                    const std::function<void(double*)>& precondition = {});

// Polak-Ribiere+: beta = max(0, g_new . (g_new - g_old) / g_old . g_old); preconditioned (z = P g):
// beta = max(0, z_new . (g_new - g_old) / z_old . g_old).
double polak_ribiere_plus(const Vector& g_new, const Vector& g_old);
double polak_ribiere_plus(const Vector& g_new, const Vector& g_old, const Vector& z_new, const Vector& z_old);

// g with the components zeroed where x is at a bound and -g points out of the box: the gradient of the free
// variables, whose norm is the first-order optimality measure of a bound-constrained problem.
Vector projected_gradient(const Bounds& b, const Vector& x, const Vector& g);

struct OptimizerOptions {
  Method method = Method::lbfgs;
  int lbfgs_memory = 5;
  // The first step (and any step after a restart) moves x by this fraction of |x|.
  double initial_step_fraction = 0.01;
  LineSearchOptions line_search;  // c2 is set from the method by Optimizer: 0.9 (L-BFGS, steepest), 0.1 (NLCG)
  // A symmetric positive semi-definite P (empty: identity): the directions become -P g (steepest), preconditioned
  // Polak-Ribiere+ (NLCG), and L-BFGS with H0 = gamma P. The line search keeps the true gradient.
  std::function<Vector(const Vector&)> preconditioner;
};

struct IterationRecord {
  int iteration = 0;            // 1, 2, ...
  double value = 0, previous_value = 0;
  double step = 0;              // accepted line-search step
  double initial_step = 0;      // first step tried
  int evaluations = 0;          // function + gradient evaluations of the line search
  int accepted = 0;             // the accepted trial's index in `trials` (= the evaluation's, counted from 0)
  bool wolfe = true;            // false: accepted by the Armijo fallback
  bool restarted = false;       // the direction was reset to steepest descent (not a descent direction)
  bool pair_dropped = false;    // L-BFGS: the new (s, y) failed the curvature test
  double projected_gradient_norm = 0;
  std::vector<LineSearchTrial> trials;
};

// Everything Optimizer::iterate() depends on, for checkpoints: restoring it and iterating gives bitwise the
// same iterates as never having stopped.
struct OptimizerState {
  int iteration = 0;
  Vector x;
  Evaluation current;
  std::vector<Vector> lbfgs_s, lbfgs_y;                                    // oldest first
  Vector previous_direction, previous_gradient, previous_preconditioned;  // empty before the first iteration
  double previous_step = 0, previous_slope = 0;
};

class Optimizer {
 public:
  // f0: f and its gradient at x0 (already projected onto the bounds).
  Optimizer(Function f, Bounds bounds, OptimizerOptions options, Vector x0, Evaluation f0);
  // One iteration: direction, line search, update. Throws LineSearchFailure (x and the history stay as they were).
  IterationRecord iterate();
  const Vector& x() const { return x_; }
  const Evaluation& current() const { return current_; }
  const OptimizerOptions& options() const { return options_; }
  int iteration() const { return iteration_; }
  OptimizerState state() const;
  void restore(const OptimizerState& s);  // the options stay those of the constructor

 private:
  Vector direction(bool& restarted, Vector& z);  // z: the preconditioned projected gradient

  Function f_;
  Bounds bounds_;
  OptimizerOptions options_;
  Vector x_;
  Evaluation current_;
  int iteration_ = 0;
  LbfgsHistory history_;
  Vector previous_direction_, previous_gradient_, previous_preconditioned_;  // NLCG; and the last slope for the next initial step
  double previous_step_ = 0, previous_slope_ = 0;
};

}  // namespace specwave::optim
