#include "solver/forward/progress.hpp"

#include "solver/forward/forward.hpp"
#include "solver/propagators/propagator.hpp"

#include <fmt/format.h>
#include <chrono>
#include <cmath>
#include <ctime>

namespace specwave {

std::string format_duration(double s) {
  if (!std::isfinite(s)) return "--";
  if (s < 60) return fmt::format("{:.1f}s", s);
  const long long t = std::llround(s);
  if (t < 3600) return fmt::format("{}m{:02d}s", t / 60, t % 60);
  return fmt::format("{}h{:02d}m{:02d}s", t / 3600, t / 60 % 60, t % 60);
}

std::string utc_timestamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return stamp;
}

Progress::Progress(long long total_steps, double cells_per_step, double interval, bool enabled, long long steps_before)
    : total_steps_(total_steps),
      cells_per_step_(cells_per_step),
      interval_(interval),
      enabled_(enabled),
      start_(clock::now()),
      last_print_(start_),
      steps_before_(steps_before),
      steps_done_(steps_before) {}

double Progress::elapsed_seconds() const { return std::chrono::duration<double>(clock::now() - start_).count(); }

double Progress::cells_per_second() const {
  const double t = elapsed_seconds();
  return t > 0 ? (steps_done_ - steps_before_) * cells_per_step_ / t : 0;
}

void Progress::update(int first_shot, int last_shot, int n_shots, int step, int nt, double dt, long long steps_done) {
  steps_done_ = steps_done;
  if (!enabled_) return;
  const auto now = clock::now();
  const bool last = steps_done == total_steps_;
  if (!last && std::chrono::duration<double>(now - last_print_).count() < interval_) return;
  last_print_ = now;
  const double elapsed = elapsed_seconds();
  const long long run = steps_done - steps_before_;
  const double eta = run > 0 ? elapsed * double(total_steps_ - steps_done) / run : NAN;
  // Shots by their index in the output files (shot_0003 is shot 3), with the count.
  const std::string shots = first_shot == last_shot
                                ? fmt::format("shot {} (of {})", first_shot, n_shots)
                                : fmt::format("shots {}-{} (of {})", first_shot, last_shot, n_shots);
  progress_line(
      fmt::format("[progress] {} step {}/{} ({:5.1f}%) t = {:.4f} s | {:.3g} cells/s | elapsed {} | ETA {} | {}\n",
                  shots, step, nt, 100.0 * steps_done / total_steps_, step * dt, cells_per_second(),
                  format_duration(elapsed), format_duration(eta), utc_timestamp()));
}

namespace {
ShotProgress*& active_shot() {  // per thread: the Python module's jobs may run on several at once
  thread_local ShotProgress* active = nullptr;
  return active;
}
}  // namespace

ShotProgress::ShotProgress(int shot, int n_shots, double interval, ShotChecks checks)
    : checks_(checks), shot_(shot), n_shots_(n_shots), interval_(interval), outer_(active_shot()) {
  if (checks_.c && checks_.plan) growth_ = std::make_unique<LateGrowth>(*checks_.plan, shot);
  active_shot() = this;
}

ShotProgress::~ShotProgress() { active_shot() = outer_; }

bool shot_check_due(int done, int total) {
  const ShotProgress* p = active_shot();
  return p && p->growth_ && done > p->checked_ && (done % p->checks_.c->run.check_every == 0 || done == total);
}

void shot_check(int done, const FieldStats& s) {
  ShotProgress* p = active_shot();
  if (!p || !p->growth_) return;
  p->checked_ = done;
  const Case& c = *p->checks_.c;
  const Plan& plan = *p->checks_.plan;
  if (!s.finite || s.max_abs > c.run.max_amplitude) blow_up(c, plan, p->shot_, done, s);
  p->growth_->check(c, plan, p->shot_, done, s);
}

void shot_step(ShotPass pass, int done, int total) {
  ShotProgress* p = active_shot();
  if (!p || p->interval_ <= 0) return;
  if (pass == ShotPass::forward && p->pass_ == ShotPass::adjoint && p->started_) return;  // the adjoint's replays
  const auto now = ShotProgress::clock::now();
  if (!p->started_ || pass != p->pass_) {  // a pass begins: its clock and its first step count start here
    p->pass_ = pass;
    p->started_ = true;
    p->first_done_ = done;
    p->pass_start_ = p->last_line_ = now;
    return;
  }
  if (std::chrono::duration<double>(now - p->last_line_).count() < p->interval_) return;
  p->last_line_ = now;
  const double elapsed = std::chrono::duration<double>(now - p->pass_start_).count();
  // The rate counts the steps since the pass's first report, which started the clock.
  const double rate = elapsed > 0 ? (done - p->first_done_) / elapsed : 0;
  const double eta = rate > 0 ? (total - done) / rate : NAN;
  progress_line(
      fmt::format("[progress] shot {} (of {}) {} step {}/{} ({:5.1f}%) | {:.3g} steps/s | elapsed {} | ETA {} "
                  "| {}\n",
                  p->shot_, p->n_shots_, pass == ShotPass::forward ? "forward" : "adjoint", done, total,
                  100.0 * done / total, rate, format_duration(elapsed), format_duration(eta), utc_timestamp()));
}

namespace {
LineSink& progress_sink() {  // per thread: the Python module's calls may run on several threads at once
  thread_local LineSink sink;
  return sink;
}
}  // namespace

void set_progress_sink(LineSink sink) { progress_sink() = std::move(sink); }

void progress_line(const std::string& line) {
  if (const auto& sink = progress_sink()) return sink(line);
  std::fputs(line.c_str(), stdout);
  std::fflush(stdout);
}

}  // namespace specwave
