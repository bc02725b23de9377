#pragma once
// The forward wavefields of a CUDA gradient propagator, handed to its adjoint pass in reverse order
// (docs/numerics.md, "Adjoint and gradient"): the device counterpart of
// solver/propagators/history/wavefield_history.hpp, with the same two strategies and the same contract (u^nt, u^{nt-1},
// ..., u^0, each once, after run_forward; bitwise the same fields whatever the strategy, since a replayed step is the
// same deterministic kernels on the same data). The fields and states live in device memory or in pinned host memory
// (HistoryTier); every copy is queued in the stepper's stream, so the host never waits for them. Only in builds with
// the CUDA backend.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cuda/device_buffer.hpp"
#include "solver/propagators/history/wavefield_history.hpp"

namespace specwave {

// The forward time stepping of one shot on the device, as a history strategy drives it. Every pointer may be
// device or pinned host memory (copies use unified addressing).
template <class T>
class DeviceForwardStepper {
 public:
  virtual ~DeviceForwardStepper() = default;
  virtual cudaStream_t stream() const = 0;
  // The complete state (u^n, u^{n-1}, CPML memory): what a checkpoint holds.
  virtual std::size_t state_values() const = 0;
  virtual void save_state(T* out) = 0;
  virtual void restore_state(const T* in) = 0;
  // Records u^n into trace sample n, then computes u^{n+1}.
  virtual void step(int n) = 0;
  // One field u^n as the history stores it (the interior, dense (nz, ny, nx)), and a copy of the current one.
  virtual std::size_t field_values() const = 0;
  virtual void copy_field(T* out) = 0;
};

// A stepper whose state is a list of device arrays: save_state's and restore_state's copies, in order, into and out of
// one buffer (device or pinned host memory), queued in `stream`.
template <class T>
void save_arrays(const std::vector<cuda::DeviceArray<T>*>& arrays, T* out, cudaStream_t stream) {
  for (const cuda::DeviceArray<T>* a : arrays) {
    cuda::copy_async(out, a->data(), a->bytes(), stream);
    out += a->size();
  }
}
template <class T>
void restore_arrays(const std::vector<cuda::DeviceArray<T>*>& arrays, const T* in, cudaStream_t stream) {
  for (cuda::DeviceArray<T>* a : arrays) {
    cuda::copy_async(a->data(), in, a->bytes(), stream);
    in += a->size();
  }
}

template <class T>
class DeviceWavefieldHistory {
 public:
  virtual ~DeviceWavefieldHistory() = default;
  virtual std::string name() const = 0;
  // The forward pass from the stepper's state at n = 0 (at rest): steps n = 0 .. nt-1.
  virtual void run_forward(DeviceForwardStepper<T>& stepper, int nt) = 0;
  // u^n into `out` (device memory, field_values() values), for n = nt, nt-1, ..., 0 in this order after
  // run_forward. May step the stepper.
  virtual void field(DeviceForwardStepper<T>& stepper, int n, T* out) = 0;
  virtual std::size_t bytes() const = 0;
};

// The strategy of `choice` (every step, or checkpoints every choice.segment steps) in choice.tier's memory.
template <class T>
std::unique_ptr<DeviceWavefieldHistory<T>> make_device_history(const HistoryChoice& choice);

}  // namespace specwave
