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
  // `forward --resume` found this run completed in its folder (run.json) and ran nothing: the figures are that run's.
  bool completed_earlier = false;
};

ForwardSummary run_forward(const Case& c, const Plan& plan, const ForwardOptions& options);

// The provenance attributes of this run's files.
struct RunProvenance {
  std::string precision, backend, device, case_text;
  int threads = 1;
};

}  // namespace specwave

namespace specwave {

struct FieldStats;
class Comm;

// Throws Error(blow_up) for a shot whose field became non-finite or larger than run.max_amplitude at `step`,
// naming the point, the time and the fixes.
[[noreturn]] void blow_up(const Case& c, const Plan& plan, int shot, int step, const FieldStats& s);

// Growth of a shot's field once its sources are silent (docs/validation.md, "Late growth"): no energy enters then,
// so the field's largest value should not grow far beyond the largest it has reached; run.late_growth_factor (1000;
// 0: off) times that is an instability, caught long before run.max_amplitude (1e20) would be. The reference is the
// largest |field| at the checks up to and including the first after the step from which every wavelet of the shot is
// below 1e-6 of its peak (so the whole pulse is in it however sparse the checks); a run resumed from a checkpoint
// continues with the reference the checkpoint saved.
class LateGrowth {
 public:
  LateGrowth(const Plan& plan, int shot);
  // At a check (`step`, the field's stats): records the reference, or throws Error(blow_up) on a growth.
  void check(const Case& c, const Plan& plan, int shot, int step, const FieldStats& s);
  int quiet_step() const { return quiet_; }
  double reference() const { return reference_; }
  // A resumed run's: the checkpoint's reference, joined by the next check as any before the first after silence.
  void set_reference(double r) { reference_ = r, armed_ = false; }

 private:
  int quiet_ = 0;
  double reference_ = 0;
  bool armed_ = false;  // the reference holds a check after quiet_
};

// Shots in memory, no files (solver/forward/simulate.cpp): the Python module's forward, `validate` and the tests.
// The same propagator, blow-up checks and chunks of run.check_every steps as `forward` (its traces are bitwise
// those of traces.h5).
struct SimulateOptions {
  bool final_field = true;      // u^{nt}
  int snapshot_every = 0;       // u^n for n = k * snapshot_every <= nt (0: none)
  bool progress = false;        // [progress] lines (progress_line), at most every run.progress_seconds
  bool stop_on_signal = false;  // a stop signal (stop_signal()) ends the run between chunks: Error(interrupted)
};
// One shot: traces (n_receivers, nt) and the fields (nz, ny, nx), in fp64 whatever the run precision (the values are
// the run precision's exactly).
struct ShotOutput {
  std::vector<double> traces, final_field;
  std::vector<int> snapshot_steps;
  std::vector<std::vector<double>> snapshots;
};
ShotOutput simulate_shot(const Case& c, const Plan& plan, int shot, const SimulateOptions& options = {});
// The given shots in turn through one propagator, one progress report over all of them. With `world` (several MPI
// ranks, a plan made for them), as `forward`: the ranks form plan.shot_groups groups, each decomposing its grid over
// plan.process_grid, group g running the k-th shot for k % groups == g. Every rank gets every shot's traces; a shot's
// fields (the whole grid) are kept by its group's first rank only (empty elsewhere). stop_on_signal needs one rank.
std::vector<ShotOutput> simulate_shots(const Case& c, const Plan& plan, const std::vector<int>& shots,
                                       const SimulateOptions& options = {}, const Comm* world = nullptr);

}  // namespace specwave
