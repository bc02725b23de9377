// The adjoint FDTD step on the CPU. Simpler than the forward loops (one pass per phase, the PML terms
// added point by point), OpenMP-parallel over rows (z, y).
#include "kernels/cpu/fdtd_adjoint_cpu.hpp"

#include <stdexcept>
#include <vector>

#include "kernels/cpu/fdtd_cpu.hpp"

namespace specwave::cpu {
namespace {

// The layer points of one face of one axis: [lo, hi) per axis.
template <class T>
void layer_box(const CpmlAdjointAxis<T>& p, const FieldLayout& L, int axis, int side, int lo[3], int hi[3]) {
  lo[0] = lo[1] = lo[2] = 0;
  hi[0] = L.nz, hi[1] = L.ny, hi[2] = L.nx;
  lo[axis] = side == 0 ? 0 : p.n - p.width;
  hi[axis] = side == 0 ? p.width : p.n;
}

// Phase 1 on one face: betah = b betah + a w, gamma = w + betah (pointwise).
template <class T>
void update_beta(const FdtdAdjointStep<T>& s, int axis, int side) {
  const CpmlAdjointAxis<T>& p = s.pml[axis];
  const FieldLayout& L = s.layout;
  int lo[3], hi[3];
  layer_box(p, L, axis, side, lo, hi);
  T* __restrict beta = p.beta[side];
  T* __restrict gamma = p.gamma[side];
  const T* __restrict w = s.w;
#pragma omp parallel for collapse(2) schedule(static)
  for (int z = lo[0]; z < hi[0]; ++z)
    for (int y = lo[1]; y < hi[1]; ++y) {
      const index_t i0 = L.index(z, y, lo[2]);
      const index_t j0 = slab_index(p, axis, z, y, lo[2]);
      const int c[3] = {z, y, 0};
      for (int x = 0; x < hi[2] - lo[2]; ++x) {
        const int k = axis < 2 ? c[axis] : lo[2] + x;
        gamma[j0 + x] = cpml_adjoint_beta(p.b[k], p.a[k], &beta[j0 + x], w[i0 + x]);
      }
    }
}

// Phase 2 on one face: alphah = b alphah - a D1 gamma (gamma complete on the face: phase 1 ran first).
template <int R, class T>
void update_alpha(const FdtdAdjointStep<T>& s, int axis, int side) {
  const CpmlAdjointAxis<T>& p = s.pml[axis];
  const FieldLayout& L = s.layout;
  int lo[3], hi[3];
  layer_box(p, L, axis, side, lo, hi);
  T* __restrict alpha = p.alpha[side];
  const T* __restrict gamma = p.gamma[side];
  const index_t stride_s = p.slab_stride[axis];
  const T* c1 = s.coef.d1[axis];
#pragma omp parallel for collapse(2) schedule(static)
  for (int z = lo[0]; z < hi[0]; ++z)
    for (int y = lo[1]; y < hi[1]; ++y) {
      const index_t j0 = slab_index(p, axis, z, y, lo[2]);
      const int c[3] = {z, y, 0};
#pragma omp simd
      for (int x = 0; x < hi[2] - lo[2]; ++x) {
        const int k = axis < 2 ? c[axis] : lo[2] + x;
        alpha[j0 + x] = cpml_adjoint_alpha<R>(p.b[k], p.a[k], alpha[j0 + x], gamma, j0 + x, stride_s, c1);
      }
    }
}

// Phase 3 for row (z, y): lambda = 2 mu - mu_next + L_h w + the PML terms of every axis whose reach holds the point.
template <int R, class T>
void update_row(const FdtdAdjointStep<T>& s, int z, int y, T* __restrict lap) {
  const FieldLayout& L = s.layout;
  const index_t sy = L.stride_y(), sz = L.stride_z();
  const index_t row = L.index(z, y, 0);
  const T* __restrict w = s.w;
#pragma omp simd
  for (int x = 0; x < L.nx; ++x) lap[x] = laplacian<R>(w, row + x, sy, sz, s.coef);
  const int c[3] = {z, y, 0};
  for (int axis = 0; axis < 2; ++axis) {
    const CpmlAdjointAxis<T>& p = s.pml[axis];
    if (!p.in_reach(c[axis])) continue;
    const int side = p.side(c[axis]);
    const index_t j0 = slab_index(p, axis, z, y, 0);
    const index_t stride_s = p.slab_stride[axis];
#pragma omp simd
    for (int x = 0; x < L.nx; ++x)
      lap[x] += cpml_adjoint_correction<R>(p.alpha[side], p.beta[side], j0 + x, stride_s, s.coef.d2[axis], s.coef.d1[axis]);
  }
  const CpmlAdjointAxis<T>& px = s.pml[2];
  for (int x = 0; x < L.nx; ++x) {
    if (!px.in_reach(x)) continue;
    const int side = px.side(x);
    const index_t j = slab_index(px, 2, z, y, x);
    lap[x] += cpml_adjoint_correction<R>(px.alpha[side], px.beta[side], j, 1, s.coef.d2[2], s.coef.d1[2]);
  }
  T* __restrict out = s.mu_next;
  const T* __restrict mu = s.mu;
#pragma omp simd
  for (int x = 0; x < L.nx; ++x) out[row + x] = adjoint_leapfrog(mu[row + x], out[row + x], lap[x]);
}

template <int R, class T>
void adjoint_radius(const FdtdAdjointStep<T>& s) {
  const FieldLayout& L = s.layout;
  if (L.halo != R) throw std::logic_error("fdtd_adjoint_step: field halo must equal the stencil radius");
  // w = (v dt)^2 mu^{n+1} on the interior; its ghosts stay zero, or odd mirrors above a free surface. The same
  // pass does the imaging condition and the illumination when asked (they read mu and (v dt)^2 too).
  const bool image = s.gradient != nullptr, illuminate = s.illumination != nullptr;
#pragma omp parallel for collapse(2) schedule(static)
  for (int z = 0; z < L.nz; ++z)
    for (int y = 0; y < L.ny; ++y) {
      const index_t row = L.index(z, y, 0);
      const std::size_t k0 = (std::size_t(z) * std::size_t(L.ny) + std::size_t(y)) * std::size_t(L.nx);
      const T* __restrict mu = s.mu + row;
      const T* __restrict vel = s.vel2dt2 + row;
      T* __restrict w = s.w + row;
#pragma omp simd
      for (int x = 0; x < L.nx; ++x) w[x] = vel[x] * mu[x];
      if (image) {
        double* __restrict g = s.gradient + k0;
        const T *__restrict u1 = s.u_next + k0, *__restrict u0 = s.u_now + k0, *__restrict um = s.u_before + k0;
#pragma omp simd
        for (int x = 0; x < L.nx; ++x) g[x] += imaging_term(mu[x], u1[x], u0[x], um[x], vel[x]);
      }
      if (illuminate) {
        double* __restrict il = s.illumination + k0;
        const T* __restrict u0 = s.u_now + k0;
#pragma omp simd
        for (int x = 0; x < L.nx; ++x) il[x] += double(u0[x]) * double(u0[x]);
      }
    }
  if (s.free_surface) mirror_top_ghosts(L, s.w);
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side)
      if (s.pml[axis].face[side]) update_beta(s, axis, side);
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side)
      if (s.pml[axis].face[side]) update_alpha<R>(s, axis, side);
#pragma omp parallel
  {
    std::vector<T> lap(L.nx);
#pragma omp for collapse(2) schedule(static)
    for (int z = 0; z < L.nz; ++z)
      for (int y = 0; y < L.ny; ++y) update_row<R>(s, z, y, lap.data());
  }
}

}  // namespace

template <class T>
void fdtd_adjoint_step(const FdtdAdjointStep<T>& s) {
  switch (s.coef.radius) {
    case 1: return adjoint_radius<1>(s);
    case 2: return adjoint_radius<2>(s);
    case 3: return adjoint_radius<3>(s);
    case 4: return adjoint_radius<4>(s);
    case 5: return adjoint_radius<5>(s);
    case 6: return adjoint_radius<6>(s);
    case 7: return adjoint_radius<7>(s);
    case 8: return adjoint_radius<8>(s);
    default: throw std::invalid_argument("fdtd_adjoint_step: stencil radius must be 1..8");
  }
}

template void fdtd_adjoint_step<float>(const FdtdAdjointStep<float>&);
template void fdtd_adjoint_step<double>(const FdtdAdjointStep<double>&);

}  // namespace specwave::cpu
