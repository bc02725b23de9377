#pragma once
// The inversion's gradient preconditioner P = S (W D) S (solver/inversion/preconditioner.hpp) on vectors in device
// memory, for `specwave invert` when the optimiser's vectors are cuBLAS ones (docs/gpu.md): S by cuFFT on the host
// smoother's padded grid with its filter values (kernels/cuda/smoothing_cuda.hpp), W D by a pointwise kernel on a
// device copy of the host weights. Nothing crosses the bus per application except when the weights change (with
// illumination compensation, once a band). Plain C++ (no CUDA types here); a build without the CUDA backend has a stub
// that refuses (device_preconditioner_no_cuda.cpp). Compared with GradientPreconditioner by tests/test_gpu.cpp, which
// has not run on a GPU yet (none available).
#include <memory>

namespace specwave {

class GradientPreconditioner;

class DevicePreconditioner {
 public:
  // `host` must outlive this object: its weights are read again whenever they change (set_illumination).
  // `stream`: a cudaStream_t (nullptr: the default stream), the stream of the VectorOps that owns the vectors, so
  // that P is ordered with the optimiser's other operations.
  explicit DevicePreconditioner(const GradientPreconditioner& host, void* stream = nullptr);
  ~DevicePreconditioner();
  DevicePreconditioner(const DevicePreconditioner&) = delete;
  DevicePreconditioner& operator=(const DevicePreconditioner&) = delete;

  // v = P v in place, v the grid's n points in device memory. Queued in the stream, asynchronous, except that the
  // weights are uploaded first (synchronously) when the host's weight_version() has changed since the last call;
  // with illumination compensation before set_illumination, throws std::logic_error as the host form does.
  void apply(double* v);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace specwave
