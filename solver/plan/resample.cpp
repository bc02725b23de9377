#include "solver/plan/resample.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace specwave {

TraceResampler::TraceResampler(int n_in, double dt_in, int n_out, double dt_out, int half_width, double kaiser_beta)
    : n_in_(n_in), n_out_(n_out), dt_in_(dt_in), dt_out_(dt_out) {
  if (n_in < 1 || n_out < 1 || !(dt_in > 0) || !(dt_out > 0) || half_width < 1 || !(kaiser_beta >= 0))
    throw std::invalid_argument("TraceResampler: sizes, intervals and half width must be positive");
  const double scale = std::max(dt_in, dt_out);  // the coarser sampling: its Nyquist frequency is the cutoff
  const double reach = TraceResampler::reach(dt_in, dt_out, half_width);
  taps_ = 2 * int(std::ceil(reach / dt_in)) + 2;
  first_.assign(std::size_t(n_out), 0);
  weights_.assign(std::size_t(n_out) * std::size_t(taps_), 0.0);
  const double i0_beta = std::cyl_bessel_i(0.0, kaiser_beta);
  for (int m = 0; m < n_out; ++m) {
    const double t = m * dt_out;
    const int k0 = int(std::ceil((t - reach) / dt_in));
    first_[std::size_t(m)] = k0;
    for (int j = 0; j < taps_; ++j) {
      const int k = k0 + j;
      const double x = (t - k * dt_in) / scale;  // in units of the coarser interval
      if (k < 0 || k >= n_in || std::abs(x) >= half_width) continue;
      const double sinc = x == 0 ? 1.0 : std::sin(std::numbers::pi * x) / (std::numbers::pi * x);
      const double u = x / half_width;
      const double window = std::cyl_bessel_i(0.0, kaiser_beta * std::sqrt(1 - u * u)) / i0_beta;
      weights_[std::size_t(m) * taps_ + j] = dt_in / scale * sinc * window;
    }
  }
}

void TraceResampler::apply(std::span<const double> in, std::span<double> out) const {
  if (in.size() != std::size_t(n_in_) || out.size() != std::size_t(n_out_))
    throw std::invalid_argument("TraceResampler::apply: trace lengths differ from the resampler's");
  for (int m = 0; m < n_out_; ++m) {
    const double* w = weights_.data() + std::size_t(m) * taps_;
    const int k0 = first_[std::size_t(m)];
    const int lo = std::max(0, -k0), hi = std::min(taps_, n_in_ - k0);
    double sum = 0;
    for (int j = lo; j < hi; ++j) sum += w[j] * in[std::size_t(k0 + j)];
    out[std::size_t(m)] = sum;
  }
}

void TraceResampler::transpose(std::span<const double> out_side, std::span<double> in_side) const {
  if (in_side.size() != std::size_t(n_in_) || out_side.size() != std::size_t(n_out_))
    throw std::invalid_argument("TraceResampler::transpose: trace lengths differ from the resampler's");
  std::fill(in_side.begin(), in_side.end(), 0.0);
  for (int m = 0; m < n_out_; ++m) {
    const double* w = weights_.data() + std::size_t(m) * taps_;
    const int k0 = first_[std::size_t(m)];
    const int lo = std::max(0, -k0), hi = std::min(taps_, n_in_ - k0);
    const double v = out_side[std::size_t(m)];
    for (int j = lo; j < hi; ++j) in_side[std::size_t(k0 + j)] += w[j] * v;
  }
}

}  // namespace specwave
