#pragma once
// Per-point physics of the staggered velocity-pressure scheme (variable density; docs/numerics.md, "Variable
// density"), shared by the CPU loops and, later, the CUDA kernels. The pressure u lives on the nodes, the particle
// velocity w_a on the half nodes i + 1/2 of axis a (stored at index i of a padded field, FieldLayout, whose halo
// 2R - 1 holds the ghost half nodes -R .. -1 and n - 1 .. n + R - 2 and the zeros their D+ reads; staggered_halo).
#include "kernels/common.hpp"

namespace specwave {

// Staggered first-derivative coefficients already divided by the spacing: g[a][k] = g_k / h_a, k = 1..R.
template <class T>
struct StaggeredCoefficients {
  int radius = 0;
  T g[3][9] = {};
};

// (D+_a u) at the half node i + 1/2: (1/h) sum_k g_k (u_{i+k} - u_{i-k+1}).
template <int R, class T>
SPECWAVE_HD inline T staggered_d_plus(const T* u, index_t i, index_t stride, const T* g) {
  T sum = 0;
#pragma unroll
  for (int k = 1; k <= R; ++k) sum += g[k] * (u[i + k * stride] - u[i - (k - 1) * stride]);
  return sum;
}

// (D-_a w) at the node i: (1/h) sum_k g_k (w_{i+k-1} - w_{i-k}), w_j at the half node j + 1/2.
template <int R, class T>
SPECWAVE_HD inline T staggered_d_minus(const T* w, index_t i, index_t stride, const T* g) {
  T sum = 0;
#pragma unroll
  for (int k = 1; k <= R; ++k) sum += g[k] * (w[i + (k - 1) * stride] - w[i - k * stride]);
  return sum;
}

// w^{n+1/2} = w^{n-1/2} - dt beta (D+ u^n + phi^n): `bdt` = dt beta, `drive` = D+ u (+ phi in a layer).
template <class T>
SPECWAVE_HD inline T staggered_velocity(T w, T bdt, T drive) {
  return w - bdt * drive;
}

// u^{n+1} = u^n - dt K sum_a (D-_a w_a + chi_a): `kdt` = dt K = dt rho v^2, `divergence` the sum.
template <class T>
SPECWAVE_HD inline T staggered_pressure(T u, T kdt, T divergence) {
  return u - kdt * divergence;
}

// A memory variable of attenuation (docs/numerics.md, "Attenuation"): r^{n+1} = a r^n + g D, with a = (1 - dt /
// (2 tau)) / (1 + dt / (2 tau)) and g = b K_R y at the point.
template <class T>
SPECWAVE_HD inline T staggered_memory(T a, T r, T g, T divergence) {
  return a * r + g * divergence;
}

// The first-order CPML of one axis (Komatitsch and Martin 2007, kappa = 1): the memory variables phi (half nodes,
// of D+ u) and chi (nodes, of D- w) in two slabs per axis (low and high face), each W + R points along the axis and
// the grid's extents along the others. Slab coordinate along the axis: i + R on the low face, i - (n - 1 - W) on
// the high face, for the half nodes i = -R .. W - 1 (low) and n - 1 - W .. n + R - 2 (high) and the nodes
// 0 .. W - 1 (low) and n - W .. n - 1 (high).
template <class T>
struct StaggeredCpmlAxis {
  int n = 0;
  int width = 0;   // W (0: no layer on this axis)
  int radius = 0;  // R
  bool face[2] = {false, false};
  const T* a_node = nullptr;  // a(i), b(i) at the nodes, i = 0..n-1
  const T* b_node = nullptr;
  const T* a_half = nullptr;  // a, b at the half nodes i + 1/2, stored at i + R, i = -R .. n + R - 1
  const T* b_half = nullptr;
  T* phi[2] = {nullptr, nullptr};
  T* chi[2] = {nullptr, nullptr};
  index_t slab_stride[3] = {0, 0, 0};

  // The half nodes and nodes of the layer of face `side`, [begin, end) along the axis.
  SPECWAVE_HD int half_begin(int side) const { return side == 0 ? -radius : n - 1 - width; }
  SPECWAVE_HD int half_end(int side) const { return side == 0 ? width : n - 1 + radius; }
  SPECWAVE_HD int node_begin(int side) const { return side == 0 ? 0 : n - width; }
  SPECWAVE_HD int node_end(int side) const { return side == 0 ? width : n; }
  SPECWAVE_HD int slab_coordinate(int side, int i) const { return side == 0 ? i + radius : i - (n - 1 - width); }
};

// Slab extents of axis `axis` for a grid (nz, ny, nx): W + R along the axis.
inline void staggered_slab_extents(int axis, int nz, int ny, int nx, int width, int radius, int extents[3]) {
  extents[0] = nz;
  extents[1] = ny;
  extents[2] = nx;
  extents[axis] = width + radius;
}

}  // namespace specwave
