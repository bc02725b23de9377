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
      // The row's x half nodes -R .. nx + R - 2: those outside the grid are w_x's ghost band (there dt beta_z and
      // dt beta_y are 0, so w_z and w_y stay 0; D- reads neither there).
#pragma omp simd
      for (int x = -R; x < L.nx + R - 1; ++x) {
        const index_t i = row + x;
        wz[i] = staggered_velocity(wz[i], bz[i], staggered_d_plus<R>(u, i, sz, gz));
        wy[i] = staggered_velocity(wy[i], by[i], staggered_d_plus<R>(u, i, sy, gy));
        wx[i] = staggered_velocity(wx[i], bx[i], staggered_d_plus<R>(u, i, index_t(1), gx));
      }
    }
}

// w_z and w_y on the half nodes outside the grid along their axis (w_x's: velocity_main): -R .. -1 (unless a free
// surface mirrors them) and n .. n + R - 2.
// D+ there reads up to R - 1 nodes beyond the halo, which are zero: the next or previous row's or plane's halo along x
// and y, and along z the R zero planes that u carries beyond its halo (StaggeredStep::u).
template <int R, class T>
void velocity_ghost_bands(const StaggeredStep<T>& s) {
  const FieldLayout& L = s.layout;
  for (int axis = 0; axis < 2; ++axis) {  // x's band is in velocity_main's rows
    const int n = L.extent(axis);
    const index_t stride = L.stride(axis);
    const T* g = s.coef.g[axis];
    for (int side = 0; side < 2; ++side) {
      if (side == 0 && axis == 0 && s.free_surface) continue;
      int lo[3] = {0, 0, 0}, hi[3] = {L.nz, L.ny, L.nx};
      lo[axis] = side == 0 ? -R : n, hi[axis] = side == 0 ? 0 : n + R - 1;
#pragma omp parallel for collapse(2) schedule(static)
      for (int z = lo[0]; z < hi[0]; ++z)
        for (int y = lo[1]; y < hi[1]; ++y) {
          const index_t row = L.index(z, y, 0);
          T* __restrict w = s.w[axis];
          const T* __restrict b = s.bdt[axis];
          const T* __restrict u = s.u;
#pragma omp simd
          for (int x = lo[2]; x < hi[2]; ++x)
            w[row + x] = staggered_velocity(w[row + x], b[row + x], staggered_d_plus<R>(u, row + x, stride, g));
        }
    }
  }
}

// The box of a CPML face: the layer's half nodes (or nodes) along `axis`, the grid's nodes along the others.
struct FaceBox {
  int lo[3], hi[3];
};
template <class T>
FaceBox face_box(const FieldLayout& L, const StaggeredCpmlAxis<T>& p, int axis, int side, bool half) {
  FaceBox b{{0, 0, 0}, {L.nz, L.ny, L.nx}};
  b.lo[axis] = half ? p.half_begin(side) : p.node_begin(side);
  b.hi[axis] = half ? p.half_end(side) : p.node_end(side);
  return b;
}

// Runs fn(field index, slab index, profile index, n) for each x row of a face's box: n points from those indices on,
// contiguous in the field and the slab; the profile index (into a_half/b_half at i + R, or a_node/b_node at i) is that
// of the row's first point and advances with x only on the x faces.
template <class T, class Fn>
void for_face_rows(const FieldLayout& L, const StaggeredCpmlAxis<T>& p, int axis, int side, bool half, Fn&& fn) {
  const FaceBox b = face_box(L, p, axis, side, half);
  const int shift = half ? p.radius : 0;
#pragma omp parallel for collapse(2) schedule(static)
  for (int z = b.lo[0]; z < b.hi[0]; ++z)
    for (int y = b.lo[1]; y < b.hi[1]; ++y) {
      int sc[3] = {z, y, b.lo[2]};
      const int c[3] = {z, y, b.lo[2]};
      sc[axis] = p.slab_coordinate(side, c[axis]);
      const index_t k = sc[0] * p.slab_stride[0] + sc[1] * p.slab_stride[1] + sc[2] * p.slab_stride[2];
      fn(L.index(z, y, b.lo[2]), k, c[axis] + shift, b.hi[2] - b.lo[2]);
    }
}

// The CPML of the half nodes: phi = b phi + a D+ u, w -= dt beta phi, on each absorbing face's layer.
template <int R, class T>
void velocity_cpml(const StaggeredStep<T>& s) {
  const FieldLayout& L = s.layout;
  for (int axis = 0; axis < 3; ++axis) {
    const StaggeredCpmlAxis<T>& p = s.pml[axis];
    const index_t stride = L.stride(axis);
    const T* g = s.coef.g[axis];
    for (int side = 0; side < 2; ++side) {
      if (!p.face[side]) continue;
      T* __restrict phi = p.phi[side];
      T* __restrict w = s.w[axis];
      const T* __restrict bdt = s.bdt[axis];
      const T* __restrict u = s.u;
      const int step = axis == 2 ? 1 : 0;  // the profile varies along x on the x faces only
      for_face_rows(L, p, axis, side, true, [&](index_t j, index_t k, int q, int n) {
        const T* __restrict a = p.a_half + q;
        const T* __restrict b = p.b_half + q;
#pragma omp simd
        for (int x = 0; x < n; ++x) {
          const T ph = b[x * step] * phi[k + x] + a[x * step] * staggered_d_plus<R>(u, j + x, stride, g);
          phi[k + x] = ph;
          w[j + x] = staggered_velocity(w[j + x], bdt[j + x], ph);
        }
      });
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
    const T* g = s.coef.g[axis];
    for (int side = 0; side < 2; ++side) {
      if (!p.face[side]) continue;
      T* __restrict chi = p.chi[side];
      T* __restrict u = s.u;
      const T* __restrict w = s.w[axis];
      const T* __restrict kdt = s.kdt;
      const int step = axis == 2 ? 1 : 0;
      for_face_rows(L, p, axis, side, false, [&](index_t j, index_t k, int q, int n) {
        const T* __restrict a = p.a_node + q;
        const T* __restrict b = p.b_node + q;
#pragma omp simd
        for (int x = 0; x < n; ++x) {
          const T ch = b[x * step] * chi[k + x] + a[x * step] * staggered_d_minus<R>(w, j + x, stride, g);
          chi[k + x] = ch;
          u[j + x] = staggered_pressure(u[j + x], kdt[j + x], ch);
        }
      });
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
  velocity_ghost_bands<R>(s);
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
