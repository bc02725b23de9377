#include "solver/optim/reference_optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

namespace specwave::optim {

bool LbfgsHistory::push(const Vector& s, const Vector& y, double epsilon) {
  const double sy = s.dot(y);
  if (!(sy > epsilon * s.norm() * y.norm())) return false;
  s_.push_back(s), y_.push_back(y);
  if (int(s_.size()) > memory_) s_.pop_front(), y_.pop_front();
  return true;
}

Vector LbfgsHistory::apply_inverse_hessian(const Vector& g,
                                           const std::function<Vector(const Vector&)>& preconditioner) const {
  static const std::unique_ptr<VectorOps> ops = make_cpu_vector_ops();
  const std::size_t n = std::size_t(g.size());
  std::vector<const double*> s, y;
  for (int i = 0; i < size(); ++i) s.push_back(s_[i].data()), y.push_back(y_[i].data());
  Vector r(g.size());
  std::function<void(double*)> precondition;
  if (preconditioner)
    precondition = [&](double* q) {
      Eigen::Map<Vector> v(q, g.size());
      v = preconditioner(Vector(v));
    };
  lbfgs_two_loop(*ops, n, s, y, g.data(), r.data(), precondition);
  return r;
}

double polak_ribiere_plus(const Vector& g_new, const Vector& g_old) {
  const double denom = g_old.squaredNorm();
  if (denom == 0) return 0;
  return std::max(0.0, g_new.dot(g_new - g_old) / denom);
}

double polak_ribiere_plus(const Vector& g_new, const Vector& g_old, const Vector& z_new, const Vector& z_old) {
  const double denom = z_old.dot(g_old);
  if (!(denom > 0)) return 0;
  // The difference formed first, as Optimizer forms it (a lazy z.dot(g - g_old) may round otherwise).
  const Vector change = g_new - g_old;
  return std::max(0.0, z_new.dot(change) / denom);
}

ReferenceOptimizer::ReferenceOptimizer(Function f, Bounds bounds, OptimizerOptions options, Vector x0, Evaluation f0)
    : f_(std::move(f)),
      bounds_(std::move(bounds)),
      options_(options),
      x_(std::move(x0)),
      current_(std::move(f0)),
      history_(options.lbfgs_memory) {
  options_.line_search.c2 = options_.method == Method::nlcg ? 0.1 : 0.9;
}

Vector ReferenceOptimizer::direction(bool& restarted, Vector& z) {
  const Vector g = projected_gradient(bounds_, x_, current_.gradient);
  const auto& P = options_.preconditioner;
  z = P ? P(g) : g;
  Vector d;
  switch (options_.method) {
    case Method::steepest: d = -z; break;
    case Method::lbfgs: d = -history_.apply_inverse_hessian(g, P); break;
    case Method::nlcg:
      d = -z;
      if (previous_direction_.size() > 0)
        d += polak_ribiere_plus(g, previous_gradient_, z, previous_preconditioned_) * previous_direction_;
      break;
  }
  d = feasible_direction(bounds_, x_, d);
  restarted = false;
  if (!(current_.gradient.dot(d) < 0)) {  // lost descent: restart from steepest descent
    restarted = options_.method != Method::steepest;
    history_.clear();
    previous_direction_.resize(0);
    d = feasible_direction(bounds_, x_, -z);
    if (!(current_.gradient.dot(d) < 0)) d = feasible_direction(bounds_, x_, -g);
  }
  return d;
}

OptimizerState ReferenceOptimizer::state() const {
  OptimizerState s;
  s.iteration = iteration_;
  s.x = x_;
  s.current = current_;
  s.lbfgs_s.assign(history_.s().begin(), history_.s().end());
  s.lbfgs_y.assign(history_.y().begin(), history_.y().end());
  s.previous_direction = previous_direction_;
  s.previous_gradient = previous_gradient_;
  s.previous_preconditioned = previous_preconditioned_;
  s.previous_step = previous_step_;
  s.previous_slope = previous_slope_;
  return s;
}

void ReferenceOptimizer::restore(const OptimizerState& s) {
  iteration_ = s.iteration;
  x_ = s.x;
  current_ = s.current;
  history_.clear();
  for (std::size_t k = 0; k < s.lbfgs_s.size(); ++k) history_.push(s.lbfgs_s[k], s.lbfgs_y[k], -INFINITY);
  previous_direction_ = s.previous_direction;
  previous_gradient_ = s.previous_gradient;
  previous_preconditioned_ = s.previous_preconditioned;
  previous_step_ = s.previous_step;
  previous_slope_ = s.previous_slope;
}

IterationRecord ReferenceOptimizer::iterate() {
  IterationRecord r;
  r.iteration = iteration_ + 1;
  r.previous_value = current_.value;
  const Vector g_free = projected_gradient(bounds_, x_, current_.gradient);
  bool restarted = false;
  Vector z;
  const Vector d = direction(restarted, z);
  r.restarted = restarted;
  const double slope = current_.gradient.dot(d);
  // Initial step: 1 for L-BFGS with curvature pairs (the two-loop recursion scales d); otherwise, after a step,
  // a_0 = a_prev phi'_prev(0) / phi'(0) (Nocedal & Wright eq. 3.60); on the first iteration (or after a restart),
  // a step that changes x by initial_step_fraction |x|.
  double a0 = 0;
  if (options_.method == Method::lbfgs && history_.size() > 0)
    a0 = 1;
  else if (previous_step_ > 0 && !restarted && slope < 0)
    a0 = previous_step_ * previous_slope_ / slope;
  if (!(a0 > 0) || !std::isfinite(a0)) {
    const double xn = x_.norm() > 0 ? x_.norm() : 1.0;
    a0 = options_.initial_step_fraction * xn / d.norm();
  }
  r.initial_step = a0;
  const LineSearchResult ls = line_search(f_, bounds_, x_, current_, d, a0, options_.line_search);
  r.step = ls.step;
  r.evaluations = ls.evaluations();
  r.wolfe = ls.wolfe;
  r.trials = ls.trials;
  if (options_.method == Method::lbfgs) r.pair_dropped = !history_.push(ls.x - x_, ls.at.gradient - current_.gradient);
  previous_direction_ = d;
  previous_gradient_ = g_free;
  previous_preconditioned_ = z;
  previous_step_ = ls.step;
  previous_slope_ = slope;
  x_ = ls.x;
  current_ = ls.at;
  ++iteration_;
  r.value = current_.value;
  r.projected_gradient_norm = projected_gradient(bounds_, x_, current_.gradient).norm();
  return r;
}

}  // namespace specwave::optim
