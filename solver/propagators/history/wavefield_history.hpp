#pragma once
// How the adjoint pass gets the forward wavefields u^n, which it needs in reverse order (docs/numerics.md,
// "Adjoint and gradient"). A strategy runs the forward pass itself through a ForwardStepper, keeping what it
// chooses to keep, and later hands out u^nt, u^{nt-1}, ..., u^0, recomputing what it did not keep. The
// strategies that store or replay forward steps return bitwise the same fields (the replayed steps are the same
// deterministic operations), so the gradient does not depend on which of them runs; boundary saving
// (solver/propagators/history/boundary_history.hpp) runs the scheme backwards and returns the fields up to rounding.
#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "solver/case/case.hpp"

namespace specwave {

// The forward time stepping of one shot, as a history strategy drives it.
template <class T>
class ForwardStepper {
 public:
  virtual ~ForwardStepper() = default;
  // Values of the complete state (u^n, u^{n-1}, CPML memory): what a checkpoint holds.
  virtual std::size_t state_values() const = 0;
  virtual void save_state(std::span<T> out) const = 0;
  virtual void restore_state(std::span<const T> in) = 0;
  // Records u^n into trace sample n, then computes u^{n+1}.
  virtual void step(int n) = 0;
  // Values of one field u^n as the history stores it, and a copy of the current one.
  virtual std::size_t field_values() const = 0;
  virtual void copy_field(std::span<T> out) const = 0;
  // Whether the field lies beside the state rather than in it (the elastic gradient's field is the last step's
  // increments, which a step writes and the next step does not read): the state is then what stepping needs, a
  // checkpoint holds the state and the field beside it (state_values() + field_values()), and after restore_state the
  // field is the checkpoint's, not the stepper's (copy_field is valid again after a step).
  virtual bool field_beside_state() const { return false; }
  // copy_field(out), then step(n): the same values, in one sweep where the stepper can (the FDTD CPU step copies
  // each row of u^n as its stencil reads it).
  virtual void copy_field_and_step(int n, std::span<T> out) {
    copy_field(out);
    step(n);
  }

  // Running backwards (boundary saving, solver/propagators/history/boundary_history.hpp). Where the scheme is
  // time-reversible away from its absorbing layer, u^{n-1} follows from u^n and u^{n+1} except at the points whose
  // update has an absorbing term: those are saved during the forward pass. A stepper that cannot run backwards (the
  // spectral operator is global: every point's update involves the layer) keeps these defaults.
  virtual bool reversible() const { return false; }
  // Values of u^n at the points whose update has an absorbing term, and a copy of the current field's.
  virtual std::size_t boundary_values() const { return 0; }
  virtual void save_boundary(std::span<T>) const {
    throw std::logic_error("save_boundary: this stepper cannot run backwards");
  }
  // The state for running backwards: current field u^n = now, the field after it u^{n+1} = next (interior values).
  virtual void start_reverse(std::span<const T> /*now*/, std::span<const T> /*next*/) {
    throw std::logic_error("start_reverse: this stepper cannot run backwards");
  }
  // Undoes step(n): from u^n (current) and u^{n+1} to u^{n-1}, whose boundary values are `boundary_before`;
  // copy_field then gives u^{n-1}, and current_field() the same values in place. Records no trace.
  virtual void reverse_step(int /*n*/, std::span<const T> /*boundary_before*/) {
    throw std::logic_error("reverse_step: this stepper cannot run backwards");
  }
  // The current field in the stepper's own layout (FDTD: padded, FieldLayout), valid until the stepper steps again.
  virtual const T* current_field() const { throw std::logic_error("current_field: this stepper cannot run backwards"); }
};

template <class T>
class WavefieldHistory {
 public:
  virtual ~WavefieldHistory() = default;
  virtual std::string name() const = 0;
  // The forward pass from the stepper's state at n = 0 (at rest): steps n = 0 .. nt-1.
  virtual void run_forward(ForwardStepper<T>& stepper, int nt) = 0;
  // u^n into out, for n = nt, nt-1, ..., 0 in this order (each once) after run_forward. May step the stepper.
  virtual void field(ForwardStepper<T>& stepper, int n, std::span<T> out) = 0;
  // u^n without a copy, when the history holds every field in memory until the next run_forward (every step in
  // memory); empty otherwise: ask field(). Either way the same values.
  virtual std::span<const T> held(int /*n*/) const { return {}; }
  // Instead of field(stepper, n, out), where the history rebuilds u^n in the stepper's state (boundary saving): the
  // same values in place, stepper.current_field(), in the stepper's own layout; null: ask field(). Same order rule.
  virtual const T* rebuilt(ForwardStepper<T>& /*stepper*/, int /*n*/) { return nullptr; }
  // u^n as field() gives it (the same order rule), without a copy where the history holds it (held(), or binomial
  // checkpointing's snapshot of a field beside the state): valid until the next call only; else copied into `scratch`.
  virtual const T* view(ForwardStepper<T>& stepper, int n, std::span<T> scratch) {
    if (const std::span<const T> h = held(n); !h.empty()) return h.data();
    field(stepper, n, scratch);
    return scratch.data();
  }
  // Bytes held in memory.
  virtual std::size_t bytes() const = 0;
  // Forward steps taken since the last run_forward began, the forward pass included: nt after run_forward,
  // nt x the recompute factor once every field has been handed out.
  long long forward_steps() const { return forward_steps_; }

 protected:
  void begin_count() { forward_steps_ = 0; }
  void count_steps(long long steps) { forward_steps_ += steps; }
  void step(ForwardStepper<T>& s, int n) {
    s.step(n);
    ++forward_steps_;
  }
  void copy_and_step(ForwardStepper<T>& s, int n, std::span<T> out) {
    s.copy_field_and_step(n, out);
    ++forward_steps_;
  }

 private:
  long long forward_steps_ = 0;
};

// What an adjoint pass reads: u^n for n = nt, nt-1, ..., 0 in this order, in place when the history holds
// them (every step in memory: no copy), else through field() into three rotating buffers, so the pointers of the
// last three calls stay valid (u^{n+1}, u^n, u^{n-1}).
template <class T>
class ReverseFields {
 public:
  ReverseFields(WavefieldHistory<T>& history, ForwardStepper<T>& stepper, std::size_t values)
      : history_(history), stepper_(stepper), values_(values) {}
  const T* operator()(int n) {
    if (const std::span<const T> held = history_.held(n); !held.empty()) return held.data();
    std::vector<T>& buffer = buffers_[next_];
    next_ = (next_ + 1) % 3;
    buffer.resize(values_);
    history_.field(stepper_, n, buffer);
    return buffer.data();
  }
  // u^n as operator() gives it, or without a copy in the stepper's own layout (`in_stepper`) where the history
  // rebuilds it there (WavefieldHistory::rebuilt): valid until the next call only.
  struct Field {
    const T* data;
    bool in_stepper;
  };
  Field current(int n) {
    if (const T* p = history_.rebuilt(stepper_, n)) return {p, true};
    return {(*this)(n), false};
  }
  // u^n as operator() gives it, for a caller that uses one field at a time: valid until the next call only, and
  // without a copy where the history holds it (WavefieldHistory::view).
  const T* one(int n) {
    std::vector<T>& buffer = buffers_[0];
    buffer.resize(values_);
    return history_.view(stepper_, n, buffer);
  }

 private:
  WavefieldHistory<T>& history_;
  ForwardStepper<T>& stepper_;
  std::size_t values_;
  std::array<std::vector<T>, 3> buffers_;
  int next_ = 0;
};

// Every u^n in memory: nt + 1 fields.
template <class T>
std::unique_ptr<WavefieldHistory<T>> make_all_steps_history();
// Checkpoints every `segment` steps (the whole state), and during the adjoint pass one segment of fields
// recomputed from its checkpoint: about nt / segment states + segment + 1 fields, one extra forward pass.
template <class T>
std::unique_ptr<WavefieldHistory<T>> make_segment_checkpoint_history(int segment);
// Griewank's binomial checkpointing (revolve): `snapshots` states (the one at n = 0 among them) and one field,
// the fewest forward steps any schedule with that many states can take (binomial_forward_steps).
template <class T>
std::unique_ptr<WavefieldHistory<T>> make_binomial_history(int snapshots);
// Every u^n written to a scratch file in `directory` ("" : $TMPDIR) during the forward pass and read back in
// reverse; one field in memory. The file is named specwave-wavefields-<host>-<pid>-<counter>.bin and removed
// with the history. Error(resources) naming the folder and its free space when it cannot hold nt + 1 fields.
template <class T>
std::unique_ptr<WavefieldHistory<T>> make_disk_history(std::string directory);

// Where the CUDA backend keeps the history: in device memory, or in page-locked (pinned) host memory, copied
// asynchronously, when the device's share cannot hold it. The CPU backends keep it in host memory and ignore this.
enum class HistoryTier { device, pinned_host };
const char* to_string(HistoryTier tier);

// The fewest forward steps that hand out u^nt .. u^0 in reverse with `snapshots` >= 1 saved states, the state
// at n = 0 being one of them (Griewank 1992; docs/numerics.md): with l = nt + 1 and r the smallest integer with
// C(s + r, s) >= l, it is r l - C(s + r, r - 1). nt when snapshots >= nt, nt (nt + 1) / 2 with one snapshot.
long long binomial_forward_steps(int nt, int snapshots);
// Where the optimal schedule on u^0 .. u^l with s snapshots (u^0's among them, s >= 2) takes its next
// checkpoint: the m in [1, l] that minimises m + cost(l - m, s - 1) + cost(m - 1, s), cost = binomial_forward_steps.
int binomial_split(int l, int snapshots);

// A strategy with its size: what choose_history picks and make_history builds, and what the run reports.
struct HistoryChoice {
  WavefieldStorage storage = WavefieldStorage::memory;  // never auto_select
  int segment = 0;                                      // checkpoints: steps between checkpoints
  int snapshots = 0;                                    // checkpoints, binomial: saved states
  double memory_bytes = 0;                              // estimated
  double disk_bytes = 0;                                // disk: the scratch file
  double recompute_factor = 1;                          // forward steps per gradient / nt, the forward pass included
  int nt = 0;
  std::string scratch_directory;           // disk: where the scratch file goes ("" : $TMPDIR)
  HistoryTier tier = HistoryTier::device;  // CUDA backend only
};
// The one-line report of a choice, e.g. "binomial checkpointing: 12 snapshots, 1.4 GiB, recompute factor 2.31 (nt
// 800)".
std::string describe(const HistoryChoice& choice);

// Each strategy's choice and size for nt steps of fields and states of these sizes (bytes).
HistoryChoice all_steps_choice(int nt, double field_bytes);
HistoryChoice segment_checkpoint_choice(int nt, int segment, double field_bytes, double state_bytes);
HistoryChoice binomial_choice(int nt, int snapshots, double field_bytes, double state_bytes);
HistoryChoice disk_choice(int nt, double field_bytes, std::string scratch_directory);
// Boundary saving (solver/propagators/history/boundary_history.hpp) holding memory_bytes (boundary_history_bytes).
HistoryChoice boundary_choice(int nt, double memory_bytes);

// What choose_history weighs.
struct HistoryRequest {
  int nt = 0;
  double field_bytes = 0, state_bytes = 0;
  double budget_bytes = 0;             // memory for the history (inversion.wavefield_memory_gib)
  double boundary_bytes = 0;           // boundary saving's memory; 0: the method has none
  std::string scratch_directory;       // where a scratch file would go
  bool scratch_directory_set = false;  // inversion.scratch_directory is in the case: auto may use the disk
  double disk_free_bytes = -1;         // free space there; < 0: not known (not checked)
};
// The strategy of `requested` within the budget. auto: every step in memory when it fits; else boundary saving
// when the method has it and it fits; else binomial checkpointing with the snapshots that fit (at least 2); else
// the disk when inversion.scratch_directory is set. Error(resources) naming the budget and the fix otherwise.
HistoryChoice choose_history(WavefieldStorage requested, const HistoryRequest& request);

// The CUDA backend's choice, first in device memory (device_budget), then in pinned host memory (host_budget):
// `auto` tries every step on the device, checkpoints on the device, every step in pinned memory, checkpoints in
// pinned memory, in this order (the first that fits); `memory` or `checkpoints` that strategy on the device, else
// in pinned memory. Error(resources) naming both budgets when nothing fits.
HistoryChoice choose_device_history(WavefieldStorage requested, int nt, double field_bytes, double state_bytes,
                                    double device_budget, double host_budget);

template <class T>
std::unique_ptr<WavefieldHistory<T>> make_history(const HistoryChoice& choice);

// Free bytes of the file system holding `directory` (or its nearest existing parent).
double free_disk_bytes(const std::string& directory);

}  // namespace specwave
