#pragma once
// Row iteration shared by the CPU loops of the staggered scheme's step (staggered_cpu.cpp) and of its adjoint
// (staggered_adjoint_cpu.cpp): internal to kernels/cpu.
#include <omp.h>

#include <algorithm>
#include <type_traits>

#include "kernels/cpu/fdtd_cpu.hpp"
#include "kernels/staggered_point.hpp"

namespace specwave::cpu::staggered_rows {

// fn(z, y) for every node row, in blocks of rows along y, each thread sweeping whole blocks through z: the rows of
// the 2R planes a z stencil reads stay in the L2 cache from one z to the next (row_block_height, as the second-order
// step). Every row is computed by the same arithmetic in any order.
template <class T, class Fn>
void sweep_rows(const FieldLayout& L, int R, Fn&& fn) {
  const int by = row_block_height(L, R, sizeof(T), omp_get_max_threads());
  const int blocks = (L.ny + by - 1) / by;
#pragma omp parallel for schedule(static)
  for (int b = 0; b < blocks; ++b) {
    const int y1 = std::min(L.ny, (b + 1) * by);
    for (int z = 0; z < L.nz; ++z)
      for (int y = b * by; y < y1; ++y) fn(z, y);
  }
}

// fn(z, y) for every row of the ghost band of axis `axis` (0: z, 1: y) beyond face `side`: the half nodes -R .. -1
// (low) or n .. n + R - 2 (high) along the axis, the grid's nodes along the other, all threads.
template <class Fn>
void ghost_band_rows(const FieldLayout& L, int R, int axis, int side, Fn&& fn) {
  const int n = L.extent(axis);
  int lo[2] = {0, 0}, hi[2] = {L.nz, L.ny};
  lo[axis] = side == 0 ? -R : n, hi[axis] = side == 0 ? 0 : n + R - 1;
#pragma omp parallel for collapse(2) schedule(static)
  for (int z = lo[0]; z < hi[0]; ++z)
    for (int y = lo[1]; y < hi[1]; ++y) fn(z, y);
}

// segment(axis, side, x0, x1) for the CPML layers that row (z, y) crosses (z and y on the grid, or a ghost band's):
// the z and y faces whose layer holds the row (only `only_axis` in a ghost band, whose row carries that component
// alone), on the whole row, then the x faces' ends. Half: the half nodes' layers, else the nodes'.
template <bool Half, class T, class Segment>
inline void for_each_cpml_segment(const StaggeredCpmlAxis<T> (&pml)[3], int nx, int z, int y, int only_axis,
                                  Segment&& segment) {
  const int c[2] = {z, y};
  for (int axis = 0; axis < 2; ++axis) {
    if (only_axis >= 0 && axis != only_axis) continue;
    const StaggeredCpmlAxis<T>& p = pml[axis];
    for (int side = 0; side < 2; ++side) {
      const int begin = Half ? p.half_begin(side) : p.node_begin(side),
                end = Half ? p.half_end(side) : p.node_end(side);
      if (p.face[side] && c[axis] >= begin && c[axis] < end) segment(axis, side, 0, nx);
    }
  }
  if (only_axis >= 0) return;
  const StaggeredCpmlAxis<T>& p = pml[2];
  for (int side = 0; side < 2; ++side)
    if (p.face[side])
      segment(2, side, Half ? p.half_begin(side) : p.node_begin(side), Half ? p.half_end(side) : p.node_end(side));
}

// Where the CPML memory of axis `axis`, face `side` holds the point (z, y, x0) of the row, and the profile's first
// coefficient index for it (a_half / b_half are stored at i + R, a_node / b_node at i).
template <bool Half, class T>
inline void cpml_slab_position(const StaggeredCpmlAxis<T>& p, int axis, int side, int z, int y, int x0, index_t& slab,
                               int& profile) {
  int c[3] = {z, y, x0};
  profile = c[axis] + (Half ? p.radius : 0);
  c[axis] = p.slab_coordinate(side, c[axis]);
  slab = c[0] * p.slab_stride[0] + c[1] * p.slab_stride[1] + c[2] * p.slab_stride[2];
}

}  // namespace specwave::cpu::staggered_rows
