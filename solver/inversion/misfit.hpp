#pragma once
// Data misfits of one shot (docs/numerics.md, "Adjoint and gradient"). A misfit returns its value and its
// derivative with respect to every synthetic trace sample, the adjoint source that F^T back-propagates.
// New misfits (envelope, cross-correlation traveltime, ...) implement the same interface.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "solver/plan/resample.hpp"

namespace specwave {

class Misfit {
 public:
  virtual ~Misfit() = default;
  virtual std::string name() const = 0;
  // synthetic, observed and adjoint_source are (n_receivers, nt) with sample interval dt. Returns J of this
  // shot and writes dJ/d(synthetic) into adjoint_source.
  virtual double evaluate(std::span<const double> synthetic, std::span<const double> observed, double dt,
                          std::span<double> adjoint_source) const = 0;
  // The same for shot `shot` of the case: what the Objective calls. A misfit whose processing depends on the shot's
  // geometry (WindowedMisfit) overrides it; wrappers pass the shot on.
  virtual double evaluate_shot(int shot, std::span<const double> synthetic, std::span<const double> observed, double dt,
                               std::span<double> adjoint_source) const {
    (void)shot;
    return evaluate(synthetic, observed, dt, adjoint_source);
  }
};

// Time and offset windows, applied identically to synthetic and observed data inside the misfit: J = inner(W s, W o),
// adjoint source W (inner's), W diagonal. Per shot and receiver, a weight (0 outside the offset range) and a top
// mute: 0 before t_mute = distance(source, receiver) / mute_velocity + mute_time, a cos^2 ramp to 1 over
// `taper` seconds after it. Traces of nt samples dt apart from t = 0 (the data's sampling).
class WindowedMisfit final : public Misfit {
 public:
  struct Trace {
    double weight = 1, mute_start = 0;  // mute_start: t_mute (s); -infinity: no mute
  };
  WindowedMisfit(std::unique_ptr<Misfit> inner, std::vector<std::vector<Trace>> shots, int nt, double dt, double taper);
  std::string name() const override { return inner_->name() + "_windowed"; }
  // Needs the shot: throws std::logic_error.
  double evaluate(std::span<const double> synthetic, std::span<const double> observed, double dt,
                  std::span<double> adjoint_source) const override;
  double evaluate_shot(int shot, std::span<const double> synthetic, std::span<const double> observed, double dt,
                       std::span<double> adjoint_source) const override;
  // The window of one trace at sample n.
  double window(int shot, int receiver, int n) const;

 private:
  std::unique_ptr<Misfit> inner_;
  std::vector<std::vector<Trace>> shots_;
  int nt_;
  double dt_, taper_;
};

// Per-trace weights (inversion.trace_weights): J = sum_r w_{s,r} inner(s_r, o_r), each trace's misfit weighted, and
// adjoint source w_{s,r} (inner's for that trace). Unlike WindowedMisfit's weights, which scale the data, these scale
// the misfit, so they act alike on every trace-wise misfit (the global correlation is blind to the data's scale). A
// weight of 0 leaves the trace out (its adjoint source is 0). `inner` must be a sum over traces of nt samples
// (every misfit of make_misfit, and a LowPassMisfit over one).
class TraceWeightedMisfit final : public Misfit {
 public:
  TraceWeightedMisfit(std::unique_ptr<Misfit> inner, std::vector<std::vector<double>> weights, int nt);
  std::string name() const override { return inner_->name() + "_weighted"; }
  // Needs the shot: throws std::logic_error.
  double evaluate(std::span<const double> synthetic, std::span<const double> observed, double dt,
                  std::span<double> adjoint_source) const override;
  double evaluate_shot(int shot, std::span<const double> synthetic, std::span<const double> observed, double dt,
                       std::span<double> adjoint_source) const override;

 private:
  std::unique_ptr<Misfit> inner_;
  std::vector<std::vector<double>> weights_;  // [shot][receiver]
  int nt_;
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
                  std::span<double> adjoint_source) const override {
    return evaluate_shot(-1, synthetic, observed, dt, adjoint_source);
  }
  double evaluate_shot(int shot, std::span<const double> synthetic, std::span<const double> observed, double dt,
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
                  std::span<double> adjoint_source) const override {
    return evaluate_shot(-1, synthetic, observed, dt, adjoint_source);
  }
  double evaluate_shot(int shot, std::span<const double> synthetic, std::span<const double> observed, double dt,
                       std::span<double> adjoint_source) const override;
  // L applied to one trace of nt samples, in place.
  void filter(std::span<double> trace) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace specwave
