#pragma once
// Source time functions: Ricker or a user wavelet from HDF5, sampled at the simulation's dt.
#include <vector>

#include "solver/case/case.hpp"

namespace specwave {

// s(t) = (1 - 2 pi^2 f^2 (t - t0)^2) exp(-pi^2 f^2 (t - t0)^2).
double ricker(double t, double peak_frequency, double delay);

// nt samples s(n dt), n = 0..nt-1, times the amplitude. File wavelets are resampled to dt by windowed-sinc
// interpolation when their `dt` attribute differs.
std::vector<double> sample_wavelet(const WaveletSpec& w, double dt, int nt);

// The wavelet's own length (s): Ricker delay + 3 / f_peak; a file wavelet's n_samples * dt.
double wavelet_length(const WaveletSpec& w);

// The highest significant frequency (Hz): largest f where the amplitude spectrum reaches `fraction` of its peak.
double highest_significant_frequency(const std::vector<double>& samples, double dt, double fraction = 0.05);

}  // namespace specwave
