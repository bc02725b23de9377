// The adjoint of the spectral (k-space) scheme (docs/numerics.md, "Adjoint of the spectral scheme"): the
// transposes of its FFT operators alone, dot-product tests of the Born operator and its adjoint for both absorbers,
// Taylor tests of the gradient, history strategies, the Born operator against forward runs.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "case_builders.hpp"
#include "density_check.hpp"
#include "solver/case/errors.hpp"
#include "solver/inversion/gradient_check.hpp"
#include "solver/inversion/objective.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/propagator.hpp"
#include "solver/propagators/spectral/spectral_cpu_steps.hpp"

using namespace specwave;

namespace {

const char* absorber_name(SpectralAbsorber a) {
  return a == SpectralAbsorber::pml ? "split-field PML" : "damping layer";
}

Case spectral_case(SpectralAbsorber absorber, Precision precision) {
  return specwave::testing::spectral_gradient_case(absorber, precision);
}

// |F dV - (d(V + dV) - d(V - dV)) / 2| / |F dV| for shot 0 of case c at its model and a smooth dV of 0.1% of (v dt)^2:
// the central difference of the forward traces is F dV up to O(|dV|^3) and rounding. The norm of F dV in `norm`.
double born_against_forward_runs(const Case& c, double& norm) {
  const Plan plan = make_plan(c);
  auto propagator = make_gradient_propagator(c, plan, HistoryChoice{});
  const std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
  propagator->set_velocity(velocity);
  const std::vector<double> vel2dt2 = propagator->vel2dt2();
  const std::vector<double> dm = smooth_direction(c.grid, vel2dt2, 1e-3);
  const std::vector<double> born = propagator->born(0, dm);
  std::vector<std::vector<double>> traces;
  for (double sign : {1.0, -1.0}) {
    std::vector<double> v(velocity.size());
    for (std::size_t k = 0; k < v.size(); ++k) v[k] = std::sqrt(vel2dt2[k] + sign * dm[k]) / plan.dt;
    propagator->set_velocity(v);
    traces.push_back(propagator->forward(0, false));
  }
  double err = 0;
  norm = 0;
  for (std::size_t k = 0; k < born.size(); ++k) {
    const double fd = (traces[0][k] - traces[1][k]) / 2;
    err += (fd - born[k]) * (fd - born[k]);
    norm += born[k] * born[k];
  }
  return std::sqrt(err / norm);
}

// Whether the gradient propagator's forward traces of shot 1 (after set_velocity with the plan's model) are the
// forward propagator's, bit for bit.
bool forward_matches_propagator(const Case& c) {
  const Plan plan = make_plan(c);
  auto forward = make_propagator(c, plan);
  forward->begin_shot(plan.sources[1], plan.wavelets[1], plan.receivers);
  forward->advance(0, plan.nt);
  const std::span<const double> expected = forward->traces();
  auto gradient = make_gradient_propagator(c, plan, HistoryChoice{});
  gradient->set_velocity(std::vector<double>(plan.model.velocity.begin(), plan.model.velocity.end()));
  const std::vector<double> traces = gradient->forward(1, false);
  if (traces.size() != expected.size()) return false;
  for (std::size_t k = 0; k < traces.size(); ++k)
    if (!specwave::testing::same_bits(traces[k], expected[k])) return false;
  return true;
}

// The same with observed data from a moved low-velocity anomaly: the starting model is the case's own. (With a
// truth close to the start, the misfit's curvature would dominate its slope at the larger Taylor steps.)
Case spectral_taylor_case(SpectralAbsorber absorber, Parameterisation p) {
  Case c = spectral_case(absorber, Precision::fp64);
  ModelSpec truth = c.model;
  truth.center = {110, 135, 130};
  truth.anomaly = -100;
  c.inversion.true_model = truth;
  c.inversion.parameterisation = p;
  return c;
}

// The PML case with three layers of velocity and density (the staggered gradient tests' model): the first interface
// passes between the first shot's source and two receivers.
Case spectral_density_case(Precision precision) {
  Case c = spectral_case(SpectralAbsorber::pml, precision);
  c.model.kind = ModelSpec::Kind::layered;
  c.model.interfaces = {95.0, 185.0};
  c.model.velocities = {1800.0, 2200.0, 2450.0};
  c.model.densities = {1100.0, 2000.0, 2300.0};
  return c;
}

template <class T>
std::vector<T> random_field(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<T> out(n);
  for (T& v : out) v = T(u(rng));
  return out;
}

template <class T>
double dot(const T* a, const T* b, std::size_t n) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) s += double(a[i]) * double(b[i]);
  return s;
}

// |<A f, g> - sign <f, B g>| / (|A f| |g|) for the operators of the steps on random f, g.
template <class T>
void check_operator_transposes(const Dims3& shape, double tolerance) {
  Case c = specwave::testing::small_case(16, 10, 2000, 8, 3, 20, 0.05);
  c.scheme.method = Method::spectral;
  c.grid.shape = shape;
  c.shots[0].sources[0].position = {70, 70, 70};
  c.receivers = {{60, 60, 60}};
  c.run.precision = sizeof(T) == 4 ? Precision::fp32 : Precision::fp64;
  const std::string grid = std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + "x" + std::to_string(shape[2]);
  CAPTURE(grid);
  for (SpectralAbsorber absorber : {SpectralAbsorber::pml, SpectralAbsorber::damping}) {
    c.boundary.spectral_absorber = absorber;
    const Plan plan = make_plan(c);
    const SpectralSetup<T> setup = make_spectral_setup<T>(c, plan);
    SpectralCpuSteps<T> steps(setup, nullptr, plan);
    const std::size_t n = setup.points();
    fft::Buffer<T> f(n), g(n), af(n), bg(n);
    const std::vector<T> rf = random_field<T>(n, 11), rg = random_field<T>(n, 12);
    std::copy(rf.begin(), rf.end(), f.begin());
    std::copy(rg.begin(), rg.end(), g.begin());
    auto check = [&](const std::string& what, double sign) {
      const double lhs = dot(af.data(), g.data(), n), rhs = sign * dot(f.data(), bg.data(), n);
      const double scale = std::sqrt(dot(af.data(), af.data(), n) * dot(g.data(), g.data(), n));
      const double mismatch = std::abs(lhs - rhs) / scale;
      MESSAGE(grid << " " << (sizeof(T) == 4 ? "fp32 " : "fp64 ") << what << ": <A f, g> = " << lhs
                   << ", relative mismatch " << mismatch);
      CHECK(lhs != 0);
      CHECK(mismatch <= tolerance);
    };
    if (absorber == SpectralAbsorber::damping) {
      steps.apply_real_symbol(f.data(), setup.laplacian_symbol, af.data());
      steps.apply_real_symbol(g.data(), setup.laplacian_symbol, bg.data());
      check("Lk", 1);
      continue;
    }
    // (D_a^+)^T = -D_a^- and (D_a^-)^T = -D_a^+, Nyquist planes included.
    for (int a = 0; a < 3; ++a) {
      const std::string name = std::string("D+ vs -D- along axis ") + char('0' + a);
      steps.staggered_derivative(a, true, f.data(), af.data());
      steps.staggered_derivative(a, false, g.data(), bg.data());
      check(name, -1);
    }
  }
}

}  // namespace

TEST_CASE("spectral operators alone: K and Lk are symmetric, (D_a^+)^T = -D_a^- (r2c/c2r, even and odd extents)") {
  // The composite r2c -> multiply -> c2r is a real circulant operator whenever the multiplier is Hermitian; its
  // transpose is the circulant of the conjugate multiplier (not the transposes of r2c and c2r one by one).
  for (const Dims3& shape : {Dims3{16, 15, 18}, Dims3{15, 18, 17}}) {
    check_operator_transposes<double>(shape, 1e-14);
    check_operator_transposes<float>(shape, 1e-6);
  }
}

TEST_CASE("spectral Born operator and its adjoint: dot-product test, both absorbers, fp64 and fp32") {
  struct Config {
    SpectralAbsorber absorber;
    Precision precision;
    double tolerance;
  };
  for (const Config& cfg :
       {Config{SpectralAbsorber::pml, Precision::fp64, 1e-10},
        Config{SpectralAbsorber::damping, Precision::fp64, 1e-10}, Config{SpectralAbsorber::pml, Precision::fp32, 1e-4},
        Config{SpectralAbsorber::damping, Precision::fp32, 1e-4}}) {
    const std::string config = std::string(absorber_name(cfg.absorber)) + ", " + to_string(cfg.precision);
    CAPTURE(config);
    const Case c = spectral_case(cfg.absorber, cfg.precision);
    const Plan plan = make_plan(c);
    for (int shot = 0; shot < 2; ++shot) {
      const DotTestResult r = born_dot_test(c, plan, shot, 4321 + shot);
      MESSAGE(config << " shot " << shot << ": <F dm, dd> = " << r.lhs << ", <dm, F^T dd> = " << r.rhs
                     << ", relative mismatch " << r.mismatch);
      CHECK(r.lhs != 0);
      CHECK(r.mismatch <= cfg.tolerance);
    }
  }
}

TEST_CASE("spectral Taylor test of the gradient: slopes 1 and 2 (fp64), both absorbers") {
  struct Config {
    SpectralAbsorber absorber;
    Parameterisation p;
  };
  for (const Config& cfg : {Config{SpectralAbsorber::pml, Parameterisation::velocity},
                            Config{SpectralAbsorber::damping, Parameterisation::slowness2}}) {
    const std::string config = std::string(absorber_name(cfg.absorber)) + ", " + to_string(cfg.p);
    CAPTURE(config);
    const Case c = spectral_taylor_case(cfg.absorber, cfg.p);
    const Plan plan = make_plan(c);
    auto propagator = make_gradient_propagator(c, plan, HistoryChoice{});
    LeastSquaresMisfit misfit;
    Objective objective(*propagator, misfit, observed_data(c, plan, *propagator), cfg.p, plan.dt);
    const std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
    const std::vector<double> model = parameter_from_velocity(cfg.p, velocity);
    const std::vector<double> direction = smooth_direction(c.grid, model, 0.02);
    const TaylorResult r = taylor_test(objective, model, direction, taylor_steps);
    REQUIRE(r.rows.size() >= 4);
    for (const auto& row : r.rows) MESSAGE(config << " h " << row.h << " r1 " << row.first << " r2 " << row.second);
    MESSAGE(config << ": J = " << r.misfit << ", g.dm = " << r.directional_derivative << ", slopes " << r.slope_first
                   << ", " << r.slope_second);
    CHECK(r.misfit > 0);
    CHECK(std::abs(r.slope_first - 1) <= 0.1);
    CHECK(std::abs(r.slope_second - 2) <= 0.1);
  }
}

TEST_CASE("spectral: every wavefield history strategy gives bitwise the same gradient") {
  // Checkpoints replay the same steps (same plans, same arrays' alignment, no reductions) from saved states that
  // hold everything a step reads: the fields handed to the adjoint are the same bits, and so is the gradient.
  for (SpectralAbsorber absorber : {SpectralAbsorber::pml, SpectralAbsorber::damping})
    for (Precision precision : {Precision::fp64, Precision::fp32}) {
      const std::string config = std::string(absorber_name(absorber)) + ", " + to_string(precision);
      CAPTURE(config);
      Case c = spectral_taylor_case(absorber, Parameterisation::velocity);
      c.run.precision = precision;
      c.shots.resize(1);
      const Plan plan = make_plan(c);
      const std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
      LeastSquaresMisfit misfit;
      std::vector<MisfitGradient> results;
      std::vector<std::string> names;
      for (const HistoryChoice& h :
           {all_steps_choice(plan.nt, 0), segment_checkpoint_choice(plan.nt, 7, 0, 0),
            segment_checkpoint_choice(plan.nt, 1, 0, 0), segment_checkpoint_choice(plan.nt, plan.nt + 3, 0, 0)}) {
        auto propagator = make_gradient_propagator(c, plan, h);
        Objective objective(*propagator, misfit, observed_data(c, plan, *propagator), Parameterisation::velocity,
                            plan.dt);
        results.push_back(objective.evaluate(velocity, true));
        names.push_back(propagator->history_name());
      }
      for (std::size_t k = 1; k < results.size(); ++k) {
        CAPTURE(names[k]);
        CHECK(results[k].misfit == results[0].misfit);
        CHECK(results[k].gradient == results[0].gradient);
      }
      double norm = 0;
      for (double g : results[0].gradient) norm += g * g;
      CHECK(norm > 0);
    }
}

TEST_CASE("spectral Born operator against the difference of two forward runs (fp64), both absorbers") {
  // F dV against (d(V + dV) - d(V - dV)) / 2 for a smooth dV of 0.1% of (v dt)^2: the central difference of the
  // forward traces is F dV up to O(|dV|^3) (relative about 1e-6 here) and rounding.
  for (SpectralAbsorber absorber : {SpectralAbsorber::pml, SpectralAbsorber::damping}) {
    const std::string config = absorber_name(absorber);
    CAPTURE(config);
    double norm = 0;
    const double relative = born_against_forward_runs(spectral_case(absorber, Precision::fp64), norm);
    MESSAGE(config << ": |F dV - central difference| / |F dV| = " << relative);
    CHECK(norm > 0);
    CHECK(relative < 1e-5);
  }
}

TEST_CASE("spectral gradient propagator: its forward traces are the forward propagator's, bitwise") {
  for (SpectralAbsorber absorber : {SpectralAbsorber::pml, SpectralAbsorber::damping})
    for (Precision precision : {Precision::fp64, Precision::fp32}) {
      const std::string config = std::string(absorber_name(absorber)) + ", " + to_string(precision);
      CAPTURE(config);
      CHECK(forward_matches_propagator(spectral_case(absorber, precision)));
    }
}

TEST_CASE("spectral illumination of the adjoint pass: the sum of (u^n)^2 of the forward propagator's fields") {
  // The PML's pressure is the sum of its split fields, summed in the same order by both: equal to rounding.
  for (SpectralAbsorber absorber : {SpectralAbsorber::damping, SpectralAbsorber::pml}) {
    for (Precision precision : {Precision::fp64, Precision::fp32}) {
      const double tolerance = precision == Precision::fp64 ? 1e-12 : 1e-5;
      CAPTURE(int(absorber));
      CAPTURE(tolerance);
      Case c = spectral_case(absorber, precision);
      c.inversion.true_model = c.model;  // observed data: any will do
      const Plan plan = make_plan(c);
      const auto r = specwave::testing::compare_illumination(c, plan);
      MESSAGE("spectral illumination, relative L2 difference " << r.relative_difference);
      CHECK(r.norm > 0);
      CHECK(r.relative_difference <= tolerance);
    }
  }
}

TEST_CASE("spectral gradient propagator refuses a model beyond the frozen dt's stability limit") {
  const Case c = spectral_case(SpectralAbsorber::pml, Precision::fp64);
  const Plan plan = make_plan(c);
  auto propagator = make_gradient_propagator(c, plan, HistoryChoice{});
  CHECK(propagator->name() == "spectral-cpu-pml-fp64");
  std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
  CHECK_NOTHROW(propagator->set_velocity(velocity));
  velocity[17] = 1.01 * plan.v_reference / plan.cfl;
  CHECK_THROWS_AS(propagator->set_velocity(velocity), Error);
}

namespace {

// The gradient propagator's forward traces of shot 1 against the forward propagator's (bitwise), and the Born
// operator's dot-product test on both shots (fp64 <= 1e-10, fp32 <= 1e-4).
void check_forward_and_dot(const Case& c, const std::string& what, std::uint64_t seed) {
  CHECK(forward_matches_propagator(c));
  const Plan plan = make_plan(c);
  const double tolerance = c.run.precision == Precision::fp64 ? 1e-10 : 1e-4;
  for (int shot = 0; shot < 2; ++shot) {
    const DotTestResult r = born_dot_test(c, plan, shot, seed + std::uint64_t(shot));
    MESSAGE(what << ", " << std::string(to_string(c.run.precision)) << " shot " << shot << ": <F dm, dd> = " << r.lhs
                 << ", relative mismatch " << r.mismatch);
    CHECK(r.lhs != 0);
    CHECK(r.mismatch <= tolerance);
  }
}

// The Taylor test of the velocity gradient of case c (fp64) at its model, the observed data those of the velocity 3%
// slower in a blob.
void check_velocity_taylor(const Case& c, const std::string& what) {
  const Plan plan = make_plan(c);
  auto propagator = make_gradient_propagator(c, plan, HistoryChoice{});
  const std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
  std::vector<double> moved = velocity;
  const auto& n = c.grid.shape;
  for (int z = 0; z < n[0]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[2]; ++x) {
        const double d2 = std::pow(z - 11.0, 2) + std::pow(y - 13.0, 2) + std::pow(x - 13.0, 2);
        moved[(std::size_t(z) * n[1] + y) * n[2] + x] *= 1 - 0.03 * std::exp(-d2 / 16.0);
      }
  ObservedData observed;
  propagator->set_velocity(moved);
  for (int shot = 0; shot < int(c.shots.size()); ++shot) observed.push_back(propagator->forward(shot, false));
  LeastSquaresMisfit misfit;
  Objective objective(*propagator, misfit, observed, Parameterisation::velocity, plan.dt);
  const TaylorResult t = taylor_test(objective, velocity, smooth_direction(c.grid, velocity, 0.02), taylor_steps);
  MESSAGE(what << ", velocity gradient: J = " << t.misfit << ", slopes " << t.slope_first << ", " << t.slope_second);
  CHECK(t.misfit > 0);
  CHECK(std::abs(t.slope_first - 1) <= 0.1);
  CHECK(std::abs(t.slope_second - 2) <= 0.1);
}

}  // namespace

TEST_CASE(
    "spectral with a density model: forward traces bitwise the forward propagator's, dot-product and Taylor "
    "tests of the velocity gradient") {
  for (Precision precision : {Precision::fp64, Precision::fp32})
    check_forward_and_dot(spectral_density_case(precision), "density model", 97);
  check_velocity_taylor(spectral_density_case(Precision::fp64), "density model");
}

TEST_CASE("spectral density gradient: Taylor test at fixed velocity, slopes 1 and 2, central differences (fp64)") {
  // The density's terms of the k-space scheme (dt v^2 rho / rho_ref, the buoyancy at the staggered points, the
  // sources' rho_s; with four-component receivers each velocity receiver's 1 / rho_r): tests/density_check.hpp.
  for (bool velocity_receivers : {false, true}) {
    CAPTURE(velocity_receivers);
    Case c = spectral_density_case(Precision::fp64);
    c.inversion.density_parameter = true;
    if (velocity_receivers) specwave::testing::four_component_receivers(c);
    specwave::testing::check_density_gradient(c, {10.0, 14.0, 15.0}, 1e-5);
  }
}

namespace {

// With attenuation: a constant Q of 40 in the Gaussian case, or Q 30 / 60 / 120 by layer in the density case.
Case spectral_attenuation_case(Precision precision, bool density) {
  Case c = density ? spectral_density_case(precision) : spectral_case(SpectralAbsorber::pml, precision);
  c.attenuation.present = true;
  if (density)
    c.attenuation.q_layers = {30.0, 60.0, 120.0};
  else
    c.attenuation.q = 40.0;
  return c;
}

}  // namespace

TEST_CASE(
    "spectral with attenuation: forward bitwise, dot-product tests, Born against forward runs, every history "
    "the same gradient, Taylor tests") {
  for (bool density : {false, true}) {
    CAPTURE(density);
    const std::string what = std::string("attenuation, density ") + (density ? "true" : "false");
    for (Precision precision : {Precision::fp64, Precision::fp32}) {
      const Case c = spectral_attenuation_case(precision, density);
      check_forward_and_dot(c, what, 31);
      // Checkpoints replay the steps from states that hold the memory variables and the last D_a: bitwise.
      Case one = c;
      one.shots.resize(1);
      one.inversion.true_model = c.model;
      one.inversion.true_model->anomaly = density ? 0.0 : -100.0;
      if (density) one.inversion.true_model->velocities = {1900.0, 2200.0, 2450.0};
      const Plan one_plan = make_plan(one);
      const std::vector<double> velocity(one_plan.model.velocity.begin(), one_plan.model.velocity.end());
      LeastSquaresMisfit misfit;
      std::vector<MisfitGradient> results;
      for (const HistoryChoice& h :
           {all_steps_choice(one_plan.nt, 0), segment_checkpoint_choice(one_plan.nt, 7, 0, 0)}) {
        auto p = make_gradient_propagator(one, one_plan, h);
        Objective objective(*p, misfit, observed_data(one, one_plan, *p), Parameterisation::velocity, one_plan.dt);
        results.push_back(objective.evaluate(velocity, true));
      }
      CHECK(results[1].misfit == results[0].misfit);
      CHECK(results[1].gradient == results[0].gradient);
      CHECK(results[0].misfit > 0);
    }
    // fp64: F dV against the central difference of forward runs at V +- dV (0.1% of V), and the Taylor tests.
    const Case c = spectral_attenuation_case(Precision::fp64, density);
    double norm = 0;
    const double relative = born_against_forward_runs(c, norm);
    MESSAGE(what << ": |F dV - central difference| / |F dV| = " << relative);
    CHECK(norm > 0);
    CHECK(relative < 1e-5);
    check_velocity_taylor(c, what);
    if (!density) continue;
    Case with_density = c;
    with_density.inversion.density_parameter = true;
    specwave::testing::check_density_gradient(with_density, {10.0, 14.0, 15.0}, 1e-5);
  }
}
