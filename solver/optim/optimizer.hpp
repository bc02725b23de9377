#pragma once
// Local optimisation with bounds (docs/numerics.md, "Optimisation"), as `specwave invert` runs it: search directions
// (L-BFGS two-loop recursion, Polak-Ribiere+ nonlinear conjugate gradients, steepest descent), each projected onto
// the feasible set, a Wolfe line search, and a driver that takes one iteration at a time so the caller can report,
// write and checkpoint between them. Vectors live where a VectorOps says: host memory
// through Eigen, or device memory through cuBLAS (docs/gpu.md). With the cuBLAS
// operations x, the gradient, the direction, the line-search points and the L-BFGS pairs stay on the device; only
// scalars (dots, norms, f) come to the host. On the CPU operations every iterate is bitwise that of ReferenceOptimizer
// (tests/test_optimizer.cpp checks it), so the two are one method in two memories. The preconditioner P works in
// place on vectors in the same memory (the inversion's applies solver/inversion/preconditioner.hpp).
#include <cstddef>
#include <deque>
#include <functional>
#include <utility>
#include <vector>

#include "kernels/vector_ops.hpp"
#include "solver/optim/line_search.hpp"

namespace specwave::optim {

enum class Method { lbfgs, nlcg, steepest };
const char* to_string(Method m);

// The two-loop recursion on n-vectors through `ops`, so that the same code runs on host vectors (Eigen) and on
// device vectors (cuBLAS): r = H g for the pairs (s[i], y[i]), oldest first, with H0 = (s.y / y.y) P from the newest
// pair (P alone without pairs); `precondition` applies P to q in place (empty: identity). r must not alias g.
void lbfgs_two_loop(const VectorOps& ops, std::size_t n, const std::vector<const double*>& s,
                    const std::vector<const double*>& y, const double* g, double* r,
                    const std::function<void(double*)>& precondition = {});

// g with the components zeroed where x is at a bound and -g points out of the box: the gradient of the free
// variables, whose norm is the first-order optimality measure of a bound-constrained problem.
Vector projected_gradient(const Bounds& b, const Vector& x, const Vector& g);

struct OptimizerOptions {
  Method method = Method::lbfgs;
  int lbfgs_memory = 5;
  // The first step (and any step after a restart) moves x by this fraction of |x|.
  double initial_step_fraction = 0.01;
  LineSearchOptions line_search;  // c2 is set from the method by ReferenceOptimizer: 0.9 (L-BFGS, steepest), 0.1 (NLCG)
  // A symmetric positive semi-definite P (empty: identity): the directions become -P g (steepest), preconditioned
  // Polak-Ribiere+ (NLCG), and L-BFGS with H0 = gamma P. The line search keeps the true gradient.
  std::function<Vector(const Vector&)> preconditioner;
};

struct IterationRecord {
  int iteration = 0;  // 1, 2, ...
  double value = 0, previous_value = 0;
  double step = 0;            // accepted line-search step
  double initial_step = 0;    // first step tried
  int evaluations = 0;        // function + gradient evaluations of the line search
  int accepted = 0;           // the accepted trial's index in `trials` (= the evaluation's, counted from 0)
  bool wolfe = true;          // false: accepted by the Armijo fallback
  bool restarted = false;     // the direction was reset to steepest descent (not a descent direction)
  bool pair_dropped = false;  // L-BFGS: the new (s, y) failed the curvature test
  double projected_gradient_norm = 0;
  std::vector<LineSearchTrial> trials;
};

// Everything ReferenceOptimizer::iterate() depends on, for checkpoints: restoring it and iterating gives bitwise the
// same iterates as never having stopped.
struct OptimizerState {
  int iteration = 0;
  Vector x;
  Evaluation current;
  std::vector<Vector> lbfgs_s, lbfgs_y;                                   // oldest first
  Vector previous_direction, previous_gradient, previous_preconditioned;  // empty before the first iteration
  double previous_step = 0, previous_slope = 0;
};

// n doubles owned in the memory of `ops` (host or device); move-only, copies are explicit (clone, assign).
class OpsVector {
 public:
  OpsVector() = default;
  OpsVector(const VectorOps& ops, std::size_t n) : ops_(&ops), n_(n), data_(ops.allocate(n)) {}
  static OpsVector from_host(const VectorOps& ops, const Vector& host);
  OpsVector(OpsVector&& o) noexcept
      : ops_(o.ops_), n_(std::exchange(o.n_, 0)), data_(std::exchange(o.data_, nullptr)) {}
  OpsVector& operator=(OpsVector&& o) noexcept {
    std::swap(ops_, o.ops_), std::swap(n_, o.n_), std::swap(data_, o.data_);
    return *this;
  }
  OpsVector(const OpsVector&) = delete;
  OpsVector& operator=(const OpsVector&) = delete;
  ~OpsVector() {
    if (data_) ops_->release(data_);
  }

  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  double* data() { return data_; }
  const double* data() const { return data_; }
  const VectorOps& ops() const { return *ops_; }
  OpsVector clone() const;
  void assign(const OpsVector& o);  // same size: this = o, without reallocating
  Vector to_host() const;

 private:
  const VectorOps* ops_ = nullptr;
  std::size_t n_ = 0;
  double* data_ = nullptr;
};

// f(x), writing its gradient into `gradient` (allocated, the size of x, in the same memory).
using OpsFunction = std::function<double(const OpsVector& x, OpsVector& gradient)>;
// v = P v in place, for the n values at v in the optimiser's memory (host or device): ReferenceOptimizer's
// OptimizerOptions::preconditioner on OpsVectors. P symmetric positive semi-definite; empty: identity.
using OpsPreconditioner = std::function<void(double* v)>;

struct OpsBounds {
  OpsVector lower, upper;  // empty: unbounded
  bool active() const { return !lower.empty(); }
};

// The L-BFGS memory on OpsVectors, with the curvature test of LbfgsHistory::push.
class OpsLbfgsHistory {
 public:
  explicit OpsLbfgsHistory(int memory) : memory_(memory) {}
  bool push(OpsVector s, OpsVector y, double epsilon = 1e-10);
  // r = H g, with H0 = gamma P (P alone without pairs; identity when `precondition` is empty).
  void apply_inverse_hessian(const OpsVector& g, OpsVector& r, const OpsPreconditioner& precondition = {}) const;
  int size() const { return int(s_.size()); }
  void clear() { s_.clear(), y_.clear(); }
  const std::deque<OpsVector>& s() const { return s_; }
  const std::deque<OpsVector>& y() const { return y_; }

 private:
  int memory_;
  std::deque<OpsVector> s_, y_;
};

class Optimizer {
 public:
  // f0, g0: f and its gradient at x0 (already projected onto the bounds). options.preconditioner (host vectors)
  // must be empty: the preconditioner is `precondition`, in the memory of `ops`.
  Optimizer(const VectorOps& ops, OpsFunction f, OpsBounds bounds, OptimizerOptions options, OpsVector x0, double f0,
            OpsVector g0, OpsPreconditioner precondition = {});
  IterationRecord iterate();  // as ReferenceOptimizer::iterate
  const OpsVector& x() const { return x_; }
  const OpsVector& gradient() const { return g_; }
  double value() const { return value_; }
  int iteration() const { return iteration_; }
  double projected_gradient_norm() const;
  // ReferenceOptimizer's checkpoint state, in host vectors (downloads everything): either optimiser restored from the
  // other's state continues the same iterates.
  OptimizerState state() const;
  void restore(const OptimizerState& s);

 private:
  struct Point {
    OpsVector x, g;
    double value = 0;
  };
  OpsVector projected_gradient(const OpsVector& g) const;
  void feasible(OpsVector& d) const;
  OpsVector direction(bool& restarted, const OpsVector& g_free, OpsVector& z);
  Point line_search(const OpsVector& d, double initial_step, IterationRecord& r);

  const VectorOps& ops_;
  OpsFunction f_;
  OpsPreconditioner precondition_;
  OpsBounds bounds_;
  OptimizerOptions options_;
  std::size_t n_;
  OpsVector x_, g_;
  double value_;
  int iteration_ = 0;
  OpsLbfgsHistory history_;
  OpsVector previous_direction_, previous_gradient_, previous_preconditioned_;  // NLCG
  double previous_step_ = 0, previous_slope_ = 0;
};

}  // namespace specwave::optim
