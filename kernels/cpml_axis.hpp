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

  SPECWAVE_HD bool in_layer(int i) const { return (face[0] && i < width) || (face[1] && i >= n - width); }
  // The face whose layer holds i (a block of a decomposed grid may hold only the high face, and be shorter than
  // two layers).
  SPECWAVE_HD int side(int i) const { return face[0] && i < width ? 0 : 1; }
  SPECWAVE_HD int slab_coordinate(int i) const { return side(i) == 0 ? i + radius : i - (n - width) + radius; }
};

// The adjoint CPML state of one axis (docs/numerics.md, "Adjoint and gradient"): per absorbing face the
// adjoint memory variables alpha (of psi) and beta (of zeta), both stored multiplied by a, and the scratch
// gamma = w + beta. The transposed stencils D2^T, D1^T reach R points beyond the layer, so the adjoint slabs
// carry 2R zero points on each side along the axis (extent W + 4R): every point within R of the layer reads
// its neighbours without a bounds test.
template <class T>
struct CpmlAdjointAxis {
  int n = 0;
  int width = 0;
  int radius = 0;
  bool face[2] = {false, false};
  const T* a = nullptr;
  const T* b = nullptr;
  T* alpha[2] = {nullptr, nullptr};
  T* beta[2] = {nullptr, nullptr};
  T* gamma[2] = {nullptr, nullptr};
  index_t slab_stride[3] = {0, 0, 0};

  SPECWAVE_HD bool in_layer(int i) const { return (face[0] && i < width) || (face[1] && i >= n - width); }
  // Points where the transposed PML stencils contribute: the layer and R points inward of it.
  SPECWAVE_HD bool in_reach(int i) const {
    return (face[0] && i < width + radius) || (face[1] && i >= n - width - radius);
  }
  SPECWAVE_HD int side(int i) const { return face[0] && i < width + radius ? 0 : 1; }
  SPECWAVE_HD int slab_coordinate(int i) const { return side(i) == 0 ? i + 2 * radius : i - (n - width) + 2 * radius; }
};

// Flat index in the slab of `axis` (the low or high one, by p.side) of grid point (z, y, x), which must lie in
// that slab's reach: for the forward state (CpmlAxis) and the adjoint state (CpmlAdjointAxis) alike.
template <class Axis>
SPECWAVE_HD inline index_t slab_index(const Axis& p, int axis, int z, int y, int x) {
  int c[3] = {z, y, x};
  c[axis] = p.slab_coordinate(c[axis]);
  return c[0] * p.slab_stride[0] + c[1] * p.slab_stride[1] + c[2] * p.slab_stride[2];
}

// Slab extents for axis `axis` of a grid (nz, ny, nx): the axis' extent becomes W + 2R.
inline void cpml_slab_extents(int axis, int nz, int ny, int nx, int width, int radius, int extents[3]) {
  extents[0] = nz;
  extents[1] = ny;
  extents[2] = nx;
  extents[axis] = width + 2 * radius;
}

// Adjoint slab extents: W + 4R along the axis (see CpmlAdjointAxis).
inline void cpml_adjoint_slab_extents(int axis, int nz, int ny, int nx, int width, int radius, int extents[3]) {
  cpml_slab_extents(axis, nz, ny, nx, width, 2 * radius, extents);
}

// The adjoint CPML state of axis `axis` of a grid (nz, ny, nx) from the forward one `f`, with the profiles a, b:
// its extents and slab strides, and per absorbing face the slabs alpha, beta, gamma that `allocate(values)`
// returns (T*: host or device memory, zero-filled; the caller owns it).
template <class T, class Allocate>
void make_cpml_adjoint_axis(CpmlAdjointAxis<T>& p, const CpmlAxis<T>& f, int axis, int nz, int ny, int nx, const T* a,
                            const T* b, Allocate&& allocate) {
  p.n = f.n, p.width = f.width, p.radius = f.radius, p.face[0] = f.face[0], p.face[1] = f.face[1];
  p.a = a, p.b = b;
  int e[3];
  cpml_adjoint_slab_extents(axis, nz, ny, nx, f.width, f.radius, e);
  p.slab_stride[2] = 1, p.slab_stride[1] = e[2], p.slab_stride[0] = index_t(e[1]) * e[2];
  const auto values = static_cast<unsigned long long>(e[0]) * e[1] * e[2];
  for (int side = 0; side < 2; ++side) {
    if (!p.face[side]) continue;
    p.alpha[side] = allocate(values);
    p.beta[side] = allocate(values);
    p.gamma[side] = allocate(values);
  }
}

}  // namespace specwave
