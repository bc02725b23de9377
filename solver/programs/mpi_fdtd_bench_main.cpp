// specwave-mpi-fdtd-bench: weak and strong scaling of the domain-decomposed FDTD propagator (solver/
// fdtd_cpu_propagator.cpp) over the ranks of mpiexec (scripts/bench --scaling). The single-rank baseline runs
// in the same job, on rank 0 alone while the others wait, so both sides see the same machine and binding.
//   weak:   n^3 points per rank: one rank on n^3 against P ranks on (P n) x n x n (stacked along z, the
//           decomposition specwave picks for it); efficiency = t_1 / t_P per step. On one machine the ranks
//           also share its memory bandwidth, which a memory-bound stencil feels: the same job therefore times P
//           independent n^3 runs side by side (t_indep, no communication) and a triad on one rank alone and on
//           all at once, so that the decomposition's own cost, t_indep / t_P, is told apart from the machine's.
//   strong: one grid N^3: efficiency = t_1 / (P t_P).
// Every run is order-8 FDTD with a CPML on every face, one thread per rank, best of the rounds. Markdown on
// stdout from rank 0.
#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "solver/parallel/comm.hpp"
#include "solver/parallel/decomposition.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/propagator.hpp"
#include "specwave/build_info.hpp"

namespace {

using namespace specwave;

struct Options {
  int order = 8, pml = 10, steps = 10, rounds = 15;
  std::string precision = "fp32";
};

Case bench_case(const Dims3& shape, const Options& o, int steps) {
  Case c;
  c.name = "mpi-fdtd-bench";
  c.grid.shape = shape;
  c.grid.spacing = {10.0, 10.0, 10.0};
  c.model.kind = ModelSpec::Kind::homogeneous;
  c.model.velocity = 2000.0;
  c.scheme.order = o.order;
  c.scheme.min_points_per_wavelength = 1.0;
  c.boundary.pml_width = o.pml;
  SourceSpec s;
  s.position = {10.0 * (shape[0] / 2), 10.0 * (shape[1] / 2), 10.0 * (shape[2] / 2)};
  s.wavelet.peak_frequency = 15.0;
  c.shots.push_back({{s}});
  c.receivers.push_back({10.0 * (shape[0] / 2), 10.0 * (shape[1] / 2), 10.0 * (shape[2] / 2 + 5)});
  c.run.precision = o.precision == "fp64" ? Precision::fp64 : Precision::fp32;
  c.run.threads = 1;
  c.run.shot_groups = 1;
  c.time.dt = 1e-3;
  c.time.duration = 1e-3 * (steps + 2);
  c.output.directory = (std::filesystem::temp_directory_path() / "specwave-mpi-fdtd-bench").string();
  c.output.plots = false;
  return c;
}

// One timed configuration: a propagator of `shape` on the ranks of `comm` (or none on ranks outside it).
struct Timed {
  const Comm* comm = nullptr;
  std::unique_ptr<Propagator> prop;
  int n = 0;
  double best = std::numeric_limits<double>::infinity();  // seconds per step, slowest rank, best round
};

Timed prepare(const Comm* comm, const Dims3& shape, const Options& o) {
  Timed t;
  if (!comm) return t;
  const int warm = 5;
  const Case c = bench_case(shape, o, warm + o.steps * o.rounds);
  const Plan plan = make_plan(c, {comm->size(), comm->rank(), 1, 0, comm});
  t.comm = comm;
  t.prop = make_propagator(c, plan, comm);
  t.prop->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
  t.prop->advance(0, warm);
  t.n = warm;
  return t;
}

// One round of `steps` steps (collective over the configuration's ranks).
void time_round(Timed& t, const Options& o) {
  if (!t.comm) return;
  t.comm->barrier();
  const auto t0 = std::chrono::steady_clock::now();
  t.prop->advance(t.n, t.n + o.steps);
  const double local = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t.best = std::min(t.best, t.comm->allreduce(local, ReduceOp::max) / o.steps);
  t.n += o.steps;
}

struct Row {
  std::string kind, shape_1, shape_p, grid;
  double t1 = 0, tp = 0, efficiency = 0, halo_mb = 0;
  double t_indep = 0;  // weak: P independent single-rank runs side by side
};

// Triad a = b + s c over 3 x 32 Mi floats (384 MiB), best of 5: GB/s of this rank.
double triad_gbps() {
  const std::size_t n = std::size_t(1) << 25;
  std::vector<float> a(n, 0.f), b(n, 1.f), c(n, 2.f);
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + 0.5f * c[i];
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  volatile float sink = a[n / 2];
  (void)sink;
  return 3.0 * n * sizeof(float) / best / 1e9;
}

int run(int argc, char** argv) {
  CLI::App app{
      "specwave-mpi-fdtd-bench: weak and strong scaling of the decomposed FDTD propagator (run under mpiexec)"};
  Options o;
  int n = 128, strong_n = 192;
  std::string output;
  app.add_option("--n", n, "Weak scaling: n^3 points per rank")->capture_default_str();
  app.add_option("--strong-n", strong_n, "Strong scaling: one N^3 grid")->capture_default_str();
  app.add_option("--steps", o.steps, "Timed steps per round")->capture_default_str();
  app.add_option("--rounds", o.rounds, "Rounds; the best counts")->capture_default_str();
  app.add_option("--order", o.order, "FDTD order")->capture_default_str();
  app.add_option("--pml", o.pml, "CPML width (every face)")->capture_default_str();
  app.add_option("--precision", o.precision, "fp32 or fp64")
      ->check(CLI::IsMember({"fp32", "fp64"}))
      ->capture_default_str();
  app.add_option("--output", output, "Also write the report to this file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  const Comm world = Comm::world();
  const int P = world.size();
  const Comm alone = world.split(world.rank() == 0 ? 0 : 1, world.rank());
  const Comm self = world.split(world.rank(), 0);  // every rank on its own
  const int R = o.order / 2;
  const auto halo_mb = [&](const Dims3& shape) {
    const Dims3 p = choose_process_grid(shape, P, R);
    return double(halo_exchange_points(shape, p, R)) * (o.precision == "fp64" ? 8 : 4) / 1e6;
  };
  const auto grid_text = [&](const Dims3& shape) {
    const Dims3 p = choose_process_grid(shape, P, R);
    return fmt::format("{}x{}x{}", p[0], p[1], p[2]);
  };

  // The configurations of a scaling kind, timed in alternating rounds (baseline, independent runs, decomposed)
  // so that a slow spell of a shared machine hits all alike; the best round of each counts.
  std::vector<Row> rows;
  const auto measure = [&](const std::string& kind, const Dims3& one, const Dims3& all, double ideal_ratio) {
    Timed base = prepare(world.rank() == 0 ? &alone : nullptr, one, o);
    Timed indep = kind == "weak" ? prepare(&self, one, o) : Timed{};
    Timed split = prepare(&world, all, o);
    for (int r = 0; r < o.rounds; ++r) {
      world.barrier();
      time_round(base, o);
      world.barrier();
      time_round(indep, o);
      world.barrier();
      time_round(split, o);
    }
    const double t1 = world.allreduce(world.rank() == 0 ? base.best : 0.0, ReduceOp::max);
    const double tp = split.best;
    Row row{kind,
            fmt::format("{}x{}x{}", one[0], one[1], one[2]),
            fmt::format("{}x{}x{}", all[0], all[1], all[2]),
            grid_text(all),
            t1,
            tp,
            t1 * ideal_ratio / tp,
            halo_mb(all)};
    if (kind == "weak") row.t_indep = world.allreduce(indep.best, ReduceOp::max);
    if (world.rank() == 0)
      std::fprintf(stderr, "[mpi-fdtd-bench] %s: 1 rank %.2f ms/step, %d ranks %.2f ms/step, efficiency %.2f\n",
                   kind.c_str(), t1 * 1e3, P, tp * 1e3, row.efficiency);
    rows.push_back(row);
  };
  measure("weak", {n, n, n}, {n * P, n, n}, 1.0);
  measure("strong", {strong_n, strong_n, strong_n}, {strong_n, strong_n, strong_n}, 1.0 / P);
  // Memory bandwidth of one rank alone and of each rank when all run at once.
  double bw_alone = 0;
  if (world.rank() == 0) bw_alone = triad_gbps();
  world.barrier();
  const double bw_shared = world.allreduce(triad_gbps(), ReduceOp::min);
  bw_alone = world.allreduce(bw_alone, ReduceOp::max);

  char host[256] = "unknown";
  gethostname(host, sizeof host);
  std::string report = "## FDTD scaling over MPI ranks (domain decomposition)\n\n";
  report += fmt::format(
      "specwave {} (git {}), {} ranks, 1 thread per rank, host {}, {} logical cores; order {}, CPML "
      "{} on every face, {}; best of {} alternating rounds of {} steps. The one-rank baseline runs in "
      "the same job on rank 0 while the others wait.\n\n",
      build::version, build::git_hash, P, host, sysconf(_SC_NPROCESSORS_ONLN), o.order, o.pml, o.precision, o.rounds,
      o.steps);
  report +=
      "| scaling | 1 rank grid | P ranks grid | process grid | 1 rank ms/step | P ranks ms/step | halo MB/step (all "
      "ranks) | efficiency |\n";
  report += "|---|---|---|---|---|---|---|---|\n";
  for (const Row& r : rows)
    report += fmt::format("| {} | {} | {} | {} | {:.2f} | {:.2f} | {:.1f} | **{:.2f}** |\n", r.kind, r.shape_1,
                          r.shape_p, r.grid, r.t1 * 1e3, r.tp * 1e3, r.halo_mb, r.efficiency);
  report += "\nWeak efficiency = t_1 / t_P (P times the points on P ranks); strong efficiency = t_1 / (P t_P).\n\n";
  const Row& weak = rows.front();
  report += fmt::format(
      "What the machine allows: a triad reaches {:.1f} GB/s on one rank alone and {:.1f} GB/s per rank with all {} "
      "ranks at once ({:.2f} of alone); {} independent {} runs side by side (no communication) take {:.2f} ms/step "
      "against {:.2f} alone ({:.2f}). **The decomposition's own weak efficiency, t_indep / t_P = {:.2f}**: the halo "
      "exchange and the shell/interior split cost {:.0f}% over {} independent runs on the same cores.\n",
      bw_alone, bw_shared, P, bw_shared / bw_alone, P, weak.shape_1, weak.t_indep * 1e3, weak.t1 * 1e3,
      weak.t1 / weak.t_indep, weak.t_indep / weak.tp, 100 * (weak.tp / weak.t_indep - 1), P);
  if (world.rank() == 0) {
    std::fputs(report.c_str(), stdout);
    if (!output.empty()) {
      std::ofstream f(output);
      f << report;
      if (!f) world.abort(fmt::format("specwave-mpi-fdtd-bench: cannot write {}", output), 5);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MpiSession mpi(argc, argv);
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    return fatal_error(std::string("specwave-mpi-fdtd-bench: error: ") + e.what(), 1);
  }
}
