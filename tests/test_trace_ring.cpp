// Host-side logic of the CUDA FDTD propagator, tested without a GPU: the receiver ring's index arithmetic,
// bookkeeping and scatter (solver/propagators/gpu/trace_ring.hpp), and the grouping of source points by target
// (point_gather.hpp).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "solver/propagators/gpu/point_gather.hpp"
#include "solver/propagators/gpu/trace_ring.hpp"

using namespace specwave;

TEST_CASE("the trace ring: halves, columns and chunks") {
  const TraceRing ring = TraceRing::for_steps(1000, 256);
  CHECK(ring.columns == 256);
  CHECK(TraceRing::for_steps(100).columns == 100);
  CHECK(TraceRing::for_steps(0).columns == 1);
  CHECK(ring.half(0) == 0);
  CHECK(ring.half(255) == 0);
  CHECK(ring.half(256) == 1);
  CHECK(ring.half(512) == 0);
  CHECK(ring.column(513) == 1);
  CHECK(ring.chunk_begin(513) == 512);
  CHECK(ring.completes_half(255, 1000));
  CHECK_FALSE(ring.completes_half(256, 1000));
  CHECK(ring.completes_half(999, 1000));  // the last, partial half
  CHECK(ring.half_size(3) == 768);
}

TEST_CASE("scatter_ring_half copies samples [lo, hi) of every row into the trace matrix") {
  const TraceRing ring{4};
  const int nt = 10;
  const std::size_t rows = 2;
  std::vector<double> half(ring.half_size(rows));
  for (std::size_t r = 0; r < rows; ++r)
    for (int c = 0; c < 4; ++c) half[r * 4 + std::size_t(c)] = double(100 * r + 8 + c);  // samples 8.. of chunk 2
  std::vector<double> traces(rows * nt, -1.0);
  scatter_ring_half(ring, half, rows, 8, 10, traces, nt);
  CHECK(traces[8] == 8);
  CHECK(traces[9] == 9);
  CHECK(traces[nt + 8] == 108);
  CHECK(traces[nt + 9] == 109);
  CHECK(traces[7] == -1);
  CHECK_THROWS_AS(scatter_ring_half(ring, half, rows, 7, 9, traces, nt), std::logic_error);  // two chunks
}

namespace {

// The propagator's use of the book, with host arrays for the device ring and the pinned halves, each copy done as
// soon as it is queued: sample n of row r is value(r, n).
struct RingModel {
  TraceRing ring;
  int nt;
  std::size_t rows;
  TraceRingBook book;
  std::vector<double> device, pinned, traces;
  int waits = 0;
  RingModel(int nt_, int columns, std::size_t rows_)
      : ring(TraceRing::for_steps(nt_, columns)),
        nt(nt_),
        rows(rows_),
        book(ring, nt_),
        device(2 * ring.half_size(rows_)),
        pinned(device.size()),
        traces(rows_ * std::size_t(nt_), 0.0) {}
  static double value(std::size_t r, int n) { return double(r) * 1e4 + n + 1; }
  void retire(int b) {
    if (!book.pending(b)) return;
    const RingCopy c = book.retire(b);
    const std::size_t h = ring.half_size(rows);
    scatter_ring_half(ring, std::span<const double>(pinned.data() + std::size_t(b) * h, h), rows, c.lo, c.hi, traces,
                      nt);
  }
  void queue(const RingCopy& c) {
    retire(c.half);
    const std::size_t h = ring.half_size(rows);
    std::copy_n(device.begin() + std::ptrdiff_t(std::size_t(c.half) * h), h,
                pinned.begin() + std::ptrdiff_t(std::size_t(c.half) * h));
    book.queued(c);
  }
  void advance(int n_begin, int n_end) {
    for (int n = n_begin; n < n_end; ++n) {
      if (book.begin_sample(n)) ++waits;
      for (std::size_t r = 0; r < rows; ++r)
        device[std::size_t(ring.half(n)) * ring.half_size(rows) + r * std::size_t(ring.columns) +
               std::size_t(ring.column(n))] = value(r, n);
      if (const auto c = book.end_sample(n)) queue(*c);
    }
  }
  void flush() {
    if (const auto c = book.flush()) queue(*c);
    retire(0);
    retire(1);
  }
  bool complete_up_to(int n) const {
    for (std::size_t r = 0; r < rows; ++r)
      for (int k = 0; k < nt; ++k)
        if (traces[r * std::size_t(nt) + std::size_t(k)] != (k < n ? value(r, k) : 0.0)) return false;
    return true;
  }
};

}  // namespace

TEST_CASE("the trace ring brings every sample to the host, in chunks of any size and at any flush") {
  for (int nt : {1, 7, 16, 33, 100})
    for (int columns : {1, 4, 16, 256}) {
      CAPTURE(nt);
      CAPTURE(columns);
      RingModel m(nt, columns, 3);
      for (int n = 0; n < nt; n += 5) {
        m.advance(n, std::min(nt, n + 5));
        m.flush();  // traces() or a checkpoint in the middle of a half
        CHECK(m.complete_up_to(std::min(nt, n + 5)));
      }
      RingModel once(nt, columns, 3);
      once.advance(0, nt);
      once.flush();
      CHECK(once.complete_up_to(nt));
      // The compute stream waits before writing a half again while its last copy is not retired.
      if (nt >= 3 * m.ring.columns) CHECK(once.waits > 0);
    }
}

TEST_CASE("a state loaded in the middle of a half continues the traces; the ring's stale samples are not copied") {
  const int nt = 50, columns = 8, stop = 19;  // 19: inside the third half
  RingModel first(nt, columns, 2);
  first.advance(0, stop);
  first.flush();
  const std::vector<double> saved = first.traces;

  RingModel resumed(nt, columns, 2);
  std::fill(resumed.device.begin(), resumed.device.end(), std::numeric_limits<double>::quiet_NaN());
  resumed.traces = saved;  // the loaded host matrix
  resumed.book.reset(-1);  // visit_state(loading)
  resumed.advance(stop, nt);
  resumed.flush();
  CHECK(resumed.complete_up_to(nt));
}

TEST_CASE("gather_by_target groups contributions by target, each group in the order of the points") {
  const std::vector<index_t> index{7, 3, 7, 5, 3, 7};
  const std::vector<double> factor{0.5, 1.5, 2.5, 3.5, 4.5, 5.5};
  const std::vector<std::int32_t> owner{0, 0, 1, 1, 2, 2};
  const HostGather<double> g = gather_by_target(index, factor, owner);
  CHECK(g.target == std::vector<index_t>{3, 5, 7});
  CHECK(g.offsets == std::vector<std::int32_t>{0, 2, 3, 6});
  CHECK(g.factor == std::vector<double>{1.5, 4.5, 3.5, 0.5, 2.5, 5.5});
  CHECK(g.owner == std::vector<std::int32_t>{0, 2, 1, 0, 1, 2});
  // Injection through the groups gives bitwise the CPU's sums (u[index[p]] += factor[p] * s, p in order).
  const std::vector<double> signal{0.1, 0.7, 1.3};
  std::vector<double> cpu(8, 1.0 / 3), gpu(8, 1.0 / 3);
  for (std::size_t p = 0; p < index.size(); ++p)
    cpu[std::size_t(index[p])] += factor[p] * signal[std::size_t(owner[p])];
  for (std::size_t t = 0; t < g.target.size(); ++t) {
    double v = gpu[std::size_t(g.target[t])];
    for (std::int32_t k = g.offsets[t]; k < g.offsets[t + 1]; ++k)
      v += g.factor[std::size_t(k)] * signal[std::size_t(g.owner[std::size_t(k)])];
    gpu[std::size_t(g.target[t])] = v;
  }
  CHECK(cpu == gpu);
  CHECK(gather_by_target<double>({}, {}, {}).target.empty());
}
