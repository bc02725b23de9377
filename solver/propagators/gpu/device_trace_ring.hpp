#pragma once
// The device side of the receivers' ring (docs/gpu.md, "Bus traffic"; the bookkeeping is
// solver/propagators/gpu/trace_ring.hpp): one or more groups of rows (the FDTD propagator: whole receivers and split
// receivers' slots), each [half][row][column] on the device and in pinned host memory, all sharing one TraceRingBook,
// one pair of "copied" events and the copies of a half. The propagator's kernels write sample n of group g at
// half_data(g, position.half)[row * columns() + position.column]; this class queues the copies on the output
// stream, waits where the compute stream or the host must, and scatters the copies into the host (rows, nt)
// matrices. Only built with CUDA (solver/propagators/gpu/device_trace_ring.cpp). Both streams must outlive the ring
// (declared before it).
#include <array>
#include <cstddef>
#include <span>
#include <vector>

#include "kernels/cuda/device_buffer.hpp"
#include "solver/propagators/gpu/trace_ring.hpp"

namespace specwave {

class DeviceTraceRing {
 public:
  // Where sample n goes: the half holding it and its column there.
  struct Position {
    int half = 0, column = 0;
  };

  // One group per entry of `rows`; `compute` records, `output` copies (both outlive the ring).
  DeviceTraceRing(const cuda::Stream& compute, const cuda::Stream& output, int nt,
                  const std::vector<std::size_t>& rows);
  // Waits for the copies still queued on the output stream: they write into the pinned memory freed here.
  ~DeviceTraceRing();
  DeviceTraceRing(const DeviceTraceRing&) = delete;
  DeviceTraceRing& operator=(const DeviceTraceRing&) = delete;

  int columns() const { return ring_.columns; }
  // The device array of group g's half h, (rows, columns) C order.
  double* half_data(std::size_t group, int half) const {
    return device_[group].data() + std::size_t(half) * ring_.half_size(rows_[group]);
  }

  // Before recording sample n: the compute stream first waits for the last copy of its half to have read it,
  // when that copy may still be running.
  Position begin_sample(int n);
  // After recording sample n of every group: once its half is complete the half's copy is queued (after the work
  // queued so far on the compute stream), and the other half's copy is scattered if it is done (no host wait).
  void end_sample(int n);
  // Every sample recorded so far into the host matrices: the part of the current half not yet queued (copied
  // now), then both halves' copies, waited for.
  void flush();
  // Drops the copies still queued (a new shot: next = 0; a loaded state: -1, the ring then restarts at the next
  // advance's first step, in the middle of a half if need be): waits for the output stream, scatters nothing.
  void discard(int next);
  // Group g's (rows, nt) trace matrix on the host: complete up to the last flush.
  std::vector<double>& host(std::size_t group) { return host_[group]; }
  void zero_host();

  std::size_t device_bytes() const;

 private:
  void queue_half_copy(const RingCopy& copy);
  void retire_half(int half);

  const cuda::Stream& compute_;
  const cuda::Stream& output_;
  TraceRing ring_;
  TraceRingBook book_;
  int nt_ = 0;
  std::vector<std::size_t> rows_;
  std::vector<cuda::DeviceArray<double>> device_;  // per group: both halves, [half][row][column]
  std::vector<cuda::PinnedArray<double>> pinned_;  // the same layout
  std::vector<std::vector<double>> host_;          // per group: (rows, nt)
  cuda::Event recorded_;                           // the compute stream's work before a half's copy
  std::array<cuda::Event, 2> copied_;              // per half: its copy to pinned memory is done
};

}  // namespace specwave
