#pragma once
// The view one elastic step takes (docs/numerics.md, "Isotropic elastic waves"): plain pointers and values, host or
// device memory, for the CPU loops (kernels/cpu/elastic_cpu.hpp) and, later, CUDA kernels.
#include "kernels/elastic_point.hpp"
#include "kernels/staggered_point.hpp"

namespace specwave {

// The 18 derivatives of a step, each with its CPML memory: per term the updated field, the derivative's axis and the
// field it differentiates (D+ where the updated field lies half way along the axis, D- where on the nodes). Terms
// 0..8 are the velocity step's (v_z's three, v_y's, v_x's), 9..17 the stress step's (the normal stresses' e_z, e_y,
// e_x; then s_zy's D_y v_z, D_z v_y; s_zx's D_x v_z, D_z v_x; s_yx's D_x v_y, D_y v_x).
struct ElasticTerm {
  std::uint8_t field, axis, source;
};
inline constexpr int elastic_terms = 18;
inline constexpr ElasticTerm elastic_term[elastic_terms] = {
    {vz, 0, szz}, {vz, 1, szy}, {vz, 2, szx}, {vy, 0, szy}, {vy, 1, syy}, {vy, 2, syx},
    {vx, 0, szx}, {vx, 1, syx}, {vx, 2, sxx}, {szz, 0, vz}, {szz, 1, vy}, {szz, 2, vx},
    {szy, 1, vz}, {szy, 0, vy}, {szx, 2, vz}, {szx, 0, vx}, {syx, 2, vy}, {syx, 1, vx}};

// The CPML of one axis: the profiles on its nodes (a(i), b(i), i = 0 .. n - 1) and half nodes (a(i + 1/2) at i + R,
// i = -R .. n + R - 1), which faces absorb, and the slab geometry of its memory variables: every term of this axis
// has a slab per absorbing face, W + R points along the axis (coordinate i + R on the low face, i - (n - 1 - W) on the
// high face) and n_b + 2 R along each other active axis b (coordinate i + R; an inactive y axis: 1 point). With a
// multi-axial PML (M-PML, docs/numerics.md "The elastic CPML") the other axes' terms have slabs too, filtered by the
// profiles m_* of the damping d scaled by boundary.pml_multiaxial (alpha unscaled), as wide as the M-PML's reach:
// outer + R points along the axis (outer in place of W above), the same along the others. Index [0] of slab_stride
// is the CPML's slabs' (a term of this axis, `own`), [1] the M-PML's.
template <class T>
struct ElasticCpmlAxis {
  int n = 0, width = 0, radius = 0;
  bool face[2] = {false, false};
  const T* a_node = nullptr;
  const T* b_node = nullptr;
  const T* a_half = nullptr;
  const T* b_half = nullptr;
  const T* ma_node = nullptr;  // the M-PML's profiles (null: no M-PML)
  const T* mb_node = nullptr;
  const T* ma_half = nullptr;
  const T* mb_half = nullptr;
  index_t slab_stride[2][3] = {{0, 0, 0}, {0, 0, 0}};  // [own ? 0 : 1][axis]
  int slab_offset[3] = {0, 0, 0};  // added to a coordinate along each axis (along this axis: per face, above)

  int outer = 0;  // the M-PML's reach: its profile is 0 beyond the `outer` points nearest a face (xi <= 1/2)

  // The points of face `side`'s layer along the axis, [begin, end), for a field half way (half) or on the nodes: the
  // CPML's (own, `width` points from the face) or the M-PML's (`outer` points).
  SPECWAVE_HD int begin(int side, bool half, bool own = true) const {
    const int w = own ? width : outer;
    return side == 0 ? (half ? -radius : 0) : (half ? n - 1 - w : n - w);
  }
  SPECWAVE_HD int end(int side, bool half, bool own = true) const {
    return side == 0 ? (own ? width : outer) : (half ? n - 1 + radius : n);
  }
  SPECWAVE_HD int slab_coordinate(int side, int i, bool own) const {
    return side == 0 ? i + radius : i - (n - 1 - (own ? width : outer));
  }
  // The index in its slab of the memory variable at coordinates q (slab_offset added; along this axis
  // slab_coordinate's).
  SPECWAVE_HD index_t slab_index(const int (&q)[3], bool own) const {
    const index_t* st = slab_stride[own ? 0 : 1];
    return q[0] * st[0] + q[1] * st[1] + q[2];
  }
  // The profiles a(i), b(i) (a[i], b[i]) along the axis of a field half way (half) or on the nodes: the CPML's for a
  // term of this axis (own), else the M-PML's.
  SPECWAVE_HD void profiles(bool own, bool half, const T*& a, const T*& b) const {
    a = own ? (half ? a_half + radius : a_node) : (half ? ma_half + radius : ma_node);
    b = own ? (half ? b_half + radius : b_node) : (half ? mb_half + radius : mb_node);
  }
};

// A term's CPML filters, in the order a step applies them: filter k (0 .. 5) is face k % 2 (low, high) of axis
// (term axis + k / 2) mod 3, so its own axis' two faces come first (the CPML), then the other axes' (the M-PML). Where
// layers overlap (edges and corners) the filters run one after another: G' = G + psi_1(G), G'' = G' + psi_2(G'), ...
inline constexpr int elastic_filters = 6;
SPECWAVE_HD constexpr int elastic_filter_axis(int term_axis, int k) { return (term_axis + k / 2) % 3; }

template <class T>
struct ElasticStep {
  FieldLayout layout;  // every field, halo staggered_halo(R)
  T* f[elastic_fields] = {};
  const T* bdt[3] = {};           // dt b_a on v_a's points
  const T* lamdt = nullptr;       // dt lambda on the nodes
  const T* mu2dt = nullptr;       // 2 dt mu on the nodes
  const T* mudt[3] = {};          // dt mu on s_zy's, s_zx's and s_yx's points
  StaggeredCoefficients<T> coef;  // g_k / h_a (0 along an inactive axis)
  ElasticCpmlAxis<T> pml[3];
  T* psi[elastic_terms][3][2] = {};  // each term's memory slab on the low and high face of each axis (null: none)
  bool two_d = false;                // ny = 1: no extension along y
  // A free surface at z = 0 (docs/numerics.md, "Free surface (elastic)"): nothing is computed above it; the fields a
  // step reads there are images (s_zz, s_zy, s_zx odd, v_z, v_y, v_x even), s_zz = 0 on it, and its normal stresses
  // take the vertical strain rate the condition s_zz = 0 gives.
  bool free_surface = false;
  // Whether the half points beyond face [axis][low, high] are computed here (the grid's own faces); false where a
  // neighbouring block's values arrive there instead (a decomposed grid's halo exchange).
  bool ghost_band[3][2] = {{true, true}, {true, true}, {true, true}};
  // Where non-null, what the step adds per point, over its coefficient, for the gradient (docs/numerics.md, "The
  // elastic adjoint"): a velocity's sum of its three derivatives, a normal stress's own strain rate e_a (e_z as the
  // free surface sets it), a shear stress's D_b v_a + D_a v_b; each over the field's computed range (padded).
  T* increment_out[elastic_fields] = {};

  // The computed range [lo, hi) of field f along axis a: the nodes 0 .. n - 1, or the half points -R .. n + R - 2
  // (from 0 along z below a free surface; 0 .. n - 1 at a face shared with a neighbour).
  SPECWAVE_HD int lo(int f, int a) const {
    if (!elastic_half(f, a) || (two_d && a == 1) || (free_surface && a == 0) || !ghost_band[a][0]) return 0;
    return -coef.radius;
  }
  SPECWAVE_HD int hi(int f, int a) const {
    const int n = layout.extent(a);
    return elastic_half(f, a) && !(two_d && a == 1) && ghost_band[a][1] ? n + coef.radius - 1 : n;
  }
};

// The points of row (z, y), x0 .. x1 - 1, of term `term`'s field that lie in the layer of its filter k
// (elastic_filter_axis): `count` points from x0 + skip (0: none), their profile values (along z and y one pair for the
// whole row, `scalar`; along x a pair per point, a_x[k] and b_x[k]) and their memory variables m[k] in the slab.
template <class T>
struct ElasticCpmlRow {
  int skip = 0, count = 0;
  bool scalar = true;
  T a = 0, b = 0;
  const T* a_x = nullptr;
  const T* b_x = nullptr;
  T* m = nullptr;
};
template <class T>
SPECWAVE_HD inline ElasticCpmlRow<T> elastic_cpml_row(const ElasticStep<T>& s, int term, int k, int z, int y, int x0,
                                                      int x1) {
  ElasticCpmlRow<T> r;
  const ElasticTerm t = elastic_term[term];
  const int axis = elastic_filter_axis(t.axis, k), side = k % 2;
  const ElasticCpmlAxis<T>& p = s.pml[axis];
  T* psi = s.psi[term][axis][side];
  if (!p.face[side] || !psi) return r;
  const bool half = elastic_half(t.field, axis), own = axis == t.axis;
  const int begin = p.begin(side, half, own), end = p.end(side, half, own);
  const T *pa, *pb;
  p.profiles(own, half, pa, pb);
  if (axis < 2) {
    int c[3] = {z, y, 0};
    const int i = c[axis];
    if (i < begin || i >= end) return r;
    r.a = pa[i], r.b = pb[i];
    for (int m = 0; m < 3; ++m) c[m] += p.slab_offset[m];
    c[axis] = p.slab_coordinate(side, i, own);
    c[2] = x0 + p.slab_offset[2];
    r.m = psi + p.slab_index(c, own);
    r.count = x1 - x0;
    return r;
  }
  const int xs = begin > x0 ? begin : x0, xe = end < x1 ? end : x1;
  if (xs >= xe) return r;
  r.scalar = false;
  r.skip = xs - x0, r.count = xe - xs;
  r.a_x = pa + xs;
  r.b_x = pb + xs;
  const int c[3] = {z + p.slab_offset[0], y + p.slab_offset[1], p.slab_coordinate(side, xs, own)};
  r.m = psi + p.slab_index(c, own);
  return r;
}

}  // namespace specwave
