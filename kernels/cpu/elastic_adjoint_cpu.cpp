// The exact transpose of the elastic velocity-stress step's two halves (docs/numerics.md, "The elastic adjoint"), on
// the adjoint's fields and CPML memory. Each of a half's terms is transposed in two sweeps: the adjoint of the term's
// derivative at every point of the updated field's computed range into a scratch field (the coefficient times the
// field's adjoint, through the CPML's transpose), then that scattered to the points the derivative read (the
// transpose of the stencil: each point adds g_k times its value to two points along the axis). The scatter's threads
// own whole lines along the derivative's axis, so that no two write the same point. Above a free surface, the
// forward's images (ghost = sign x image) transpose to folds: image += sign x ghost, ghost = 0.
#include <algorithm>
#include <stdexcept>

#include "kernels/cpu/elastic_cpu.hpp"
#include "kernels/staggered_step.hpp"

namespace specwave::cpu {
namespace {

constexpr int chunk = 64;  // x points per scatter task along z and y

// The CPML's transpose on term `term`'s row (z, y), points x0 .. x1 - 1 of g (at g + index(z, y, x0)): the forward
// made psi' = b psi + a G and G' = G + psi'; given the adjoints of G' (in g) and psi' (in the slab), q = psi-bar' +
// G-bar', G-bar = G-bar' + a q and psi-bar = b q. The faces in the forward's reverse order.
template <class T>
void cpml_term_adjoint(const ElasticStep<T>& s, int term, int z, int y, int x0, int x1, T* __restrict g) {
  for (int side = 1; side >= 0; --side) {
    const ElasticCpmlRow<T> r = elastic_cpml_row(s, term, side, z, y, x0, x1);
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

// One line of the scatter: the n points from i0 (step 1 along x) each add +-g_k times their g to the points their
// derivative read. D+ at i read u[i + k s] and u[i - (k - 1) s], D- at i read w[i + (k - 1) s] and w[i - k s].
template <int R, class T>
inline void scatter_row(bool plus, const T* __restrict g, T* __restrict src, index_t i0, index_t stride, const T* gk,
                        int n) {
  for (int k = 1; k <= R; ++k) {
    const index_t up = plus ? k * stride : (k - 1) * stride, down = plus ? -(k - 1) * stride : -k * stride;
    const T c = gk[k];
#pragma omp simd
    for (int x = 0; x < n; ++x) src[i0 + up + x] += c * g[i0 + x];
#pragma omp simd
    for (int x = 0; x < n; ++x) src[i0 + down + x] -= c * g[i0 + x];
  }
}

// src += D^T g over field t.field's computed range (inside a parallel region). Along x, a thread takes whole rows;
// along z (y), a thread takes a column of chunk x points at one y (z) through every z (y).
template <int R, class T>
void scatter_term(const ElasticStep<T>& s, int term, const T* g) {
  const ElasticTerm t = elastic_term[term];
  const FieldLayout& L = s.layout;
  const int f = t.field, a = t.axis;
  const bool plus = elastic_half(f, a);
  T* src = s.f[t.source];
  const index_t stride = L.stride(a);
  const T* gk = s.coef.g[a];
  const int x0 = s.lo(f, 2), x1 = s.hi(f, 2);
  if (a == 2) {
    const int z0 = s.lo(f, 0), z1 = s.hi(f, 0), y0 = s.lo(f, 1), y1 = s.hi(f, 1);
#pragma omp for collapse(2) schedule(static)
    for (int z = z0; z < z1; ++z)
      for (int y = y0; y < y1; ++y) scatter_row<R>(plus, g, src, L.index(z, y, x0), stride, gk, x1 - x0);
    return;
  }
  const int b = 1 - a;  // the other axis the lines are taken across
  const int a0 = s.lo(f, a), a1 = s.hi(f, a), b0 = s.lo(f, b), b1 = s.hi(f, b);
  const int chunks = (x1 - x0 + chunk - 1) / chunk;
#pragma omp for collapse(2) schedule(static)
  for (int j = b0; j < b1; ++j)
    for (int c = 0; c < chunks; ++c) {
      const int xs = x0 + c * chunk, n = std::min(chunk, x1 - xs);
      for (int i = a0; i < a1; ++i) {
        const index_t i0 = a == 0 ? L.index(i, j, xs) : L.index(j, i, xs);
        scatter_row<R>(plus, g, src, i0, stride, gk, n);
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
// field's adjoint on a row), through the CPML, then scattered into the source field's adjoint.
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
  scatter_term<R>(s, term, g);
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
