// The staggered scheme's exact adjoint step on the CPU (docs/numerics.md, "The staggered scheme's adjoint"): the
// transpose of the pressure step (the memory variables, the nodes' CPML, D-), then of the velocity step (the half
// nodes' CPML, D+), each with the free surface's mirror folded back. (D+)^T = -D- and (D-)^T = -D+ on the grid's
// nodes and the half nodes the forward step updates, so the transposes reuse the forward's stencils.
#include <omp.h>

#include <algorithm>
#include <vector>

#include "kernels/cpu/staggered_cpu.hpp"
#include "kernels/cpu/staggered_rows.hpp"

namespace specwave::cpu {
namespace {

using staggered_rows::sweep_rows;

// The pressure step's transpose on every node row: D-bar = -dt K u-bar + sum_l g_l (dt/2 u-bar + r-bar_l) (the
// adjoint of the divergence D), r-bar_l <- a_l r-bar_l + dt/2 (1 + a_l) u-bar, image += D-bar D^n; q_a = D-bar, and
// in the nodes' layer of an axis-a face c = chi-bar + D-bar, chi-bar <- b c, q_a += a c (the adjoint of D-_a w_a).
template <int R, class T>
void transpose_pressure_rows(const StaggeredAdjointStep<T>& s) {
  const FieldLayout L = s.layout;
  std::vector<T> buffers(std::size_t(omp_get_max_threads()) * L.nx);
  sweep_rows<T>(L, R, [&](int z, int y) {
    const index_t row = L.index(z, y, 0);
    const std::size_t compact = (std::size_t(z) * L.ny + y) * L.nx;
    const T* __restrict u = s.u + row;
    const T* __restrict kdt = s.kdt + row;
    T* __restrict d = buffers.data() + std::size_t(omp_get_thread_num()) * L.nx;
#pragma omp simd
    for (int x = 0; x < L.nx; ++x) d[x] = -kdt[x] * u[x];
    for (int l = 0; l < s.mechanisms; ++l) {
      T* __restrict r = s.r[l] + compact;
      const T* __restrict g = s.g[l] + compact;
      const T a = s.decay[l], h = s.half_dt * (T(1) + s.decay[l]);
#pragma omp simd
      for (int x = 0; x < L.nx; ++x) {
        d[x] += g[x] * (s.half_dt * u[x] + r[x]);
        r[x] = a * r[x] + h * u[x];
      }
    }
    if (s.image) {
      const T* __restrict forward = s.divergence + compact;
      double* __restrict image = s.image + compact;
#pragma omp simd
      for (int x = 0; x < L.nx; ++x) image[x] += double(d[x]) * double(forward[x]);
    }
    for (int a = 0; a < 3; ++a) std::copy_n(d, L.nx, s.q[a] + row);
    staggered_rows::for_each_cpml_segment<false>(s.pml, L.nx, z, y, -1, [&](int axis, int side, int x0, int x1) {
      const StaggeredCpmlAxis<T>& p = s.pml[axis];
      index_t k;
      int q0;
      staggered_rows::cpml_slab_position<false>(p, axis, side, z, y, x0, k, q0);
      const int step = axis == 2 ? 1 : 0;
      const T* __restrict a = p.a_node + q0;
      const T* __restrict b = p.b_node + q0;
      T* __restrict chi = p.chi[side] + k;
      T* __restrict q = s.q[axis] + row + x0;
      const T* __restrict base = d + x0;
#pragma omp simd
      for (int x = 0; x < x1 - x0; ++x) {
        const T c = chi[x] + base[x];
        chi[x] = b[x * step] * c;
        q[x] += a[x * step] * c;
      }
    });
  });
}

// w-bar_a -= D+_a q_a on every half node that D- reads (the rows' -R .. n + R - 2, the ghost bands of z and y), then
// the free surface's mirror of w_z transposed: w-bar_z[k - 1] += w-bar_z[-k], w-bar_z[-k] = 0.
template <int R, class T>
void transpose_divergence(const StaggeredAdjointStep<T>& s) {
  const FieldLayout L = s.layout;
  const index_t sy = L.stride_y(), sz = L.stride_z();
  const T *gz = s.coef.g[0], *gy = s.coef.g[1], *gx = s.coef.g[2];
  sweep_rows<T>(L, R, [&](int z, int y) {
    const index_t row = L.index(z, y, 0);
    T* __restrict wz = s.w[0];
    T* __restrict wy = s.w[1];
    T* __restrict wx = s.w[2];
    const T* __restrict qz = s.q[0];
    const T* __restrict qy = s.q[1];
    const T* __restrict qx = s.q[2];
#pragma omp simd
    for (int x = -R; x < L.nx + R - 1; ++x) {
      const index_t i = row + x;
      wz[i] -= staggered_d_plus<R>(qz, i, sz, gz);
      wy[i] -= staggered_d_plus<R>(qy, i, sy, gy);
      wx[i] -= staggered_d_plus<R>(qx, i, index_t(1), gx);
    }
  });
  for (int axis = 0; axis < 2; ++axis) {
    const index_t stride = L.stride(axis);
    for (int side = 0; side < 2; ++side)
      staggered_rows::ghost_band_rows(L, R, axis, side, [&](int z, int y) {
        const index_t row = L.index(z, y, 0);
        T* __restrict w = s.w[axis];
        const T* __restrict q = s.q[axis];
#pragma omp simd
        for (int x = 0; x < L.nx; ++x) w[row + x] -= staggered_d_plus<R>(q, row + x, stride, s.coef.g[axis]);
      });
  }
  if (!s.free_surface) return;
  const index_t plane = L.stride_z();
  for (int k = 1; k <= R; ++k) {
    T* __restrict ghost = s.w[0] + L.index(-k, -L.halo, -L.halo);
    T* __restrict image = s.w[0] + L.index(k - 1, -L.halo, -L.halo);
#pragma omp parallel for simd schedule(static)
    for (index_t p = 0; p < plane; ++p) {
      image[p] += ghost[p];
      ghost[p] = T(0);
    }
  }
}

// The half nodes' CPML transposed on the points x0 .. x1 - 1 of a row: c = phi-bar - dt beta w-bar, phi-bar <- b c,
// e += a c.
template <class T>
inline void transpose_half_segment(const StaggeredAdjointStep<T>& s, int axis, int side, int z, int y, int x0, int x1) {
  const StaggeredCpmlAxis<T>& p = s.pml[axis];
  index_t k;
  int q0;
  staggered_rows::cpml_slab_position<true>(p, axis, side, z, y, x0, k, q0);
  const index_t j = s.layout.index(z, y, x0);
  const int step = axis == 2 ? 1 : 0;
  const T* __restrict a = p.a_half + q0;
  const T* __restrict b = p.b_half + q0;
  T* __restrict phi = p.phi[side] + k;
  const T* __restrict w = s.w[axis] + j;
  const T* __restrict bdt = s.bdt[axis] + j;
  T* __restrict e = s.e[axis] + j;
#pragma omp simd
  for (int x = 0; x < x1 - x0; ++x) {
    const T c = phi[x] - bdt[x] * w[x];
    phi[x] = b[x * step] * c;
    e[x] += a[x * step] * c;
  }
}

// The velocity step's transpose: e_a = -dt beta w-bar_a (+ the CPML's a c) on the half nodes the velocity step updates
// (the rows' -R .. n + R - 2, the ghost bands of z and y unless a free surface mirrors the top one), then u-bar -=
// sum_a D-_a e_a on the nodes and, with a free surface, the mirror of u transposed: u-bar[k] += (D-_z e_z)(-k).
template <int R, class T>
void transpose_velocity(const StaggeredAdjointStep<T>& s) {
  const FieldLayout L = s.layout;
  const index_t sy = L.stride_y(), sz = L.stride_z();
  const T *gz = s.coef.g[0], *gy = s.coef.g[1], *gx = s.coef.g[2];
  sweep_rows<T>(L, R, [&](int z, int y) {
    const index_t row = L.index(z, y, 0);
    for (int a = 0; a < 3; ++a) {
      T* __restrict e = s.e[a];
      const T* __restrict w = s.w[a];
      const T* __restrict b = s.bdt[a];
#pragma omp simd
      for (int x = -R; x < L.nx + R - 1; ++x) e[row + x] = -b[row + x] * w[row + x];
    }
    staggered_rows::for_each_cpml_segment<true>(s.pml, L.nx, z, y, -1, [&](int axis, int side, int x0, int x1) {
      transpose_half_segment(s, axis, side, z, y, x0, x1);
    });
  });
  for (int axis = 0; axis < 2; ++axis)
    for (int side = 0; side < 2; ++side) {
      if (side == 0 && axis == 0 && s.free_surface) continue;
      staggered_rows::ghost_band_rows(L, R, axis, side, [&](int z, int y) {
        const index_t row = L.index(z, y, 0);
        T* __restrict e = s.e[axis];
        const T* __restrict w = s.w[axis];
        const T* __restrict b = s.bdt[axis];
#pragma omp simd
        for (int x = 0; x < L.nx; ++x) e[row + x] = -b[row + x] * w[row + x];
        staggered_rows::for_each_cpml_segment<true>(s.pml, L.nx, z, y, axis, [&](int ax, int sd, int x0, int x1) {
          transpose_half_segment(s, ax, sd, z, y, x0, x1);
        });
      });
    }
  sweep_rows<T>(L, R, [&](int z, int y) {
    const index_t row = L.index(z, y, 0);
    T* __restrict u = s.u;
    const T* __restrict ez = s.e[0];
    const T* __restrict ey = s.e[1];
    const T* __restrict ex = s.e[2];
#pragma omp simd
    for (int x = 0; x < L.nx; ++x) {
      const index_t i = row + x;
      u[i] -= staggered_d_minus<R>(ez, i, sz, gz) + staggered_d_minus<R>(ey, i, sy, gy) +
              staggered_d_minus<R>(ex, i, index_t(1), gx);
    }
  });
  if (!s.free_surface) return;
  for (int k = 1; k < R; ++k)
#pragma omp parallel for schedule(static)
    for (int y = 0; y < L.ny; ++y) {
      T* __restrict u = s.u;
      const T* __restrict ez = s.e[0];
#pragma omp simd
      for (int x = 0; x < L.nx; ++x) u[L.index(k, y, x)] += staggered_d_minus<R>(ez, L.index(-k, y, x), sz, gz);
    }
}

// buoyancy_image[a] += w-bar_a dw_a (StaggeredAdjointStep): dw_a / (dt beta_a) = -(D+_a u + phi_a) is the derivative of
// the velocity step's w_a with respect to dt beta_a.
template <class T>
void buoyancy_imaging(const StaggeredAdjointStep<T>& s) {
  const std::ptrdiff_t n = std::ptrdiff_t(s.layout.size());
  for (int a = 0; a < 3; ++a) {
    double* __restrict image = s.buoyancy_image[a];
    const T* __restrict w = s.w[a];
    const T* __restrict dw = s.velocity_increment[a];
#pragma omp parallel for simd schedule(static)
    for (std::ptrdiff_t i = 0; i < n; ++i) image[i] += double(w[i]) * double(dw[i]);
  }
}

template <int R, class T>
void transpose_radius(const StaggeredAdjointStep<T>& s) {
  transpose_pressure_rows<R>(s);
  transpose_divergence<R>(s);
  if (s.buoyancy_image[0]) buoyancy_imaging(s);
  transpose_velocity<R>(s);
}

}  // namespace

template <class T>
void staggered_adjoint_step(const StaggeredAdjointStep<T>& s) {
  with_radius(s.coef.radius, [&](auto R) { transpose_radius<decltype(R)::value>(s); });
}

template void staggered_adjoint_step<float>(const StaggeredAdjointStep<float>&);
template void staggered_adjoint_step<double>(const StaggeredAdjointStep<double>&);

}  // namespace specwave::cpu
