// specwave-gpu-bench: the GPU part of the benchmark (scripts/bench, scripts/gpu-check). In one run:
// device-to-device copy bandwidth, the CUDA FDTD step at 256^3 and 512^3 for orders 2, 4, 8 in fp32 and fp64
// (Gpts/s and effective bandwidth at 16 / 32 B per point as a fraction of the copy bandwidth), the GPU over CPU
// speedup on the same step, the spectral step at 256^3 and 512^3 (damping layer and split-field PML, fp32 and
// fp64) against its cuFFT transforms alone, the propagator's whole step at 512^3 without a CPML and with one of
// 10 and 20 points (the CPML's cost), the staggered scheme (a density model) and with Q against the second-order
// whole step at 256^3 (issue 19's cost ratios), the elastic scheme's whole step against it at 256^3 (issue 20's; 512^3
// with --elastic-sizes 512, whose set-up on the host takes a while), and shots per second with 1, 2, 4 and 8 shots
// sharing the device. The tiled kernel at every tile shape (SPECWAVE_CUDA_TILE) and three depths at 512^3, order 8,
// fp32 and fp64.
// --profile N runs only a few steps of each stencil kernel at N^3 (order 8 fp32, with a CPML of 10), for ncu.
// Without a usable device it prints why and exits 77.
#include <cuda_runtime_api.h>
#include <omp.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "kernels/cpu/fdtd_cpu.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/fdtd_cuda.hpp"
#include "kernels/cuda/spectral_cuda.hpp"
#include "kernels/fdtd_coefficients.hpp"
#include "solver/forward/forward.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/propagator.hpp"

using namespace specwave;

namespace {

#define CHECK_CUDA(expr)                                                                               \
  do {                                                                                                 \
    const cudaError_t e = (expr);                                                                      \
    if (e != cudaSuccess) throw std::runtime_error(std::string(#expr) + ": " + cudaGetErrorString(e)); \
  } while (0)

// Milliseconds of `work` on the default stream, best of `repetitions`, measured with events.
template <class Work>
double time_ms(int repetitions, Work&& work) {
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  double best = 1e300;
  for (int r = 0; r < repetitions; ++r) {
    CHECK_CUDA(cudaEventRecord(a));
    work();
    CHECK_CUDA(cudaEventRecord(b));
    CHECK_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
    best = std::min(best, double(ms));
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return best;
}

// Bytes read plus written per second by cudaMemcpy device-to-device.
double copy_bandwidth(std::size_t bytes) {
  cuda::DeviceBuffer a(bytes), b(bytes);
  CHECK_CUDA(cudaMemcpy(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice));
  const double ms =
      time_ms(10, [&] { CHECK_CUDA(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice)); });
  return 2.0 * double(bytes) / (ms * 1e-3);
}

template <class T>
FdtdStep<T> step_view(const FieldLayout& L, T* u, T* u_prev, const T* vel, int order) {
  FdtdStep<T> s;
  s.layout = L;
  s.u = u;
  s.u_prev = u_prev;
  s.vel2dt2 = vel;
  s.coef = make_fdtd_coefficients<T>(order / 2, {10.0, 10.0, 10.0});
  for (int a = 0; a < 3; ++a) s.pml[a].n = L.extent(a);
  return s;
}

// A smooth separable field and (v dt)^2 at 0.8 of the CFL limit for v = 2000 m/s, h = 10 m. Separable and in
// parallel: three short tables of sines, one product per point (a 512^3 fill takes well under a second).
template <class T>
void fill_host(const FieldLayout& L, int order, std::vector<T>& u, std::vector<T>& vel) {
  GridSpec g;
  g.spacing = {10, 10, 10};
  const double dt = 0.8 * stable_dt(g, order, 2000);
  u.assign(L.size(), T(0));
  vel.assign(L.size(), T(2000.0 * 2000.0 * dt * dt));
  std::vector<double> fx(L.nx), fy(L.ny), fz(L.nz);
  for (int x = 0; x < L.nx; ++x) fx[x] = std::sin(0.05 * x);
  for (int y = 0; y < L.ny; ++y) fy[y] = std::cos(0.07 * y);
  for (int z = 0; z < L.nz; ++z) fz[z] = std::sin(0.03 * z + 0.5);
#pragma omp parallel for schedule(static)
  for (int z = 0; z < L.nz; ++z)
    for (int y = 0; y < L.ny; ++y) {
      const double zy = fz[z] * fy[y];
      T* row = u.data() + L.index(z, y, 0);
      for (int x = 0; x < L.nx; ++x) row[x] = T(zy * fx[x]);
    }
}

// The step benchmarks' device fields: fill_host's field in u and u_prev, its (v dt)^2 in vel.
template <class T>
struct StepFields {
  FieldLayout layout;
  cuda::DeviceArray<T> u, u_prev, vel;
  StepFields(int n, int order)
      : layout{n, n, n, order / 2}, u(layout.size()), u_prev(layout.size()), vel(layout.size()) {
    std::vector<T> field, v;
    fill_host(layout, order, field, v);
    cuda::copy_to_device(u.data(), field.data(), field.size() * sizeof(T));
    cuda::copy_to_device(u_prev.data(), field.data(), field.size() * sizeof(T));
    cuda::copy_to_device(vel.data(), v.data(), v.size() * sizeof(T));
  }
};

struct StepResult {
  int n, order;
  std::string precision;
  double ms_per_step, gpts, fraction;
};

template <class T>
StepResult gpu_step(int n, int order, int steps, double copy_bw, cuda::StencilKernel kernel) {
  StepFields<T> f(n, order);
  const FieldLayout& L = f.layout;
  auto& du = f.u;
  auto& dp = f.u_prev;
  auto& dv = f.vel;
  T* a = du.data();
  T* b = dp.data();
  auto run = [&] {
    for (int k = 0; k < steps; ++k) {
      cuda::fdtd_step(step_view<T>(L, a, b, dv.data(), order), nullptr, kernel, launch::default_tile_shape(sizeof(T)));
      std::swap(a, b);
    }
  };
  run();  // warm-up
  const double ms = time_ms(3, run) / steps;
  const double gpts = double(L.interior_points()) / (ms * 1e-3) / 1e9;
  return {
      n,
      order,
      std::string(sizeof(T) == 4 ? "fp32" : "fp64") + (kernel == cuda::StencilKernel::tiled ? " tiled" : " generic"),
      ms,
      gpts,
      gpts * 1e9 * 4 * sizeof(T) / copy_bw};
}

// The tiled kernel's shapes (launch::tile_shapes) at three depths along z and 1 or 2 rows per thread, on one n^3 field
// of order `order`: ms per step of each, best of 3 runs of `steps` steps after a warm-up, for the table that chooses
// the default.
template <class T>
std::vector<std::pair<cuda::TileShape, double>> tile_sweep(int n, int order, int steps) {
  StepFields<T> f(n, order);
  const FieldLayout& L = f.layout;
  auto& du = f.u;
  auto& dp = f.u_prev;
  auto& dv = f.vel;
  std::vector<std::pair<cuda::TileShape, double>> out;
  for (const launch::TileShape& shape : launch::tile_shapes)
    for (int z : {8, 32, 128})
      for (int rows : {1, 2}) {
        const cuda::TileShape tile{shape.x, shape.y, z, rows};
        if (!launch::tile_shape_ok(tile)) continue;
        T* a = du.data();
        T* b = dp.data();
        auto run = [&] {
          for (int k = 0; k < steps; ++k) {
            cuda::fdtd_step(step_view<T>(L, a, b, dv.data(), order), nullptr, cuda::StencilKernel::tiled, tile);
            std::swap(a, b);
          }
        };
        run();
        out.emplace_back(tile, time_ms(3, run) / steps);
      }
  return out;
}

double cpu_ms_per_step(int n, int order, int steps) {
  const FieldLayout L{n, n, n, order / 2};
  std::vector<float> u, vel;
  fill_host(L, order, u, vel);
  std::vector<float> prev = u;
  float* a = u.data();
  float* b = prev.data();
  cpu::fdtd_step(step_view<float>(L, a, b, vel.data(), order));
  const auto t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < steps; ++k) {
    cpu::fdtd_step(step_view<float>(L, a, b, vel.data(), order));
    std::swap(a, b);
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / steps;
}

// The benchmarks' CUDA case: n^3 points 10 m apart, 2000 m/s, a 10 Hz Ricker source at the centre, `pml_width`
// points of absorbing layer, precision T, no receivers yet, no sampling floor (the bench times, it does not model).
template <class T>
Case bench_case(const char* name, int n, int pml_width) {
  Case c;
  c.name = name;
  c.grid.shape = {n, n, n};
  c.grid.spacing = {10, 10, 10};
  c.model.velocity = 2000;
  c.scheme.min_points_per_wavelength = 1;
  c.time.duration = 1.0;
  c.boundary.pml_width = pml_width;
  c.run.backend = BackendKind::cuda;
  c.run.precision = sizeof(T) == 8 ? Precision::fp64 : Precision::fp32;
  c.output.directory = "/tmp/specwave-gpu-bench";
  SourceSpec s;
  s.position = {5.0 * n, 5.0 * n, 5.0 * n};
  s.wavelet.peak_frequency = 10;
  c.shots.push_back({{s}});
  return c;
}

// The whole CUDA FDTD step of the propagator (what a forward run does each step: the update, the CPML on every
// face, one Ricker source, a line of receivers recorded every step) at n^3, order `order`, a CPML of `pml_width`
// points (0: none), with the stencil kernel chosen as users choose it (SPECWAVE_CUDA_KERNEL). Milliseconds per
// step, best of 3 runs of `steps` steps after 3 warm-up steps; the field starts at zero.
// `physics`: the second-order scheme (constant density), the staggered scheme with three layers of density, or the
// same with Q (30, 60, 120 by layer, 3 mechanisms): issue 19's cost ratios on the GPU; or the elastic scheme on the
// same layers (vs 0, 1000, 1300 m/s: water over two solids), issue 20's.
enum class Physics { second_order, staggered, visco, elastic };
template <class T>
double propagator_ms_per_step(int n, int order, int pml_width, cuda::StencilKernel kernel, int steps,
                              Physics physics = Physics::second_order) {
  ::setenv("SPECWAVE_CUDA_KERNEL", kernel == cuda::StencilKernel::tiled ? "tiled" : "generic", 1);
  const int warm = 3, repetitions = 3;
  Case c = bench_case<T>("gpu-bench-step", n, pml_width);
  c.scheme.order = order;
  if (physics != Physics::second_order) {
    c.scheme.formulation = Formulation::staggered;
    c.model.kind = ModelSpec::Kind::layered;
    c.model.interfaces = {10.0 * n / 3, 20.0 * n / 3};
    c.model.velocities = {2000.0, 2000.0, 2000.0};
    c.model.densities = {1000.0, 2000.0, 2500.0};
  }
  if (physics == Physics::elastic) {
    c.scheme.formulation = Formulation::elastic;
    c.model.shear_velocities = {0.0, 1000.0, 1300.0};
  }
  if (physics == Physics::visco) {
    c.attenuation.present = true;
    c.attenuation.q_layers = {30.0, 60.0, 120.0};
  }
  // The same receivers whatever the width: a line 26 points inside the faces (clear of a 20-point layer and the
  // receivers' interpolation stencils), one every two points.
  for (int x = 26; x < n - 26; x += 2) c.receivers.push_back({260.0, 5.0 * n, 10.0 * x});
  Plan plan = make_plan(c);
  plan.nt = warm + repetitions * steps;
  auto prop = make_propagator(c, plan);
  prop->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
  prop->advance(0, warm);
  cuda::synchronize();
  double best = 1e300;
  for (int k = 0, step = warm; k < repetitions; ++k, step += steps) {
    const auto t0 = std::chrono::steady_clock::now();
    prop->advance(step, step + steps);
    cuda::synchronize();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  ::unsetenv("SPECWAVE_CUDA_KERNEL");
  return best / steps;
}

// Shots per second with `k` shots of a 128^3 case (order 8, CPML 16, `steps` steps each) in flight at once.
double shots_per_second(int k, int steps) {
  Case c = bench_case<float>("gpu-bench", 128, 16);
  c.shots.assign(std::size_t(k), c.shots.front());
  c.receivers = {{300, 640, 400}, {300, 640, 900}};
  Plan plan = make_plan(c);
  plan.nt = steps;
  std::vector<std::unique_ptr<Propagator>> props;
  for (int i = 0; i < k; ++i) {
    props.push_back(make_propagator(c, plan));
    props.back()->begin_shot(plan.sources[i], plan.wavelets[i], plan.receivers);
  }
  cuda::synchronize();
  const auto t0 = std::chrono::steady_clock::now();
  for (int n = 0; n < steps; n += 10)
    for (auto& p : props) p->advance(n, std::min(steps, n + 10));  // asynchronous: the shots overlap on the device
  for (auto& p : props) p->traces();                               // waits for each shot's stream
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return k / seconds;  // shots of `steps` steps
}

// The spectral step (CUDA propagator, 20-point absorbing layer, one source and one receiver) against the same
// cuFFT transforms alone: plans of the same shape and precision, the same number of transforms per step (damping
// layer: 1 forward + 1 inverse; split-field PML: 4 forward + 6 inverse). Both timed on the host over `steps`
// steps, the stream synchronised at the end, best of 3: the ratio is what the pointwise kernels add.
struct SpectralResult {
  int n;
  std::string absorber, precision;
  double ms_per_step, fft_ms_per_step, gpts;
};

template <class T>
SpectralResult spectral_step(int n, SpectralAbsorber absorber, int steps) {
  const int warm = 3, repetitions = 3;
  Case c = bench_case<T>("gpu-bench-spectral", n, 20);
  c.scheme.method = Method::spectral;
  c.time.dt = 1e-3;  // below the spectral limit (1.8e-3 s at h = 10 m, v = 2000 m/s)
  c.time.duration = (warm + repetitions * steps + 2) * 1e-3;
  c.boundary.spectral_absorber = absorber;
  c.receivers = {{300, 5.0 * n, 300}};
  const Plan plan = make_plan(c);
  SpectralResult r{
      n, absorber == SpectralAbsorber::pml ? "pml" : "damping", sizeof(T) == 8 ? "fp64" : "fp32", 1e300, 1e300, 0};
  {
    auto prop = make_propagator(c, plan);
    prop->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
    prop->advance(0, warm);
    prop->traces();  // waits for the propagator's stream
    int step = warm;
    for (int k = 0; k < repetitions; ++k, step += steps) {
      const auto t0 = std::chrono::steady_clock::now();
      prop->advance(step, step + steps);
      prop->traces();
      r.ms_per_step =
          std::min(r.ms_per_step,
                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / steps);
    }
  }
  {
    const cuda::SpectralShape shape{n, n, n};
    cuda::Stream stream;
    cuda::RealFft3d<T> fft(shape, stream.handle());
    cuda::DeviceArray<T> real(shape.points()), real_out(shape.points());
    cuda::DeviceArray<cuda::Complex<T>> spectrum(shape.spectrum_points()), spectrum_in(shape.spectrum_points());
    const int forward = absorber == SpectralAbsorber::pml ? 4 : 1, inverse = absorber == SpectralAbsorber::pml ? 6 : 1;
    auto transforms = [&](int count) {
      for (int k = 0; k < count; ++k) {
        for (int f = 0; f < forward; ++f) fft.forward(real.data(), spectrum.data());
        for (int b = 0; b < inverse; ++b) fft.backward(spectrum_in.data(), real_out.data());
      }
      stream.synchronize();
    };
    cuda::synchronize();  // the zero fills of the buffers
    transforms(warm);
    for (int k = 0; k < repetitions; ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      transforms(steps);
      r.fft_ms_per_step =
          std::min(r.fft_ms_per_step,
                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / steps);
    }
  }
  r.gpts = double(c.grid.points()) / (r.ms_per_step * 1e-3) / 1e9;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"specwave GPU benchmark"};
  std::vector<int> sizes = {256, 512}, orders = {2, 4, 8}, spectral_sizes = {256, 512}, run_sizes = {512},
                   staggered_sizes = {256}, elastic_sizes = {256};
  int steps = 20;
  std::string output;
  int profile = 0;
  app.add_option("--profile", profile, "Only a few steps of each kernel at this n^3 (for ncu), then exit");
  app.add_option("--sizes", sizes, "Grid points per axis")->capture_default_str();
  app.add_option("--orders", orders, "FDTD orders")->capture_default_str();
  app.add_option("--spectral-sizes", spectral_sizes, "Grid points per axis of the spectral step")
      ->capture_default_str();
  app.add_option("--run-sizes", run_sizes, "Grid points per axis of the propagator's whole step (CPML 0, 10, 20)")
      ->capture_default_str();
  app.add_option("--staggered-sizes", staggered_sizes,
                 "Grid points per axis of the staggered scheme's whole step against the second-order one (issue 19)")
      ->capture_default_str();
  app.add_option("--elastic-sizes", elastic_sizes,
                 "Grid points per axis of the elastic scheme's whole step against the second-order one (issue 20)")
      ->capture_default_str();
  app.add_option("--steps", steps, "Timed steps per configuration")->capture_default_str();
  app.add_option("--output", output, "Also write the Markdown report here");
  CLI11_PARSE(app, argc, argv);
  const auto status = cuda::query_devices();
  if (!status.usable) {
    std::printf("SKIPPED: no usable GPU: %s\n", status.reason.c_str());
    return 77;
  }
  try {
    if (profile > 0) {
      for (auto kernel : {cuda::StencilKernel::generic, cuda::StencilKernel::tiled}) {
        gpu_step<float>(profile, 8, 2, 1.0, kernel);
        propagator_ms_per_step<float>(profile, 8, 10, kernel, 2);
      }
      std::printf("specwave-gpu-bench --profile %d: done\n", profile);
      return 0;
    }
    const auto& d = status.devices.front();
    std::string report;
    // Each part is printed as soon as it is measured (a run stopped by a timeout keeps what it measured).
    auto emit = [&report](const std::string& text) {
      report += text;
      std::fputs(text.c_str(), stdout);
      std::fflush(stdout);
    };
    emit(
        fmt::format("# specwave GPU benchmark\n\n- device: {} (compute capability {}.{}, {} SMs, {:.0f} GiB)\n"
                    "- driver {}.{}, runtime {}.{}\n",
                    d.name, d.compute_major, d.compute_minor, d.multiprocessors, d.total_bytes / double(1ull << 30),
                    status.driver_version / 1000, status.driver_version % 1000 / 10, status.runtime_version / 1000,
                    status.runtime_version % 1000 / 10));
    const double bw = copy_bandwidth(std::size_t(1) << 30);
    emit(fmt::format("- device-to-device copy of 1 GiB: {:.0f} GB/s (bytes read + written)\n\n", bw / 1e9));
    emit(
        "| n^3 | order | precision, kernel | ms/step | Gpts/s | effective GB/s | of copy bandwidth "
        "|\n|---:|---:|---|---:|---:|---:|---:|\n");
    double gpu_256_8 = 0;
    for (int n : sizes)
      for (int order : orders)
        for (int fp64 = 0; fp64 < 2; ++fp64)
          for (auto kernel : {cuda::StencilKernel::generic, cuda::StencilKernel::tiled}) {
            const StepResult r =
                fp64 ? gpu_step<double>(n, order, steps, bw, kernel) : gpu_step<float>(n, order, steps, bw, kernel);
            if (n == 256 && order == 8 && !fp64)
              gpu_256_8 = gpu_256_8 > 0 ? std::min(gpu_256_8, r.ms_per_step) : r.ms_per_step;
            emit(fmt::format("| {} | {} | {} | {:.3f} | {:.1f} | {:.0f} | {:.2f} |\n", n, order, r.precision,
                             r.ms_per_step, r.gpts, r.fraction * bw / 1e9, r.fraction));
            std::fflush(stdout);
          }
    if (gpu_256_8 > 0) {
      const double cpu = cpu_ms_per_step(256, 8, 3);
      emit(fmt::format(
          "\nGPU over CPU ({} OpenMP threads), order 8 fp32 256^3: {:.1f} ms vs {:.2f} ms per step = {:.0f}x\n",
          omp_get_max_threads(), cpu, gpu_256_8, cpu / gpu_256_8));
    }
    // The tiled kernel's shapes at 512^3 (or the largest size asked for), order 8: the sweep that picks its default.
    {
      const int n = sizes.empty() ? 512 : *std::max_element(sizes.begin(), sizes.end());
      emit(
          fmt::format("\n| tile (SPECWAVE_CUDA_TILE) at {}^3, order 8 | fp32 ms/step | fp32 of copy bandwidth | fp64 "
                      "ms/step | fp64 of copy bandwidth |\n|---|---:|---:|---:|---:|\n",
                      n));
      const auto f32 = tile_sweep<float>(n, 8, steps);
      const auto f64 = tile_sweep<double>(n, 8, steps);
      const double points = double(n) * n * n;
      for (std::size_t k = 0; k < f32.size(); ++k)
        emit(fmt::format("| {} | {:.3f} | {:.2f} | {:.3f} | {:.2f} |\n", launch::to_string(f32[k].first), f32[k].second,
                         points * 16 / (f32[k].second * 1e-3) / bw, f64[k].second,
                         points * 32 / (f64[k].second * 1e-3) / bw));
    }
    // The propagator's whole step with and without the CPML (the goal: the CPML on all faces costs at most
    // 15% over the interior-only step), each stencil kernel, fp32 and fp64.
    emit(
        "\n| n^3 | order | precision, kernel | whole step, no CPML ms | CPML 10 ms | CPML 20 ms | CPML 10 / none | "
        "CPML 20 / none | Gpts/s with CPML 20 |\n|---:|---:|---|---:|---:|---:|---:|---:|---:|\n");
    for (int n : run_sizes)
      for (int fp64 = 0; fp64 < 2; ++fp64)
        for (auto kernel : {cuda::StencilKernel::generic, cuda::StencilKernel::tiled}) {
          double ms[3];
          const int widths[3] = {0, 10, 20};
          for (int w = 0; w < 3; ++w)
            ms[w] = fp64 ? propagator_ms_per_step<double>(n, 8, widths[w], kernel, steps)
                         : propagator_ms_per_step<float>(n, 8, widths[w], kernel, steps);
          emit(fmt::format("| {} | 8 | {} {} | {:.3f} | {:.3f} | {:.3f} | {:.2f} | {:.2f} | {:.1f} |\n", n,
                           fp64 ? "fp64" : "fp32", kernel == cuda::StencilKernel::tiled ? "tiled" : "generic", ms[0],
                           ms[1], ms[2], ms[1] / ms[0], ms[2] / ms[0], double(n) * n * n / (ms[2] * 1e-3) / 1e9));
          std::fflush(stdout);
        }
    // Issue 19: the staggered scheme (a density model) and with Q against the second-order step on the same grid
    // (order 8, CPML 10, the propagator's whole step), and the bandwidth of the values each moves at least a point
    // (second order 4; staggered 16: u, w_z, w_y, w_x read and written, 3 buoyancies, w read again, u, dt K; with Q 9
    // more: each memory variable read and written, its drive read) over the device-to-device copy's.
    emit(
        "\n| n^3 | precision | second-order ms | staggered ms | with Q ms | staggered / second-order | with Q / "
        "second-order | staggered, of copy | with Q, of copy |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int n : staggered_sizes)
      for (int fp64 = 0; fp64 < 2; ++fp64) {
        double ms[3];
        const Physics kinds[3] = {Physics::second_order, Physics::staggered, Physics::visco};
        for (int k = 0; k < 3; ++k)
          ms[k] = fp64 ? propagator_ms_per_step<double>(n, 8, 10, cuda::StencilKernel::tiled, steps, kinds[k])
                       : propagator_ms_per_step<float>(n, 8, 10, cuda::StencilKernel::tiled, steps, kinds[k]);
        const double value = fp64 ? 8 : 4, points = double(n) * n * n;
        emit(fmt::format("| {} | {} | {:.3f} | {:.3f} | {:.3f} | {:.2f} | {:.2f} | {:.2f} | {:.2f} |\n", n,
                         fp64 ? "fp64" : "fp32", ms[0], ms[1], ms[2], ms[1] / ms[0], ms[2] / ms[0],
                         16 * value * points / (ms[1] * 1e-3) / bw, 25 * value * points / (ms[2] * 1e-3) / bw));
        std::fflush(stdout);
      }
    // Issue 20: the elastic scheme against the second-order step on the same grid (order 8, CPML 10, the propagator's
    // whole step), and the bandwidth of the 26 values it moves at least a point (nine fields read and written, eight
    // material values) over the device-to-device copy's.
    emit(
        "\n| n^3 | precision | second-order ms | elastic ms | elastic / second-order | elastic Gpts/s | elastic, of "
        "copy "
        "|\n|---:|---|---:|---:|---:|---:|---:|\n");
    for (int n : elastic_sizes)
      for (int fp64 = 0; fp64 < 2; ++fp64) {
        double ms[2];
        const Physics kinds[2] = {Physics::second_order, Physics::elastic};
        for (int k = 0; k < 2; ++k)
          ms[k] = fp64 ? propagator_ms_per_step<double>(n, 8, 10, cuda::StencilKernel::tiled, steps, kinds[k])
                       : propagator_ms_per_step<float>(n, 8, 10, cuda::StencilKernel::tiled, steps, kinds[k]);
        const double value = fp64 ? 8 : 4, points = double(n) * n * n;
        emit(fmt::format("| {} | {} | {:.3f} | {:.3f} | {:.2f} | {:.2f} | {:.2f} |\n", n, fp64 ? "fp64" : "fp32", ms[0],
                         ms[1], ms[1] / ms[0], points / (ms[1] * 1e-3) / 1e9,
                         26 * value * points / (ms[1] * 1e-3) / bw));
        std::fflush(stdout);
      }
    emit(
        "\n| n^3 | spectral absorber | precision | ms/step | cuFFT alone ms/step | step / FFT (target <= 1.15) | "
        "Gpts/s |\n"
        "|---:|---|---|---:|---:|---:|---:|\n");
    for (int n : spectral_sizes)
      for (auto absorber : {SpectralAbsorber::damping, SpectralAbsorber::pml})
        for (int fp64 = 0; fp64 < 2; ++fp64) {
          const SpectralResult r =
              fp64 ? spectral_step<double>(n, absorber, steps) : spectral_step<float>(n, absorber, steps);
          emit(fmt::format("| {} | {} | {} | {:.3f} | {:.3f} | {:.2f} | {:.2f} |\n", r.n, r.absorber, r.precision,
                           r.ms_per_step, r.fft_ms_per_step, r.ms_per_step / r.fft_ms_per_step, r.gpts));
        }
    emit("\n| shots in flight (128^3, order 8, CPML 16, 200 steps each) | shots/s |\n|---:|---:|\n");
    for (int k : {1, 2, 4, 8}) emit(fmt::format("| {} | {:.2f} |\n", k, shots_per_second(k, 200)));
    if (!output.empty()) std::ofstream(output) << report;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "specwave-gpu-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
