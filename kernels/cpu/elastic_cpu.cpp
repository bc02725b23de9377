// CPU loops of the elastic velocity-stress step (docs/numerics.md, "Isotropic elastic waves"). Each updated field is
// swept row by row (x rows, vectorised; rows shared over the threads): a row's derivatives go to row buffers, each
// gets its CPML (and M-PML) corrections where the row crosses a layer of one of its filters' axes (the whole row for
// the z and y layers, the row's ends for the x layers), and the update combines them.
#include "kernels/cpu/elastic_cpu.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "kernels/staggered_step.hpp"

namespace specwave::cpu {
namespace {

// out[x] = (D+_a src) or (D-_a src) at the points i0 + x (x = 0 .. n - 1) of a row, `stride` the axis' stride.
template <int R, class T>
inline void derivative_row(bool plus, const T* __restrict src, index_t i0, index_t stride, const T* g, int n,
                           T* __restrict out) {
  if (plus) {
#pragma omp simd
    for (int x = 0; x < n; ++x) out[x] = staggered_d_plus<R>(src, i0 + x, stride, g);
  } else {
#pragma omp simd
    for (int x = 0; x < n; ++x) out[x] = staggered_d_minus<R>(src, i0 + x, stride, g);
  }
}

// The CPML correction of term `term` on row (z, y), points x0 .. x1 - 1 of the row in `d` (indexed x - x0): where the
// row lies in the layer of one of the term's filters, in their order, psi = b psi + a G and G += psi.
template <class T>
inline void cpml_term(const ElasticStep<T>& s, int term, int z, int y, int x0, int x1, T* __restrict d) {
  for (int k = 0; k < elastic_filters; ++k) {
    const ElasticCpmlRow<T> r = elastic_cpml_row(s, term, k, z, y, x0, x1);
    T* __restrict m = r.m;
    T* __restrict dd = d + r.skip;
    if (r.scalar) {
#pragma omp simd
      for (int x = 0; x < r.count; ++x) {
        const T next = elastic_cpml_memory(r.b, m[x], r.a, dd[x]);
        m[x] = next;
        dd[x] += next;
      }
    } else {
      const T* __restrict a = r.a_x, * __restrict b = r.b_x;
#pragma omp simd
      for (int x = 0; x < r.count; ++x) {
        const T next = elastic_cpml_memory(b[x], m[x], a[x], dd[x]);
        m[x] = next;
        dd[x] += next;
      }
    }
  }
}

// Three row buffers of the calling thread's own (inside a parallel region).
template <class T>
struct RowBuffers {
  std::vector<T> data;
  T* d[3];
  explicit RowBuffers(const ElasticStep<T>& s) : data(3 * std::size_t(s.layout.nx + 2 * s.coef.radius)) {
    const std::size_t row = data.size() / 3;
    for (int k = 0; k < 3; ++k) d[k] = data.data() + k * row;
  }
};

// fn(z, y) for every row of field f's computed range, shared over the threads of the enclosing parallel region.
template <class T, class Fn>
inline void for_each_row(const ElasticStep<T>& s, int f, Fn&& fn) {
  const int z0 = s.lo(f, 0), z1 = s.hi(f, 0), y0 = s.lo(f, 1), y1 = s.hi(f, 1);
#pragma omp for collapse(2) schedule(static)
  for (int z = z0; z < z1; ++z)
    for (int y = y0; y < y1; ++y) fn(z, y);
}

// The derivative of term `term` on row (z, y), x0 .. x1 - 1, into d, CPML included (0 along an inactive axis).
template <int R, class T>
inline void term_row(const ElasticStep<T>& s, int term, int z, int y, int x0, int x1, T* d) {
  const ElasticTerm t = elastic_term[term];
  if (s.two_d && t.axis == 1) {
    std::fill_n(d, x1 - x0, T(0));
    return;
  }
  derivative_row<R>(elastic_half(t.field, t.axis), s.f[t.source], s.layout.index(z, y, x0), s.layout.stride(t.axis),
                    s.coef.g[t.axis], x1 - x0, d);
  cpml_term(s, term, z, y, x0, x1, d);
}

// The images above a free surface on the R planes the next sweep reads (whole padded planes): f[-k] = sign f[k]
// (a field on the nodes along z) or sign f[k - 1] (half way along z), k = 1 .. R.
template <class T>
void mirror_top(const FieldLayout& L, int R, T* f, bool half, T sign) {
  const index_t plane = L.stride_z();
  for (int k = 1; k <= R; ++k) {
    T* __restrict ghost = f + L.index(-k, -L.halo, -L.halo);
    const T* __restrict image = f + L.index(half ? k - 1 : k, -L.halo, -L.halo);
#pragma omp parallel for simd schedule(static)
    for (index_t p = 0; p < plane; ++p) ghost[p] = sign * image[p];
  }
}

template <int R, class T>
void velocity_radius(const ElasticStep<T>& s) {
  if (s.free_surface) {
    mirror_top(s.layout, R, s.f[szz], false, T(-1));
    mirror_top(s.layout, R, s.f[szy], true, T(-1));
    mirror_top(s.layout, R, s.f[szx], true, T(-1));
  }
#pragma omp parallel
  {
    RowBuffers<T> buffers(s);
    T* const* d = buffers.d;
    for (int c = 0; c < 3; ++c) {
      const int f = vz + c;
      const int x0 = s.lo(f, 2), x1 = s.hi(f, 2);
      for_each_row(s, f, [&](int z, int y) {
        for (int k = 0; k < 3; ++k) term_row<R>(s, 3 * c + k, z, y, x0, x1, d[k]);
        const index_t i0 = s.layout.index(z, y, x0);
        T* __restrict v = s.f[f] + i0;
        const T* __restrict b = s.bdt[c] + i0;
        const T* __restrict d0 = d[0], * __restrict d1 = d[1], * __restrict d2 = d[2];
#pragma omp simd
        for (int x = 0; x < x1 - x0; ++x) v[x] = elastic_velocity(v[x], b[x], d0[x] + d1[x] + d2[x]);
        if (T* __restrict out = s.increment_out[f] ? s.increment_out[f] + i0 : nullptr)
#pragma omp simd
          for (int x = 0; x < x1 - x0; ++x) out[x] = d0[x] + d1[x] + d2[x];
      });
    }
  }
}

template <int R, class T>
void stress_radius(const ElasticStep<T>& s) {
  const int nx = s.layout.nx;
  if (s.free_surface) {
    mirror_top(s.layout, R, s.f[vz], true, T(1));
    mirror_top(s.layout, R, s.f[vy], false, T(1));
    mirror_top(s.layout, R, s.f[vx], false, T(1));
  }
#pragma omp parallel
  {
    RowBuffers<T> buffers(s);
    T* const* d = buffers.d;
    for_each_row(s, szz, [&](int z, int y) {
      for (int k = 0; k < 3; ++k) term_row<R>(s, 9 + k, z, y, 0, nx, d[k]);
      const index_t i0 = s.layout.index(z, y, 0);
      T* __restrict sz = s.f[szz] + i0;
      T* __restrict sy = s.f[syy] + i0;
      T* __restrict sx = s.f[sxx] + i0;
      const T* __restrict lam = s.lamdt + i0;
      const T* __restrict mu2 = s.mu2dt + i0;
      T* __restrict ez = d[0];
      const T* __restrict ey = d[1], * __restrict ex = d[2];
      if (z == 0 && s.free_surface)  // s_zz = 0 on the surface: (lambda + 2 mu) e_z = -lambda (e_y + e_x)
#pragma omp simd
        for (int x = 0; x < nx; ++x) ez[x] = -(lam[x] / (lam[x] + mu2[x])) * (ey[x] + ex[x]);
#pragma omp simd
      for (int x = 0; x < nx; ++x) {
        const T trace = ez[x] + ey[x] + ex[x];
        sz[x] = elastic_normal_stress(sz[x], lam[x], mu2[x], trace, ez[x]);
        sy[x] = elastic_normal_stress(sy[x], lam[x], mu2[x], trace, ey[x]);
        sx[x] = elastic_normal_stress(sx[x], lam[x], mu2[x], trace, ex[x]);
      }
      for (int k = 0; k < 3; ++k)
        if (s.increment_out[szz + k]) std::copy_n(d[k], nx, s.increment_out[szz + k] + i0);
    });
    for (int c = 0; c < 3; ++c) {
      const int f = szy + c;
      const int x0 = s.lo(f, 2), x1 = s.hi(f, 2);
      for_each_row(s, f, [&](int z, int y) {
        term_row<R>(s, 12 + 2 * c, z, y, x0, x1, d[0]);
        term_row<R>(s, 13 + 2 * c, z, y, x0, x1, d[1]);
        const index_t i0 = s.layout.index(z, y, x0);
        T* __restrict sv = s.f[f] + i0;
        const T* __restrict mu = s.mudt[c] + i0;
        const T* __restrict d0 = d[0], * __restrict d1 = d[1];
#pragma omp simd
        for (int x = 0; x < x1 - x0; ++x) sv[x] = elastic_shear_stress(sv[x], mu[x], d0[x], d1[x]);
        if (T* __restrict out = s.increment_out[f] ? s.increment_out[f] + i0 : nullptr)
#pragma omp simd
          for (int x = 0; x < x1 - x0; ++x) out[x] = d0[x] + d1[x];
      });
    }
  }
}

}  // namespace

template <class T>
void elastic_velocity_step(const ElasticStep<T>& s) {
  with_radius(s.coef.radius, [&](auto R) {
    if constexpr (decltype(R)::value <= 4)
      velocity_radius<decltype(R)::value>(s);
    else
      throw std::logic_error("elastic step: order 2 to 8 (stencil radius 1 to 4)");
  });
}

template <class T>
void elastic_stress_step(const ElasticStep<T>& s) {
  with_radius(s.coef.radius, [&](auto R) {
    if constexpr (decltype(R)::value <= 4)
      stress_radius<decltype(R)::value>(s);
    else
      throw std::logic_error("elastic step: order 2 to 8 (stencil radius 1 to 4)");
  });
}

template void elastic_velocity_step<float>(const ElasticStep<float>&);
template void elastic_velocity_step<double>(const ElasticStep<double>&);
template void elastic_stress_step<float>(const ElasticStep<float>&);
template void elastic_stress_step<double>(const ElasticStep<double>&);

}  // namespace specwave::cpu
