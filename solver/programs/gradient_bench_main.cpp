// specwave-gradient-bench: the time of one gradient (forward with the wavefield history, adjoint, imaging) over
// the time of one forward run, per wavefield storage strategy and method (scripts/bench --gradient). The baseline is
// the production forward propagator (make_propagator) on the same case; the gradient's own forward pass without history
// is also timed, and each strategy's forward steps are counted (its recompute factor). Best of the rounds, Markdown on
// stdout.
#include <unistd.h>

#include <fmt/format.h>
#include <omp.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "solver/inversion/objective.hpp"
#include "solver/plan/plan.hpp"
#include "solver/programs/bench_common.hpp"
#include "solver/propagators/gradient_propagator.hpp"
#include "solver/propagators/propagator.hpp"
#include "specwave/build_info.hpp"

namespace {

using namespace specwave;
using bench::best_of;

// One wavefield storage strategy of the bench: its label and its choice for nt steps of fields and states of
// these sizes (bytes). Boundary saving, where a method has it, is one more entry.
struct Strategy {
  std::string label;
  std::function<HistoryChoice(int nt, double field_bytes, double state_bytes)> choice;
  bool fdtd_only = false;  // boundary saving: the FDTD scheme runs backwards, the spectral one does not
};

struct Row {
  std::string method, strategy, history;
  double t_forward = 0, t_plain = 0, t_gradient = 0, history_mib = 0, disk_mib = 0;
  double t_history = 0, t_adjoint = 0;  // the gradient's two parts: forward with its history, adjoint + imaging
  double recompute_expected = 1, recompute_measured = 1;
  double ratio = 0, ratio_low = 0, ratio_high = 0;  // gradient / forward: median, lowest, highest over the rounds
  double adjoint_ratio = 0;                         // adjoint / forward: median over the rounds
};

Case bench_case(int n, int steps, int order, const std::string& precision, Method method, BackendKind backend) {
  Case c;
  c.name = "gradient-bench";
  c.grid.shape = {n, n, n};
  c.grid.spacing = {10.0, 10.0, 10.0};
  c.model.kind = ModelSpec::Kind::gaussian;
  c.model.velocity = 2000.0;
  c.model.anomaly = -200.0;
  c.model.center = {5.0 * n, 5.0 * n, 5.0 * n};
  c.model.radius = 1.0 * n;
  c.scheme.method = method;
  c.scheme.order = order;
  c.scheme.min_points_per_wavelength = 1.0;
  const int pml = std::min(10, n / 4);
  c.boundary.pml_width = pml;
  // Source and receivers 5 points below the absorbing layer (150 m at n = 64), the receivers across x inside it.
  const double depth = 10.0 * (pml + 5), x0 = 10.0 * (pml + 2), x1 = 10.0 * (n - pml - 2);
  SourceSpec s;
  s.position = {depth, 5.0 * n, 5.0 * n};
  s.wavelet.peak_frequency = 15.0;
  c.shots.push_back({{s}});
  for (int k = 0; k < 16; ++k) c.receivers.push_back({depth, 5.0 * n, x0 + (x1 - x0) * k / 15.0});
  c.run.precision = precision == "fp64" ? Precision::fp64 : Precision::fp32;
  c.run.backend = backend;
  c.time.dt = 1e-3;
  c.time.duration = 1e-3 * (steps - 1);
  c.output.directory = (std::filesystem::temp_directory_path() / "specwave-gradient-bench").string();
  c.output.plots = false;
  return c;
}

std::vector<Row> bench_method(Method method, const Case& c, const std::vector<Strategy>& strategies, int rounds) {
  const Plan plan = make_plan(c);
  const std::string method_name = method == Method::spectral ? "spectral (split-field PML)" : "fdtd (CPML)";
  // The production forward run: the baseline, timed again next to every gradient (the VM's speed drifts by tens
  // of percent within a minute, so a ratio of times taken minutes apart means little).
  auto forward = make_propagator(c, plan);
  const auto run_forward = [&] {
    forward->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
    forward->advance(0, plan.nt);
  };
  run_forward();  // warm-up
  // The sizes history_for estimates for this case.
  Case sized = c;
  sized.inversion.wavefield_storage = WavefieldStorage::memory;
  sized.inversion.wavefield_memory_gib = 1e6;
  const HistoryChoice all = history_for(sized, plan);
  const double field_bytes = all.memory_bytes / (plan.nt + 1.0);
  const double state_bytes = method == Method::spectral ? 2 * field_bytes : 2.6 * field_bytes;

  std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
  std::vector<Row> rows;
  for (const Strategy& strategy : strategies) {
    if (strategy.fdtd_only && method != Method::fdtd) continue;
    const HistoryChoice choice = strategy.choice(plan.nt, field_bytes, state_bytes);
    auto g = make_gradient_propagator(c, plan, choice);
    g->set_velocity(velocity);
    const std::vector<double> traces = g->forward(0, false);
    std::vector<double> residual(traces.size());
    for (std::size_t i = 0; i < traces.size(); ++i) residual[i] = 1e-3 * traces[i];
    std::vector<double> gradient(std::size_t(c.grid.points()), 0.0);
    Row row;
    row.method = method_name;
    row.strategy = strategy.label;
    row.t_plain = best_of(rounds, [&] { g->forward(0, false); });
    // Rounds alternate forward and gradient; the ratio is the median of the rounds' ratios, the times the best.
    // A gradient first, untimed: the history's memory is touched (as in an inversion's later iterations).
    g->forward(0, true);
    g->adjoint(residual, gradient);
    std::vector<double> ratios, adjoint_ratios;
    row.t_forward = row.t_gradient = row.t_history = row.t_adjoint = std::numeric_limits<double>::infinity();
    for (int r = 0; r < rounds; ++r) {
      const double tf = best_of(1, run_forward);
      const double th = best_of(1, [&] { g->forward(0, true); });
      const double ta = best_of(1, [&] { g->adjoint(residual, gradient); });
      const double tg = th + ta;
      ratios.push_back(tg / tf);
      adjoint_ratios.push_back(ta / tf);
      row.t_forward = std::min(row.t_forward, tf);
      row.t_gradient = std::min(row.t_gradient, tg);
      row.t_history = std::min(row.t_history, th);
      row.t_adjoint = std::min(row.t_adjoint, ta);
    }
    std::sort(ratios.begin(), ratios.end());
    row.ratio = ratios[ratios.size() / 2];
    row.ratio_low = ratios.front();
    row.ratio_high = ratios.back();
    std::sort(adjoint_ratios.begin(), adjoint_ratios.end());
    row.adjoint_ratio = adjoint_ratios[adjoint_ratios.size() / 2];
    row.history = g->history_name();
    row.history_mib = double(g->history_bytes()) / (1 << 20);
    row.disk_mib = choice.disk_bytes / (1 << 20);
    row.recompute_expected = choice.recompute_factor;
    row.recompute_measured = double(g->history_forward_steps()) / plan.nt;
    rows.push_back(row);
    std::fprintf(stderr, "[gradient-bench] %s, %s: gradient %.3f s, forward %.3f s, ratio %.2f, recompute %.2f\n",
                 method_name.c_str(), row.strategy.c_str(), row.t_gradient, row.t_forward, row.ratio,
                 row.recompute_measured);
  }
  return rows;
}

int run(int argc, char** argv) {
  CLI::App app{"specwave-gradient-bench: one gradient over one forward run, per wavefield storage strategy"};
  int n = 64, steps = 300, rounds = 3, order = 8, threads = 0, snapshots = 8;
  std::string precision = "fp32", output, method = "both", scratch, backend = "cpu";
  std::vector<std::string> only;
  app.add_option("--n", n, "Grid edge (n^3 points, absorbing layer min(10, n/4) inside)")->capture_default_str();
  app.add_option("--steps", steps, "Time steps")->capture_default_str();
  app.add_option("--rounds", rounds, "Rounds; the best counts")->capture_default_str();
  app.add_option("--order", order, "FDTD order")->capture_default_str();
  app.add_option("--precision", precision, "fp32 or fp64")
      ->check(CLI::IsMember({"fp32", "fp64"}))
      ->capture_default_str();
  app.add_option("--method", method, "fdtd, spectral or both")
      ->check(CLI::IsMember({"fdtd", "spectral", "both"}))
      ->capture_default_str();
  app.add_option("--snapshots", snapshots, "Snapshots of binomial checkpointing")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--scratch", scratch, "Folder of the disk strategy's scratch file (default $TMPDIR)");
  app.add_option("--threads", threads, "OpenMP threads (0: all)")->capture_default_str();
  app.add_option("--backend", backend,
                 "cpu, or cuda: the FDTD gradient on the GPU, its history in device memory and in pinned host memory")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  app.add_option("--output", output, "Also write the report to this file");
  app.add_option("--storage", only,
                 "Only these strategies (CPU: memory, checkpoints, binomial, disk, boundary); default all")
      ->delimiter(',');
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (threads > 0) omp_set_num_threads(threads);

  const bool cuda = backend == "cuda";
  const auto pinned = [](HistoryChoice h) {
    h.tier = HistoryTier::pinned_host;
    return h;
  };
  const auto segment = [](int nt, double f, double s) { return std::max(1, int(std::lround(std::sqrt(nt * s / f)))); };
  // The CUDA gradient keeps every step or segment checkpoints, in device memory or pinned host memory.
  const std::vector<Strategy> cuda_strategies = {
      {"memory (device)", [](int nt, double f, double) { return all_steps_choice(nt, f); }},
      {"checkpoints (device)",
       [segment](int nt, double f, double s) { return segment_checkpoint_choice(nt, segment(nt, f, s), f, s); }},
      {"memory (pinned host)", [pinned](int nt, double f, double) { return pinned(all_steps_choice(nt, f)); }},
      {"checkpoints (pinned host)",
       [segment, pinned](int nt, double f, double s) {
         return pinned(segment_checkpoint_choice(nt, segment(nt, f, s), f, s));
       }},
  };
  const std::vector<Strategy> cpu_strategies = {
      {"memory", [](int nt, double f, double) { return all_steps_choice(nt, f); }},
      {"checkpoints",
       [](int nt, double f, double s) {
         return segment_checkpoint_choice(nt, std::max(1, int(std::lround(std::sqrt(nt * s / f)))), f, s);
       }},
      {fmt::format("binomial ({} snapshots)", snapshots),
       [snapshots](int nt, double f, double s) { return binomial_choice(nt, snapshots, f, s); }},
      {"disk", [scratch](int nt, double f, double) { return disk_choice(nt, f, scratch); }},
      {"boundary", [](int nt, double, double) { return boundary_choice(nt, 0); }, true},
  };
  std::vector<Strategy> strategies = cuda ? cuda_strategies : cpu_strategies;
  if (!only.empty()) {
    // A label matches a name when it starts with it ("binomial" picks "binomial (8 snapshots)").
    const auto picked = [&](const Strategy& s) {
      return std::any_of(only.begin(), only.end(), [&](const std::string& o) { return s.label.rfind(o, 0) == 0; });
    };
    std::erase_if(strategies, [&](const Strategy& s) { return !picked(s); });
    if (strategies.empty()) throw std::invalid_argument("--storage: no strategy of this backend has these names");
  }
  std::vector<Method> methods;
  if (method != "spectral") methods.push_back(Method::fdtd);
  if (method != "fdtd" && !cuda) methods.push_back(Method::spectral);  // the spectral gradient runs on the CPU
  std::vector<Row> rows;
  int nt = 0;
  for (const Method m : methods) {
    const Case c = bench_case(n, steps, order, precision, m, cuda ? BackendKind::cuda : BackendKind::cpu);
    nt = make_plan(c).nt;
    for (Row& r : bench_method(m, c, strategies, rounds)) rows.push_back(std::move(r));
  }

  char host[256] = "unknown";
  gethostname(host, sizeof host);
  std::string report = fmt::format("## One gradient over one forward run ({}), per wavefield storage strategy\n\n",
                                   cuda ? "CUDA" : "CPU");
  report += fmt::format(
      "specwave {} (git {}), host {}, {} thread(s); {}^3 points, FDTD order {}, absorbing layer {}, {}, "
      "{} steps, one shot, 16 receivers; {} rounds, each timing the production forward propagator of the "
      "method and then one gradient: the ratio is the median of the rounds' ratios (their range in "
      "brackets), the times the best of the rounds.\n\n",
      build::version, build::git_hash, host, omp_get_max_threads(), n, order, std::min(10, n / 4), precision, nt,
      rounds);
  report +=
      "| method | storage | history MiB | disk MiB | forward s | gradient's forward alone s | its forward with the "
      "history s | its adjoint + imaging s | gradient s | gradient / forward (range) | adjoint / forward | recompute "
      "factor (counted; expected) |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Row& r : rows)
    report += fmt::format(
        "| {} | {} | {:.1f} | {:.0f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | {:.3f} | **{:.2f}** ({:.2f}-{:.2f}) | "
        "{:.2f} "
        "| {:.2f}; {:.2f} |\n",
        r.method, r.history, r.history_mib, r.disk_mib, r.t_forward, r.t_plain, r.t_history, r.t_adjoint, r.t_gradient,
        r.ratio, r.ratio_low, r.ratio_high, r.adjoint_ratio, r.recompute_measured, r.recompute_expected);
  report += "\nThe recompute factor is the forward steps one gradient takes (the forward pass included) over nt.\n";
  std::fputs(report.c_str(), stdout);
  if (!output.empty()) std::ofstream(output) << report;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "specwave-gradient-bench: error: %s\n", e.what());
    return 1;
  }
}
