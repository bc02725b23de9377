#include "solver/plan/wavelet.hpp"

#include <fftw3.h>
#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <complex>
#include <mutex>

#include "io/hdf5.hpp"
#include "kernels/fft/fftw_batched.hpp"
#include "solver/case/errors.hpp"
#include "solver/plan/resample.hpp"

namespace specwave {

double ricker(double t, double f, double t0) {
  const double a = M_PI * M_PI * f * f * (t - t0) * (t - t0);
  return (1 - 2 * a) * std::exp(-a);
}

namespace {

// The Kaiser window I0(beta sqrt(1 - u^2)) / I0(beta), beta = 11 (the trace resampler's), at u in [0, 1], from a
// table of 16384 intervals (linear interpolation, within 1e-8): a Bessel function costs about 270 ns, and a file
// sampled far finer than the run sums 24 of its samples per run sample per ratio of the intervals.
double kaiser_window(double u) {
  constexpr std::size_t n = 16384;
  constexpr double beta = 11.0;
  static const std::vector<double> table = [] {
    std::vector<double> t(n + 1);
    const double i0_beta = std::cyl_bessel_i(0.0, beta);
    for (std::size_t i = 0; i <= n; ++i) {
      const double v = double(i) / n;
      t[i] = std::cyl_bessel_i(0.0, beta * std::sqrt(std::max(0.0, 1 - v * v))) / i0_beta;
    }
    return t;
  }();
  const double p = std::min(std::abs(u), 1.0) * n;
  const std::size_t i = std::min(std::size_t(p), n - 1);
  const double f = p - double(i);
  return table[i] * (1 - f) + table[i + 1] * f;
}

// Kaiser-windowed sinc interpolation of a uniformly sampled signal s (interval dt_in) at time t, for a run sampled
// at dt_out, with the trace resampler's kernel (solver/plan/resample.hpp: half width 12, beta 11): the sinc's cutoff is
// the coarser sampling's Nyquist frequency (an anti-alias filter when the file is sampled finer than the run), and the
// weights are divided by their sum, so that a constant keeps its amplitude. Outside the file the signal is zero.
// (Until 2026-12-07 a Lanczos window of half width 8, unnormalised: a gain of 1 + 1.6e-4 and errors of 2e-4 to 7e-4
// of a 10 Hz Ricker's peak sampled at 1 ms from 0.9 and 1.1 ms.)
double interpolate(const std::vector<double>& s, double dt_in, double t, double dt_out) {
  const double q = t / dt_in;
  const double scale = std::max(1.0, dt_out / dt_in);  // input samples per unit of the sinc's argument
  constexpr int half = TraceResampler::default_half_width;
  const double reach = half * scale;
  if (!(q < double(s.size()) + reach)) return 0.0;  // past the last sample's window (no int overflow, found by fuzzing)
  const long first = long(std::floor(q - reach)) + 1, last = long(std::ceil(q + reach)) - 1;
  double sum = 0, weights = 0;
  for (long i = first; i <= last; ++i) {
    const double x = (q - double(i)) / scale;
    if (std::abs(x) >= half) continue;
    const double sinc = x == 0 ? 1.0 : std::sin(M_PI * x) / (M_PI * x);
    const double w = sinc * kaiser_window(x / half);
    weights += w;
    if (i >= 0 && i < long(s.size())) sum += s[std::size_t(i)] * w;
  }
  return weights != 0 ? sum / weights : 0.0;
}

}  // namespace

std::vector<double> sample_wavelet(const WaveletSpec& w, double dt, int nt) {
  std::vector<double> out(nt, 0.0);
  if (w.kind == WaveletSpec::Kind::ricker) {
    const double delay = w.delay.value_or(1.5 / w.peak_frequency);
    for (int n = 0; n < nt; ++n) out[n] = w.amplitude * ricker(n * dt, w.peak_frequency, delay);
    return out;
  }
  io::h5::Reader reader(w.file);
  const auto info = reader.info(w.dataset);
  const std::string where = fmt::format("{}: dataset '{}'", w.file, w.dataset);
  if (info.dims.size() != 1)
    throw Error(ExitCode::input_error, where + ": a wavelet must be a 1-D dataset (n_samples)");
  if (info.dims[0] == 0)
    throw Error(ExitCode::input_error, where + ": the wavelet has no samples; write the source time function into it");
  io::h5::Handle dset = reader.open_dataset(w.dataset);
  if (!io::h5::has_attribute(dset.id(), "dt"))
    throw Error(ExitCode::input_error, where + ": attribute 'dt' (sampling interval, s) is missing; add it");
  const double dt_in = io::h5::read_attribute_doubles(dset.id(), "dt")[0];
  // A sampling interval, in seconds: from 1 ns to 1000 s (a subnormal dt made every time index overflow).
  if (!(dt_in >= 1e-9 && dt_in <= 1e3))
    throw Error(ExitCode::input_error,
                where + fmt::format(": attribute dt = {} must be the sampling interval in seconds, in [1e-9, 1e3]; "
                                    "write it in seconds (e.g. 0.001 for 1 ms)",
                                    dt_in));
  // Only the samples the run's times reach are read: up to the last time, plus the interpolation kernel's reach
  // (interpolate treats samples beyond the file as zero, so the values are the same as from the whole file).
  const bool same_dt = std::abs(dt_in - dt) <= 1e-9 * dt;
  const double reach = TraceResampler::default_half_width * std::max(1.0, dt / dt_in);
  const double needed = same_dt ? double(nt) : std::ceil(double(std::max(nt - 1, 0)) * dt / dt_in + reach) + 1;
  const hsize_t count = needed < double(info.dims[0]) ? hsize_t(needed) : info.dims[0];
  constexpr hsize_t max_samples = 10'000'000;
  if (count > max_samples)
    throw Error(ExitCode::input_error,
                where + fmt::format(": the run's {} steps of {:.4g} s reach {} of its samples (dt = {:.4g} s), more "
                                    "than the limit of {}; resample the wavelet to a coarser interval (the run's dt "
                                    "or a few times finer)",
                                    nt, dt, count, dt_in, max_samples));
  const auto samples = reader.read_floating_block<double>(w.dataset, info.dims, {0}, {count});
  bool any = false;
  for (double v : samples) {
    if (!std::isfinite(v)) throw Error(ExitCode::input_error, where + ": contains NaN or Inf; fix the wavelet");
    any = any || v != 0;
  }
  if (!any)
    throw Error(ExitCode::input_error,
                where +
                    (count < info.dims[0]
                         ? fmt::format(": every sample within the run's time ({} of {}) is zero", count, info.dims[0])
                         : std::string(": every sample is zero")) +
                    ": the source would inject nothing and every trace be zero; write the source time function "
                    "into it");
  for (int n = 0; n < nt; ++n) {
    const double v = same_dt ? (n < int(samples.size()) ? samples[n] : 0.0) : interpolate(samples, dt_in, n * dt, dt);
    out[n] = w.amplitude * v;
  }
  return out;
}

double wavelet_length(const WaveletSpec& w) {
  if (w.kind == WaveletSpec::Kind::ricker) return w.delay.value_or(1.5 / w.peak_frequency) + 3.0 / w.peak_frequency;
  io::h5::Reader reader(w.file);
  const auto info = reader.info(w.dataset);
  io::h5::Handle dset = reader.open_dataset(w.dataset);
  if (info.dims.size() != 1 || !io::h5::has_attribute(dset.id(), "dt")) return 0;  // sample_wavelet reports these
  const auto dt = io::h5::read_attribute_doubles(dset.id(), "dt");
  // (A dt outside sample_wavelet's range [1e-9, 1e3] s: its error names it.)
  return dt.empty() || !(dt[0] >= 1e-9 && dt[0] <= 1e3) ? 0.0 : double(info.dims[0]) * dt[0];
}

double highest_significant_frequency(const std::vector<double>& samples, double dt, double fraction) {
  std::size_t n = 8192;
  while (n < 2 * samples.size()) n *= 2;
  std::vector<double> in(n, 0.0);
  std::copy(samples.begin(), samples.end(), in.begin());
  std::vector<std::complex<double>> spectrum(n / 2 + 1);
  {
    // FFTW's planner is not thread-safe: Python threads may plan cases at once (the module releases the GIL).
    std::lock_guard<std::mutex> lock(fft::planner_mutex());
    fftw_plan plan =
        fftw_plan_dft_r2c_1d(int(n), in.data(), reinterpret_cast<fftw_complex*>(spectrum.data()), FFTW_ESTIMATE);
    fftw_execute(plan);
    fftw_destroy_plan(plan);
  }
  double peak = 0;
  for (const auto& c : spectrum) peak = std::max(peak, std::abs(c));
  if (peak == 0) return 0;
  std::size_t last = 0;
  for (std::size_t k = 0; k < spectrum.size(); ++k)
    if (std::abs(spectrum[k]) >= fraction * peak) last = k;
  return double(last) / (n * dt);
}

}  // namespace specwave
