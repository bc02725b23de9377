#pragma once
// The forward job: every shot of a case through one propagator, with progress, blow-up checks and outputs.
#include <string>
#include <vector>

#include "solver/case/case.hpp"
#include "solver/plan/plan.hpp"

namespace specwave {

struct ForwardOptions {
  bool quiet = false;   // no progress lines
  bool resume = false;  // continue from output.directory/checkpoint when there is one (docs/batch.md)
};

struct ForwardSummary {
  double seconds = 0, cells_per_second = 0;
  std::vector<std::string> outputs;  // files written
  std::string propagator;
  int checkpoints = 0;  // written by this run
};

ForwardSummary run_forward(const Case& c, const Plan& plan, const ForwardOptions& options);

// The provenance attributes of this run's files.
struct RunProvenance {
  std::string precision, backend, device, case_text;
  int threads = 1;
};

}  // namespace specwave

namespace specwave {

// One shot in memory, no files: traces (n_receivers, nt) and the final field u^{nt} (nz, ny, nx), in fp64
// whatever the run precision. Used by `validate` and the tests.
struct ShotOutput {
  std::vector<double> traces, final_field;
};
ShotOutput simulate_shot(const Case& c, const Plan& plan, int shot);

}  // namespace specwave
