#include "solver/wavefield_history.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

#include "solver/boundary_history.hpp"
#include "solver/errors.hpp"

namespace specwave {
namespace {

template <class T>
class AllSteps final : public WavefieldHistory<T> {
 public:
  std::string name() const override { return "all steps in memory"; }
  void run_forward(ForwardStepper<T>& s, int nt) override {
    const std::size_t f = s.field_values();
    fields_.resize(f * (std::size_t(nt) + 1));
    s.copy_field(slot(0, f));
    for (int n = 0; n < nt; ++n) {
      s.step(n);
      s.copy_field(slot(n + 1, f));
    }
    field_size_ = f;
  }
  void field(ForwardStepper<T>&, int n, std::span<T> out) override {
    const auto in = slot(n, field_size_);
    std::copy(in.begin(), in.end(), out.begin());
  }
  std::size_t bytes() const override { return fields_.size() * sizeof(T); }

 private:
  std::span<T> slot(int n, std::size_t f) { return std::span<T>(fields_).subspan(std::size_t(n) * f, f); }
  std::vector<T> fields_;
  std::size_t field_size_ = 0;
};

// Checkpoint k holds the state at step k * segment. The adjoint asks for u^n in decreasing n: the segment
// holding n is recomputed from its checkpoint into `cache_` (fields first .. last), once per segment.
template <class T>
class SegmentCheckpoints final : public WavefieldHistory<T> {
 public:
  explicit SegmentCheckpoints(int segment) : segment_(segment) {
    if (segment < 1) throw std::invalid_argument("segment checkpoints: segment must be >= 1");
  }
  std::string name() const override { return fmt::format("checkpoints every {} steps", segment_); }
  void run_forward(ForwardStepper<T>& s, int nt) override {
    nt_ = nt;
    state_size_ = s.state_values();
    field_size_ = s.field_values();
    const int count = (nt - 1) / segment_ + 1;
    states_.resize(state_size_ * std::size_t(count));
    for (int n = 0; n < nt; ++n) {
      if (n % segment_ == 0) s.save_state(state(n / segment_));
      s.step(n);
    }
    cache_.resize(field_size_ * (std::size_t(segment_) + 1));
    first_ = last_ = -1;
  }
  void field(ForwardStepper<T>& s, int n, std::span<T> out) override {
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
    const auto in = cached(n);
    std::copy(in.begin(), in.end(), out.begin());
  }
  std::size_t bytes() const override { return (states_.size() + cache_.size()) * sizeof(T); }
  double recompute_factor() const override { return 2.0; }  // every segment replayed once

 private:
  std::span<T> state(int k) { return std::span<T>(states_).subspan(std::size_t(k) * state_size_, state_size_); }
  std::span<T> cached(int n) {
    return std::span<T>(cache_).subspan(std::size_t(n - first_) * field_size_, field_size_);
  }
  int segment_, nt_ = 0, first_ = -1, last_ = -1;
  std::size_t state_size_ = 0, field_size_ = 0;
  std::vector<T> states_, cache_;
};

std::string gib(double bytes) { return fmt::format("{:.3g} GiB", bytes / double(1ull << 30)); }

}  // namespace

template <class T>
std::unique_ptr<WavefieldHistory<T>> make_all_steps_history() {
  return std::make_unique<AllSteps<T>>();
}

template <class T>
std::unique_ptr<WavefieldHistory<T>> make_segment_checkpoint_history(int segment) {
  return std::make_unique<SegmentCheckpoints<T>>(segment);
}

HistoryChoice choose_history(WavefieldStorage requested, int nt, double field_bytes, double state_bytes, double budget,
                             double boundary_bytes) {
  const double all = (nt + 1.0) * field_bytes;
  const double boundary = boundary_history_bytes(nt, field_bytes, boundary_bytes);
  // Checkpoints + one segment of fields: (nt / s) state + (s + 1) field, smallest near s = sqrt(nt state / field).
  const auto checkpoint_bytes = [&](int s) { return std::ceil(double(nt) / s) * state_bytes + (s + 1.0) * field_bytes; };
  const int best = std::clamp(int(std::lround(std::sqrt(nt * state_bytes / field_bytes))), 1, nt);
  if (requested == WavefieldStorage::memory || (requested == WavefieldStorage::auto_select && all <= budget)) {
    if (all > budget)
      throw Error(ExitCode::resources,
                  fmt::format("inversion.wavefield_storage = \"memory\" needs {} for the {} forward wavefields, above the "
                              "budget of {}; use wavefield_storage = \"checkpoints\" or \"auto\", or raise "
                              "inversion.wavefield_memory_gib",
                              gib(all), nt + 1, gib(budget)));
    return {WavefieldStorage::memory, 0, all};
  }
  if (requested == WavefieldStorage::boundary) {
    if (boundary_bytes < 0) throw std::logic_error("choose_history: boundary saving requested for a method that cannot run backwards");
    if (boundary > budget)
      throw Error(ExitCode::resources,
                  fmt::format("inversion.wavefield_storage = \"boundary\" needs {} for the absorbing layer's values of {} "
                              "steps and two fields, above the budget of {}; use wavefield_storage = \"checkpoints\" or "
                              "\"auto\", or raise inversion.wavefield_memory_gib",
                              gib(boundary), nt - 1, gib(budget)));
    return {WavefieldStorage::boundary, 0, boundary};
  }
  if (requested == WavefieldStorage::auto_select && boundary_bytes >= 0 && boundary <= budget)
    return {WavefieldStorage::boundary, 0, boundary};
  // Any segment length costs one extra forward pass in all: take the smallest footprint.
  const int segment = best;
  if (checkpoint_bytes(segment) > budget)
    throw Error(ExitCode::resources,
                fmt::format("the forward wavefields need at least {} with checkpoints (every {} steps), above the budget "
                            "of {}; raise inversion.wavefield_memory_gib or shorten time.duration",
                            gib(checkpoint_bytes(segment)), segment, gib(budget)));
  return {WavefieldStorage::checkpoints, segment, checkpoint_bytes(segment)};
}

template <class T>
std::unique_ptr<WavefieldHistory<T>> make_history(const HistoryChoice& choice) {
  if (choice.storage == WavefieldStorage::checkpoints) return make_segment_checkpoint_history<T>(choice.segment);
  if (choice.storage == WavefieldStorage::boundary) return make_boundary_history<T>();
  return make_all_steps_history<T>();
}

template std::unique_ptr<WavefieldHistory<float>> make_all_steps_history<float>();
template std::unique_ptr<WavefieldHistory<double>> make_all_steps_history<double>();
template std::unique_ptr<WavefieldHistory<float>> make_segment_checkpoint_history<float>(int);
template std::unique_ptr<WavefieldHistory<double>> make_segment_checkpoint_history<double>(int);
template std::unique_ptr<WavefieldHistory<float>> make_history<float>(const HistoryChoice&);
template std::unique_ptr<WavefieldHistory<double>> make_history<double>(const HistoryChoice&);

}  // namespace specwave
