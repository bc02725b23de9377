// specwave-mpi-fft-bench: the distributed FFT (solver/parallel/distributed_fft.hpp) against FFTW's own MPI transform
// (fftw_mpi_plan_dft_r2c_3d / c2r, libfftw3-mpi) on the same ranks, same precision, FFTW_MEASURE.
// Run it under mpiexec (scripts/bench --mpi does: mpiexec -n 2). One timed unit is an r2c + c2r pair; the
// untimed rescale by 1/N between pairs keeps the values bounded. FFTW-MPI is timed with its spectrum
// transposed (FFTW_MPI_TRANSPOSED_OUT / _IN: ky distributed, kz whole, as ours: the fair comparison) and in
// its normal layout (one more global transpose each way). Rounds alternate the three and the best round of
// each counts, which damps the noise of a shared machine. Markdown on stdout from rank 0.
#include <fftw3-mpi.h>
#include <mpi.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "solver/parallel/comm.hpp"
#include "solver/parallel/distributed_fft.hpp"
#include "specwave/build_info.hpp"

namespace {

using namespace specwave;

template <class T>
struct FftwMpi;

template <>
struct FftwMpi<double> {
  using Complex = fftw_complex;
  using Plan = fftw_plan;
  static void init() { fftw_mpi_init(); }
  static ptrdiff_t local_size(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2h, ptrdiff_t* ln0, ptrdiff_t* s0, ptrdiff_t* ln1,
                              ptrdiff_t* s1) {
    return fftw_mpi_local_size_3d_transposed(n0, n1, n2h, MPI_COMM_WORLD, ln0, s0, ln1, s1);
  }
  static double* real(ptrdiff_t n) { return fftw_alloc_real(n); }
  static Complex* complex(ptrdiff_t n) { return fftw_alloc_complex(n); }
  static void free(void* p) { fftw_free(p); }
  static Plan r2c(int nz, int ny, int nx, double* in, Complex* out, unsigned flags) {
    return fftw_mpi_plan_dft_r2c_3d(nz, ny, nx, in, out, MPI_COMM_WORLD, flags);
  }
  static Plan c2r(int nz, int ny, int nx, Complex* in, double* out, unsigned flags) {
    return fftw_mpi_plan_dft_c2r_3d(nz, ny, nx, in, out, MPI_COMM_WORLD, flags);
  }
  static void execute(Plan p) { fftw_execute(p); }
  static void destroy(Plan p) { fftw_destroy_plan(p); }
};

template <>
struct FftwMpi<float> {
  using Complex = fftwf_complex;
  using Plan = fftwf_plan;
  static void init() { fftwf_mpi_init(); }
  static ptrdiff_t local_size(ptrdiff_t n0, ptrdiff_t n1, ptrdiff_t n2h, ptrdiff_t* ln0, ptrdiff_t* s0, ptrdiff_t* ln1,
                              ptrdiff_t* s1) {
    return fftwf_mpi_local_size_3d_transposed(n0, n1, n2h, MPI_COMM_WORLD, ln0, s0, ln1, s1);
  }
  static float* real(ptrdiff_t n) { return fftwf_alloc_real(n); }
  static Complex* complex(ptrdiff_t n) { return fftwf_alloc_complex(n); }
  static void free(void* p) { fftwf_free(p); }
  static Plan r2c(int nz, int ny, int nx, float* in, Complex* out, unsigned flags) {
    return fftwf_mpi_plan_dft_r2c_3d(nz, ny, nx, in, out, MPI_COMM_WORLD, flags);
  }
  static Plan c2r(int nz, int ny, int nx, Complex* in, float* out, unsigned flags) {
    return fftwf_mpi_plan_dft_c2r_3d(nz, ny, nx, in, out, MPI_COMM_WORLD, flags);
  }
  static void execute(Plan p) { fftwf_execute(p); }
  static void destroy(Plan p) { fftwf_destroy_plan(p); }
};

// A transform pair under test: run one r2c + c2r, and rescale (untimed).
struct Candidate {
  std::string name;
  double plan_seconds = 0;
  std::function<void()> pair;
  std::function<void()> rescale;
  double best_seconds_per_pair = 1e300;
};

// Mean seconds per pair over about `seconds` of pairs; each pair starts and ends at a barrier, so the time is
// the slowest rank's.
double time_pairs(Candidate& c, double seconds) {
  const Comm world = Comm::world();
  double total = 0;
  int pairs = 0;
  while (true) {
    world.barrier();
    const double t0 = MPI_Wtime();
    c.pair();
    world.barrier();
    total += MPI_Wtime() - t0;
    ++pairs;
    c.rescale();
    // Every rank must take the same decision: rank 0's clock decides.
    const int more = world.allreduce(world.rank() == 0 && total < seconds ? 1 : 0, ReduceOp::max);
    if (!more) break;
  }
  return total / pairs;
}

// CPU seconds used on the whole machine (/proc/stat) and by all ranks together (getrusage, summed), to tell
// how much of the machine other processes took during a measurement (all ranks on one node, as here).
struct CpuUsage {
  double machine_busy = 0, machine_total = 0, ranks = 0;
};

CpuUsage cpu_usage(const Comm& world) {
  CpuUsage u;
  std::ifstream in("/proc/stat");
  std::string cpu;
  in >> cpu;
  double field[8] = {};
  for (double& f : field) in >> f;  // user nice system idle iowait irq softirq steal
  const double ticks = double(sysconf(_SC_CLK_TCK));
  double total = 0;
  for (double f : field) total += f;
  u.machine_total = total / ticks;
  u.machine_busy = (total - field[3] - field[4]) / ticks;
  rusage r{};
  getrusage(RUSAGE_SELF, &r);
  const double self = r.ru_utime.tv_sec + 1e-6 * r.ru_utime.tv_usec + r.ru_stime.tv_sec + 1e-6 * r.ru_stime.tv_usec;
  u.ranks = world.allreduce(self, ReduceOp::sum);
  return u;
}

// Share of the machine's CPU time used by other processes between two samples.
double others_share(const CpuUsage& a, const CpuUsage& b) {
  const double total = b.machine_total - a.machine_total;
  if (total <= 0) return 0;
  return std::clamp((b.machine_busy - a.machine_busy - (b.ranks - a.ranks)) / total, 0.0, 1.0);
}

template <class T>
void fill(T* p, long long n, unsigned seed) {
  unsigned s = seed * 2654435761u + 1;
  for (long long i = 0; i < n; ++i) {
    s = s * 1664525u + 1013904223u;
    p[i] = T(double(s >> 8) / double(1u << 24) - 0.5);
  }
}

template <class T>
void scale(T* p, long long n, T factor) {
  for (long long i = 0; i < n; ++i) p[i] *= factor;
}

struct Row {
  int n;
  std::string precision, grid;
  double ours, fftw_transposed, fftw_normal, plan_ours, plan_fftw, others;
};

template <class T>
Row measure(int n, const FftProcessGrid& grid, int threads, double seconds, int rounds) {
  using F = FftwMpi<T>;
  const Comm world = Comm::world();
  const Dims3 shape{n, n, n};
  const long long points = 1LL * n * n * n;
  const T inverse_n = T(1.0 / double(points));

  // Ours.
  const Subdomain rb = fft_real_block(shape, grid, world.rank());
  const Subdomain sb = fft_spectrum_block(shape, grid, world.rank());
  const long long real_n = 1LL * rb.extent[0] * rb.extent[1] * rb.extent[2];
  std::vector<T> real(real_n);
  std::vector<std::complex<T>> spectrum(1LL * sb.extent[0] * sb.extent[1] * sb.extent[2]);
  world.barrier();
  double t0 = MPI_Wtime();
  DistributedRealFft3d<T> ours(world, shape, grid, real.data(), spectrum.data(), threads);
  world.barrier();
  Candidate c_ours{"ours", MPI_Wtime() - t0,
                   [&] {
                     ours.forward();
                     ours.backward();
                   },
                   [&] { scale(real.data(), real_n, inverse_n); }};
  fill(real.data(), real_n, world.rank());

  // FFTW-MPI, both layouts, on the padded real layout it requires ((n, n, 2 (n/2 + 1)) over the ranks).
  ptrdiff_t ln0, s0, ln1, s1;
  const ptrdiff_t alloc = F::local_size(n, n, n / 2 + 1, &ln0, &s0, &ln1, &s1);
  T* fr = F::real(2 * alloc);
  typename F::Complex* fc = F::complex(alloc);
  world.barrier();
  t0 = MPI_Wtime();
  auto fwd_t = F::r2c(n, n, n, fr, fc, FFTW_MEASURE | FFTW_MPI_TRANSPOSED_OUT);
  auto bwd_t = F::c2r(n, n, n, fc, fr, FFTW_MEASURE | FFTW_MPI_TRANSPOSED_IN);
  auto fwd_n = F::r2c(n, n, n, fr, fc, FFTW_MEASURE);
  auto bwd_n = F::c2r(n, n, n, fc, fr, FFTW_MEASURE);
  world.barrier();
  const double plan_fftw = MPI_Wtime() - t0;
  if (!fwd_t || !bwd_t || !fwd_n || !bwd_n) world.abort("specwave-mpi-fft-bench: FFTW-MPI could not plan", 1);
  fill(fr, 2 * alloc, world.rank());
  Candidate c_t{"fftw-mpi transposed", plan_fftw,
                [&] {
                  F::execute(fwd_t);
                  F::execute(bwd_t);
                },
                [&] { scale(fr, 2 * alloc, inverse_n); }};
  Candidate c_n{"fftw-mpi normal", plan_fftw,
                [&] {
                  F::execute(fwd_n);
                  F::execute(bwd_n);
                },
                [&] { scale(fr, 2 * alloc, inverse_n); }};

  for (Candidate* c : {&c_ours, &c_t, &c_n}) c->pair();  // warm-up
  for (Candidate* c : {&c_ours, &c_t, &c_n}) c->rescale();
  const CpuUsage start = cpu_usage(world);
  for (int r = 0; r < rounds; ++r)
    for (Candidate* c : {&c_ours, &c_t, &c_n})
      c->best_seconds_per_pair = std::min(c->best_seconds_per_pair, time_pairs(*c, seconds / rounds));
  const double others = others_share(start, cpu_usage(world));

  for (auto p : {fwd_t, bwd_t, fwd_n, bwd_n}) F::destroy(p);
  F::free(fr);
  F::free(fc);
  return {n,
          sizeof(T) == 4 ? "fp32" : "fp64",
          fmt::format("{} x {}", grid.ranks_z, grid.ranks_y),
          c_ours.best_seconds_per_pair,
          c_t.best_seconds_per_pair,
          c_n.best_seconds_per_pair,
          c_ours.plan_seconds,
          plan_fftw,
          others};
}

int run(int argc, char** argv) {
  CLI::App app{
      "specwave-mpi-fft-bench: the distributed r2c+c2r FFT pair against FFTW-MPI on the same ranks "
      "(run under mpiexec)"};
  std::vector<int> sizes{128, 256};
  std::string precision = "both";
  double seconds = 3.0;
  int rounds = 3, threads = 1;
  std::vector<int> grid_arg;
  std::string output;
  app.add_option("--sizes", sizes, "Cube edges n (n^3 points)")->capture_default_str();
  app.add_option("--precision", precision, "fp32, fp64 or both")
      ->check(CLI::IsMember({"fp32", "fp64", "both"}))
      ->capture_default_str();
  app.add_option("--seconds", seconds, "Timed seconds per transform and size (split over the rounds)")
      ->capture_default_str();
  app.add_option("--rounds", rounds, "Alternating rounds; the best round counts")->capture_default_str();
  app.add_option("--threads", threads, "FFTW/packing threads per rank (FFTW-MPI: 1)")->capture_default_str();
  app.add_option("--grid", grid_arg, "Process grid ranks_z ranks_y (default: slab when it fits)")->expected(2);
  app.add_option("--output", output, "Also write the report to this file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  FftwMpi<double>::init();
  FftwMpi<float>::init();
  const Comm world = Comm::world();
  std::vector<Row> rows;
  for (int n : sizes)
    for (const std::string p : {"fp32", "fp64"}) {
      if (precision != "both" && precision != p) continue;
      const FftProcessGrid grid =
          grid_arg.empty() ? choose_fft_grid({n, n, n}, world.size()) : FftProcessGrid{grid_arg[0], grid_arg[1]};
      rows.push_back(p == "fp32" ? measure<float>(n, grid, threads, seconds, rounds)
                                 : measure<double>(n, grid, threads, seconds, rounds));
      if (world.rank() == 0) {
        const Row& r = rows.back();
        std::fprintf(stderr, "[mpi-fft-bench] %d^3 %s: ours %.2f ms, FFTW-MPI %.2f ms per pair\n", n, p.c_str(),
                     r.ours * 1e3, r.fftw_transposed * 1e3);
      }
    }

  std::string report;
  char host[256] = "unknown";
  gethostname(host, sizeof host);
  report += "## Distributed FFT vs FFTW-MPI\n\n";
  double others = 0;
  for (const Row& r : rows) others = std::max(others, r.others);
  report += fmt::format(
      "specwave {} (git {}), {} ranks, {} thread(s) per rank, host {}, {} logical cores; other "
      "processes used up to {:.0f}% of the machine during the timed rounds{}.\n\n",
      build::version, build::git_hash, world.size(), threads, host, sysconf(_SC_NPROCESSORS_ONLN), 100 * others,
      others > 0.05 ? " (not idle: the numbers are indicative only)" : "");
  report +=
      "One unit is an r2c + c2r pair (unnormalised), FFTW_MEASURE everywhere; best of the alternating rounds.\n"
      "Throughput: n^3 points per second of a pair. Ratio: ours / FFTW-MPI with the transposed spectrum (the "
      "same data movement: kz whole, ky distributed).\n\n";
  report +=
      "| n^3 | precision | grid (z x y) | ours ms/pair | FFTW-MPI transposed ms/pair | FFTW-MPI normal ms/pair | "
      "ours Mpts/s | FFTW-MPI Mpts/s | ratio ours/FFTW-MPI | plan s (ours, FFTW-MPI both) | other processes |\n";
  report += "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Row& r : rows) {
    const double points = double(r.n) * r.n * r.n;
    report += fmt::format(
        "| {}^3 | {} | {} | {:.2f} | {:.2f} | {:.2f} | {:.1f} | {:.1f} | {:.2f} | {:.1f}, {:.1f} | {:.0f}% |\n", r.n,
        r.precision, r.grid, r.ours * 1e3, r.fftw_transposed * 1e3, r.fftw_normal * 1e3, points / r.ours * 1e-6,
        points / r.fftw_transposed * 1e-6, r.fftw_transposed / r.ours, r.plan_ours, r.plan_fftw, 100 * r.others);
  }
  if (world.rank() == 0) {
    std::fputs(report.c_str(), stdout);
    if (!output.empty()) {
      std::ofstream f(output);
      f << report;
      if (!f) world.abort(fmt::format("specwave-mpi-fft-bench: cannot write {}", output), 5);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MpiSession mpi(argc, argv);
  try {
    const int rc = run(argc, argv);
    fftw_mpi_cleanup();
    fftwf_mpi_cleanup();
    return rc;
  } catch (const std::exception& e) {
    return fatal_error(fmt::format("specwave-mpi-fft-bench: error: {}", e.what()), 1);
  }
}
