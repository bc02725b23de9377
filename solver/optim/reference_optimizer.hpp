#pragma once
// The reference of the optimiser that `specwave invert` runs (solver/optim/optimizer.hpp): the same method written
// with Eigen expressions on host fp64 vectors (L-BFGS with its history, Polak-Ribiere+ NLCG, steepest descent, each
// projected onto the bounds, one iteration at a time). Optimizer is tested against it bitwise
// (tests/test_optimizer.cpp); it is also a host API.
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "solver/optim/optimizer.hpp"

namespace specwave::optim {

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

// Polak-Ribiere+: beta = max(0, g_new . (g_new - g_old) / g_old . g_old); preconditioned (z = P g):
// beta = max(0, z_new . (g_new - g_old) / z_old . g_old).
double polak_ribiere_plus(const Vector& g_new, const Vector& g_old);
double polak_ribiere_plus(const Vector& g_new, const Vector& g_old, const Vector& z_new, const Vector& z_old);

class ReferenceOptimizer {
 public:
  // f0: f and its gradient at x0 (already projected onto the bounds).
  ReferenceOptimizer(Function f, Bounds bounds, OptimizerOptions options, Vector x0, Evaluation f0);
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
  Vector previous_direction_, previous_gradient_,
      previous_preconditioned_;  // NLCG; and the last slope for the next initial step
  double previous_step_ = 0, previous_slope_ = 0;
};

}  // namespace specwave::optim
