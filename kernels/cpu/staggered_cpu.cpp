// CPU loops of the staggered velocity-pressure step (docs/numerics.md, "Variable density"). Each step is a main
// sweep over the grid's nodes in x rows (no branches, vectorised), then small sweeps over what the main one leaves:
// the half nodes outside the grid that D- reads (the ghost bands), and the CPML corrections on the layers' points
// (w -= dt beta phi, u -= dt K chi: the same sums as the specification's single expression, rounded in two parts).
#include "kernels/cpu/staggered_cpu.hpp"

#include <algorithm>

#include "kernels/cpu/fdtd_cpu.hpp"

namespace specwave::cpu {
namespace {

// Index of grid coordinates c (interior coordinates, the axis' one may lie in the halo).
inline index_t at(const FieldLayout& L, const int c[3]) { return L.index(c[0], c[1], c[2]); }

// D+_a u at the half node of coordinates c, reading only nodes inside the grid along a (u is zero outside it): for
// half nodes in or next to the halo, where the unchecked stencil would leave the padded array.
template <class T>
T d_plus_checked(const StaggeredStep<T>& s, int axis, const int c[3]) {
  const FieldLayout& L = s.layout;
  const int n = L.extent(axis), i = c[axis];
  const index_t stride = L.stride(axis), base = at(L, c);
  T sum = 0;
  for (int k = 1; k <= s.coef.radius; ++k) {
    const int hi = i + k, lo = i - k + 1;
    const T u_hi = hi >= 0 && hi < n ? s.u[base + index_t(k) * stride] : T(0);
    const T u_lo = lo >= 0 && lo < n ? s.u[base - index_t(k - 1) * stride] : T(0);
    sum += s.coef.g[axis][k] * (u_hi - u_lo);
  }
  return sum;
}

template <int R, class T>
void velocity_main(const StaggeredStep<T>& s) {
  const FieldLayout L = s.layout;
  const index_t sy = L.stride_y(), sz = L.stride_z();
  const T *gz = s.coef.g[0], *gy = s.coef.g[1], *gx = s.coef.g[2];
#pragma omp parallel for collapse(2) schedule(static)
  for (int z = 0; z < L.nz; ++z)
    for (int y = 0; y < L.ny; ++y) {
      const index_t row = L.index(z, y, 0);
      const T* __restrict u = s.u;
      T* __restrict wz = s.w[0];
      T* __restrict wy = s.w[1];
      T* __restrict wx = s.w[2];
      const T* __restrict bz = s.bdt[0];
      const T* __restrict by = s.bdt[1];
      const T* __restrict bx = s.bdt[2];
#pragma omp simd
      for (int x = 0; x < L.nx; ++x) {
        const index_t i = row + x;
        wz[i] = staggered_velocity(wz[i], bz[i], staggered_d_plus<R>(u, i, sz, gz));
        wy[i] = staggered_velocity(wy[i], by[i], staggered_d_plus<R>(u, i, sy, gy));
        wx[i] = staggered_velocity(wx[i], bx[i], staggered_d_plus<R>(u, i, index_t(1), gx));
      }
    }
}

// w_a on the half nodes outside the grid along a: -R .. -1 (unless a free surface mirrors them) and n .. n + R - 2.
template <class T>
void velocity_ghost_bands(const StaggeredStep<T>& s) {
  const FieldLayout& L = s.layout;
  const int R = s.coef.radius;
  for (int axis = 0; axis < 3; ++axis) {
    const int n = L.extent(axis);
    const int o1 = axis == 0 ? 1 : 0, o2 = axis == 2 ? 1 : 2;  // the other two axes, in order
    for (int side = 0; side < 2; ++side) {
      if (side == 0 && axis == 0 && s.free_surface) continue;
      const int begin = side == 0 ? -R : n, end = side == 0 ? 0 : n + R - 1;
#pragma omp parallel for collapse(2) schedule(static)
      for (int p = 0; p < L.extent(o1); ++p)
        for (int q = 0; q < L.extent(o2); ++q)
          for (int i = begin; i < end; ++i) {
            int c[3];
            c[axis] = i, c[o1] = p, c[o2] = q;
            const index_t j = at(L, c);
            s.w[axis][j] = staggered_velocity(s.w[axis][j], s.bdt[axis][j], d_plus_checked(s, axis, c));
          }
    }
  }
}

// The CPML of the half nodes: phi = b phi + a D+ u, w -= dt beta phi, on each absorbing face's layer.
template <int R, class T>
void velocity_cpml(const StaggeredStep<T>& s) {
  const FieldLayout& L = s.layout;
  for (int axis = 0; axis < 3; ++axis) {
    const StaggeredCpmlAxis<T>& p = s.pml[axis];
    const int n = L.extent(axis);
    const index_t stride = L.stride(axis);
    for (int side = 0; side < 2; ++side) {
      if (!p.face[side]) continue;
      const int lo[3] = {axis == 0 ? p.half_begin(side) : 0, axis == 1 ? p.half_begin(side) : 0,
                         axis == 2 ? p.half_begin(side) : 0};
      const int hi[3] = {axis == 0 ? p.half_end(side) : L.nz, axis == 1 ? p.half_end(side) : L.ny,
                         axis == 2 ? p.half_end(side) : L.nx};
      T* phi = p.phi[side];
#pragma omp parallel for collapse(2) schedule(static)
      for (int z = lo[0]; z < hi[0]; ++z)
        for (int y = lo[1]; y < hi[1]; ++y)
          for (int x = lo[2]; x < hi[2]; ++x) {
            const int c[3] = {z, y, x};
            const int i = c[axis];
            const index_t j = at(L, c);
            const T g = i >= 0 && i < n ? staggered_d_plus<R>(s.u, j, stride, s.coef.g[axis]) : d_plus_checked(s, axis, c);
            int sc[3] = {z, y, x};
            sc[axis] = p.slab_coordinate(side, i);
            const index_t k = sc[0] * p.slab_stride[0] + sc[1] * p.slab_stride[1] + sc[2] * p.slab_stride[2];
            const T ph = p.b_half[i + R] * phi[k] + p.a_half[i + R] * g;
            phi[k] = ph;
            s.w[axis][j] = staggered_velocity(s.w[axis][j], s.bdt[axis][j], ph);
          }
    }
  }
}

template <int R, class T>
void pressure_main(const StaggeredStep<T>& s) {
  const FieldLayout L = s.layout;
  const index_t sy = L.stride_y(), sz = L.stride_z();
  const T *gz = s.coef.g[0], *gy = s.coef.g[1], *gx = s.coef.g[2];
#pragma omp parallel for collapse(2) schedule(static)
  for (int z = 0; z < L.nz; ++z)
    for (int y = 0; y < L.ny; ++y) {
      const index_t row = L.index(z, y, 0);
      T* __restrict u = s.u;
      const T* __restrict wz = s.w[0];
      const T* __restrict wy = s.w[1];
      const T* __restrict wx = s.w[2];
      const T* __restrict kdt = s.kdt;
#pragma omp simd
      for (int x = 0; x < L.nx; ++x) {
        const index_t i = row + x;
        const T div = staggered_d_minus<R>(wz, i, sz, gz) + staggered_d_minus<R>(wy, i, sy, gy) +
                      staggered_d_minus<R>(wx, i, index_t(1), gx);
        u[i] = staggered_pressure(u[i], kdt[i], div);
      }
    }
}

// The CPML of the nodes: chi = b chi + a D- w, u -= dt K chi.
template <int R, class T>
void pressure_cpml(const StaggeredStep<T>& s) {
  const FieldLayout& L = s.layout;
  for (int axis = 0; axis < 3; ++axis) {
    const StaggeredCpmlAxis<T>& p = s.pml[axis];
    const index_t stride = L.stride(axis);
    for (int side = 0; side < 2; ++side) {
      if (!p.face[side]) continue;
      const int lo[3] = {axis == 0 ? p.node_begin(side) : 0, axis == 1 ? p.node_begin(side) : 0,
                         axis == 2 ? p.node_begin(side) : 0};
      const int hi[3] = {axis == 0 ? p.node_end(side) : L.nz, axis == 1 ? p.node_end(side) : L.ny,
                         axis == 2 ? p.node_end(side) : L.nx};
      T* chi = p.chi[side];
#pragma omp parallel for collapse(2) schedule(static)
      for (int z = lo[0]; z < hi[0]; ++z)
        for (int y = lo[1]; y < hi[1]; ++y)
          for (int x = lo[2]; x < hi[2]; ++x) {
            const int c[3] = {z, y, x};
            const int i = c[axis];
            const index_t j = at(L, c);
            int sc[3] = {z, y, x};
            sc[axis] = p.slab_coordinate(side, i);
            const index_t k = sc[0] * p.slab_stride[0] + sc[1] * p.slab_stride[1] + sc[2] * p.slab_stride[2];
            const T ch = p.b_node[i] * chi[k] + p.a_node[i] * staggered_d_minus<R>(s.w[axis], j, stride, s.coef.g[axis]);
            chi[k] = ch;
            s.u[j] = staggered_pressure(s.u[j], s.kdt[j], ch);
          }
    }
  }
}

// Free surface: the even mirror of w_z above z = 0, w_z[-k] = w_z[k - 1] (whole padded planes).
template <class T>
void mirror_top_velocity(const FieldLayout& L, T* wz) {
  const index_t plane = L.stride_z();
  for (int k = 1; k <= L.halo; ++k) std::copy_n(wz + L.index(k - 1, -L.halo, -L.halo), plane, wz + L.index(-k, -L.halo, -L.halo));
}

template <int R, class T>
void velocity_radius(const StaggeredStep<T>& s) {
  if (s.free_surface) mirror_top_ghosts(s.layout, s.u);
  velocity_main<R>(s);
  velocity_ghost_bands(s);
  velocity_cpml<R>(s);
}

template <int R, class T>
void pressure_radius(const StaggeredStep<T>& s) {
  if (s.free_surface) mirror_top_velocity(s.layout, s.w[0]);
  pressure_main<R>(s);
  pressure_cpml<R>(s);
}

}  // namespace

template <class T>
void staggered_velocity_step(const StaggeredStep<T>& s) {
  switch (s.coef.radius) {
    case 1: return velocity_radius<1>(s);
    case 2: return velocity_radius<2>(s);
    case 3: return velocity_radius<3>(s);
    case 4: return velocity_radius<4>(s);
    case 5: return velocity_radius<5>(s);
    case 6: return velocity_radius<6>(s);
    case 7: return velocity_radius<7>(s);
    case 8: return velocity_radius<8>(s);
    default: break;
  }
}

template <class T>
void staggered_pressure_step(const StaggeredStep<T>& s) {
  switch (s.coef.radius) {
    case 1: return pressure_radius<1>(s);
    case 2: return pressure_radius<2>(s);
    case 3: return pressure_radius<3>(s);
    case 4: return pressure_radius<4>(s);
    case 5: return pressure_radius<5>(s);
    case 6: return pressure_radius<6>(s);
    case 7: return pressure_radius<7>(s);
    case 8: return pressure_radius<8>(s);
    default: break;
  }
}

template void staggered_velocity_step<float>(const StaggeredStep<float>&);
template void staggered_velocity_step<double>(const StaggeredStep<double>&);
template void staggered_pressure_step<float>(const StaggeredStep<float>&);
template void staggered_pressure_step<double>(const StaggeredStep<double>&);

}  // namespace specwave::cpu
