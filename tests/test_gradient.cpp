// The adjoint of the FDTD scheme and the gradient (docs/numerics.md, "Adjoint and gradient"): dot-product
// tests of the Born operator and its transpose, Taylor tests of the gradient, history strategies.
// A backend test (tests/test_backend.hpp): test_gradient runs it on the CPU, test_gradient_cuda on the CUDA FDTD
// gradient. The operator tests (dot products, Taylor, illumination, the velocity limit) build their cases with
// gradient_test_case below, on the tested backend, with the same bounds: they are properties of the discrete
// operators in a precision (an exact transpose, a first-order expansion, sums of the same fields), which the CUDA
// gradient implements step for step (solver/propagators/fdtd/fdtd_cuda_gradient.cpp). The history strategy tests
// exercise the CPU histories (binomial, disk, boundary saving; the CUDA gradient has every step or segment checkpoints,
// on the device or in pinned host memory, compared in tests/test_gpu.cpp) and the spectral gradient (CPU only): on CUDA
// they say so and return. The CUDA gradient against the CPU one compares the tested backend with the CPU: on the
// CPU it says so and returns. The tests of host-side logic (history choice, misfits) use no backend and run as
// they are.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <random>
#include <tuple>

#include "case_builders.hpp"
#include "io/hdf5.hpp"
#include "solver/case/errors.hpp"
#include "solver/forward/forward.hpp"
#include "solver/inversion/gradient_check.hpp"
#include "solver/inversion/objective.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/history/boundary_history.hpp"
#include "solver/propagators/propagator.hpp"
#include "test_backend.hpp"
#include "validation/reference.hpp"

using namespace specwave;

namespace {

// tests/case_builders.hpp's gradient case, on the tested backend.
Case gradient_test_case(bool free_surface, Precision precision, int order = 8) {
  return testing::on_test_backend(testing::gradient_test_case(free_surface, precision, order));
}

// What the CUDA entry says of the tests of the CPU wavefield histories.
constexpr const char* cpu_histories =
    "it compares the CPU wavefield histories (binomial, disk, boundary saving) and the spectral gradient's (CPU "
    "only); the CUDA gradient's (every step, segment checkpoints; device and pinned host memory) are compared in "
    "tests/test_gpu.cpp";

// What the tests of the tested backend against the CPU backend say on the CPU.
constexpr const char* against_cpu = "it compares the tested backend with the CPU backend";

using testing::rel_l2;

}  // namespace

TEST_CASE(
    "the Taylor test's verdict: slope 2 where r2 is measurable, the fitted gradient error where J's rounding hides "
    "it") {
  // J(m + h dm) = J0 + g h + c h^2 exactly (an exact gradient g), then a gradient wrong along dm by 1% or 0.2%.
  const auto run = [](double j0, double g, double c, double given) {
    return taylor_rows(j0, given, taylor_steps, [=](double h) { return j0 + g * h + c * h * h; });
  };
  // J small against its change: every r2 far above 1e-10 J, the slopes over all rows.
  const TaylorResult clear = run(1.0, 1e-3, 1e-6, 1e-3);
  CHECK_FALSE(clear.second_at_floor);
  CHECK(clear.slope_second == doctest::Approx(2).epsilon(1e-4));
  CHECK(clear.passed(0.1));
  CHECK_FALSE(run(1.0, 1e-3, 1e-6, 1.01e-3).passed(0.1));  // r2 ~ 1e-5 h: slope 1
  // J large against its change (an independent probe's case: h g dm / J about 1e-8): r2 at the rounding of J, whose
  // slope is noise, so the verdict is the fitted error a / g.dm, which a curvature however large leaves at 0.
  for (const double curvature : {1e-6, 1e-4}) {
    CAPTURE(curvature);
    const TaylorResult buried = run(1e4, 1e-3, curvature, 1e-3);
    CHECK(buried.second_at_floor);
    CHECK(buried.gradient_error < 1e-6);
    CHECK(buried.passed(0.1));
  }
  // The wrong gradients fail there: their a / g.dm is their error.
  for (const double wrong : {1.01e-3, 1.002e-3}) {
    CAPTURE(wrong);
    const TaylorResult r = run(1e4, 1e-3, 1e-6, wrong);
    CHECK(r.second_at_floor);
    CHECK(r.gradient_error == doctest::Approx(std::abs(wrong - 1e-3) / wrong).epsilon(0.02));
    CHECK_FALSE(r.passed(0.1));
  }
}

TEST_CASE("FDTD Born operator and its adjoint: dot-product test") {
  struct Config {
    const char* name;
    bool free_surface;
    Precision precision;
    int order;
    double tolerance;
  };
  for (const Config& cfg : {Config{"fp64, CPML on all faces, order 8", false, Precision::fp64, 8, 1e-10},
                            Config{"fp64, free surface + CPML, order 8", true, Precision::fp64, 8, 1e-10},
                            Config{"fp64, free surface + CPML, order 2", true, Precision::fp64, 2, 1e-10},
                            Config{"fp32, CPML on all faces, order 8", false, Precision::fp32, 8, 1e-4},
                            Config{"fp32, free surface + CPML, order 4", true, Precision::fp32, 4, 1e-4}}) {
    const std::string config = cfg.name;
    CAPTURE(config);
    const Case c = gradient_test_case(cfg.free_surface, cfg.precision, cfg.order);
    const Plan plan = make_plan(c);
    for (int shot = 0; shot < 2; ++shot) {
      const DotTestResult r = born_dot_test(c, plan, shot, 1234 + shot);
      MESSAGE(config << " shot " << shot << ": <F dm, dd> = " << r.lhs << ", <dm, F^T dd> = " << r.rhs
                     << ", relative mismatch " << r.mismatch);
      CHECK(r.lhs != 0);
      CHECK(r.mismatch <= cfg.tolerance);
    }
  }
}

TEST_CASE("dot-product test with force sources (the source's derivative stencil in the forward and the adjoint)") {
  // A force source injects the derivative stencil G / (dz dy dx) with the factor V of each point, as a pressure source
  // its weights (docs/numerics.md, "Force sources and particle-velocity receivers"): the adjoint must carry it too.
  Case c = gradient_test_case(true, Precision::fp64);
  for (auto& shot : c.shots) {
    shot.sources[0].kind = SourceKind::force;
    shot.sources[0].direction = {0.6, 0.0, -0.8};
  }
  const Plan plan = make_plan(c);
  for (int shot = 0; shot < 2; ++shot) {
    const DotTestResult r = born_dot_test(c, plan, shot, 77 + shot);
    MESSAGE("force source, shot " << shot << ": relative mismatch " << r.mismatch);
    CHECK(r.lhs != 0);
    CHECK(r.mismatch <= 1e-10);
  }
}

TEST_CASE("dot-product test on a thin grid whose only z layer (free surface on top) starts above z = W") {
  // nz = W + 2R + 1: the high-z layer begins at iz = 2R + 1 < W. Both the forward CPML and its adjoint must
  // file those points under the high face.
  Case c = gradient_test_case(true, Precision::fp64, 4);
  c.grid.shape[0] = 6 + 4 + 1;
  c.receivers = {{12.5, 110.0, 205.0}, {40.0, 133.0, 140.0}};
  c.shots.resize(1);
  c.model.center[0] = 50;
  const Plan plan = make_plan(c);
  const DotTestResult r = born_dot_test(c, plan, 0, 99);
  MESSAGE("thin grid: relative mismatch " << r.mismatch);
  CHECK(r.mismatch <= 1e-10);
}

namespace {

// The case with observed data from a shifted anomaly: the starting model is the case's own.
Case taylor_case(Parameterisation p) {
  Case c = testing::on_test_backend(testing::gradient_data_case(true, Precision::fp64));
  c.inversion.parameterisation = p;
  return c;
}

}  // namespace

TEST_CASE("Taylor test of the gradient: first-order remainder slope 1, second-order slope 2 (fp64)") {
  for (Parameterisation p : {Parameterisation::velocity, Parameterisation::slowness2}) {
    const std::string parameterisation = to_string(p);
    CAPTURE(parameterisation);
    const Case c = taylor_case(p);
    const Plan plan = make_plan(c);
    auto propagator = make_gradient_propagator(c, plan, HistoryChoice{});
    LeastSquaresMisfit misfit;
    Objective objective(*propagator, misfit, observed_data(c, plan, *propagator), p, plan.dt);
    const std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
    const std::vector<double> model = parameter_from_velocity(p, velocity);
    const std::vector<double> direction = smooth_direction(c.grid, model, 0.02);
    const TaylorResult r = taylor_test(objective, model, direction, taylor_steps);
    for (const auto& row : r.rows)
      MESSAGE(parameterisation << " h " << row.h << " r1 " << row.first << " r2 " << row.second);
    MESSAGE(parameterisation << ": J = " << r.misfit << ", g.dm = " << r.directional_derivative << ", slopes "
                             << r.slope_first << ", " << r.slope_second);
    CHECK(std::abs(r.slope_first - 1) <= 0.1);
    CHECK(std::abs(r.slope_second - 2) <= 0.1);
  }
}

TEST_CASE("gradient with particle-velocity receivers and a force source: dot-product and Taylor tests (fp64)") {
  // Four-component receivers (p, vz, vy, vx at each position) and a force source: the gradient propagator hands out
  // the velocity traces and applies the transpose of their time integral to the adjoint source (docs/numerics.md,
  // "Force sources and particle-velocity receivers"). The Born dot product checks that transpose; the Taylor test
  // the whole chain against the forward model.
  Case c = testing::on_test_backend(testing::gradient_data_case(true, Precision::fp64));
  c.model.density = 1000;
  c.shots[1].sources[0].kind = SourceKind::force;
  c.shots[1].sources[0].direction = {0.0, 0.6, 0.8};
  testing::four_component_receivers(c);
  const Plan plan = make_plan(c);
  for (int shot = 0; shot < 2; ++shot) {
    const DotTestResult r = born_dot_test(c, plan, shot, 4321 + shot);
    MESSAGE("velocity receivers, shot " << shot << ": relative mismatch " << r.mismatch);
    CHECK(r.lhs != 0);
    CHECK(r.mismatch <= 1e-10);
  }
  auto propagator = make_gradient_propagator(c, plan, HistoryChoice{});
  // Each velocity trace scaled by rho v = 2e6 so that it weighs as much as the pressure traces in the misfit.
  const ObservedData observed = observed_data(c, plan, *propagator);
  TraceWeightedMisfit misfit(std::make_unique<LeastSquaresMisfit>(), testing::component_weights(c, 4e12), plan.nt);
  Objective objective(*propagator, misfit, observed, Parameterisation::velocity, plan.dt);
  const std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
  const std::vector<double> direction = smooth_direction(c.grid, velocity, 0.02);
  const TaylorResult t = taylor_test(objective, velocity, direction, taylor_steps);
  MESSAGE("velocity receivers: J = " << t.misfit << ", slopes " << t.slope_first << ", " << t.slope_second);
  CHECK(std::abs(t.slope_first - 1) <= 0.1);
  CHECK(std::abs(t.slope_second - 2) <= 0.1);
}

TEST_CASE(
    "CUDA FDTD gradient agrees with the CPU gradient: fp64 <= 1e-12, fp32 <= 1e-5 (misfit, gradient, illumination)") {
  // fp64: both backends run the same scheme; only rounding differs (FMA contraction, the order of a few sums), far
  // below 1e-12 after nt steps, as for the forward propagators (tests/test_physics.cpp). fp32: the same rounding
  // differences at 6e-8 per operation, grown over nt ~ 400 steps of the forward and the adjoint pass: the forward
  // test's 1e-5 holds for traces and fields, and the gradient is a sum of products of such fields.
  if (testing::not_on_cpu(against_cpu)) return;
  struct Config {
    const char* name;
    bool free_surface;
    int order;
  };
  for (const Config& cfg :
       {Config{"CPML on all faces, order 8", false, 8}, Config{"free surface + CPML, order 4", true, 4}})
    for (const auto& [precision, tolerance] : {std::pair{Precision::fp64, 1e-12}, std::pair{Precision::fp32, 1e-5}}) {
      const std::string config = std::string(cfg.name) + (precision == Precision::fp64 ? " fp64" : " fp32");
      CAPTURE(config);
      const Case cpu = testing::gradient_data_case(cfg.free_surface, precision, cfg.order);
      const Case gpu = testing::on_test_backend(cpu);
      const Plan cpu_plan = make_plan(cpu), gpu_plan = make_plan(gpu);
      REQUIRE(gpu_plan.backend == BackendKind::cuda);
      auto a = make_gradient_propagator(cpu, cpu_plan, HistoryChoice{});
      auto b = make_gradient_propagator(gpu, gpu_plan, HistoryChoice{});
      REQUIRE(b->name().rfind("fdtd-cuda-", 0) == 0);
      const ObservedData observed = observed_data(cpu, cpu_plan, *a);  // the same data for both
      LeastSquaresMisfit misfit;
      Objective oa(*a, misfit, observed, Parameterisation::velocity, cpu_plan.dt);
      Objective ob(*b, misfit, observed, Parameterisation::velocity, gpu_plan.dt);
      const std::vector<double> velocity(cpu_plan.model.velocity.begin(), cpu_plan.model.velocity.end());
      const MisfitGradient ga = oa.evaluate(velocity, true), gb = ob.evaluate(velocity, true);
      const double misfit_difference = std::abs(gb.misfit - ga.misfit) / ga.misfit;
      const double gradient_difference = rel_l2(gb.gradient, ga.gradient);
      // Illumination of shot 0: CPU and the tested backend.
      const std::size_t points = std::size_t(cpu.grid.points());
      std::vector<double> ia(points, 0.0), ib(points, 0.0), scratch(points, 0.0);
      const std::vector<double> traces = a->forward(0, true);
      b->forward(0, true);
      std::vector<double> residual(traces.size());
      for (std::size_t k = 0; k < traces.size(); ++k) residual[k] = traces[k] - observed[0][k];
      a->adjoint(residual, scratch, ia);
      std::fill(scratch.begin(), scratch.end(), 0.0);
      b->adjoint(residual, scratch, ib);
      const double illumination_difference = rel_l2(ib, ia);
      MESSAGE(config << ": misfit " << misfit_difference << ", gradient " << gradient_difference << ", illumination "
                     << illumination_difference);
      CHECK(ga.misfit > 0);
      CHECK(misfit_difference <= tolerance);
      CHECK(gradient_difference <= tolerance);
      CHECK(illumination_difference <= tolerance);
    }
}

TEST_CASE("the fp32 gradient is the fp64 gradient up to fp32 rounding (the same data and model)") {
  // Both runs take the fp64 run's observed data. The fp32 traces carry rounding of relative size about
  // u sqrt(nt) (u = 2^-24; the forward tests measure it), which the residual d_syn - d_obs amplifies by
  // |d_syn| / |d_syn - d_obs|; the gradient is a sum over nt steps of products of such fields, so it carries the
  // same order. The bound takes c = 16 for the constant. A wrong imaging term, time index or partial-sum flush
  // gives errors of order 1 (a lost block of 16 steps is about 10%).
  struct Config {
    const char* name;
    bool free_surface;
    int order;
  };
  for (const Config& cfg :
       {Config{"CPML on all faces, order 8", false, 8}, Config{"free surface + CPML, order 4", true, 4}}) {
    CAPTURE(cfg.name);
    const Case c64 =
        testing::on_test_backend(testing::gradient_data_case(cfg.free_surface, Precision::fp64, cfg.order));
    Case c32 = c64;
    c32.run.precision = Precision::fp32;
    const Plan p64 = make_plan(c64), p32 = make_plan(c32);
    auto g64 = make_gradient_propagator(c64, p64, HistoryChoice{});
    auto g32 = make_gradient_propagator(c32, p32, HistoryChoice{});
    const ObservedData observed = observed_data(c64, p64, *g64);
    LeastSquaresMisfit misfit;
    Objective o64(*g64, misfit, observed, Parameterisation::velocity, p64.dt);
    Objective o32(*g32, misfit, observed, Parameterisation::velocity, p32.dt);
    const std::vector<double> velocity(p64.model.velocity.begin(), p64.model.velocity.end());
    const MisfitGradient a = o64.evaluate(velocity, true), b = o32.evaluate(velocity, true);
    // |d_syn| / |d_syn - d_obs| over all shots, from the fp64 run.
    double data = 0, residual = 0;
    for (std::size_t shot = 0; shot < observed.size(); ++shot) {
      const std::vector<double> d = g64->forward(int(shot), false);
      for (std::size_t k = 0; k < d.size(); ++k) {
        data += d[k] * d[k];
        residual += (d[k] - observed[shot][k]) * (d[k] - observed[shot][k]);
      }
    }
    const double amplification = std::sqrt(data / residual);
    const double tolerance = 16 * 0x1p-24 * std::sqrt(double(p64.nt)) * amplification;
    const double difference = rel_l2(b.gradient, a.gradient);
    MESSAGE(std::string(cfg.name) << ": fp32 against fp64 gradient " << difference << " (nt " << p64.nt
                                  << ", amplification " << amplification << ", tolerance " << tolerance << ")");
    CHECK(a.misfit > 0);
    CHECK(difference <= tolerance);
  }
}

TEST_CASE("CUDA FDTD Born operator and its adjoint: dot-product test (fp64 <= 1e-10, fp32 <= 1e-4)") {
  // The bounds of the dot-product test above, on the gradient tests' case with observed data from a shifted
  // anomaly, order 8, both boundary set-ups, both shots, on the tested backend: the adjoint is the exact transpose.
  for (const auto& [precision, tolerance] : {std::pair{Precision::fp64, 1e-10}, std::pair{Precision::fp32, 1e-4}})
    for (bool free_surface : {false, true}) {
      CAPTURE(free_surface);
      CAPTURE(tolerance);
      const Case c = testing::on_test_backend(testing::gradient_data_case(free_surface, precision, 8));
      const Plan plan = make_plan(c);
      for (int shot = 0; shot < 2; ++shot) {
        const DotTestResult r = born_dot_test(c, plan, shot, 1234 + shot);
        MESSAGE(std::string(to_string(c.run.backend)) << " dot test, free surface " << free_surface << " shot " << shot
                                                      << ": relative mismatch " << r.mismatch);
        CHECK(r.lhs != 0);
        CHECK(r.mismatch <= tolerance);
      }
    }
}

namespace {

// The spectral case of the strategy test (tests/case_builders.hpp) with one shot and observed data from a moved
// anomaly.
Case spectral_strategy_case(SpectralAbsorber absorber) {
  Case c = specwave::testing::spectral_gradient_case(absorber, Precision::fp64);
  c.shots.resize(1);
  ModelSpec truth = c.model;
  truth.center = {110, 135, 130};
  truth.anomaly = -100;
  c.inversion.true_model = truth;
  return c;
}

// A folder of this process's own under the temporary folder (other checkouts run the same tests), removed at exit.
std::string scratch_folder() {
  static const struct Folder {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("specwave-test-history-" + std::to_string(::getpid()));
    Folder() { std::filesystem::create_directories(path); }
    ~Folder() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } folder;
  return folder.path.string();
}

}  // namespace

TEST_CASE("illumination of the adjoint pass: the sum of (u^n)^2 of the forward propagator's fields") {
  // The same scheme in the same precision: equal to rounding in the sums (relative 1e-12 in fp64, 1e-5 in fp32).
  // On CUDA too: the forward propagator and the gradient both run the generic per-point stencil kernel.
  for (const auto& [free_surface, precision, tolerance] :
       {std::tuple{false, Precision::fp64, 1e-12}, std::tuple{true, Precision::fp64, 1e-12},
        std::tuple{false, Precision::fp32, 1e-5}}) {
    CAPTURE(free_surface);
    CAPTURE(tolerance);
    Case c = gradient_test_case(free_surface, precision);
    c.inversion.true_model = c.model;  // observed data: any will do
    const Plan plan = make_plan(c);
    const auto r = specwave::testing::compare_illumination(c, plan);
    MESSAGE("illumination, relative L2 difference " << r.relative_difference);
    CHECK(r.norm > 0);
    CHECK(r.relative_difference <= tolerance);
  }
}

TEST_CASE("every wavefield history strategy gives bitwise the same gradient (FDTD and spectral, fp64 and fp32)") {
  // Replayed steps are the same deterministic operations from saved states that hold everything a step reads
  // (spectral: the same FFTW plans on arrays of the same alignment), and the disk returns the bytes written: the
  // fields handed to the adjoint are the same bits, and so is the gradient.
  if (testing::cpu_only(cpu_histories)) return;
  struct Config {
    const char* name;
    Case c;
  };
  std::vector<Config> configs = {{"fdtd, CPML on all faces", gradient_test_case(false, Precision::fp64)},
                                 {"fdtd, free surface + CPML", taylor_case(Parameterisation::velocity)},
                                 {"spectral, split-field PML", spectral_strategy_case(SpectralAbsorber::pml)},
                                 {"spectral, damping layer", spectral_strategy_case(SpectralAbsorber::damping)}};
  configs[0].c.inversion.true_model = configs[1].c.inversion.true_model;
  for (const Config& config : configs)
    for (Precision precision : {Precision::fp64, Precision::fp32}) {
      const std::string name = std::string(config.name) + ", " + to_string(precision);
      CAPTURE(name);
      Case c = config.c;
      c.run.precision = precision;
      c.shots.resize(1);
      const Plan plan = make_plan(c);
      const int nt = plan.nt;
      const std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
      LeastSquaresMisfit misfit;
      std::vector<HistoryChoice> choices = {all_steps_choice(nt, 0),
                                            segment_checkpoint_choice(nt, 7, 0, 0),
                                            segment_checkpoint_choice(nt, 1, 0, 0),
                                            segment_checkpoint_choice(nt, nt + 3, 0, 0),
                                            binomial_choice(nt, 2, 0, 0),
                                            binomial_choice(nt, 5, 0, 0),
                                            binomial_choice(nt, nt / 3, 0, 0),
                                            binomial_choice(nt, nt + 3, 0, 0),
                                            disk_choice(nt, 0, scratch_folder())};
      std::vector<MisfitGradient> results;
      std::vector<std::string> names;
      ObservedData observed;
      for (const HistoryChoice& h : choices) {
        auto propagator = make_gradient_propagator(c, plan, h);
        if (observed.empty()) observed = observed_data(c, plan, *propagator);
        Objective objective(*propagator, misfit, observed, Parameterisation::velocity, plan.dt);
        results.push_back(objective.evaluate(velocity, true));
        names.push_back(propagator->history_name());
        if (results.size() == 1) {  // the propagator's second gradient: its kept adjoint state starts at rest again
          const MisfitGradient again = objective.evaluate(velocity, true);
          CHECK(again.misfit == results[0].misfit);
          CHECK(again.gradient == results[0].gradient);
        }
        // The last shot's forward steps: the choice's recompute factor, counted.
        CAPTURE(names.back());
        CHECK(propagator->history_forward_steps() == std::llround(h.recompute_factor * nt));
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
  // No scratch file is left behind.
  CHECK(std::filesystem::is_empty(scratch_folder()));
}

namespace {

// A stepper whose state is its position n and whose field u^n is (n, -n): what a history hands out shows which
// step it came from, and a step from the wrong position is recorded.
struct PositionStepper final : ForwardStepper<double> {
  int position = 0;
  long long steps = 0;
  bool wrong_step = false;
  std::size_t state_values() const override { return 1; }
  void save_state(std::span<double> out) const override { out[0] = position; }
  void restore_state(std::span<const double> in) override { position = int(in[0]); }
  void step(int n) override {
    wrong_step = wrong_step || n != position;
    ++position;
    ++steps;
  }
  std::size_t field_values() const override { return 2; }
  void copy_field(std::span<double> out) const override { out[0] = position, out[1] = -position; }
};

// The minimal forward steps by dynamic programming over the first checkpoint m (independent of the closed form):
// cost(l, s) = min_m m + cost(l - m, s - 1) + cost(m - 1, s); cost(l, 1) = l + cost(l - 1, 1); cost(0, s) = 0.
std::vector<std::vector<long long>> optimal_steps_table(int max_l, int max_s) {
  std::vector<std::vector<long long>> cost(std::size_t(max_l) + 1, std::vector<long long>(std::size_t(max_s) + 1, 0));
  for (int l = 1; l <= max_l; ++l) {
    cost[l][1] = l + cost[l - 1][1];
    for (int s = 2; s <= max_s; ++s) {
      long long best = std::numeric_limits<long long>::max();
      for (int m = 1; m <= l; ++m) best = std::min(best, m + cost[l - m][s - 1] + cost[m - 1][s]);
      cost[l][s] = best;
    }
  }
  return cost;
}

struct Reversal {
  double field = 0;     // max_n ||r^n - u^n|| / max_n ||u^n||: rebuilt (r) against stored (u) fields
  double gradient = 0;  // ||g_boundary - g_memory|| / ||g_memory|| over two shots
  double gradient_norm = 0;
  int nt = 0;
};

double norm2(std::span<const double> a) {
  double s = 0;
  for (double v : a) s += v * v;
  return std::sqrt(s);
}

Reversal measure_reversal(const Case& c) {
  const Plan plan = make_plan(c);
  const std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
  Reversal out;
  out.nt = plan.nt;
  for (int shot = 0; shot < 2; ++shot) {
    std::vector<std::vector<double>> stored(plan.nt + 1);
    double scale = 0;
    visit_fdtd_cpu_history(c, plan, all_steps_choice(0, 0), velocity, shot, [&](int n, std::span<const double> u) {
      stored[n].assign(u.begin(), u.end());
      scale = std::max(scale, norm2(u));
    });
    int expected = plan.nt;
    visit_fdtd_cpu_history(c, plan, boundary_choice(0, 0), velocity, shot, [&](int n, std::span<const double> r) {
      CHECK(n == expected--);
      double d = 0;
      for (std::size_t k = 0; k < r.size(); ++k) d += (r[k] - stored[n][k]) * (r[k] - stored[n][k]);
      out.field = std::max(out.field, std::sqrt(d) / scale);
    });
  }
  LeastSquaresMisfit misfit;
  std::vector<std::vector<double>> g;
  for (const HistoryChoice& h : {all_steps_choice(0, 0), boundary_choice(0, 0)}) {
    auto propagator = make_gradient_propagator(c, plan, h);
    Objective objective(*propagator, misfit, observed_data(c, plan, *propagator), Parameterisation::velocity, plan.dt);
    g.push_back(objective.evaluate(velocity, true).gradient);
  }
  std::vector<double> diff(g[0].size());
  for (std::size_t k = 0; k < diff.size(); ++k) diff[k] = g[1][k] - g[0][k];
  out.gradient_norm = norm2(g[0]);
  out.gradient = norm2(diff) / out.gradient_norm;
  return out;
}

}  // namespace

TEST_CASE(
    "receivers per shot: the shared receivers given per shot are bitwise the shared run; each shot's own pass "
    "the dot and Taylor tests (FDTD and spectral)") {
  if (testing::cpu_only("receivers per shot run on the CPU backend (make_plan refuses them on CUDA)")) return;
  for (const bool spectral : {false, true}) {
    CAPTURE(spectral);
    Case shared = spectral ? testing::spectral_gradient_case(SpectralAbsorber::pml, Precision::fp64)
                           : testing::gradient_data_case(false, Precision::fp64);
    if (spectral) {
      ModelSpec truth = shared.model;
      truth.kind = ModelSpec::Kind::gaussian, truth.anomaly = 150, truth.radius = 40;
      truth.center = {shared.grid.shape[0] * 5.0, shared.grid.shape[1] * 5.0, shared.grid.shape[2] * 5.0};
      shared.inversion.true_model = truth;
    }
    // The same receivers given to every shot as its own: traces, misfit, gradient and illumination bit for bit.
    Case own = shared;
    for (auto& shot : own.shots) shot.receivers = shared.receivers;
    REQUIRE(!shared_receivers(own));
    const auto evaluate = [](const Case& c, std::vector<std::vector<double>>& traces) {
      const Plan plan = make_plan(c);
      traces.clear();
      for (const auto& out : simulate_shots(c, plan, {0, 1})) traces.push_back(out.traces);
      auto propagator = make_gradient_propagator(c, plan, HistoryChoice{});
      LeastSquaresMisfit misfit;
      Objective objective(*propagator, misfit, observed_data(c, plan, *propagator), Parameterisation::velocity,
                          plan.dt);
      const std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
      return objective.evaluate(velocity, true, true);
    };
    std::vector<std::vector<double>> ts, to;
    const MisfitGradient a = evaluate(shared, ts), b = evaluate(own, to);
    CHECK(ts == to);
    CHECK(a.misfit == b.misfit);
    CHECK(a.misfit > 0);
    CHECK(a.gradient == b.gradient);
    CHECK(a.illumination == b.illumination);

    // Each shot its own receivers (2 and 4, at other places): the Born operator's transpose and the gradient.
    Case streamer = shared;
    const auto& r = shared.receivers;
    streamer.shots[0].receivers = {r[0], r[1]};
    streamer.shots[1].receivers = {r[2], r[1], {r[0][0], r[0][1] - 20, r[0][2] - 30}, {r[2][0], r[2][1] - 10, r[2][2]}};
    const Plan plan = make_plan(streamer);
    for (int shot : {0, 1}) {
      const DotTestResult d = born_dot_test(streamer, plan, shot, 7 + std::uint64_t(shot));
      CAPTURE(shot);
      MESSAGE("receivers per shot, " << std::string(spectral ? "spectral" : "FDTD") << " shot " << shot
                                     << ": dot-test mismatch " << d.mismatch);
      CHECK(d.mismatch <= 1e-10);
    }
    auto propagator = make_gradient_propagator(streamer, plan, HistoryChoice{});
    LeastSquaresMisfit misfit;
    const ObservedData observed = observed_data(streamer, plan, *propagator);
    REQUIRE(observed[0].size() == 2 * std::size_t(plan.nt));
    REQUIRE(observed[1].size() == 4 * std::size_t(plan.nt));
    Objective objective(*propagator, misfit, observed, Parameterisation::velocity, plan.dt);
    const std::vector<double> model(plan.model.velocity.begin(), plan.model.velocity.end());
    const TaylorResult t = taylor_test(objective, model, smooth_direction(streamer.grid, model, 0.02), taylor_steps);
    MESSAGE("receivers per shot, " << std::string(spectral ? "spectral" : "FDTD") << ": Taylor slopes " << t.slope_first
                                   << ", " << t.slope_second);
    CHECK(std::abs(t.slope_first - 1) <= 0.1);
    CHECK(std::abs(t.slope_second - 2) <= 0.1);
  }
}

TEST_CASE("source filters: the filter and its transpose are exact adjoints; the identity leaves traces as they are") {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal;
  const int nt = 173;
  SourceFilters filters(nt, 2, false);
  std::vector<double> a(nt), b(nt), fa, tb;
  for (auto& v : a) v = normal(rng);
  for (auto& v : b) v = normal(rng);
  fa = a;
  filters.apply(1, fa);  // the identity until set
  double most = 0;
  for (int n = 0; n < nt; ++n) most = std::max(most, std::abs(fa[std::size_t(n)] - a[std::size_t(n)]));
  CHECK(most <= 1e-14);
  for (int f = 0; f < 2; ++f) {
    auto h = filters.spectrum(f);
    for (std::size_t k = 0; k < h.size(); ++k)
      h[k] = {normal(rng), k == 0 || 2 * k == std::size_t(filters.padded()) ? 0.0 : normal(rng)};
  }
  fa = a, tb = b;
  filters.apply(1, fa);
  filters.apply(1, tb, true);
  double lhs = 0, rhs = 0;
  for (int n = 0; n < nt; ++n)
    lhs += fa[std::size_t(n)] * b[std::size_t(n)], rhs += a[std::size_t(n)] * tb[std::size_t(n)];
  MESSAGE("source filter adjoint: <F a, b> = " << lhs << ", <a, F^T b> = " << rhs);
  CHECK(std::abs(lhs - rhs) <= 1e-12 * std::max(std::abs(lhs), std::abs(rhs)));
  // Flat round trip (the inversion state).
  SourceFilters copy(nt, 2, false);
  copy.set_flat(filters.flat());
  CHECK(copy.flat() == filters.flat());
}

TEST_CASE(
    "source estimation: the Wiener filter recovers the wavelet the data were made with; the filtered misfit "
    "passes the Taylor test") {
  if (testing::cpu_only("it exercises host-side estimation with the CPU gradient propagator")) return;
  for (const char* mode : {"per_shot", "shared"}) {
    const std::string mode_name = mode;  // a string: doctest prints a const char* capture as a pointer
    CAPTURE(mode_name);
    Case c = testing::gradient_data_case(false, Precision::fp64);
    c.inversion.source_estimation = mode;
    c.time.duration = 0.3;  // every arrival of either wavelet within the traces (the filter sees whole events)
    // The data: the true model, and a wavelet the case does not know (another peak frequency, a later delay, another
    // amplitude).
    Case truth = c;
    truth.model = *c.inversion.true_model;
    for (auto& shot : truth.shots)
      for (auto& src : shot.sources)
        src.wavelet.peak_frequency = 19, src.wavelet.delay = 0.05, src.wavelet.amplitude = 1.7;
    const Plan plan = make_plan(c), truth_plan = make_plan(truth);
    REQUIRE(plan.nt == truth_plan.nt);
    REQUIRE(plan.dt == truth_plan.dt);
    auto observed_propagator = make_gradient_propagator(truth, truth_plan, HistoryChoice{});
    const std::vector<double> true_velocity(truth_plan.model.velocity.begin(), truth_plan.model.velocity.end());
    observed_propagator->set_velocity(true_velocity);
    ObservedData observed;
    for (int s = 0; s < 2; ++s) observed.push_back(observed_propagator->forward(s, false));

    auto propagator = make_gradient_propagator(c, plan, HistoryChoice{});
    // The damping biases F by P / (P + eps) at each frequency (P the synthetic power): the error falls with it, to
    // about 2e-3 at 1e-5 and below (the lowest frequencies, where the case's Ricker has almost no power, stay damped).
    // Measured: 4.6e-2 at 1e-2, 1.1e-2 at 1e-3 (the default), 3.4e-3 at 1e-4.
    for (const auto& [damping_, bound_] : std::vector<std::pair<double, double>>{{1e-3, 1.5e-2}, {1e-4, 5e-3}}) {
      const double damping = damping_, bound = bound_;  // clang 14 cannot capture a structured binding
      CAPTURE(damping);
      c.inversion.source_estimation_damping = damping;
      const SourceFilters filters = estimate_source_filters(c, plan, *propagator, observed, true_velocity, {});
      const auto wavelets = estimated_wavelets(c, plan, filters);
      REQUIRE(int(wavelets.size()) == filters.count());
      for (std::size_t k = 0; k < wavelets.size(); ++k) {
        const double error = rel_l2(wavelets[k], std::vector<double>(truth_plan.wavelets[k][0].begin(),
                                                                     truth_plan.wavelets[k][0].begin() + plan.nt));
        MESSAGE("source estimation (" << mode_name << ", damping " << damping << "), filter " << k
                                      << ": relative L2 error of the wavelet " << error);
        CHECK(error <= bound);
      }
    }
    c.inversion.source_estimation_damping = 1e-3;

    // The misfit of the filtered synthetic data, low-passed and windowed: a Taylor test at the starting model.
    c.inversion.mute_velocity = 2500;
    c.inversion.offset_min = 10;
    const auto shared_filters = std::make_shared<const SourceFilters>(
        estimate_source_filters(c, plan, *propagator, observed,
                                std::vector<double>(plan.model.velocity.begin(), plan.model.velocity.end()), {}));
    const auto misfit = case_misfit(c, plan, 30.0, nullptr, shared_filters);
    Objective objective(*propagator, *misfit, observed, Parameterisation::velocity, plan.dt);
    const std::vector<double> model(plan.model.velocity.begin(), plan.model.velocity.end());
    const TaylorResult t = taylor_test(objective, model, smooth_direction(c.grid, model, 0.02), taylor_steps);
    MESSAGE("source estimation (" << mode_name << "), misfit " << misfit->name() << ": Taylor slopes " << t.slope_first
                                  << ", " << t.slope_second);
    CHECK(std::abs(t.slope_first - 1) <= 0.1);
    CHECK(std::abs(t.slope_second - 2) <= 0.1);
  }
}

TEST_CASE("boundary saving: rebuilt fields and gradient against every step stored") {
  // The reverse step differs from the forward one by rounding only; the leapfrog carries those errors without
  // amplifying them, and errors of different steps add like a random walk: relative error about
  // c u sqrt(n_steps) with u the unit roundoff and c = O(1) (docs/numerics.md, "Boundary saving": the analysis;
  // measured c <= 0.9). The tolerance takes c = 16 and all nt steps (the field's energy leaves through the CPML
  // long before, so fewer steps count): a wrong point set, source term or free surface gives errors of order 1.
  if (testing::cpu_only("boundary saving is a history of the CPU FDTD gradient (visit_fdtd_cpu_history)")) return;
  for (bool free_surface : {false, true})
    for (int order : {2, 8})
      for (Precision precision : {Precision::fp64, Precision::fp32}) {
        Case c = gradient_test_case(free_surface, precision, order);
        ModelSpec truth = c.model;
        truth.center = {120, 150, 150};
        truth.anomaly = 200;
        c.inversion.true_model = truth;
        c.time.duration = 0.3;
        const Reversal r = measure_reversal(c);
        const double unit_roundoff = precision == Precision::fp64 ? 0x1p-53 : 0x1p-24;
        const double tolerance = 16 * unit_roundoff * std::sqrt(double(r.nt));
        const std::string config = std::string(free_surface ? "free surface + CPML" : "CPML on all faces") +
                                   ", order " + std::to_string(order) + ", " + to_string(precision);
        CAPTURE(config);
        MESSAGE(config << ", nt " << r.nt << ": fields " << r.field << ", gradient " << r.gradient << " (tolerance "
                       << tolerance << ")");
        CHECK(r.field <= tolerance);
        CHECK(r.gradient <= tolerance);
        CHECK(r.gradient_norm > 0);
      }
}

TEST_CASE("boundary saving keeps the layer points of nt - 1 steps and two fields") {
  if (testing::cpu_only("boundary saving is a history of the CPU FDTD gradient")) return;
  for (bool free_surface : {false, true})
    for (Precision precision : {Precision::fp64, Precision::fp32}) {
      const Case c = gradient_test_case(free_surface, precision, 4);
      const Plan plan = make_plan(c);
      auto propagator = make_gradient_propagator(c, plan, boundary_choice(0, 0));
      propagator->set_velocity(std::vector<double>(plan.model.velocity.begin(), plan.model.velocity.end()));
      propagator->forward(1, true);
      const double value = precision == Precision::fp64 ? 8 : 4;
      const auto& shape = c.grid.shape;
      // Independent count of the layer points: every point minus the box inside the layers.
      const double inner = (shape[0] - (free_surface ? 1 : 2) * 6.0) * (shape[1] - 2 * 6.0) * (shape[2] - 2 * 6.0);
      const double layer = double(c.grid.points()) - inner;
      CHECK(double(cpml_update_points(shape, 6, free_surface)) == layer);
      CHECK(double(propagator->history_bytes()) == (plan.nt - 1) * layer * value + 2 * double(c.grid.points()) * value);
      CHECK(propagator->history_name().find("absorbing-layer") != std::string::npos);
    }
  CHECK(cpml_update_points({20, 30, 40}, 0, false) == 0);
}

TEST_CASE(
    "wavefield_storage = \"boundary\": chosen by auto when memory does not fit and it does; refused for the spectral "
    "method") {
  HistoryRequest q;
  q.nt = 1000;
  q.field_bytes = 1e6;
  q.state_bytes = 2.6e6;
  q.boundary_bytes = boundary_history_bytes(1000, 1e6, 2e5);  // 999 * 2e5 + 2e6 = 201.8e6
  CHECK(q.boundary_bytes == doctest::Approx(999 * 2e5 + 2e6));
  q.budget_bytes = 2e9;
  CHECK(choose_history(WavefieldStorage::auto_select, q).storage == WavefieldStorage::memory);
  q.budget_bytes = 5e8;
  const HistoryChoice b = choose_history(WavefieldStorage::auto_select, q);
  CHECK(b.storage == WavefieldStorage::boundary);
  CHECK(b.memory_bytes == q.boundary_bytes);
  CHECK(b.recompute_factor == doctest::Approx(1999.0 / 1000));  // the forward pass and nt - 1 reverse steps
  CHECK(describe(b).find("boundary saving") == 0);
  CHECK(choose_history(WavefieldStorage::boundary, q).storage == WavefieldStorage::boundary);
  q.budget_bytes = 2e8;  // below boundary saving: binomial checkpointing
  CHECK(choose_history(WavefieldStorage::auto_select, q).storage == WavefieldStorage::binomial);
  try {
    choose_history(WavefieldStorage::boundary, q);
    FAIL("no error above the budget");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::resources);
  }
  q.boundary_bytes = 0;  // a method without boundary saving
  q.budget_bytes = 5e8;
  CHECK(choose_history(WavefieldStorage::auto_select, q).storage == WavefieldStorage::binomial);
  CHECK_THROWS_AS(choose_history(WavefieldStorage::boundary, q), Error);

  // The CPU's history rule, on the CPU whatever the tested backend (the CUDA rule: choose_device_history below).
  Case c = testing::gradient_test_case(false, Precision::fp64, 8);
  c.inversion.wavefield_storage = WavefieldStorage::boundary;
  CHECK(history_for(c, make_plan(c)).storage == WavefieldStorage::boundary);
  c.scheme.method = Method::spectral;
  try {
    history_for(c, make_plan(c));
    FAIL("spectral with boundary saving accepted");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::invalid_case);
    CHECK(std::string(e.what()).find("inversion.wavefield_storage = \"boundary\"") != std::string::npos);
    CHECK(std::string(e.what()).find("\"checkpoints\"") != std::string::npos);
  }
}

TEST_CASE("binomial checkpointing: Griewank's closed form is the optimum of the reversal recurrence") {
  const auto table = optimal_steps_table(120, 7);
  for (int l = 0; l <= 120; ++l)
    for (int s = 1; s <= 7; ++s) {
      CAPTURE(l);
      CAPTURE(s);
      CHECK(binomial_forward_steps(l, s) == table[l][s]);
    }
  CHECK(binomial_forward_steps(800, 1) == 800LL * 801 / 2);
  CHECK(binomial_forward_steps(800, 800) == 800);
  CHECK(binomial_forward_steps(800, 5000) == 800);
  // r = 2: C(78, 76) = 3003 >= 1001 > 77: 2 * 1001 - C(78, 1).
  CHECK(binomial_forward_steps(1000, 76) == 2 * 1001 - 78);
}

TEST_CASE("binomial checkpointing: every field in reverse order, with the optimal number of forward steps") {
  const std::vector<std::pair<int, int>> cases = {{0, 1},
                                                  {1, 1},
                                                  {7, 1},
                                                  {40, 1},
                                                  {10, 2},
                                                  {60, 2},
                                                  {61, 3},
                                                  {55, 5},
                                                  {100, 4},
                                                  {257, 10},
                                                  {1000, 7},
                                                  {50, 49},
                                                  {50, 50},
                                                  {50, 51},
                                                  {50, 200},
                                                  {800, 12},
                                                  // nested as deep as its 200000 snapshots (a stack, not recursion)
                                                  {400000, 200000}};
  for (const auto& [nt, s] : cases) {
    CAPTURE(nt);
    CAPTURE(s);
    PositionStepper stepper;
    auto history = make_binomial_history<double>(s);
    history->run_forward(stepper, nt);
    CHECK(stepper.steps == nt);  // the forward pass: each step once, in order
    CHECK(history->forward_steps() == nt);
    std::vector<double> field(2);
    bool reverse_order = true;
    for (int n = nt; n >= 0; --n) {
      stepper.position = -12345;  // the adjoint may use the stepper between two fields
      history->field(stepper, n, field);
      reverse_order = reverse_order && field[0] == n && field[1] == -n;
    }
    CHECK(reverse_order);
    CHECK_FALSE(stepper.wrong_step);
    CHECK(history->forward_steps() == binomial_forward_steps(nt, s));
    CHECK(stepper.steps == binomial_forward_steps(nt, s));
    CHECK(history->bytes() == (std::size_t(std::max(1, std::min(s, nt))) + 2) * sizeof(double));
    if (nt > 0) CHECK(double(stepper.steps) / nt == doctest::Approx(binomial_choice(nt, s, 1, 1).recompute_factor));
    // A second shot replays the same schedule.
    stepper = PositionStepper{};
    history->run_forward(stepper, nt);
    for (int n = nt; n >= 0; --n) history->field(stepper, n, field);
    CHECK(field[0] == 0);
    CHECK(history->forward_steps() == binomial_forward_steps(nt, s));
  }
  // Out of order is a bug of the caller.
  PositionStepper stepper;
  auto history = make_binomial_history<double>(3);
  history->run_forward(stepper, 20);
  std::vector<double> field(2);
  history->field(stepper, 20, field);
  CHECK_THROWS_AS(history->field(stepper, 18, field), std::logic_error);
}

TEST_CASE("disk history: the fields back in reverse from a named scratch file, removed with the history") {
  const std::string folder = scratch_folder() + "/disk";
  PositionStepper stepper;
  {
    auto history = make_disk_history<double>(folder);
    history->run_forward(stepper, 30);
    CHECK(history->name().find(folder + "/specwave-wavefields-") != std::string::npos);
    int files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(folder)) {
      ++files;
      CHECK(entry.file_size() == 31 * 2 * sizeof(double));
    }
    CHECK(files == 1);
    std::vector<double> field(2);
    for (int n = 30; n >= 0; --n) {
      history->field(stepper, n, field);
      CHECK(field[0] == n);
    }
    CHECK(stepper.steps == 30);
    CHECK(history->forward_steps() == 30);
    CHECK(history->bytes() == 2 * sizeof(double));
  }
  CHECK(std::filesystem::is_empty(folder));
  // Fields too large for the file system: refused before anything is written, naming the folder and its space.
  struct HugeFields final : ForwardStepper<double> {
    std::size_t state_values() const override { return 1; }
    void save_state(std::span<double>) const override {}
    void restore_state(std::span<const double>) override {}
    void step(int) override {}
    std::size_t field_values() const override { return std::size_t(1) << 50; }  // 8 PiB a field
    void copy_field(std::span<double>) const override {}
  } huge;
  {
    auto history = make_disk_history<double>(folder);
    try {
      history->run_forward(huge, 10);
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::resources);
      const std::string msg = e.what();
      CHECK(msg.find(folder) != std::string::npos);
      CHECK(msg.find("are free") != std::string::npos);
    }
  }
  CHECK(std::filesystem::is_empty(folder));
}

TEST_CASE(
    "choose_history: memory when it fits, else binomial checkpointing with the snapshots that fit, else the disk") {
  HistoryRequest q;
  q.nt = 1000;
  q.field_bytes = 1e6;
  q.state_bytes = 2.6e6;
  q.budget_bytes = 2e9;
  const HistoryChoice all = choose_history(WavefieldStorage::auto_select, q);
  CHECK(all.storage == WavefieldStorage::memory);
  CHECK(all.memory_bytes == doctest::Approx(1001 * q.field_bytes));
  CHECK(all.recompute_factor == 1);
  CHECK(describe(all) == "every step in memory: 1001 fields, 0.932 GiB, recompute factor 1.00 (nt 1000)");

  q.budget_bytes = 2e8;
  const HistoryChoice binomial = choose_history(WavefieldStorage::auto_select, q);
  CHECK(binomial.storage == WavefieldStorage::binomial);
  CHECK(binomial.snapshots == 76);  // (2e8 - 1e6) / 2.6e6 = 76.5
  CHECK(binomial.memory_bytes <= q.budget_bytes);
  CHECK(binomial.recompute_factor == doctest::Approx(1.924));
  CHECK(describe(binomial) == "binomial checkpointing: 76 snapshots, 0.185 GiB, recompute factor 1.92 (nt 1000)");
  CHECK_THROWS_AS(choose_history(WavefieldStorage::memory, q), Error);

  const HistoryChoice cp = choose_history(WavefieldStorage::checkpoints, q);
  CHECK(cp.storage == WavefieldStorage::checkpoints);
  CHECK(cp.segment == 51);  // sqrt(1000 * 2.6)
  CHECK(cp.snapshots == 20);
  CHECK(cp.recompute_factor == 2);
  CHECK(cp.memory_bytes <= q.budget_bytes);

  // One snapshot fits, not two: auto refuses (naming the budget and the fix) unless a scratch folder is set.
  q.budget_bytes = 6e6;
  try {
    choose_history(WavefieldStorage::auto_select, q);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::resources);
    const std::string msg = e.what();
    CHECK(msg.find("budget of 0.00559 GiB") != std::string::npos);
    CHECK(msg.find("inversion.wavefield_memory_gib") != std::string::npos);
    CHECK(msg.find("inversion.scratch_directory") != std::string::npos);
  }
  CHECK(choose_history(WavefieldStorage::binomial, q).snapshots == 1);
  q.scratch_directory = "/scratch/me";
  q.scratch_directory_set = true;
  q.disk_free_bytes = 2e9;
  const HistoryChoice disk = choose_history(WavefieldStorage::auto_select, q);
  CHECK(disk.storage == WavefieldStorage::disk);
  CHECK(disk.disk_bytes == doctest::Approx(1001 * q.field_bytes));
  CHECK(disk.memory_bytes == q.field_bytes);
  CHECK(disk.scratch_directory == "/scratch/me");

  // A disk that cannot hold nt + 1 fields.
  q.disk_free_bytes = 5e8;
  try {
    choose_history(WavefieldStorage::disk, q);
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::resources);
    const std::string msg = e.what();
    CHECK(msg.find("/scratch/me") != std::string::npos);
    CHECK(msg.find("0.466 GiB are free") != std::string::npos);
  }
  CHECK_THROWS_AS(choose_history(WavefieldStorage::boundary, q), Error);
}

TEST_CASE("Taylor test of every misfit, alone and with the data low-passed (processing inside the misfit; fp64)") {
  for (const char* name : {"least_squares", "trace_normalised", "global_correlation"})
    for (const double band_hz : {0.0, 12.0})
      for (const bool windows : {false, true}) {
        const std::string misfit_name = name;
        CAPTURE(misfit_name);
        CAPTURE(band_hz);
        CAPTURE(windows);
        Case c = taylor_case(Parameterisation::velocity);
        c.inversion.misfit = name;
        if (windows) {  // a top mute through the direct arrival (the wavelet's delay is 0.06 s) and an offset range
                        // that drops one trace of each shot (offsets 41-120 m)
          c.inversion.mute_velocity = 2000.0;
          c.inversion.offset_max = 100.0;
        }
        const Plan plan = make_plan(c);
        auto propagator = make_gradient_propagator(c, plan, HistoryChoice{});
        const auto misfit = case_misfit(c, plan, band_hz);
        Objective objective(*propagator, *misfit, observed_data(c, plan, *propagator), Parameterisation::velocity,
                            plan.dt);
        const std::vector<double> model(plan.model.velocity.begin(), plan.model.velocity.end());
        const std::vector<double> direction = smooth_direction(c.grid, model, 0.02);
        const TaylorResult r = taylor_test(objective, model, direction, taylor_steps);
        MESSAGE(misfit->name() << std::string(band_hz > 0 ? " (low-passed at 12 Hz)" : "") << ": J = " << r.misfit
                               << ", g.dm = " << r.directional_derivative << ", slopes " << r.slope_first << ", "
                               << r.slope_second);
        CHECK(r.misfit > 0);
        CHECK(std::abs(r.slope_first - 1) <= 0.1);
        CHECK(std::abs(r.slope_second - 2) <= 0.1);
      }
}

TEST_CASE("regularisation: Tikhonov and total variation, values and gradients by central differences") {
  GridSpec g;
  g.shape = {5, 4, 6};
  g.spacing = {10, 12, 8};
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(1900, 2100);
  std::vector<double> m(5 * 4 * 6);
  for (double& v : m) v = u(rng);
  // Tikhonov of a field linear along x only: w/2 (points with an x neighbour) slope^2.
  std::vector<double> ramp(m.size());
  for (std::size_t k = 0; k < ramp.size(); ++k) ramp[k] = 2000 + 3.0 * double(k % 6) * 8;
  CHECK(add_regularisation({"tikhonov", 0.5, 0}, g, ramp, {}) == doctest::Approx(0.5 * 0.5 * (5 * 4 * 5) * 9.0));
  for (const char* kind : {"tikhonov", "total_variation"}) {
    const std::string regularisation = kind;
    CAPTURE(regularisation);
    const Regularisation r{kind, 0.7, 0.05};
    std::vector<double> grad(m.size(), 0.0);
    add_regularisation(r, g, m, grad);
    for (std::size_t k : {std::size_t(0), std::size_t(37), std::size_t(119), std::size_t(60)}) {
      const double h = 1e-3;
      std::vector<double> plus = m, minus = m;
      plus[k] += h, minus[k] -= h;
      const double d = (add_regularisation(r, g, plus, {}) - add_regularisation(r, g, minus, {})) / (2 * h);
      CAPTURE(k);
      CHECK(grad[k] == doctest::Approx(d).epsilon(1e-6));
    }
  }
}

TEST_CASE("Taylor test with each regularisation added to the misfit (fp64)") {
  for (const char* kind : {"tikhonov", "total_variation"}) {
    const std::string regularisation = kind;
    CAPTURE(regularisation);
    Case c = taylor_case(Parameterisation::velocity);
    c.inversion.regularisation = kind;
    c.inversion.regularisation_weight = std::string(kind) == "tikhonov" ? 1e-16 : 1e-14;
    const Plan plan = make_plan(c);
    auto propagator = make_gradient_propagator(c, plan, HistoryChoice{});
    const auto misfit = case_misfit(c, plan);
    Objective objective(*propagator, *misfit, observed_data(c, plan, *propagator), Parameterisation::velocity, plan.dt);
    objective.regularise(regularisation_of(c, plan), c.grid);
    const std::vector<double> model(plan.model.velocity.begin(), plan.model.velocity.end());
    const MisfitGradient at = objective.evaluate(model, false);
    MESSAGE(regularisation << ": data misfit " << at.misfit - at.regularisation << ", regularisation "
                           << at.regularisation);
    CHECK(at.regularisation > 0.1 * (at.misfit - at.regularisation));  // the term counts in the test
    const std::vector<double> direction = smooth_direction(c.grid, model, 0.02);
    const TaylorResult r = taylor_test(objective, model, direction, taylor_steps);
    MESSAGE(regularisation << ": slopes " << r.slope_first << ", " << r.slope_second);
    CHECK(std::abs(r.slope_first - 1) <= 0.1);
    CHECK(std::abs(r.slope_second - 2) <= 0.1);
  }
}

TEST_CASE("Taylor test with per-trace weights (inversion.trace_weights; every misfit, low-passed and windowed; fp64)") {
  // Weights from a file, one of them 0, with the most composite processing: the weighted misfit inside the mute and
  // the offset range, the data low-passed at 12 Hz.
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("specwave-test-weights-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  Case c = taylor_case(Parameterisation::velocity);
  const std::size_t shots = c.shots.size(), receivers = c.receivers.size();
  std::vector<double> w(shots * receivers);
  for (std::size_t k = 0; k < w.size(); ++k) w[k] = k == 1 ? 0.0 : 0.5 + 0.25 * double(k % 5);
  {
    io::h5::AtomicWriter f((dir / "weights.h5").string());
    io::h5::write_dataset<double>(f.id(), "weights", {hsize_t(shots), hsize_t(receivers)}, w.data(), "1");
    f.commit();
  }
  c.inversion.trace_weights_file = (dir / "weights.h5").string();
  c.inversion.mute_velocity = 2000.0;
  c.inversion.offset_max = 100.0;
  const TraceWeights read = read_trace_weights(c);
  REQUIRE(read.size() == shots);
  CHECK(read[0][1] == 0.0);
  CHECK(read[shots - 1][receivers - 1] == w.back());
  for (const char* name : {"least_squares", "trace_normalised", "global_correlation"}) {
    const std::string misfit_name = name;
    CAPTURE(misfit_name);
    c.inversion.misfit = name;
    const Plan plan = make_plan(c);
    auto propagator = make_gradient_propagator(c, plan, HistoryChoice{});
    const auto misfit = case_misfit(c, plan, 12.0);
    Objective objective(*propagator, *misfit, observed_data(c, plan, *propagator), Parameterisation::velocity, plan.dt);
    const std::vector<double> model(plan.model.velocity.begin(), plan.model.velocity.end());
    const TaylorResult r = taylor_test(objective, model, smooth_direction(c.grid, model, 0.02), taylor_steps);
    MESSAGE(misfit->name() << " (weighted, windowed, low-passed at 12 Hz): J = " << r.misfit << ", slopes "
                           << r.slope_first << ", " << r.slope_second);
    CHECK(misfit->name().find("weighted") != std::string::npos);
    CHECK(r.misfit > 0);
    CHECK(std::abs(r.slope_first - 1) <= 0.1);
    CHECK(std::abs(r.slope_second - 2) <= 0.1);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("trace weights: each trace's misfit times its weight, 0 leaves it out, adjoint source = derivative") {
  const int nt = 40, traces = 3;
  const double dt = 0.004;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> syn(nt * traces), obs(nt * traces), adj(syn.size()), scratch(syn.size()), one_adj(nt);
  for (auto& v : syn) v = u(rng);
  for (auto& v : obs) v = u(rng);
  const std::vector<double> weights = {0.5, 0.0, 2.0};
  for (const char* name : {"least_squares", "trace_normalised", "global_correlation"}) {
    const std::string misfit_name = name;
    CAPTURE(misfit_name);
    const std::unique_ptr<Misfit> plain = make_misfit(name, nt);
    const TraceWeightedMisfit m(make_misfit(name, nt), {{1.0, 1.0, 1.0}, weights}, nt);
    // Shot 1's value: the weighted sum of each trace's own misfit.
    double expected = 0;
    for (int r = 0; r < traces; ++r)
      expected += weights[r] *
                  plain->evaluate(std::span(syn).subspan(r * nt, nt), std::span(obs).subspan(r * nt, nt), dt, one_adj);
    CHECK(m.evaluate_shot(1, syn, obs, dt, adj) == doctest::Approx(expected).epsilon(1e-14));
    for (int n = 0; n < nt; ++n) CHECK(adj[nt + n] == 0.0);  // weight 0: no adjoint source
    for (int k : {0, 11, nt + 4, 2 * nt + 7}) {
      const double h = 1e-5;
      std::vector<double> plus = syn, minus = syn;
      plus[k] += h, minus[k] -= h;
      const double d =
          (m.evaluate_shot(1, plus, obs, dt, scratch) - m.evaluate_shot(1, minus, obs, dt, scratch)) / (2 * h);
      CAPTURE(k);
      CHECK(adj[k] == doctest::Approx(d).epsilon(1e-6).scale(1e-9));
    }
    // Unit weights: the plain misfit (to rounding: the traces are summed one at a time).
    CHECK(m.evaluate_shot(0, syn, obs, dt, adj) ==
          doctest::Approx(plain->evaluate(syn, obs, dt, scratch)).epsilon(1e-14));
    CHECK_THROWS_AS(m.evaluate(syn, obs, dt, adj), std::logic_error);
  }
}

TEST_CASE("windowed misfit: the top mute and the offset range weight the data identically, adjoint included") {
  const int nt = 30;
  const double dt = 0.01;
  // One shot, two receivers: the first muted before 0.1 s with a 0.02 s ramp, the second outside the offset range.
  const WindowedMisfit w(std::make_unique<LeastSquaresMisfit>(), {{{1.0, 0.1}, {0.0, 0.1}}}, nt, dt, 0.02);
  CHECK(w.window(0, 0, 9) == 0.0);                    // t = 0.09 s
  CHECK(w.window(0, 0, 10) == 0.0);                   // the ramp starts at 0
  CHECK(w.window(0, 0, 11) == doctest::Approx(0.5));  // half way: cos^2(pi/4)
  CHECK(w.window(0, 0, 12) == 1.0);
  CHECK(w.window(0, 1, 20) == 0.0);
  std::vector<double> syn(2 * nt, 1.0), obs(2 * nt, 0.0), adj(2 * nt);
  const double j = w.evaluate_shot(0, syn, obs, dt, adj);
  CHECK(j == doctest::Approx(0.5 * dt * (0.25 + (nt - 12))));  // 0.5^2 at n = 11, then 1 from n = 12 on
  CHECK(adj[11] == doctest::Approx(dt * 0.25));                // w * dt * (w s - w o)
  CHECK(adj[nt + 20] == 0.0);
  CHECK_THROWS_AS(w.evaluate(syn, obs, dt, adj), std::logic_error);
}

TEST_CASE("trace-normalised and global-correlation misfits: values, scale blindness, adjoint source = derivative") {
  const int nt = 50, traces = 3;
  const double dt = 0.004;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> syn(nt * traces), obs(nt * traces), adj(syn.size()), scratch(syn.size());
  for (auto& v : syn) v = u(rng);
  for (auto& v : obs) v = u(rng);
  for (int n = 0; n < nt; ++n) obs[2 * nt + n] = 0;  // a dead observed trace: left out by both
  const TraceNormalisedMisfit tn(nt);
  const GlobalCorrelationMisfit gc(nt);
  // Values by hand for trace 0.
  double oo = 0, ss = 0, so = 0, rr = 0;
  for (int n = 0; n < nt; ++n)
    oo += dt * obs[n] * obs[n], ss += dt * syn[n] * syn[n], so += dt * syn[n] * obs[n],
        rr += dt * (syn[n] - obs[n]) * (syn[n] - obs[n]);
  std::vector<double> one_s(syn.begin(), syn.begin() + nt), one_o(obs.begin(), obs.begin() + nt), one_a(nt);
  CHECK(tn.evaluate(one_s, one_o, dt, one_a) == doctest::Approx(0.5 * rr / oo).epsilon(1e-13));
  CHECK(gc.evaluate(one_s, one_o, dt, one_a) == doctest::Approx(1 - so / std::sqrt(ss * oo)).epsilon(1e-13));
  // Global correlation is blind to each trace's scale: 3 o fits o exactly, with a zero adjoint source.
  std::vector<double> scaled(one_o);
  for (double& v : scaled) v *= 3;
  CHECK(std::abs(gc.evaluate(scaled, one_o, dt, one_a)) < 1e-14);
  for (double a : one_a) CHECK(std::abs(a) < 1e-12);
  for (const Misfit* m : {static_cast<const Misfit*>(&tn), static_cast<const Misfit*>(&gc)}) {
    const std::string misfit_name = m->name();
    CAPTURE(misfit_name);
    m->evaluate(syn, obs, dt, adj);
    for (int k : {0, 17, nt + 3, 2 * nt + 5}) {
      const double h = 1e-5;
      std::vector<double> plus = syn, minus = syn;
      plus[k] += h, minus[k] -= h;
      const double d = (m->evaluate(plus, obs, dt, scratch) - m->evaluate(minus, obs, dt, scratch)) / (2 * h);
      CAPTURE(k);
      CHECK(adj[k] == doctest::Approx(d).epsilon(1e-6).scale(1e-9));
    }
  }
}

TEST_CASE("least-squares misfit: value and adjoint source") {
  const std::vector<double> syn = {1.0, 2.0, -1.0, 0.5}, obs = {0.5, 2.0, 1.0, 0.0};
  std::vector<double> adj(4);
  const double j = LeastSquaresMisfit().evaluate(syn, obs, 0.1, adj);
  CHECK(j == doctest::Approx(0.5 * 0.1 * (0.25 + 0 + 4 + 0.25)));
  CHECK(adj[0] == doctest::Approx(0.05));
  CHECK(adj[2] == doctest::Approx(-0.2));
  CHECK_THROWS_AS(make_misfit("l1", 4), Error);
}

TEST_CASE("low-passed least-squares misfit: the filter's gain, and the adjoint source is the derivative") {
  const int nt = 400, n_rec = 2;
  const double dt = 0.002, cutoff = 10.0;
  const LowPassMisfit lp(nt, dt, cutoff);
  auto sine = [&](double f) {
    std::vector<double> t(nt);
    for (int n = 0; n < nt; ++n) t[n] = std::sin(2 * M_PI * f * n * dt) * std::pow(std::sin(M_PI * n / (nt - 1)), 2);
    return t;
  };
  for (double f : {4.0, 25.0}) {  // below the cutoff: kept; above 1.5 cutoff: removed
    std::vector<double> t = sine(f);
    const std::vector<double> original = t;
    lp.filter(t);
    double err = 0, norm = 0;
    for (int n = 0; n < nt; ++n)
      err += std::pow(t[n] - (f < cutoff ? original[n] : 0.0), 2), norm += original[n] * original[n];
    CAPTURE(f);
    CHECK(std::sqrt(err / norm) < 0.02);
  }
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> syn(nt * n_rec), obs(nt * n_rec), adj(nt * n_rec), scratch(nt * n_rec);
  for (auto& v : syn) v = u(rng);
  for (auto& v : obs) v = u(rng);
  lp.evaluate(syn, obs, dt, adj);
  for (int k : {3, 150, 399, 400 + 77}) {  // J is quadratic: the central difference is exact up to rounding
    const double h = 1e-3;
    std::vector<double> plus = syn, minus = syn;
    plus[k] += h, minus[k] -= h;
    const double d = (lp.evaluate(plus, obs, dt, scratch) - lp.evaluate(minus, obs, dt, scratch)) / (2 * h);
    CAPTURE(k);
    CHECK(adj[k] == doctest::Approx(d).epsilon(1e-7));
  }
}

TEST_CASE("the gradient propagator refuses a model beyond the frozen dt's stability limit") {
  const Case c = gradient_test_case(false, Precision::fp64);
  const Plan plan = make_plan(c);
  auto propagator = make_gradient_propagator(c, plan, HistoryChoice{});
  std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
  CHECK_NOTHROW(propagator->set_velocity(velocity));
  velocity[17] = 1.01 * plan.v_reference / plan.cfl;
  CHECK_THROWS_AS(propagator->set_velocity(velocity), Error);
  velocity[17] = -1;
  CHECK_THROWS_AS(propagator->set_velocity(velocity), Error);
  CHECK(plan.v_reference == 2600);  // inversion.velocity_max above the model's 2300 m/s sets dt and the CPML
}

TEST_CASE("choose_device_history: device memory first, then pinned host memory; every step before checkpoints") {
  const double field = 1e6, state = 2.6e6;
  const int nt = 1000;
  const HistoryChoice a = choose_device_history(WavefieldStorage::auto_select, nt, field, state, 2e9, 4e9);
  CHECK(a.storage == WavefieldStorage::memory);
  CHECK(a.tier == HistoryTier::device);
  const HistoryChoice b = choose_device_history(WavefieldStorage::auto_select, nt, field, state, 2e8, 4e9);
  CHECK(b.storage == WavefieldStorage::checkpoints);
  CHECK(b.tier == HistoryTier::device);
  CHECK(b.segment == 51);
  const HistoryChoice c = choose_device_history(WavefieldStorage::auto_select, nt, field, state, 1e7, 4e9);
  CHECK(c.storage == WavefieldStorage::memory);
  CHECK(c.tier == HistoryTier::pinned_host);
  const HistoryChoice d = choose_device_history(WavefieldStorage::auto_select, nt, field, state, 1e7, 2e8);
  CHECK(d.storage == WavefieldStorage::checkpoints);
  CHECK(d.tier == HistoryTier::pinned_host);
  const HistoryChoice e = choose_device_history(WavefieldStorage::memory, nt, field, state, 2e8, 4e9);
  CHECK(e.storage == WavefieldStorage::memory);
  CHECK(e.tier == HistoryTier::pinned_host);
  const HistoryChoice f = choose_device_history(WavefieldStorage::checkpoints, nt, field, state, 2e9, 4e9);
  CHECK(f.storage == WavefieldStorage::checkpoints);
  CHECK(f.tier == HistoryTier::device);
  CHECK_THROWS_AS(choose_device_history(WavefieldStorage::auto_select, nt, field, state, 1e7, 1e7), Error);
  CHECK_THROWS_AS(choose_device_history(WavefieldStorage::memory, nt, field, state, 2e8, 2e8), Error);
}
