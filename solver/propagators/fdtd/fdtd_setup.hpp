#pragma once
// Host-side preparation shared by every FDTD propagator (CPU and CUDA): the padded layout, (v dt)^2, the
// stencil coefficients, the CPML profiles and slab geometry, and the sources and receivers as point lists
// (solver/propagators/point_lists.hpp).
// The CPU propagator runs on these arrays; the CUDA propagator copies them to the device once.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/fdtd_step.hpp"
#include "solver/case/case.hpp"
#include "solver/parallel/decomposition.hpp"
#include "solver/plan/acquisition.hpp"
#include "solver/propagators/point_lists.hpp"

namespace specwave {

struct Plan;

template <class T>
struct FdtdSetup {
  FieldLayout layout;
  std::vector<T> vel2dt2;  // padded layout
  FdtdCoefficients<T> coef;
  std::array<std::vector<T>, 3> pml_a, pml_b;  // per axis, length n_axis
  std::array<CpmlAxis<T>, 3> pml;              // geometry only: pointers left null for the owner to set
  std::array<std::size_t, 3> slab_points{};    // values per slab of each axis
  Block block;                                 // the part of the grid this setup covers (all of it on one rank)
  PointLists<T> receivers;  // the receivers whole in the block (all of them on one rank), in receiver order
  BlockReceivers<T> block_receivers;
  std::vector<std::uint64_t> receiver_keys;  // of the receivers above
  double cell_volume = 1;
  bool free_surface = false;
  int nt = 0;

  // f^n at a source point: (v dt)^2 * w / (dz dy dx) * s(t_n); the factor holds all but s.
  PointLists<T> sources(const std::vector<PointStencil>& stencils) const;
  // The receivers above made for `stencils` unless they are those already (set_block_receivers); true when made.
  bool set_receivers(const std::vector<PointStencil>& stencils) {
    if (!set_block_receivers(block_receivers, receiver_keys, layout, stencils, block)) return false;
    receivers = block_receivers.whole;
    return true;
  }
  // vel2dt2 = (v dt)^2 at the interior points from a velocity (nz, ny, nx) of the layout's interior, in fp64
  // then rounded to T (the gradient propagators' set_velocity, after check_model_velocity).
  void set_velocity(std::span<const double> velocity, double dt);
};

// The setup of `block` (local layout, model, CPML faces and profiles of that block; the free surface only on
// blocks at the top); without a block, the whole grid.
template <class T>
FdtdSetup<T> make_fdtd_setup(const Case& c, const Plan& plan, const Block* block = nullptr);

}  // namespace specwave
