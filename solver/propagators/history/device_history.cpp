#include "solver/propagators/history/device_history.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <stdexcept>

namespace specwave {
namespace {

// An array in the memory of a tier: device memory, or pinned host memory. Allocated once, at the first forward
// pass of a propagator (its size is fixed by the plan), never inside a time loop.
template <class T>
class TierArray {
 public:
  explicit TierArray(HistoryTier tier) : tier_(tier) {}
  void ensure(std::size_t n) {
    if (n == size_) return;
    device_ = cuda::DeviceArray<T>();
    pinned_ = cuda::PinnedArray<T>();
    if (tier_ == HistoryTier::device) device_ = cuda::DeviceArray<T>(n);
    else pinned_ = cuda::PinnedArray<T>(n);
    size_ = n;
  }
  T* data() const { return tier_ == HistoryTier::device ? device_.data() : pinned_.data(); }
  std::size_t bytes() const { return size_ * sizeof(T); }

 private:
  HistoryTier tier_;
  cuda::DeviceArray<T> device_;
  cuda::PinnedArray<T> pinned_;
  std::size_t size_ = 0;
};

template <class T>
class AllSteps final : public DeviceWavefieldHistory<T> {
 public:
  explicit AllSteps(HistoryTier tier) : tier_(tier), fields_(tier) {}
  std::string name() const override { return std::string("all steps in ") + to_string(tier_); }
  void run_forward(DeviceForwardStepper<T>& s, int nt) override {
    field_size_ = s.field_values();
    fields_.ensure(field_size_ * (std::size_t(nt) + 1));
    s.copy_field(slot(0));
    for (int n = 0; n < nt; ++n) {
      s.step(n);
      s.copy_field(slot(n + 1));
    }
  }
  void field(DeviceForwardStepper<T>& s, int n, T* out) override {
    cuda::copy_async(out, slot(n), field_size_ * sizeof(T), s.stream());
  }
  std::size_t bytes() const override { return fields_.bytes(); }

 private:
  T* slot(int n) const { return fields_.data() + std::size_t(n) * field_size_; }
  HistoryTier tier_;
  TierArray<T> fields_;
  std::size_t field_size_ = 0;
};

// Checkpoint k holds the state at step k * segment; the segment holding a requested n is recomputed from its
// checkpoint into `cache_` (fields first .. last), once per segment (as SegmentCheckpoints on the CPU).
template <class T>
class SegmentCheckpoints final : public DeviceWavefieldHistory<T> {
 public:
  SegmentCheckpoints(int segment, HistoryTier tier) : segment_(segment), tier_(tier), states_(tier), cache_(tier) {
    if (segment < 1) throw std::invalid_argument("segment checkpoints: segment must be >= 1");
  }
  std::string name() const override { return fmt::format("checkpoints every {} steps in {}", segment_, to_string(tier_)); }
  void run_forward(DeviceForwardStepper<T>& s, int nt) override {
    nt_ = nt;
    state_size_ = s.state_values();
    field_size_ = s.field_values();
    const int count = (nt - 1) / segment_ + 1;
    states_.ensure(state_size_ * std::size_t(count));
    cache_.ensure(field_size_ * (std::size_t(segment_) + 1));
    for (int n = 0; n < nt; ++n) {
      if (n % segment_ == 0) s.save_state(state(n / segment_));
      s.step(n);
    }
    first_ = last_ = -1;
  }
  void field(DeviceForwardStepper<T>& s, int n, T* out) override {
    if (n < first_ || n > last_) {
      const int k = std::min(n / segment_, (nt_ - 1) / segment_);
      first_ = k * segment_;
      last_ = std::min(first_ + segment_, nt_);
      s.restore_state(state(k));
      s.copy_field(cached(first_));
      for (int m = first_; m < last_; ++m) {
        s.step(m);
        s.copy_field(cached(m + 1));
      }
    }
    cuda::copy_async(out, cached(n), field_size_ * sizeof(T), s.stream());
  }
  std::size_t bytes() const override { return states_.bytes() + cache_.bytes(); }

 private:
  T* state(int k) const { return states_.data() + std::size_t(k) * state_size_; }
  T* cached(int n) const { return cache_.data() + std::size_t(n - first_) * field_size_; }
  int segment_;
  HistoryTier tier_;
  int nt_ = 0, first_ = -1, last_ = -1;
  std::size_t state_size_ = 0, field_size_ = 0;
  TierArray<T> states_, cache_;
};

}  // namespace

template <class T>
std::unique_ptr<DeviceWavefieldHistory<T>> make_device_history(const HistoryChoice& choice) {
  if (choice.storage == WavefieldStorage::checkpoints) return std::make_unique<SegmentCheckpoints<T>>(choice.segment, choice.tier);
  return std::make_unique<AllSteps<T>>(choice.tier);
}

template std::unique_ptr<DeviceWavefieldHistory<float>> make_device_history<float>(const HistoryChoice&);
template std::unique_ptr<DeviceWavefieldHistory<double>> make_device_history<double>(const HistoryChoice&);

}  // namespace specwave
