#pragma once
// The velocity model on the grid: built-in generators or an HDF5 dataset, checked for NaN, Inf and
// non-positive values before any run. A rank of a decomposed run holds only its block.
#include <array>
#include <span>
#include <string>
#include <vector>

#include "solver/case/case.hpp"
#include "solver/parallel/decomposition.hpp"
#include "solver/plan/acquisition.hpp"

namespace specwave {

class Comm;

struct VelocityModel {
  std::vector<float> velocity;  // the points of `block`, (z, y, x) C order over its extent, m/s
  Subdomain block;              // the part of the grid held: the whole grid unless built for a block
  double v_min = 0, v_max = 0;  // over the whole grid (reduced over the ranks)
  // The staggered scheme's density (kg/m^3) on the same points, and its range over the whole grid; empty for the
  // second-order scheme and the spectral method.
  std::vector<float> density;
  double rho_min = 0, rho_max = 0;
  // Q on the same points with an [attenuation] table (docs/numerics.md, "Attenuation"), and its range; else empty.
  std::vector<float> q;
  double q_min = 0, q_max = 0;
  // The elastic scheme's shear velocity (m/s, 0 in a fluid) on the same points; vs_min the least non-zero one (0: all
  // fluid), vs_max the largest, v_slowest the slowest wave (vs, or vp where vs = 0), over the whole grid; else empty.
  std::vector<float> shear;
  double vs_min = 0, vs_max = 0, v_slowest = 0;
  std::string note;  // how a model file was read when it was not on the case's grid (the plan prints it)
  std::vector<std::string> warnings;  // what the model asks that is legal but suspicious (the plan prints it)

  // The velocity at global grid indices, which must lie in `block`.
  float at(int z, int y, int x) const {
    return velocity[(std::size_t(z - block.begin[0]) * block.extent[1] + (y - block.begin[1])) * block.extent[2] +
                    (x - block.begin[2])];
  }
  float density_at(int z, int y, int x) const {
    return density[(std::size_t(z - block.begin[0]) * block.extent[1] + (y - block.begin[1])) * block.extent[2] +
                   (x - block.begin[2])];
  }
  bool whole_grid() const { return block.begin == Dims3{0, 0, 0}; }
};

// The density at a source or receiver from its stencil's points (docs/numerics.md, "Variable density"): the
// |w|-weighted mean sum_p |w_p| rho_p / sum_p |w_p|, a convex mean (the signed weights have negative lobes, and their
// mean can leave the range of the densities, even reach 0 next to a strong contrast) and a smooth function of the
// densities (the density gradient differentiates it). `model` must hold the density of the whole grid.
double point_density(const PointStencil& stencil, const VelocityModel& model);
// The same from a whole grid's density, (nz, ny, nx) = shape, C order.
double point_density(const PointStencil& stencil, std::span<const float> density, const std::array<int, 3>& shape);
double point_density(const PointStencil& stencil, std::span<const double> density, const std::array<int, 3>& shape);
// Its derivative with respect to the density of each of the stencil's points, in their order: |w_p| / sum |w|.
std::vector<double> point_density_derivative(const PointStencil& stencil);
// The change of point_density for a density perturbation drho (the whole grid, (nz, ny, nx) = shape): sum_p
// drho_p |w_p| / sum |w| (the Born operators of the density).
double point_density_change(const PointStencil& stencil, std::span<const double> drho, const std::array<int, 3>& shape);

// Generates or reads the model and validates every value (Error input_error / invalid_case on bad data). With
// `block`, only that part of the grid (an HDF5 model read as one collective hyperslab per rank when `comm` has
// several ranks); v_min and v_max are then reduced over `comm`, whose ranks must all call this.
VelocityModel build_velocity_model(const Case& c, const Subdomain* block = nullptr, const Comm* comm = nullptr);

}  // namespace specwave
