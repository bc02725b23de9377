#pragma once
// The device copy of a HostGather (solver/propagators/gpu/point_gather.hpp) for add_point_signals
// (kernels/cuda/fdtd_adjoint_cuda.hpp). CUDA builds only.
#include <stdexcept>

#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/fdtd_adjoint_cuda.hpp"
#include "solver/propagators/gpu/point_gather.hpp"

namespace specwave {

// Room for `capacity` contributions (targets <= contributions), allocated once; assign() never allocates.
template <class T>
struct DeviceGather {
  cuda::DeviceArray<index_t> target;
  cuda::DeviceArray<std::int32_t> offsets, owner;
  cuda::DeviceArray<T> factor;
  int n_targets = 0;
  explicit DeviceGather(std::size_t capacity = 0)
      : target(capacity), offsets(capacity + 1), owner(capacity), factor(capacity) {}
  // Synchronous copies ordered in `stream` (the host data may be released on return).
  void assign(const HostGather<T>& g, cudaStream_t stream) {
    if (g.factor.size() > factor.size()) throw std::logic_error("DeviceGather: capacity exceeded");
    cuda::copy_to_device(target.data(), g.target.data(), g.target.size() * sizeof(index_t), stream);
    cuda::copy_to_device(offsets.data(), g.offsets.data(), g.offsets.size() * sizeof(std::int32_t), stream);
    cuda::copy_to_device(owner.data(), g.owner.data(), g.owner.size() * sizeof(std::int32_t), stream);
    cuda::copy_to_device(factor.data(), g.factor.data(), g.factor.size() * sizeof(T), stream);
    n_targets = int(g.target.size());
  }
  cuda::PointGather<T> view() const { return {target.data(), offsets.data(), factor.data(), owner.data(), n_targets}; }
  std::size_t bytes() const { return target.bytes() + offsets.bytes() + owner.bytes() + factor.bytes(); }
};

}  // namespace specwave
