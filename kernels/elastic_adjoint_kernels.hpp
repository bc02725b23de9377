#pragma once
// The bodies of the elastic adjoint's CUDA kernels (kernels/cuda/elastic_cuda.cu: cuda::elastic_velocity_adjoint,
// cuda::elastic_stress_adjoint), one point a call, and the boxes they run over: host and device functions without
// CUDA types, so that a CPU test (tests/test_elastic_kernels.cpp, "the CUDA adjoint kernels' bodies") runs them over
// their boxes and compares every field and memory slab with the CPU adjoint (kernels/cpu/elastic_adjoint_cpu.cpp). The
// arithmetic is the CPU's a point. Each term of a half is transposed in two passes over points:
//   1. term_scratch_point on the updated field's computed range: g = the coefficient times the field's adjoint (the
//      normal stresses' with the free surface's condition), through the CPML's transpose on the high then the low face;
//   2. term_gather_point on the points its derivative read: the source field's adjoint += D^T g (a gather: g_k times
//      the scratch values that read the point, within the computed range).
// The terms run one after another (a velocity's three, then the next velocity's; the normal stresses', then the shear
// stresses'), then the free surface's images transposed (fold_point: image += sign x ghost, ghost = 0).
#include "kernels/elastic_kernels.hpp"

namespace specwave::elastic_adjoint_kernels {

using elastic_kernels::TermOf;

// The coefficient times the updated field's adjoint that term `Term`'s derivative receives at the point (z, y, x) of
// padded index i: dt b v-bar (velocity terms), lam (s_zz-bar + s_yy-bar + s_xx-bar) + mu2 s_aa-bar (the normal
// stresses'; on the free surface e_z's is 0 and e_y's and e_x's take e_z's share -lam / (lam + mu2) of it), dt mu s-bar
// (shear terms).
template <int Term, class T>
SPECWAVE_HD inline T term_coefficient(const ElasticStep<T>& s, int z, index_t i) {
  if constexpr (Term < 9) {
    constexpr int c = Term / 3;
    return s.bdt[c][i] * s.f[vz + c][i];
  } else if constexpr (Term < 12) {
    constexpr int k = Term - 9;
    const T lam = s.lamdt[i], mu2 = s.mu2dt[i], zz = s.f[szz][i];
    const T sum = zz + s.f[syy][i] + s.f[sxx][i];
    const T ez = lam * sum + mu2 * zz;
    const T e = lam * sum + mu2 * s.f[szz + k][i];
    if (!(z == 0 && s.free_surface)) return e;
    return k == 0 ? T(0) : e - (lam / (lam + mu2)) * ez;
  } else {
    constexpr int c = (Term - 12) / 2;
    return s.mudt[c][i] * s.f[szy + c][i];
  }
}

// Pass 1 of term `Term` at (z, y, x), a point of its field's computed range: g there, with the CPML's transpose (the
// forward made psi' = b psi + a G and G' = G + psi'; given the adjoints of G' and psi', q = psi-bar' + G-bar', G-bar =
// G-bar' + a q, psi-bar = b q), the filters in the forward's reverse order.
template <int Term, class T>
SPECWAVE_HD inline void term_scratch_point(const ElasticStep<T>& s, T* g, int z, int y, int x) {
  const int c[3] = {z, y, x};
  const index_t i = s.layout.index(z, y, x);
  T v = term_coefficient<Term>(s, z, i);
  for (int k = elastic_filters - 1; k >= 0; --k) {
    index_t m;
    T a, b;
    T* psi = elastic_kernels::cpml_point<Term>(s, k, c, m, a, b);
    if (!psi) continue;
    const T q = psi[m] + v;
    v += a * q;
    psi[m] = b * q;
  }
  g[i] = v;
}

// Pass 2 of term `Term` at (z, y, x), a point its derivative read: D+ at j read j + k and j - (k - 1) along the axis
// (D- at j: j + k - 1 and j - k), so the source field's adjoint there gains sum_k g_k (g[j - up_k] - g[j - down_k])
// over the k whose points lie in the field's computed range (g is 0 outside it).
template <int R, int Term, class T>
SPECWAVE_HD inline void term_gather_point(const ElasticStep<T>& s, const T* g, int z, int y, int x) {
  using t = TermOf<Term>;
  const int c[3] = {z, y, x};
  const int lo = s.lo(t::field, t::axis), hi = s.hi(t::field, t::axis);
  const index_t i = s.layout.index(z, y, x), stride = s.layout.stride(t::axis);
  const T* gk = s.coef.g[t::axis];
  T sum = T(0);
  for (int k = 1; k <= R; ++k) {
    const int up = t::half ? k : k - 1, down = t::half ? -(k - 1) : -k;
    const int ju = c[t::axis] - up, jd = c[t::axis] - down;
    const T qu = ju >= lo && ju < hi ? g[i - up * stride] : T(0);
    const T qd = jd >= lo && jd < hi ? g[i - down * stride] : T(0);
    sum += gk[k] * (qu - qd);
  }
  s.f[t::source][i] += sum;
}

// The boxes (x, y, z) of the two passes: the term's field's computed range; the same widened along the term's axis to
// the points its derivative read, [lo + down_R, hi + up_R).
template <int Term, class T>
SPECWAVE_HD inline launch::Box scratch_box(const ElasticStep<T>& s) {
  return elastic_kernels::fields_box(s, TermOf<Term>::field, 1);
}
template <int R, int Term, class T>
SPECWAVE_HD inline launch::Box gather_box(const ElasticStep<T>& s) {
  using t = TermOf<Term>;
  int lo[3], hi[3];
  for (int a = 0; a < 3; ++a) lo[a] = s.lo(t::field, a), hi[a] = s.hi(t::field, a);
  lo[t::axis] += t::half ? -(R - 1) : -R;
  hi[t::axis] += t::half ? R : R - 1;
  return {{lo[2], lo[1], lo[0]}, {hi[2] - lo[2], hi[1] - lo[1], hi[0] - lo[0]}};
}

// Whether term `Term` takes part (the forward reads nothing along an inactive y).
template <int Term, class T>
SPECWAVE_HD inline bool term_active(const ElasticStep<T>& s) {
  return !(s.two_d && TermOf<Term>::axis == 1);
}

// The transpose of an image (elastic_kernels::mirror_field_point) at the padded plane's point p, ghost k (1..R):
// image += sign ghost, ghost = 0.
template <class T>
SPECWAVE_HD inline void fold_point(const FieldLayout& L, T* f, bool half, T sign, index_t p, int k) {
  const index_t top = L.index(0, -L.halo, -L.halo), plane = L.stride_z();
  f[top + (half ? k - 1 : k) * plane + p] += sign * f[top - k * plane + p];
  f[top - k * plane + p] = T(0);
}
// After the stress adjoint the velocities' images folded back; after the velocity adjoint the stresses'.
template <class T>
SPECWAVE_HD inline void stress_adjoint_fold_point(const ElasticStep<T>& s, index_t p, int k) {
  fold_point(s.layout, s.f[vz], true, T(1), p, k);
  fold_point(s.layout, s.f[vy], false, T(1), p, k);
  fold_point(s.layout, s.f[vx], false, T(1), p, k);
}
template <class T>
SPECWAVE_HD inline void velocity_adjoint_fold_point(const ElasticStep<T>& s, index_t p, int k) {
  fold_point(s.layout, s.f[szz], false, T(-1), p, k);
  fold_point(s.layout, s.f[szy], true, T(-1), p, k);
  fold_point(s.layout, s.f[szx], true, T(-1), p, k);
}

// ---- The gradient's per-point parts at a node, shared by the CPU gradient (elastic_cpu_gradient.cpp) and the CUDA
// one.

// The normal stresses' images at a node of step n: lam's (sum of the normal stresses' adjoints sz, sy, sx) x (e_z + e_y
// + e_x), mu2's sum_a s_aa-bar e_a; on a free surface (s_zz = 0 gives e_z = -r (e_y + e_x), r = lam / (lam + mu2)) the
// derivatives of L = lam mu2 / (lam + mu2) and of mu2 e_a.
template <class T>
SPECWAVE_HD inline void normal_stress_images(T sz, T sy, T sx, T ez, T ey, T ex, T lamdt, T mu2dt, bool surface,
                                             double& lam_image, double& mu2_image) {
  if (surface) {
    const double lam = lamdt, mu2 = mu2dt, sum = lam + mu2;
    const double both = double(sy) + double(sx), e = double(ey) + double(ex);
    lam_image += both * e * mu2 * mu2 / (sum * sum);
    mu2_image += both * e * lam * lam / (sum * sum) + double(sy) * ey + double(sx) * ex;
    return;
  }
  const double trace = double(ez) + double(ey) + double(ex);
  lam_image += (double(sz) + double(sy) + double(sx)) * trace;
  mu2_image += double(sz) * ez + double(sy) * ey + double(sx) * ex;
}

// The Born run's scattering into the normal stresses at a node: du_aa += d(lam) (e_z + e_y + e_x) + d(mu2) e_a; on a
// free surface s_yy, s_xx += d(L) (e_y + e_x) + d(mu2) e_a (L as above) and s_zz none.
template <class T>
SPECWAVE_HD inline void scatter_normal_stress(T* zz, T* yy, T* xx, T dlam, T dmu2, T ez, T ey, T ex, T lamdt, T mu2dt,
                                              bool surface) {
  if (surface) {
    const double lam = lamdt, mu2 = mu2dt, sum = lam + mu2;
    const double dl = (mu2 * mu2 * double(dlam) + lam * lam * double(dmu2)) / (sum * sum);
    const double e = double(ey) + double(ex);
    *yy += T(dl * e + double(dmu2) * ey);
    *xx += T(dl * e + double(dmu2) * ex);
    return;
  }
  const T trace = ez + ey + ex;
  *zz += dlam * trace + dmu2 * ez;
  *yy += dlam * trace + dmu2 * ey;
  *xx += dlam * trace + dmu2 * ex;
}

// The history's field, packed: the increments of each field on its computed range, field after field, each range's
// rows in (z, y) order (the CPU gradient's packing). Field f's first value, and the packed index of its point (z, y,
// x).
template <class T>
SPECWAVE_HD inline index_t packed_offset(const ElasticStep<T>& s, int f) {
  index_t offset = 0;
  for (int g = 0; g < f; ++g) {
    const launch::Box b = elastic_kernels::fields_box(s, g, 1);
    offset += index_t(b.extent.x) * b.extent.y * b.extent.z;
  }
  return offset;
}
template <class T>
SPECWAVE_HD inline index_t packed_index(const ElasticStep<T>& s, int f, index_t offset, int z, int y, int x) {
  const launch::Box b = elastic_kernels::fields_box(s, f, 1);
  return offset + launch::box_buffer_index(b.extent, {x - b.lo.x, y - b.lo.y, z - b.lo.z});
}

// fn(std::integral_constant<int, Term>{}) for Term = First .. Last - 1 in order (the terms of a half).
template <int First, int Last, class Fn>
void for_terms(Fn&& fn) {
  if constexpr (First < Last) {
    fn(std::integral_constant<int, First>{});
    for_terms<First + 1, Last>(fn);
  }
}

}  // namespace specwave::elastic_adjoint_kernels
