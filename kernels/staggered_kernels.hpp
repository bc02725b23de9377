#pragma once
// The bodies of the staggered step's CUDA kernels (kernels/cuda/staggered_cuda.cu), one point a call, and the boxes of
// points they run over: host and device functions without CUDA types, so that a CPU test
// (tests/test_staggered_kernels.cpp, "the CUDA kernels' bodies") runs them over their boxes and compares the fields
// with the CPU loops' (kernels/cpu/staggered_cpu.cpp). Each call writes only its own point's values (w_a, phi, or u,
// chi, r_l) and reads fields the step does not write, so any order of the points gives the same fields. The physics is
// kernels/staggered_point.hpp's, in the CPU loops' order a point.
#include "kernels/launch_geometry.hpp"
#include "kernels/staggered_step.hpp"

namespace specwave::staggered_kernels {

// The CPML memory slab of axis `axis`, face `side`, at the point c (z, y, x), and the profile's index along the axis
// (as kernels/cpu/staggered_rows.hpp's cpml_slab_position).
template <bool Half, class T>
SPECWAVE_HD inline index_t slab_position(const StaggeredCpmlAxis<T>& p, int axis, int side, const int (&c)[3],
                                         int& profile) {
  int s[3] = {c[0], c[1], c[2]};
  profile = c[axis] + (Half ? p.radius : 0);
  s[axis] = p.slab_coordinate(side, c[axis]);
  return s[0] * p.slab_stride[0] + s[1] * p.slab_stride[1] + s[2] * p.slab_stride[2];
}

// The half nodes whose w_a a step updates (one rank: every ghost band the grid's own): along a from -R (0 for w_z under
// a free surface) to n + R - 2, the other coordinates on the grid.
SPECWAVE_HD inline bool velocity_updated(const FieldLayout& L, bool free_surface, int R, int a, const int (&c)[3]) {
  const int n[3] = {L.nz, L.ny, L.nx};
  for (int b = 0; b < 3; ++b)
    if (b != a && (c[b] < 0 || c[b] >= n[b])) return false;
  const int lo = (a == 0 && free_surface) ? 0 : -R;
  return c[a] >= lo && c[a] < n[a] + R - 1;
}
template <class T>
SPECWAVE_HD inline bool velocity_updated(const StaggeredStep<T>& s, int R, int a, const int (&c)[3]) {
  return velocity_updated(s.layout, s.free_surface, R, a, c);
}

// w_a^{n+1/2} = w_a^{n-1/2} - dt beta_a D+_a u at every half node (z, y, x) of the box where the step updates it, then
// phi and the correction of each absorbing face whose layer holds it; the increment too where increment_out[a] is set
// (-(dt beta D+ u), then - dt beta phi for each face, as the CPU rounds it).
template <int R, class T>
SPECWAVE_HD inline void velocity_point(const StaggeredStep<T>& s, int z, int y, int x) {
  const int c[3] = {z, y, x};
  const FieldLayout& L = s.layout;
  const index_t i = L.index(z, y, x);
  for (int a = 0; a < 3; ++a) {
    if (!velocity_updated(s, R, a, c)) continue;
    const T d = staggered_d_plus<R>(s.u, i, L.stride(a), s.coef.g[a]);
    T* w = s.w[a];
    const T bdt = s.bdt[a][i];
    T value = staggered_velocity(w[i], bdt, d);
    T increment = -(bdt * d);
    const StaggeredCpmlAxis<T>& p = s.pml[a];
    for (int side = 0; side < 2; ++side) {
      if (!p.face[side] || c[a] < p.half_begin(side) || c[a] >= p.half_end(side)) continue;
      int q;
      const index_t k = slab_position<true>(p, a, side, c, q);
      const T ph = p.b_half[q] * p.phi[side][k] + p.a_half[q] * d;
      p.phi[side][k] = ph;
      value = staggered_velocity(value, bdt, ph);
      increment -= bdt * ph;
    }
    w[i] = value;
    if (s.increment_out[a]) s.increment_out[a][i] = increment;
  }
}

// u^{n+1} at the node (z, y, x): D = sum_a D-_a w_a, each absorbing face's chi (z faces, y faces, x faces, as the CPU
// adds them; D into divergence_out where set), the memory variables r_l^{n+1} = a_l r_l^n + g_l D, and u^{n+1} = u^n -
// dt K D + (dt / 2) sum_l (r_l^{n+1} + r_l^n).
template <int R, class T>
SPECWAVE_HD inline void pressure_point(const StaggeredStep<T>& s, int z, int y, int x) {
  const FieldLayout& L = s.layout;
  const int c[3] = {z, y, x};
  const index_t i = L.index(z, y, x);
  T d = staggered_d_minus<R>(s.w[0], i, L.stride_z(), s.coef.g[0]) +
        staggered_d_minus<R>(s.w[1], i, L.stride_y(), s.coef.g[1]) +
        staggered_d_minus<R>(s.w[2], i, index_t(1), s.coef.g[2]);
  for (int a = 0; a < 3; ++a) {
    const StaggeredCpmlAxis<T>& p = s.pml[a];
    for (int side = 0; side < 2; ++side) {
      if (!p.face[side] || c[a] < p.node_begin(side) || c[a] >= p.node_end(side)) continue;
      int q;
      const index_t k = slab_position<false>(p, a, side, c, q);
      const T ch =
          p.b_node[q] * p.chi[side][k] + p.a_node[q] * staggered_d_minus<R>(s.w[a], i, L.stride(a), s.coef.g[a]);
      p.chi[side][k] = ch;
      d += ch;
    }
  }
  if (s.divergence_out) s.divergence_out[(index_t(z) * L.ny + y) * L.nx + x] = d;
  const T next = staggered_pressure(s.u[i], s.kdt[i], d);
  if (s.mechanisms == 0) {
    s.u[i] = next;
    return;
  }
  const index_t compact = (index_t(z) * L.ny + y) * L.nx + x;
  T relax = 0;
  for (int l = 0; l < s.mechanisms; ++l) {
    const T r = s.r[l][compact], r_next = staggered_memory(s.decay[l], r, s.g[l][compact], d);
    relax += r + r_next;
    s.r[l][compact] = r_next;
  }
  s.u[i] = next + s.half_dt * relax;
}

// The free surface's ghost value k (1..R) of the padded plane's point p above z = 0: u[-k] = -u[k] (odd, before the
// velocity step), w_z[-k] = w_z[k - 1] (even: w_z's half node -k + 1/2 mirrors k - 1/2, before the pressure step).
template <bool Odd, class T>
SPECWAVE_HD inline void mirror_point(const FieldLayout& L, T* f, index_t p, int k) {
  const index_t plane = L.stride_z(), surface = index_t(L.halo) * plane;
  if constexpr (Odd)
    f[surface - k * plane + p] = -f[surface + k * plane + p];
  else
    f[surface - k * plane + p] = f[surface + (k - 1) * plane + p];
}

// ---- The adjoint step (cpu::staggered_adjoint_step's values, kernels/cpu/staggered_adjoint_cpu.cpp), in five passes
// over the points, each writing only its own point's values and reading what the pass does not write:
//   1. transpose_pressure_point on the nodes: q_a, r-bar_l, chi-bar, the image;
//   2. transpose_divergence_point on the velocity box: w-bar_a -= D+_a q_a; with a free surface fold_velocity_mirror
//      on the R planes above z = 0; then the buoyancy's image (buoyancy_point, every value of the padded field);
//   3. transpose_velocity_point on the velocity box: e_a and phi-bar;
//   4. transpose_velocity_u_point on the nodes: u-bar -= sum_a D-_a e_a;
//   5. with a free surface, fold_pressure_mirror_point on the planes 1 .. R - 1.

// The pressure step's transpose at the node (z, y, x): D-bar = -dt K u-bar + sum_l g_l (dt/2 u-bar + r-bar_l),
// r-bar_l <- a_l r-bar_l + dt/2 (1 + a_l) u-bar, image += D-bar D^n; q_a = D-bar plus, for each face of axis a whose
// nodes' layer holds the node, a c with c = chi-bar + D-bar, chi-bar <- b c.
template <int R, class T>
SPECWAVE_HD inline void transpose_pressure_point(const StaggeredAdjointStep<T>& s, int z, int y, int x) {
  const FieldLayout& L = s.layout;
  const int c[3] = {z, y, x};
  const index_t i = L.index(z, y, x), compact = (index_t(z) * L.ny + y) * L.nx + x;
  const T u = s.u[i];
  T d = -s.kdt[i] * u;
  for (int l = 0; l < s.mechanisms; ++l) {
    T* r = s.r[l] + compact;
    const T a = s.decay[l], h = s.half_dt * (T(1) + s.decay[l]);
    d += s.g[l][compact] * (s.half_dt * u + *r);
    *r = a * *r + h * u;
  }
  if (s.image) s.image[compact] += double(d) * double(s.divergence[compact]);
  for (int a = 0; a < 3; ++a) {
    const StaggeredCpmlAxis<T>& p = s.pml[a];
    T q = d;
    for (int side = 0; side < 2; ++side) {
      if (!p.face[side] || c[a] < p.node_begin(side) || c[a] >= p.node_end(side)) continue;
      int profile;
      const index_t k = slab_position<false>(p, a, side, c, profile);
      const T memory = p.chi[side][k] + d;
      p.chi[side][k] = p.b_node[profile] * memory;
      q += p.a_node[profile] * memory;
    }
    s.q[a][i] = q;
  }
}

// w-bar_a -= D+_a q_a at the half node (z, y, x) for each axis a along which D- reads it: -R .. n + R - 2 along a, the
// grid's nodes along the others (the free surface's ghosts included: fold_velocity_mirror then moves them).
template <int R, class T>
SPECWAVE_HD inline void transpose_divergence_point(const StaggeredAdjointStep<T>& s, int z, int y, int x) {
  const FieldLayout& L = s.layout;
  const int c[3] = {z, y, x};
  const index_t i = L.index(z, y, x);
  for (int a = 0; a < 3; ++a)
    if (velocity_updated(L, false, R, a, c)) s.w[a][i] -= staggered_d_plus<R>(s.q[a], i, L.stride(a), s.coef.g[a]);
}

// The free surface's even mirror of w_z transposed at the padded plane's point p, ghost k (1..R): w-bar_z[k - 1] +=
// w-bar_z[-k], w-bar_z[-k] = 0.
template <class T>
SPECWAVE_HD inline void fold_velocity_mirror(const FieldLayout& L, T* w, index_t p, int k) {
  const index_t plane = L.stride_z(), surface = index_t(L.halo) * plane;
  w[surface + (k - 1) * plane + p] += w[surface - k * plane + p];
  w[surface - k * plane + p] = T(0);
}

// The buoyancy's imaging condition at the padded field's point i (StaggeredAdjointStep::buoyancy_image), i < size().
template <class T>
SPECWAVE_HD inline void buoyancy_point(const StaggeredAdjointStep<T>& s, index_t i) {
  for (int a = 0; a < 3; ++a) s.buoyancy_image[a][i] += double(s.w[a][i]) * double(s.velocity_increment[a][i]);
}

// The velocity step's transpose at the half node (z, y, x), for each axis a whose w_a the step updates there: e_a =
// -dt beta w-bar_a, then for each face of axis a whose half nodes' layer holds it c = phi-bar - dt beta w-bar_a,
// phi-bar <- b c, e_a += a c.
template <int R, class T>
SPECWAVE_HD inline void transpose_velocity_point(const StaggeredAdjointStep<T>& s, int z, int y, int x) {
  const FieldLayout& L = s.layout;
  const int c[3] = {z, y, x};
  const index_t i = L.index(z, y, x);
  for (int a = 0; a < 3; ++a) {
    if (!velocity_updated(L, s.free_surface, R, a, c)) continue;
    const T bdt = s.bdt[a][i], w = s.w[a][i];
    T e = -bdt * w;
    const StaggeredCpmlAxis<T>& p = s.pml[a];
    for (int side = 0; side < 2; ++side) {
      if (!p.face[side] || c[a] < p.half_begin(side) || c[a] >= p.half_end(side)) continue;
      int profile;
      const index_t k = slab_position<true>(p, a, side, c, profile);
      const T memory = p.phi[side][k] - bdt * w;
      p.phi[side][k] = p.b_half[profile] * memory;
      e += p.a_half[profile] * memory;
    }
    s.e[a][i] = e;
  }
}

// u-bar -= sum_a D-_a e_a at the node (z, y, x).
template <int R, class T>
SPECWAVE_HD inline void transpose_velocity_u_point(const StaggeredAdjointStep<T>& s, int z, int y, int x) {
  const FieldLayout& L = s.layout;
  const index_t i = L.index(z, y, x);
  s.u[i] -= staggered_d_minus<R>(s.e[0], i, L.stride_z(), s.coef.g[0]) +
            staggered_d_minus<R>(s.e[1], i, L.stride_y(), s.coef.g[1]) +
            staggered_d_minus<R>(s.e[2], i, index_t(1), s.coef.g[2]);
}

// The free surface's odd mirror of u transposed at the node (k, y, x), k = 1 .. R - 1: u-bar[k] += (D-_z e_z)(-k).
template <int R, class T>
SPECWAVE_HD inline void fold_pressure_mirror_point(const StaggeredAdjointStep<T>& s, int k, int y, int x) {
  const FieldLayout& L = s.layout;
  s.u[L.index(k, y, x)] += staggered_d_minus<R>(s.e[0], L.index(-k, y, x), L.stride_z(), s.coef.g[0]);
}

// The Born step's scattering at the node (z, y, x) (StaggeredBornScatter): the CPU's born() and the CUDA kernel's body.
template <class T>
SPECWAVE_HD inline void born_scatter_point(const StaggeredBornScatter<T>& b, int z, int y, int x) {
  const FieldLayout& L = b.layout;
  const index_t k = (index_t(z) * L.ny + y) * L.nx + x, i = L.index(z, y, x);
  const T scattered = b.relative[k] * b.divergence[k];
  T sum = 0;
  for (int l = 0; l < b.mechanisms; ++l) {
    const T g = b.g[l][k];
    b.memory[l][k] += g * scattered;
    sum += g;
  }
  b.du[i] += (b.half_dt * sum - b.kdt[i]) * scattered;
}

// The velocity kernel's box (x, y, z): [-R, n + R - 1) along every axis; the pressure kernel's: the grid's nodes.
SPECWAVE_HD inline launch::Box velocity_box(const FieldLayout& L, int R) {
  return {{-R, -R, -R}, {L.nx + 2 * R - 1, L.ny + 2 * R - 1, L.nz + 2 * R - 1}};
}
SPECWAVE_HD inline launch::Box pressure_box(const FieldLayout& L) { return {{0, 0, 0}, {L.nx, L.ny, L.nz}}; }
// The planes 1 .. R - 1 below a free surface (fold_pressure_mirror_point).
SPECWAVE_HD inline launch::Box pressure_fold_box(const FieldLayout& L, int R) {
  return {{0, 0, 1}, {L.nx, L.ny, R - 1}};
}

}  // namespace specwave::staggered_kernels
