#pragma once
// The bodies of the elastic step's CUDA kernels (kernels/cuda/elastic_cuda.cu), one point a call, and the boxes of
// points they run over: host and device functions without CUDA types, so that a CPU test
// (tests/test_elastic_kernels.cpp) runs them over their boxes and compares every field, increment and CPML memory slab
// with the CPU loops' (kernels/cpu/elastic_cpu.cpp). A call writes only its own point's values (its fields, their
// increments and their terms' memory variables) and reads fields the step does not write (the velocity step reads the
// stresses, the stress step the velocities), so any order of the points gives the same fields. The physics is
// kernels/elastic_point.hpp's, in the CPU loops' order a point: each term's derivative, its CPML on the low then the
// high face, the sum.
#include "kernels/elastic_step.hpp"
#include "kernels/launch_geometry.hpp"

namespace specwave::elastic_kernels {

// Whether the point c (z, y, x) lies in field f's computed range (ElasticStep::lo / hi) on every axis.
template <class T>
SPECWAVE_HD inline bool computed(const ElasticStep<T>& s, int f, const int (&c)[3]) {
  for (int a = 0; a < 3; ++a)
    if (c[a] < s.lo(f, a) || c[a] >= s.hi(f, a)) return false;
  return true;
}

// Term `Term` of kernels/elastic_step.hpp's table as compile-time scalars (device code may use a constexpr table's
// values only in constant expressions).
template <int Term>
struct TermOf {
  static constexpr int field = elastic_term[Term].field, axis = elastic_term[Term].axis,
                       source = elastic_term[Term].source;
  static constexpr bool half = elastic_half(field, axis);
};

// Where term `Term`'s derivative at c lies in the layer of its filter k (elastic_filter_axis): its memory variable's
// index m in the slab and the profile values a, b there (elastic_cpml_row's, for one point).
template <int Term, class T>
SPECWAVE_HD inline T* cpml_point(const ElasticStep<T>& s, int k, const int (&c)[3], index_t& m, T& a, T& b) {
  using t = TermOf<Term>;
  const int axis = elastic_filter_axis(t::axis, k), side = k % 2;
  const ElasticCpmlAxis<T>& p = s.pml[axis];
  T* psi = s.psi[Term][axis][side];
  if (!p.face[side] || !psi) return nullptr;
  const bool half = elastic_half(t::field, axis);
  const int i = c[axis];
  const bool own = axis == t::axis;
  if (i < p.begin(side, half, own) || i >= p.end(side, half, own)) return nullptr;
  const T *pa, *pb;
  p.profiles(own, half, pa, pb);
  a = pa[i], b = pb[i];
  int q[3];
  for (int j = 0; j < 3; ++j) q[j] = c[j] + p.slab_offset[j];
  q[axis] = p.slab_coordinate(side, i, own);
  m = p.slab_index(q, own);
  return psi;
}

// Term `Term`'s derivative at c (padded index i): D+ where its field lies half way along the axis, D- on the nodes,
// 0 along an inactive y axis; then through each filter whose layer holds c, in order: psi = b psi + a G, G += psi.
template <int R, int Term, class T>
SPECWAVE_HD inline T term_point(const ElasticStep<T>& s, const int (&c)[3], index_t i) {
  using t = TermOf<Term>;
  if (s.two_d && t::axis == 1) return T(0);
  const index_t stride = s.layout.stride(t::axis);
  T d = t::half ? staggered_d_plus<R>(s.f[t::source], i, stride, s.coef.g[t::axis])
                : staggered_d_minus<R>(s.f[t::source], i, stride, s.coef.g[t::axis]);
  for (int k = 0; k < elastic_filters; ++k) {
    index_t m;
    T a, b;
    T* psi = cpml_point<Term>(s, k, c, m, a, b);
    if (!psi) continue;
    const T next = elastic_cpml_memory(b, psi[m], a, d);
    psi[m] = next;
    d += next;
  }
  return d;
}

// Step 1 at the point (z, y, x): v_z, v_y and v_x where each is computed (v^{n+1/2} = v^{n-1/2} + dt b (sum of its
// three terms)), and their increments where asked for.
template <int R, int V, class T>
SPECWAVE_HD inline void velocity_component(const ElasticStep<T>& s, const int (&c)[3], index_t i) {
  constexpr int f = vz + V;
  if (!computed(s, f, c)) return;
  const T d0 = term_point<R, 3 * V>(s, c, i), d1 = term_point<R, 3 * V + 1>(s, c, i),
          d2 = term_point<R, 3 * V + 2>(s, c, i);
  s.f[f][i] = elastic_velocity(s.f[f][i], s.bdt[V][i], d0 + d1 + d2);
  if (s.increment_out[f]) s.increment_out[f][i] = d0 + d1 + d2;
}
template <int R, class T>
SPECWAVE_HD inline void velocity_point(const ElasticStep<T>& s, int z, int y, int x) {
  const int c[3] = {z, y, x};
  const index_t i = s.layout.index(z, y, x);
  velocity_component<R, 0>(s, c, i);
  velocity_component<R, 1>(s, c, i);
  velocity_component<R, 2>(s, c, i);
}

// Step 2 at the point (z, y, x): the normal stresses on a node (on the free surface e_z from s_zz = 0), then each
// shear stress where it is computed, and their increments where asked for.
template <int R, int V, class T>
SPECWAVE_HD inline void shear_component(const ElasticStep<T>& s, const int (&c)[3], index_t i) {
  constexpr int f = szy + V;
  if (!computed(s, f, c)) return;
  const T d0 = term_point<R, 12 + 2 * V>(s, c, i), d1 = term_point<R, 13 + 2 * V>(s, c, i);
  s.f[f][i] = elastic_shear_stress(s.f[f][i], s.mudt[V][i], d0, d1);
  if (s.increment_out[f]) s.increment_out[f][i] = d0 + d1;
}
template <int R, class T>
SPECWAVE_HD inline void stress_point(const ElasticStep<T>& s, int z, int y, int x) {
  const int c[3] = {z, y, x};
  const index_t i = s.layout.index(z, y, x);
  if (computed(s, szz, c)) {
    T ez = term_point<R, 9>(s, c, i);
    const T ey = term_point<R, 10>(s, c, i), ex = term_point<R, 11>(s, c, i);
    const T lam = s.lamdt[i], mu2 = s.mu2dt[i];
    if (z == 0 && s.free_surface) ez = -(lam / (lam + mu2)) * (ey + ex);
    const T trace = ez + ey + ex;
    s.f[szz][i] = elastic_normal_stress(s.f[szz][i], lam, mu2, trace, ez);
    s.f[syy][i] = elastic_normal_stress(s.f[syy][i], lam, mu2, trace, ey);
    s.f[sxx][i] = elastic_normal_stress(s.f[sxx][i], lam, mu2, trace, ex);
    const T e[3] = {ez, ey, ex};
    for (int k = 0; k < 3; ++k)
      if (s.increment_out[szz + k]) s.increment_out[szz + k][i] = e[k];
  }
  shear_component<R, 0>(s, c, i);
  shear_component<R, 1>(s, c, i);
  shear_component<R, 2>(s, c, i);
}

// The free surface's image k (1..R) above z = 0 of field f at point p of the padded plane: f[-k] = sign f[k] (a field
// on the nodes along z) or sign f[k - 1] (half way along z).
template <class T>
SPECWAVE_HD inline void mirror_field_point(const FieldLayout& L, T* f, bool half, T sign, index_t p, int k) {
  const index_t top = L.index(0, -L.halo, -L.halo), plane = L.stride_z();
  f[top - k * plane + p] = sign * f[top + (half ? k - 1 : k) * plane + p];
}

// Before step 1 the stresses' images (s_zz, s_zy, s_zx odd), before step 2 the velocities' (v_z, v_y, v_x even).
template <class T>
SPECWAVE_HD inline void velocity_mirror_point(const ElasticStep<T>& s, index_t p, int k) {
  mirror_field_point(s.layout, s.f[szz], false, T(-1), p, k);
  mirror_field_point(s.layout, s.f[szy], true, T(-1), p, k);
  mirror_field_point(s.layout, s.f[szx], true, T(-1), p, k);
}
template <class T>
SPECWAVE_HD inline void stress_mirror_point(const ElasticStep<T>& s, index_t p, int k) {
  mirror_field_point(s.layout, s.f[vz], true, T(1), p, k);
  mirror_field_point(s.layout, s.f[vy], false, T(1), p, k);
  mirror_field_point(s.layout, s.f[vx], false, T(1), p, k);
}

// The smallest box (x, y, z) holding the computed ranges of fields f0 .. f0 + count - 1.
template <class T>
SPECWAVE_HD inline launch::Box fields_box(const ElasticStep<T>& s, int f0, int count) {
  int lo[3], hi[3];
  for (int a = 0; a < 3; ++a) {
    lo[a] = s.lo(f0, a), hi[a] = s.hi(f0, a);
    for (int f = f0 + 1; f < f0 + count; ++f) {
      lo[a] = s.lo(f, a) < lo[a] ? s.lo(f, a) : lo[a];
      hi[a] = s.hi(f, a) > hi[a] ? s.hi(f, a) : hi[a];
    }
  }
  return {{lo[2], lo[1], lo[0]}, {hi[2] - lo[2], hi[1] - lo[1], hi[0] - lo[0]}};
}
// The velocity kernel's box (the three velocities' ranges) and the stress kernel's (the six stresses').
template <class T>
SPECWAVE_HD inline launch::Box velocity_box(const ElasticStep<T>& s) {
  return fields_box(s, vz, 3);
}
template <class T>
SPECWAVE_HD inline launch::Box stress_box(const ElasticStep<T>& s) {
  return fields_box(s, szz, 6);
}

// The pressure -(s_zz + s_yy + s_xx) / 3 at the node of padded index i (snapshots, field statistics).
template <class T>
SPECWAVE_HD inline T pressure_at(const ElasticStep<T>& s, index_t i) {
  return -(s.f[szz][i] + s.f[syy][i] + s.f[sxx][i]) / T(3);
}

}  // namespace specwave::elastic_kernels
