#pragma once
// `specwave invert`: full-waveform inversion of a case with an [inversion] table (docs/cli.md). The case's [model]
// is the starting model; the observed data come from inversion.true_model or inversion.observed. The optimiser
// (solver/optim/optimizer.hpp) updates the model parameter within the velocity bounds; after every iteration the
// outputs (solver/inversion/inversion_outputs.hpp) are rewritten atomically, so an interrupted run leaves complete
// files of the last completed iteration.
#include <optional>
#include <string>
#include <vector>

#include "solver/case/case.hpp"
#include "solver/inversion/lame.hpp"

namespace specwave {

struct Plan;

struct InversionIteration {
  int iteration = 0;  // 0: the starting model
  double misfit = 0;
  std::vector<double> misfit_per_shot;  // the misfit of every shot (their sum is misfit)
  double relative_misfit = 1;           // misfit / starting misfit (of its band, with inversion.bands_hz)
  double step = 0;                      // accepted line-search step (0 at iteration 0)
  int evaluations = 0;       // misfit + gradient evaluations of this iteration's line search (1 at iteration 0)
  bool wolfe = true;         // the step met the strong Wolfe conditions (false: Armijo fallback)
  double gradient_norm = 0;  // |projected gradient| of the parameter
  double seconds = 0;        // wall time of this iteration
  std::optional<double> model_error;  // |v - v_true| / |v_true| over the grid, when the true model is known
  // |rho - rho_true| / |rho_true| when the density is inverted and the true model has a density model
  std::optional<double> density_error;
  // |vs - vs_true| / |vs_true| when the shear velocity is inverted (the elastic scheme) and the true model is known
  std::optional<double> shear_error;
  std::optional<double> band_hz;  // multiscale: the low-pass cutoff of this iteration's misfit
};

struct InversionSummary {
  std::vector<InversionIteration> history;
  std::string propagator, wavefield_history, optimizer;
  std::string vector_ops;  // where the optimiser's vectors live: "eigen" (host) or "cublas" (device)
  std::vector<std::string> outputs;
  // Set when the line search found no acceptable step: why, and the steps it tried. The outputs hold the last
  // completed iteration.
  std::string failure;
  double misfit_reduction() const;  // 1 - J_final / J_start (of the last band)
  // 1 - e_final / e_start of the velocity's model error (or of InversionIteration::density_error, shear_error)
  std::optional<double> model_error_reduction(
      std::optional<double> InversionIteration::*error = &InversionIteration::model_error) const;
};

struct InversionOptions {
  bool quiet = false;
  // Continue from output.directory/inversion_state.h5 (the last completed iteration) up to inversion.iterations,
  // with the same result as a run that never stopped. The case may raise inversion.iterations to go further.
  bool resume = false;
};

// The case as it determines a result, for the fingerprints of resumed runs (invert's state, the shot checkpoints of
// gradient, born and migrate): its text without what only says how long to run (inversion.iterations: a finished
// inversion may be resumed for more), how the wavefields are kept (inversion.wavefield_*, scratch_directory), or where
// and how to report and schedule (output, run.threads, run.progress_seconds, run.checkpoint_*). Precision and backend
// are added apart (command-line overrides are not in the text).
std::string state_case_text(const Case& c);

// Runs case.inversion.iterations iterations on one rank. Error invalid_case without [inversion] or without the bounds
// of what it inverts (check_invert_case, check_invert_start).
InversionSummary run_inversion(const Case& c, const InversionOptions& options = {});

// What `invert` checks before it writes anything (Error invalid_case naming the key): the [inversion] table's keys
// (the bounds of what it inverts), then, with the plan, the starting model inside them (and a Lame box whose every vp
// stays below velocity_max). A sweep's preflight runs both on every variant. check_invert_start returns the starting
// Lame parameters and the density they were taken at (both empty unless inversion.parameters names "lambda").
struct LameStart {
  LameModel model;
  std::vector<double> density;
};
void check_invert_case(const Case& c);
LameStart check_invert_start(const Case& c, const Plan& plan);

}  // namespace specwave
