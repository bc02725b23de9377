#pragma once
// Data misfits of one shot (docs/numerics.md, "Adjoint and gradient"). A misfit returns its value and its
// derivative with respect to every synthetic trace sample, the adjoint source that F^T back-propagates.
// New misfits (envelope, cross-correlation traveltime, ...) implement the same interface.
#include <memory>
#include <span>
#include <string>

#include "solver/inversion/resample.hpp"

namespace specwave {

class Misfit {
 public:
  virtual ~Misfit() = default;
  virtual std::string name() const = 0;
  // synthetic, observed and adjoint_source are (n_receivers, nt) with sample interval dt. Returns J of this
  // shot and writes dJ/d(synthetic) into adjoint_source.
  virtual double evaluate(std::span<const double> synthetic, std::span<const double> observed, double dt,
                          std::span<double> adjoint_source) const = 0;
};

// Least squares: J = 1/2 sum_r sum_n dt (d_syn - d_obs)^2 (the time integral of the squared residual by the
// rectangle rule); adjoint source dt (d_syn - d_obs).
class LeastSquaresMisfit final : public Misfit {
 public:
  std::string name() const override { return "least_squares"; }
  double evaluate(std::span<const double> synthetic, std::span<const double> observed, double dt,
                  std::span<double> adjoint_source) const override;
};

// Least squares with each trace weighted by its observed energy: J = 1/2 sum_r |s_r - o_r|^2 / |o_r|^2 with
// |x|^2 = sum_n dt x_n^2; adjoint source dt (s_r - o_r) / |o_r|^2. It balances near and far offsets (every trace
// counts alike) and keeps the amplitude's information. Traces without observed energy are left out.
class TraceNormalisedMisfit final : public Misfit {
 public:
  explicit TraceNormalisedMisfit(int nt) : nt_(nt) {}
  std::string name() const override { return "trace_normalised"; }
  double evaluate(std::span<const double> synthetic, std::span<const double> observed, double dt,
                  std::span<double> adjoint_source) const override;

 private:
  int nt_;
};

// Global correlation: J = sum_r (1 - <s_r, o_r> / (|s_r| |o_r|)), one minus the normalised zero-lag cross-correlation
// of each trace, summed; adjoint source dt (<s,o>/|s|^2 s - o) / (|s| |o|). Blind to each trace's amplitude (the
// wavelet's scale, source and receiver coupling), it fits phase and waveform. Traces where either has no energy
// are left out.
class GlobalCorrelationMisfit final : public Misfit {
 public:
  explicit GlobalCorrelationMisfit(int nt) : nt_(nt) {}
  std::string name() const override { return "global_correlation"; }
  double evaluate(std::span<const double> synthetic, std::span<const double> observed, double dt,
                  std::span<double> adjoint_source) const override;

 private:
  int nt_;
};

// By name, as in the case key inversion.misfit: "least_squares", "trace_normalised", "global_correlation", for
// traces of nt samples. Throws Error(invalid_case) for others.
std::unique_ptr<Misfit> make_misfit(const std::string& name, int nt);

// A misfit on the data's own sampling (docs/numerics.md, "Data at its own sampling"): every synthetic trace (nt samples
// at the simulation's dt) is resampled to the data's times, R d_syn; `inner` is evaluated there with the data's
// interval; its adjoint source goes back to the simulation's steps by R^T. The result is the exact gradient of
// inner(R d_syn, d_obs).
class ResampledMisfit final : public Misfit {
 public:
  ResampledMisfit(std::unique_ptr<Misfit> inner, TraceResampler resampler);
  std::string name() const override { return inner_->name(); }
  // synthetic and adjoint_source: (n_receivers, resampler.n_in()); observed: (n_receivers, resampler.n_out()); dt
  // (the simulation's) is the resampler's.
  double evaluate(std::span<const double> synthetic, std::span<const double> observed, double dt,
                  std::span<double> adjoint_source) const override;

 private:
  std::unique_ptr<Misfit> inner_;
  TraceResampler resampler_;
};

}  // namespace specwave

namespace specwave {

// Least squares of low-passed residuals, for multiscale inversion (docs/numerics.md, "Optimisation"):
// J = 1/2 sum_r sum_n dt (L (d_syn - d_obs))^2, adjoint source dt L^T L (d_syn - d_obs), where L is a zero-phase
// low-pass filter along time applied by FFT on the trace zero-padded to 2 nt: gain 1 up to cutoff_hz, a cos^2
// taper to 0 at 1.5 cutoff_hz. L is symmetric (L^T = L). Because L is linear and time-invariant, L d_syn is the
// data of the low-passed wavelet: filtering the residual filters data and wavelet alike.
//
// With `inner` (a trace-wise misfit): J = inner(L d_syn, L d_obs), adjoint source L^T (inner's), the same low-pass
// in front of any misfit.
class LowPassMisfit final : public Misfit {
 public:
  LowPassMisfit(int nt, double dt, double cutoff_hz, std::unique_ptr<Misfit> inner = nullptr);
  ~LowPassMisfit() override;
  std::string name() const override;
  double evaluate(std::span<const double> synthetic, std::span<const double> observed, double dt,
                  std::span<double> adjoint_source) const override;
  // L applied to one trace of nt samples, in place.
  void filter(std::span<double> trace) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace specwave
