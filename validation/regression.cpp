#include "validation/regression.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "io/case_file.hpp"
#include "io/outputs.hpp"
#include "io/png_plot.hpp"
#include "io/segy.hpp"
#include "solver/batch/sweep.hpp"
#include "solver/case/errors.hpp"
#include "solver/forward/forward.hpp"
#include "solver/forward/progress.hpp"
#include "solver/plan/plan.hpp"
#include "validation/validate.hpp"

namespace specwave {
namespace fs = std::filesystem;

TraceComparison compare_traces(const std::vector<double>& a, const std::vector<double>& b, int n_traces, int nt) {
  TraceComparison c;
  double diff2 = 0, ref2 = 0, max_diff = 0, max_ref = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    const double d = a[i] - b[i];
    diff2 += d * d;
    ref2 += b[i] * b[i];
    max_ref = std::max(max_ref, std::abs(b[i]));
    if (std::abs(d) > max_diff) {
      max_diff = std::abs(d);
      c.worst_trace = int(i / nt);
    }
  }
  c.rel_l2 = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  c.max_error = max_ref > 0 ? max_diff / max_ref : max_diff;
  const int max_lag = std::max(1, nt / 4);
  for (int t = 0; t < n_traces; ++t) {
    const double* x = a.data() + std::size_t(t) * nt;
    const double* y = b.data() + std::size_t(t) * nt;
    double xx = 0, yy = 0, xy = 0;
    for (int n = 0; n < nt; ++n) xx += x[n] * x[n], yy += y[n] * y[n], xy += x[n] * y[n];
    if (yy <= 1e-12 * ref2 / std::max(1, n_traces)) continue;  // no energy in the reference trace
    c.min_correlation = std::min(c.min_correlation, xx > 0 ? xy / std::sqrt(xx * yy) : 0.0);
    int best_lag = 0;
    double best = -INFINITY;
    for (int lag = -max_lag; lag <= max_lag; ++lag) {
      double s = 0;
      for (int n = std::max(0, -lag); n < std::min(nt, nt - lag); ++n) s += x[n + lag] * y[n];
      if (s > best) best = s, best_lag = lag;
    }
    c.max_time_shift = std::max(c.max_time_shift, std::abs(best_lag));
  }
  return c;
}

namespace {

std::vector<double> run_case_traces(const Case& c, const Plan& plan) {
  std::vector<double> all;
  for (std::size_t s = 0; s < c.shots.size(); ++s) {
    const ShotOutput out = simulate_shot(c, plan, int(s));
    all.insert(all.end(), out.traces.begin(), out.traces.end());
  }
  return all;
}

void write_reference(const Case& c, const Plan& plan, const std::vector<double>& traces) {
  io::h5::Provenance prov{"specwave.traces",
                          to_string(c.run.precision),
                          "cpu",
                          c.source_text,
                          "regression reference (specwave validate --update)",
                          plan.threads,
                          1};
  std::vector<std::vector<Vec3>> sources;
  for (const auto& shot : c.shots) {
    auto& ps = sources.emplace_back();
    for (const auto& s : shot.sources) ps.push_back(s.position);
  }
  io::TraceFile file(c.regression.reference, prov, true, int(c.shots.size()), c.receivers, sources, plan.nt, plan.dt);
  const std::size_t per_shot = c.receivers.size() * std::size_t(plan.nt);
  for (std::size_t s = 0; s < c.shots.size(); ++s)
    file.write_shot(int(s), std::span<const double>(traces.data() + s * per_shot, per_shot));
  file.commit();
}

std::string pass_mark(bool ok) { return ok ? "pass" : "**FAIL**"; }

}  // namespace

RegressionSummary run_regression(const std::string& folder, const RegressionOptions& o) {
  if (!fs::is_directory(folder))
    throw Error(ExitCode::input_error,
                fmt::format("{}: not a folder; give the folder of the reference cases, e.g. cases/", folder));
  std::vector<fs::path> files;
  for (const auto& e :
       fs::recursive_directory_iterator(folder))  // case files; sweep files (cases/sweeps/) are not cases
    if (e.is_regular_file() && e.path().extension() == ".toml" && !is_sweep_file(e.path().string()))
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (!o.report_dir.empty()) fs::create_directories(o.report_dir);

  RegressionSummary summary;
  std::string md = fmt::format("# specwave regression report\n\nFolder `{}`, tier `{}`.\n\n", folder, o.tier);
  md +=
      "| case | rel. L2 | max error | min correlation | max time shift | Eigen reference | result "
      "|\n|---|---|---|---|---|---|---|\n";
  std::string details;
  int index = 0;
  for (const fs::path& path : files) {
    Case c = io::read_case_file(path.string());
    ++index;
    if (!c.regression.present || (o.tier == "smoke" && c.regression.tier != "smoke")) {
      ++summary.skipped;
      continue;
    }
    const auto started = std::chrono::steady_clock::now();
    const auto done = [&](const std::string& what) {
      if (o.progress)
        o.progress(fmt::format(
            "[validate] {} ({} of {} case files): {} in {} | {}\n", path.string(), index, files.size(), what,
            format_duration(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()),
            utc_timestamp()));
    };
    c.output.plots = false;
    const RegressionSpec& v = c.regression;
    require_shared_receivers(c, "a regression case ([validation])");
    require_pressure_receivers(c, "a regression case ([validation])");
    const Plan plan = make_plan(c);
    const std::vector<double> traces = run_case_traces(c, plan);
    const int n_traces = int(c.shots.size() * c.receivers.size());
    if (o.update) {
      write_reference(c, plan, traces);
      summary.text += fmt::format("{}: reference written to {} ({} traces x {} samples)\n", path.string(), v.reference,
                                  n_traces, plan.nt);
      ++summary.updated;
      done("reference written");
      continue;
    }
    if (!fs::exists(v.reference))
      throw Error(ExitCode::input_error, fmt::format("{}: the stored reference {} is missing; create it with "
                                                     "`specwave validate --cases {} --update` (and review the change)",
                                                     path.string(), v.reference, folder));
    const io::ShotGathers ref = io::read_trace_file(v.reference);
    const int ref_receivers = ref.n_shots > 0 && ref.shared_receivers() ? ref.shot_traces(0) : -1;
    if (ref.n_shots != int(c.shots.size()) || ref_receivers != int(c.receivers.size()) || ref.nt != plan.nt ||
        std::abs(ref.dt - plan.dt) > 1e-9 * plan.dt)
      throw Error(
          ExitCode::validation_failed,
          fmt::format("{}: the stored reference {} has {} shots x {} receivers x {} samples at dt {} s, the case "
                      "{} x {} x {} at dt {} s; regenerate it with --update if the case changed on purpose",
                      path.string(), v.reference, ref.n_shots, ref_receivers, ref.nt, ref.dt, c.shots.size(),
                      c.receivers.size(), plan.nt, plan.dt));
    const std::vector<double> expected(ref.traces.begin(), ref.traces.end());
    // The reference is stored in float64 by --update; traces.h5 files of fp32 runs round to float32.
    const TraceComparison cmp = compare_traces(traces, expected, n_traces, plan.nt);
    bool ok = cmp.rel_l2 <= v.rel_l2 && cmp.max_error <= v.max_error && cmp.min_correlation >= v.min_correlation &&
              cmp.max_time_shift <= v.max_time_shift;
    std::string eigen = "-";
    if (v.eigen_reference) {
      const ValidationReport report = validate_case(c, 2'000'000, o.progress);
      eigen = pass_mark(report.passed());
      ok = ok && report.passed();
      details += fmt::format("### {}: Eigen reference\n\n```\n{}```\n\n", c.name, report.text());
    }
    md += fmt::format("| {} | {:.2e} (<= {:.0e}) | {:.2e} (<= {:.0e}) | {:.6f} (>= {}) | {} (<= {}) | {} | {} |\n",
                      c.name, cmp.rel_l2, v.rel_l2, cmp.max_error, v.max_error, cmp.min_correlation, v.min_correlation,
                      cmp.max_time_shift, v.max_time_shift, eigen, pass_mark(ok));
    summary.text += fmt::format("{}: {} (rel. L2 {:.2e}, max error {:.2e}, min correlation {:.6f}, time shift {}{})\n",
                                path.string(), ok ? "passed" : "FAILED", cmp.rel_l2, cmp.max_error, cmp.min_correlation,
                                cmp.max_time_shift, v.eigen_reference ? ", Eigen reference " + eigen : "");
    (ok ? summary.passed : summary.failed) += 1;
    done(ok ? "passed" : "FAILED");
    if (!o.report_dir.empty()) {
      // The trace with the largest difference: engine and reference overlaid, and their difference.
      const int t = cmp.worst_trace, nt = plan.nt;
      std::vector<double> time(nt),
          engine(traces.begin() + std::size_t(t) * nt, traces.begin() + std::size_t(t + 1) * nt),
          reference(expected.begin() + std::size_t(t) * nt, expected.begin() + std::size_t(t + 1) * nt), diff(nt);
      for (int n = 0; n < nt; ++n) time[n] = n * plan.dt, diff[n] = engine[n] - reference[n];
      const std::string png = fmt::format("{}_trace{}.png", c.name, t);
      const std::string png_diff = fmt::format("{}_trace{}_difference.png", c.name, t);
      io::write_line_png((fs::path(o.report_dir) / png).string(), time, {reference, engine},
                         {"stored reference", "this run"},
                         {fmt::format("{}, trace {} (shot {} rec {})", c.name, t, t / int(c.receivers.size()),
                                      t % int(c.receivers.size())),
                          "time (s)", "u", false});
      io::write_line_png((fs::path(o.report_dir) / png_diff).string(), time, {diff}, {"this run - reference"},
                         {fmt::format("{}: trace {} difference", c.name, t), "time (s)", "difference", false});
      details += fmt::format("### {}\n\n{} ({}): the trace with the largest difference.\n\n![{}]({}) ![{}]({})\n\n",
                             c.name, path.string(), ok ? "passed" : "FAILED", png, png, png_diff, png_diff);
    }
  }
  if (!o.report_dir.empty() && !o.update) {
    md += fmt::format("\n{} passed, {} failed, {} skipped (other tier or no [validation] table).\n\n", summary.passed,
                      summary.failed, summary.skipped);
    const std::string report = (fs::path(o.report_dir) / "report.md").string();
    std::ofstream(report + ".tmp") << md << details;
    fs::rename(report + ".tmp", report);
    summary.text += fmt::format("report: {}\n", report);
  }
  return summary;
}

}  // namespace specwave
