// Shots in memory (forward.hpp): the stepping of `forward` without its files, checkpoints or MPI.
#include <fmt/format.h>
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "solver/case/errors.hpp"
#include "solver/forward/checkpoint.hpp"
#include "solver/forward/forward.hpp"
#include "solver/forward/progress.hpp"
#include "solver/propagators/propagator.hpp"

namespace specwave {

std::vector<ShotOutput> simulate_shots(const Case& c, const Plan& plan, const std::vector<int>& shots,
                                       const SimulateOptions& options) {
  const int n_shots = int(c.shots.size());
  for (int s : shots)
    if (s < 0 || s >= n_shots)
      throw std::invalid_argument(fmt::format("simulate_shots: shot {} of a case with {} shot(s)", s, n_shots));
  if (options.snapshot_every < 0) throw std::invalid_argument("simulate_shots: snapshot_every < 0");
  std::vector<ShotOutput> outputs(shots.size());
  if (shots.empty()) return outputs;
  auto propagator = make_propagator(c, plan);
  const std::size_t points = std::size_t(c.grid.points());
  Progress progress(static_cast<long long>(plan.nt) * static_cast<long long>(shots.size()), double(points),
                    c.run.progress_seconds, options.progress);
  long long done = 0;
  for (std::size_t k = 0; k < shots.size(); ++k) {
    const int shot = shots[k];
    ShotOutput& out = outputs[k];
    propagator->begin_shot(plan.sources.at(shot), plan.wavelets.at(shot));
    for (int n = 0; n < plan.nt;) {
      // Chunks end at the blow-up checks and at the snapshots, as in `forward`.
      int end = std::min(plan.nt, (n / c.run.check_every + 1) * c.run.check_every);
      if (options.snapshot_every > 0) end = std::min(end, (n / options.snapshot_every + 1) * options.snapshot_every);
      propagator->advance(n, end);
      done += end - n;
      n = end;
      if (n % c.run.check_every == 0 || n == plan.nt) {
        const FieldStats stats = propagator->field_stats();
        if (!stats.finite || stats.max_abs > c.run.max_amplitude) blow_up(c, plan, shot, n, stats);
      }
      if (options.snapshot_every > 0 && n % options.snapshot_every == 0) {
        out.snapshot_steps.push_back(n);
        propagator->copy_field(std::span<double>(out.snapshots.emplace_back(points)));
      }
      progress.update(shot, shot, n_shots, n, plan.nt, plan.dt, done);
      if (options.stop_on_signal && stop_signal())
        throw Error(ExitCode::interrupted, fmt::format("stopped by signal {} ({}) at shot {} step {}", stop_signal(),
                                                       strsignal(stop_signal()), shot, n));
    }
    const auto t = propagator->traces();
    out.traces.assign(t.begin(), t.end());
    if (options.final_field) {
      out.final_field.resize(points);
      propagator->copy_field(std::span<double>(out.final_field));
    }
  }
  return outputs;
}

ShotOutput simulate_shot(const Case& c, const Plan& plan, int shot, const SimulateOptions& options) {
  return std::move(simulate_shots(c, plan, {shot}, options).front());
}

}  // namespace specwave
