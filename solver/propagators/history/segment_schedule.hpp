#pragma once
// The segment-checkpoint strategy of the wavefield histories (host: wavefield_history.cpp, device:
// device_history.cpp): checkpoint k holds the forward state at step k * segment. The adjoint asks for u^n in
// decreasing n; the segment holding n is recomputed from its checkpoint into a cache of segment + 1 fields
// (first .. last), once per segment. Where the states and fields live is the caller's business.
#include <algorithm>
#include <stdexcept>

namespace specwave {

class SegmentSchedule {
 public:
  explicit SegmentSchedule(int segment) : segment_(segment) {
    if (segment < 1) throw std::invalid_argument("segment checkpoints: segment must be >= 1");
  }
  int segment() const { return segment_; }
  // Checkpoints a forward pass of nt steps keeps.
  int checkpoints(int nt) const { return (nt - 1) / segment_ + 1; }
  // Fields the recompute cache holds.
  int cache_fields() const { return segment_ + 1; }

  // The forward pass: save(k) before step n = k * segment, step(n) for n = 0 .. nt-1. Empties the cache.
  template <class Save, class Step>
  void run_forward(int nt, Save&& save, Step&& step) {
    nt_ = nt;
    for (int n = 0; n < nt; ++n) {
      if (n % segment_ == 0) save(n / segment_);
      step(n);
    }
    first_ = last_ = -1;
  }

  // Makes u^n the cache's field cache_slot(n): when n is outside the cached segment, restore(k) its checkpoint,
  // cache(slot 0), then step(m) and cache(slot m + 1 - first) for m = first .. last-1.
  template <class Restore, class Step, class Cache>
  void recompute(int n, Restore&& restore, Step&& step, Cache&& cache) {
    if (n >= first_ && n <= last_) return;
    const int k = std::min(n / segment_, (nt_ - 1) / segment_);
    first_ = k * segment_;
    last_ = std::min(first_ + segment_, nt_);
    restore(k);
    cache(0);
    for (int m = first_; m < last_; ++m) {
      step(m);
      cache(m + 1 - first_);
    }
  }
  int cache_slot(int n) const { return n - first_; }

 private:
  int segment_, nt_ = 0, first_ = -1, last_ = -1;
};

}  // namespace specwave
