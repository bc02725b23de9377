#pragma once
// The receiver samples of a GPU propagator on their way to the host (docs/gpu.md, "Bus traffic"): the device
// records each step into a ring of two halves of `columns` steps each; a full half is copied on a copy stream into
// pinned host memory of the same layout, and the host later scatters it into its (rows, nt) trace matrix. Plain
// C++: the index arithmetic and the scatter, unit-tested on the CPU.
#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <stdexcept>

namespace specwave {

// Sample n of row r lies in half half(n), at [r * columns + column(n)] of that half (a half is (rows, columns),
// C order). Chunk k = steps k * columns .. (k + 1) * columns - 1 goes to half k % 2.
struct TraceRing {
  static constexpr int default_columns = 256;
  int columns = 1;

  // `columns` steps a half, or nt when the run is shorter (at least 1).
  static TraceRing for_steps(int nt, int columns = default_columns) { return {std::max(1, std::min(columns, nt))}; }
  int half(int n) const { return (n / columns) % 2; }
  int column(int n) const { return n % columns; }
  int chunk_begin(int n) const { return n - n % columns; }
  // After recording sample n of an nt-step shot, the half holding it is complete: full, or the last.
  bool completes_half(int n, int nt) const { return column(n) == columns - 1 || n == nt - 1; }
  // Values of a half with `rows` rows.
  std::size_t half_size(std::size_t rows) const { return rows * std::size_t(columns); }
};

// Samples [lo, hi) of every row (all in one chunk) from `half`, (rows, columns), into traces (rows, nt).
inline void scatter_ring_half(const TraceRing& ring, std::span<const double> half, std::size_t rows, int lo, int hi,
                              std::span<double> traces, int nt) {
  if (hi <= lo) return;
  if (lo < 0 || hi > nt || ring.chunk_begin(lo) != ring.chunk_begin(hi - 1))
    throw std::logic_error("scatter_ring_half: the samples are not within one chunk of the run");
  if (half.size() < ring.half_size(rows) || traces.size() < rows * std::size_t(nt))
    throw std::logic_error("scatter_ring_half: an array is too small");
  const std::size_t c = std::size_t(ring.column(lo)), count = std::size_t(hi - lo);
  for (std::size_t r = 0; r < rows; ++r)
    std::copy_n(half.data() + r * std::size_t(ring.columns) + c, count,
                traces.data() + r * std::size_t(nt) + std::size_t(lo));
}

// A copy of one ring half to the host holding samples [lo, hi) of the shot.
struct RingCopy {
  int half = 0, lo = 0, hi = 0;
};

// The host's bookkeeping of the ring: when the compute stream must wait before writing a half again, which copy
// to queue when, and which samples a pending copy holds. No CUDA here; DeviceTraceRing
// (solver/propagators/gpu/device_trace_ring.hpp) carries out the actions.
class TraceRingBook {
 public:
  TraceRingBook() = default;
  TraceRingBook(TraceRing ring, int nt) : ring_(ring), nt_(nt) {}
  const TraceRing& ring() const { return ring_; }

  // No copy pending (the caller has waited for the queued ones) and the next sample is `next`: 0 for a new shot,
  // -1 after a state load (the ring then starts at whatever sample the next advance records first).
  void reset(int next) {
    half_ = {};
    next_ = lo_ = next;
  }
  // Before recording sample n: true when the compute stream must first wait for the last copy of half(n) (queued,
  // not yet known to be done). A sample that does not continue the last one starts the ring's samples there.
  bool begin_sample(int n) {
    if (n != next_) lo_ = n;
    Half& h = half_[std::size_t(ring_.half(n))];
    const bool wait = h.device_busy;
    h.device_busy = false;
    return wait;
  }
  // After recording sample n: the copy to queue when n completes its half.
  std::optional<RingCopy> end_sample(int n) {
    next_ = n + 1;
    if (!ring_.completes_half(n, nt_)) return std::nullopt;
    return copy_to(n);
  }
  // The copy that brings the recorded samples of the current, incomplete half to the host (none when every
  // recorded sample is in a queued copy already).
  std::optional<RingCopy> flush() const {
    const int last = next_ - 1;
    if (last < 0 || last < lo_ || ring_.completes_half(last, nt_)) return std::nullopt;
    return copy_to(last);
  }
  // The caller queued `c`; the half's previous copy must have been retired.
  void queued(const RingCopy& c) {
    Half& h = half_[std::size_t(c.half)];
    if (h.pending) throw std::logic_error("TraceRingBook: a half copied again before its last copy was retired");
    h = Half{c, true, true};
  }
  bool pending(int half) const { return half_[std::size_t(half)].pending; }
  // Half b's pending copy, now done: the samples it holds, for the caller to scatter.
  RingCopy retire(int half) {
    Half& h = half_[std::size_t(half)];
    if (!h.pending) throw std::logic_error("TraceRingBook: no copy of that half is pending");
    h.pending = h.device_busy = false;
    return h.copy;
  }

 private:
  RingCopy copy_to(int n) const { return {ring_.half(n), std::max(lo_, ring_.chunk_begin(n)), n + 1}; }
  struct Half {
    RingCopy copy;
    bool pending = false;      // queued, not yet retired (scattered)
    bool device_busy = false;  // queued, and the compute stream has not waited for it since
  };
  TraceRing ring_;
  int nt_ = 0;
  std::array<Half, 2> half_{};
  int next_ = 0;  // the sample the next advance records if it continues
  int lo_ = 0;    // the first sample of the shot in the ring
};

}  // namespace specwave
