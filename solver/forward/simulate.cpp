// Shots in memory (forward.hpp): the stepping of `forward` without its files or checkpoints.
#include <fmt/format.h>
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "solver/case/errors.hpp"
#include "solver/forward/checkpoint.hpp"
#include "solver/forward/forward.hpp"
#include "solver/forward/particle_velocity.hpp"
#include "solver/forward/progress.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/plan/shot_receivers.hpp"
#include "solver/propagators/propagator.hpp"

namespace specwave {
namespace {

// The whole-grid field of a decomposed propagator on every rank of `domain` (each rank's block placed in a zero
// grid, summed over the domain: exact). Without decomposition, the propagator's field.
void copy_whole_field(Propagator& propagator, const Comm& domain, const Block& block, std::vector<double>& out,
                      std::vector<double>& scratch) {
  const std::size_t points = std::size_t(block.shape[0]) * block.shape[1] * block.shape[2];
  out.assign(points, 0.0);
  if (!block.decomposed()) return propagator.copy_field(std::span<double>(out));
  scratch.resize(std::size_t(block.points()));
  propagator.copy_field(std::span<double>(scratch));
  const Dims3 b = block.sub.begin, e = block.sub.extent;
  for (int z = 0; z < e[0]; ++z)
    for (int y = 0; y < e[1]; ++y)
      std::copy_n(
          scratch.begin() + std::ptrdiff_t((std::size_t(z) * e[1] + y) * e[2]), e[2],
          out.begin() + std::ptrdiff_t((std::size_t(z + b[0]) * block.shape[1] + y + b[1]) * block.shape[2] + b[2]));
  domain.allreduce_in_place(std::span<double>(out), ReduceOp::sum);
}

}  // namespace

std::vector<ShotOutput> simulate_shots(const Case& c, const Plan& plan, const std::vector<int>& shots,
                                       const SimulateOptions& options, const Comm* world) {
  const int n_shots = int(c.shots.size());
  for (int s : shots)
    if (s < 0 || s >= n_shots)
      throw std::invalid_argument(fmt::format("simulate_shots: shot {} of a case with {} shot(s)", s, n_shots));
  if (options.snapshot_every < 0) throw std::invalid_argument("simulate_shots: snapshot_every < 0");
  const bool parallel = world && world->size() > 1;
  if (parallel != (plan.ranks > 1) || (parallel && world->size() != plan.ranks))
    throw std::logic_error(fmt::format("simulate_shots: the plan is for {} rank(s), the run has {}", plan.ranks,
                                       world ? world->size() : 1));
  if (parallel && options.stop_on_signal)
    throw std::logic_error("simulate_shots: stop_on_signal on one rank of several would leave the others waiting");
  // As `forward`: plan.shot_groups groups of consecutive ranks, group g running the shots k with k % groups == g,
  // each group's grid decomposed over its ranks.
  const int groups = parallel ? plan.shot_groups : 1;
  const int group = parallel ? world->rank() / (world->size() / groups) : 0;
  const Comm domain = parallel ? world->split(group, world->rank()) : Comm::self();
  std::vector<ShotOutput> outputs(shots.size());
  if (shots.empty()) return outputs;
  auto propagator = make_propagator(c, plan, parallel ? &domain : nullptr);
  const Block block = propagator->block().value_or(whole_grid(c.grid.shape));
  const bool holder = domain.rank() == 0;  // the group's rank that keeps its shots' fields
  std::vector<double> scratch;
  ShotReceivers receivers(c, plan);
  long long mine = 0;
  for (std::size_t k = 0; k < shots.size(); ++k) mine += int(k % std::size_t(groups)) == group ? plan.nt : 0;
  Progress progress(mine, double(c.grid.points()), c.run.progress_seconds,
                    options.progress && (!parallel || world->rank() == 0));
  long long done = 0;
  for (std::size_t k = 0; k < shots.size(); ++k) {
    if (int(k % std::size_t(groups)) != group) continue;
    const int shot = shots[k];
    ShotOutput& out = outputs[k];
    propagator->begin_shot(plan.sources.at(shot), plan.wavelets.at(shot), receivers.of(shot, plan.receivers));
    LateGrowth growth(plan, shot);
    for (int n = 0; n < plan.nt;) {
      // Chunks end at the blow-up checks and at the snapshots, as in `forward`.
      int end = std::min(plan.nt, (n / c.run.check_every + 1) * c.run.check_every);
      if (options.snapshot_every > 0) end = std::min(end, (n / options.snapshot_every + 1) * options.snapshot_every);
      propagator->advance(n, end);
      done += end - n;
      n = end;
      if (n % c.run.check_every == 0 || n == plan.nt) {
        const FieldStats stats = propagator->field_stats();  // collective over the group
        if (!stats.finite || stats.max_abs > c.run.max_amplitude) blow_up(c, plan, shot, n, stats);
        growth.check(c, plan, shot, n, stats);
      }
      if (options.snapshot_every > 0 && n % options.snapshot_every == 0) {
        std::vector<double> field;
        copy_whole_field(*propagator, domain, block, field, scratch);
        if (holder) out.snapshot_steps.push_back(n), out.snapshots.push_back(std::move(field));
      }
      progress.update(shot, shot, n_shots, n, plan.nt, plan.dt, done);
      if (options.stop_on_signal && stop_signal())
        throw Error(ExitCode::interrupted, fmt::format("stopped by signal {} ({}) at shot {} step {}", stop_signal(),
                                                       strsignal(stop_signal()), shot, n));
    }
    const auto t = propagator->traces();  // collective over the group: every rank of it gets them
    out.traces.assign(t.begin(), t.end());
    if (has_velocity_receivers(c))
      particle_velocity_traces(c, std::size_t(shot), plan.dt, out.traces,
                               velocity_receiver_densities(c, plan, std::size_t(shot)));
    if (options.final_field) {
      copy_whole_field(*propagator, domain, block, out.final_field, scratch);
      if (!holder) out.final_field.clear();
    }
  }
  // Every rank gets every shot's traces: the group's first rank gives them, the others zeros (an exact sum).
  if (parallel)
    for (std::size_t k = 0; k < shots.size(); ++k) {
      auto& t = outputs[k].traces;
      const bool giver = int(k % std::size_t(groups)) == group && holder;
      if (!giver) t.assign(shot_receivers(c, std::size_t(shots[k])).size() * std::size_t(plan.nt), 0.0);
      world->allreduce_in_place(std::span<double>(t), ReduceOp::sum);
    }
  return outputs;
}

ShotOutput simulate_shot(const Case& c, const Plan& plan, int shot, const SimulateOptions& options) {
  return std::move(simulate_shots(c, plan, {shot}, options).front());
}

}  // namespace specwave
