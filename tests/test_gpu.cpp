// GPU tests (label gpu): the CUDA propagators (FDTD, spectral) against the CPU propagators and the Eigen
// references on the same cases. Without a usable device the executable prints why and exits 77, which CTest
// reports as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>

#include "case_builders.hpp"
#include "io/hdf5.hpp"
#include "solver/forward.hpp"
#include "solver/plan.hpp"
#include "solver/validate.hpp"
#include "solver/propagator.hpp"
#include "validation/reference.hpp"
#include "validation/spectral_reference.hpp"

#if defined(SPECWAVE_HAVE_CUDA)
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/spectral_cuda.hpp"
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

namespace {

// The FDTD GPU tests' case (Gaussian anomaly, two off-grid sources, off-grid receivers) with the spectral method.
Case spectral_case(SpectralAbsorber absorber, Precision precision) {
  Case c = configured_case(8, 8, false, ModelSpec::Kind::gaussian);
  c.scheme.method = Method::spectral;
  c.boundary.spectral_absorber = absorber;  // each with its default profile
  c.run.precision = precision;
  return c;
}

const char* absorber_name(SpectralAbsorber a) { return a == SpectralAbsorber::pml ? "pml" : "damping"; }

}  // namespace

#if defined(SPECWAVE_HAVE_CUDA)
TEST_CASE("cuFFT wrapper: the forward transform is the DFT and leaves its input unchanged; a round trip gives N x input") {
  // The spectral propagator transforms its state fields (u^n, w_a) out of place and relies on the R2C input
  // being preserved; C2R may overwrite its input, and the propagator never reuses it.
  for (const cuda::SpectralShape shape : {cuda::SpectralShape{12, 10, 9}, cuda::SpectralShape{8, 6, 10}}) {
    CAPTURE(shape.nx);
    const std::size_t n = shape.points();
    std::vector<double> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = std::sin(0.37 * double(i) + 0.1) + 0.25 * std::cos(1.3 * double(i * i % 17));
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
    for (const auto& [kz, ky, kx] : {std::array<int, 3>{0, 0, 0}, std::array<int, 3>{1, 2, 3}, std::array<int, 3>{shape.nz / 2, 1, shape.nx / 2},
                                     std::array<int, 3>{shape.nz - 1, shape.ny - 2, 1}}) {
      std::complex<double> dft = 0;
      for (int z = 0; z < shape.nz; ++z)
        for (int y = 0; y < shape.ny; ++y)
          for (int x = 0; x < shape.nx; ++x) {
            const double phase = -2 * M_PI * (double(kz) * z / shape.nz + double(ky) * y / shape.ny + double(kx) * x / shape.nx);
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

TEST_CASE("CUDA spectral (cuFFT) agrees with the CPU spectral engine: fp64 <= 1e-12, fp32 <= 1e-5 (traces and final field)") {
  for (SpectralAbsorber absorber : {SpectralAbsorber::pml, SpectralAbsorber::damping})
    for (const auto& [precision, tolerance] : {std::pair{Precision::fp64, 1e-12}, std::pair{Precision::fp32, 1e-5}}) {
      const std::string config = std::string(absorber_name(absorber)) + (precision == Precision::fp64 ? " fp64" : " fp32");
      CAPTURE(config);
      Case cpu = spectral_case(absorber, precision);
      Case gpu = cpu;
      gpu.run.backend = BackendKind::cuda;
      const Plan cpu_plan = make_plan(cpu), gpu_plan = make_plan(gpu);
      REQUIRE(gpu_plan.backend == BackendKind::cuda);
      REQUIRE(make_propagator(gpu, gpu_plan)->name().rfind("spectral-cuda-", 0) == 0);
      const auto a = simulate_shot(cpu, cpu_plan, 0), b = simulate_shot(gpu, gpu_plan, 0);
      REQUIRE(a.traces.size() == b.traces.size());
      REQUIRE(a.final_field.size() == b.final_field.size());
      const double traces = rel_l2(b.traces, a.traces), field = rel_l2(b.final_field, a.final_field);
      MESSAGE("spectral " << config << ": traces " << traces << ", final field " << field);
      CHECK(traces <= tolerance);
      CHECK(field <= tolerance);
    }
}

TEST_CASE("CUDA spectral: a second shot on the same propagator repeats the first (state fully reset)") {
  for (SpectralAbsorber absorber : {SpectralAbsorber::pml, SpectralAbsorber::damping}) {
    CAPTURE(absorber_name(absorber));
    Case c = spectral_case(absorber, Precision::fp64);
    c.run.backend = BackendKind::cuda;
    const Plan plan = make_plan(c);
    auto p = make_propagator(c, plan);
    std::vector<std::vector<double>> traces;
    for (int run = 0; run < 2; ++run) {
      p->begin_shot(plan.sources[0], plan.wavelets[0]);
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

TEST_CASE("CUDA spectral agrees with the Eigen FFT reference in fp64 (both absorbers)") {
  for (SpectralAbsorber absorber : {SpectralAbsorber::pml, SpectralAbsorber::damping}) {
    CAPTURE(absorber_name(absorber));
    Case c = spectral_case(absorber, Precision::fp64);
    c.run.backend = BackendKind::cuda;
    const Plan plan = make_plan(c);
    const auto expected = validation::run_spectral_reference(reference_problem(c, plan, 0));
    std::vector<double> expected_traces(expected.traces.size());  // Eigen's (receiver, n) matrix -> C order
    for (int r = 0; r < expected.traces.rows(); ++r)
      for (int n = 0; n < expected.traces.cols(); ++n) expected_traces[std::size_t(r) * plan.nt + n] = expected.traces(r, n);
    const auto out = simulate_shot(c, plan, 0);
    const double traces = rel_l2(out.traces, expected_traces), field = rel_l2(out.final_field, expected.final_field);
    MESSAGE("spectral " << absorber_name(absorber) << " fp64, CUDA vs Eigen reference: traces " << traces << ", final field "
                        << field);
    CHECK(traces < 1e-12);
    CHECK(field < 1e-12);
  }
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
