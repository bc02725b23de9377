// GPU tests (label gpu): the CUDA propagator against the CPU propagator and the Eigen reference on the same
// cases. Without a usable device the executable prints why and exits 77, which CTest reports as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>

#include "case_builders.hpp"
#include "io/hdf5.hpp"
#include "solver/forward.hpp"
#include "solver/plan.hpp"
#include "solver/validate.hpp"
#include "validation/reference.hpp"

#if defined(SPECWAVE_HAVE_CUDA)
#include "kernels/cuda/device.hpp"
#endif

using namespace specwave;
using specwave::testing::small_case;

namespace {

double rel_l2(const std::vector<double>& a, const std::vector<double>& b) {
  return validation::relative_l2(a.data(), b.data(), a.size());
}

Case configured_case(int order, int pml, bool free_surface, ModelSpec::Kind model) {
  Case c = small_case(40, 10, 2000, order, pml, 15, 0.15);
  c.grid.shape = {40, 44, 48};
  c.model.kind = model;
  c.model.velocity = 2000;
  c.model.anomaly = -400;
  c.model.center = {190, 200, 230};
  c.model.radius = 60;
  c.model.interfaces = {150, 260};
  c.model.velocities = {1800, 2200, 2600};
  c.boundary.free_surface = free_surface;
  c.shots[0].sources[0].position = {free_surface ? 21.0 : 171.3, 203.4, 188.8};
  SourceSpec second = c.shots[0].sources[0];
  second.position = {200, 180, 250};
  second.wavelet.peak_frequency = 12;
  c.shots[0].sources.push_back(second);
  c.receivers = {{free_surface ? 15.5 : 110.0, 150.0, 290.3}, {250.7, 220.1, 150.0}, {200, 200, 200}};
  return c;
}

}  // namespace

TEST_CASE("CUDA FDTD agrees with the CPU engine: fp64 <= 1e-12, fp32 <= 1e-5 (traces and final field)") {
  struct Config {
    const char* name;
    int order, pml;
    bool free_surface;
    ModelSpec::Kind model;
  };
  for (const Config& cfg : {Config{"order 2, no PML", 2, 0, false, ModelSpec::Kind::homogeneous},
                            Config{"order 8, CPML 8, Gaussian", 8, 8, false, ModelSpec::Kind::gaussian},
                            Config{"order 4, CPML 6, free surface, layers", 4, 6, true, ModelSpec::Kind::layered},
                            Config{"order 16, CPML 5", 16, 5, false, ModelSpec::Kind::gaussian}}) {
    const std::string config = cfg.name;
    CAPTURE(config);
    for (const auto& [precision, tolerance] : {std::pair{Precision::fp64, 1e-12}, std::pair{Precision::fp32, 1e-5}}) {
      Case cpu = configured_case(cfg.order, cfg.pml, cfg.free_surface, cfg.model);
      cpu.run.precision = precision;
      Case gpu = cpu;
      gpu.run.backend = BackendKind::cuda;
      const Plan cpu_plan = make_plan(cpu), gpu_plan = make_plan(gpu);
      REQUIRE(gpu_plan.backend == BackendKind::cuda);
      const auto a = simulate_shot(cpu, cpu_plan, 0), b = simulate_shot(gpu, gpu_plan, 0);
      const double traces = rel_l2(b.traces, a.traces), field = rel_l2(b.final_field, a.final_field);
      MESSAGE(config << (precision == Precision::fp64 ? " fp64" : " fp32") << ": traces " << traces << ", final field " << field);
      CHECK(traces <= tolerance);
      CHECK(field <= tolerance);
    }
  }
}

TEST_CASE("the tiled (2.5D) CUDA kernel agrees with the generic per-point kernel") {
  // Same arithmetic in both: fp64 to rounding (1e-13), fp32 to 1e-6 (FMA contraction may differ).
  for (int order : {2, 4, 8, 16})
    for (bool free_surface : {false, true}) {
      CAPTURE(order);
      CAPTURE(free_surface);
      for (const auto& [precision, tolerance] : {std::pair{Precision::fp64, 1e-13}, std::pair{Precision::fp32, 1e-6}}) {
        Case c = configured_case(order, 6, free_surface, ModelSpec::Kind::gaussian);
        c.grid.shape = {41, 45, 50};  // not multiples of the tile
        c.run.precision = precision;
        c.run.backend = BackendKind::cuda;
        const Plan plan = make_plan(c);
        setenv("SPECWAVE_CUDA_KERNEL", "generic", 1);
        const auto a = simulate_shot(c, plan, 0);
        setenv("SPECWAVE_CUDA_KERNEL", "tiled", 1);
        const auto b = simulate_shot(c, plan, 0);
        unsetenv("SPECWAVE_CUDA_KERNEL");
        CHECK(rel_l2(b.traces, a.traces) <= tolerance);
        CHECK(rel_l2(b.final_field, a.final_field) <= tolerance);
      }
    }
}

TEST_CASE("CUDA FDTD agrees with the Eigen reference in fp64") {
  Case c = configured_case(8, 8, true, ModelSpec::Kind::gaussian);
  c.run.backend = BackendKind::cuda;
  const Plan plan = make_plan(c);
  const auto ref = reference_problem(c, plan, 0);
  const auto expected = validation::run_reference(ref);
  const auto out = simulate_shot(c, plan, 0);
  CHECK(validation::relative_l2(out.final_field.data(), expected.final_field.data(), out.final_field.size()) < 1e-12);
}

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
