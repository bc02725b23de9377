#pragma once
// Per-point FDTD physics, shared by the CPU loops and the CUDA kernels (docs/numerics.md).
// Every function reads a padded field (FieldLayout) at flat index i; strides are in elements.
#include "kernels/common.hpp"

#ifndef SPECWAVE_NEAR_TERMS
#define SPECWAVE_NEAR_TERMS 2
#endif

namespace specwave {

// Stencil coefficients already divided by the spacing: d2[a][k] = c_k / h_a^2, d1[a][k] = d_k / h_a.
// Passed by value to kernels (it fits a CUDA kernel parameter block).
template <class T>
struct FdtdCoefficients {
  int radius = 0;
  T d2[3][9] = {};
  T d1[3][9] = {};
  T far_centre = 0;  // -2 sum_a sum_{k > near terms} d2[a][k] (see laplacian)
};

// D2_a u at i: (1/h^2) [c_0 u_i + sum_k c_k (u_{i+k s} + u_{i-k s})], in difference form (see laplacian).
template <int R, class T>
SPECWAVE_HD inline T second_derivative(const T* u, index_t i, index_t stride, const T* c2) {
  const T centre = u[i];
  T sum = 0;
#pragma unroll
  for (int k = 1; k <= R; ++k) sum += c2[k] * ((u[i + k * stride] - centre) + (u[i - k * stride] - centre));
  return sum;
}

// D1_a u at i: (1/h) sum_k d_k (u_{i+k s} - u_{i-k s}).
template <int R, class T>
SPECWAVE_HD inline T first_derivative(const T* u, index_t i, index_t stride, const T* c1) {
  T sum = 0;
#pragma unroll
  for (int k = 1; k <= R; ++k) sum += c1[k] * (u[i + k * stride] - u[i - k * stride]);
  return sum;
}

// L_h u = D2_z u + D2_y u + D2_x u. The near terms (k <= near_terms, the large coefficients) are summed as
// c_k ((u_{i+k} - u_i) + (u_{i-k} - u_i)): where u is smooth these differences are small and exact, which keeps
// fp32 rounding far below the scheme's error. The far terms have small coefficients and are summed directly,
// their centre weights folded into c.far_centre = -2 sum_a sum_{k > near} d2[a][k] (fewer operations).
template <int R, class T>
SPECWAVE_HD inline T laplacian(const T* u, index_t i, index_t sy, index_t sz, const FdtdCoefficients<T>& c) {
  constexpr int near_terms = R < SPECWAVE_NEAR_TERMS ? R : SPECWAVE_NEAR_TERMS;
  const T centre = u[i];
  T sum = 0;
#pragma unroll
  for (int k = 1; k <= near_terms; ++k)
    sum += c.d2[0][k] * ((u[i + k * sz] - centre) + (u[i - k * sz] - centre)) +
           c.d2[1][k] * ((u[i + k * sy] - centre) + (u[i - k * sy] - centre)) +
           c.d2[2][k] * ((u[i + k] - centre) + (u[i - k] - centre));
  if constexpr (R > near_terms) {
    T far = c.far_centre * centre;
#pragma unroll
    for (int k = near_terms + 1; k <= R; ++k)
      far += c.d2[0][k] * (u[i + k * sz] + u[i - k * sz]) + c.d2[1][k] * (u[i + k * sy] + u[i - k * sy]) +
             c.d2[2][k] * (u[i + k] + u[i - k]);
    sum += far;
  }
  return sum;
}

// u^{n+1} = 2 u^n - u^{n-1} + (v dt)^2 Ltilde u^n.
template <class T>
SPECWAVE_HD inline T leapfrog(T u, T u_prev, T vel2dt2, T lap) {
  return T(2) * u - u_prev + vel2dt2 * lap;
}

// CPML memory variable, psi^n = b psi^{n-1} + a * drive (recursive convolution).
template <class T>
SPECWAVE_HD inline T cpml_memory(T b, T a, T previous, T drive) {
  return b * previous + a * drive;
}

// The PML correction of one axis at a point inside that axis' layer:
//   P = D2_a u + D1_a psi;  zeta^n = b zeta^{n-1} + a P;  returns (P + zeta^n) - D2_a u = D1_a psi + zeta^n,
// to be added to L_h u. psi/zeta are slab arrays (j, stride_s) whose padding outside the layer stays zero.
template <int R, class T>
SPECWAVE_HD inline T cpml_correction(const T* u, index_t i, index_t stride_u, const T* psi, T* zeta, index_t j,
                                     index_t stride_s, const T* c2, const T* c1, T a, T b) {
  const T dpsi = first_derivative<R>(psi, j, stride_s, c1);
  const T p = second_derivative<R>(u, i, stride_u, c2) + dpsi;
  const T z = cpml_memory(b, a, zeta[j], p);
  zeta[j] = z;
  return dpsi + z;
}

// ---- Adjoint (the transpose of the discrete step; docs/numerics.md, "Adjoint and gradient") ----------

// The imaging condition's term at one point: mu^{n+1} a^n with a^n = (u^{n+1} - 2 u^n + u^{n-1}) / (v dt)^2, the
// derivative of the step's output with respect to (v dt)^2 there (accumulated in fp64).
template <class T>
SPECWAVE_HD inline double imaging_term(T mu, T u_next, T u_now, T u_before, T vel2dt2) {
  const T a = (u_next - T(2) * u_now + u_before) / vel2dt2;
  return double(mu) * double(a);
}

// The imaging condition summed by parts in time (docs/numerics.md, "The adjoint in omega"): sum_n mu^{n+1} a^n =
// (1 / V^2) sum_n u^n (omega^n - 2 omega^{n+1} + omega^{n+2}) with omega = V mu, u^0 = u^{-1} = 0 and
// omega^{nt} = omega^{nt+1} = 0; the second difference of omega is the adjoint step's increment `d` = V (Ltilde^T
// omega^{n+1} + R^T g^n), so one forward field a step suffices. This is one point's term, u^n d.
template <class A = double, class T>
SPECWAVE_HD inline A imaging_term_by_parts(T u_now, T d) {
  return A(u_now) * A(d);
}

// u^{n+1} = 2 u^n - u^{n-1} + d with d = (v dt)^2 lap given: leapfrog's arithmetic (the same rounding), for a caller
// that keeps d.
template <class T>
SPECWAVE_HD inline T leapfrog_increment(T u, T u_prev, T d) {
  return T(2) * u - u_prev + d;
}

// lambda^n = 2 mu^{n+1} - mu^{n+2} + Ltilde^T ((v dt)^2 mu^{n+1}): `lap_w` is that last term.
template <class T>
SPECWAVE_HD inline T adjoint_leapfrog(T mu, T mu_next, T lap_w) {
  return T(2) * mu - mu_next + lap_w;
}

// The adjoint memory variables of one layer point, stored multiplied by a (betah = a beta, alphah = a alpha):
//   betah^n = b betah^{n+1} + a w,   gamma = w + betah^n   (w = (v dt)^2 mu^{n+1} at the point);
// returns gamma, which the alpha update differentiates.
template <class T>
SPECWAVE_HD inline T cpml_adjoint_beta(T b, T a, T* betah, T w) {
  const T bn = cpml_memory(b, a, *betah, w);
  *betah = bn;
  return w + bn;
}

//   alphah^n = b alphah^{n+1} + a D1^T gamma = b alphah^{n+1} - a D1 gamma   (D1 is antisymmetric on the slab).
template <int R, class T>
SPECWAVE_HD inline T cpml_adjoint_alpha(T b, T a, T alphah, const T* gamma, index_t j, index_t stride_s, const T* c1) {
  return cpml_memory(b, a, alphah, -first_derivative<R>(gamma, j, stride_s, c1));
}

// The PML part of Ltilde^T at a point within R of one axis' layer: D2_a betah + D1_a^T alphah
// = D2_a betah - D1_a alphah, both zero outside the layer (the slab's padding).
template <int R, class T>
SPECWAVE_HD inline T cpml_adjoint_correction(const T* alphah, const T* betah, index_t j, index_t stride_s, const T* c2,
                                             const T* c1) {
  return second_derivative<R>(betah, j, stride_s, c2) - first_derivative<R>(alphah, j, stride_s, c1);
}

}  // namespace specwave
