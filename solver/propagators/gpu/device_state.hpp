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

// What a GPU propagator does first in visit_state (its receivers in a DeviceTraceRing, its snapshots through a
// DeviceFieldCopy): saving flushes every sample recorded so far into the ring's host matrices, which are saved with
// the state; loading drops the copies still queued (they belong to the state replaced), and the ring restarts at
// the next advance's first step.
template <class Ring, class FieldCopy>
void begin_state_visit(const StateVisitor& v, Ring& ring, FieldCopy& field_copy) {
  if (v.loading()) {
    ring.discard(-1);
    field_copy.discard();
  } else {
    ring.flush();
  }
}

}  // namespace specwave
