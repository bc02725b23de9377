// The exact transpose of the elastic velocity-stress step's two halves (docs/numerics.md, "The elastic adjoint"), on
// the adjoint's fields and CPML memory. Each of a half's terms is transposed in two sweeps: the adjoint of the term's
// derivative at every point of the updated field's computed range into a scratch field (the coefficient times the
// field's adjoint, through the CPML's transpose), then that added to the points the derivative read (the transpose of
// the stencil), as a gather: each point of the source field sums g_k times the scratch values that read it, so it is
// written once, by the thread that owns its row. Above a free surface, the
// forward's images (ghost = sign x image) transpose to folds: image += sign x ghost, ghost = 0.
#include <algorithm>
#include <stdexcept>
#include <vector>

#include "kernels/cpu/elastic_cpu.hpp"
#include "kernels/staggered_step.hpp"

namespace specwave::cpu {
namespace {

// The CPML's transpose on term `term`'s row (z, y), points x0 .. x1 - 1 of g (at g + index(z, y, x0)): the forward
// made psi' = b psi + a G and G' = G + psi'; given the adjoints of G' (in g) and psi' (in the slab), q = psi-bar' +
// G-bar', G-bar = G-bar' + a q and psi-bar = b q. The filters in the forward's reverse order.
template <class T>
void cpml_term_adjoint(const ElasticStep<T>& s, int term, int z, int y, int x0, int x1, T* __restrict g) {
  for (int k = elastic_filters - 1; k >= 0; --k) {
    const ElasticCpmlRow<T> r = elastic_cpml_row(s, term, k, z, y, x0, x1);
    T* __restrict m = r.m;
    T* __restrict gg = g + r.skip;
    if (r.scalar) {
#pragma omp simd
      for (int x = 0; x < r.count; ++x) {
        const T q = m[x] + gg[x];
        gg[x] += r.a * q;
        m[x] = r.b * q;
      }
    } else {
      const T* __restrict a = r.a_x, * __restrict b = r.b_x;
#pragma omp simd
      for (int x = 0; x < r.count; ++x) {
        const T q = m[x] + gg[x];
        gg[x] += a[x] * q;
        m[x] = b[x] * q;
      }
    }
  }
}

// src += D^T g over field t.field's computed range (inside a parallel region), as a gather: D+ at i read u[i + k s]
// and u[i - (k - 1) s] (D- at i: w[i + (k - 1) s] and w[i - k s]), so each point j of src adds g_k (g[j - up_k s] -
// g[j - down_k s]) over the k whose points lie in the range (g is 0 outside it). Every point of src is written once,
// by the thread that owns its row.
template <int R, class T>
void gather_transpose(const ElasticStep<T>& s, int term, const T* g) {
  const ElasticTerm t = elastic_term[term];
  const FieldLayout& L = s.layout;
  const int f = t.field, a = t.axis;
  const bool plus = elastic_half(f, a);
  T* src = s.f[t.source];
  const T* gk = s.coef.g[a];
  int up[R + 1], down[R + 1];  // the offsets (in points along a) D read at k: up_k > 0 >= down_k
  for (int k = 1; k <= R; ++k) up[k] = plus ? k : k - 1, down[k] = plus ? -(k - 1) : -k;
  const int lo = s.lo(f, a), hi = s.hi(f, a), out0 = lo + down[R], out1 = hi + up[R];
  const int x0 = s.lo(f, 2), x1 = s.hi(f, 2), n = x1 - x0;
  if (a == 2) {
    // Each row of g copied between 2R zeros on either side (the reads reach x0 - 2R + 1 and x1 + 2R - 2), then
    // gathered.
    thread_local std::vector<T> padded;
    padded.assign(std::size_t(n + 4 * R), T(0));
    T* __restrict q = padded.data() + 2 * R - x0;  // q[x] = g(x) for x in [x0, x1), 0 within 2R outside
    const int z0 = s.lo(f, 0), z1 = s.hi(f, 0), y0 = s.lo(f, 1), y1 = s.hi(f, 1);
#pragma omp for collapse(2) schedule(static)
    for (int z = z0; z < z1; ++z)
      for (int y = y0; y < y1; ++y) {
        const T* __restrict row = g + L.index(z, y, x0);
        std::copy(row, row + n, q + x0);
        T* __restrict o = src + L.index(z, y, 0);
#pragma omp simd
        for (int x = out0; x < out1; ++x) {
          T sum = T(0);
          for (int k = 1; k <= R; ++k) sum += gk[k] * (q[x - up[k]] - q[x - down[k]]);
          o[x] += sum;
        }
      }
    return;
  }
  // Along z (y): the rows of src's planes j in [out0, out1) along a, each from the rows of g's planes j - up_k and
  // j - down_k inside [lo, hi) (a row of zeros for the others).
  thread_local std::vector<T> zeros;
  zeros.assign(std::size_t(n), T(0));
  const int b = 1 - a, b0 = s.lo(f, b), b1 = s.hi(f, b);
#pragma omp for collapse(2) schedule(static)
  for (int j = out0; j < out1; ++j)
    for (int i = b0; i < b1; ++i) {
      const auto row = [&](int at) {
        return at < lo || at >= hi ? zeros.data() : g + (a == 0 ? L.index(at, i, x0) : L.index(i, at, x0));
      };
      const T* __restrict pu[R + 1];
      const T* __restrict pd[R + 1];
      for (int k = 1; k <= R; ++k) pu[k] = row(j - up[k]), pd[k] = row(j - down[k]);
      T* __restrict o = src + (a == 0 ? L.index(j, i, x0) : L.index(i, j, x0));
#pragma omp simd
      for (int x = 0; x < n; ++x) {
        T sum = T(0);
        for (int k = 1; k <= R; ++k) sum += gk[k] * (pu[k][x] - pd[k][x]);
        o[x] += sum;
      }
    }
}

// fn(z, y) for every row of field f's computed range, shared over the threads of the enclosing parallel region.
template <class T, class Fn>
inline void rows(const ElasticStep<T>& s, int f, Fn&& fn) {
  const int z0 = s.lo(f, 0), z1 = s.hi(f, 0), y0 = s.lo(f, 1), y1 = s.hi(f, 1);
#pragma omp for collapse(2) schedule(static)
  for (int z = z0; z < z1; ++z)
    for (int y = y0; y < y1; ++y) fn(z, y);
}

// The transpose of mirror_top (elastic_cpu.cpp): image += sign ghost, ghost = 0 on the R planes above the surface.
template <class T>
void fold_top(const FieldLayout& L, int R, T* f, bool half, T sign) {
  const index_t plane = L.stride_z();
  for (int k = 1; k <= R; ++k) {
    T* __restrict ghost = f + L.index(-k, -L.halo, -L.halo);
    T* __restrict image = f + L.index(half ? k - 1 : k, -L.halo, -L.halo);
#pragma omp parallel for simd schedule(static)
    for (index_t p = 0; p < plane; ++p) {
      image[p] += sign * ghost[p];
      ghost[p] = T(0);
    }
  }
}

// Term `term`'s transpose: g = its derivative's adjoint (u(z, y, x0, x1, out) writes the coefficient times the
// field's adjoint on a row), through the CPML, then gathered into the source field's adjoint.
template <int R, class T, class U>
void term_adjoint(const ElasticStep<T>& s, int term, T* g, U&& u) {
  const ElasticTerm t = elastic_term[term];
  if (s.two_d && t.axis == 1) return;  // the forward reads nothing along an inactive y
  const int x0 = s.lo(t.field, 2), x1 = s.hi(t.field, 2);
  rows(s, t.field, [&](int z, int y) {
    T* row = g + s.layout.index(z, y, x0);
    u(z, y, x0, x1, row);
    cpml_term_adjoint(s, term, z, y, x0, x1, row);
  });
  gather_transpose<R>(s, term, g);
}

template <int R, class T>
void stress_adjoint_radius(const ElasticStep<T>& s, T* g) {
  const FieldLayout& L = s.layout;
#pragma omp parallel
  {
    // The normal stresses: s_aa += lam (e_z + e_y + e_x) + mu2 e_a, so e_a-bar = lam (sum of the three s-bar) +
    // mu2 s_aa-bar; on the free surface e_z = -lam / (lam + mu2) (e_y + e_x) moves e_z-bar onto e_y and e_x.
    for (int k = 0; k < 3; ++k)
      term_adjoint<R>(s, 9 + k, g, [&](int z, int y, int x0, int x1, T* __restrict out) {
        const index_t i0 = L.index(z, y, x0);
        const T* __restrict sz = s.f[szz] + i0, * __restrict sy = s.f[syy] + i0, * __restrict sx = s.f[sxx] + i0;
        const T* __restrict lam = s.lamdt + i0, * __restrict mu2 = s.mu2dt + i0;
        const T* __restrict own = s.f[szz + k] + i0;
        const bool surface = z == 0 && s.free_surface;
#pragma omp simd
        for (int x = 0; x < x1 - x0; ++x) {
          const T sum = sz[x] + sy[x] + sx[x];
          const T ez = lam[x] * sum + mu2[x] * sz[x];
          const T e = lam[x] * sum + mu2[x] * own[x];
          out[x] = !surface ? e : k == 0 ? T(0) : e - (lam[x] / (lam[x] + mu2[x])) * ez;
        }
      });
    // The shear stresses: s_ab += mu_ab (D_b v_a + D_a v_b).
    for (int c = 0; c < 3; ++c)
      for (int term : {12 + 2 * c, 13 + 2 * c})
        term_adjoint<R>(s, term, g, [&](int z, int y, int x0, int x1, T* __restrict out) {
          const index_t i0 = L.index(z, y, x0);
          const T* __restrict sv = s.f[szy + c] + i0, * __restrict mu = s.mudt[c] + i0;
#pragma omp simd
          for (int x = 0; x < x1 - x0; ++x) out[x] = mu[x] * sv[x];
        });
  }
  if (s.free_surface) {
    fold_top(L, R, s.f[vz], true, T(1));
    fold_top(L, R, s.f[vy], false, T(1));
    fold_top(L, R, s.f[vx], false, T(1));
  }
}

template <int R, class T>
void velocity_adjoint_radius(const ElasticStep<T>& s, T* g) {
  const FieldLayout& L = s.layout;
#pragma omp parallel
  for (int c = 0; c < 3; ++c)
    for (int k = 0; k < 3; ++k)
      term_adjoint<R>(s, 3 * c + k, g, [&](int z, int y, int x0, int x1, T* __restrict out) {
        const index_t i0 = L.index(z, y, x0);
        const T* __restrict v = s.f[vz + c] + i0, * __restrict b = s.bdt[c] + i0;
#pragma omp simd
        for (int x = 0; x < x1 - x0; ++x) out[x] = b[x] * v[x];
      });
  if (s.free_surface) {
    fold_top(L, R, s.f[szz], false, T(-1));
    fold_top(L, R, s.f[szy], true, T(-1));
    fold_top(L, R, s.f[szx], true, T(-1));
  }
}

}  // namespace

template <class T>
void elastic_stress_adjoint(const ElasticStep<T>& s, T* scratch) {
  with_radius(s.coef.radius, [&](auto R) {
    if constexpr (decltype(R)::value <= 4)
      stress_adjoint_radius<decltype(R)::value>(s, scratch);
    else
      throw std::logic_error("elastic adjoint: order 2 to 8 (stencil radius 1 to 4)");
  });
}

template <class T>
void elastic_velocity_adjoint(const ElasticStep<T>& s, T* scratch) {
  with_radius(s.coef.radius, [&](auto R) {
    if constexpr (decltype(R)::value <= 4)
      velocity_adjoint_radius<decltype(R)::value>(s, scratch);
    else
      throw std::logic_error("elastic adjoint: order 2 to 8 (stencil radius 1 to 4)");
  });
}

template void elastic_stress_adjoint<float>(const ElasticStep<float>&, float*);
template void elastic_stress_adjoint<double>(const ElasticStep<double>&, double*);
template void elastic_velocity_adjoint<float>(const ElasticStep<float>&, float*);
template void elastic_velocity_adjoint<double>(const ElasticStep<double>&, double*);

}  // namespace specwave::cpu
