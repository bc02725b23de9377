#pragma once
// Source estimation (docs/numerics.md, "Source estimation"): the wavelet of a survey is unknown, so the synthetic
// data (made with the case's wavelet w0) are matched to the observed data by a filter f per shot, or one for every
// shot: the least-squares (Wiener) filter in the frequency domain,
//   F(omega) = sum_r w_r conj(S_r) O_r / (sum_r w_r |S_r|^2 + eps),   eps = damping * max_omega sum_r w_r |S_r|^2,
// over the shot's traces r (weights w_r: inversion.trace_weights), on the data's sampling. The estimated wavelet is
// f * w0. The misfit then compares f * s with the observed data (ConvolvedMisfit): with f held fixed, its adjoint
// source is f^T applied to the inner misfit's, so the gradient is the exact gradient of the misfit at that wavelet.
// `invert` estimates f at the start of every band (and at the start without bands) and keeps it in its state.
#include <complex>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "solver/inversion/misfit.hpp"

namespace specwave {

// Filters of traces of nt samples: one per shot, or one shared by every shot. A filter acts on a trace zero-padded
// to `padded` >= 2 nt samples by circular convolution with its impulse response (lags -nt < k < nt, the negative
// ones at the end), the first nt samples kept: a linear map whose transpose is the correlation with the same
// response (apply(..., true)).
class SourceFilters {
 public:
  SourceFilters(int nt, int n_shots, bool shared);
  ~SourceFilters();
  SourceFilters(SourceFilters&&) noexcept;
  SourceFilters& operator=(SourceFilters&&) noexcept;

  int nt() const;
  int padded() const;
  bool shared() const;
  int count() const;  // filters held: 1 when shared, else n_shots
  // The spectrum of shot s's filter (padded / 2 + 1 values, normalised: a spectrum of ones is the identity).
  std::span<std::complex<double>> spectrum(int shot);
  std::span<const std::complex<double>> spectrum(int shot) const;
  // One trace of nt samples, in place: f * trace, or its transpose.
  void apply(int shot, std::span<double> trace, bool transpose = false) const;
  // Every spectrum as (re, im) pairs, filter after filter (the inversion state), and back.
  std::vector<double> flat() const;
  void set_flat(std::span<const double> values);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The sums of the Wiener filter, shot by shot (or into one for shared filters), then the filters. Under MPI each rank
// adds its shots and the sums are added over the ranks (sums(): one array) before finish().
class SourceEstimator {
 public:
  SourceEstimator(int nt, int n_shots, bool shared);
  ~SourceEstimator();
  // One shot's synthetic and observed traces ((traces, nt) each, on the data's sampling) and its trace weights
  // (empty: all 1).
  void add_shot(int shot, std::span<const double> synthetic, std::span<const double> observed,
                std::span<const double> weights);
  std::span<double> sums();
  // F = cross / (power + damping * max power), per filter; a filter without any synthetic energy is the identity.
  SourceFilters finish(double damping) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// J = inner(f_s * s, o) for shot s, adjoint source f_s^T (inner's): the misfit of the filtered synthetic data.
class ConvolvedMisfit final : public Misfit {
 public:
  ConvolvedMisfit(std::unique_ptr<Misfit> inner, std::shared_ptr<const SourceFilters> filters);
  std::string name() const override { return inner_->name(); }
  // Needs the shot: throws std::logic_error.
  double evaluate(std::span<const double> synthetic, std::span<const double> observed, double dt,
                  std::span<double> adjoint_source) const override;
  double evaluate_shot(int shot, std::span<const double> synthetic, std::span<const double> observed, double dt,
                       std::span<double> adjoint_source) const override;

 private:
  std::unique_ptr<Misfit> inner_;
  std::shared_ptr<const SourceFilters> filters_;
};

}  // namespace specwave
