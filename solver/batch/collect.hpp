#pragma once
// Result collection of a sweep folder (docs/batch.md, "Collecting results"): each variant's state from its
// status.json (written by the job script) and outputs, its run metrics and trace or misfit numbers, summarised in
// summary.csv and summary.h5.
#include <optional>
#include <string>
#include <vector>

namespace specwave {

// completed: exit 0 and outputs present; failed: a non-zero exit (or exit 0 without outputs); interrupted: stopped
// at a checkpoint (exit 10) and not requeued; running: started, not ended; requeued: Slurm will run it again;
// missing: no status.json (never started, or still pending in the queue).
enum class VariantState { completed, failed, interrupted, running, requeued, missing };
const char* to_string(VariantState s);
// Failed, interrupted and missing variants: what `sweep --resume` submits again.
inline bool needs_rerun(VariantState s) {
  return s == VariantState::failed || s == VariantState::interrupted || s == VariantState::missing;
}

struct VariantResult {
  int index = 0;
  std::string id, name;                 // "0003", "0003_peak_frequency=10_order=8"
  std::vector<std::string> parameters;  // one text per axis
  VariantState state = VariantState::missing;
  std::optional<int> exit_code, restart_count;
  std::string host, job_id, note;  // note: why it counts as failed, when the status does not say it
  std::string log;                 // path relative to the sweep folder
  // forward (run.json, traces.h5)
  std::optional<double> seconds, cells_per_second, dt, trace_l2, trace_max_abs;
  std::optional<int> nt, n_shots, n_receivers;
  std::string propagator;
  // invert (the last line of iterations.jsonl)
  std::optional<int> iterations;
  std::optional<double> misfit, relative_misfit, model_error;
};

struct SweepResults {
  std::string directory, name, command;  // command: "forward" or "invert"
  std::vector<std::string> axes;         // the axis keys
  std::vector<std::string> axis_types;   // per axis: "integer", "number" or "string" (its summary.h5 dtype)
  std::vector<VariantResult> variants;
  int count(VariantState s) const;
};

// Reads manifest.json and every variant's status.json and outputs. With metrics = false only the states (no
// traces read). Errors: ExitCode::input_error when the folder is not a sweep folder.
SweepResults collect_sweep(const std::string& directory, bool metrics = true);

// summary.csv and summary.h5 in the sweep folder (atomic).
void write_sweep_summary(const SweepResults& results);
// The printed report: counts, a table, and for every variant that failed, was interrupted or is missing, its log
// path and the last lines of its log.
std::string describe_sweep_results(const SweepResults& results, int log_lines = 5);

}  // namespace specwave
