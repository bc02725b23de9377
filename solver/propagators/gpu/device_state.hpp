#pragma once
// A device array as a state array of a Propagator (solver/forward/checkpoint.hpp): staged through host memory, after
// the work queued in `stream`.
#include <string>
#include <vector>

#include "kernels/cuda/device_buffer.hpp"
#include "solver/propagators/propagator.hpp"

namespace specwave {

template <class E>
void visit_device(StateVisitor& v, const std::string& name, const cuda::DeviceArray<E>& a, cudaStream_t stream) {
  std::vector<E> host(a.size());
  if (!v.loading()) cuda::copy_to_host(host.data(), a.data(), a.bytes(), stream);
  v.visit_array(name, host);
  if (v.loading()) cuda::copy_to_device(a.data(), host.data(), a.bytes(), stream);
}

}  // namespace specwave
