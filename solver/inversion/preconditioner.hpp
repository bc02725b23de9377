#pragma once
// Gradient preconditioning for `specwave invert` (docs/numerics.md, "Optimisation"): P = S W D S with W a taper
// that removes the gradient near the sources (its large, unphysical values there), D the illumination
// compensation (a diagonal that lifts what the sources light up weakly) and S a 3D Gaussian smoothing applied
// with FFTs on a zero-padded grid. P is symmetric positive semi-definite, so -P g is a descent direction
// whenever P g != 0; the optimiser uses it as its initial inverse Hessian (line searches keep the true gradient).
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "solver/case/case.hpp"

namespace specwave {

// Multiplies by exp(-|k|^2 sigma^2 / 2) in the wavenumber domain, i.e. convolves with a Gaussian of standard
// deviation sigma (m) per axis (z, y, x), normalised to preserve a constant field away from the edges. The grid is
// padded by 3 sigma with zeros on every side so the periodic FFT does not wrap one face onto the other.
class GaussianSmoother {
 public:
  GaussianSmoother(const GridSpec& grid, const std::array<double, 3>& sigma_m, int threads);
  ~GaussianSmoother();
  void apply(std::vector<double>& field) const;  // (nz, ny, nx), in place
  // The padded grid and the filter, for the device smoother (kernels/cuda/smoothing_cuda.hpp) to run the same
  // operator with the same values: shape (nz, ny, nx), pad per axis (padded = shape + 2 pad), filter on the
  // (pz, py, px/2 + 1) half spectrum, 1/(pz py px) included.
  const std::array<int, 3>& shape() const;
  const std::array<int, 3>& pad() const;
  const std::vector<double>& filter() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// 0 at each source, 1 beyond radius_m: w(r) = (1 - cos(pi r / R)) / 2 for r < R (the smallest over sources).
std::vector<double> source_taper(const Case& c, double radius_m);

// The illumination compensation D = (1 + eps) I_max / (I + eps I_max) point by point: 1 where the illumination I
// is largest, at most (1 + eps) / eps where it vanishes; eps > 0 keeps it bounded (the water level).
std::vector<double> illumination_weight(std::span<const double> illumination, double epsilon);

class GradientPreconditioner {
 public:
  // From inversion.smoothing_m, inversion.source_mask_m and inversion.illumination_compensation; identity() when
  // none is set.
  GradientPreconditioner(const Case& c, int threads);
  bool identity() const { return !smoother_ && taper_.empty() && !compensates_; }
  // inversion.illumination_compensation: the caller gives the illumination (Objective::evaluate) at the start of
  // every band, and keeps D fixed within a band so the L-BFGS H0 stays one operator.
  bool compensates() const { return compensates_; }
  void set_illumination(std::span<const double> illumination);
  const std::vector<double>& illumination() const { return illumination_; }
  std::vector<double> apply(std::vector<double> g) const;

  // The pieces of P, for its device form (solver/inversion/device_preconditioner.hpp): S (nullptr: no smoothing) and
  // the diagonal between the two smoothings, W D (W alone without compensation; empty: none; throws std::logic_error
  // with compensation before set_illumination). weight_version() changes whenever weight() does, so that a copy
  // of the weights elsewhere knows when to refresh.
  const GaussianSmoother* smoother() const { return smoother_.get(); }
  const std::vector<double>& weight() const;
  std::uint64_t weight_version() const { return weight_version_; }

 private:
  std::unique_ptr<GaussianSmoother> smoother_;
  std::vector<double> taper_;
  bool compensates_ = false;
  double epsilon_ = 0;
  std::vector<double> illumination_, weight_;  // weight_: W D (W: 1 without a taper)
  std::uint64_t weight_version_ = 0;
};

}  // namespace specwave
