#pragma once
// How the adjoint pass gets the forward wavefields u^n, which it needs in reverse order (docs/numerics.md,
// "Adjoint and gradient"). A strategy runs the forward pass itself through a ForwardStepper, keeping what it
// chooses to keep, and later hands out u^nt, u^{nt-1}, ..., u^0, recomputing what it did not keep. The
// strategies that store or replay forward steps return bitwise the same fields (the replayed steps are the same
// deterministic operations), so the gradient does not depend on which of them runs; boundary saving
// (solver/boundary_history.hpp) runs the scheme backwards and returns the fields up to rounding.
#include <cstddef>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "solver/case.hpp"

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

  // Running backwards (boundary saving, solver/boundary_history.hpp). Where the scheme is time-reversible away
  // from its absorbing layer, u^{n-1} follows from u^n and u^{n+1} except at the points whose update has an
  // absorbing term: those are saved during the forward pass. A stepper that cannot run backwards (the
  // spectral operator is global: every point's update involves the layer) keeps these defaults.
  virtual bool reversible() const { return false; }
  // Values of u^n at the points whose update has an absorbing term, and a copy of the current field's.
  virtual std::size_t boundary_values() const { return 0; }
  virtual void save_boundary(std::span<T>) const { throw std::logic_error("save_boundary: this stepper cannot run backwards"); }
  // The state for running backwards: current field u^n = now, the field after it u^{n+1} = next (interior values).
  virtual void start_reverse(std::span<const T> /*now*/, std::span<const T> /*next*/) {
    throw std::logic_error("start_reverse: this stepper cannot run backwards");
  }
  // Undoes step(n): from u^n (current) and u^{n+1} to u^{n-1}, whose boundary values are `boundary_before`;
  // copy_field then gives u^{n-1}. Records no trace.
  virtual void reverse_step(int /*n*/, std::span<const T> /*boundary_before*/) {
    throw std::logic_error("reverse_step: this stepper cannot run backwards");
  }
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
  // Bytes held.
  virtual std::size_t bytes() const = 0;
  // Time steps the forward pass and the adjoint pass's field retrieval take together, per forward step:
  // 1 when nothing is recomputed.
  virtual double recompute_factor() const { return 1.0; }
};

// Every u^n in memory: nt + 1 fields.
template <class T>
std::unique_ptr<WavefieldHistory<T>> make_all_steps_history();
// Checkpoints every `segment` steps (the whole state), and during the adjoint pass one segment of fields
// recomputed from its checkpoint: about nt / segment states + segment + 1 fields, one extra forward pass.
template <class T>
std::unique_ptr<WavefieldHistory<T>> make_segment_checkpoint_history(int segment);

// The strategy for a memory budget (bytes): every step when it fits, else boundary saving when the method can
// run backwards (boundary_bytes >= 0: the bytes of one step's saved boundary values; negative: it cannot) and it
// fits, else the segment length whose checkpoints and one segment of fields fit (Error(resources) when not even
// that fits). history_for refuses an explicit "boundary" for a method that cannot run backwards, naming it.
struct HistoryChoice {
  WavefieldStorage storage = WavefieldStorage::memory;  // never auto_select
  int segment = 0;                                      // checkpoints only
  double bytes = 0;                                     // estimated
};
HistoryChoice choose_history(WavefieldStorage requested, int nt, double field_bytes, double state_bytes, double budget_bytes,
                             double boundary_bytes = -1);

template <class T>
std::unique_ptr<WavefieldHistory<T>> make_history(const HistoryChoice& choice);

}  // namespace specwave
