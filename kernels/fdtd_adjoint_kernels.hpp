#pragma once
// The bodies of the CUDA adjoint step in omega = (v dt)^2 mu (kernels/cuda/fdtd_adjoint_cuda.cu,
// cuda::fdtd_scaled_adjoint_step; docs/numerics.md, "The adjoint in omega"), one point a call, and the boxes they run
// over: host and device functions without CUDA types, so that a CPU test (tests/test_adjoint_kernels.cpp in test_unit,
// "the CUDA adjoint in omega: its bodies ...") runs them over their boxes and compares every field with the CPU step
// (kernels/cpu/fdtd_adjoint_cpu.cpp). The physics is kernels/fdtd_point.hpp's, in the CPU step's order a point. Three
// passes, each writing only its own point's values:
//   1. scaled_beta_point on every absorbing face's layer: betah and gamma;
//   2. scaled_alpha_point on the same layers: alphah (reads gamma of the neighbours along the axis);
//   3. scaled_update_point on every point: omega^n, the imaging condition and the illumination.
// (With a free surface the odd mirror of omega^{n+1} comes first, as on the CPU.)
#include "kernels/fdtd_step.hpp"
#include "kernels/launch_geometry.hpp"

namespace specwave::fdtd_adjoint_kernels {

// The layer of face `side` of axis `axis`, (x, y, z): [0, W) or [n - W, n) along the axis, the grid along the others.
template <class T>
SPECWAVE_HD inline launch::Box layer_box(const FieldLayout& L, const CpmlAdjointAxis<T>& p, int axis, int side) {
  int lo[3] = {0, 0, 0}, extent[3] = {L.nz, L.ny, L.nx};
  lo[axis] = side == 0 ? 0 : p.n - p.width;
  extent[axis] = p.width;
  return {{lo[2], lo[1], lo[0]}, {extent[2], extent[1], extent[0]}};
}
SPECWAVE_HD inline launch::Box grid_box(const FieldLayout& L) { return {{0, 0, 0}, {L.nx, L.ny, L.nz}}; }

// Phase 1 at a layer point of face (axis, side): betah = b betah + a omega, gamma = omega + betah.
template <class T>
SPECWAVE_HD inline void scaled_beta_point(const FdtdScaledAdjointStep<T>& s, int axis, int side, int z, int y, int x) {
  const CpmlAdjointAxis<T>& p = s.pml[axis];
  const int c[3] = {z, y, x};
  const int k = c[axis];
  const index_t j = slab_index(p, axis, z, y, x);
  p.gamma[side][j] = cpml_adjoint_beta(p.b[k], p.a[k], &p.beta[side][j], s.omega[s.layout.index(z, y, x)]);
}

// Phase 2 at a layer point of face (axis, side): alphah = b alphah - a D1 gamma.
template <int R, class T>
SPECWAVE_HD inline void scaled_alpha_point(const FdtdScaledAdjointStep<T>& s, int axis, int side, int z, int y, int x) {
  const CpmlAdjointAxis<T>& p = s.pml[axis];
  const int c[3] = {z, y, x};
  const int k = c[axis];
  const index_t j = slab_index(p, axis, z, y, x);
  p.alpha[side][j] =
      cpml_adjoint_alpha<R>(p.b[k], p.a[k], p.alpha[side][j], p.gamma[side], j, p.slab_stride[axis], s.coef.d1[axis]);
}

// Phase 3 at (z, y, x): d = V (L_h omega^{n+1} + the PML terms of every axis whose reach holds the point, added in the
// order z, y, x), omega^n = 2 omega^{n+1} - omega^{n+2} + d; then, when asked, image += u^n d (in fp64, or summed in
// image_partial and added to the image on a flush step) and illumination += (u^n)^2.
template <int R, class T>
SPECWAVE_HD inline void scaled_update_point(const FdtdScaledAdjointStep<T>& s, int z, int y, int x) {
  const FieldLayout& L = s.layout;
  const index_t i = L.index(z, y, x);
  T lap = laplacian<R>(s.omega, i, L.stride_y(), L.stride_z(), s.coef);
  const int c[3] = {z, y, x};
  for (int axis = 0; axis < 3; ++axis) {
    const CpmlAdjointAxis<T>& p = s.pml[axis];
    if (!p.in_reach(c[axis])) continue;
    const int side = p.side(c[axis]);
    lap += cpml_adjoint_correction<R>(p.alpha[side], p.beta[side], slab_index(p, axis, z, y, x), p.slab_stride[axis],
                                      s.coef.d2[axis], s.coef.d1[axis]);
  }
  const T d = s.vel2dt2[i] * lap;
  s.omega_next[i] = leapfrog_increment(s.omega[i], s.omega_next[i], d);
  if (!s.image && !s.illumination) return;
  const index_t k = (index_t(z) * L.ny + y) * L.nx + x;
  const T u0 = s.u_now[s.u_now_padded ? i : k];
  if (s.image && !s.image_partial) {
    s.image[k] += imaging_term_by_parts(u0, d);
  } else if (s.image && !s.flush) {
    s.image_partial[k] += imaging_term_by_parts<T>(u0, d);
  } else if (s.image) {
    s.image[k] += double(s.image_partial[k] + imaging_term_by_parts<T>(u0, d));
    s.image_partial[k] = T(0);
  }
  if (s.illumination) s.illumination[k] += double(u0) * double(u0);
}

}  // namespace specwave::fdtd_adjoint_kernels
