#pragma once
// Checkpoint and restart of long runs (docs/batch.md, "Preemption and restart"):
//  - stop signals: SIGUSR1 (Slurm's --signal) and SIGTERM (preemption, scancel, the time limit) ask the run to
//    stop at the next step boundary, after writing a checkpoint (a second SIGINT/SIGTERM, a second or more after the
//    first, ends it at once);
//  - a schedule that every rank follows in lockstep: checkpoint every N steps or M minutes, and at a stop;
//  - the store: every rank's propagator states and the driver's own small state, written atomically (a new
//    generation of per-rank files, then rank 0's manifest by rename), read back by `--resume`.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "solver/parallel/comm.hpp"
#include "solver/propagators/propagator.hpp"

namespace specwave {

// Installs the handlers of SIGUSR1, SIGTERM and SIGINT (idempotent).
void install_stop_handlers();
// The stop signal this process received (0: none).
int stop_signal();
// What a handler does; for tests and for a program that wants to stop the run itself.
void request_stop(int signal);
// Forgets a stop signal (the Python module, after turning a stopped run into KeyboardInterrupt).
void clear_stop();

class CheckpointSchedule {
 public:
  // every_steps, every_minutes <= 0: no periodic checkpoints (a stop signal still writes one).
  CheckpointSchedule(const Comm& world, long long every_steps, double every_minutes, long long steps_done = 0);
  enum class Action { none, save, save_and_stop };
  // Collective over world, at the same step boundary on every rank: a stop signal on any rank, or the period,
  // is the same answer everywhere. steps_done: the run's step count, the same on every rank.
  Action poll(long long steps_done);
  // The signal that made poll() answer save_and_stop (0 if none).
  int signal() const { return signal_; }
  // Steps of poll's count until the period by steps is due (0: due now; -1: no period by steps), so that the driver
  // meets there however far apart its checks are.
  long long steps_until_due(long long steps_done) const {
    return every_steps_ > 0 ? std::max(0LL, last_steps_ + every_steps_ - steps_done) : -1;
  }

 private:
  const Comm& world_;
  long long every_steps_, last_steps_;
  double every_seconds_;
  double last_time_;
  int signal_ = 0;
};

// The driver's own state: a few integers and small arrays (the propagators' state is saved by the store).
struct CheckpointMeta {
  std::map<std::string, long long> integers;
  std::map<std::string, std::vector<double>> arrays;
  long long integer(const std::string& name) const;
  const std::vector<double>& array(const std::string& name) const;
};

class CheckpointStore {
 public:
  // directory: where the checkpoint lives (output.directory/checkpoint). fingerprint: what a resumed run must
  // share with the one that wrote it (case, ranks, precision, the wavelets' checksum, ...), compared in
  // load_meta(); rank_fingerprint: what this rank's part must match (its block of the model's checksum), stored in
  // the rank's file and compared in load_state(). Every array carries a checksum, verified when it is read.
  CheckpointStore(std::string directory, const Comm& world, std::string fingerprint, std::string rank_fingerprint = "");
  const std::string& directory() const { return directory_; }
  // Whether a complete checkpoint exists (the same answer on every rank).
  bool exists() const;
  // Collective: each rank writes the state of `propagators` (those with a shot, in order), then rank 0 the
  // manifest with `meta`; the previous generation is removed. A run killed at any moment leaves either the
  // previous checkpoint or this one.
  void save(const CheckpointMeta& meta, const std::vector<Propagator*>& propagators);
  // Checks the fingerprint and reads the driver's state (every rank).
  CheckpointMeta load_meta();
  // Fills `propagators` (after their begin_shot, as many as were saved) with this rank's state.
  void load_state(const std::vector<Propagator*>& propagators);
  // Collective: removes the checkpoint (the run completed).
  void remove();
  double last_save_seconds() const { return last_save_seconds_; }
  std::size_t last_save_bytes() const { return last_save_bytes_; }

 private:
  std::string rank_file(long long generation, int rank) const;
  void write_generation(long long generation, const CheckpointMeta& meta, const std::vector<Propagator*>& propagators);
  std::string directory_;
  const Comm& world_;
  std::string fingerprint_, rank_fingerprint_;
  long long generation_ = 0;
  double last_save_seconds_ = 0;
  std::size_t last_save_bytes_ = 0;
};

}  // namespace specwave
