#pragma once
// Regression validation over reference cases (docs/validation.md, "Regression cases"): every case file under a
// folder with a [validation] table of the chosen tier is run, and its traces compared with the reference traces
// stored next to it (relative L2, max error, per-trace correlation and time shift), and, when the case asks,
// with the independent Eigen reference (`validate`). `update` regenerates the stored references instead.
#include <string>
#include <vector>

#include "solver/case/case.hpp"
#include "validation/validate.hpp"

namespace specwave {

// How two sets of traces (n_traces x nt, C order) differ.
struct TraceComparison {
  double rel_l2 = 0;           // ||a - b|| / ||b||
  double max_error = 0;        // max |a - b| / max |b|
  double min_correlation = 1;  // over traces whose reference has energy
  int max_time_shift = 0;      // max over traces of |lag| of the cross-correlation peak (within +-nt/4 samples)
  int worst_trace = 0;         // the trace with the largest |a - b|
};
TraceComparison compare_traces(const std::vector<double>& engine, const std::vector<double>& reference, int n_traces,
                               int nt);

struct RegressionOptions {
  std::string tier = "smoke";  // "smoke": smoke cases only; "full": every case
  bool update = false;         // write the stored references (only when asked)
  std::string report_dir;      // report.md and the PNG plots; empty: none
  // After each case: "[validate] cases/x.toml (3 of 5 case files): passed in 4.2s | <UTC>", and validate_case's lines
  // of the cases with an Eigen reference; empty: none.
  ValidationProgress progress;
};

struct RegressionSummary {
  int passed = 0, failed = 0, updated = 0, skipped = 0;
  std::string text;  // one block per case, as printed
};

// Runs every case file (*.toml, recursively, sorted; sweep files skipped) under `folder` that has a [validation] table
// of the tier.
RegressionSummary run_regression(const std::string& folder, const RegressionOptions& options);

}  // namespace specwave
