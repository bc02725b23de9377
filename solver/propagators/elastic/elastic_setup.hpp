#pragma once
// Host-side preparation of the elastic velocity-stress scheme (docs/numerics.md, "Isotropic elastic waves"): the padded
// layout, dt lambda and 2 dt mu on the nodes, dt mu on the shear stresses' edges, dt b on the velocities' half nodes,
// the CPML profiles and slab geometry, the fields (ElasticFields), and the sources as point lists on the nine fields
// (the receivers are BlockReceivers, solver/propagators/point_lists.hpp, on the fields laid out one after another).
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/elastic_step.hpp"
#include "solver/case/case.hpp"
#include "solver/parallel/decomposition.hpp"
#include "solver/plan/acquisition.hpp"

namespace specwave {

struct Plan;

// Source points on the elastic fields: entry p adds factor[p] times its signal at index[p] of field field[p]; the
// points of source k are entries offsets[k] .. offsets[k + 1] - 1.
template <class T>
struct ElasticPoints {
  // What a point multiplies its factor by at step n.
  enum Signal : std::uint8_t {
    running_sum,  // F^n = sum_{m <= n} s(t_m): a pressure source, into s^{n+1}
    sample,       // s(t_n): a force, into v^{n+1/2}
    midpoint      // (s(t_n) + s(t_{n+1})) / 2: a moment tensor's rate at t_{n+1/2}, into s^{n+1}
  };
  std::vector<std::uint8_t> signal;
  std::vector<std::uint8_t> field;
  std::vector<index_t> index;
  std::vector<T> factor;
  std::vector<std::int32_t> offsets{0};
};

template <class T>
struct ElasticSetup {
  FieldLayout layout;
  std::vector<T> lamdt, mu2dt;         // dt lambda, 2 dt mu on the nodes (padded)
  std::array<std::vector<T>, 3> mudt;  // dt mu on s_zy's, s_zx's, s_yx's points (padded)
  std::array<std::vector<T>, 3> bdt;   // dt b_a on v_a's points (padded)
  StaggeredCoefficients<T> coef;
  std::array<std::vector<T>, 3> a_node, b_node, a_half, b_half;      // per axis: n values; n + 2R values (i + R)
  std::array<std::vector<T>, 3> ma_node, mb_node, ma_half, mb_half;  // the M-PML's (empty: none)
  std::array<ElasticCpmlAxis<T>, 3> pml;
  // values per slab of each axis: [0] the CPML's (a term of the axis), [1] the M-PML's (slab_values)
  std::array<std::array<std::size_t, 2>, 3> slab_points{};
  double multiaxial = 0;                // the M-PML's ratio (boundary.pml_multiaxial)
  std::vector<double> vp, vs, density;  // the whole grid's (compact, fp64): the model and the sources' factors
  std::array<int, 3> shape{};           // the whole grid's
  Block block;                          // this rank's block of a decomposed grid, or the whole grid
  double dt = 0, cell_volume = 1;
  int nt = 0;
  bool free_surface = false;  // at z = 0 (the top face)

  // Sources: a pressure source's points get -(vp_p dt)^2 (rho_p / rho_s) w_p / (dz dy dx) (to be multiplied by the
  // running sum F^n), a force's dt b_a(p) d_a w_p / (dz dy dx) (by s(t_n)), a moment tensor's -dt m_c w_p / (dz dy dx)
  // on stress c (by the rate at t_{n+1/2}); one owner a stencil; the block's points only.
  ElasticPoints<T> sources(const std::vector<PointStencil>& stencils) const;
  // The step's view on the caller's fields and memory slabs (ElasticFields::step).
  ElasticStep<T> step() const;
  // Values of term t's slab on a face of axis a (the CPML's or, on another axis, the M-PML's).
  std::size_t slab_values(int t, int a) const { return slab_points[std::size_t(a)][a == elastic_term[t].axis ? 0 : 1]; }
  // Whether term t has a memory slab on face `side` of axis a: a face that absorbs, of the term's own axis (the CPML)
  // or, with an M-PML, of another (not for a term along an inactive y axis, which is 0).
  bool has_slab(int t, int a, int side) const {
    const int own = elastic_term[t].axis;
    if (!pml[std::size_t(a)].face[side]) return false;
    return a == own || (multiaxial > 0 && !(own == 1 && shape[1] == 1));
  }

  // The compact indices of the two nodes whose densities make dt b at point (z, y, x) (block coordinates) of v_a
  // (the point i + 1/2 along a: nodes i and i + 1, clamped to the grid: the medium continued by its nearest node).
  std::array<std::size_t, 2> velocity_nodes(int a, int z, int y, int x) const;
  // The compact indices of the four nodes whose mu make dt mu at point (z, y, x) of shear stress szy + c (clamped).
  std::array<std::size_t, 4> edge_nodes(int c, int z, int y, int x) const;
};

// A new model (the whole grid's vp, vs, rho; compact): the coefficients recomputed (the sources' factors are taken
// from it at the next ElasticSetup::sources).
template <class T>
void update_elastic_model(ElasticSetup<T>& s, std::span<const double> vp, std::span<const double> vs,
                          std::span<const double> rho);

// The values of the CPML's (and M-PML's) memory slabs of case c on a block of `shape` points that lies on every face.
std::size_t elastic_slab_values(const Case& c, const std::array<int, 3>& shape);

// The values of the elastic gradient propagator's state on the whole grid of case c (one rank): the nine fields
// (padded) and every term's CPML memory slabs (a checkpoint holds the last step's increments beside them,
// elastic_increment_points).
std::size_t elastic_state_values(const Case& c);

// The points of every field's computed range (ElasticStep::lo / hi), summed over the nine fields, on the whole grid of
// case c (one rank): what a step's increments hold (the elastic gradient's history field, packed).
std::size_t elastic_increment_points(const Case& c);

// The receivers split into the pressure list lists[0] (the normal stresses') and the velocity list lists[1], each in
// the receivers' order: receiver r is row row[r] of list velocity[r] (recorded before and after the velocity update).
void split_elastic_receivers(const std::vector<PointStencil>& receivers, std::vector<PointStencil> (&lists)[2],
                             std::vector<bool>& velocity, std::vector<std::size_t>& row);

// The traces (n_receivers, nt) into `out` (its buffer kept when large enough: a propagator's traces() hands out a span
// of it) from the pressure list's raw samples `pressure` and the velocity list's `velocity_samples` (receiver r is row
// row[r] of the velocity list if velocity[r], else of the pressure list): a velocity trace's sample n is the mean of
// v^{n-1/2} and v^{n+1/2}.
void elastic_traces(const std::vector<bool>& velocity, const std::vector<std::size_t>& row,
                    std::span<const double> pressure, std::span<const double> velocity_samples, int nt,
                    std::vector<double>& out);

// The signal a source point multiplies its factor by at step n (ElasticPoints::Signal): wavelet s, its running sum.
inline double elastic_signal(std::uint8_t kind, const std::vector<double>& s, const std::vector<double>& running,
                             int n) {
  using P = ElasticPoints<double>;
  const std::size_t m = std::size_t(n), next = std::min(m + 1, s.size() - 1);
  return kind == P::sample ? s[m] : kind == P::running_sum ? running[m] : 0.5 * (s[m] + s[next]);
}

// For `block` of a decomposed grid (null: the whole grid); plan.model holds the whole grid.
template <class T>
ElasticSetup<T> make_elastic_setup(const Case& c, const Plan& plan, const Block* block = nullptr);

// fn(t, a, side) for every memory slab of the setup (ElasticSetup::has_slab), in the order of the state's slabs
// (checkpoints keep them so): term after term, axis after axis, low face first.
template <class T, class Fn>
void for_each_elastic_slab(const ElasticSetup<T>& s, Fn&& fn) {
  for (int t = 0; t < elastic_terms; ++t)
    for (int a = 0; a < 3; ++a)
      for (int side = 0; side < 2; ++side)
        if (s.has_slab(t, a, side)) fn(t, a, side);
}

// The names of the setup's memory slabs in a checkpoint, in for_each_elastic_slab's order: the CPML's (a term's own
// axis) cpml_0, cpml_1, ... as before the M-PML, the M-PML's mpml_0, mpml_1, ... (a checkpoint written without an
// M-PML lacks these, and resuming it with one is refused, naming the array).
template <class T>
std::vector<std::string> elastic_slab_names(const ElasticSetup<T>& s) {
  std::vector<std::string> names;
  int own = 0, other = 0;
  for_each_elastic_slab(s, [&](int t, int a, int) {
    names.push_back(a == elastic_term[t].axis ? "cpml_" + std::to_string(own++) : "mpml_" + std::to_string(other++));
  });
  return names;
}

// The state: the nine fields (padded, one after another in `all`: field k from k * layout.size(), as the receivers'
// point lists index them) and the memory slabs of every term's filters (for_each_elastic_slab).
template <class T>
struct ElasticFields {
  std::vector<T> all;
  std::array<std::span<T>, elastic_fields> f;
  std::vector<std::vector<T>> slabs;
  T* psi[elastic_terms][3][2] = {};

  explicit ElasticFields(const ElasticSetup<T>& s) : all(elastic_fields * std::size_t(s.layout.size()), T(0)) {
    const std::size_t size = std::size_t(s.layout.size());
    for (int k = 0; k < elastic_fields; ++k) f[std::size_t(k)] = std::span<T>(all).subspan(k * size, size);
    for_each_elastic_slab(
        s, [&](int t, int a, int side) { psi[t][a][side] = slabs.emplace_back(s.slab_values(t, a), T(0)).data(); });
  }
  ElasticFields(const ElasticFields&) = delete;
  ElasticFields& operator=(const ElasticFields&) = delete;

  ElasticStep<T> step(const ElasticSetup<T>& s) {
    ElasticStep<T> out = s.step();
    for (int k = 0; k < elastic_fields; ++k) out.f[k] = f[k].data();
    std::copy_n(&psi[0][0][0], elastic_terms * 6, &out.psi[0][0][0]);
    return out;
  }
};

}  // namespace specwave
