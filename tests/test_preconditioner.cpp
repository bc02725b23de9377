// Gradient preconditioning (solver/inversion/preconditioner.hpp): the FFT Gaussian smoother and the source taper, and
// the optimiser's use of a preconditioner.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>

#include "solver/inversion/evaluation_log.hpp"
#include "solver/inversion/preconditioner.hpp"
#include "solver/optim/reference_optimizer.hpp"

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
  CHECK(sum == doctest::Approx(1.0).epsilon(1e-3));                        // mass kept (the kernel fits inside)
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
  using optim::Vector, optim::Evaluation, optim::Function, optim::OptimizerOptions, optim::ReferenceOptimizer;
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
    ReferenceOptimizer opt(f, {}, o, x0, f(x0));
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

TEST_CASE("illumination weight: 1 at the largest illumination, (1 + eps) / eps where none, decreasing in between") {
  const std::vector<double> illumination = {4.0, 0.0, 1.0, 2.0, 4.0};
  const double eps = 0.01;
  const std::vector<double> w = illumination_weight(illumination, eps);
  CHECK(w[0] == doctest::Approx(1.0).epsilon(1e-15));
  CHECK(w[4] == doctest::Approx(1.0).epsilon(1e-15));
  CHECK(w[1] == doctest::Approx((1 + eps) / eps).epsilon(1e-14));
  CHECK(w[2] > w[3]);
  CHECK(w[3] > w[0]);
  CHECK(w[2] == doctest::Approx(1.01 * 4 / (1 + 0.04)).epsilon(1e-14));
  // No wavefield at all: nothing to compensate.
  const std::vector<double> none = illumination_weight(std::vector<double>(3, 0.0), eps);
  CHECK(none == std::vector<double>(3, 1.0));
  CHECK_THROWS(illumination_weight(illumination, 0.0));
}

TEST_CASE("preconditioner with illumination compensation and smoothing: symmetric positive semi-definite") {
  Case c;
  c.grid = grid(12, 10, 14, 10.0);
  c.inversion.smoothing_m = 15;
  c.inversion.illumination_compensation = true;
  c.inversion.illumination_epsilon = 0.05;
  GradientPreconditioner p(c, 1);
  CHECK_FALSE(p.identity());
  const std::size_t n = std::size_t(c.grid.points());
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> illumination(n), a(n), b(n);
  for (std::size_t k = 0; k < n; ++k) illumination[k] = std::exp(-0.02 * double(k % 97)) * (1 + u(rng) * 0.5);
  for (auto& v : a) v = u(rng);
  for (auto& v : b) v = u(rng);
  CHECK_THROWS(p.apply(a));  // compensation before the illumination is known is a logic error
  p.set_illumination(illumination);
  const std::vector<double> pa = p.apply(a), pb = p.apply(b);
  double pab = 0, apb = 0, apa = 0, scale = 0;
  for (std::size_t k = 0; k < n; ++k)
    pab += pa[k] * b[k], apb += a[k] * pb[k], apa += a[k] * pa[k], scale += std::abs(pa[k] * b[k]);
  // Symmetric to rounding in the FFTs (fp64).
  CHECK(std::abs(pab - apb) <= 1e-12 * scale);
  CHECK(apa > 0);
  // Without smoothing it is the diagonal weight itself.
  c.inversion.smoothing_m = 0;
  GradientPreconditioner d(c, 1);
  d.set_illumination(illumination);
  const std::vector<double> da = d.apply(a), w = illumination_weight(illumination, 0.05);
  for (std::size_t k = 0; k < n; k += 17) CHECK(da[k] == a[k] * w[k]);
}

TEST_CASE(
    "evaluation log: replays the logged evaluations (misfit, gradient, per-shot misfits) in order while the models "
    "match, for its state only") {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("specwave_evaluation_log_" + std::to_string(::getpid()) + ".h5"))
          .string();
  using optim::Vector;
  const Vector x1 = Vector::LinSpaced(6, 1.0, 2.0), x2 = Vector::LinSpaced(6, 1.0, 2.5), x3 = Vector::Constant(6, 3.0);
  auto entry = [](double value, double gradient, std::vector<double> per_shot) {
    LoggedEvaluation e;
    e.at.value = value;
    e.at.gradient = Vector::Constant(6, gradient);
    e.misfit_per_shot = std::move(per_shot);
    return e;
  };
  {
    EvaluationLog log(path, true);
    log.reset(4);
    log.append(x1, entry(1.5, 0.25, {1.0, 0.5}));
    log.append(x2, entry(0.5, -0.5, {0.125, 0.375}));
  }
  EvaluationLog other(path, false);
  other.load(5, 6);  // written after another state
  CHECK(other.loaded() == 0);
  CHECK_FALSE(other.replay(x1));

  EvaluationLog log(path, true);
  log.load(4, 6);
  CHECK(log.loaded() == 2);
  const auto e1 = log.replay(x1);
  REQUIRE(e1);
  CHECK(e1->at.value == 1.5);
  CHECK(e1->at.gradient == Vector::Constant(6, 0.25));
  CHECK(e1->misfit_per_shot == std::vector<double>{1.0, 0.5});
  Vector x2_changed = x2;
  x2_changed[3] = std::nextafter(x2_changed[3], 10.0);  // one bit off: not the logged model
  CHECK_FALSE(log.replay(x2_changed));
  CHECK_FALSE(log.replay(x2));  // the replay has ended
  CHECK(log.replayed() == 1);
  // A new evaluation replaces what was not replayed.
  log.append(x3, entry(0.25, 1.0, {0.0, 0.25}));
  EvaluationLog again(path, false);
  again.load(4, 6);
  CHECK(again.loaded() == 2);
  CHECK(again.replay(x1));
  const auto e3 = again.replay(x3);
  REQUIRE(e3);
  CHECK(e3->at.value == 0.25);
  CHECK(e3->misfit_per_shot == std::vector<double>{0.0, 0.25});
  std::filesystem::remove(path);
}

TEST_CASE("preconditioner pieces for the device form: weight() is W D, its version follows set_illumination") {
  Case c;
  c.grid = grid(8, 9, 10, 10.0);
  SourceSpec s;
  s.position = {40, 40, 50};
  c.shots = {{{s}}};
  c.inversion.source_mask_m = 25;
  c.inversion.illumination_compensation = true;
  c.inversion.illumination_epsilon = 0.1;
  GradientPreconditioner p(c, 1);
  CHECK(p.smoother() == nullptr);
  CHECK_THROWS_AS(p.weight(), std::logic_error);  // D is not known before set_illumination
  const std::size_t n = std::size_t(c.grid.points());
  std::vector<double> i1(n), i2(n);
  for (std::size_t k = 0; k < n; ++k) i1[k] = 1 + std::sin(0.1 * double(k)), i2[k] = 1 + std::cos(0.2 * double(k));
  const std::uint64_t v0 = p.weight_version();
  p.set_illumination(i1);
  const std::uint64_t v1 = p.weight_version();
  CHECK(v1 != v0);
  const std::vector<double> taper = source_taper(c, 25), d = illumination_weight(i1, 0.1);
  REQUIRE(p.weight().size() == n);
  for (std::size_t k = 0; k < n; ++k) CHECK(p.weight()[k] == d[k] * taper[k]);
  p.set_illumination(i2);
  CHECK(p.weight_version() != v1);
  // Without compensation: W alone, fixed; the smoother's padded grid (pad = ceil(3 sigma / h) = ceil(3.6)) and
  // filter (1 / (pz py px) at k = 0) are those it runs.
  c.inversion.illumination_compensation = false;
  c.inversion.smoothing_m = 12;
  const GradientPreconditioner q(c, 1);
  CHECK(q.weight() == taper);
  REQUIRE(q.smoother() != nullptr);
  CHECK(q.smoother()->shape() == c.grid.shape);
  CHECK(q.smoother()->pad() == std::array<int, 3>{4, 4, 4});
  REQUIRE(q.smoother()->filter().size() == std::size_t(16 * 17 * (18 / 2 + 1)));
  CHECK(q.smoother()->filter()[0] == 1.0 / (16.0 * 17 * 18));
}
