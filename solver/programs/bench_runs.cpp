#include "solver/programs/bench_runs.hpp"

#include <omp.h>

#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>

#include "solver/case/case.hpp"
#include "solver/inversion/objective.hpp"
#include "solver/plan/plan.hpp"
#include "solver/programs/bench_common.hpp"
#include "solver/propagators/gradient_propagator.hpp"
#include "solver/propagators/propagator.hpp"

namespace specwave::bench {
namespace {

// Three layers (1500, 2000, 2500 m/s) on a 10 m grid, dt = 1 ms (CFL number 0.49 at order 8), the source 15 Hz
// Ricker three cells below the layer (or the surface) at the centre, the receivers a plane of n x n nodes two cells
// below the source depth's layer top, inside the interior.
Case run_case(int n, int pml, int order, int steps, bool fp64, bool free_surface) {
  const int N = n + 2 * pml;
  const double h = 10.0, top = free_surface ? 0.0 : h * pml;
  Case c;
  c.name = "whole-run-bench";
  c.grid.shape = {N, N, N};
  c.grid.spacing = {h, h, h};
  c.model.kind = ModelSpec::Kind::layered;
  c.model.interfaces = {h * N / 3, 2 * h * N / 3};
  c.model.velocities = {1500, 2000, 2500};
  c.scheme.order = order;
  c.scheme.min_points_per_wavelength = 1.0;
  c.boundary.pml_width = pml;
  c.boundary.free_surface = free_surface;
  SourceSpec s;
  s.position = {top + 3 * h, h * (N / 2) + 0.3 * h, h * (N / 2) + 0.6 * h};  // off the grid, as a shot usually is
  s.wavelet.peak_frequency = 15.0;
  c.shots.push_back({{s}});
  const double depth = top + 5 * h;
  c.receivers.reserve(std::size_t(n) * n);
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) c.receivers.push_back({depth, h * (pml + y), h * (pml + x)});
  c.run.precision = fp64 ? Precision::fp64 : Precision::fp32;
  c.run.backend = BackendKind::cpu;
  c.time.dt = 1e-3;
  c.time.duration = 1e-3 * (steps - 1);
  c.output.directory = (std::filesystem::temp_directory_path() / "specwave-bench").string();
  c.output.plots = false;
  return c;
}

struct Row {
  std::string what;
  int n = 0, grid = 0, nt = 0;
  bool fp64 = false;
  double seconds = 0, forward_seconds = 0;
  int values = 4;  // values a point moves at least: 4 (second order), 16 (staggered), 25 (with 3 SLS), 26 (elastic)
  double gpts() const { return double(grid) * grid * grid * nt / seconds * 1e-9; }
};

// A whole forward run: the propagator made, the shot begun from zero, every step, the traces handed out.
double time_forward(const Case& c, const Plan& plan, int rounds) {
  return best_of(rounds, [&] {
    auto p = make_propagator(c, plan);
    p->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
    p->advance(0, plan.nt);
    (void)p->traces();
  });
}

// One gradient as an inversion's iteration makes it: on a propagator that made one before (its history's memory
// allocated and touched), the forward pass with the history, then the adjoint with the imaging condition (the
// illumination, which only illumination compensation asks for, off). The best round's time, and its two passes.
struct GradientTiming {
  double seconds = 0, forward = 0, adjoint = 0;
  std::string history;
};
GradientTiming time_gradient(const Case& c, const Plan& plan, WavefieldStorage storage, int rounds,
                             double memory_gib = 1e6) {
  Case sized = c;
  sized.inversion.wavefield_storage = storage;
  sized.inversion.wavefield_memory_gib = memory_gib;
  const HistoryChoice choice = history_for(sized, plan);
  GradientTiming best;
  best.history = describe(choice);
  best.seconds = std::numeric_limits<double>::infinity();
  const std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
  std::vector<double> gradient(std::size_t(c.grid.points()));
  auto g = make_gradient_propagator(c, plan, choice);
  g->set_velocity(velocity);
  std::vector<double> residual = g->forward(0, false);
  for (double& r : residual) r *= 1e-3;
  for (int round = -1; round < std::max(1, rounds); ++round) {  // round -1: warm-up, the history's first touch
    const auto t0 = std::chrono::steady_clock::now();
    g->forward(0, true);
    const double forward = seconds_since(t0);
    const auto t1 = std::chrono::steady_clock::now();
    g->adjoint(residual, gradient);
    const double adjoint = seconds_since(t1);
    if (round >= 0 && forward + adjoint < best.seconds)
      best.seconds = forward + adjoint, best.forward = forward, best.adjoint = adjoint;
  }
  return best;
}

}  // namespace

std::string whole_run_report(const RunConfig& cfg, double triad_gbs, std::string& headline) {
  std::vector<Row> rows;
  for (int n : cfg.sizes)
    for (bool fp64 : cfg.fp64)
      for (bool surface : {false, true}) {
        if (surface && !cfg.free_surface) continue;
        const Case c = run_case(n, cfg.pml, cfg.order, cfg.steps, fp64, surface);
        const Plan plan = make_plan(c);
        std::cerr << fmt::format("[bench] whole forward run {}^3 ({}^3 with the layer), {}, {} ...\n", n,
                                 c.grid.shape[0], fp64 ? "fp64" : "fp32", surface ? "free surface" : "CPML");
        Row r{fmt::format("forward, {}", surface ? "free surface + CPML" : "CPML on all faces"), n, c.grid.shape[0],
              plan.nt, fp64};
        r.seconds = time_forward(c, plan, cfg.rounds);
        rows.push_back(r);
        if (cfg.staggered && !surface) {
          // The same case on the staggered velocity-pressure scheme with a density a layer, then also visco-acoustic
          // (Q a layer, 3 standard linear solids): docs/numerics.md, "Variable density", "Attenuation".
          const auto variant = [&](const Case& v, const char* what, int values) {
            const Plan vplan = make_plan(v);
            std::cerr << fmt::format("[bench] whole forward run {}^3, {}, {} ...\n", n, fp64 ? "fp64" : "fp32", what);
            Row row{fmt::format("forward, {}, CPML on all faces", what), n, v.grid.shape[0], vplan.nt, fp64};
            row.values = values;
            row.seconds = time_forward(v, vplan, cfg.rounds);
            row.forward_seconds = r.seconds;
            rows.push_back(row);
          };
          Case d = c;
          d.model.densities = {1000, 2000, 2300};
          d.scheme.formulation = Formulation::staggered;
          variant(d, "staggered (variable density)", 16);
          d.attenuation.present = true;
          d.attenuation.q_layers = {10000, 60, 120};
          variant(d, "staggered with attenuation (3 SLS)", 25);
          // The isotropic elastic scheme (docs/numerics.md, "Isotropic elastic waves"): water over two solid layers
          // (vs 0, 1000, 1300 m/s); a point moves at least its nine fields (read and written) and eight material
          // values: 26 values.
          Case e = c;
          e.model.densities = {1000, 2000, 2300};
          e.model.shear_velocities = {0, 1000, 1300};
          e.scheme.formulation = Formulation::elastic;
          e.scheme.min_points_per_wavelength = 1.0;
          variant(e, "elastic (water over two solids)", 26);
        }
      }
  std::vector<std::string> histories;
  if (cfg.gradient_n > 0)
    for (WavefieldStorage storage : {WavefieldStorage::memory, WavefieldStorage::boundary}) {
      const Case c = run_case(cfg.gradient_n, cfg.pml, cfg.order, cfg.steps, false, false);
      const Plan plan = make_plan(c);
      std::cerr << fmt::format("[bench] one gradient {}^3, fp32, {} ...\n", c.grid.shape[0], to_string(storage));
      Row r{fmt::format("gradient ({})",
                        storage == WavefieldStorage::memory ? "every step in memory" : "boundary saving"),
            cfg.gradient_n, c.grid.shape[0], plan.nt, false};
      const GradientTiming t = time_gradient(c, plan, storage, cfg.rounds);
      r.seconds = t.seconds;
      r.forward_seconds = time_forward(c, plan, cfg.rounds);
      histories.push_back(
          fmt::format("{}; its passes: forward with the history {:.2f} s ({:.2f} forward runs), adjoint "
                      "with the imaging {:.2f} s ({:.2f})",
                      t.history, t.forward, t.forward / r.forward_seconds, t.adjoint, t.adjoint / r.forward_seconds));
      rows.push_back(r);
      if (cfg.staggered && storage == WavefieldStorage::memory) {
        // The elastic scheme's gradient (vp; docs/numerics.md, "The elastic adjoint") on the elastic run's model, its
        // history checkpointed within 2 GiB as an inversion on a larger grid would keep it; "/ forward" is its own
        // forward run's.
        Case e = c;
        e.model.densities = {1000, 2000, 2300};
        e.model.shear_velocities = {0, 1000, 1300};
        e.scheme.formulation = Formulation::elastic;
        e.scheme.min_points_per_wavelength = 1.0;
        const Plan eplan = make_plan(e);
        std::cerr << fmt::format("[bench] one elastic gradient {}^3, fp32, binomial in 2 GiB ...\n", e.grid.shape[0]);
        Row g{"gradient, elastic (binomial checkpointing, 2 GiB)", cfg.gradient_n, e.grid.shape[0], eplan.nt, false};
        g.values = 26;
        const GradientTiming t = time_gradient(e, eplan, WavefieldStorage::binomial, cfg.rounds, 2.0);
        g.seconds = t.seconds;
        g.forward_seconds = time_forward(e, eplan, cfg.rounds);
        histories.push_back(
            fmt::format("{}; its passes: forward with the checkpoints {:.2f} s ({:.2f} forward runs), "
                        "adjoint with the replays and the imaging {:.2f} s ({:.2f})",
                        t.history, t.forward, t.forward / g.forward_seconds, t.adjoint, t.adjoint / g.forward_seconds));
        rows.push_back(g);
      }
    }

  std::string md = "## Whole runs (the headline)\n\n";
  md += fmt::format(
      "What a user runs, through the production path: a field starting at zero, a 15 Hz Ricker source, a CPML of {} "
      "points, n^2 receivers on grid nodes, {} steps, order {} in space, {} OpenMP threads. The grid is (n + {})^3 "
      "points and Gpts/s counts them all; a run's time includes making the propagator (set-up, allocation) and "
      "handing out the traces, not the preflight or writing files. \"of triad\" is the effective bandwidth at 4 "
      "values a point (16 B fp32, 32 B fp64) over the triad bandwidth measured in this run ({:.1f} GB/s). A "
      "gradient is the forward pass with its wavefield history, the adjoint and the imaging condition, on a propagator "
      "that made one before (as in an inversion's iterations: the history's memory allocated); \"/ forward\" "
      "divides it by a whole forward run of the same case timed beside it. A staggered run (variable density: "
      "`--staggered`) is the same case with a density a layer on the staggered velocity-pressure scheme; its \"of "
      "triad\" counts the 16 values a point its two sweeps move at least (u read, w_z w_y w_x read and written, 3 "
      "buoyancies; w read again, u read and written, dt K), and \"/ forward\" divides it by the second-order run of "
      "the same case; with attenuation (Q 10000, 60, 120 by layer, 3 mechanisms) it moves 9 values more a point (each "
      "memory variable read and written, its drive read). The elastic run (`--staggered` too: water over two solid "
      "layers, vs 0, 1000, 1300 m/s) counts the 26 values a point its two sweeps move at least (nine fields read and "
      "written, eight material values); its \"/ forward\" is the staggered run's. The elastic gradient (`--staggered` "
      "with `--gradient-n`, vp's gradient on the same model) keeps its history by binomial checkpointing within 2 GiB; "
      "its \"/ forward\" is its own forward run's. Best of {}.\n\n",
      cfg.pml, cfg.steps, cfg.order, omp_get_max_threads(), 2 * cfg.pml, triad_gbs, cfg.rounds);
  md +=
      "| run | n | grid | precision | steps | seconds | Gpts/s | of triad | / forward |\n"
      "|---|---:|---:|---|---:|---:|---:|---:|---:|\n";
  for (const Row& r : rows) {
    const double gbs = r.gpts() * r.values * (r.fp64 ? 8 : 4);
    md += fmt::format("| {} | {} | {}^3 | {} | {} | {:.2f} | {:.3f} | {:.0f}% | {} |\n", r.what, r.n, r.grid,
                      r.fp64 ? "fp64" : "fp32", r.nt, r.seconds, r.gpts(), 100 * gbs / triad_gbs,
                      r.forward_seconds > 0 ? fmt::format("{:.2f}", r.seconds / r.forward_seconds) : "");
  }
  for (const std::string& h : histories) md += "\nHistory: " + h + ".";
  if (!histories.empty()) md += "\n";
  md += "\n";
  // The headline: forward, CPML on all faces, fp32, the largest size.
  const Row* top = nullptr;
  for (const Row& r : rows)
    if (r.forward_seconds == 0 && r.values == 4 && !r.fp64 && r.what.find("all faces") != std::string::npos &&
        (!top || r.n > top->n))
      top = &r;
  if (top)
    headline = fmt::format("whole forward run, order {} fp32, {}^3 + CPML {}: {:.3f} Gpts/s, {:.0f}% of triad",
                           cfg.order, top->n, cfg.pml, top->gpts(), 100 * top->gpts() * 16 / triad_gbs);
  return md;
}

}  // namespace specwave::bench
