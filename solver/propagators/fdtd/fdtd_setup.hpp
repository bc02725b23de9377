#pragma once
// Host-side preparation shared by every FDTD propagator (CPU and CUDA): the padded layout, (v dt)^2, the
// stencil coefficients, the CPML profiles and slab geometry, and sources/receivers as flat point lists.
// The CPU propagator runs on these arrays; the CUDA propagator copies them to the device once.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/fdtd_step.hpp"
#include "solver/plan/acquisition.hpp"
#include "solver/case/case.hpp"
#include "solver/parallel/decomposition.hpp"

namespace specwave {

struct Plan;

// Points of several sources or receivers: entry p belongs to owner[p]; for receivers, receiver r owns
// entries offsets[r] .. offsets[r+1]-1. Injection adds factor[p] * s_owner(t_n) at index[p];
// sampling sums factor[p] * u[index[p]].
template <class T>
struct PointLists {
  std::vector<index_t> index;
  std::vector<T> factor;
  std::vector<std::int32_t> owner, offsets;
};

// The point lists of stencils on `layout`, each factor = weight * scale * (factor_field at the point, if given).
// Only the points of `block` are listed (global stencil indices become the block's local ones); without a
// block, all.
template <class T>
PointLists<T> make_point_lists(const FieldLayout& layout, const std::vector<PointStencil>& stencils, double scale,
                               const std::vector<T>* factor_field, const Block* block = nullptr);

// Receivers on one block of a decomposed grid, arranged so that the traces are bitwise those of one rank
// (docs/architecture.md, "Domain decomposition"): a receiver whose points all lie in one block is summed there
// (`whole`, in the single-rank order); the points of a receiver split between blocks are recorded one by one as
// products factor * u into numbered slots, and summed in the single-rank order once every rank's slots are
// gathered (gather_traces). On one rank every receiver is whole and whole_id[r] = r.
template <class T>
struct BlockReceivers {
  PointLists<T> whole;         // offsets per whole receiver of this block
  std::vector<int> whole_id;   // their receiver numbers
  PointLists<T> parts;         // this block's points of split receivers; owner[p] = slot
  std::vector<int> split_id;   // every split receiver (the same list on every rank)
  std::vector<int> split_slots;  // receiver split_id[k] has slots split_slots[k] .. split_slots[k+1]-1, in point order
  int slots() const { return split_slots.empty() ? 0 : split_slots.back(); }
};
template <class T>
BlockReceivers<T> make_block_receivers(const FieldLayout& layout, const std::vector<PointStencil>& receivers,
                                       const Block& block);

// Trace samples n of every receiver of this block: traces[id * nt + n] (whole) and parts[slot * nt + n].
template <class T>
void record_block(const BlockReceivers<T>& r, const T* u, std::vector<double>& traces, std::vector<double>& parts,
                  int nt, int n);

template <class T>
struct FdtdSetup {
  FieldLayout layout;
  std::vector<T> vel2dt2;  // padded layout
  FdtdCoefficients<T> coef;
  std::array<std::vector<T>, 3> pml_a, pml_b;  // per axis, length n_axis
  std::array<CpmlAxis<T>, 3> pml;              // geometry only: pointers left null for the owner to set
  std::array<std::size_t, 3> slab_points{};    // values per slab of each axis
  Block block;                 // the part of the grid this setup covers (all of it on one rank)
  PointLists<T> receivers;     // the receivers whole in the block (all of them on one rank), in receiver order
  BlockReceivers<T> block_receivers;
  double cell_volume = 1;
  bool free_surface = false;
  int nt = 0;

  // f^n at a source point: (v dt)^2 * w / (dz dy dx) * s(t_n); the factor holds all but s.
  PointLists<T> sources(const std::vector<PointStencil>& stencils) const;
  // vel2dt2 = (v dt)^2 at the interior points from a velocity (nz, ny, nx) of the layout's interior, in fp64
  // then rounded to T (the gradient propagators' set_velocity, after check_model_velocity).
  void set_velocity(std::span<const double> velocity, double dt);
};

// The setup of `block` (local layout, model, CPML faces and profiles of that block; the free surface only on
// blocks at the top); without a block, the whole grid.
template <class T>
FdtdSetup<T> make_fdtd_setup(const Case& c, const Plan& plan, const Block* block = nullptr);

}  // namespace specwave
