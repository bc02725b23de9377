#pragma once
// Host-side preparation of the staggered velocity-pressure scheme (docs/numerics.md, "Variable density"): the padded
// layout, dt K on the nodes and dt beta on the half nodes, the staggered coefficients, the first-order CPML's profiles
// on the nodes and half nodes and its slab geometry, and the sources and receivers as point lists.
#include <array>
#include <span>
#include <vector>

#include "kernels/cpu/staggered_cpu.hpp"
#include "solver/case/case.hpp"
#include "solver/parallel/decomposition.hpp"
#include "solver/plan/acquisition.hpp"
#include "solver/plan/attenuation.hpp"
#include "solver/plan/model.hpp"
#include "solver/propagators/point_lists.hpp"

namespace specwave {

struct Plan;

template <class T>
struct StaggeredSetup {
  FieldLayout layout;
  std::vector<T> kdt;                 // dt rho v^2 on the nodes (padded layout)
  std::array<std::vector<T>, 3> bdt;  // dt beta_a on the half nodes of axis a (padded layout, halo included)
  StaggeredCoefficients<T> coef;
  std::array<std::vector<T>, 3> a_node, b_node, a_half, b_half;  // per axis: n values; n + 2R values (i + R)
  std::array<StaggeredCpmlAxis<T>, 3> pml;   // geometry (the profiles and slabs are set by step() and the owner)
  std::array<std::size_t, 3> slab_points{};  // values per slab of each axis
  std::vector<double> velocity;              // the model on the block's nodes (compact, m/s)
  std::vector<double> density;               // (kg/m^3)
  std::vector<double> grid_density;          // the whole grid's density (a source's rho_s, the buoyancy)
  // Attenuation (docs/numerics.md, "Attenuation"): per mechanism the drive g_l = b_l K_R y_l on the nodes (compact)
  // and the decay a_l; none without [attenuation].
  std::vector<std::vector<T>> sls_drive;
  std::vector<T> sls_decay;
  Block block;  // this rank's block of a decomposed grid, or the whole grid
  BlockReceivers<T> block_receivers;
  std::vector<Vec3> receiver_positions;
  double dt = 0, cell_volume = 1;
  bool free_surface = false;
  int nt = 0;

  // A source's point p adds factor_p * F^n to u^{n+1}: factor_p = (v_p dt)^2 (rho_p / rho_s) w_p / (dz dy dx),
  // rho_s the density at the source (point_density); the block's points only.
  PointLists<T> sources(const std::vector<PointStencil>& stencils) const;
  // The receivers made for `stencils` unless they are those already (set_block_receivers); true when made.
  bool set_receivers(const std::vector<PointStencil>& stencils) {
    return set_block_receivers(block_receivers, receiver_positions, layout, stencils, block);
  }
  // A new velocity model (compact, m/s) on one rank: dt K and the drives anew, the density and Q (q_grid, the whole
  // grid's; empty without attenuation) kept.
  void set_velocity(std::span<const double> v, const SlsFit& fit, std::span<const float> q_grid);
  // A new density model (the whole grid, one rank): dt K, the drives and dt beta anew.
  void set_density(std::span<const double> rho, const SlsFit& fit, std::span<const float> q_grid);
  // The two nodes (whole-grid compact indices) whose densities make dt beta_a at the block's half node (z, y, x) of
  // axis a: i and i + 1 along a, each clamped to the grid (the density continued outside by its nearest node).
  void buoyancy_nodes(int axis, int z, int y, int x, std::size_t& n0, std::size_t& n1) const;
  // The step's view, with the caller's fields and memory variables r_l (one compact array a mechanism).
  StaggeredStep<T> step(T* u, const std::array<T*, 3>& w, const std::vector<T*>& memory = {}) const;
};

// For `block` of a decomposed grid (null: the whole grid). plan.model must hold the whole grid (make_plan builds it
// whole on every rank for this scheme).
template <class T>
StaggeredSetup<T> make_staggered_setup(const Case& c, const Plan& plan, const Block* block = nullptr);

}  // namespace specwave
