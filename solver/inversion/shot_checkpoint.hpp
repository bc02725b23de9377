#pragma once
// The restart state of a pass over the shots (`gradient`, `migrate`, `born`; docs/cli.md, "Restart"): what this rank
// has computed of its shots so far (the sums of the gradient, the illumination and the misfits, or the Born traces),
// in <output.directory>/checkpoint/shots_rank<R>.h5, written atomically after a shot when run.checkpoint_minutes have
// passed since the last one, and when a stop signal comes (then the pass ends with exit 10). `--resume` reads it and
// skips the shots it holds, so the result is bitwise that of a pass that never stopped (the sums go on in the same
// order). The state is removed when the pass completes.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace specwave {

struct ShotState {
  std::vector<int> done;                              // the shots computed, in order
  std::map<std::string, std::vector<double>> arrays;  // by name: what they add up to, or their results
};

class ShotCheckpoint {
 public:
  // fingerprint: what a resumed pass must share with the one that wrote the state (the command, the case text, the
  // inputs' checksums); minutes: run.checkpoint_minutes (0: a state on a stop signal only).
  ShotCheckpoint(const std::string& output_directory, int rank, int ranks, std::string fingerprint, double minutes);
  const std::string& path() const { return path_; }
  // --resume: the state of an interrupted pass (none when there is no file: the pass starts). Error(invalid_case) when
  // it belongs to another pass or number of ranks; Error(input_error) when it is damaged.
  std::optional<ShotState> load() const;
  // After a shot, or before the first: writes the state when it is due or a stop signal came; throws
  // Error(interrupted) after writing it on a stop signal. The test aid SPECWAVE_STOP_AFTER_SHOTS=N raises SIGUSR1
  // once N shots are done in this process.
  template <class State>
  void after_shot(int shots_done, State&& state) {
    if (!due(shots_done)) return;
    save(state());
  }
  // The pass completed: the state is not needed any more.
  void remove() const;

 private:
  bool due(int shots_done);
  void save(const ShotState& state);

  std::string path_, fingerprint_;
  int ranks_ = 1;
  double minutes_ = 0, last_ = 0;
  long stop_after_ = 0;
};

}  // namespace specwave
