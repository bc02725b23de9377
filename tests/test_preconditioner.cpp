// Gradient preconditioning (solver/preconditioner.hpp): the FFT Gaussian smoother and the source taper, and the
// optimiser's use of a preconditioner.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "solver/optimizer.hpp"
#include "solver/preconditioner.hpp"

using namespace specwave;

namespace {

GridSpec grid(int nz, int ny, int nx, double h) {
  GridSpec g;
  g.shape = {nz, ny, nx};
  g.spacing = {h, h, h};
  return g;
}

}  // namespace

TEST_CASE("Gaussian smoother: a point becomes a Gaussian of the given sigma; symmetric; constants kept inside") {
  const GridSpec g = grid(24, 20, 28, 10.0);
  const double sigma = 20.0;
  GaussianSmoother s(g, {sigma, sigma, sigma}, 1);
  const std::size_t n = std::size_t(g.points());
  auto at = [&](int z, int y, int x) { return (std::size_t(z) * 20 + y) * 28 + x; };

  std::vector<double> delta(n, 0.0);
  delta[at(12, 10, 14)] = 1;
  s.apply(delta);
  double sum = 0, second = 0;
  for (int z = 0; z < 24; ++z)
    for (int y = 0; y < 20; ++y)
      for (int x = 0; x < 28; ++x) {
        const double v = delta[at(z, y, x)];
        sum += v;
        second += v * std::pow((x - 14) * 10.0, 2);
      }
  CHECK(sum == doctest::Approx(1.0).epsilon(1e-3));                     // mass kept (the kernel fits inside)
  CHECK(std::sqrt(second / sum) == doctest::Approx(sigma).epsilon(0.02));  // its width along x

  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> a(n), b(n);
  for (std::size_t k = 0; k < n; ++k) a[k] = u(rng), b[k] = u(rng);
  std::vector<double> sa = a, sb = b;
  s.apply(sa), s.apply(sb);
  double lhs = 0, rhs = 0;
  for (std::size_t k = 0; k < n; ++k) lhs += sa[k] * b[k], rhs += a[k] * sb[k];
  CHECK(std::abs(lhs - rhs) <= 1e-12 * std::abs(lhs));

  std::vector<double> one(n, 1.0);
  s.apply(one);
  CHECK(one[at(12, 10, 14)] == doctest::Approx(1.0).epsilon(1e-6));  // more than 3 sigma from every face
  CHECK(one[at(0, 0, 0)] < 0.25);  // a corner loses what the zero padding holds (about (1/2)^3 for a continuous kernel)
}

TEST_CASE("source taper: 0 at the source, 1 beyond the radius, smooth between") {
  Case c;
  c.grid = grid(10, 10, 10, 10.0);
  c.shots = {{{SourceSpec{{50.0, 50.0, 50.0}, {}}}}};
  const auto w = source_taper(c, 30.0);
  auto at = [&](int z, int y, int x) { return w[(std::size_t(z) * 10 + y) * 10 + x]; };
  CHECK(at(5, 5, 5) == 0.0);
  CHECK(at(5, 5, 7) == doctest::Approx(0.5 * (1 - std::cos(M_PI * 20 / 30))));
  CHECK(at(5, 5, 9) == 1.0);
  CHECK(at(0, 0, 0) == 1.0);
}

TEST_CASE("a preconditioner equal to the inverse Hessian makes steepest descent converge in one step") {
  using optim::Vector, optim::Evaluation, optim::Function, optim::OptimizerOptions, optim::Optimizer;
  Vector a(4), c(4);
  a << 1, 10, 100, 1000;
  c << 1, -2, 3, -4;
  const Function f = [&](const Vector& x) {
    const Vector r = x - c;
    return Evaluation{0.5 * r.dot(a.cwiseProduct(r)), a.cwiseProduct(r)};
  };
  const Vector x0 = Vector::Zero(4);
  auto iterations = [&](optim::Method m, bool preconditioned) {
    OptimizerOptions o;
    o.method = m;
    if (preconditioned) o.preconditioner = [&](const Vector& g) { return Vector(g.cwiseQuotient(a)); };
    Optimizer opt(f, {}, o, x0, f(x0));
    while (opt.iteration() < 200 && (opt.x() - c).norm() > 1e-8) opt.iterate();
    return opt.iteration();
  };
  for (optim::Method m : {optim::Method::steepest, optim::Method::nlcg, optim::Method::lbfgs}) {
    const std::string method = to_string(m);
    CAPTURE(method);
    const int with = iterations(m, true), without = iterations(m, false);
    MESSAGE(method << ": " << with << " iterations with the exact preconditioner, " << without << " without");
    CHECK(with <= 6);
    CHECK(with < without);
  }
}
