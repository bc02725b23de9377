// specwave-bench: the CPU benchmark, measured on the machine it runs on (docs/benchmarks.md).
//   1. A STREAM-like memory bandwidth reference (copy, triad, and the FDTD update pattern without a stencil),
//      float64, arrays far larger than the last-level cache, first-touch parallel initialisation, best of N.
//   2. The headline: whole runs of realistic cases (solver/programs/bench_runs.hpp), forward and one gradient.
//   3. The production CPU FDTD step (kernels/cpu/fdtd_cpu.hpp) on an n^3 grid per (order, precision, PML), from a
//      zero field with a source, warm-up then timed steps, several repetitions; Gpts/s and the bandwidth it implies.
//   4. The spectral propagator's step (both absorbers) against the time of its FFTs alone (same plans, same
//      threads): the floor a pseudo-spectral step cannot beat.
// The result is a Markdown report on stdout (and in --output FILE).
#include <omp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/fdtd_cpu.hpp"
#include "kernels/cpu/flush_denormals.hpp"
#include "kernels/fdtd_coefficients.hpp"
#include "kernels/fft/fftw3d.hpp"
#include "kernels/stencil.hpp"
#include "solver/plan/plan.hpp"
#include "solver/programs/bench_common.hpp"
#include "solver/programs/bench_runs.hpp"
#include "solver/propagators/propagator.hpp"
#include "specwave/build_info.hpp"

namespace {

using namespace specwave;
using namespace specwave::bench;

// ---------------------------------------------------------------------------------------------------------------
// FDTD benchmark.

struct FdtdResult {
  int order = 0;
  bool fp64 = false;
  int pml_width = 0;
  int pml_axes = 7;  // the axes whose faces absorb: bit 0 z, bit 1 y, bit 2 x
  int steps = 0, repetitions = 0;
  double best_s = 0, median_s = 0;  // seconds per step
  long subnormals = 0;
  bool finite = true;
};

struct FdtdConfig {
  int n = 256;
  int warmup = 3;
  int min_steps = 10;
  double min_seconds = 1.0;
  int repetitions = 3;
  double h = 10.0;
};

// "all 6 faces", "z faces", "yx faces", ...: the faces of the axes in the bit set (bit 0 z, bit 1 y, bit 2 x).
std::string pml_faces_name(int axes) {
  if (axes == 7) return "all 6 faces";
  std::string s;
  for (int a = 0; a < 3; ++a)
    if (axes >> a & 1) s += "zyx"[a];
  return s + " faces";
}

template <class T>
FdtdResult run_fdtd(const FdtdConfig& cfg, int order, int pml_width, int pml_axes = 7) {
  const int R = order / 2;
  const int n = cfg.n;
  const FieldLayout L{n, n, n, R};
  const index_t size = L.size();
  auto u_buf = allocate<T>(size), prev_buf = allocate<T>(size), vel_buf = allocate<T>(size);
  T* u = u_buf.get();
  T* u_prev = prev_buf.get();
  T* vel2dt2 = vel_buf.get();

  // Physics: v from 1500 to 3000 m/s with depth, h = 10 m, dt = 0.8 dt_max (docs/numerics.md).
  const double v_min = 1500, v_max = 3000, h = cfg.h;
  const double s_max = second_derivative_symbol_max(R);
  const double dt = 0.8 * 2.0 / (v_max * std::sqrt(s_max * 3.0 / (h * h)));

  // First touch in parallel: halo planes by flat index, interior with the kernel's (z, y) schedule.
#pragma omp parallel for schedule(static)
  for (index_t i = 0; i < size; ++i) u[i] = u_prev[i] = vel2dt2[i] = T(0);
  const double pi = std::acos(-1.0);
  // The field starts at zero, as a run's does, and a 15 Hz Ricker source at the centre sets it going: ahead of the
  // wavefront and in the layers the values decay through the subnormal range (flushed unless
  // SPECWAVE_FLUSH_DENORMALS=0, kernels/cpu/flush_denormals.hpp).
#pragma omp parallel for collapse(2) schedule(static)
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const index_t i = L.index(z, y, x);
        const double v = v_min + (v_max - v_min) * z / std::max(1, n - 1);
        vel2dt2[i] = T(v * v * dt * dt);
      }
  const index_t source = L.index(n / 2, n / 2, n / 2);
  const double f_peak = 15.0, t0 = 1.2 / f_peak;
  int step_number = 0;
  const cpu::FlushDenormals flush(true);

  const FdtdCoefficients<T> coef = make_fdtd_coefficients<T>(R, {h, h, h});

  // CPML of width W on all six faces, slabs allocated as solver/propagators/fdtd/fdtd_cpu_propagator.cpp does; the
  // profile follows docs/numerics.md (p = 2, R0 = 1e-3, f = 10 Hz).
  CpmlAxis<T> pml[3];
  std::vector<T> pml_a[3], pml_b[3];
  std::vector<Buffer<T>> slabs;
  for (int a = 0; a < 3; ++a) {
    CpmlAxis<T>& axis = pml[a];
    axis.n = n;
    axis.radius = R;
    axis.width = pml_width;
    pml_a[a].assign(n, T(0));
    pml_b[a].assign(n, T(1));
    if (pml_width == 0 || !(pml_axes >> a & 1)) continue;
    const double W = pml_width, d0 = -(2 + 1) * v_max * std::log(1e-3) / (2 * W * h), alpha_max = pi * 10.0;
    for (int i = 0; i < n; ++i) {
      double xi = 0;
      if (i < pml_width) xi = (W - i) / W;
      if (i > n - 1 - pml_width) xi = (i - (n - 1 - W)) / W;
      if (xi <= 0) continue;
      const double d = d0 * xi * xi, alpha = alpha_max * (1 - xi);
      const double b = std::exp(-(d + alpha) * dt);
      pml_b[a][i] = T(b);
      pml_a[a][i] = T(d / (d + alpha) * (b - 1));
    }
    axis.a = pml_a[a].data();
    axis.b = pml_b[a].data();
    int e[3];
    cpml_slab_extents(a, n, n, n, pml_width, R, e);
    axis.slab_stride[2] = 1;
    axis.slab_stride[1] = e[2];
    axis.slab_stride[0] = index_t(e[1]) * e[2];
    const index_t slab_size = index_t(e[0]) * e[1] * e[2];
    for (int side = 0; side < 2; ++side) {
      axis.face[side] = true;
      for (T** target : {&axis.psi[side], &axis.zeta[side]}) {
        slabs.push_back(allocate<T>(slab_size));
        T* p = slabs.back().get();
#pragma omp parallel for schedule(static)
        for (index_t i = 0; i < slab_size; ++i) p[i] = T(0);
        *target = p;
      }
    }
  }

  auto step = [&] {
    FdtdStep<T> s{L, u, u_prev, vel2dt2, coef, {pml[0], pml[1], pml[2]}, false};
    cpu::fdtd_step(s);
    const double a = pi * f_peak * (step_number++ * dt - t0);
    u_prev[source] += vel2dt2[source] * T((1 - 2 * a * a) * std::exp(-a * a) / (h * h * h));
    std::swap(u, u_prev);
  };

  FdtdResult r;
  r.order = order;
  r.fp64 = sizeof(T) == 8;
  r.pml_width = pml_width;
  r.pml_axes = pml_axes;
  // Warm-up, then size a repetition from the last warm-up step: >= min_seconds and >= min_steps steps.
  double last = 0;
  for (int s = 0; s < std::max(1, cfg.warmup); ++s) {
    const double t0 = omp_get_wtime();
    step();
    last = omp_get_wtime() - t0;
  }
  r.steps = std::max(cfg.min_steps, int(std::ceil(cfg.min_seconds / std::max(last, 1e-9))));
  r.repetitions = cfg.repetitions;
  std::vector<double> per_step;
  for (int rep = 0; rep < cfg.repetitions; ++rep) {
    const double t0 = omp_get_wtime();
    for (int s = 0; s < r.steps; ++s) step();
    per_step.push_back((omp_get_wtime() - t0) / r.steps);
  }
  r.best_s = best(per_step);
  r.median_s = median(per_step);

  // Sanity: the field stayed finite and normal (subnormal arithmetic would distort the timings).
  long subnormals = 0;
  bool finite = true;
#pragma omp parallel for collapse(2) reduction(+ : subnormals) reduction(&& : finite)
  for (int z = 0; z < n; ++z)
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x) {
        const T v = u[L.index(z, y, x)];
        finite = finite && std::isfinite(v);
        subnormals += std::fpclassify(v) == FP_SUBNORMAL;
      }
  r.subnormals = subnormals;
  r.finite = finite;
  return r;
}

// ---------------------------------------------------------------------------------------------------------------

// CPU time used on the whole machine (/proc/stat, all CPUs) and by this process (getrusage), in seconds, to
// tell how much of the machine other processes took while the benchmark ran (docs/benchmarks.md).
// ---------------------------------------------------------------------------------------------------------------
// Spectral benchmark: the production propagator (solver/propagators/spectral/spectral_cpu_propagator.cpp) on an n^3
// grid, and the same transforms alone. The PML step does 4 r2c and 6 c2r transforms, the damping layer 1 and 1.

struct SpectralResult {
  std::string absorber;
  bool fp64 = false;
  int n = 0, steps = 0;
  double step_s = 0, fft_s = 0;  // best seconds per step; its transforms alone
  double ratio_median = 0;       // median over the repetitions of step / FFTs, each pair timed back to back
  int r2c = 0, c2r = 0;
};

double time_best(int repetitions, int count, const std::function<void()>& f) {
  double best_s = 1e300;
  for (int rep = 0; rep < repetitions; ++rep) {
    const double t0 = omp_get_wtime();
    for (int k = 0; k < count; ++k) f();
    best_s = std::min(best_s, (omp_get_wtime() - t0) / count);
  }
  return best_s;
}

template <class T>
SpectralResult run_spectral(const FdtdConfig& cfg, int n, SpectralAbsorber absorber, int threads) {
  SpectralResult r;
  r.absorber = absorber == SpectralAbsorber::pml ? "split-field PML" : "damping layer";
  r.fp64 = sizeof(T) == 8;
  r.n = n;
  Case c;
  c.name = "bench";
  c.grid.shape = {n, n, n};
  c.grid.spacing = {cfg.h, cfg.h, cfg.h};
  c.model.kind = ModelSpec::Kind::gaussian;
  c.model.velocity = 2000;
  c.model.anomaly = 500;
  c.model.center = {n * cfg.h / 2, n * cfg.h / 2, n * cfg.h / 2};
  c.model.radius = n * cfg.h / 6;
  c.scheme.method = Method::spectral;
  c.scheme.min_points_per_wavelength = 0.5;
  c.boundary.pml_width = 20;
  c.boundary.spectral_absorber = absorber;
  SourceSpec src;
  src.position = {n * cfg.h / 2 + 0.3 * cfg.h, n * cfg.h / 2, n * cfg.h / 2};
  src.wavelet.peak_frequency = 10;
  c.shots.push_back({{src}});
  c.receivers = {{n * cfg.h / 3, n * cfg.h / 2, n * cfg.h / 2}};
  c.time.duration = 2.0;
  c.run.precision = r.fp64 ? Precision::fp64 : Precision::fp32;
  c.run.threads = threads;
  c.output.directory = "/tmp/specwave-bench";
  c.output.final_field = false;
  c.output.plots = false;
  const Plan plan = make_plan(c);
  auto prop = make_propagator(c, plan);
  prop->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
  int next = 0;
  const auto step = [&] { prop->advance(next, next + 1), ++next; };
  const double warm = time_best(1, std::max(1, cfg.warmup), step);
  r.steps = std::max(cfg.min_steps / 2, int(std::ceil(cfg.min_seconds / std::max(warm, 1e-9))));
  r.steps = std::min(r.steps, (plan.nt - next - 1) / std::max(1, cfg.repetitions));
  // The transforms alone: r2c from a fixed input (preserved), c2r from a freshly transformed spectrum.
  const int half = n / 2 + 1;
  fft::Buffer<T> a(std::size_t(n) * n * n), b(a.size());
  fft::Buffer<std::complex<T>> spec(std::size_t(n) * n * half);
  fft::RealFft3d<T> fft(n, n, n, b.data(), spec.data(), plan.threads);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = T(std::sin(0.001 * double(i)));
  r.r2c = absorber == SpectralAbsorber::pml ? 4 : 1;
  r.c2r = absorber == SpectralAbsorber::pml ? 6 : 1;
  // As many transforms per repetition as the step's timing had steps (times the transforms a step makes), so both
  // timings average over the same stretch of time. On a shared machine the bandwidth left to this process drifts
  // by tens of percent over minutes, so each repetition times the steps and then the transforms back to back, and
  // the ratio of each pair is taken: the median of those is the figure that the drift does not move.
  const int count = std::max(4, r.steps * (absorber == SpectralAbsorber::pml ? 5 : 1));
  const int steps = std::max(1, r.steps);
  std::vector<double> ratios;
  r.step_s = r.fft_s = 1e300;
  for (int rep = 0; rep < std::max(1, cfg.repetitions); ++rep) {
    const double step_s = time_best(1, steps, step);
    const double t_r2c = time_best(1, count, [&] { fft.forward(a.data(), spec.data()); });
    const double t_pair = time_best(1, count, [&] {
      fft.forward(a.data(), spec.data());
      fft.backward(spec.data(), b.data());
    });
    const double fft_s = r.r2c * t_r2c + r.c2r * std::max(0.0, t_pair - t_r2c);
    r.step_s = std::min(r.step_s, step_s);
    r.fft_s = std::min(r.fft_s, fft_s);
    ratios.push_back(step_s / fft_s);
  }
  std::sort(ratios.begin(), ratios.end());
  r.ratio_median = ratios[ratios.size() / 2];
  return r;
}

struct CpuUsage {
  double machine_busy = 0, machine_total = 0, self = 0;
};

CpuUsage cpu_usage() {
  CpuUsage u;
  std::ifstream in("/proc/stat");
  std::string cpu;
  in >> cpu;
  double field[10] = {};
  for (double& f : field) in >> f;  // user nice system idle iowait irq softirq steal guest guest_nice
  const double ticks = double(sysconf(_SC_CLK_TCK));
  double total = 0;
  for (int i = 0; i < 8; ++i) total += field[i];  // guest time is already in user
  u.machine_total = total / ticks;
  u.machine_busy = (total - field[3] - field[4]) / ticks;
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  u.self = r.ru_utime.tv_sec + 1e-6 * r.ru_utime.tv_usec + r.ru_stime.tv_sec + 1e-6 * r.ru_stime.tv_usec;
  return u;
}

// Share of the machine's CPU time (all CPUs) used by other processes between two samples.
double others_share(const CpuUsage& a, const CpuUsage& b) {
  const double total = b.machine_total - a.machine_total;
  if (total <= 0) return 0;
  return std::clamp((b.machine_busy - a.machine_busy - (b.self - a.self)) / total, 0.0, 1.0);
}

std::string command_line(int argc, char** argv) {
  std::string s = "specwave-bench";
  for (int i = 1; i < argc; ++i) s += std::string(" ") + argv[i];
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"specwave-bench: memory bandwidth reference and CPU FDTD step throughput (Markdown report)"};
  FdtdConfig cfg;
  std::vector<int> orders{2, 4, 8};
  std::string precision = "fp32", output;
  int pml_width = 20, threads = 0, stream_reps = 10;
  double stream_mib = 768;
  app.add_option("--n", cfg.n, "Grid points per axis (n^3 interior points)")->check(CLI::Range(16, 2048));
  app.add_option("--orders", orders, "Stencil orders, comma separated (even, 2..16)")->delimiter(',');
  app.add_option("--precision", precision, "fp32, fp64 or both")->check(CLI::IsMember({"fp32", "fp64", "both"}));
  app.add_option("--pml-width", pml_width, "CPML width on all 6 faces for the PML figure (0: skip it)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--min-seconds", cfg.min_seconds, "Minimum length of one timed repetition")
      ->check(CLI::PositiveNumber);
  app.add_option("--min-steps", cfg.min_steps, "Minimum steps per timed repetition")->check(CLI::Range(1, 1000000));
  app.add_option("--repetitions", cfg.repetitions, "Timed repetitions per configuration")->check(CLI::Range(1, 1000));
  app.add_option("--warmup", cfg.warmup, "Untimed warm-up steps per configuration")->check(CLI::Range(1, 1000));
  app.add_option("--stream-mib", stream_mib, "Total size of the 3 float64 bandwidth arrays, MiB")
      ->check(CLI::Range(1.0, 1e6));
  app.add_option("--stream-repetitions", stream_reps, "Timed repetitions of each bandwidth kernel (best is kept)")
      ->check(CLI::Range(1, 10000));
  app.add_option("--threads", threads, "OpenMP threads (0: all)")->check(CLI::NonNegativeNumber);
  app.add_option("--output", output, "Also write the Markdown report to this file");
  std::vector<int> spectral_sizes{256};
  app.add_option("--spectral-n", spectral_sizes, "Grid sizes of the spectral benchmark (0: skip it)")->delimiter(',');
  bool skip_fdtd = false, pml_breakdown = false;
  app.add_flag("--skip-fdtd", skip_fdtd, "Only the bandwidth reference and the spectral part");
  app.add_flag("--pml-breakdown", pml_breakdown,
               "Also the step with the CPML on the z, the y and the x faces alone (what each axis' layers cost)");
  RunConfig runs;
  app.add_option("--runs", runs.sizes, "Whole forward runs at these n ((n + 2 pml)^3 grid; empty: skip them)")
      ->delimiter(',');
  app.add_option("--run-steps", runs.steps, "Steps of a whole run")->check(CLI::Range(2, 100000));
  app.add_option("--run-pml", runs.pml, "CPML width of the whole runs")->check(CLI::Range(1, 100));
  app.add_option("--gradient-n", runs.gradient_n, "One gradient at this n (0: none)")->check(CLI::Range(0, 2048));
  app.add_flag("--free-surface", runs.free_surface, "Also each whole forward run with a free surface on top");
  app.add_flag(
      "--staggered", runs.staggered,
      "Also each whole forward run (CPML on all faces) on the staggered scheme with a density model, with attenuation, "
      "and on the elastic scheme");
  app.add_option("--run-rounds", runs.rounds, "Whole runs: best of this many")->check(CLI::Range(1, 100));
  std::string run_precision = "both";
  app.add_option("--run-precision", run_precision, "Whole forward runs: fp32, fp64 or both")
      ->check(CLI::IsMember({"fp32", "fp64", "both"}));
  CLI11_PARSE(app, argc, argv);
  std::erase_if(spectral_sizes, [](int n) { return n <= 0; });
  std::erase_if(runs.sizes, [](int n) { return n <= 0; });
  for (int o : orders)
    if (o < 2 || o > 2 * max_stencil_radius || o % 2 != 0) {
      std::cerr << "specwave-bench: order " << o << " is not an even number in 2..16\n";
      return 2;
    }
  if (pml_width > 0 && 2 * pml_width >= cfg.n) {
    std::cerr << "specwave-bench: --pml-width " << pml_width << " leaves no interior on a " << cfg.n << "^3 grid\n";
    return 2;
  }
  if (threads > 0) omp_set_num_threads(threads);
  const int n_threads = omp_get_max_threads();

  const Machine machine = describe_machine();
  const std::string date = utc_now();
  // Other processes in the second before the run, and during it.
  const CpuUsage before = cpu_usage();
  usleep(1000000);
  const CpuUsage start = cpu_usage();
  std::ostringstream md;
  std::cerr << "[bench] " << machine.cpu << ", " << n_threads << " threads; memory bandwidth ...\n";

  // 1. Bandwidth reference.
  const std::size_t stream_n = std::size_t(stream_mib * 1024.0 * 1024.0 / (3 * sizeof(double)));
  const StreamResults stream = run_stream(stream_n, stream_reps);
  md << fmt::format("## Memory bandwidth (float64, 3 arrays x {} elements = {:.0f} MiB, best of {})\n\n",
                    stream.elements, 3.0 * stream.elements * 8 / 1048576.0, stream.repetitions);
  md << "Bytes are counted as in STREAM: one read or one write per array element; the write-allocate read of a\n"
        "store to a line not in cache (copy, triad) is not counted. The `update` kernel is the FDTD memory pattern\n"
        "without its stencil (3 arrays read, one written in place, so there is no write-allocate).\n\n";
  md << "| kernel | operation | bytes/element | GB/s (best) | GB/s (median) |\n|---|---|---:|---:|---:|\n";
  for (const StreamResult* s : {&stream.copy, &stream.triad, &stream.update})
    md << fmt::format("| {} | `{}` | {} | {:.1f} | {:.1f} |\n", s->name, s->formula, s->bytes_per_element, s->best_gbs,
                      s->median_gbs);
  md << "\n";
  std::cerr << fmt::format("[bench] copy {:.1f} GB/s, triad {:.1f} GB/s, update {:.1f} GB/s\n", stream.copy.best_gbs,
                           stream.triad.best_gbs, stream.update.best_gbs);

  std::vector<bool> precisions;
  if (precision != "fp64") precisions.push_back(false);
  if (precision != "fp32") precisions.push_back(true);

  // 2. Whole runs: the headline.
  std::string headline;
  if (!runs.sizes.empty() || runs.gradient_n > 0) {
    runs.fp64.clear();
    if (run_precision != "fp64") runs.fp64.push_back(false);
    if (run_precision != "fp32") runs.fp64.push_back(true);
    md << whole_run_report(runs, stream.triad.best_gbs, headline);
  }

  // 3. FDTD step.
  std::vector<int> widths{0};
  if (pml_width > 0) widths.push_back(pml_width);
  std::vector<FdtdResult> results;
  // The CPML's faces: all (7), and with --pml-breakdown the z (1), y (2) and x (4) faces alone.
  std::vector<int> axis_sets{7};
  if (pml_breakdown) axis_sets.insert(axis_sets.end(), {1, 2, 4});
  for (bool fp64 : precisions)
    for (int order : skip_fdtd ? std::vector<int>{} : orders)
      for (int w : widths)
        for (int axes : w ? axis_sets : std::vector<int>{7}) {
          std::cerr << fmt::format("[bench] fdtd order {} {} {}^3 {} ...\n", order, fp64 ? "fp64" : "fp32", cfg.n,
                                   w ? fmt::format("CPML {} ({})", w, pml_faces_name(axes)) : std::string("no PML"));
          results.push_back(fp64 ? run_fdtd<double>(cfg, order, w, axes) : run_fdtd<float>(cfg, order, w, axes));
        }

  const double points = double(cfg.n) * cfg.n * cfg.n;
  md << fmt::format("## FDTD step, {}^3 interior points (`specwave::cpu::fdtd_step`)\n\n", cfg.n);
  md << fmt::format(
      "Warm-up {} steps, then {} timed repetitions of >= max({} steps, {} s); Gpts/s = {}^3 / (time per step).\n"
      "Effective bandwidth counts the compulsory traffic only: 4 values per point (read u, u_prev, (v dt)^2; write\n"
      "u_next in place of u_prev) = 16 B (fp32) or 32 B (fp64); stencil neighbours are assumed to come from cache,\n"
      "and CPML slab traffic is not counted. \"of triad\" = best effective GB/s / best triad GB/s ({:.1f} GB/s);\n"
      "\"of update\" is the same against the stencil-free update kernel ({:.1f} GB/s).\n\n",
      cfg.warmup, cfg.repetitions, cfg.min_steps, cfg.min_seconds, cfg.n, stream.triad.best_gbs,
      stream.update.best_gbs);
  md << "| order | precision | PML | steps x reps | ms/step (best) | ms/step (median) | Gpts/s (best) | "
        "Gpts/s (median) | GB/s effective | of triad | of update |\n"
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  bool warned = false;
  for (const FdtdResult& r : results) {
    const double gpts = points / r.best_s * 1e-9, gpts_median = points / r.median_s * 1e-9;
    const double gbs = gpts * (r.fp64 ? 32 : 16);
    md << fmt::format("| {} | {} | {} | {} x {} | {:.2f} | {:.2f} | {:.3f} | {:.3f} | {:.1f} | {:.0f}% | {:.0f}% |\n",
                      r.order, r.fp64 ? "fp64" : "fp32",
                      r.pml_width ? fmt::format("CPML {} on {}", r.pml_width, pml_faces_name(r.pml_axes)) : "none",
                      r.steps, r.repetitions, r.best_s * 1e3, r.median_s * 1e3, gpts, gpts_median, gbs,
                      100 * gbs / stream.triad.best_gbs, 100 * gbs / stream.update.best_gbs);
    if (!r.finite || r.subnormals > 0) warned = true;
  }
  if (warned) {
    md << "\nWARNING: some runs ended with non-finite or subnormal field values; their timings are not "
          "representative:\n";
    for (const FdtdResult& r : results)
      if (!r.finite || r.subnormals > 0)
        md << fmt::format("- order {} {} PML {}: finite {}, {} subnormal values\n", r.order, r.fp64 ? "fp64" : "fp32",
                          r.pml_width, r.finite, r.subnormals);
  }
  // What the CPML costs over the interior step of the same order and precision, in all and by axis.
  for (const FdtdResult& r : results) {
    if (r.pml_width == 0 || r.pml_axes != 7) continue;
    const FdtdResult* none = nullptr;
    for (const FdtdResult& q : results)
      if (q.pml_width == 0 && q.order == r.order && q.fp64 == r.fp64) none = &q;
    if (none == nullptr) continue;
    std::string by_axis;
    for (const FdtdResult& q : results)
      if (q.pml_width == r.pml_width && q.pml_axes != 7 && q.order == r.order && q.fp64 == r.fp64)
        by_axis += fmt::format(", {} +{:.2f} ms", pml_faces_name(q.pml_axes), (q.best_s - none->best_s) * 1e3);
    md << fmt::format("\nCPML {} cost, order {} {}: {:.2f}x the interior step (+{:.2f} ms{})", r.pml_width, r.order,
                      r.fp64 ? "fp64" : "fp32", r.best_s / none->best_s, (r.best_s - none->best_s) * 1e3, by_axis);
  }
  md << "\n\n";

  // Summary line: order 8 fp32 without PML when measured, else the last no-PML configuration.
  const FdtdResult* summary = nullptr;
  for (const FdtdResult& r : results)
    if (r.pml_width == 0 && (summary == nullptr || !(summary->order == 8 && !summary->fp64))) summary = &r;
  if (summary != nullptr) {
    const double gpts = points / summary->best_s * 1e-9;
    const double gbs = gpts * (summary->fp64 ? 32 : 16);
    md << fmt::format("order {} {} {}^3: {:.3f} Gpts/s, {:.0f}% of triad\n", summary->order,
                      summary->fp64 ? "fp64" : "fp32", cfg.n, gpts, 100 * gbs / stream.triad.best_gbs);
  }

  // 4. Spectral step vs its transforms alone.
  std::vector<SpectralResult> spectral;
  for (bool fp64 : precisions)
    for (int n : spectral_sizes)
      for (SpectralAbsorber a : {SpectralAbsorber::pml, SpectralAbsorber::damping}) {
        std::cerr << fmt::format("[bench] spectral {} {} {}^3 ...\n", a == SpectralAbsorber::pml ? "pml" : "damping",
                                 fp64 ? "fp64" : "fp32", n);
        spectral.push_back(fp64 ? run_spectral<double>(cfg, n, a, threads) : run_spectral<float>(cfg, n, a, threads));
      }
  if (!spectral.empty()) {
    md << "## Spectral step (`solver/propagators/spectral/spectral_cpu_propagator.cpp`) vs its FFTs alone\n\n";
    md << "The whole production step (transforms, k-space multiplies, updates, source, receiver) against the same\n"
          "number of FFTW transforms with the same plans and threads (r2c from a fixed input; c2r = r2c+c2r pair\n"
          "minus r2c). Target ratio <= 1.25. Each repetition times the steps, then the transforms, back to back;\n"
          "\"step / FFTs\" is the median of those pairs' ratios (robust to the machine's drift), the times are the\n"
          "best of the repetitions.\n\n";
    md << "| n^3 | precision | absorber | transforms / step | ms/step | FFTs alone (ms) | step / FFTs | Gpts/s |\n"
          "|---:|---|---|---|---:|---:|---:|---:|\n";
    for (const auto& r : spectral)
      md << fmt::format("| {} | {} | {} | {} r2c + {} c2r | {:.1f} | {:.1f} | {:.2f} | {:.3f} |\n", r.n,
                        r.fp64 ? "fp64" : "fp32", r.absorber, r.r2c, r.c2r, r.step_s * 1e3, r.fft_s * 1e3,
                        r.ratio_median, double(r.n) * r.n * r.n / r.step_s * 1e-9);
    md << "\n";
  }

  // The header last: it records the load average over the run.
  std::ostringstream head;
  head << "# specwave CPU benchmark\n\n";
  head << "| | |\n|---|---|\n";
  head << fmt::format("| CPU | {} |\n", machine.cpu);
  head << fmt::format("| Cores / logical CPUs / sockets | {} / {} / {}{} |\n", machine.cores, machine.logical,
                      machine.sockets, machine.hypervisor == "yes" ? " (virtual machine)" : "");
  head << fmt::format("| Caches (per instance) | {} |\n", machine.caches);
  head << fmt::format("| OpenMP threads | {} |\n", n_threads);
  head << fmt::format("| Compiler | {} ({} build) |\n", build::compiler, build::build_type);
  head << fmt::format("| specwave | {} (git {}) |\n", build::version, build::git_hash);
  head << fmt::format("| Date | {} |\n", date);
  const double others_before = others_share(before, start), others_during = others_share(start, cpu_usage());
  head << fmt::format(
      "| CPU used by other processes, 1 s before / during the run | {:.0f}% / {:.0f}% of the machine{} |\n",
      100 * others_before, 100 * others_during, others_during > 0.05 ? " (not idle: timings are pessimistic)" : "");
  head << fmt::format("| Command | `{}` |\n\n", command_line(argc, argv));
  if (!headline.empty()) head << "**" << headline << "**\n\n";
  const std::string report = head.str() + md.str();
  std::cout << report << std::flush;
  if (!output.empty()) {
    std::ofstream out(output);
    out << report;
    if (!out) {
      std::cerr << "specwave-bench: cannot write " << output << "\n";
      return 1;
    }
    std::cerr << "[bench] report written to " << output << "\n";
  }
  return 0;
}
