#include "solver/inversion/source_estimation.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/fft/fftw_batched.hpp"
#include "solver/plan/plan.hpp"

namespace specwave {
namespace {

// One real FFT of `padded` points and its inverse, on buffers of their own (FFTW plans are made once).
struct TraceFft {
  int nt = 0, padded = 0;
  std::vector<double> real;
  std::vector<std::complex<double>> spectrum;
  fft::BatchedFft<double> forward, backward;

  explicit TraceFft(int n) : nt(n), padded(fft_friendly_length(2 * n)) {
    real.assign(std::size_t(padded), 0.0);
    spectrum.assign(std::size_t(padded / 2 + 1), {});
    forward =
        fft::BatchedFft<double>::r2c({{padded, 1, 1}}, {}, real.data(), spectrum.data(), 1, fft::Planning::estimate);
    backward =
        fft::BatchedFft<double>::c2r({{padded, 1, 1}}, {}, spectrum.data(), real.data(), 1, fft::Planning::estimate);
  }
  // spectrum = FFT of the trace zero-padded to `padded`.
  void transform(std::span<const double> trace) {
    std::fill(real.begin(), real.end(), 0.0);
    std::copy(trace.begin(), trace.end(), real.begin());
    forward.execute();
  }
};

}  // namespace

struct SourceFilters::Impl {
  TraceFft fft;
  bool shared = false;
  int count = 0;
  std::vector<std::complex<double>> spectra;  // (count, padded / 2 + 1)
  explicit Impl(int nt) : fft(nt) {}
  std::size_t half() const { return std::size_t(fft.padded / 2 + 1); }
};

SourceFilters::SourceFilters(int nt, int n_shots, bool shared) {
  if (nt < 1 || n_shots < 1) throw std::invalid_argument("SourceFilters: nt and the shot count must be >= 1");
  impl_ = std::make_unique<Impl>(nt);
  impl_->shared = shared;
  impl_->count = shared ? 1 : n_shots;
  impl_->spectra.assign(std::size_t(impl_->count) * impl_->half(), {1.0, 0.0});
}
SourceFilters::~SourceFilters() = default;
SourceFilters::SourceFilters(SourceFilters&&) noexcept = default;
SourceFilters& SourceFilters::operator=(SourceFilters&&) noexcept = default;

int SourceFilters::nt() const { return impl_->fft.nt; }
int SourceFilters::padded() const { return impl_->fft.padded; }
bool SourceFilters::shared() const { return impl_->shared; }
int SourceFilters::count() const { return impl_->count; }

std::span<std::complex<double>> SourceFilters::spectrum(int shot) {
  const std::size_t k = impl_->shared ? 0 : std::size_t(shot);
  return std::span(impl_->spectra).subspan(k * impl_->half(), impl_->half());
}
std::span<const std::complex<double>> SourceFilters::spectrum(int shot) const {
  const std::size_t k = impl_->shared ? 0 : std::size_t(shot);
  return std::span<const std::complex<double>>(impl_->spectra).subspan(k * impl_->half(), impl_->half());
}

void SourceFilters::apply(int shot, std::span<double> trace, bool transpose) const {
  TraceFft& f = impl_->fft;
  if (trace.size() != std::size_t(f.nt)) throw std::invalid_argument("SourceFilters::apply: a trace of nt samples");
  f.transform(trace);
  const auto h = spectrum(shot);
  const double scale = 1.0 / f.padded;  // FFTW's round trip is unnormalised
  // Correlation (the transpose of the circular convolution) multiplies by the conjugate spectrum.
  for (std::size_t k = 0; k < h.size(); ++k) f.spectrum[k] *= (transpose ? std::conj(h[k]) : h[k]) * scale;
  f.backward.execute();
  std::copy_n(f.real.begin(), f.nt, trace.begin());
}

std::vector<double> SourceFilters::flat() const {
  std::vector<double> out;
  out.reserve(2 * impl_->spectra.size());
  for (const auto& v : impl_->spectra) out.push_back(v.real()), out.push_back(v.imag());
  return out;
}

void SourceFilters::set_flat(std::span<const double> values) {
  if (values.size() != 2 * impl_->spectra.size())
    throw std::invalid_argument("SourceFilters::set_flat: the filters of another shape");
  for (std::size_t k = 0; k < impl_->spectra.size(); ++k) impl_->spectra[k] = {values[2 * k], values[2 * k + 1]};
}

struct SourceEstimator::Impl {
  TraceFft fft;
  int n_shots = 0, count = 0;
  bool shared = false;
  // Per filter: the cross spectrum (re, im) and the power, (count, half, 3).
  std::vector<double> sums;
  explicit Impl(int nt) : fft(nt) {}
  std::size_t half() const { return std::size_t(fft.padded / 2 + 1); }
};

SourceEstimator::SourceEstimator(int nt, int n_shots, bool shared) {
  if (nt < 1 || n_shots < 1) throw std::invalid_argument("SourceEstimator: nt and the shot count must be >= 1");
  impl_ = std::make_unique<Impl>(nt);
  impl_->n_shots = n_shots;
  impl_->shared = shared;
  impl_->count = shared ? 1 : n_shots;
  impl_->sums.assign(std::size_t(impl_->count) * impl_->half() * 3, 0.0);
}
SourceEstimator::~SourceEstimator() = default;

void SourceEstimator::add_shot(int shot, std::span<const double> synthetic, std::span<const double> observed,
                               std::span<const double> weights) {
  auto& m = *impl_;
  const std::size_t nt = std::size_t(m.fft.nt), half = m.half();
  if (synthetic.size() != observed.size() || synthetic.size() % nt)
    throw std::invalid_argument("SourceEstimator::add_shot: synthetic and observed differ, or not whole traces");
  const std::size_t traces = synthetic.size() / nt;
  if (!weights.empty() && weights.size() != traces)
    throw std::invalid_argument("SourceEstimator::add_shot: one weight per trace");
  double* sum = m.sums.data() + (m.shared ? 0 : std::size_t(shot)) * half * 3;
  std::vector<std::complex<double>> s(half);
  for (std::size_t r = 0; r < traces; ++r) {
    const double w = weights.empty() ? 1.0 : weights[r];
    if (w == 0) continue;
    m.fft.transform(synthetic.subspan(r * nt, nt));
    std::copy(m.fft.spectrum.begin(), m.fft.spectrum.end(), s.begin());
    m.fft.transform(observed.subspan(r * nt, nt));
    for (std::size_t k = 0; k < half; ++k) {
      const std::complex<double> cross = std::conj(s[k]) * m.fft.spectrum[k];
      sum[3 * k] += w * cross.real();
      sum[3 * k + 1] += w * cross.imag();
      sum[3 * k + 2] += w * std::norm(s[k]);
    }
  }
}

std::span<double> SourceEstimator::sums() { return impl_->sums; }

SourceFilters SourceEstimator::finish(double damping) const {
  const auto& m = *impl_;
  const std::size_t half = m.half();
  SourceFilters out(m.fft.nt, m.n_shots, m.shared);
  for (int f = 0; f < m.count; ++f) {
    const double* sum = m.sums.data() + std::size_t(f) * half * 3;
    double most = 0;
    for (std::size_t k = 0; k < half; ++k) most = std::max(most, sum[3 * k + 2]);
    if (!(most > 0)) continue;  // no synthetic energy: the identity
    const double eps = damping * most;
    auto h = out.spectrum(f);
    for (std::size_t k = 0; k < half; ++k)
      h[k] = std::complex<double>(sum[3 * k], sum[3 * k + 1]) / (sum[3 * k + 2] + eps);
  }
  return out;
}

ConvolvedMisfit::ConvolvedMisfit(std::unique_ptr<Misfit> inner, std::shared_ptr<const SourceFilters> filters)
    : inner_(std::move(inner)), filters_(std::move(filters)) {}

double ConvolvedMisfit::evaluate(std::span<const double>, std::span<const double>, double, std::span<double>) const {
  throw std::logic_error("ConvolvedMisfit::evaluate: the filter is the shot's; call evaluate_shot");
}

double ConvolvedMisfit::evaluate_shot(int shot, std::span<const double> synthetic, std::span<const double> observed,
                                      double dt, std::span<double> adjoint_source) const {
  const std::size_t nt = std::size_t(filters_->nt());
  if (synthetic.size() != observed.size() || adjoint_source.size() != synthetic.size() || synthetic.size() % nt)
    throw std::invalid_argument(
        "ConvolvedMisfit: synthetic, observed and adjoint source differ in size or are not whole traces");
  std::vector<double> filtered(synthetic.begin(), synthetic.end());
  for (std::size_t start = 0; start < filtered.size(); start += nt)
    filters_->apply(shot, std::span<double>(filtered).subspan(start, nt));
  const double j = inner_->evaluate_shot(shot, filtered, observed, dt, adjoint_source);
  for (std::size_t start = 0; start < adjoint_source.size(); start += nt)
    filters_->apply(shot, adjoint_source.subspan(start, nt), true);
  return j;
}

}  // namespace specwave
