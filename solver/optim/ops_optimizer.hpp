#pragma once
// The bound-constrained optimiser (solver/optim/optimizer.hpp) on vectors that live where a VectorOps says: host memory
// through Eigen, or device memory through cuBLAS (docs/numerics.md, "Optimisation"; docs/gpu.md). With the cuBLAS
// operations x, the gradient, the direction, the line-search points and the L-BFGS pairs stay on the device; only
// scalars (dots, norms, f) come to the host. On the CPU operations every iterate is bitwise that of Optimizer
// (tests/test_optimizer.cpp checks it), so the two are one method in two memories. The preconditioner P works in
// place on vectors in the same memory (the inversion's applies solver/inversion/preconditioner.hpp).
#include <cstddef>
#include <deque>
#include <functional>
#include <utility>
#include <vector>

#include "kernels/vector_ops.hpp"
#include "solver/optim/optimizer.hpp"

namespace specwave::optim {

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
// v = P v in place, for the n values at v in the optimiser's memory (host or device): Optimizer's
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

class OpsOptimizer {
 public:
  // f0, g0: f and its gradient at x0 (already projected onto the bounds). options.preconditioner (host vectors)
  // must be empty: the preconditioner is `precondition`, in the memory of `ops`.
  OpsOptimizer(const VectorOps& ops, OpsFunction f, OpsBounds bounds, OptimizerOptions options, OpsVector x0, double f0,
               OpsVector g0, OpsPreconditioner precondition = {});
  IterationRecord iterate();  // as Optimizer::iterate
  const OpsVector& x() const { return x_; }
  const OpsVector& gradient() const { return g_; }
  double value() const { return value_; }
  int iteration() const { return iteration_; }
  double projected_gradient_norm() const;
  // Optimizer's checkpoint state, in host vectors (downloads everything): either optimiser restored from the
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
