#include "kernels/cpu/fdtd_cpu.hpp"

#include <stdexcept>

namespace specwave::cpu {
namespace {

// Odd mirror above the free surface: u[-k] = -u[k], k = 1..halo (whole padded planes).
template <class T>
void mirror_top_ghosts(const FieldLayout& layout, T* u) {
  const index_t plane = layout.stride_z();
  const index_t surface = index_t(layout.halo) * plane;
  for (int k = 1; k <= layout.halo; ++k) {
    T* ghost = u + surface - k * plane;
    const T* image = u + surface + k * plane;
#pragma omp parallel for simd schedule(static)
    for (index_t p = 0; p < plane; ++p) ghost[p] = -image[p];
  }
}

// Step 1 of the CPML: psi_a^n = b psi_a^{n-1} + a D1_a u^n on the layer points of one face.
template <int R, class T>
void update_psi(const FdtdStep<T>& s, int axis, int side) {
  const CpmlAxis<T>& p = s.pml[axis];
  const FieldLayout& L = s.layout;
  int lo[3] = {0, 0, 0}, hi[3] = {L.nz, L.ny, L.nx};
  lo[axis] = side == 0 ? 0 : p.n - p.width;
  hi[axis] = side == 0 ? p.width : p.n;
  const index_t stride_u = L.stride(axis);
  const T* c1 = s.coef.d1[axis];
  T* psi = p.psi[side];
#pragma omp parallel for collapse(2) schedule(static)
  for (int z = lo[0]; z < hi[0]; ++z)
    for (int y = lo[1]; y < hi[1]; ++y)
      for (int x = lo[2]; x < hi[2]; ++x) {
        int c[3] = {z, y, x};
        const int i_axis = c[axis];
        c[axis] = p.slab_coordinate(i_axis);
        const index_t j = c[0] * p.slab_stride[0] + c[1] * p.slab_stride[1] + c[2] * p.slab_stride[2];
        psi[j] = cpml_memory(p.b[i_axis], p.a[i_axis], psi[j], first_derivative<R>(s.u, L.index(z, y, x), stride_u, c1));
      }
}

// Step 2 + 3 at one point that lies in the layer of at least one axis.
template <int R, class T>
inline void update_point_in_layer(const FdtdStep<T>& s, int z, int y, int x) {
  const FieldLayout& L = s.layout;
  const index_t i = L.index(z, y, x);
  T lap = laplacian<R>(s.u, i, L.stride_y(), L.stride_z(), s.coef);
  const int c[3] = {z, y, x};
  for (int axis = 0; axis < 3; ++axis) {
    const CpmlAxis<T>& p = s.pml[axis];
    if (!p.in_layer(c[axis])) continue;
    int sc[3] = {z, y, x};
    sc[axis] = p.slab_coordinate(c[axis]);
    const index_t j = sc[0] * p.slab_stride[0] + sc[1] * p.slab_stride[1] + sc[2] * p.slab_stride[2];
    const int side = p.side(c[axis]);
    lap += cpml_correction<R>(s.u, i, L.stride(axis), p.psi[side], p.zeta[side], j, p.slab_stride[axis],
                              s.coef.d2[axis], s.coef.d1[axis], p.a[c[axis]], p.b[c[axis]]);
  }
  s.u_prev[i] = leapfrog(s.u[i], s.u_prev[i], s.vel2dt2[i], lap);
}

template <int R, class T>
void step_radius(const FdtdStep<T>& s) {
  const FieldLayout& L = s.layout;
  if (L.halo != R) throw std::logic_error("fdtd_step: field halo must equal the stencil radius");
  if (s.free_surface) mirror_top_ghosts(L, s.u);
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side)
      if (s.pml[axis].face[side]) update_psi<R>(s, axis, side);

  const index_t sy = L.stride_y(), sz = L.stride_z();
  const CpmlAxis<T>& px = s.pml[2];
  const int x_begin = px.face[0] ? px.width : 0;
  const int x_end = px.face[1] ? L.nx - px.width : L.nx;
#pragma omp parallel for collapse(2) schedule(static)
  for (int z = 0; z < L.nz; ++z)
    for (int y = 0; y < L.ny; ++y) {
      if (s.pml[0].in_layer(z) || s.pml[1].in_layer(y)) {
        for (int x = 0; x < L.nx; ++x) update_point_in_layer<R>(s, z, y, x);
        continue;
      }
      for (int x = 0; x < x_begin; ++x) update_point_in_layer<R>(s, z, y, x);
      // Interior: the fused stencil + time update, vectorised along x.
      const index_t row = L.index(z, y, 0);
      const T* __restrict u = s.u;
      T* __restrict out = s.u_prev;
      const T* __restrict vel = s.vel2dt2;
      const FdtdCoefficients<T> coef = s.coef;
#pragma omp simd
      for (int x = x_begin; x < x_end; ++x) {
        const index_t i = row + x;
        out[i] = leapfrog(u[i], out[i], vel[i], laplacian<R>(u, i, sy, sz, coef));
      }
      for (int x = x_end; x < L.nx; ++x) update_point_in_layer<R>(s, z, y, x);
    }
}

}  // namespace

template <class T>
void fdtd_step(const FdtdStep<T>& s) {
  switch (s.coef.radius) {
    case 1: return step_radius<1>(s);
    case 2: return step_radius<2>(s);
    case 3: return step_radius<3>(s);
    case 4: return step_radius<4>(s);
    case 5: return step_radius<5>(s);
    case 6: return step_radius<6>(s);
    case 7: return step_radius<7>(s);
    case 8: return step_radius<8>(s);
    default: throw std::invalid_argument("fdtd_step: stencil radius must be 1..8");
  }
}

template <class T>
void zero_top_plane(const FieldLayout& L, T* u) {
#pragma omp parallel for schedule(static)
  for (int y = 0; y < L.ny; ++y)
    for (int x = 0; x < L.nx; ++x) u[L.index(0, y, x)] = T(0);
}

template void fdtd_step<float>(const FdtdStep<float>&);
template void fdtd_step<double>(const FdtdStep<double>&);
template void zero_top_plane<float>(const FieldLayout&, float*);
template void zero_top_plane<double>(const FieldLayout&, double*);

}  // namespace specwave::cpu
