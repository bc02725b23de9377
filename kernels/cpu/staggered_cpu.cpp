// CPU loops of the staggered velocity-pressure step (docs/numerics.md, "Variable density"). Each step is one sweep over
// the grid's node rows (x rows, vectorised, in blocks of rows along y swept through z), whose rows in a CPML layer get
// their correction right after the row's update while it is in cache (w -= dt beta phi, u -= dt K chi: the
// specification's single expression, rounded in two parts), then, for the velocity, the half nodes outside the grid
// that D- reads (the ghost bands along z and y; along x they are in the rows).
#include "kernels/cpu/staggered_cpu.hpp"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "kernels/cpu/fdtd_cpu.hpp"
#include "kernels/cpu/staggered_rows.hpp"

namespace specwave::cpu {
namespace {

using staggered_rows::sweep_rows;

// The CPML correction of axis `axis`, face `side`, on the points x0 .. x1 - 1 of row (z, y), which lie in that face's
// layer: the half nodes' (phi = b phi + a D+ u, w -= dt beta phi) or the nodes' (chi = b chi + a D- w,
// u -= dt K chi). The profile varies along x on the x faces only.
template <int R, bool Half, class T>
inline void cpml_segment(const StaggeredStep<T>& s, int axis, int side, int z, int y, int x0, int x1, T* divergence) {
  const FieldLayout& L = s.layout;
  const StaggeredCpmlAxis<T>& p = s.pml[axis];
  index_t k;
  int q;
  staggered_rows::cpml_slab_position<Half>(p, axis, side, z, y, x0, k, q);
  const index_t j = L.index(z, y, x0), stride = L.stride(axis);
  const int step = axis == 2 ? 1 : 0, n = x1 - x0;
  const T* g = s.coef.g[axis];
  const T* __restrict a = (Half ? p.a_half : p.a_node) + q;
  const T* __restrict b = (Half ? p.b_half : p.b_node) + q;
  T* __restrict memory = Half ? p.phi[side] : p.chi[side];
  if constexpr (Half) {
    (void)divergence;
    T* __restrict w = s.w[axis];
    const T* __restrict u = s.u;
    const T* __restrict bdt = s.bdt[axis];
#pragma omp simd
    for (int x = 0; x < n; ++x) {
      const T ph = b[x * step] * memory[k + x] + a[x * step] * staggered_d_plus<R>(u, j + x, stride, g);
      memory[k + x] = ph;
      w[j + x] = staggered_velocity(w[j + x], bdt[j + x], ph);
    }
    if (T* __restrict inc = s.increment_out[axis])
#pragma omp simd
      for (int x = 0; x < n; ++x) inc[j + x] -= bdt[j + x] * memory[k + x];
  } else {
    // The nodes' chi joins the row's divergence (`divergence`, indexed by x), which the pressure update then reads.
    const T* __restrict w = s.w[axis];
    T* __restrict d = divergence + x0;
#pragma omp simd
    for (int x = 0; x < n; ++x) {
      const T ch = b[x * step] * memory[k + x] + a[x * step] * staggered_d_minus<R>(w, j + x, stride, g);
      memory[k + x] = ch;
      d[x] += ch;
    }
  }
}

// The CPML corrections of row (z, y) (staggered_rows::for_each_cpml_segment).
template <int R, bool Half, class T>
inline void cpml_row(const StaggeredStep<T>& s, int z, int y, int only_axis = -1, T* divergence = nullptr) {
  staggered_rows::for_each_cpml_segment<Half>(
      s.pml, s.layout.nx, z, y, only_axis,
      [&](int axis, int side, int x0, int x1) { cpml_segment<R, Half>(s, axis, side, z, y, x0, x1, divergence); });
}

// With Increment, the increments too (StaggeredStep::increment_out).
template <int R, bool Increment, class T>
void velocity_sweep(const StaggeredStep<T>& s) {
  const FieldLayout L = s.layout;
  const index_t sy = L.stride_y(), sz = L.stride_z();
  const T *gz = s.coef.g[0], *gy = s.coef.g[1], *gx = s.coef.g[2];
  const int x_begin = s.ghost_band[2][0] ? -R : 0, x_end = s.ghost_band[2][1] ? L.nx + R - 1 : L.nx;
  sweep_rows<T>(L, R, [&](int z, int y) {
    const index_t row = L.index(z, y, 0);
    const T* __restrict u = s.u;
    T* __restrict wz = s.w[0];
    T* __restrict wy = s.w[1];
    T* __restrict wx = s.w[2];
    const T* __restrict bz = s.bdt[0];
    const T* __restrict by = s.bdt[1];
    const T* __restrict bx = s.bdt[2];
    // The row's x half nodes 0 .. nx - 1 and, beyond the grid's own x faces, -R .. -1 and nx .. nx + R - 2: w_x's
    // ghost band (there dt beta_z and dt beta_y are 0, so w_z and w_y stay 0; D- reads neither there).
    T* __restrict iz = s.increment_out[0];
    T* __restrict iy = s.increment_out[1];
    T* __restrict ix = s.increment_out[2];
#pragma omp simd
    for (int x = x_begin; x < x_end; ++x) {
      const index_t i = row + x;
      const T dz = staggered_d_plus<R>(u, i, sz, gz), dy = staggered_d_plus<R>(u, i, sy, gy),
              dx = staggered_d_plus<R>(u, i, index_t(1), gx);
      wz[i] = staggered_velocity(wz[i], bz[i], dz);
      wy[i] = staggered_velocity(wy[i], by[i], dy);
      wx[i] = staggered_velocity(wx[i], bx[i], dx);
      if constexpr (Increment) iz[i] = -(bz[i] * dz), iy[i] = -(by[i] * dy), ix[i] = -(bx[i] * dx);
    }
    cpml_row<R, true, T>(s, z, y);
  });
}

// w_z and w_y on the half nodes outside the grid along their axis (w_x's: velocity_sweep): -R .. -1 (unless a free
// surface mirrors them) and n .. n + R - 2, with their CPML (they lie in the layer of an absorbing face), beyond the
// grid's own faces only (ghost_band). D+ there reads the zeros of u's halo (staggered_halo).
template <int R, class T>
void velocity_ghost_bands(const StaggeredStep<T>& s) {
  const FieldLayout& L = s.layout;
  for (int axis = 0; axis < 2; ++axis) {
    const index_t stride = L.stride(axis);
    const T* g = s.coef.g[axis];
    for (int side = 0; side < 2; ++side) {
      if ((side == 0 && axis == 0 && s.free_surface) || !s.ghost_band[axis][side]) continue;
      staggered_rows::ghost_band_rows(L, R, axis, side, [&](int z, int y) {
        const index_t row = L.index(z, y, 0);
        T* __restrict w = s.w[axis];
        const T* __restrict b = s.bdt[axis];
        const T* __restrict u = s.u;
#pragma omp simd
        for (int x = 0; x < L.nx; ++x)
          w[row + x] = staggered_velocity(w[row + x], b[row + x], staggered_d_plus<R>(u, row + x, stride, g));
        if (T* __restrict inc = s.increment_out[axis])
#pragma omp simd
          for (int x = 0; x < L.nx; ++x) inc[row + x] = -(b[row + x] * staggered_d_plus<R>(u, row + x, stride, g));
        cpml_row<R, true, T>(s, z, y, axis);
      });
    }
  }
}

// The pressure update of one row from its divergence D (CPML included): u -= dt K D, and with attenuation the memory
// variables' r_l^{n+1} = a_l r_l^n + g_l D and u += (dt / 2) sum_l (r_l^{n+1} + r_l^n).
template <class T>
inline void pressure_row(const StaggeredStep<T>& s, index_t row, std::size_t compact, int nx, const T* divergence) {
  T* __restrict u = s.u + row;
  const T* __restrict kdt = s.kdt + row;
  const T* __restrict d = divergence;
  if (s.mechanisms == 0) {
#pragma omp simd
    for (int x = 0; x < nx; ++x) u[x] = staggered_pressure(u[x], kdt[x], d[x]);
    return;
  }
  T relax[1024];  // sum_l (r_l^{n+1} + r_l^n) for a chunk of the row
  for (int x0 = 0; x0 < nx; x0 += 1024) {
    const int n = std::min(1024, nx - x0);
    std::fill_n(relax, n, T(0));
    for (int l = 0; l < s.mechanisms; ++l) {
      T* __restrict r = s.r[l] + compact + x0;
      const T* __restrict g = s.g[l] + compact + x0;
      const T a = s.decay[l];
#pragma omp simd
      for (int x = 0; x < n; ++x) {
        const T next = staggered_memory(a, r[x], g[x], d[x0 + x]);
        relax[x] += r[x] + next;
        r[x] = next;
      }
    }
#pragma omp simd
    for (int x = 0; x < n; ++x)
      u[x0 + x] = staggered_pressure(u[x0 + x], kdt[x0 + x], d[x0 + x]) + s.half_dt * relax[x];
  }
}

template <int R, class T>
void pressure_sweep(const StaggeredStep<T>& s) {
  const FieldLayout L = s.layout;
  const index_t sy = L.stride_y(), sz = L.stride_z();
  const T *gz = s.coef.g[0], *gy = s.coef.g[1], *gx = s.coef.g[2];
  std::vector<T> buffers(std::size_t(omp_get_max_threads()) * L.nx);
  sweep_rows<T>(L, R, [&](int z, int y) {
    const index_t row = L.index(z, y, 0);
    const T* __restrict wz = s.w[0];
    const T* __restrict wy = s.w[1];
    const T* __restrict wx = s.w[2];
    T* __restrict d = buffers.data() + std::size_t(omp_get_thread_num()) * L.nx;
#pragma omp simd
    for (int x = 0; x < L.nx; ++x) {
      const index_t i = row + x;
      d[x] = staggered_d_minus<R>(wz, i, sz, gz) + staggered_d_minus<R>(wy, i, sy, gy) +
             staggered_d_minus<R>(wx, i, index_t(1), gx);
    }
    cpml_row<R, false>(s, z, y, -1, d);
    const std::size_t compact = (std::size_t(z) * L.ny + y) * L.nx;
    if (s.divergence_out) std::copy_n(d, L.nx, s.divergence_out + compact);
    pressure_row(s, row, compact, L.nx, d);
  });
}

// Free surface: the odd mirror of u, u[-k] = -u[k], and the even mirror of w_z, w_z[-k] = w_z[k - 1], on the R planes
// above z = 0 that the stencils read (whole padded planes).
template <class T>
void mirror_top_pressure(const FieldLayout& L, int R, T* u) {
  const index_t plane = L.stride_z();
  for (int k = 1; k <= R; ++k) {
    T* __restrict ghost = u + L.index(-k, -L.halo, -L.halo);
    const T* __restrict image = u + L.index(k, -L.halo, -L.halo);
#pragma omp parallel for simd schedule(static)
    for (index_t p = 0; p < plane; ++p) ghost[p] = -image[p];
  }
}

template <class T>
void mirror_top_velocity(const FieldLayout& L, int R, T* wz) {
  const index_t plane = L.stride_z();
  for (int k = 1; k <= R; ++k)
    std::copy_n(wz + L.index(k - 1, -L.halo, -L.halo), plane, wz + L.index(-k, -L.halo, -L.halo));
}

template <int R, class T>
void velocity_radius(const StaggeredStep<T>& s) {
  if (s.free_surface) mirror_top_pressure(s.layout, R, s.u);
  if (s.increment_out[0])
    velocity_sweep<R, true>(s);
  else
    velocity_sweep<R, false>(s);
  velocity_ghost_bands<R>(s);
}

template <int R, class T>
void pressure_radius(const StaggeredStep<T>& s) {
  if (s.free_surface) mirror_top_velocity(s.layout, R, s.w[0]);
  pressure_sweep<R>(s);
}

}  // namespace

template <class T>
void staggered_velocity_step(const StaggeredStep<T>& s) {
  with_radius(s.coef.radius, [&](auto R) { velocity_radius<decltype(R)::value>(s); });
}

template <class T>
void staggered_pressure_step(const StaggeredStep<T>& s) {
  with_radius(s.coef.radius, [&](auto R) { pressure_radius<decltype(R)::value>(s); });
}

template void staggered_velocity_step<float>(const StaggeredStep<float>&);
template void staggered_velocity_step<double>(const StaggeredStep<double>&);
template void staggered_pressure_step<float>(const StaggeredStep<float>&);
template void staggered_pressure_step<double>(const StaggeredStep<double>&);

}  // namespace specwave::cpu
