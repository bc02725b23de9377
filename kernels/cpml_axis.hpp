#pragma once
// Device-agnostic view of the CPML state of one axis (docs/numerics.md, "Absorbing boundary").
// The memory variables psi and zeta of axis a live in two slabs (low and high face). A slab has the grid's
// extents except along a, where it holds W layer points plus R zero points on each side, so that D1_a psi
// needs no bounds test: the padding is never written and stays zero.
#include "kernels/common.hpp"

namespace specwave {

template <class T>
struct CpmlAxis {
  int n = 0;                       // grid extent along this axis
  int width = 0;                   // W layer points per face (0: no layer on this axis)
  int radius = 0;                  // R, the stencil radius (slab padding)
  bool face[2] = {false, false};   // low, high face absorbing
  const T* a = nullptr;            // a(i), i = 0..n-1 (0 outside the layer)
  const T* b = nullptr;            // b(i)
  T* psi[2] = {nullptr, nullptr};  // slabs, [low, high]
  T* zeta[2] = {nullptr, nullptr};
  index_t slab_stride[3] = {0, 0, 0};  // z, y, x strides of a slab

  SPECWAVE_HD bool in_layer(int i) const {
    return (face[0] && i < width) || (face[1] && i >= n - width);
  }
  // The face whose layer holds i (a block of a decomposed grid may hold only the high face, and be shorter than
  // two layers).
  SPECWAVE_HD int side(int i) const { return face[0] && i < width ? 0 : 1; }
  SPECWAVE_HD int slab_coordinate(int i) const { return side(i) == 0 ? i + radius : i - (n - width) + radius; }
};

// Slab extents for axis `axis` of a grid (nz, ny, nx): the axis' extent becomes W + 2R.
inline void cpml_slab_extents(int axis, int nz, int ny, int nx, int width, int radius, int extents[3]) {
  extents[0] = nz;
  extents[1] = ny;
  extents[2] = nx;
  extents[axis] = width + 2 * radius;
}

}  // namespace specwave
