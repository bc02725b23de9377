#include "solver/inversion/misfit.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "solver/case/errors.hpp"

namespace specwave {

double LeastSquaresMisfit::evaluate(std::span<const double> synthetic, std::span<const double> observed, double dt,
                                    std::span<double> adjoint_source) const {
  if (synthetic.size() != observed.size() || adjoint_source.size() != synthetic.size())
    throw std::invalid_argument("LeastSquaresMisfit: synthetic, observed and adjoint source differ in size");
  double sum = 0;
  for (std::size_t k = 0; k < synthetic.size(); ++k) {
    const double r = synthetic[k] - observed[k];
    sum += r * r;
    adjoint_source[k] = dt * r;
  }
  return 0.5 * dt * sum;
}

namespace {
// Checks a trace-wise misfit's arguments: whole traces of nt samples, all three of one size.
std::size_t traces_of(std::span<const double> synthetic, std::span<const double> observed,
                      std::span<double> adjoint_source, int nt, const char* who) {
  if (nt < 1 || synthetic.size() != observed.size() || adjoint_source.size() != synthetic.size() ||
      synthetic.size() % std::size_t(nt))
    throw std::invalid_argument(std::string(who) +
                                ": synthetic, observed and adjoint source differ in size or are not whole traces");
  return synthetic.size() / std::size_t(nt);
}
}  // namespace

double TraceNormalisedMisfit::evaluate(std::span<const double> synthetic, std::span<const double> observed, double dt,
                                       std::span<double> adjoint_source) const {
  const std::size_t traces = traces_of(synthetic, observed, adjoint_source, nt_, "TraceNormalisedMisfit"), nt = nt_;
  double j = 0;
  for (std::size_t r = 0; r < traces; ++r) {
    const auto s = synthetic.subspan(r * nt, nt), o = observed.subspan(r * nt, nt);
    const auto a = adjoint_source.subspan(r * nt, nt);
    double energy = 0, misfit = 0;
    for (std::size_t n = 0; n < nt; ++n) energy += dt * o[n] * o[n];
    if (!(energy > 0)) {
      std::fill(a.begin(), a.end(), 0.0);
      continue;
    }
    for (std::size_t n = 0; n < nt; ++n) {
      misfit += dt * (s[n] - o[n]) * (s[n] - o[n]);
      a[n] = dt * (s[n] - o[n]) / energy;
    }
    j += 0.5 * misfit / energy;
  }
  return j;
}

double GlobalCorrelationMisfit::evaluate(std::span<const double> synthetic, std::span<const double> observed, double dt,
                                         std::span<double> adjoint_source) const {
  const std::size_t traces = traces_of(synthetic, observed, adjoint_source, nt_, "GlobalCorrelationMisfit"), nt = nt_;
  double j = 0;
  for (std::size_t r = 0; r < traces; ++r) {
    const auto s = synthetic.subspan(r * nt, nt), o = observed.subspan(r * nt, nt);
    const auto a = adjoint_source.subspan(r * nt, nt);
    double ss = 0, oo = 0, so = 0;
    for (std::size_t n = 0; n < nt; ++n) ss += dt * s[n] * s[n], oo += dt * o[n] * o[n], so += dt * s[n] * o[n];
    if (!(ss > 0) || !(oo > 0)) {
      std::fill(a.begin(), a.end(), 0.0);
      continue;
    }
    const double ns = std::sqrt(ss), no = std::sqrt(oo);
    j += 1 - so / (ns * no);
    for (std::size_t n = 0; n < nt; ++n) a[n] = dt * (so / ss * s[n] - o[n]) / (ns * no);
  }
  return j;
}

WindowedMisfit::WindowedMisfit(std::unique_ptr<Misfit> inner, std::vector<std::vector<Trace>> shots, int nt, double dt,
                               double taper)
    : inner_(std::move(inner)), shots_(std::move(shots)), nt_(nt), dt_(dt), taper_(taper) {}

double WindowedMisfit::window(int shot, int receiver, int n) const {
  const Trace& t = shots_.at(std::size_t(shot)).at(std::size_t(receiver));
  const double after = n * dt_ - t.mute_start;
  if (after < 0) return 0;
  if (after >= taper_) return t.weight;
  // sin^2 of the ramp's phase: exactly 0 where the ramp starts (cos(pi/2) is not, by 6e-17) and 1 at its end.
  const double c = std::sin(0.5 * std::numbers::pi * (after / taper_));
  return t.weight * c * c;
}

double WindowedMisfit::evaluate(std::span<const double>, std::span<const double>, double, std::span<double>) const {
  throw std::logic_error("WindowedMisfit: the windows depend on the shot; call evaluate_shot");
}

double WindowedMisfit::evaluate_shot(int shot, std::span<const double> synthetic, std::span<const double> observed,
                                     double dt, std::span<double> adjoint_source) const {
  if (shot < 0 || std::size_t(shot) >= shots_.size())
    throw std::logic_error("WindowedMisfit: evaluate_shot needs the shot's index");
  const std::size_t traces = traces_of(synthetic, observed, adjoint_source, nt_, "WindowedMisfit"), nt = nt_;
  if (traces != shots_[std::size_t(shot)].size())
    throw std::invalid_argument("WindowedMisfit: the shot's receiver count differs from its windows'");
  std::vector<double> w(synthetic.size()), s(synthetic.size()), o(synthetic.size());
  for (std::size_t r = 0; r < traces; ++r)
    for (std::size_t n = 0; n < nt; ++n) {
      const std::size_t k = r * nt + n;
      w[k] = window(shot, int(r), int(n));
      s[k] = w[k] * synthetic[k], o[k] = w[k] * observed[k];
    }
  const double j = inner_->evaluate_shot(shot, s, o, dt, adjoint_source);
  for (std::size_t k = 0; k < w.size(); ++k) adjoint_source[k] *= w[k];
  return j;
}

TraceWeightedMisfit::TraceWeightedMisfit(std::unique_ptr<Misfit> inner, std::vector<std::vector<double>> weights,
                                         int nt)
    : inner_(std::move(inner)), weights_(std::move(weights)), nt_(nt) {}

double TraceWeightedMisfit::evaluate(std::span<const double>, std::span<const double>, double,
                                     std::span<double>) const {
  throw std::logic_error("TraceWeightedMisfit: the weights depend on the shot; call evaluate_shot");
}

double TraceWeightedMisfit::evaluate_shot(int shot, std::span<const double> synthetic, std::span<const double> observed,
                                          double dt, std::span<double> adjoint_source) const {
  if (shot < 0 || std::size_t(shot) >= weights_.size())
    throw std::logic_error("TraceWeightedMisfit: evaluate_shot needs the shot's index");
  const std::size_t traces = traces_of(synthetic, observed, adjoint_source, nt_, "TraceWeightedMisfit"), nt = nt_;
  const std::vector<double>& w = weights_[std::size_t(shot)];
  if (traces != w.size())
    throw std::invalid_argument("TraceWeightedMisfit: the shot's receiver count differs from its weights'");
  double j = 0;
  for (std::size_t r = 0; r < traces; ++r) {
    const std::span<double> adjoint = adjoint_source.subspan(r * nt, nt);
    if (w[r] == 0) {
      std::fill(adjoint.begin(), adjoint.end(), 0.0);
      continue;
    }
    j += w[r] * inner_->evaluate_shot(shot, synthetic.subspan(r * nt, nt), observed.subspan(r * nt, nt), dt, adjoint);
    for (double& a : adjoint) a *= w[r];
  }
  return j;
}

std::unique_ptr<Misfit> make_misfit(const std::string& name, int nt) {
  if (name == "least_squares") return std::make_unique<LeastSquaresMisfit>();
  if (name == "trace_normalised") return std::make_unique<TraceNormalisedMisfit>(nt);
  if (name == "global_correlation") return std::make_unique<GlobalCorrelationMisfit>(nt);
  throw Error(ExitCode::invalid_case,
              fmt::format("inversion.misfit = \"{}\" is not available; use \"least_squares\", \"trace_normalised\" "
                          "or \"global_correlation\"",
                          name));
}

ResampledMisfit::ResampledMisfit(std::unique_ptr<Misfit> inner, TraceResampler resampler)
    : inner_(std::move(inner)), resampler_(std::move(resampler)) {}

double ResampledMisfit::evaluate_shot(int shot, std::span<const double> synthetic, std::span<const double> observed,
                                      double, std::span<double> adjoint_source) const {
  const std::size_t n_in = std::size_t(resampler_.n_in()), n_out = std::size_t(resampler_.n_out());
  const std::size_t receivers = synthetic.size() / n_in;
  if (synthetic.size() != receivers * n_in || observed.size() != receivers * n_out ||
      adjoint_source.size() != synthetic.size())
    throw std::invalid_argument("ResampledMisfit: trace sizes differ from the resampler's");
  std::vector<double> resampled(receivers * n_out), adjoint(receivers * n_out);
  for (std::size_t r = 0; r < receivers; ++r)
    resampler_.apply(synthetic.subspan(r * n_in, n_in), std::span<double>(resampled).subspan(r * n_out, n_out));
  const double j = inner_->evaluate_shot(shot, resampled, observed, resampler_.dt_out(), adjoint);
  for (std::size_t r = 0; r < receivers; ++r)
    resampler_.transpose(std::span<const double>(adjoint).subspan(r * n_out, n_out),
                         adjoint_source.subspan(r * n_in, n_in));
  return j;
}

}  // namespace specwave

#include <cmath>
#include <complex>
#include <numbers>

#include "kernels/fft/fftw_batched.hpp"

namespace specwave {

struct LowPassMisfit::Impl {
  std::unique_ptr<Misfit> inner;
  int nt = 0, padded = 0;
  std::vector<double> real, gain;
  std::vector<std::complex<double>> spectrum;
  fft::BatchedFft<double> forward, backward;
};

LowPassMisfit::LowPassMisfit(int nt, double dt, double cutoff_hz, std::unique_ptr<Misfit> inner)
    : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  m.inner = std::move(inner);
  m.nt = nt;
  m.padded = 2 * nt;
  const int half = m.padded / 2 + 1;
  m.real.assign(m.padded, 0.0);
  m.spectrum.assign(half, {});
  m.forward = fft::BatchedFft<double>::r2c({{m.padded, 1, 1}}, {}, m.real.data(), m.spectrum.data(), 1,
                                           fft::Planning::estimate);
  m.backward = fft::BatchedFft<double>::c2r({{m.padded, 1, 1}}, {}, m.spectrum.data(), m.real.data(), 1,
                                            fft::Planning::estimate);
  m.gain.resize(half);
  for (int k = 0; k < half; ++k) {
    const double f = k / (m.padded * dt);
    double g = 0;
    if (f <= cutoff_hz)
      g = 1;
    else if (f < 1.5 * cutoff_hz)
      g = std::pow(std::cos(0.5 * std::numbers::pi * (f - cutoff_hz) / (0.5 * cutoff_hz)), 2);
    m.gain[k] = g / m.padded;  // FFTW's round trip is unnormalised
  }
}

LowPassMisfit::~LowPassMisfit() = default;

std::string LowPassMisfit::name() const {
  return impl_->inner ? impl_->inner->name() + "_lowpass" : "least_squares_lowpass";
}

void LowPassMisfit::filter(std::span<double> trace) const {
  auto& m = *impl_;
  std::fill(m.real.begin(), m.real.end(), 0.0);
  std::copy(trace.begin(), trace.end(), m.real.begin());
  m.forward.execute();
  for (std::size_t k = 0; k < m.spectrum.size(); ++k) m.spectrum[k] *= m.gain[k];
  m.backward.execute();
  std::copy(m.real.begin(), m.real.begin() + m.nt, trace.begin());
}

double LowPassMisfit::evaluate_shot(int shot, std::span<const double> synthetic, std::span<const double> observed,
                                    double dt, std::span<double> adjoint_source) const {
  if (synthetic.size() != observed.size() || adjoint_source.size() != synthetic.size() || synthetic.size() % impl_->nt)
    throw std::invalid_argument(
        "LowPassMisfit: synthetic, observed and adjoint source differ in size or are not whole traces");
  const std::size_t nt = std::size_t(impl_->nt);
  if (impl_->inner) {  // inner(L s, L o), adjoint L^T inner's
    std::vector<double> s(synthetic.begin(), synthetic.end()), o(observed.begin(), observed.end());
    for (std::size_t start = 0; start < s.size(); start += nt) {
      filter(std::span<double>(s).subspan(start, nt));
      filter(std::span<double>(o).subspan(start, nt));
    }
    const double j = impl_->inner->evaluate_shot(shot, s, o, dt, adjoint_source);
    for (std::size_t start = 0; start < s.size(); start += nt) filter(adjoint_source.subspan(start, nt));
    return j;
  }
  double sum = 0;
  std::vector<double> r(nt);
  for (std::size_t start = 0; start < synthetic.size(); start += nt) {
    for (std::size_t n = 0; n < nt; ++n) r[n] = synthetic[start + n] - observed[start + n];
    filter(r);
    for (double v : r) sum += v * v;
    filter(r);  // L^T = L
    for (std::size_t n = 0; n < nt; ++n) adjoint_source[start + n] = dt * r[n];
  }
  return 0.5 * dt * sum;
}

}  // namespace specwave
