#pragma once
// cuda::field_stats with its reduction buffers, as a FieldStats: the blow-up checks of the CUDA propagators
// (field_stats()) and of the CUDA gradient propagators' forward passes (forward_step, solver/forward/progress.hpp).
// Only in builds with the CUDA backend; construct it after the device is selected.
#include <cmath>
#include <cstdint>

#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/fdtd_cuda.hpp"
#include "solver/propagators/propagator.hpp"

namespace specwave {

class DeviceFieldStatsBuffers {
 public:
  DeviceFieldStatsBuffers() : max_(cuda::stats_blocks()), index_(cuda::stats_blocks()) {}
  // max |u| over the interior of the padded device field u and its flat index (waits for `stream`).
  template <class T>
  FieldStats operator()(const FieldLayout& layout, const T* u, cudaStream_t stream) {
    const auto s = cuda::field_stats(layout, u, max_.data(), index_.data(), stream);
    return {s.finite ? s.max_abs : INFINITY, s.argmax, s.finite};
  }
  std::size_t bytes() const { return max_.bytes() + index_.bytes(); }

 private:
  cuda::DeviceArray<double> max_;
  cuda::DeviceArray<std::int64_t> index_;
};

}  // namespace specwave
