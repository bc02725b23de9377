#pragma once
// Band-limited resampling of traces between two uniform samplings starting at t = 0 (docs/numerics.md, "Data at its
// own sampling"): the simulation's (n_in samples dt_in apart) and the data's (n_out samples dt_out apart). Each output
// sample is a Kaiser-windowed sinc sum over the input samples within half_width samples of the coarser sampling,
// whose cutoff is the coarser sampling's Nyquist frequency: interpolation when refining, an anti-aliased decimation
// when coarsening (4 ms data from a 0.5 ms simulation). It is a sparse matrix R applied by `apply` and by its exact
// transpose `transpose`, so a misfit on R d_syn sends its adjoint source back to the simulation's steps by R^T and the
// gradient stays the exact gradient of that misfit.
#include <span>
#include <vector>

namespace specwave {

class TraceResampler {
 public:
  // std::invalid_argument for non-positive sizes, intervals or half width.
  static constexpr int default_half_width = 12;
  TraceResampler(int n_in, double dt_in, int n_out, double dt_out, int half_width = default_half_width,
                 double kaiser_beta = 11.0);
  // How far (s) the input must reach beyond an output sample for it to be exact to the interpolator's accuracy:
  // the window's half length. Input before t = 0 is zero (a wavefield at rest), after the input's end it is missing:
  // so the input must outlast the last output by this much.
  static double reach(double dt_in, double dt_out, int half_width = default_half_width) {
    return half_width * (dt_in > dt_out ? dt_in : dt_out);
  }
  int n_in() const { return n_in_; }
  int n_out() const { return n_out_; }
  double dt_in() const { return dt_in_; }
  double dt_out() const { return dt_out_; }
  // out (n_out) = R in (n_in).
  void apply(std::span<const double> in, std::span<double> out) const;
  // in_side (n_in) = R^T out_side (n_out).
  void transpose(std::span<const double> out_side, std::span<double> in_side) const;

 private:
  int n_in_, n_out_;
  double dt_in_, dt_out_;
  int taps_ = 0;                 // weights per output sample (zero-padded where the window leaves [0, n_in))
  std::vector<int> first_;       // per output sample: the input index of its first weight
  std::vector<double> weights_;  // (n_out, taps_)
};

}  // namespace specwave
