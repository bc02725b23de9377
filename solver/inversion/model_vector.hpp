#pragma once
// The optimiser's vector x of `invert` (docs/numerics.md, "Inverting velocity and density"): the velocity parameter
// (velocity or slowness squared, inversion.parameterisation) at every grid point, then, for each further parameter
// inversion.parameters names, a block of its values in the parameter's units: the density (kg/m^3) and the elastic
// scheme's shear velocity (m/s), each times scale = mean(p0) / mean(b0) over the starting model. Every block then has
// the same size at the start, so that the first step (a fraction of |x|) and L-BFGS' initial Hessian (one number)
// change each parameter by about the same fraction. The shear block keeps fluid points (vs = 0 at the start) at 0.
#include <array>
#include <cstddef>
#include <numeric>
#include <span>
#include <stdexcept>
#include <vector>

#include "solver/optim/line_search.hpp"

namespace specwave {

class ModelVector {
 public:
  enum Block { density_block = 0, shear_block = 1 };

  // An empty density0 or shear0: that parameter is not inverted (the velocity parameter alone: x is the parameter
  // itself, as before this vector existed).
  ModelVector(std::span<const double> parameter0, std::span<const double> density0, std::span<const double> shear0 = {})
      : n_(parameter0.size()) {
    const std::span<const double> start[2] = {density0, shear0};
    std::size_t next = n_;
    for (int b = 0; b < 2; ++b) {
      if (start[b].empty()) continue;
      if (start[b].size() != n_) throw std::invalid_argument("ModelVector: one value a grid point in every block");
      const double m = mean(start[b]);
      offset_[b] = next, scale_[b] = m > 0 ? mean(parameter0) / m : 1.0;
      next += n_;
    }
    size_ = next;
    if (!shear0.empty()) fluid_.assign(shear0.begin(), shear0.end());
  }
  std::size_t points() const { return n_; }
  std::size_t size() const { return size_; }
  bool density() const { return has(density_block); }
  bool shear() const { return has(shear_block); }
  bool has(Block b) const { return offset_[b] != 0; }
  double scale(Block b = density_block) const { return scale_[b]; }  // the block's unit -> the parameter's

  optim::Vector x(std::span<const double> parameter, std::span<const double> density,
                  std::span<const double> shear = {}) const {
    optim::Vector out(static_cast<Eigen::Index>(size_));
    for (std::size_t k = 0; k < n_; ++k) out[Eigen::Index(k)] = parameter[k];
    put(out, density_block, density, 1);
    put(out, shear_block, shear, 1);
    return out;
  }
  std::span<const double> parameter(const optim::Vector& x) const { return {x.data(), n_}; }
  std::vector<double> density(const optim::Vector& x) const { return take(x, density_block, false); }
  std::vector<double> shear(const optim::Vector& x) const { return take(x, shear_block, false); }
  // dJ/dx from dJ/d(parameter) and dJ/d(block's value) (d(b scale) = scale db), and back.
  optim::Vector gradient(std::span<const double> g, std::span<const double> g_density,
                         std::span<const double> g_shear = {}) const {
    optim::Vector out(static_cast<Eigen::Index>(size_));
    for (std::size_t k = 0; k < n_; ++k) out[Eigen::Index(k)] = g[k];
    put(out, density_block, g_density, -1);
    put(out, shear_block, g_shear, -1);
    return out;
  }
  std::vector<double> density_gradient(const optim::Vector& g) const { return take(g, density_block, true); }
  std::vector<double> shear_gradient(const optim::Vector& g) const { return take(g, shear_block, true); }
  // The box: [lower, upper] for the parameter, [density_min, density_max] (kg/m^3) for the density, [shear_min,
  // shear_max] (m/s) for the shear velocity ([0, 0] at the starting model's fluid points).
  optim::Bounds bounds(double lower, double upper, double density_min, double density_max, double shear_min = 0,
                       double shear_max = 0) const {
    optim::Bounds b{optim::Vector::Constant(Eigen::Index(size_), lower),
                    optim::Vector::Constant(Eigen::Index(size_), upper)};
    const double lo[2] = {density_min, shear_min}, hi[2] = {density_max, shear_max};
    for (int k = 0; k < 2; ++k) {
      if (!has(Block(k))) continue;
      b.lower.segment(Eigen::Index(offset_[k]), Eigen::Index(n_)).setConstant(lo[k] * scale_[k]);
      b.upper.segment(Eigen::Index(offset_[k]), Eigen::Index(n_)).setConstant(hi[k] * scale_[k]);
    }
    if (shear())
      for (std::size_t k = 0; k < n_; ++k)
        if (fluid_[k] == 0)
          b.lower[Eigen::Index(offset_[shear_block] + k)] = b.upper[Eigen::Index(offset_[shear_block] + k)] = 0;
    return b;
  }

 private:
  static double mean(std::span<const double> v) { return std::accumulate(v.begin(), v.end(), 0.0) / double(v.size()); }
  // Block b's values into out, times scale (power 1: a model) or over it (power -1: a gradient); an empty v is not
  // inverted (the block must then be absent).
  void put(optim::Vector& out, Block b, std::span<const double> v, int power) const {
    if (!has(b)) return;
    if (v.size() != n_) throw std::invalid_argument("ModelVector: a block's values are missing");
    const double f = power > 0 ? scale_[b] : 1 / scale_[b];
    for (std::size_t k = 0; k < n_; ++k) out[Eigen::Index(offset_[b] + k)] = v[k] * f;
  }
  // Block b of x in its own unit (gradient: dJ/d(value), times scale), or empty when it is not inverted.
  std::vector<double> take(const optim::Vector& x, Block b, bool gradient) const {
    std::vector<double> out;
    if (!has(b)) return out;
    const double f = gradient ? scale_[b] : 1 / scale_[b];
    for (std::size_t k = 0; k < n_; ++k) out.push_back(x[Eigen::Index(offset_[b] + k)] * f);
    return out;
  }
  std::size_t n_, size_ = 0;
  std::array<std::size_t, 2> offset_{0, 0};  // where each block starts in x (0: absent)
  std::array<double, 2> scale_{1, 1};
  std::vector<double> fluid_;  // the starting shear velocity (0: a fluid point)
};

}  // namespace specwave
