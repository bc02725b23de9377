#pragma once
// How the adjoint pass gets the forward wavefields u^n, which it needs in reverse order (docs/numerics.md,
// "Adjoint and gradient"). A strategy runs the forward pass itself through a ForwardStepper, keeping what it
// chooses to keep, and later hands out u^nt, u^{nt-1}, ..., u^0, recomputing what it did not keep. Every
// strategy returns bitwise the same fields (the replayed steps are the same deterministic operations), so
// the gradient does not depend on the strategy.
#include <cstddef>
#include <memory>
#include <span>
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
};

// Every u^n in memory: nt + 1 fields.
template <class T>
std::unique_ptr<WavefieldHistory<T>> make_all_steps_history();
// Checkpoints every `segment` steps (the whole state), and during the adjoint pass one segment of fields
// recomputed from its checkpoint: about nt / segment states + segment + 1 fields, one extra forward pass.
template <class T>
std::unique_ptr<WavefieldHistory<T>> make_segment_checkpoint_history(int segment);

// Where the CUDA backend keeps the history: in device memory, or in page-locked (pinned) host memory, copied
// asynchronously, when the device's share cannot hold it. The CPU backends keep it in host memory and ignore this.
enum class HistoryTier { device, pinned_host };
const char* to_string(HistoryTier tier);

// The strategy for a memory budget (bytes): every step when it fits, else the segment length whose
// checkpoints and one segment of fields fit (Error(resources) when not even that fits).
struct HistoryChoice {
  WavefieldStorage storage = WavefieldStorage::memory;  // never auto_select
  int segment = 0;                                      // checkpoints only
  double bytes = 0;                                     // estimated
  HistoryTier tier = HistoryTier::device;               // CUDA backend only
};
HistoryChoice choose_history(WavefieldStorage requested, int nt, double field_bytes, double state_bytes, double budget_bytes);

// The CUDA backend's choice, first in device memory (device_budget), then in pinned host memory (host_budget):
// `auto` tries every step on the device, checkpoints on the device, every step in pinned memory, checkpoints in
// pinned memory, in this order (the first that fits); `memory` or `checkpoints` that strategy on the device, else
// in pinned memory. Error(resources) naming both budgets when nothing fits.
HistoryChoice choose_device_history(WavefieldStorage requested, int nt, double field_bytes, double state_bytes,
                                    double device_budget, double host_budget);

template <class T>
std::unique_ptr<WavefieldHistory<T>> make_history(const HistoryChoice& choice);

}  // namespace specwave
