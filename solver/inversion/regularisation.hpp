#pragma once
// Model regularisation added to the data misfit (docs/numerics.md, "Regularisation"), on the inversion's parameter m
// over the grid, with forward differences D_a m = (m[i + 1] - m[i]) / h_a along each axis longer than one point:
//   Tikhonov (gradient norm): R = w/2 sum_points sum_a (D_a m)^2
//   total variation:          R = w sum_points sqrt(sum_a (D_a m)^2 + eps^2)
// (a difference whose neighbour lies outside the grid is 0). eps > 0, fixed for a run, keeps TV differentiable.
#include <span>
#include <string>

#include "solver/case/case.hpp"

namespace specwave {

struct Regularisation {
  std::string kind = "none";  // "none", "tikhonov", "total_variation"
  double weight = 0;
  double epsilon = 0;  // total variation: in parameter units per metre
};

// R(m), and dR/dm added into `gradient` when it is not empty.
double add_regularisation(const Regularisation& r, const GridSpec& grid, std::span<const double> m,
                          std::span<double> gradient);

}  // namespace specwave
