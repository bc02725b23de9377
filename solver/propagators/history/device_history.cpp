#include "solver/propagators/history/device_history.hpp"
#include "solver/propagators/history/segment_schedule.hpp"

#include <fmt/format.h>
#include <algorithm>
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
    if (tier_ == HistoryTier::device)
      device_ = cuda::DeviceArray<T>(n);
    else
      pinned_ = cuda::PinnedArray<T>(n);
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

// Segment checkpoints (segment_schedule.hpp) in device or pinned host memory, as SegmentCheckpoints on the CPU.
template <class T>
class SegmentCheckpoints final : public DeviceWavefieldHistory<T> {
 public:
  SegmentCheckpoints(int segment, HistoryTier tier) : schedule_(segment), tier_(tier), states_(tier), cache_(tier) {}
  std::string name() const override {
    return fmt::format("checkpoints every {} steps in {}", schedule_.segment(), to_string(tier_));
  }
  void run_forward(DeviceForwardStepper<T>& s, int nt) override {
    state_size_ = s.state_values();
    field_size_ = s.field_values();
    states_.ensure(state_size_ * std::size_t(schedule_.checkpoints(nt)));
    cache_.ensure(field_size_ * std::size_t(schedule_.cache_fields()));
    schedule_.run_forward(
        nt, [&](int k) { s.save_state(state(k)); }, [&](int n) { s.step(n); });
  }
  void field(DeviceForwardStepper<T>& s, int n, T* out) override {
    schedule_.recompute(
        n, [&](int k) { s.restore_state(state(k)); }, [&](int m) { s.step(m); },
        [&](int slot) { s.copy_field(cached(slot)); });
    cuda::copy_async(out, cached(schedule_.cache_slot(n)), field_size_ * sizeof(T), s.stream());
  }
  std::size_t bytes() const override { return states_.bytes() + cache_.bytes(); }

 private:
  T* state(int k) const { return states_.data() + std::size_t(k) * state_size_; }
  T* cached(int slot) const { return cache_.data() + std::size_t(slot) * field_size_; }
  SegmentSchedule schedule_;
  HistoryTier tier_;
  std::size_t state_size_ = 0, field_size_ = 0;
  TierArray<T> states_, cache_;
};

}  // namespace

template <class T>
std::unique_ptr<DeviceWavefieldHistory<T>> make_device_history(const HistoryChoice& choice) {
  if (choice.storage == WavefieldStorage::checkpoints)
    return std::make_unique<SegmentCheckpoints<T>>(choice.segment, choice.tier);
  return std::make_unique<AllSteps<T>>(choice.tier);
}

template std::unique_ptr<DeviceWavefieldHistory<float>> make_device_history<float>(const HistoryChoice&);
template std::unique_ptr<DeviceWavefieldHistory<double>> make_device_history<double>(const HistoryChoice&);

}  // namespace specwave
