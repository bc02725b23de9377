#pragma once
// What every GPU propagator's constructor does first: select its device (before any allocation), and copy host arrays
// up once. CUDA builds only.
#include <vector>

#include "kernels/cuda/device.hpp"
#include "kernels/cuda/device_buffer.hpp"

namespace specwave {

// Selects `device` and returns it (for a member initialiser that must run before the buffers').
inline int select_gpu(int device) {
  cuda::select_device(device);
  return device;
}

// A device copy of `host`, made on the default stream (before any stream work of the propagator).
template <class T>
cuda::DeviceArray<T> upload(const std::vector<T>& host) {
  cuda::DeviceArray<T> d(host.size());
  if (!host.empty()) cuda::copy_to_device(d.data(), host.data(), host.size() * sizeof(T));
  return d;
}

}  // namespace specwave
