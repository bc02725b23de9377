// The adjoint FDTD step on the CPU in the scaled variable omega = (v dt)^2 mu (FdtdScaledAdjointStep,
// docs/numerics.md "The adjoint in omega"), OpenMP-parallel over rows (z, y): the adjoint memory betah and alphah on
// the z and y layer slabs in sweeps of their own (they need their neighbours along the axis), then one sweep over
// the grid that updates the x faces' memory row by row, omega^n, the imaging condition and the illumination. Blocked
// like the forward step (kernels/cpu/fdtd_cpu.cpp): the inner loops run along x over contiguous rows, without
// per-point tests.
#include "kernels/cpu/fdtd_adjoint_cpu.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "kernels/cpu/fdtd_cpu.hpp"

namespace specwave::cpu {
namespace {

template <class T>
using Step = FdtdScaledAdjointStep<T>;

// The x ends of a row where an axis' PML terms enter lambda: the reach of the transposed stencils (the layer and
// R points inward of it), [0, lo) and [hi, n), the low face taking a point both hold (as CpmlAdjointAxis::side).
struct XReach {
  int lo, hi;
};
template <class T>
XReach x_reach(const CpmlAdjointAxis<T>& p) {
  const int lo = p.face[0] ? std::min(p.width + p.radius, p.n) : 0;
  return {lo, p.face[1] ? std::max(lo, p.n - p.width - p.radius) : p.n};
}

// Phases 1 and 2 on the layer of one z or y face (a and b fixed along a row; rows along x contiguous in the slab, so
// the loops vectorise), each in a sweep over the layer: betah = b betah + a w and gamma = w + betah (they read omega
// at the point only), then alphah = b alphah - a D1 gamma (its D1 reads gamma of the neighbouring rows, complete after
// the first sweep).
template <int R, class T>
void face_memory(const Step<T>& s, int axis, int side) {
  const CpmlAdjointAxis<T>& p = s.pml[axis];
  const FieldLayout& L = s.layout;
  int lo[2] = {0, 0}, hi[2] = {L.nz, L.ny};
  lo[axis] = side == 0 ? 0 : p.n - p.width;
  hi[axis] = side == 0 ? p.width : p.n;
  const index_t stride_s = p.slab_stride[axis];
  const T* c1 = s.coef.d1[axis];
  // f(a, b, j0, z, y) on every layer row, shared among the team's threads (an orphaned worksharing loop).
  const auto layer_rows = [&](auto&& f) {
#pragma omp for collapse(2) schedule(static)
    for (int z = lo[0]; z < hi[0]; ++z)
      for (int y = lo[1]; y < hi[1]; ++y) {
        const int k = axis == 0 ? z : y;
        f(p.a[k], p.b[k], slab_index(p, axis, z, y, 0), z, y);
      }
  };
#pragma omp parallel
  {
    layer_rows([&](T a, T b, index_t j0, int z, int y) {
      T* __restrict beta = p.beta[side] + j0;
      T* __restrict gamma = p.gamma[side] + j0;
      const T* __restrict w = s.omega + L.index(z, y, 0);
#pragma omp simd
      for (int x = 0; x < L.nx; ++x) gamma[x] = cpml_adjoint_beta(b, a, &beta[x], w[x]);
    });
    layer_rows([&](T a, T b, index_t j0, int, int) {
      T* __restrict alpha = p.alpha[side];
      const T* __restrict gamma = p.gamma[side];
#pragma omp simd
      for (int x = 0; x < L.nx; ++x)
        alpha[j0 + x] = cpml_adjoint_alpha<R>(b, a, alpha[j0 + x], gamma, j0 + x, stride_s, c1);
    });
  }
}

// The x PML terms of row (z, y) on one face's reach [x0, x1): at x, cpml_adjoint_correction(alpha, beta, j + x, 1,
// ...) (field rows and slab rows are contiguous along x, so a loop over x vectorises).
template <class T>
struct XTerms {
  const T* alpha = nullptr;
  const T* beta = nullptr;
  index_t j = 0;
};
template <class T>
inline XTerms<T> x_terms(const Step<T>& s, int z, int y, int x0, int x1) {
  if (x0 >= x1) return {};
  const CpmlAdjointAxis<T>& px = s.pml[2];
  const int side = px.side(x0);
  return {px.alpha[side], px.beta[side], slab_index(px, 2, z, y, x0) - x0};
}

// The x faces' phases 1 and 2 on the layer points of row (z, y) of one face: betah and gamma, then alphah =
// b alphah - a D1 gamma. D1 reads gamma of this row only, so gamma lives in `gamma_row` (a slab row, in cache; its
// points outside the layer stay zero) instead of the gamma slab.
template <int R, class T>
inline void x_face_memory(const Step<T>& s, int side, int z, int y, T* __restrict gamma_row) {
  const CpmlAdjointAxis<T>& p = s.pml[2];
  const int x0 = side == 0 ? 0 : std::max(0, p.n - p.width), x1 = side == 0 ? std::min(p.width, p.n) : p.n;
  const index_t j0 = slab_index(p, 2, z, y, x0);
  T* __restrict beta = p.beta[side] + j0;
  T* __restrict alpha = p.alpha[side] + j0;
  T* __restrict g = gamma_row + p.slab_coordinate(x0);
  const T* __restrict w = s.omega + s.layout.index(z, y, x0);
  const T* __restrict a = p.a + x0, * __restrict b = p.b + x0;
  const T* c1 = s.coef.d1[2];
  const int m = x1 - x0;
#pragma omp simd
  for (int k = 0; k < m; ++k) g[k] = cpml_adjoint_beta(b[k], a[k], &beta[k], w[k]);
#pragma omp simd
  for (int k = 0; k < m; ++k) alpha[k] = cpml_adjoint_alpha<R>(b[k], a[k], alpha[k], g, k, 1, c1);
}

// The imaging condition and the illumination of row (z, y), when asked, from the row's increments d = V Ltilde^T
// omega^{n+1} (in cache).
template <class T>
inline void image_row(const Step<T>& s, int z, int y, const T* __restrict d) {
  if (!s.image && !s.illumination) return;
  const FieldLayout& L = s.layout;
  const std::size_t k0 = (std::size_t(z) * std::size_t(L.ny) + std::size_t(y)) * std::size_t(L.nx);
  const T* __restrict u0 = s.u_now + (s.u_now_padded ? std::size_t(L.index(z, y, 0)) : k0);
  if (s.image && !s.image_partial) {
    double* __restrict g = s.image + k0;
#pragma omp simd
    for (int x = 0; x < L.nx; ++x) g[x] += imaging_term_by_parts(u0[x], d[x]);
  } else if (s.image && !s.flush) {
    T* __restrict acc = s.image_partial + k0;
#pragma omp simd
    for (int x = 0; x < L.nx; ++x) acc[x] += imaging_term_by_parts<T>(u0[x], d[x]);
  } else if (s.image) {
    double* __restrict g = s.image + k0;
    T* __restrict acc = s.image_partial + k0;
#pragma omp simd
    for (int x = 0; x < L.nx; ++x) {
      g[x] += double(acc[x] + imaging_term_by_parts<T>(u0[x], d[x]));
      acc[x] = T(0);
    }
  }
  if (s.illumination) {
    double* __restrict il = s.illumination + k0;
#pragma omp simd
    for (int x = 0; x < L.nx; ++x) il[x] += double(u0[x]) * double(u0[x]);
  }
}

// Row (z, y) of u^n rebuilt (FdtdReverseRows), when the step carries a reverse part and the row is outside its shell.
template <int R, class T>
inline void reverse_row(const Step<T>& s, int z, int y) {
  const FdtdReverseRows<T>& r = s.reverse;
  const FieldLayout& L = s.layout;
  const auto& w = r.shell.width;
  if (z < w[0][0] || z >= L.nz - w[0][1] || y < w[1][0] || y >= L.ny - w[1][1]) return;
  const int x0 = std::min(w[2][0], L.nx), x1 = std::max(x0, L.nx - w[2][1]);
  const index_t row = L.index(z, y, 0);
  T* __restrict out = r.u_prev;
  if (s.free_surface && z == 0) {
    for (int x = x0; x < x1; ++x) out[row + x] = T(0);
    return;
  }
  const index_t sy = L.stride_y(), sz = L.stride_z();
  const T* __restrict u = r.u;
  const T* __restrict vel = s.vel2dt2;
  const FdtdCoefficients<T> coef = s.coef;
#pragma omp simd
  for (int x = x0; x < x1; ++x) {
    const index_t i = row + x;
    out[i] = leapfrog(u[i], out[i], vel[i], laplacian<R>(u, i, sy, sz, coef));
  }
  if (r.sources == 0) return;
  const index_t* end = r.index + r.sources;
  for (const index_t* p = std::lower_bound(r.index, end, row + x0); p != end && *p < row + x1; ++p)
    out[*p] += r.factor[p - r.index] * r.amplitude[p - r.index];
}

// Phase 3 for row (z, y): omega^n = 2 omega^{n+1} - omega^{n+2} + d, d = (v dt)^2 [L_h omega^{n+1} + the PML terms of
// every axis whose reach holds the point, added in the order z, y, x]; d is left in `lap` for the imaging condition.
// As in the forward step (kernels/cpu/fdtd_cpu.cpp): a row outside the z and y reaches (most rows of a large grid) is
// one fused loop, Laplacian + update, with the x PML terms at its ends; a row inside them collects the Laplacian in
// `lap` and adds each axis' terms row-wise. Both paths do the same arithmetic per point. The x faces' phases 1 and
// 2 run here first, for this row's layer points: the x PML terms below are the only reader of the row's betah_x and
// alphah_x, and the row is in cache (in sweeps of their own, every row of 10 or 20 points came from memory).
template <int R, class T>
void update_row(const Step<T>& s, int z, int y, T* __restrict lap, T* __restrict gamma_row) {
  const FieldLayout& L = s.layout;
  const index_t sy = L.stride_y(), sz = L.stride_z();
  const index_t row = L.index(z, y, 0);
  const T* __restrict om = s.omega;
  T* __restrict out = s.omega_next;
  const T* __restrict vel = s.vel2dt2;
  const FdtdCoefficients<T> coef = s.coef;
  const CpmlAdjointAxis<T>& px = s.pml[2];
  if (px.face[0]) x_face_memory<R>(s, 0, z, y, gamma_row);
  if (px.face[1]) x_face_memory<R>(s, 1, z, y, gamma_row);
  const XReach xr = x_reach(px);
  const XTerms<T> lo = x_terms(s, z, y, 0, xr.lo), hi = x_terms(s, z, y, xr.hi, L.nx);
  const T* d2 = coef.d2[2];
  const T* d1 = coef.d1[2];
  if (s.reverse.u) reverse_row<R>(s, z, y);

  if (!s.pml[0].in_reach(z) && !s.pml[1].in_reach(y)) {
#pragma omp simd
    for (int x = 0; x < xr.lo; ++x) {
      const index_t i = row + x;
      const T d = vel[i] * (laplacian<R>(om, i, sy, sz, coef) +
                            cpml_adjoint_correction<R>(lo.alpha, lo.beta, lo.j + x, 1, d2, d1));
      out[i] = leapfrog_increment(om[i], out[i], d);
      lap[x] = d;
    }
#pragma omp simd
    for (int x = xr.lo; x < xr.hi; ++x) {
      const index_t i = row + x;
      const T d = vel[i] * laplacian<R>(om, i, sy, sz, coef);
      out[i] = leapfrog_increment(om[i], out[i], d);
      lap[x] = d;
    }
#pragma omp simd
    for (int x = xr.hi; x < L.nx; ++x) {
      const index_t i = row + x;
      const T d = vel[i] * (laplacian<R>(om, i, sy, sz, coef) +
                            cpml_adjoint_correction<R>(hi.alpha, hi.beta, hi.j + x, 1, d2, d1));
      out[i] = leapfrog_increment(om[i], out[i], d);
      lap[x] = d;
    }
    image_row(s, z, y, lap);
    return;
  }

#pragma omp simd
  for (int x = 0; x < L.nx; ++x) lap[x] = laplacian<R>(om, row + x, sy, sz, coef);
  const int c[3] = {z, y, 0};
  for (int axis = 0; axis < 2; ++axis) {
    const CpmlAdjointAxis<T>& p = s.pml[axis];
    if (!p.in_reach(c[axis])) continue;
    const int side = p.side(c[axis]);
    const index_t j0 = slab_index(p, axis, z, y, 0);
    const index_t stride_s = p.slab_stride[axis];
    const T* alpha = p.alpha[side];
    const T* beta = p.beta[side];
#pragma omp simd
    for (int x = 0; x < L.nx; ++x)
      lap[x] += cpml_adjoint_correction<R>(alpha, beta, j0 + x, stride_s, coef.d2[axis], coef.d1[axis]);
  }
#pragma omp simd
  for (int x = 0; x < xr.lo; ++x) lap[x] += cpml_adjoint_correction<R>(lo.alpha, lo.beta, lo.j + x, 1, d2, d1);
#pragma omp simd
  for (int x = xr.hi; x < L.nx; ++x) lap[x] += cpml_adjoint_correction<R>(hi.alpha, hi.beta, hi.j + x, 1, d2, d1);
#pragma omp simd
  for (int x = 0; x < L.nx; ++x) {
    const T d = vel[row + x] * lap[x];
    out[row + x] = leapfrog_increment(om[row + x], out[row + x], d);
    lap[x] = d;
  }
  image_row(s, z, y, lap);
}

template <int R, class T>
void adjoint_radius(const Step<T>& s) {
  const FieldLayout& L = s.layout;
  if (L.halo != R) throw std::logic_error("fdtd_adjoint_step: field halo must equal the stencil radius");
  // omega^{n+1}'s ghosts: zero, or odd mirrors above a free surface (omega is zero on the surface plane); the same
  // for u^{n+1} of a fused reverse step.
  if (s.free_surface) mirror_top_ghosts(L, s.omega);
  if (s.reverse.u && s.free_surface) mirror_top_ghosts(L, s.reverse.u);
  if (s.reverse.u && (!s.u_now_padded || s.u_now != s.reverse.u_prev))
    throw std::logic_error("fdtd_adjoint_step: a fused reverse step images the field it rebuilds (u_now = u_prev)");
  // Phases 1 and 2 of the z and y faces, in sweeps over their layers (face_memory); the x faces' run row by row in
  // phase 3 (x_face_memory).
  for (int axis = 0; axis < 2; ++axis)
    for (int side = 0; side < 2; ++side)
      if (s.pml[axis].face[side]) face_memory<R>(s, axis, side);
  // Rows in blocks along y, each swept through z (row_block_height, kernels/cpu/fdtd_cpu.hpp); any order gives the
  // same rows bitwise.
  const int by = row_block_height(L, R, sizeof(T));
  const int blocks = (L.ny + by - 1) / by;
#pragma omp parallel
  {
    std::vector<T> lap(L.nx), gamma_row(std::size_t(s.pml[2].width) + 4 * std::size_t(R), T(0));
#pragma omp for collapse(2) schedule(static)
    for (int b = 0; b < blocks; ++b)
      for (int z = 0; z < L.nz; ++z)
        for (int y = b * by; y < std::min(L.ny, (b + 1) * by); ++y)
          update_row<R>(s, z, y, lap.data(), gamma_row.data());
  }
}

}  // namespace

template <class T>
void fdtd_adjoint_step(const FdtdScaledAdjointStep<T>& s) {
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

template void fdtd_adjoint_step<float>(const FdtdScaledAdjointStep<float>&);
template void fdtd_adjoint_step<double>(const FdtdScaledAdjointStep<double>&);

}  // namespace specwave::cpu
