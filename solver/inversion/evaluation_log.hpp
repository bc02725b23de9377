#pragma once
// Resuming an inversion from inside an iteration (docs/hdf5-schema.md, "evaluations.h5"). inversion_state.h5 holds
// the state of the last completed iteration; every objective evaluation after it (the line search's trials, a new
// band's first evaluation) is appended to evaluations.h5, keyed by that state. A resumed run repeats the
// interrupted iteration from the state, and its evaluations are deterministic: while they ask for bitwise the
// models logged, in the same order, the logged misfit and gradient are replayed instead of recomputed. The first
// model that differs (it cannot, unless the case changed) ends the replay and everything is computed again.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "solver/optim/optimizer.hpp"

namespace specwave {

// FNV-1a over the bytes of x: which model an evaluation was for.
std::uint64_t model_hash(const optim::Vector& x);

// An evaluation as logged: the misfit and its gradient, and the misfit of every shot (their sum is at.value).
struct LoggedEvaluation {
  optim::Evaluation at;
  std::vector<double> misfit_per_shot;
};

class EvaluationLog {
 public:
  // `writer`: this process writes the file (rank 0); every rank reads it on resume.
  EvaluationLog(std::string path, bool writer) : path_(std::move(path)), writer_(writer) {}
  // The state identified by `state_key` (rows of the iteration history) was saved: the log restarts empty.
  void reset(std::size_t state_key);
  // On resume from the state `state_key`: the evaluations logged after it (none when the file is missing or was
  // written after another state). n: the number of model parameters.
  void load(std::size_t state_key, std::size_t n);
  // The next evaluation, when it was logged for bitwise this x; nullopt otherwise (and from then on).
  std::optional<LoggedEvaluation> replay(const optim::Vector& x);
  // Logs a computed evaluation; the file is rewritten atomically (writer only).
  void append(const optim::Vector& x, const LoggedEvaluation& e);
  int replayed() const { return replayed_; }
  std::size_t loaded() const { return replaying_ ? entries_.size() : 0; }
  std::size_t size() const { return entries_.size(); }  // logged after the state
  const std::string& path() const { return path_; }

 private:
  struct Entry {
    std::uint64_t hash = 0;
    LoggedEvaluation logged;
  };
  void write() const;
  std::string path_;
  bool writer_;
  std::size_t state_key_ = 0;
  std::vector<Entry> entries_;
  std::size_t next_ = 0;  // the next entry to replay
  bool replaying_ = false;
  int replayed_ = 0;
};

}  // namespace specwave
