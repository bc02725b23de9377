#pragma once
// Progress lines for long runs: step/total, simulated time, cells/s, elapsed, ETA, the wall clock (UTC). One line per
// report, flushed immediately, never a carriage return: reads well in a Slurm log (and in a terminal).
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

namespace specwave {

// Where progress lines go (the run's [progress] lines and the objective's per-shot lines): stdout, flushed, unless
// a sink is set (the Python module sends them to Python's logging or stderr). An empty function restores stdout.
// The sink is the calling thread's own (set and called on the thread that runs the job).
using LineSink = std::function<void(const std::string& line)>;
void set_progress_sink(LineSink sink);
// Writes one line (ending in a newline) to the sink.
void progress_line(const std::string& line);

std::string format_duration(double seconds);  // "1h02m03s", "4m05s", "12.3s"
std::string utc_timestamp();                  // the wall clock now, "2026-12-02T05:20:11Z" (ISO 8601, UTC)

// Progress inside one shot of a gradient, a Born run or a migration, whose shot may take minutes (a large 3-D model,
// an elastic gradient replaying its checkpoints): the driver (Objective::evaluate, the born command) opens a
// ShotProgress for each shot; the gradient propagators report each step with shot_step, and a line goes out at
// most every interval seconds, never before the first interval has passed:
//   [progress] shot 3 (of 12) adjoint step 1200/2000 (60.0%) | 35.2 steps/s | elapsed 34.1s | ETA 22.7s | <UTC>
// `elapsed` and `ETA` are the pass's. The forward steps the adjoint replays (checkpointing) are not reported: once the
// adjoint pass has begun, forward steps are the adjoint's. Without an open ShotProgress shot_step does nothing. For
// the thread that runs the job: each thread has its own open ShotProgress.
//
// With a case and plan (ShotChecks), the ShotProgress also runs `forward`'s checks on the shot's forward pass
// (solver/forward/forward.hpp: blow_up above run.max_amplitude or non-finite, and LateGrowth): the propagators call
// forward_step, whose field statistics are taken only when a check is due (every run.check_every steps and at the
// last), each step once (the adjoint's replays are not checked again). A failed check throws Error(blow_up).
enum class ShotPass { forward, adjoint };
struct FieldStats;
class LateGrowth;
struct Case;
struct Plan;
struct ShotChecks {
  const Case* c = nullptr;  // both must outlive the ShotProgress; null: no checks
  const Plan* plan = nullptr;
};
class ShotProgress {
 public:
  ShotProgress(int shot, int n_shots, double interval_seconds, ShotChecks checks = {});  // interval <= 0: no lines
  ~ShotProgress();
  ShotProgress(const ShotProgress&) = delete;
  ShotProgress& operator=(const ShotProgress&) = delete;

 private:
  friend void shot_step(ShotPass, int, int);
  friend bool shot_check_due(int, int);
  friend void shot_check(int, const FieldStats&);
  ShotChecks checks_;
  std::unique_ptr<LateGrowth> growth_;
  int checked_ = 0;  // the last step checked
  using clock = std::chrono::steady_clock;
  int shot_, n_shots_;
  double interval_;
  ShotPass pass_ = ShotPass::forward;
  bool started_ = false;  // a step of pass_ was reported
  int first_done_ = 0;    // the pass's first report's step count
  clock::time_point pass_start_, last_line_;
  ShotProgress* outer_;
};
// Step `done` of `total` of the current shot's pass (forward: n + 1 after step n; adjoint: nt - n after step n, and
// 0 before its loop, so that the replays that fetch its first fields already count as the adjoint's).
void shot_step(ShotPass pass, int done, int total);
// Whether a check of the open ShotProgress's forward pass is due after `done` of `total` steps, and the check.
bool shot_check_due(int done, int total);
void shot_check(int done, const FieldStats& stats);
// A forward step of a gradient propagator's shot: shot_step(forward, done, total), then the checks on stats() (the
// current field's FieldStats, taken only when due).
template <class Stats>
void forward_step(int done, int total, Stats&& stats) {
  shot_step(ShotPass::forward, done, total);
  if (shot_check_due(done, total)) shot_check(done, stats());
}

class Progress {
 public:
  // steps_before: done by an earlier run this one resumes (not counted in the rate).
  Progress(long long total_steps, double cells_per_step, double interval_seconds, bool enabled,
           long long steps_before = 0);
  // Call after each chunk of steps; prints at most every interval_seconds (and always on the last step).
  // Shots first..last (0-based) are running together.
  void update(int first_shot, int last_shot, int n_shots, int step, int nt, double dt, long long steps_done);
  double elapsed_seconds() const;
  double cells_per_second() const;

 private:
  using clock = std::chrono::steady_clock;
  long long total_steps_;
  double cells_per_step_, interval_;
  bool enabled_;
  clock::time_point start_, last_print_;
  long long steps_before_ = 0, steps_done_ = 0;
};

}  // namespace specwave
