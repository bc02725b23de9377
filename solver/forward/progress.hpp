#pragma once
// Progress lines for long runs: step/total, simulated time, cells/s, elapsed, ETA, the wall clock (UTC). One line per
// report, flushed immediately, never a carriage return: reads well in a Slurm log (and in a terminal).
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>

namespace specwave {

// Where progress lines go (the run's [progress] lines and the objective's per-shot lines): stdout, flushed, unless
// a sink is set (the Python module sends them to Python's logging or stderr). An empty function restores stdout.
// The sink is called from the thread that runs the job.
using LineSink = std::function<void(const std::string& line)>;
void set_progress_sink(LineSink sink);
// Writes one line (ending in a newline) to the sink.
void progress_line(const std::string& line);

std::string format_duration(double seconds);  // "1h02m03s", "4m05s", "12.3s"
std::string utc_timestamp();                  // the wall clock now, "2026-12-02T05:20:11Z" (ISO 8601, UTC)

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
