// The optimisers and the line search on analytic functions with known minima (docs/numerics.md, "Optimisation").
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "solver/optim/optimizer.hpp"
#include "solver/optim/reference_optimizer.hpp"

using namespace specwave::optim;

namespace {

// Rosenbrock in n dimensions: sum_i 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2, minimum 0 at x = (1, ..., 1).
Evaluation rosenbrock(const Vector& x) {
  Evaluation e;
  e.gradient = Vector::Zero(x.size());
  for (Eigen::Index i = 0; i + 1 < x.size(); ++i) {
    const double a = x[i + 1] - x[i] * x[i], b = 1 - x[i];
    e.value += 100 * a * a + b * b;
    e.gradient[i] += -400 * a * x[i] - 2 * b;
    e.gradient[i + 1] += 200 * a;
  }
  return e;
}

Vector rosenbrock_start(int n) {
  Vector x(n);
  for (int i = 0; i < n; ++i) x[i] = i % 2 == 0 ? -1.2 : 1.0;
  return x;
}

// f = 1/2 sum_i a_i (x_i - c_i)^2 with a_i from 1 to 100: with bounds, the minimiser is c clamped to the box.
struct Quadratic {
  Vector a, c;
  explicit Quadratic(int n) : a(n), c(n) {
    for (int i = 0; i < n; ++i) {
      a[i] = std::pow(100.0, double(i) / (n - 1));
      c[i] = 3 * std::sin(1.7 * i + 0.3);  // in [-3, 3]; the box [-1, 2] clips several
    }
  }
  Evaluation operator()(const Vector& x) const {
    const Vector r = x - c;
    return {0.5 * r.dot(a.cwiseProduct(r)), a.cwiseProduct(r)};
  }
};

struct Run {
  Vector x;
  double value;
  int iterations, evaluations;
};

Run minimise(const Function& f, Method m, Vector x0, const Bounds& b, int max_iterations, double tolerance) {
  OptimizerOptions o;
  o.method = m;
  o.lbfgs_memory = 7;
  x0 = project(b, x0);
  ReferenceOptimizer opt(f, b, o, x0, f(x0));
  int evaluations = 1;
  while (opt.iteration() < max_iterations &&
         projected_gradient(b, opt.x(), opt.current().gradient).norm() > tolerance) {
    const IterationRecord r = opt.iterate();
    CHECK(r.value <= r.previous_value);
    evaluations += r.evaluations;
  }
  return {opt.x(), opt.current().value, opt.iteration(), evaluations};
}

}  // namespace

TEST_CASE("L-BFGS finds the minimum of the Rosenbrock function (2 and 10 dimensions)") {
  for (int n : {2, 10}) {
    CAPTURE(n);
    const Run r = minimise(rosenbrock, Method::lbfgs, rosenbrock_start(n), {}, 200, 1e-8);
    MESSAGE("Rosenbrock n = " << n << ": L-BFGS " << r.iterations << " iterations, " << r.evaluations
                              << " evaluations, f = " << r.value);
    CHECK(r.iterations < 200);
    CHECK((r.x - Vector::Ones(n)).norm() < 1e-6);
  }
}

TEST_CASE("NLCG (Polak-Ribiere+) finds the minimum of the 2D Rosenbrock function") {
  const Run r = minimise(rosenbrock, Method::nlcg, rosenbrock_start(2), {}, 2000, 1e-7);
  MESSAGE("Rosenbrock n = 2: NLCG " << r.iterations << " iterations, " << r.evaluations << " evaluations");
  CHECK((r.x - Vector::Ones(2)).norm() < 1e-5);
}

TEST_CASE("bound-constrained quadratic: every method reaches c clamped to the box") {
  const int n = 20;
  const Quadratic q(n);
  Bounds b{Vector::Constant(n, -1.0), Vector::Constant(n, 2.0)};
  const Vector expected = project(b, q.c);
  REQUIRE((expected - q.c).norm() > 1);  // the bounds matter
  for (Method m : {Method::lbfgs, Method::nlcg, Method::steepest}) {
    const std::string method = to_string(m);
    CAPTURE(method);
    const Run r = minimise(std::cref(q), m, Vector::Zero(n), b, m == Method::steepest ? 3000 : 300, 1e-9);
    MESSAGE("bounded quadratic, " << method << ": " << r.iterations << " iterations, " << r.evaluations
                                  << " evaluations, |x - x*| = " << (r.x - expected).norm());
    CHECK((r.x - expected).norm() < 1e-6);
    CHECK((r.x.array() >= -1.0).all());
    CHECK((r.x.array() <= 2.0).all());
  }
}

TEST_CASE("the line search returns a step meeting the strong Wolfe conditions") {
  const Vector x0 = rosenbrock_start(2);
  const Evaluation f0 = rosenbrock(x0);
  const Vector d = -f0.gradient;
  const double slope0 = f0.gradient.dot(d);
  for (double c2 : {0.9, 0.1}) {
    for (double a0 : {1e-5, 1e-3, 1.0}) {  // too short (bracketing expands), about right, far too long (zoom)
      CAPTURE(c2);
      CAPTURE(a0);
      LineSearchOptions o;
      o.c2 = c2;
      o.max_evaluations = 30;
      const LineSearchResult r = line_search(rosenbrock, {}, x0, f0, d, a0, o);
      CHECK(r.wolfe);
      CHECK(r.at.value <= f0.value + o.c1 * r.step * slope0);
      CHECK(std::abs(r.at.gradient.dot(d)) <= c2 * std::abs(slope0));
    }
  }
}

TEST_CASE("a projected step is a Wolfe step along the clipped path") {
  const Quadratic q(20);
  Bounds b{Vector::Constant(20, -1.0), Vector::Constant(20, 2.0)};
  const Vector x0 = Vector::Zero(20);
  const Evaluation f0 = q(x0);
  const LineSearchResult r = line_search(std::cref(q), b, x0, f0, -f0.gradient, 1.0, LineSearchOptions{});
  CHECK(r.at.value < f0.value);
  CHECK((r.x.array() >= -1.0).all());
  CHECK((r.x.array() <= 2.0).all());
}

TEST_CASE("the line search fails with a report when the gradient is wrong") {
  // f = x.x with the gradient's sign flipped: the "descent" direction climbs.
  const Function wrong = [](const Vector& x) { return Evaluation{x.squaredNorm(), -2 * x}; };
  const Vector x0 = Vector::Ones(3);
  const Evaluation f0 = wrong(x0);
  try {
    line_search(wrong, {}, x0, f0, -f0.gradient, 0.1, LineSearchOptions{});
    FAIL("no failure");
  } catch (const LineSearchFailure& e) {
    const std::string what = e.what();
    MESSAGE(what);
    CHECK(what.find("sufficient-decrease") != std::string::npos);
    CHECK(what.find("trial 1: step") != std::string::npos);
    CHECK(e.trials().size() >= 8);
  }
  // A direction that is not one of descent is refused before any evaluation.
  CHECK_THROWS_AS(line_search(wrong, {}, x0, f0, f0.gradient, 0.1, LineSearchOptions{}), LineSearchFailure);
}

TEST_CASE("L-BFGS history: two-loop recursion inverts a quadratic's Hessian, bad curvature is dropped") {
  // For f = 1/2 x^T A x with A diagonal, n pairs along the axes make H exact: H (A e_i) = e_i.
  const int n = 4;
  Vector a(n);
  a << 1, 3, 10, 40;
  LbfgsHistory h(n);
  for (int i = 0; i < n; ++i) {
    const Vector s = Vector::Unit(n, i);
    CHECK(h.push(s, a.cwiseProduct(s)));
  }
  const Vector g = Vector::LinSpaced(n, 1, 2);
  CHECK((h.apply_inverse_hessian(g) - g.cwiseQuotient(a)).norm() < 1e-12);
  CHECK_FALSE(h.push(Vector::Unit(n, 0), -Vector::Unit(n, 0)));  // s.y < 0
  CHECK(h.size() == n);
  h.push(Vector::Unit(n, 1), Vector::Unit(n, 1));
  CHECK(h.size() == n);  // memory kept at n
}

namespace {

// The two-loop recursion as the optimiser computed it before VectorOps (Eigen expressions only): the reference the
// VectorOps version must equal bit for bit on the CPU.
Vector former_two_loop(const std::vector<Vector>& s, const std::vector<Vector>& y, const Vector& g,
                       const std::function<Vector(const Vector&)>& preconditioner) {
  Vector q = g;
  const int n = int(s.size());
  std::vector<double> alpha(n), rho(n);
  for (int i = n - 1; i >= 0; --i) {
    rho[i] = 1 / y[i].dot(s[i]);
    alpha[i] = rho[i] * s[i].dot(q);
    q -= alpha[i] * y[i];
  }
  if (preconditioner) q = preconditioner(q);
  if (n > 0) q *= s.back().dot(y.back()) / y.back().squaredNorm();
  for (int i = 0; i < n; ++i) {
    const double beta = rho[i] * y[i].dot(q);
    q += (alpha[i] - beta) * s[i];
  }
  return q;
}

Vector pseudo_random(int n, double phase) {
  Vector v(n);
  for (int i = 0; i < n; ++i) v[i] = std::sin(0.731 * i * i + phase) + 0.3 * std::cos(2.1 * i - phase);
  return v;
}

}  // namespace

TEST_CASE("L-BFGS on the CPU VectorOps gives bitwise the former Eigen-only two-loop recursion") {
  const int n = 1001;  // not a multiple of any packet size
  const Vector g = pseudo_random(n, 0.2);
  const Vector diag = pseudo_random(n, 1.3).cwiseAbs().array() + 0.5;
  const std::function<Vector(const Vector&)> P = [&](const Vector& v) { return Vector(diag.cwiseProduct(v)); };
  for (const bool preconditioned : {false, true}) {
    LbfgsHistory history(5);
    std::vector<Vector> s, y;
    for (int k = 0; k < 7; ++k) {
      const Vector sk = pseudo_random(n, 3.0 + k), yk = sk.cwiseProduct(diag) + 0.01 * pseudo_random(n, 9.0 + k);
      REQUIRE(history.push(sk, yk));
      s.push_back(sk), y.push_back(yk);
      if (s.size() > 5) s.erase(s.begin()), y.erase(y.begin());
      CAPTURE(k);
      CAPTURE(preconditioned);
      const Vector expected = former_two_loop(s, y, g, preconditioned ? P : nullptr);
      const Vector got = history.apply_inverse_hessian(g, preconditioned ? P : nullptr);
      CHECK((got.array() == expected.array()).all());
    }
  }
}

TEST_CASE("CPU VectorOps: dot, nrm2, axpy, scal, copy, project against plain loops") {
  const auto ops = specwave::make_cpu_vector_ops();
  const int n = 517;
  Vector x = pseudo_random(n, 0.1), y = pseudo_random(n, 0.7);
  double dot = 0, sq = 0;
  for (int i = 0; i < n; ++i) dot += x[i] * y[i], sq += x[i] * x[i];
  // Reductions in another order than the loop's: equal to a few ulps of the sum of |terms| (< 1e-13 relative).
  CHECK(std::abs(ops->dot(n, x.data(), y.data()) - dot) <= 1e-13 * x.cwiseAbs().dot(y.cwiseAbs()));
  CHECK(std::abs(ops->nrm2(n, x.data()) - std::sqrt(sq)) <= 1e-13 * std::sqrt(sq));
  Vector z = y;
  ops->axpy(n, -0.75, x.data(), z.data());
  // One rounding (FMA) or two, as the compiler contracts either side: within 2 ulp of |y| + 0.75 |x|.
  for (int i = 0; i < n; ++i)
    CHECK(std::abs(z[i] - (y[i] - 0.75 * x[i])) <= 4.5e-16 * (std::abs(y[i]) + 0.75 * std::abs(x[i])));
  ops->scal(n, 2.5, z.data());
  ops->copy(n, z.data(), y.data());
  for (int i = 0; i < n; ++i) CHECK(y[i] == z[i]);
  const Vector lower = Vector::Constant(n, -0.5), upper = Vector::Constant(n, 0.25);
  ops->project(n, x.data(), lower.data(), upper.data());
  CHECK(x.minCoeff() >= -0.5);
  CHECK(x.maxCoeff() <= 0.25);
  CHECK(x.maxCoeff() == 0.25);  // some components were clipped, others kept
}

TEST_CASE("CPU VectorOps: add_scaled, the feasible-direction and projected-gradient masks, the path tangent") {
  const auto ops = specwave::make_cpu_vector_ops();
  const int n = 301;
  Vector x = pseudo_random(n, 0.4), d = pseudo_random(n, 2.2);
  const Bounds b{Vector::Constant(n, -0.5), Vector::Constant(n, 0.25)};
  x = project(b, x);  // many components at a bound
  Vector w(n);
  ops->add_scaled(n, x.data(), 0.3, d.data(), w.data());
  CHECK((w.array() == (x + 0.3 * d).array()).all());
  ops->add_scaled(n, x.data(), -1, d.data(), w.data());
  for (int i = 0; i < n; ++i) CHECK(w[i] == x[i] - d[i]);
  Vector v = d;
  ops->feasible_direction(n, x.data(), b.lower.data(), b.upper.data(), v.data());
  CHECK((v.array() == feasible_direction(b, x, d).array()).all());
  CHECK((v.array() != d.array()).any());  // the mask acted
  v = d;
  ops->projected_gradient(n, x.data(), b.lower.data(), b.upper.data(), v.data());
  CHECK((v.array() == projected_gradient(b, x, d).array()).all());
  CHECK((v.array() != d.array()).any());
  // Tangent: d where x + a d stays in the box, 0 elsewhere (a plain loop).
  const double a = 0.7;
  ops->path_tangent(n, a, x.data(), d.data(), b.lower.data(), b.upper.data(), v.data());
  for (int i = 0; i < n; ++i) {
    const double raw = x[i] + a * d[i];
    CHECK(v[i] == (raw < -0.5 || raw > 0.25 ? 0.0 : d[i]));
  }
  double* p = ops->allocate(n);
  ops->upload(n, d.data(), p);
  ops->download(n, p, w.data());
  ops->release(p);
  CHECK((w.array() == d.array()).all());
}

namespace {

// ReferenceOptimizer (Eigen) and Optimizer (CPU VectorOps) side by side from the same start, iteration by iteration;
// with a non-empty `diagonal`, both preconditioned by P = diag(diagonal).
void compare_with_reference_optimizer(const Function& f, Method m, Vector x0, const Bounds& b, int iterations,
                                      const Vector& diagonal = Vector()) {
  const auto ops = specwave::make_cpu_vector_ops();
  OptimizerOptions o;
  o.method = m;
  o.lbfgs_memory = 4;
  x0 = project(b, x0);
  const Evaluation f0 = f(x0);
  OpsPreconditioner precondition;
  if (diagonal.size() > 0) {
    o.preconditioner = [&](const Vector& g) { return Vector(g.cwiseProduct(diagonal)); };
    precondition = [&](double* v) {
      Eigen::Map<Vector> w(v, diagonal.size());
      w = w.cwiseProduct(diagonal);
    };
  }
  ReferenceOptimizer eigen(f, b, o, x0, f0);
  o.preconditioner = nullptr;
  const OpsFunction g = [&](const OpsVector& x, OpsVector& gradient) {
    const Evaluation e = f(x.to_host());
    gradient.ops().upload(gradient.size(), e.gradient.data(), gradient.data());
    return e.value;
  };
  OpsBounds ob;
  if (b.active()) ob = {OpsVector::from_host(*ops, b.lower), OpsVector::from_host(*ops, b.upper)};
  Optimizer on_ops(*ops, g, std::move(ob), o, OpsVector::from_host(*ops, x0), f0.value,
                   OpsVector::from_host(*ops, f0.gradient), precondition);
  for (int k = 0; k < iterations; ++k) {
    CAPTURE(k);
    IterationRecord want;
    try {
      want = eigen.iterate();
    } catch (const LineSearchFailure&) {  // stuck at the box's corner: the same failure, then stop
      CHECK_THROWS_AS(on_ops.iterate(), LineSearchFailure);
      break;
    }
    const IterationRecord got = on_ops.iterate();
    CAPTURE(want.restarted);
    REQUIRE(got.value == want.value);
    CHECK(got.step == want.step);
    CHECK(got.initial_step == want.initial_step);
    CHECK(got.evaluations == want.evaluations);
    CHECK(got.wolfe == want.wolfe);
    CHECK(got.restarted == want.restarted);
    CHECK(got.pair_dropped == want.pair_dropped);
    CHECK(got.projected_gradient_norm == want.projected_gradient_norm);
    CHECK((on_ops.x().to_host().array() == eigen.x().array()).all());
    CHECK((on_ops.gradient().to_host().array() == eigen.current().gradient.array()).all());
    if (want.projected_gradient_norm < 1e-9) break;  // converged: a further line search has nothing to find
  }
}

}  // namespace

TEST_CASE(
    "OpsOptimizer on the CPU VectorOps gives bitwise Optimizer's iterates (every method, with and without bounds)") {
  for (const Method m : {Method::lbfgs, Method::nlcg, Method::steepest}) {
    const std::string method = to_string(m);
    CAPTURE(method);
    compare_with_reference_optimizer(rosenbrock, m, rosenbrock_start(10), Bounds{}, 25);
    const Quadratic q(40);
    const Bounds b{Vector::Constant(40, -1.0), Vector::Constant(40, 2.0)};
    compare_with_reference_optimizer(q, m, Vector::Zero(40), b, 20);
    // Rosenbrock in a box that excludes the minimum: the masks and the clipped path matter.
    const Bounds rb{Vector::Constant(10, -2.0), Vector::Constant(10, 0.8)};
    compare_with_reference_optimizer(rosenbrock, m, rosenbrock_start(10), rb, 20);
    // Preconditioned (P = an approximate inverse of the quadratic's Hessian, and an arbitrary positive diagonal).
    const Vector inverse = q.a.cwiseInverse().cwiseProduct(Vector::LinSpaced(40, 0.5, 2.0));
    compare_with_reference_optimizer(q, m, Vector::Zero(40), b, 20, inverse);
    compare_with_reference_optimizer(rosenbrock, m, rosenbrock_start(10), rb, 20, Vector::LinSpaced(10, 0.2, 3.0));
  }
}

TEST_CASE("OpsOptimizer refuses a host-vector preconditioner in its options") {
  const auto ops = specwave::make_cpu_vector_ops();
  OptimizerOptions o;
  o.preconditioner = [](const Vector& g) { return g; };
  const Vector x0 = Vector::Zero(3);
  const OpsFunction f = [](const OpsVector&, OpsVector&) { return 0.0; };
  CHECK_THROWS_AS(Optimizer(*ops, f, {}, o, OpsVector::from_host(*ops, x0), 0.0, OpsVector::from_host(*ops, x0)),
                  std::invalid_argument);
}

TEST_CASE("OpsOptimizer state: restored into Optimizer (and back) the iterates continue bitwise") {
  const auto ops = specwave::make_cpu_vector_ops();
  const Quadratic q(30);
  const Bounds b{Vector::Constant(30, -1.0), Vector::Constant(30, 2.0)};
  const OpsFunction g = [&](const OpsVector& x, OpsVector& gradient) {
    const Evaluation e = q(x.to_host());
    gradient.ops().upload(gradient.size(), e.gradient.data(), gradient.data());
    return e.value;
  };
  const Vector diagonal = Vector::LinSpaced(30, 0.05, 1.0);
  for (const bool preconditioned : {false, true})
    for (const Method m : {Method::lbfgs, Method::nlcg}) {
      const std::string method = to_string(m);
      CAPTURE(method);
      CAPTURE(preconditioned);
      OptimizerOptions o;
      o.method = m;
      o.lbfgs_memory = 3;
      OpsPreconditioner precondition;
      if (preconditioned) {
        o.preconditioner = [&](const Vector& v) { return Vector(v.cwiseProduct(diagonal)); };
        precondition = [&](double* v) {
          Eigen::Map<Vector> w(v, 30);
          w = w.cwiseProduct(diagonal);
        };
      }
      OptimizerOptions ops_options = o;
      ops_options.preconditioner = nullptr;
      const Vector x0 = Vector::Zero(30);
      const Evaluation f0 = q(x0);
      auto make_ops = [&] {
        return Optimizer(*ops, g, {OpsVector::from_host(*ops, b.lower), OpsVector::from_host(*ops, b.upper)},
                         ops_options, OpsVector::from_host(*ops, x0), f0.value, OpsVector::from_host(*ops, f0.gradient),
                         precondition);
      };
      ReferenceOptimizer reference(q, b, o, x0, f0);
      Optimizer first = make_ops();
      for (int k = 0; k < 5; ++k) reference.iterate(), first.iterate();
      // Optimizer -> ReferenceOptimizer, and ReferenceOptimizer -> a fresh Optimizer.
      ReferenceOptimizer from_ops(q, b, o, x0, f0);
      from_ops.restore(first.state());
      Optimizer from_eigen = make_ops();
      from_eigen.restore(reference.state());
      for (int k = 0; k < 4; ++k) {
        CAPTURE(k);
        const IterationRecord want = reference.iterate(), a = from_ops.iterate(), c = from_eigen.iterate();
        CHECK(a.value == want.value);
        CHECK(c.value == want.value);
        CHECK((from_ops.x().array() == reference.x().array()).all());
        CHECK((from_eigen.x().to_host().array() == reference.x().array()).all());
        if (want.projected_gradient_norm < 1e-9) break;
      }
    }
}
