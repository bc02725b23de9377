// GPU tests (label gpu): what only the CUDA backend has. The CUDA propagators' plumbing (the receivers' ring, a
// shot resumed in the middle of a ring half, the two-phase field copy, the state reset between shots), the tiled
// FDTD kernel against the generic one, the cuFFT wrapper, the CUDA gradient's device histories and its refusal of
// the spectral method, the staggered and elastic schemes' propagators and gradients against the CPU's, cuBLAS vector
// operations against Eigen, the optimiser on device vectors (Optimizer on cuBLAS) against the Eigen one, the gradient
// preconditioner on the device (cuFFT smoothing, weights) against the host one, and the inversion on the CUDA backend
// against the CPU one. The CUDA propagators and the CUDA gradient against the CPU ones and the Eigen references are
// backend tests (tests/test_physics.cpp, tests/test_gradient.cpp: test_physics_cuda, test_physics_spectral_cuda,
// test_gradient_cuda). Without a usable device the executable prints why and exits 77, which CTest reports as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <fmt/format.h>
#include <unistd.h>
#include <array>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "case_builders.hpp"
#include "io/case_file.hpp"
#include "io/hdf5.hpp"
#include "kernels/launch_geometry.hpp"
#include "solver/case/errors.hpp"
#include "solver/forward/forward.hpp"
#include "solver/inversion/gradient_check.hpp"
#include "solver/inversion/inversion.hpp"
#include "solver/inversion/objective.hpp"
#include "solver/inversion/preconditioner.hpp"
#include "solver/optim/optimizer.hpp"
#include "solver/optim/reference_optimizer.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/propagator.hpp"
#include "validation/reference.hpp"

#if defined(SPECWAVE_HAVE_CUDA)
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/smoothing_cuda.hpp"
#include "kernels/cuda/spectral_cuda.hpp"
#include "kernels/vector_ops.hpp"
#include "solver/inversion/device_preconditioner.hpp"
#endif

using namespace specwave;
using specwave::testing::absorber_name;
using specwave::testing::forward_comparison_case;
using specwave::testing::spectral_comparison_case;

namespace {

using testing::rel_l2;

// A propagator's state held in memory (the checkpoint's visit without files).
class MemoryState final : public StateVisitor {
 public:
  bool loading() const override { return loading_; }
  void visit(const std::string& name, std::span<std::byte> data) override {
    if (!loading_) {
      arrays_[name].assign(data.begin(), data.end());
      return;
    }
    const auto& a = arrays_.at(name);
    REQUIRE(a.size() == data.size());
    std::copy(a.begin(), a.end(), data.begin());
  }
  void set_loading() { loading_ = true; }

 private:
  std::map<std::string, std::vector<std::byte>> arrays_;
  bool loading_ = false;
};

// Steps n_begin .. n_end of a shot in chunks of 37 (not a divisor of the ring's 256 columns).
void run_steps(Propagator& p, int from, int to) {
  for (int n = from; n < to; n = std::min(to, n + 37)) p.advance(n, std::min(to, n + 37));
}

// A shot stopped inside the receivers' ring's second half with traces() read, saved, loaded into a fresh
// propagator and continued gives `reference` bit for bit; the two-phase field copy of `p` hands out the field
// of the step it started at though steps ran before it finished, and refuses a second start.
void check_ring_resume_and_field_copy(const Case& c, const Plan& plan, const std::vector<double>& reference,
                                      Propagator& p) {
  const int stop = 256 + 100;
  MemoryState state;
  {
    auto first = make_propagator(c, plan);
    first->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
    run_steps(*first, 0, stop);
    const auto partial = first->traces();
    for (std::size_t r = 0; r < plan.receivers.size(); ++r)
      for (int n = 0; n < stop; ++n) CHECK(partial[r * plan.nt + n] == reference[r * plan.nt + n]);
    first->visit_state(state);
  }
  state.set_loading();
  auto resumed = make_propagator(c, plan);
  resumed->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
  resumed->visit_state(state);
  run_steps(*resumed, stop, plan.nt);
  const auto tr = resumed->traces();
  CHECK(std::vector<double>(tr.begin(), tr.end()) == reference);
  const std::size_t points = std::size_t(c.grid.points());
  std::vector<double> now(points), later(points);
  p.begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
  run_steps(p, 0, 200);
  p.copy_field(std::span<double>(now));
  p.start_copy_field();
  CHECK_THROWS_AS(p.start_copy_field(), std::logic_error);
  run_steps(p, 200, 260);
  p.finish_copy_field(std::span<double>(later));
  CHECK(later == now);
  CHECK_THROWS_AS(p.finish_copy_field(std::span<double>(later)), std::logic_error);
}

// Shot 0 of c in `precision` on the CUDA backend (a propagator whose name holds `name`) against the CPU backend: traces
// and final field within `tolerance` (relative L2).
void check_against_cpu(Case c, Precision precision, double tolerance, const std::string& name) {
  c.run.precision = precision;
  c.run.backend = BackendKind::cpu;
  const auto cpu = simulate_shot(c, make_plan(c), 0);
  c.run.backend = BackendKind::cuda;
  const Plan plan = make_plan(c);
  const auto gpu = simulate_shot(c, plan, 0);
  MESSAGE(name << ", free surface " << c.boundary.free_surface << ", fp64 " << (precision == Precision::fp64)
               << ": traces " << rel_l2(gpu.traces, cpu.traces) << ", final field "
               << rel_l2(gpu.final_field, cpu.final_field));
  CHECK(rel_l2(gpu.traces, cpu.traces) <= tolerance);
  CHECK(rel_l2(gpu.final_field, cpu.final_field) <= tolerance);
  CHECK(make_propagator(c, plan)->name().find(name) != std::string::npos);
}

// Over more than two halves of the receivers' ring (fp64, on the GPU): a second shot on the same propagator repeats the
// first bit for bit, then check_ring_resume_and_field_copy.
void check_long_shot(Case c) {
  c.run.precision = Precision::fp64;
  c.run.backend = BackendKind::cuda;
  c.time.duration = 1.2;
  const Plan plan = make_plan(c);
  REQUIRE(plan.nt > 2 * 256 + 10);
  auto p = make_propagator(c, plan);
  p->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
  run_steps(*p, 0, plan.nt);
  const auto t = p->traces();
  const std::vector<double> reference(t.begin(), t.end());
  p->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
  run_steps(*p, 0, plan.nt);
  const auto again = p->traces();
  CHECK(std::vector<double>(again.begin(), again.end()) == reference);
  check_ring_resume_and_field_copy(c, plan, reference, *p);
}

}  // namespace

TEST_CASE(
    "CUDA FDTD forward: deterministic overlapping sources, traces across ring halves, mid-half resume, two-phase "
    "copy") {
  for (Precision precision : {Precision::fp32, Precision::fp64}) {
    CAPTURE(precision == Precision::fp64);
    Case c = forward_comparison_case(4, 6, false, ModelSpec::Kind::gaussian);
    c.run.precision = precision;
    c.run.backend = BackendKind::cuda;
    c.time.duration = 1.2;  // more than two halves of the receivers' ring (256 steps each): 601 steps
    // 2 cells from the first: their interpolation stencils overlap.
    c.shots[0].sources[1].position = {191.3, 213.4, 208.8};
    const Plan plan = make_plan(c);
    REQUIRE(plan.nt > 2 * 256 + 10);
    const auto run = run_steps;
    auto a = make_propagator(c, plan);
    a->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
    run(*a, 0, plan.nt);
    const auto ta = a->traces();
    const std::vector<double> reference(ta.begin(), ta.end());
    // Again on a second propagator: bitwise the same (no atomics in the injection).
    auto b = make_propagator(c, plan);
    b->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
    run(*b, 0, plan.nt);
    const auto tb = b->traces();
    CHECK(std::vector<double>(tb.begin(), tb.end()) == reference);
    check_ring_resume_and_field_copy(c, plan, reference, *b);
  }
}

namespace {

// The tiled kernel (with `tile`, "" for its default) against the generic one on a grid of `shape` with a CPML of
// `pml` points (0: none; else the tiled step splits the grid into the layer-free box and the layers' boxes): same
// arithmetic in both, fp64 to rounding (1e-13), fp32 to 1e-6 (FMA contraction may differ). `duration` > 0 shortens
// the run (the sanitizers' cases).
void check_tiled_matches_generic(int order, bool free_surface, std::array<int, 3> shape, const std::string& tile,
                                 int pml = 6, double duration = 0) {
  for (const auto& [precision, tolerance] : {std::pair{Precision::fp64, 1e-13}, std::pair{Precision::fp32, 1e-6}}) {
    Case c = forward_comparison_case(order, pml, free_surface, ModelSpec::Kind::gaussian);
    c.grid.shape = shape;
    if (duration > 0) c.time.duration = duration;
    c.run.precision = precision;
    c.run.backend = BackendKind::cuda;
    const Plan plan = make_plan(c);
    setenv("SPECWAVE_CUDA_KERNEL", "generic", 1);
    const auto a = simulate_shot(c, plan, 0);
    setenv("SPECWAVE_CUDA_KERNEL", "tiled", 1);
    if (!tile.empty()) setenv("SPECWAVE_CUDA_TILE", tile.c_str(), 1);
    const auto b = simulate_shot(c, plan, 0);
    unsetenv("SPECWAVE_CUDA_KERNEL");
    unsetenv("SPECWAVE_CUDA_TILE");
    CHECK(rel_l2(b.traces, a.traces) <= tolerance);
    CHECK(rel_l2(b.final_field, a.final_field) <= tolerance);
  }
}

}  // namespace

TEST_CASE("the tiled (2.5D) CUDA kernel agrees with the generic per-point kernel") {
  for (int order : {2, 4, 8, 16})
    for (bool free_surface : {false, true})
      for (int pml : {6, 0}) {
        CAPTURE(order);
        CAPTURE(free_surface);
        CAPTURE(pml);
        check_tiled_matches_generic(order, free_surface, {41, 45, 50}, "", pml);  // not multiples of the tile
      }
}

TEST_CASE("sanitizer case: the tiled and generic kernels on a small grid, 30 steps") {
  // What compute-sanitizer's memcheck and racecheck run (scripts/gpu-check): every kernel of the step (mirror, psi,
  // tiled interior, the layers' boxes, generic) on a grid that is no multiple of the tiles, in a few seconds.
  for (const std::string tile : {"", "16x8x7", "16x8x7x2"}) {
    CAPTURE(tile);
    check_tiled_matches_generic(8, true, {37, 45, 50}, tile, 5, 0.06);  // the case's sources need 45 x 50 cells
  }
}

TEST_CASE("the tiled CUDA kernel: every compiled tile shape (SPECWAVE_CUDA_TILE) agrees with the generic kernel") {
  // Orders 8 and 16: radius 4 and 8, the latter wider than some tiles (4 rows; 4 columns in 4x64), whose halo
  // takes several passes; 48x10 is neither a power of two nor a divisor of the grid.
  std::vector<launch::TileShape> shapes(std::begin(launch::tile_shapes), std::end(launch::tile_shapes));
  shapes.push_back({4, 64, 32});
  shapes.push_back({48, 10, 32});
  for (int order : {8, 16})
    for (const launch::TileShape& shape : shapes)
      for (int z : {1, 7, 32})
        for (int rows : {1, 2}) {  // rows per thread
          const launch::TileShape tile{shape.x, shape.y, z, rows};
          if (!launch::tile_shape_ok(tile)) continue;  // two rows of the tallest tiles exceed the shared memory
          CAPTURE(order);
          CAPTURE(launch::to_string(tile));
          check_tiled_matches_generic(order, true, {37, 45, 50}, launch::to_string(tile));  // no multiple of any tile
        }
}

#if defined(SPECWAVE_HAVE_CUDA)
TEST_CASE(
    "cuFFT wrapper: the forward transform is the DFT and leaves its input unchanged; a round trip gives N x input") {
  // The spectral propagator transforms its state fields (u^n, w_a) out of place and relies on the R2C input
  // being preserved; C2R may overwrite its input, and the propagator never reuses it.
  for (const cuda::SpectralShape shape : {cuda::SpectralShape{12, 10, 9}, cuda::SpectralShape{8, 6, 10}}) {
    CAPTURE(shape.nx);
    const std::size_t n = shape.points();
    std::vector<double> host(n);
    for (std::size_t i = 0; i < n; ++i)
      host[i] = std::sin(0.37 * double(i) + 0.1) + 0.25 * std::cos(1.3 * double(i * i % 17));
    cuda::Stream stream;
    cuda::RealFft3d<double> fft(shape, stream.handle());
    cuda::DeviceArray<double> real(n), back(n);
    cuda::DeviceArray<cuda::Complex<double>> spectrum(shape.spectrum_points());
    cuda::synchronize();
    cuda::copy_to_device(real.data(), host.data(), n * sizeof(double), stream.handle());
    fft.forward(real.data(), spectrum.data());
    std::vector<double> after(n);
    cuda::copy_to_host(after.data(), real.data(), n * sizeof(double), stream.handle());
    CHECK(after == host);
    std::vector<cuda::Complex<double>> spec(shape.spectrum_points());
    cuda::copy_to_host(spec.data(), spectrum.data(), spec.size() * sizeof(spec[0]), stream.handle());
    double worst = 0, scale = 0;
    for (const auto& [kz, ky, kx] :
         {std::array<int, 3>{0, 0, 0}, std::array<int, 3>{1, 2, 3}, std::array<int, 3>{shape.nz / 2, 1, shape.nx / 2},
          std::array<int, 3>{shape.nz - 1, shape.ny - 2, 1}}) {
      std::complex<double> dft = 0;
      for (int z = 0; z < shape.nz; ++z)
        for (int y = 0; y < shape.ny; ++y)
          for (int x = 0; x < shape.nx; ++x) {
            const double phase =
                -2 * M_PI * (double(kz) * z / shape.nz + double(ky) * y / shape.ny + double(kx) * x / shape.nx);
            dft += host[(std::size_t(z) * shape.ny + y) * shape.nx + x] * std::polar(1.0, phase);
          }
      const auto& got = spec[(std::size_t(kz) * shape.ny + ky) * shape.half_x() + kx];
      worst = std::max(worst, std::abs(std::complex<double>(got.x, got.y) - dft));
      scale = std::max(scale, std::abs(dft));
    }
    CHECK(worst <= 1e-12 * scale);
    fft.backward(spectrum.data(), back.data());
    cuda::copy_to_host(after.data(), back.data(), n * sizeof(double), stream.handle());
    double err = 0, norm = 0;
    for (std::size_t i = 0; i < n; ++i) {
      err = std::max(err, std::abs(after[i] / double(n) - host[i]));
      norm = std::max(norm, std::abs(host[i]));
    }
    CHECK(err <= 1e-13 * norm);
  }
}
#endif

TEST_CASE(
    "CUDA staggered scheme (density, CPML or a free surface, Q, a force source, velocity receivers) against the CPU; "
    "ring resume, a second shot") {
  // kernels/cuda/staggered_cuda.cu runs the bodies that test_staggered checks against the CPU loops on the CPU; here
  // the device arithmetic (FMA contraction, fp64 sums of the receivers) against the CPU propagator: rounding.
  for (const bool free_surface : {false, true})
    for (const auto& [precision, tolerance] : {std::pair{Precision::fp64, 1e-12}, std::pair{Precision::fp32, 1e-5}}) {
      CAPTURE(free_surface);
      CAPTURE(precision == Precision::fp64);
      Case c = forward_comparison_case(free_surface ? 4 : 8, 6, free_surface, ModelSpec::Kind::layered);
      c.scheme.formulation = Formulation::staggered;
      c.model.densities = {1100.0, 2000.0, 2300.0};
      if (free_surface) {
        c.attenuation.present = true;
        c.attenuation.q_layers = {30.0, 60.0, 120.0};
      }
      c.shots[0].sources[1].kind = SourceKind::force;
      c.shots[0].sources[1].direction = {0.6, 0.0, 0.8};
      testing::four_component_receivers(c);
      check_against_cpu(c, precision, tolerance, "staggered-cuda");
    }
  // Traces across the ring's halves, a shot saved mid-half and resumed, the two-phase copy, and a second shot.
  Case c = forward_comparison_case(8, 6, false, ModelSpec::Kind::layered);
  c.scheme.formulation = Formulation::staggered;
  c.model.densities = {1100.0, 2000.0, 2300.0};
  c.attenuation.present = true;
  c.attenuation.q_layers = {30.0, 60.0, 120.0};
  check_long_shot(c);
}

TEST_CASE(
    "CUDA elastic scheme (water over two solids, CPML or a free surface, pressure + force + moment sources, pressure "
    "and "
    "velocity receivers) against the CPU; ring resume, a second shot") {
  // kernels/cuda/elastic_cuda.cu runs the bodies that test_elastic checks against the CPU loops on the CPU (bitwise);
  // here the device arithmetic (FMA contraction, fp64 sums of the receivers) against the CPU propagator: rounding.
  const auto elastic = [](bool free_surface) {
    Case c = forward_comparison_case(free_surface ? 4 : 8, 6, free_surface, ModelSpec::Kind::layered);
    c.scheme.formulation = Formulation::elastic;
    c.model.densities = {1000.0, 2100.0, 2400.0};
    c.model.shear_velocities = {0.0, 1100.0, 1400.0};
    c.shots[0].sources[1].kind = SourceKind::force;
    c.shots[0].sources[1].direction = {0.48, 0.6, 0.64};
    if (free_surface) {  // a moment tensor in the solid; the pressure points 3 points below the surface
      c.shots[0].sources[0].position[0] = std::max(c.shots[0].sources[0].position[0], 35.0);
      SourceSpec m = c.shots[0].sources[1];
      m.kind = SourceKind::moment;
      m.moment = {1.0, 0.5, -0.7, 0.3, 0.0, 0.2};
      m.position = {250.3, 210.7, 190.2};
      c.shots[0].sources.push_back(m);
      for (Vec3& r : c.receivers) r[0] = std::max(r[0], 35.0);  // (pressure receivers too)
    }
    testing::four_component_receivers(c);
    return c;
  };
  for (const bool free_surface : {false, true})
    for (const auto& [precision, tolerance] : {std::pair{Precision::fp64, 1e-12}, std::pair{Precision::fp32, 1e-5}}) {
      CAPTURE(free_surface);
      CAPTURE(precision == Precision::fp64);
      Case c = elastic(free_surface);
      check_against_cpu(c, precision, tolerance, "elastic-cuda");
    }
  // 2-D (ny = 1: the y terms and their CPML absent, v_y, s_zy and s_yx the SH part), a free surface, both precisions.
  for (const auto& [precision, tolerance] : {std::pair{Precision::fp64, 1e-12}, std::pair{Precision::fp32, 1e-5}})
    check_against_cpu(testing::elastic_gradient_case(true, precision, 8, true), precision, tolerance, "elastic-cuda");
  // Traces across the ring's halves, a shot saved mid-half and resumed, the two-phase copy, and a second shot.
  check_long_shot(elastic(false));
}

TEST_CASE("CUDA spectral: a second shot on the same propagator repeats the first (state fully reset)") {
  for (SpectralAbsorber absorber : {SpectralAbsorber::pml, SpectralAbsorber::damping}) {
    CAPTURE(absorber_name(absorber));
    Case c = spectral_comparison_case(absorber, Precision::fp64);
    c.run.backend = BackendKind::cuda;
    const Plan plan = make_plan(c);
    auto p = make_propagator(c, plan);
    std::vector<std::vector<double>> traces;
    for (int run = 0; run < 2; ++run) {
      p->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
      p->advance(0, plan.nt / 2);
      p->advance(plan.nt / 2, plan.nt);  // two chunks, as the forward driver does
      const auto t = p->traces();
      traces.emplace_back(t.begin(), t.end());
      const auto stats = p->field_stats();
      CHECK(stats.finite);
      CHECK(stats.max_abs > 0);
    }
    CHECK(traces[0] == traces[1]);
  }
}

TEST_CASE(
    "receivers per shot on CUDA: the device lists and ring follow each shot's receivers (FDTD, spectral, the "
    "FDTD gradient): as the CPU's, and bitwise the shared run's when they coincide") {
  for (const bool spectral : {false, true}) {
    CAPTURE(spectral);
    Case shared = spectral ? spectral_comparison_case(SpectralAbsorber::pml, Precision::fp64)
                           : forward_comparison_case(8, 10, false, ModelSpec::Kind::gaussian);
    shared.run.precision = Precision::fp64;
    SourceSpec second = shared.shots[0].sources[0];
    second.position[2] += 30;
    shared.shots.push_back({{second}});
    Case own = shared;
    for (auto& shot : own.shots) shot.receivers = shared.receivers;
    Case moving = shared;  // two receivers for shot 0, three (one of them new) for shot 1
    const auto& r = shared.receivers;
    moving.shots[0].receivers = {r[0], r[1]};
    moving.shots[1].receivers = {r[1], r[0], {r[2][0], r[2][1] - 10, r[2][2]}};
    const auto traces = [](Case c, BackendKind backend) {
      c.run.backend = backend;
      const Plan plan = make_plan(c);
      std::vector<std::vector<double>> out;
      for (const auto& shot : simulate_shots(c, plan, {0, 1, 0})) out.push_back(shot.traces);  // shot 0 twice
      return out;
    };
    CHECK(traces(own, BackendKind::cuda) == traces(shared, BackendKind::cuda));
    const auto gpu = traces(moving, BackendKind::cuda), cpu = traces(moving, BackendKind::cpu);
    REQUIRE(gpu.size() == 3);
    CHECK(gpu[0].size() == cpu[0].size());
    CHECK(gpu[1].size() == cpu[1].size());
    CHECK(gpu[0] == gpu[2]);  // back to shot 0's receivers after shot 1's
    for (std::size_t k = 0; k < 3; ++k) {
      const double e = rel_l2(gpu[k], cpu[k]);
      MESSAGE("receivers per shot, " << std::string(spectral ? "spectral" : "FDTD") << " shot " << k << ": CUDA vs CPU "
                                     << e);
      CHECK(e <= 1e-12);
    }
  }
  // The FDTD gradient: misfit and gradient of a case whose shots have their own receivers, CUDA against CPU.
  Case c = testing::gradient_data_case(false, Precision::fp64);
  const auto& r = c.receivers;
  c.shots[0].receivers = {r[0], r[1]};
  c.shots[1].receivers = {r[2], r[1], {r[0][0], r[0][1] - 20, r[0][2] - 30}};
  std::vector<MisfitGradient> results;
  for (BackendKind backend : {BackendKind::cpu, BackendKind::cuda}) {
    c.run.backend = backend;
    const Plan plan = make_plan(c);
    auto propagator = make_gradient_propagator(c, plan, HistoryChoice{});
    LeastSquaresMisfit misfit;
    Objective objective(*propagator, misfit, observed_data(c, plan, *propagator), Parameterisation::velocity, plan.dt);
    const std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
    results.push_back(objective.evaluate(velocity, true, true));
  }
  MESSAGE("receivers per shot, FDTD gradient CUDA vs CPU: misfit " << results[1].misfit << " / " << results[0].misfit
                                                                   << ", gradient "
                                                                   << rel_l2(results[1].gradient, results[0].gradient));
  CHECK(std::abs(results[1].misfit - results[0].misfit) <= 1e-12 * results[0].misfit);
  CHECK(rel_l2(results[1].gradient, results[0].gradient) <= 1e-12);
}

TEST_CASE("CUDA spectral forward: traces across ring halves, mid-half resume, two-phase copy (both absorbers)") {
  // The receivers' ring and the two-phase field copy shared with CUDA FDTD
  // (solver/propagators/gpu/device_trace_ring.hpp, solver/propagators/gpu/device_field_copy.hpp), on the spectral
  // propagator.
  for (SpectralAbsorber absorber : {SpectralAbsorber::pml, SpectralAbsorber::damping})
    for (Precision precision : {Precision::fp32, Precision::fp64}) {
      const std::string config =
          std::string(absorber_name(absorber)) + (precision == Precision::fp64 ? " fp64" : " fp32");
      CAPTURE(config);
      Case c = spectral_comparison_case(absorber, precision);
      c.run.backend = BackendKind::cuda;
      c.time.duration = 1.2;  // more than two halves of the receivers' ring (256 steps each): 601 steps
      const Plan plan = make_plan(c);
      REQUIRE(plan.nt > 2 * 256 + 10);
      const auto run = run_steps;
      auto a = make_propagator(c, plan);
      REQUIRE(a->name().rfind("spectral-cuda-", 0) == 0);
      a->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
      run(*a, 0, plan.nt);
      const auto ta = a->traces();
      const std::vector<double> reference(ta.begin(), ta.end());
      REQUIRE(reference.size() == plan.receivers.size() * std::size_t(plan.nt));
      // Every sample arrived: the last samples of every receiver are not all zero (the waves have reached them).
      for (std::size_t r = 0; r < plan.receivers.size(); ++r) {
        double late = 0;
        for (int n = plan.nt - 256; n < plan.nt; ++n) late = std::max(late, std::abs(reference[r * plan.nt + n]));
        CHECK(late > 0);
      }
      check_ring_resume_and_field_copy(c, plan, reference, *a);
      // The second shot on the same propagator (after a copy) repeats the first.
      run(*a, 260, plan.nt);
      const auto again = a->traces();
      CHECK(std::vector<double>(again.begin(), again.end()) == reference);
    }
}

// ---- The FDTD gradient on the GPU (solver/propagators/fdtd/fdtd_cuda_gradient.cpp)
// ----------------------------------------------

namespace {

// The CPU gradient tests' case on `backend`, with data from a shifted anomaly (tests/case_builders.hpp).
Case gradient_case(bool free_surface, Precision precision, int order, BackendKind backend) {
  Case c = specwave::testing::gradient_data_case(free_surface, precision, order);
  c.run.backend = backend;
  return c;
}

HistoryChoice history(WavefieldStorage storage, int segment, HistoryTier tier) {
  HistoryChoice h;
  h.storage = storage;
  h.segment = segment;
  h.tier = tier;
  return h;
}

}  // namespace

TEST_CASE("CUDA FDTD gradient: every history strategy and memory tier gives bitwise the same gradient") {
  for (Precision precision : {Precision::fp64, Precision::fp32}) {
    CAPTURE(to_string(precision));
    const Case c = gradient_case(true, precision, 8, BackendKind::cuda);
    const Plan plan = make_plan(c);
    const std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
    LeastSquaresMisfit misfit;
    std::vector<MisfitGradient> results;
    std::vector<std::string> names;
    for (const HistoryChoice& h : {history(WavefieldStorage::memory, 0, HistoryTier::device),
                                   history(WavefieldStorage::checkpoints, 7, HistoryTier::device),
                                   history(WavefieldStorage::checkpoints, 1, HistoryTier::device),
                                   history(WavefieldStorage::checkpoints, plan.nt + 3, HistoryTier::device),
                                   history(WavefieldStorage::memory, 0, HistoryTier::pinned_host),
                                   history(WavefieldStorage::checkpoints, 7, HistoryTier::pinned_host)}) {
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

// ---- The staggered scheme's gradient on the GPU (solver/propagators/staggered/staggered_cuda_gradient.cpp): its
// kernels' bodies are checked on the CPU (test_staggered, "the CUDA adjoint kernels' bodies"); here the propagator.

namespace {

// The gradient tests' case on the staggered scheme: three layers of velocity and density, Q, a free surface, a force
// source in shot 1, four-component receivers, and the density among the parameters.
Case staggered_gradient_case(Precision precision, BackendKind backend) {
  Case c = specwave::testing::gradient_test_case(true, precision, 8);
  c.model.kind = ModelSpec::Kind::layered;
  c.model.interfaces = {95.0, 185.0};
  c.model.velocities = {1800.0, 2200.0, 2450.0};
  c.model.densities = {1100.0, 2000.0, 2300.0};
  c.scheme.formulation = Formulation::staggered;
  c.attenuation.present = true;
  c.attenuation.q_layers = {30.0, 60.0, 120.0};
  c.shots[1].sources[0].kind = SourceKind::force;
  c.shots[1].sources[0].direction = {0.6, 0.0, -0.8};
  testing::four_component_receivers(c);
  c.inversion.density_parameter = true;
  c.run.backend = backend;
  return c;
}

// What one propagator gives for a shot: the traces, the velocity and density gradients and the illumination of the
// adjoint of `residual`, and the Born traces of dm and drho.
struct StaggeredShot {
  std::vector<double> traces, gradient, density, illumination, born, born_density;
};
StaggeredShot staggered_shot(GradientPropagator& g, int shot, const std::vector<double>& residual,
                             const std::vector<double>& dm, const std::vector<double>& drho) {
  StaggeredShot r;
  r.traces = g.forward(shot, true);
  r.gradient.assign(dm.size(), 0.0), r.density.assign(dm.size(), 0.0), r.illumination.assign(dm.size(), 0.0);
  g.adjoint(residual, r.gradient, r.illumination);
  g.add_density_gradient(r.density);
  r.born = g.born(shot, dm);
  r.born_density = g.born_density(shot, drho);
  return r;
}

}  // namespace

TEST_CASE(
    "CUDA staggered gradient (density, Q, free surface, force source, four components): the CPU gradient's values, "
    "its dot-product tests, every history bitwise") {
  for (const auto& [precision, tolerance, dot_tolerance] :
       {std::tuple{Precision::fp64, 1e-10, 1e-10}, std::tuple{Precision::fp32, 1e-4, 1e-4}}) {
    CAPTURE(to_string(precision));
    const Case cpu_case = staggered_gradient_case(precision, BackendKind::cpu);
    const Case gpu_case = staggered_gradient_case(precision, BackendKind::cuda);
    const Plan cpu_plan = make_plan(cpu_case), gpu_plan = make_plan(gpu_case);
    auto cpu = make_gradient_propagator(cpu_case, cpu_plan, HistoryChoice{});
    auto gpu = make_gradient_propagator(gpu_case, gpu_plan, HistoryChoice{});
    CHECK(gpu->name().find("staggered-cuda") != std::string::npos);
    const std::size_t points = std::size_t(cpu_case.grid.points());
    std::mt19937_64 rng(97);
    std::normal_distribution<double> normal;
    std::vector<double> dm(points), drho(points);
    for (std::size_t k = 0; k < points; ++k) dm[k] = 1e-3 * normal(rng), drho[k] = 10.0 * normal(rng);
    for (int shot = 0; shot < 2; ++shot) {
      CAPTURE(shot);
      const std::vector<double> residual = cpu->forward(shot, false);
      const StaggeredShot a = staggered_shot(*cpu, shot, residual, dm, drho);
      const StaggeredShot b = staggered_shot(*gpu, shot, residual, dm, drho);
      MESSAGE(to_string(precision) << " shot " << shot << ": traces " << rel_l2(b.traces, a.traces) << ", gradient "
                                   << rel_l2(b.gradient, a.gradient) << ", density gradient "
                                   << rel_l2(b.density, a.density) << ", illumination "
                                   << rel_l2(b.illumination, a.illumination) << ", Born " << rel_l2(b.born, a.born)
                                   << ", density Born " << rel_l2(b.born_density, a.born_density));
      CHECK(rel_l2(b.traces, a.traces) <= tolerance);
      CHECK(rel_l2(b.gradient, a.gradient) <= tolerance);
      CHECK(rel_l2(b.density, a.density) <= tolerance);
      CHECK(rel_l2(b.illumination, a.illumination) <= tolerance);
      CHECK(rel_l2(b.born, a.born) <= tolerance);
      CHECK(rel_l2(b.born_density, a.born_density) <= tolerance);
      const DotTestResult velocity = born_dot_test(gpu_case, gpu_plan, shot, 4321 + shot);
      const DotTestResult density = density_dot_test(gpu_case, gpu_plan, shot, 8765 + shot);
      MESSAGE("CUDA dot-product tests, shot " << shot << ": velocity " << velocity.mismatch << ", density "
                                              << density.mismatch);
      CHECK(velocity.lhs != 0);
      CHECK(velocity.mismatch <= dot_tolerance);
      CHECK(density.mismatch <= dot_tolerance);
    }
    // Every history strategy and memory tier: bitwise the same gradients.
    std::vector<std::vector<double>> gradients;
    for (const HistoryChoice& h : {history(WavefieldStorage::memory, 0, HistoryTier::device),
                                   history(WavefieldStorage::checkpoints, 7, HistoryTier::device),
                                   history(WavefieldStorage::checkpoints, gpu_plan.nt + 3, HistoryTier::device),
                                   history(WavefieldStorage::checkpoints, 5, HistoryTier::pinned_host)}) {
      auto g = make_gradient_propagator(gpu_case, gpu_plan, h);
      const std::vector<double> traces = g->forward(0, true);
      std::vector<double> gradient(points, 0.0), density(points, 0.0);
      g->adjoint(traces, gradient);
      g->add_density_gradient(density);
      gradient.insert(gradient.end(), density.begin(), density.end());
      gradients.push_back(gradient);
      CAPTURE(g->history_name());
      CHECK(gradients.back() == gradients.front());
    }
  }
}

// ---- The elastic scheme's gradient on the GPU (solver/propagators/elastic/elastic_cuda_gradient.cpp): its adjoint
// kernels' bodies are checked on the CPU (test_elastic, "the CUDA adjoint kernels' bodies"); here the propagator.

namespace {

// What one elastic propagator gives for a shot: traces; the vp, vs and density gradients and the illumination of the
// adjoint of `residual`; the Born traces of dm_p, dm_s and drho.
struct ElasticShot {
  std::vector<double> traces, gradient, shear, density, illumination, born, born_shear, born_density;
};
ElasticShot elastic_shot(GradientPropagator& g, int shot, const std::vector<double>& residual,
                         const std::vector<double>& dm, const std::vector<double>& drho) {
  ElasticShot r;
  r.traces = g.forward(shot, true);
  const std::size_t n = dm.size();
  r.gradient.assign(n, 0.0), r.shear.assign(n, 0.0), r.density.assign(n, 0.0), r.illumination.assign(n, 0.0);
  g.adjoint(residual, r.gradient, r.illumination);
  g.add_shear_gradient(r.shear);
  g.add_density_gradient(r.density);
  r.born = g.born(shot, dm);
  r.born_shear = g.born_shear(shot, dm);
  r.born_density = g.born_density(shot, drho);
  return r;
}

}  // namespace

TEST_CASE(
    "CUDA elastic gradient (free surface or CPML, 3-D or 2-D, pressure, force and moment sources, four components): "
    "the "
    "CPU gradients' values, its dot-product tests, every history bitwise") {
  for (const auto& [precision, tolerance, dot_tolerance, free_surface, two_d] :
       {std::tuple{Precision::fp64, 1e-10, 1e-10, true, false}, std::tuple{Precision::fp32, 1e-4, 1e-4, true, false},
        std::tuple{Precision::fp64, 1e-10, 1e-10, false, true}}) {
    CAPTURE(to_string(precision));
    CAPTURE(free_surface);
    CAPTURE(two_d);
    Case cpu_case = testing::elastic_gradient_case(free_surface, precision, 8, two_d);
    cpu_case.inversion.density_parameter = true;
    cpu_case.run.backend = BackendKind::cpu;
    Case gpu_case = cpu_case;
    gpu_case.run.backend = BackendKind::cuda;
    const Plan cpu_plan = make_plan(cpu_case), gpu_plan = make_plan(gpu_case);
    auto cpu = make_gradient_propagator(cpu_case, cpu_plan, HistoryChoice{});
    auto gpu = make_gradient_propagator(gpu_case, gpu_plan, HistoryChoice{});
    CHECK(gpu->name().find("elastic-cuda") != std::string::npos);
    const std::size_t points = std::size_t(cpu_case.grid.points());
    std::mt19937_64 rng(101);
    std::normal_distribution<double> normal;
    std::vector<double> dm(points), drho(points);
    for (std::size_t k = 0; k < points; ++k) dm[k] = 1e-3 * normal(rng), drho[k] = 10.0 * normal(rng);
    for (int shot = 0; shot < 2; ++shot) {
      CAPTURE(shot);
      const std::vector<double> residual = cpu->forward(shot, false);
      const ElasticShot a = elastic_shot(*cpu, shot, residual, dm, drho);
      const ElasticShot b = elastic_shot(*gpu, shot, residual, dm, drho);
      const std::pair<const char*, double> rows[] = {{"traces", rel_l2(b.traces, a.traces)},
                                                     {"vp gradient", rel_l2(b.gradient, a.gradient)},
                                                     {"vs gradient", rel_l2(b.shear, a.shear)},
                                                     {"density gradient", rel_l2(b.density, a.density)},
                                                     {"illumination", rel_l2(b.illumination, a.illumination)},
                                                     {"Born vp", rel_l2(b.born, a.born)},
                                                     {"Born vs", rel_l2(b.born_shear, a.born_shear)},
                                                     {"Born density", rel_l2(b.born_density, a.born_density)}};
      for (const auto& [what, difference] : rows) {
        MESSAGE(to_string(precision) << " shot " << shot << ", " << std::string(what) << ": " << difference);
        CHECK(difference <= tolerance);
      }
      const DotTestResult vp = born_dot_test(gpu_case, gpu_plan, shot, 1234 + shot);
      const DotTestResult vs = shear_dot_test(gpu_case, gpu_plan, shot, 2345 + shot);
      const DotTestResult rho = density_dot_test(gpu_case, gpu_plan, shot, 3456 + shot);
      MESSAGE("CUDA elastic dot-product tests, shot " << shot << ": vp " << vp.mismatch << ", vs " << vs.mismatch
                                                      << ", density " << rho.mismatch);
      CHECK(vp.lhs != 0);
      CHECK(vs.lhs != 0);
      CHECK(rho.lhs != 0);
      CHECK(vp.mismatch <= dot_tolerance);
      CHECK(vs.mismatch <= dot_tolerance);
      CHECK(rho.mismatch <= dot_tolerance);
    }
    // Every history strategy and memory tier: bitwise the same gradients.
    std::vector<std::vector<double>> gradients;
    for (const HistoryChoice& h : {history(WavefieldStorage::memory, 0, HistoryTier::device),
                                   history(WavefieldStorage::checkpoints, 7, HistoryTier::device),
                                   history(WavefieldStorage::checkpoints, gpu_plan.nt + 3, HistoryTier::device),
                                   history(WavefieldStorage::checkpoints, 5, HistoryTier::pinned_host)}) {
      auto g = make_gradient_propagator(gpu_case, gpu_plan, h);
      const std::vector<double> traces = g->forward(1, true);
      std::vector<double> gradient(points, 0.0), shear(points, 0.0), density(points, 0.0);
      g->adjoint(traces, gradient);
      g->add_shear_gradient(shear);
      g->add_density_gradient(density);
      gradient.insert(gradient.end(), shear.begin(), shear.end());
      gradient.insert(gradient.end(), density.begin(), density.end());
      gradients.push_back(gradient);
      CAPTURE(g->history_name());
      CHECK(gradients.back() == gradients.front());
    }
  }
}

TEST_CASE(
    "CUDA FDTD gradient: the adjoint in omega (imaging fused) gives the adjoint in mu's gradient and illumination "
    "(SPECWAVE_CUDA_ADJOINT)") {
  // fp64 only: in fp32 the mu path's imaging term takes the second difference of u in fp32, which loses digits (the
  // reason for the omega form); test_gradient_cuda checks the fp32 omega path against fp64.
  const double tolerance = 1e-10;
  // The variable as it was, restored however the test leaves (the other tests run the default).
  struct Restore {
    const char* name = "SPECWAVE_CUDA_ADJOINT";
    std::optional<std::string> old = std::getenv(name) ? std::optional<std::string>(std::getenv(name)) : std::nullopt;
    ~Restore() { old ? setenv(name, old->c_str(), 1) : unsetenv(name); }
  } restore;
  for (const bool free_surface : {false, true}) {
    CAPTURE(free_surface);
    const Case c = gradient_case(free_surface, Precision::fp64, 8, BackendKind::cuda);
    const Plan plan = make_plan(c);
    const std::size_t points = std::size_t(c.grid.points());
    std::vector<double> gradient[2], illumination[2];
    for (const int path : {0, 1}) {
      REQUIRE(setenv("SPECWAVE_CUDA_ADJOINT", path == 0 ? "omega" : "mu", 1) == 0);
      auto g = make_gradient_propagator(c, plan, HistoryChoice{});
      const std::vector<double> traces = g->forward(1, true);
      gradient[path].assign(points, 0.0), illumination[path].assign(points, 0.0);
      g->adjoint(traces, gradient[path], illumination[path]);
    }
    REQUIRE(setenv("SPECWAVE_CUDA_ADJOINT", "lambda", 1) == 0);
    CHECK_THROWS_WITH_AS(make_gradient_propagator(c, plan, HistoryChoice{}), doctest::Contains("\"omega\""), Error);
    MESSAGE("fp64, free surface " << free_surface << ": gradient " << rel_l2(gradient[0], gradient[1])
                                  << ", illumination " << rel_l2(illumination[0], illumination[1]));
    CHECK(rel_l2(gradient[0], gradient[1]) <= tolerance);
    CHECK(rel_l2(illumination[0], illumination[1]) <= tolerance);
  }
}

namespace {

// Every shot with receivers of its own, from the case's shared ones and their components: shot s takes every
// (s + 1)-th from the s-th, so that the shots' counts and points differ.
void receivers_of_each_shot(Case& c) {
  for (std::size_t s = 0; s < c.shots.size(); ++s) {
    ShotSpec& shot = c.shots[s];
    shot.receivers.clear(), shot.receiver_components.clear();
    for (std::size_t j = s; j < c.receivers.size(); j += s + 1) {
      shot.receivers.push_back(c.receivers[j]);
      shot.receiver_components.push_back(j < c.receiver_components.size() ? c.receiver_components[j]
                                                                          : ReceiverComponent::pressure);
    }
  }
}

}  // namespace

TEST_CASE("CUDA staggered and elastic gradients with each shot's own receivers: the CPU's values, shots 0, 1, 0") {
  // The device lists must follow the shot (ShotReceivers::list_key); shot 0 again after shot 1 catches lists kept.
  // Traces and the adjoint (whose sources the lists place) only: the elastic CPU side is the slow part.
  for (const bool elastic : {false, true}) {
    const std::string scheme = elastic ? "elastic" : "staggered";
    CAPTURE(scheme);
    Case cpu_case = elastic ? testing::elastic_gradient_case(true, Precision::fp64, 8, false)
                            : staggered_gradient_case(Precision::fp64, BackendKind::cpu);
    receivers_of_each_shot(cpu_case);
    cpu_case.run.backend = BackendKind::cpu;
    Case gpu_case = cpu_case;
    gpu_case.run.backend = BackendKind::cuda;
    const Plan cpu_plan = make_plan(cpu_case), gpu_plan = make_plan(gpu_case);
    auto cpu = make_gradient_propagator(cpu_case, cpu_plan, HistoryChoice{});
    auto gpu = make_gradient_propagator(gpu_case, gpu_plan, HistoryChoice{});
    const std::size_t points = std::size_t(cpu_case.grid.points());
    for (const int shot : {0, 1, 0}) {
      CAPTURE(shot);
      std::vector<double> traces[2], gradient[2];
      GradientPropagator* sides[2] = {cpu.get(), gpu.get()};
      for (int k = 0; k < 2; ++k) {
        traces[k] = sides[k]->forward(shot, true);
        gradient[k].assign(points, 0.0);
        sides[k]->adjoint(traces[k], gradient[k]);
      }
      CHECK(traces[0].size() == shot_receivers(cpu_case, std::size_t(shot)).size() * std::size_t(cpu_plan.nt));
      MESSAGE(scheme << " shot " << shot << ", own receivers, CUDA vs CPU: traces " << rel_l2(traces[1], traces[0])
                     << ", gradient " << rel_l2(gradient[1], gradient[0]));
      CHECK(traces[1].size() == traces[0].size());
      CHECK(rel_l2(traces[1], traces[0]) <= 1e-10);
      CHECK(rel_l2(gradient[1], gradient[0]) <= 1e-10);
    }
  }
}

TEST_CASE("the spectral gradient on run.backend = \"cuda\" is refused with the fix (invalid_case)") {
  Case c = gradient_case(false, Precision::fp64, 8, BackendKind::cuda);
  c.scheme.method = Method::spectral;
  const Plan plan = make_plan(c);
  try {
    make_gradient_propagator(c, plan, HistoryChoice{});
    FAIL("expected Error(invalid_case)");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::invalid_case);
    CHECK(std::string(e.what()).find("run.backend = \"cpu\"") != std::string::npos);
  }
}

#if defined(SPECWAVE_HAVE_CUDA)
TEST_CASE("cuBLAS vector operations agree with the Eigen ones; the L-BFGS two-loop recursion on the device too") {
  const std::size_t n = 100003;
  std::vector<double> x(n), y(n), lower(n, -0.5), upper(n, 0.25);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = std::sin(0.37 * double(i) + 0.1), y[i] = std::cos(1.3 * double(i % 977) - 0.2);
  const auto cpu = make_cpu_vector_ops();
  cuda::Stream stream;
  const auto gpu = make_cublas_vector_ops(stream.handle());
  cuda::DeviceArray<double> dx(n), dy(n), dl(n), du(n);
  cuda::synchronize();
  auto up = [&](cuda::DeviceArray<double>& d, const std::vector<double>& h) {
    cuda::copy_to_device(d.data(), h.data(), n * sizeof(double), stream.handle());
  };
  auto down = [&](const cuda::DeviceArray<double>& d) {
    std::vector<double> h(n);
    cuda::copy_to_host(h.data(), d.data(), n * sizeof(double), stream.handle());
    return h;
  };
  up(dx, x), up(dy, y), up(dl, lower), up(du, upper);
  // Reductions in different orders: within n ulps of the sum of |terms| (a loose bound; typically far below).
  double abs_dot = 0;
  for (std::size_t i = 0; i < n; ++i) abs_dot += std::abs(x[i] * y[i]);
  CHECK(std::abs(gpu->dot(n, dx.data(), dy.data()) - cpu->dot(n, x.data(), y.data())) <= 1e-13 * abs_dot);
  const double norm = cpu->nrm2(n, x.data());
  CHECK(std::abs(gpu->nrm2(n, dx.data()) - norm) <= 1e-13 * norm);
  // Element-wise: axpy within 2 ulp (FMA or not), scal, copy and project exact.
  std::vector<double> hy = y;
  cpu->axpy(n, -0.75, x.data(), hy.data());
  gpu->axpy(n, -0.75, dx.data(), dy.data());
  std::vector<double> got = down(dy);
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i)
    worst = std::max(worst, std::abs(got[i] - hy[i]) / (std::abs(y[i]) + 0.75 * std::abs(x[i])));
  CHECK(worst <= 4.5e-16);
  up(dy, hy);
  cpu->scal(n, 2.5, hy.data());
  gpu->scal(n, 2.5, dy.data());
  CHECK(down(dy) == hy);
  gpu->copy(n, dy.data(), dx.data());
  CHECK(down(dx) == hy);
  cpu->project(n, hy.data(), lower.data(), upper.data());
  gpu->project(n, dx.data(), dl.data(), du.data());
  CHECK(down(dx) == hy);
  // Two-loop recursion with 4 pairs: host vectors through Eigen, device vectors through cuBLAS, same result to
  // rounding (1e-12 relative: a dozen reductions, each within 1e-13).
  const int m = 4;
  std::vector<std::vector<double>> s(m, std::vector<double>(n)), yy(m, std::vector<double>(n));
  std::vector<cuda::DeviceArray<double>> ds, dyy;
  for (int k = 0; k < m; ++k) {
    for (std::size_t i = 0; i < n; ++i) {
      s[k][i] = std::sin(0.11 * double(i) * (k + 1) + k);
      yy[k][i] = (1.5 + std::cos(0.01 * double(i))) * s[k][i] + 0.01 * std::sin(double(i) + k);
    }
    ds.emplace_back(n), dyy.emplace_back(n);
    up(ds.back(), s[k]), up(dyy.back(), yy[k]);
  }
  std::vector<const double*> hs, hyy, gs, gyy;
  for (int k = 0; k < m; ++k)
    hs.push_back(s[k].data()), hyy.push_back(yy[k].data()), gs.push_back(ds[k].data()), gyy.push_back(dyy[k].data());
  std::vector<double> r(n);
  optim::lbfgs_two_loop(*cpu, n, hs, hyy, x.data(), r.data());
  up(dx, x);
  cuda::DeviceArray<double> dr(n);
  optim::lbfgs_two_loop(*gpu, n, gs, gyy, dx.data(), dr.data());
  CHECK(rel_l2(down(dr), r) <= 1e-12);
}

TEST_CASE("device VectorOps: add_scaled, masks and path tangent agree with the CPU ones; allocate/upload/download") {
  const std::size_t n = 70001;
  const auto cpu = make_cpu_vector_ops();
  cuda::Stream stream;
  const auto gpu = make_cublas_vector_ops(stream.handle());
  std::vector<double> x(n), d(n), lower(n, -0.5), upper(n, 0.25);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = std::sin(0.37 * double(i) + 0.1), d[i] = std::cos(1.3 * double(i % 977) - 0.2);
  cpu->project(n, x.data(), lower.data(), upper.data());  // many components at a bound
  optim::OpsVector gx(*gpu, n), gd(*gpu, n), gl(*gpu, n), gu(*gpu, n), gw(*gpu, n);
  gpu->upload(n, x.data(), gx.data()), gpu->upload(n, d.data(), gd.data());
  gpu->upload(n, lower.data(), gl.data()), gpu->upload(n, upper.data(), gu.data());
  auto down = [&](const optim::OpsVector& v) {
    std::vector<double> h(n);
    gpu->download(n, v.data(), h.data());
    return h;
  };
  CHECK(down(gd) == d);
  // x + a y: one rounding (FMA) or two: within 2 ulp of |x| + |a y|; x - y exact.
  std::vector<double> w(n);
  cpu->add_scaled(n, x.data(), 0.3, d.data(), w.data());
  gpu->add_scaled(n, gx.data(), 0.3, gd.data(), gw.data());
  const std::vector<double> got = down(gw);
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i)
    worst = std::max(worst, std::abs(got[i] - w[i]) / (std::abs(x[i]) + 0.3 * std::abs(d[i])));
  CHECK(worst <= 4.5e-16);
  cpu->add_scaled(n, x.data(), -1, d.data(), w.data());
  gpu->add_scaled(n, gx.data(), -1, gd.data(), gw.data());
  CHECK(down(gw) == w);
  // Masks: comparisons only, exact.
  w = d;
  cpu->feasible_direction(n, x.data(), lower.data(), upper.data(), w.data());
  gpu->copy(n, gd.data(), gw.data());
  gpu->feasible_direction(n, gx.data(), gl.data(), gu.data(), gw.data());
  CHECK(down(gw) == w);
  CHECK(w != d);
  w = d;
  cpu->projected_gradient(n, x.data(), lower.data(), upper.data(), w.data());
  gpu->copy(n, gd.data(), gw.data());
  gpu->projected_gradient(n, gx.data(), gl.data(), gu.data(), gw.data());
  CHECK(down(gw) == w);
  // Tangent: the same unless x + a d lies within an ulp of a bound (not for these values).
  cpu->path_tangent(n, 0.7, x.data(), d.data(), lower.data(), upper.data(), w.data());
  gpu->path_tangent(n, 0.7, gx.data(), gd.data(), gl.data(), gu.data(), gw.data());
  CHECK(down(gw) == w);
}

namespace {

// ReferenceOptimizer (Eigen, host) and Optimizer on cuBLAS (device) side by side; f is evaluated on the host from the
// downloaded x (the test's function, not the optimiser, crosses the bus). Reductions differ in order, so one
// iteration's results differ by rounding: 1e-12 relative. Left to run freely, the two trajectories drift apart as the
// iterations amplify that rounding (measured on the H200, 2026-12-04: below 1e-12 for four iterations, then growing
// about fivefold an iteration, to 8e-9 relative in x after 15 on the ill-conditioned quadratic). So before each
// iteration the device optimiser is restored from the host's state (OptimizerState: x, gradient, L-BFGS pairs, NLCG
// direction), and every iteration of the trajectory is compared at 1e-12 from the same start; this also checks
// Optimizer::restore on the device. A wrong reduction, sign or index gives differences of 1e-3 or more.
void compare_device_optimizer(const optim::Function& f, optim::Method m, optim::Vector x0, const optim::Bounds& b,
                              int iterations, const optim::Vector& diagonal = optim::Vector()) {
  using namespace optim;
  cuda::Stream stream;
  const auto gpu = make_cublas_vector_ops(stream.handle());
  OptimizerOptions o;
  o.method = m;
  o.lbfgs_memory = 4;
  x0 = project(b, x0);
  const Evaluation f0 = f(x0);
  OpsPreconditioner precondition;
  if (diagonal.size() > 0) {
    o.preconditioner = [&](const Vector& v) { return Vector(v.cwiseProduct(diagonal)); };
    precondition = [&](double* v) {
      Vector h(diagonal.size());
      gpu->download(std::size_t(h.size()), v, h.data());
      h = h.cwiseProduct(diagonal);
      gpu->upload(std::size_t(h.size()), h.data(), v);
    };
  }
  ReferenceOptimizer host(f, b, o, x0, f0);
  o.preconditioner = nullptr;
  const OpsFunction g = [&](const OpsVector& x, OpsVector& gradient) {
    const Evaluation e = f(x.to_host());
    gradient.ops().upload(gradient.size(), e.gradient.data(), gradient.data());
    return e.value;
  };
  OpsBounds ob;
  if (b.active()) ob = {OpsVector::from_host(*gpu, b.lower), OpsVector::from_host(*gpu, b.upper)};
  Optimizer device(*gpu, g, std::move(ob), o, OpsVector::from_host(*gpu, x0), f0.value,
                   OpsVector::from_host(*gpu, f0.gradient), precondition);
  for (int k = 0; k < iterations; ++k) {
    CAPTURE(k);
    if (k > 0) device.restore(host.state());
    const double f_before = host.current().value;
    const IterationRecord want = host.iterate(), got = device.iterate();
    const double tolerance = 1e-12;
    // The step comes from interpolating f along the line, whose differences cancel: its relative rounding is the
    // values' times f / (f_before - f_after) (measured on the H200: 2.2e-12 for a decrease of a fraction of f).
    const double cancellation = std::max(1.0, std::abs(f_before) / std::max(std::abs(f_before - want.value), 1e-300));
    CAPTURE(cancellation);
    CHECK(got.evaluations == want.evaluations);
    CHECK(got.restarted == want.restarted);
    CHECK(std::abs(got.value - want.value) <= tolerance * std::abs(want.value) + 1e-300);
    CHECK(std::abs(got.step - want.step) <= tolerance * cancellation * want.step);
    const Vector x = device.x().to_host();
    CHECK((x - host.x()).norm() <= tolerance * host.x().norm());
    if (want.projected_gradient_norm < 1e-9) break;
  }
}

optim::Evaluation rosenbrock(const optim::Vector& x) {
  optim::Evaluation e;
  e.gradient = optim::Vector::Zero(x.size());
  for (Eigen::Index i = 0; i + 1 < x.size(); ++i) {
    const double a = x[i + 1] - x[i] * x[i], b = 1 - x[i];
    e.value += 100 * a * a + b * b;
    e.gradient[i] += -400 * a * x[i] - 2 * b;
    e.gradient[i + 1] += 200 * a;
  }
  return e;
}

}  // namespace

TEST_CASE("the optimiser on device vectors (cuBLAS) reproduces the host optimiser: quadratic and Rosenbrock") {
  const int n = 2000;  // enough for cuBLAS to reduce in another order than Eigen
  optim::Vector a(n), c(n), start(n);
  for (int i = 0; i < n; ++i) {
    a[i] = std::pow(100.0, double(i) / (n - 1));
    c[i] = 3 * std::sin(1.7 * i + 0.3);
    start[i] = i % 2 == 0 ? -1.2 : 1.0;
  }
  const optim::Function quadratic = [&](const optim::Vector& x) {
    const optim::Vector r = x - c;
    return optim::Evaluation{0.5 * r.dot(a.cwiseProduct(r)), a.cwiseProduct(r)};
  };
  const optim::Bounds box{optim::Vector::Constant(n, -1.0), optim::Vector::Constant(n, 2.0)};
  const optim::Bounds rosenbrock_box{optim::Vector::Constant(n, -2.0), optim::Vector::Constant(n, 0.8)};
  for (const optim::Method m : {optim::Method::lbfgs, optim::Method::nlcg, optim::Method::steepest}) {
    CAPTURE(std::string(optim::to_string(m)));  // a std::string: CAPTURE prints a const char* as its address
    compare_device_optimizer(quadratic, m, optim::Vector::Zero(n), box, 15);
    compare_device_optimizer(quadratic, m, optim::Vector::Zero(n), optim::Bounds{}, 15);
    compare_device_optimizer(rosenbrock, m, start, optim::Bounds{}, 10);
    compare_device_optimizer(rosenbrock, m, start, rosenbrock_box, 10);
    // preconditioned: an approximate inverse Hessian of the quadratic
    compare_device_optimizer(quadratic, m, optim::Vector::Zero(n), box, 15,
                             a.cwiseInverse().cwiseProduct(optim::Vector::LinSpaced(n, 0.5, 2.0)));
  }
}

// The gradient preconditioner on the device (kernels/cuda/smoothing_cuda.hpp,
// solver/inversion/device_preconditioner.hpp) against the host one (solver/inversion/preconditioner.hpp): the same
// padded grid and filter values, cuFFT for FFTW, so the results differ by the transforms' rounding (a few 1e-16
// relative per transform in fp64; 1e-12 leaves room for the different reduction orders, and an off-by-one in the
// padding or the filter gives O(1e-2) or more).
namespace {

std::vector<double> random_field(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (std::size_t k = 0; k < n; ++k) v[k] = u(rng) + std::sin(0.05 * double(k));
  return v;
}

// f on the device (one copy each way in `stream`).
std::vector<double> on_device(const std::vector<double>& v, cudaStream_t stream,
                              const std::function<void(double*)>& f) {
  cuda::DeviceArray<double> d(v.size());
  cuda::synchronize();  // the zero fill (legacy default stream) before the copy in a non-blocking stream
  cuda::copy_to_device(d.data(), v.data(), v.size() * sizeof(double), stream);
  f(d.data());
  std::vector<double> out(v.size());
  cuda::copy_to_host(out.data(), d.data(), v.size() * sizeof(double), stream);
  return out;
}

}  // namespace

TEST_CASE(
    "device Gaussian smoother (cuFFT) agrees with the host one (FFTW): non-cubic grid, anisotropic padding, 1e-12") {
  GridSpec g;
  g.shape = {13, 17, 23};
  g.spacing = {10, 12.5, 8};
  const GaussianSmoother host(g, {25, 15, 30}, 1);
  // pad = ceil(3 sigma / h): 7.5 -> 8, 3.6 -> 4, 11.25 -> 12; the padded grid (29, 25, 47) is odd along x, so
  // the half spectrum's last column is not a Nyquist one.
  REQUIRE(host.pad() == std::array<int, 3>{8, 4, 12});
  cuda::Stream stream;
  const cuda::DeviceGaussianSmoother device(host.shape(), host.pad(), host.filter(), stream.handle());
  const std::vector<double> v = random_field(std::size_t(g.points()), 3);
  std::vector<double> expected = v;
  host.apply(expected);
  CHECK(rel_l2(expected, v) > 0.3);  // the smoothing does something
  const std::vector<double> got = on_device(v, stream.handle(), [&](double* d) { device.apply(d); });
  CHECK(rel_l2(got, expected) <= 1e-12);
  // A second application on the same buffers (the padding is rewritten, not assumed zero).
  host.apply(expected);
  const std::vector<double> twice = on_device(v, stream.handle(), [&](double* d) { device.apply(d), device.apply(d); });
  CHECK(rel_l2(twice, expected) <= 1e-12);
}

TEST_CASE(
    "DevicePreconditioner agrees with GradientPreconditioner: smoothing, source mask, illumination (1e-12); "
    "weights refreshed after set_illumination") {
  Case c;
  c.grid.shape = {14, 11, 19};
  c.grid.spacing = {10, 10, 12};
  SourceSpec a, b;
  a.position = {20, 50, 61.5};
  b.position = {95, 30, 170};
  c.shots = {{{a}}, {{b}}};
  const std::size_t n = std::size_t(c.grid.points());
  const std::vector<double> v = random_field(n, 11);
  auto illumination = [&](double decay) {
    std::vector<double> i(n);
    for (std::size_t k = 0; k < n; ++k)
      i[k] = std::exp(-decay * double(k / (11 * 19))) * (1.2 + std::cos(0.3 * double(k)));
    return i;
  };
  cuda::Stream stream;
  struct Config {
    double smoothing, mask;
    bool compensation;
  };
  for (const Config cfg :
       {Config{15, 40, true}, Config{15, 40, false}, Config{0, 40, true}, Config{0, 40, false}, Config{20, 0, false}}) {
    CAPTURE(cfg.smoothing);
    CAPTURE(cfg.mask);
    CAPTURE(cfg.compensation);
    c.inversion.smoothing_m = cfg.smoothing;
    c.inversion.source_mask_m = cfg.mask;
    c.inversion.illumination_compensation = cfg.compensation;
    c.inversion.illumination_epsilon = 0.05;
    GradientPreconditioner host(c, 1);
    DevicePreconditioner device(host, stream.handle());
    auto device_apply = [&] { return on_device(v, stream.handle(), [&](double* d) { device.apply(d); }); };
    // Without smoothing both are the same products, one multiply each: bitwise equal.
    auto compare = [&](const std::vector<double>& got, const std::vector<double>& expected) {
      if (cfg.smoothing > 0)
        CHECK(rel_l2(got, expected) <= 1e-12);
      else
        CHECK(got == expected);
    };
    if (cfg.compensation) {
      CHECK_THROWS_AS(device_apply(), std::logic_error);  // as the host form, before set_illumination
      host.set_illumination(illumination(0.05));
      const std::vector<double> first = host.apply(v);
      CHECK(rel_l2(first, v) > 0.1);
      compare(device_apply(), first);
      // A new band's illumination: the device weights must follow (the two operators differ by far more than 1e-12).
      host.set_illumination(illumination(0.4));
      const std::vector<double> second = host.apply(v);
      CHECK(rel_l2(second, first) > 1e-2);
      compare(device_apply(), second);
    } else {
      const std::vector<double> expected = host.apply(v);
      CHECK(rel_l2(expected, v) > 0.01);
      compare(device_apply(), expected);
    }
  }
}

// `specwave invert`'s driver on the CUDA backend (FDTD gradient on the device, the optimiser's vectors on cuBLAS)
// against the CPU backend on tests/data/invert_resume.toml (2 shots, 2 bands, smoothing and illumination
// compensation, 3 iterations a band: on the CUDA backend the preconditioner is the DevicePreconditioner, its
// weights refreshed at the second band), fp64: the gradients agree to 1e-12 and the optimiser is a smooth map of
// them, so misfits and models agree to 1e-8 relative over the 6 iterations, with the same evaluation counts.
TEST_CASE("invert on the CUDA backend (device optimiser) reproduces the CPU inversion (fp64)") {
  const std::filesystem::path base =
      std::filesystem::temp_directory_path() / fmt::format("specwave-gpu-invert-{}", ::getpid());
  auto run = [&](BackendKind backend) {
    // The source tree may sit elsewhere than where it was built (scripts/gpu-check on a GPU machine sets this).
    const char* source_dir = std::getenv("SPECWAVE_SOURCE_DIR");
    Case c = io::read_case_file(std::string(source_dir ? source_dir : SPECWAVE_SOURCE_DIR) +
                                "/tests/data/invert_resume.toml");
    c.run.backend = backend;
    c.output.directory = (base / (backend == BackendKind::cuda ? "cuda" : "cpu")).string();
    return run_inversion(c, InversionOptions{true, false});
  };
  const InversionSummary cpu = run(BackendKind::cpu), gpu = run(BackendKind::cuda);
  CHECK(gpu.vector_ops == "cublas");
  CHECK(cpu.vector_ops == "eigen");
  REQUIRE(gpu.history.size() == cpu.history.size());
  for (std::size_t k = 0; k < cpu.history.size(); ++k) {
    CAPTURE(k);
    CHECK(gpu.history[k].evaluations == cpu.history[k].evaluations);
    CHECK(std::abs(gpu.history[k].misfit - cpu.history[k].misfit) <= 1e-8 * cpu.history[k].misfit);
    REQUIRE(cpu.history[k].model_error);
    CHECK(std::abs(*gpu.history[k].model_error - *cpu.history[k].model_error) <= 1e-8 * *cpu.history[k].model_error);
  }
  CHECK(cpu.failure.empty());
  CHECK(gpu.failure.empty());
  std::filesystem::remove_all(base);
}
#endif

int main(int argc, char** argv) {
  io::h5::silence_library_errors();
#if defined(SPECWAVE_HAVE_CUDA)
  const auto status = cuda::query_devices();
  if (!status.usable) {
    std::printf("SKIPPED: GPU tests need a usable CUDA device: %s\n", status.reason.c_str());
    return 77;
  }
  std::printf("GPU tests on %s\n", status.devices.front().name.c_str());
#else
  std::printf("SKIPPED: this build has no CUDA backend (SPECWAVE_CUDA=OFF or no toolkit)\n");
  return 77;
#endif
  doctest::Context context(argc, argv);
  return context.run();
}
