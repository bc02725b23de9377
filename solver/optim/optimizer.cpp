#include "solver/optim/optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace specwave::optim {

const char* to_string(Method m) {
  switch (m) {
    case Method::lbfgs: return "lbfgs";
    case Method::nlcg: return "nlcg";
    case Method::steepest: return "steepest";
  }
  return "?";
}

// Nocedal & Wright algorithm 7.4:
//   q = g; for i = k-1 .. k-m: a_i = rho_i s_i.q, q -= a_i y_i      (rho_i = 1 / y_i.s_i)
//   r = H0 q;  for i = k-m .. k-1: b = rho_i y_i.r, r += s_i (a_i - b)
// On the CPU operations every step is the Eigen expression of the former Eigen-only code (q -= a y is q + (-a) y,
// bitwise the same), so the iterates do not change (tests/test_optimizer.cpp checks it).
void lbfgs_two_loop(const VectorOps& ops, std::size_t n, const std::vector<const double*>& s,
                    const std::vector<const double*>& y, const double* g, double* r,
                    const std::function<void(double*)>& precondition) {
  const int m = int(s.size());
  std::vector<double> alpha(m), rho(m);
  ops.copy(n, g, r);
  for (int i = m - 1; i >= 0; --i) {
    rho[i] = 1 / ops.dot(n, y[i], s[i]);
    alpha[i] = rho[i] * ops.dot(n, s[i], r);
    ops.axpy(n, -alpha[i], y[i], r);
  }
  if (precondition) precondition(r);
  if (m > 0) ops.scal(n, ops.dot(n, s[m - 1], y[m - 1]) / ops.dot(n, y[m - 1], y[m - 1]), r);
  for (int i = 0; i < m; ++i) {
    const double beta = rho[i] * ops.dot(n, y[i], r);
    ops.axpy(n, alpha[i] - beta, s[i], r);
  }
}

Vector projected_gradient(const Bounds& b, const Vector& x, const Vector& g) {
  Vector out = g;
  if (!b.active()) return out;
  for (Eigen::Index k = 0; k < x.size(); ++k)
    if ((x[k] <= b.lower[k] && g[k] > 0) || (x[k] >= b.upper[k] && g[k] < 0)) out[k] = 0;
  return out;
}

// Every step below is the operation of solver/optim/reference_optimizer.cpp and solver/optim/line_search.cpp in the
// same order, each vector expression replaced by its VectorOps call (-v by scal(-1), x0 + a d by add_scaled, ...), so
// that on the CPU operations, which are those Eigen expressions, the iterates are bitwise ReferenceOptimizer's.

OpsVector OpsVector::from_host(const VectorOps& ops, const Vector& host) {
  OpsVector v(ops, std::size_t(host.size()));
  ops.upload(v.n_, host.data(), v.data_);
  return v;
}

OpsVector OpsVector::clone() const {
  OpsVector v(*ops_, n_);
  ops_->copy(n_, data_, v.data_);
  return v;
}

void OpsVector::assign(const OpsVector& o) {
  if (o.n_ != n_) throw std::logic_error("OpsVector::assign: sizes differ");
  ops_->copy(n_, o.data_, data_);
}

Vector OpsVector::to_host() const {
  Vector v(static_cast<Eigen::Index>(n_));
  if (n_ > 0) ops_->download(n_, data_, v.data());
  return v;
}

bool OpsLbfgsHistory::push(OpsVector s, OpsVector y, double epsilon) {
  const VectorOps& ops = s.ops();
  const std::size_t n = s.size();
  const double sy = ops.dot(n, s.data(), y.data());
  if (!(sy > epsilon * ops.nrm2(n, s.data()) * ops.nrm2(n, y.data()))) return false;
  s_.push_back(std::move(s)), y_.push_back(std::move(y));
  if (int(s_.size()) > memory_) s_.pop_front(), y_.pop_front();
  return true;
}

void OpsLbfgsHistory::apply_inverse_hessian(const OpsVector& g, OpsVector& r,
                                            const OpsPreconditioner& precondition) const {
  std::vector<const double*> s, y;
  for (int i = 0; i < size(); ++i) s.push_back(s_[i].data()), y.push_back(y_[i].data());
  lbfgs_two_loop(g.ops(), g.size(), s, y, g.data(), r.data(), precondition);
}

Optimizer::Optimizer(const VectorOps& ops, OpsFunction f, OpsBounds bounds, OptimizerOptions options, OpsVector x0,
                     double f0, OpsVector g0, OpsPreconditioner precondition)
    : ops_(ops),
      f_(std::move(f)),
      precondition_(std::move(precondition)),
      bounds_(std::move(bounds)),
      options_(std::move(options)),
      n_(x0.size()),
      x_(std::move(x0)),
      g_(std::move(g0)),
      value_(f0),
      history_(options_.lbfgs_memory) {
  if (options_.preconditioner)
    throw std::invalid_argument(
        "Optimizer: options.preconditioner acts on host vectors; pass the preconditioner "
        "as `precondition`, in the memory of the vector operations");
  if (g_.size() != n_ || (bounds_.active() && (bounds_.lower.size() != n_ || bounds_.upper.size() != n_)))
    throw std::invalid_argument("Optimizer: x0, the gradient and the bounds must have the same size");
  options_.line_search.c2 = options_.method == Method::nlcg ? 0.1 : 0.9;
}

OpsVector Optimizer::projected_gradient(const OpsVector& g) const {
  OpsVector out = g.clone();
  if (bounds_.active()) ops_.projected_gradient(n_, x_.data(), bounds_.lower.data(), bounds_.upper.data(), out.data());
  return out;
}

void Optimizer::feasible(OpsVector& d) const {
  if (bounds_.active()) ops_.feasible_direction(n_, x_.data(), bounds_.lower.data(), bounds_.upper.data(), d.data());
}

double Optimizer::projected_gradient_norm() const {
  const OpsVector g = projected_gradient(g_);
  return ops_.nrm2(n_, g.data());
}

// ReferenceOptimizer::direction: z = P g (g itself without a preconditioner), then the method's direction from g and z.
OpsVector Optimizer::direction(bool& restarted, const OpsVector& g, OpsVector& z) {
  z = g.clone();
  if (precondition_) precondition_(z.data());
  OpsVector d(ops_, n_);
  switch (options_.method) {
    case Method::steepest: ops_.copy(n_, z.data(), d.data()); break;
    case Method::lbfgs: history_.apply_inverse_hessian(g, d, precondition_); break;
    case Method::nlcg: ops_.copy(n_, z.data(), d.data()); break;
  }
  ops_.scal(n_, -1, d.data());
  if (options_.method == Method::nlcg && !previous_direction_.empty()) {
    // polak_ribiere_plus(g, g_old, z, z_old)
    const double denom = ops_.dot(n_, previous_preconditioned_.data(), previous_gradient_.data());
    double beta = 0;
    if (denom > 0) {
      OpsVector change(ops_, n_);
      ops_.add_scaled(n_, g.data(), -1, previous_gradient_.data(), change.data());
      beta = std::max(0.0, ops_.dot(n_, z.data(), change.data()) / denom);
    }
    ops_.axpy(n_, beta, previous_direction_.data(), d.data());
  }
  feasible(d);
  restarted = false;
  if (!(ops_.dot(n_, g_.data(), d.data()) < 0)) {  // lost descent: restart from steepest descent, -z, else -g
    restarted = options_.method != Method::steepest;
    history_.clear();
    previous_direction_ = OpsVector();
    ops_.copy(n_, z.data(), d.data());
    ops_.scal(n_, -1, d.data());
    feasible(d);
    if (precondition_ && !(ops_.dot(n_, g_.data(), d.data()) < 0)) {
      ops_.copy(n_, g.data(), d.data());
      ops_.scal(n_, -1, d.data());
      feasible(d);
    }
  }
  return d;
}

// solver/optim/line_search.cpp's line_search on OpsVectors: the same scalar search (search_steps).
Optimizer::Point Optimizer::line_search(const OpsVector& d, double initial_step, IterationRecord& r) {
  std::vector<Point> points;
  OpsVector dx = bounds_.active() ? OpsVector(ops_, n_) : OpsVector();
  const std::function<LineSearchTrial(double)> phi = [&](double a) {
    Point p{OpsVector(ops_, n_), OpsVector(ops_, n_), 0};
    ops_.add_scaled(n_, x_.data(), a, d.data(), p.x.data());
    if (bounds_.active()) ops_.project(n_, p.x.data(), bounds_.lower.data(), bounds_.upper.data());
    p.value = f_(p.x, p.g);
    const double* tangent = d.data();
    if (bounds_.active()) {
      ops_.path_tangent(n_, a, x_.data(), d.data(), bounds_.lower.data(), bounds_.upper.data(), dx.data());
      tangent = dx.data();
    }
    LineSearchTrial t;
    t.value = p.value;
    t.slope = ops_.dot(n_, p.g.data(), tangent);
    points.push_back(std::move(p));
    return t;
  };
  const AcceptedTrial accepted =
      search_steps(phi, value_, ops_.dot(n_, g_.data(), d.data()), initial_step, options_.line_search, r.trials);
  r.step = r.trials[accepted.index].step;
  r.evaluations = int(r.trials.size());
  r.accepted = int(accepted.index);
  r.wolfe = accepted.wolfe;
  return std::move(points[accepted.index]);
}

OptimizerState Optimizer::state() const {
  OptimizerState s;
  s.iteration = iteration_;
  s.x = x_.to_host();
  s.current = {value_, g_.to_host()};
  for (const auto& v : history_.s()) s.lbfgs_s.push_back(v.to_host());
  for (const auto& v : history_.y()) s.lbfgs_y.push_back(v.to_host());
  if (!previous_direction_.empty()) s.previous_direction = previous_direction_.to_host();
  if (!previous_gradient_.empty()) s.previous_gradient = previous_gradient_.to_host();
  if (!previous_preconditioned_.empty()) s.previous_preconditioned = previous_preconditioned_.to_host();
  s.previous_step = previous_step_;
  s.previous_slope = previous_slope_;
  return s;
}

void Optimizer::restore(const OptimizerState& s) {
  auto device = [&](const Vector& v) { return v.size() > 0 ? OpsVector::from_host(ops_, v) : OpsVector(); };
  if (std::size_t(s.x.size()) != n_ || std::size_t(s.current.gradient.size()) != n_)
    throw std::invalid_argument("Optimizer::restore: the state's size differs from the optimiser's");
  iteration_ = s.iteration;
  x_ = device(s.x);
  g_ = device(s.current.gradient);
  value_ = s.current.value;
  history_.clear();
  for (std::size_t k = 0; k < s.lbfgs_s.size(); ++k)
    history_.push(device(s.lbfgs_s[k]), device(s.lbfgs_y[k]), -INFINITY);
  previous_direction_ = device(s.previous_direction);
  previous_gradient_ = device(s.previous_gradient);
  previous_preconditioned_ = device(s.previous_preconditioned);
  previous_step_ = s.previous_step;
  previous_slope_ = s.previous_slope;
}

IterationRecord Optimizer::iterate() {
  IterationRecord r;
  r.iteration = iteration_ + 1;
  r.previous_value = value_;
  OpsVector g_free = projected_gradient(g_);
  bool restarted = false;
  OpsVector z;
  OpsVector d = direction(restarted, g_free, z);
  r.restarted = restarted;
  const double slope = ops_.dot(n_, g_.data(), d.data());
  // The initial step of ReferenceOptimizer::iterate.
  double a0 = 0;
  if (options_.method == Method::lbfgs && history_.size() > 0)
    a0 = 1;
  else if (previous_step_ > 0 && !restarted && slope < 0)
    a0 = previous_step_ * previous_slope_ / slope;
  if (!(a0 > 0) || !std::isfinite(a0)) {
    const double x_norm = ops_.nrm2(n_, x_.data());
    const double xn = x_norm > 0 ? x_norm : 1.0;
    a0 = options_.initial_step_fraction * xn / ops_.nrm2(n_, d.data());
  }
  r.initial_step = a0;
  Point accepted = line_search(d, a0, r);
  if (options_.method == Method::lbfgs) {
    OpsVector s(ops_, n_), y(ops_, n_);
    ops_.add_scaled(n_, accepted.x.data(), -1, x_.data(), s.data());
    ops_.add_scaled(n_, accepted.g.data(), -1, g_.data(), y.data());
    r.pair_dropped = !history_.push(std::move(s), std::move(y));
  }
  previous_direction_ = std::move(d);
  previous_gradient_ = std::move(g_free);
  previous_preconditioned_ = std::move(z);
  previous_step_ = r.step;
  previous_slope_ = slope;
  x_ = std::move(accepted.x);
  g_ = std::move(accepted.g);
  value_ = accepted.value;
  ++iteration_;
  r.value = value_;
  r.projected_gradient_norm = projected_gradient_norm();
  return r;
}

}  // namespace specwave::optim
