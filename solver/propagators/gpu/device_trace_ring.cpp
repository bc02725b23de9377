#include "solver/propagators/gpu/device_trace_ring.hpp"

#include <algorithm>

namespace specwave {

DeviceTraceRing::DeviceTraceRing(const cuda::Stream& compute, const cuda::Stream& output, int nt,
                                 const std::vector<std::size_t>& rows)
    : compute_(compute), output_(output), ring_(TraceRing::for_steps(nt)), book_(ring_, nt), nt_(nt), rows_(rows) {
  for (const std::size_t r : rows_) {
    device_.emplace_back(2 * ring_.half_size(r));
    pinned_.emplace_back(2 * ring_.half_size(r));
    host_.emplace_back(r * std::size_t(nt_), 0.0);
  }
}

DeviceTraceRing::~DeviceTraceRing() {
  cudaStreamSynchronize(output_.handle());  // no throw from a destructor
}

DeviceTraceRing::Position DeviceTraceRing::begin_sample(int n) {
  const Position at{ring_.half(n), ring_.column(n)};
  if (book_.begin_sample(n)) copied_[std::size_t(at.half)].wait(compute_.handle());
  return at;
}

void DeviceTraceRing::end_sample(int n) {
  if (const auto copy = book_.end_sample(n)) {
    const int b = copy->half;
    queue_half_copy(*copy);
    // The other half's copy, queued a half earlier, is scattered now if it is done (the host does not wait).
    if (book_.pending(1 - b) && copied_[std::size_t(1 - b)].ready()) retire_half(1 - b);
  }
}

void DeviceTraceRing::flush() {
  if (const auto copy = book_.flush()) queue_half_copy(*copy);
  retire_half(0);
  retire_half(1);
  // The copies waited only for the sampling; callers (traces(), a checkpoint, the bench's timer) count on the
  // steps queued so far being done as well.
  compute_.synchronize();
}

void DeviceTraceRing::discard(int next) {
  output_.synchronize();
  book_.reset(next);
}

void DeviceTraceRing::zero_host() {
  for (auto& h : host_) std::fill(h.begin(), h.end(), 0.0);
}

std::size_t DeviceTraceRing::device_bytes() const {
  std::size_t bytes = 0;
  for (const auto& d : device_) bytes += d.bytes();
  return bytes;
}

// Half b of every group copied on the output stream into its pinned half, after the work queued so far on the
// compute stream; the pinned half's last copy is scattered first.
void DeviceTraceRing::queue_half_copy(const RingCopy& copy) {
  const int b = copy.half;
  retire_half(b);
  const cudaStream_t out = output_.handle();
  recorded_.record(compute_.handle());
  recorded_.wait(out);
  for (std::size_t g = 0; g < rows_.size(); ++g) {
    const std::size_t size = ring_.half_size(rows_[g]), offset = std::size_t(b) * size;
    cuda::copy_to_host_async(pinned_[g].data() + offset, device_[g].data() + offset, size * sizeof(double), out);
  }
  copied_[std::size_t(b)].record(out);
  book_.queued(copy);
}

// Waits for half b's copy, if one is pending, and scatters its samples into the host matrices.
void DeviceTraceRing::retire_half(int b) {
  if (!book_.pending(b)) return;
  copied_[std::size_t(b)].synchronize();
  const RingCopy copy = book_.retire(b);
  for (std::size_t g = 0; g < rows_.size(); ++g) {
    const std::size_t size = ring_.half_size(rows_[g]);
    scatter_ring_half(ring_, std::span<const double>(pinned_[g].data() + std::size_t(b) * size, size), rows_[g],
                      copy.lo, copy.hi, host_[g], nt_);
  }
}

}  // namespace specwave
