#pragma once
// Host-side preparation shared by every FDTD propagator (CPU and CUDA): the padded layout, (v dt)^2, the
// stencil coefficients, the CPML profiles and slab geometry, and sources/receivers as flat point lists.
// The CPU propagator runs on these arrays; the CUDA propagator copies them to the device once.
#include <array>
#include <cstdint>
#include <vector>

#include "kernels/fdtd_step.hpp"
#include "solver/acquisition.hpp"
#include "solver/case.hpp"

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
template <class T>
PointLists<T> make_point_lists(const FieldLayout& layout, const std::vector<PointStencil>& stencils, double scale,
                               const std::vector<T>* factor_field);

template <class T>
struct FdtdSetup {
  FieldLayout layout;
  std::vector<T> vel2dt2;  // padded layout
  FdtdCoefficients<T> coef;
  std::array<std::vector<T>, 3> pml_a, pml_b;  // per axis, length n_axis
  std::array<CpmlAxis<T>, 3> pml;              // geometry only: pointers left null for the owner to set
  std::array<std::size_t, 3> slab_points{};    // values per slab of each axis
  PointLists<T> receivers;
  double cell_volume = 1;
  bool free_surface = false;
  int nt = 0;

  // f^n at a source point: (v dt)^2 * w / (dz dy dx) * s(t_n); the factor holds all but s.
  PointLists<T> sources(const std::vector<PointStencil>& stencils) const;
};

template <class T>
FdtdSetup<T> make_fdtd_setup(const Case& c, const Plan& plan);

}  // namespace specwave
