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
  std::vector<std::uint64_t> receiver_keys;
  double dt = 0, cell_volume = 1;
  bool free_surface = false;
  int nt = 0;

  // A source's point p adds factor_p * F^n to u^{n+1}: factor_p = (v_p dt)^2 (rho_p / rho_s) w_p / (dz dy dx),
  // rho_s the density at the source (point_density); the block's points only.
  PointLists<T> sources(const std::vector<PointStencil>& stencils) const;
  // The receivers made for `stencils` unless they are those already (set_block_receivers); true when made.
  bool set_receivers(const std::vector<PointStencil>& stencils) {
    return set_block_receivers(block_receivers, receiver_keys, layout, stencils, block);
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
// F^n = sum_{m <= n} s(t_m) of each wavelet: the pressure update takes the running sum of the second-order scheme's
// source term (docs/numerics.md, "Variable density").
std::vector<std::vector<double>> running_sums(const std::vector<std::vector<double>>& wavelets);

// The fields of a staggered state, or of its adjoint (the same shapes): u (nodes), w_a (half nodes), the CPML's phi
// and chi slabs of the setup's absorbing faces, and the memory variables r_l (compact).
template <class T>
struct StaggeredFields {
  std::vector<T> u;
  std::array<std::vector<T>, 3> w;
  std::vector<std::vector<T>> slabs;
  std::vector<std::vector<T>> memory;
  std::array<std::array<T*, 2>, 3> phi{}, chi{};  // per axis and face: the slabs (null: no layer there)

  explicit StaggeredFields(const StaggeredSetup<T>& s) : u(s.layout.size(), T(0)) {
    for (auto& w_a : w) w_a.assign(s.layout.size(), T(0));
    for (int a = 0; a < 3; ++a)
      for (int side = 0; side < 2; ++side) {
        if (!s.pml[a].face[side]) continue;
        phi[a][side] = slabs.emplace_back(s.slab_points[a], T(0)).data();
        chi[a][side] = slabs.emplace_back(s.slab_points[a], T(0)).data();
      }
    for (std::size_t l = 0; l < s.sls_drive.size(); ++l) memory.emplace_back(s.velocity.size(), T(0));
  }
  StaggeredFields(const StaggeredFields&) = delete;
  StaggeredFields& operator=(const StaggeredFields&) = delete;

  std::vector<std::vector<T>*> arrays() {
    std::vector<std::vector<T>*> out{&u, &w[0], &w[1], &w[2]};
    for (auto& s : slabs) out.push_back(&s);
    for (auto& r : memory) out.push_back(&r);
    return out;
  }
  std::vector<const std::vector<T>*> arrays() const {
    std::vector<const std::vector<T>*> out{&u, &w[0], &w[1], &w[2]};
    for (const auto& s : slabs) out.push_back(&s);
    for (const auto& r : memory) out.push_back(&r);
    return out;
  }
  // The step's view of these fields with the setup's model and profiles.
  StaggeredStep<T> step(const StaggeredSetup<T>& s) {
    std::vector<T*> r;
    for (auto& m : memory) r.push_back(m.data());
    StaggeredStep<T> out = s.step(u.data(), {w[0].data(), w[1].data(), w[2].data()}, r);
    for (int a = 0; a < 3; ++a)
      for (int side = 0; side < 2; ++side) out.pml[a].phi[side] = phi[a][side], out.pml[a].chi[side] = chi[a][side];
    return out;
  }
};

template <class T>
StaggeredSetup<T> make_staggered_setup(const Case& c, const Plan& plan, const Block* block = nullptr);

}  // namespace specwave
