#pragma once
// The optimiser's vector x of `invert` (docs/numerics.md, "Inverting velocity and density"): the velocity parameter
// (velocity or slowness squared, inversion.parameterisation) at every grid point, then, when inversion.parameters
// names "density", the density in the parameter's units: rho * scale with scale = mean(p0) / mean(rho0) over the
// starting model. Both blocks then have the same size at the start, so that the first step (a fraction of |x|)
// and L-BFGS' initial Hessian (one number) change each parameter by about the same fraction.
#include <cstddef>
#include <numeric>
#include <span>
#include <stdexcept>
#include <vector>

#include "solver/optim/line_search.hpp"

namespace specwave {

class ModelVector {
 public:
  // density0 empty: the velocity parameter only (x is the parameter itself, as before this vector existed).
  ModelVector(std::span<const double> parameter0, std::span<const double> density0)
      : n_(parameter0.size()), density_(!density0.empty()) {
    if (density_ && density0.size() != n_) throw std::invalid_argument("ModelVector: one density a grid point");
    if (density_) scale_ = mean(parameter0) / mean(density0);
  }
  std::size_t points() const { return n_; }
  std::size_t size() const { return density_ ? 2 * n_ : n_; }
  bool density() const { return density_; }
  double scale() const { return scale_; }  // kg/m^3 -> the parameter's unit (1 without the density)

  optim::Vector x(std::span<const double> parameter, std::span<const double> density) const {
    optim::Vector out(static_cast<Eigen::Index>(size()));
    for (std::size_t k = 0; k < n_; ++k) out[Eigen::Index(k)] = parameter[k];
    if (density_)
      for (std::size_t k = 0; k < n_; ++k) out[Eigen::Index(n_ + k)] = density[k] * scale_;
    return out;
  }
  std::span<const double> parameter(const optim::Vector& x) const { return {x.data(), n_}; }
  std::vector<double> density(const optim::Vector& x) const {
    std::vector<double> out;
    if (density_)
      for (std::size_t k = 0; k < n_; ++k) out.push_back(x[Eigen::Index(n_ + k)] / scale_);
    return out;
  }
  // dJ/dx from dJ/d(parameter) and dJ/d rho (d(rho scale) = scale d rho), and back.
  optim::Vector gradient(std::span<const double> g, std::span<const double> g_density) const {
    optim::Vector out(static_cast<Eigen::Index>(size()));
    for (std::size_t k = 0; k < n_; ++k) out[Eigen::Index(k)] = g[k];
    if (density_)
      for (std::size_t k = 0; k < n_; ++k) out[Eigen::Index(n_ + k)] = g_density[k] / scale_;
    return out;
  }
  std::vector<double> density_gradient(const optim::Vector& g) const {
    std::vector<double> out;
    if (density_)
      for (std::size_t k = 0; k < n_; ++k) out.push_back(g[Eigen::Index(n_ + k)] * scale_);
    return out;
  }
  // The box: [lower, upper] for the parameter, [density_min, density_max] (kg/m^3) for the density.
  optim::Bounds bounds(double lower, double upper, double density_min, double density_max) const {
    optim::Bounds b{optim::Vector::Constant(Eigen::Index(size()), lower),
                    optim::Vector::Constant(Eigen::Index(size()), upper)};
    if (density_) {
      b.lower.tail(Eigen::Index(n_)).setConstant(density_min * scale_);
      b.upper.tail(Eigen::Index(n_)).setConstant(density_max * scale_);
    }
    return b;
  }

 private:
  static double mean(std::span<const double> v) { return std::accumulate(v.begin(), v.end(), 0.0) / double(v.size()); }
  std::size_t n_;
  bool density_;
  double scale_ = 1;
};

}  // namespace specwave
