// specwave-gradient-bench: the time of one gradient (forward with the wavefield history, adjoint, imaging) over
// the time of one forward run, per wavefield storage strategy (scripts/bench --gradient; issue 6's target:
// <= 3.5x for in-memory storage). The baseline is the production forward propagator (make_propagator) on the
// same case; the gradient's own forward pass without history is also timed. Best of the rounds, Markdown on
// stdout.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <limits>
#include <omp.h>
#include <string>
#include <vector>

#include "solver/gradient.hpp"
#include "solver/gradient_propagator.hpp"
#include "solver/plan.hpp"
#include "solver/propagator.hpp"
#include "specwave/build_info.hpp"

namespace {

using namespace specwave;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <class F>
double best_of(int rounds, F&& f) {
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

int run(int argc, char** argv) {
  CLI::App app{"specwave-gradient-bench: one gradient over one forward run, per wavefield storage strategy"};
  int n = 64, steps = 300, rounds = 3, order = 8, threads = 0;
  std::string precision = "fp32", output, backend = "cpu";
  app.add_option("--n", n, "Grid edge (n^3 points, CPML 10 inside)")->capture_default_str();
  app.add_option("--steps", steps, "Time steps")->capture_default_str();
  app.add_option("--rounds", rounds, "Rounds; the best counts")->capture_default_str();
  app.add_option("--order", order, "FDTD order")->capture_default_str();
  app.add_option("--precision", precision, "fp32 or fp64")->check(CLI::IsMember({"fp32", "fp64"}))->capture_default_str();
  app.add_option("--threads", threads, "OpenMP threads (0: all)")->capture_default_str();
  app.add_option("--output", output, "Also write the report to this file");
  app.add_option("--backend", backend, "cpu or cuda (the FDTD gradient on the GPU; the history also in pinned host memory)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (threads > 0) omp_set_num_threads(threads);

  Case c;
  c.name = "gradient-bench";
  c.grid.shape = {n, n, n};
  c.grid.spacing = {10.0, 10.0, 10.0};
  c.model.kind = ModelSpec::Kind::gaussian;
  c.model.velocity = 2000.0;
  c.model.anomaly = -200.0;
  c.model.center = {5.0 * n, 5.0 * n, 5.0 * n};
  c.model.radius = 1.0 * n;
  c.scheme.order = order;
  c.scheme.min_points_per_wavelength = 1.0;
  c.boundary.pml_width = 10;
  SourceSpec s;
  s.position = {150.0, 5.0 * n, 5.0 * n};
  s.wavelet.peak_frequency = 15.0;
  c.shots.push_back({{s}});
  for (int k = 0; k < 16; ++k) c.receivers.push_back({150.0, 5.0 * n, 120.0 + (10.0 * n - 240.0) * k / 15.0});
  c.run.precision = precision == "fp64" ? Precision::fp64 : Precision::fp32;
  c.run.backend = backend == "cuda" ? BackendKind::cuda : BackendKind::cpu;
  c.time.dt = 1e-3;
  c.time.duration = 1e-3 * (steps - 1);
  c.output.directory = (std::filesystem::temp_directory_path() / "specwave-gradient-bench").string();
  c.output.plots = false;
  const Plan plan = make_plan(c);

  // The production forward run.
  auto forward = make_propagator(c, plan);
  const double t_forward = best_of(rounds, [&] {
    forward->begin_shot(plan.sources[0], plan.wavelets[0]);
    forward->advance(0, plan.nt);
  });

  std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
  struct Row {
    std::string strategy;
    double t_plain = 0, t_gradient = 0, history_mib = 0;
    int segment = 0;
  };
  std::vector<Row> rows;
  const double field_bytes = double(c.grid.points()) * (precision == "fp64" ? 8 : 4);
  std::vector<HistoryChoice> choices;
  for (const WavefieldStorage storage : {WavefieldStorage::memory, WavefieldStorage::checkpoints})
    choices.push_back(choose_history(storage, plan.nt, field_bytes, 4 * field_bytes, 1e15));
  if (plan.backend == BackendKind::cuda)  // the same two strategies with the history in pinned host memory
    for (std::size_t k = 0; k < 2; ++k) {
      choices.push_back(choices[k]);
      choices.back().tier = HistoryTier::pinned_host;
    }
  for (const HistoryChoice& choice : choices) {
    const WavefieldStorage storage = choice.storage;
    auto g = make_gradient_propagator(c, plan, choice);
    g->set_velocity(velocity);
    const std::vector<double> traces = g->forward(0, false);
    std::vector<double> residual(traces.size());
    for (std::size_t i = 0; i < traces.size(); ++i) residual[i] = 1e-3 * traces[i];
    std::vector<double> gradient(std::size_t(c.grid.points()), 0.0);
    Row row{plan.backend == BackendKind::cuda ? fmt::format("{} ({})", to_string(storage), to_string(choice.tier))
                                              : std::string(to_string(storage))};
    row.segment = choice.segment;
    row.t_plain = best_of(rounds, [&] { g->forward(0, false); });
    row.t_gradient = best_of(rounds, [&] {
      g->forward(0, true);
      g->adjoint(residual, gradient, {});
    });
    row.history_mib = double(g->history_bytes()) / (1 << 20);
    rows.push_back(row);
    std::fprintf(stderr, "[gradient-bench] %s: gradient %.3f s, forward %.3f s, ratio %.2f\n", row.strategy.c_str(),
                 row.t_gradient, t_forward, row.t_gradient / t_forward);
  }

  char host[256] = "unknown";
  gethostname(host, sizeof host);
  std::string report = fmt::format("## One gradient over one forward run (FDTD, {})\n\n", to_string(plan.backend));
  report += fmt::format("specwave {} (git {}), host {}, {} thread(s); {}^3 points, order {}, CPML 10, {}, {} steps, one "
                        "shot, 16 receivers; best of {} rounds. Forward: the production propagator "
                        "({}): {:.3f} s.\n\n",
                        build::version, build::git_hash, host, omp_get_max_threads(), n, order, precision, plan.nt,
                        rounds, forward->name(), t_forward);
  report += "| storage | history MiB | gradient's forward alone s | gradient s (forward + adjoint + imaging) | gradient / forward | "
            "recompute (forward passes per gradient) |\n|---|---|---|---|---|---|\n";
  for (const Row& r : rows)
    report += fmt::format("| {} | {:.0f} | {:.3f} | {:.3f} | **{:.2f}** | {} |\n", r.strategy, r.history_mib, r.t_plain,
                          r.t_gradient, r.t_gradient / t_forward,
                          r.segment > 0 ? fmt::format("2 (checkpoints every {} steps, one segment replayed at a time)", r.segment)
                                        : std::string("1 (every step kept)"));
  report += "\nThe measured recompute cost of checkpointing is the difference of the two gradient times over one forward.\n";
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
