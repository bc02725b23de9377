#pragma once
// Per-point and per-wavenumber physics of the k-space pseudo-spectral method (docs/numerics.md), shared by
// the CPU loops and the CUDA kernels. The adjoint reuses the forward updates on scaled adjoint variables
// (docs/numerics.md, "Adjoint of the spectral scheme"); only the derivatives with respect to (v dt)^2 are its own.
#include <cmath>

#include "kernels/common.hpp"

namespace specwave {

// kappa = sinc(c_ref |k| dt / 2), sinc(x) = sin(x)/x: the k-space correction of one derivative.
SPECWAVE_HD inline double kspace_sinc(double k2, double c_ref, double dt) {
  const double x = 0.5 * c_ref * std::sqrt(k2) * dt;
  return x < 1e-8 ? 1.0 : std::sin(x) / x;
}

// The k-space Laplacian's symbol: -|k|^2 sinc^2(c_ref |k| dt / 2).
SPECWAVE_HD inline double kspace_symbol(double k2, double c_ref, double dt) {
  const double sinc = kspace_sinc(k2, c_ref, dt);
  return -k2 * sinc * sinc;
}

// (1 + eta dt) u^{n+1} = 2 u^n - (1 - eta dt) u^{n-1} + (v dt)^2 lap, with eta_dt = eta * dt (0 outside the layer).
template <class T>
SPECWAVE_HD inline T damped_leapfrog(T u, T u_prev, T vel2dt2, T lap, T eta_dt) {
  return (T(2) * u - (T(1) - eta_dt) * u_prev + vel2dt2 * lap) / (T(1) + eta_dt);
}

// The damping layer's derivative with respect to (v dt)^2: u^{n+1} = [2 u^n - (1 - eta dt) u^{n-1} + (v dt)^2 a^n] /
// (1 + eta dt) with a^n = Lk u^n + f^n, recovered from three consecutive fields as
//   a^n = [(1 + eta dt) u^{n+1} - 2 u^n + (1 - eta dt) u^{n-1}] / (v dt)^2.
// The Born source is (v dt)^2-perturbation * a^n / (1 + eta dt); the gradient sums mu^{n+1} a^n (docs/numerics.md,
// "Adjoint of the spectral scheme").
template <class T>
SPECWAVE_HD inline T damped_second_difference(T u_next, T u, T u_prev, T eta_dt, T vel2dt2) {
  return ((T(1) + eta_dt) * u_next - T(2) * u + (T(1) - eta_dt) * u_prev) / vel2dt2;
}

// The staggered derivative multiplier of the split-field PML: i k exp(sign i k h / 2) (sign = +1: grid points ->
// staggered points, -1: back), returned as (re, im). At the Nyquist index (k h = pi) it is real: -k for sign +1.
struct Complex2 {
  double re, im;
};
SPECWAVE_HD inline Complex2 staggered_multiplier(double k, double h, int sign) {
  const double half = 0.5 * k * h;
  // i k (cos(half) + i sign sin(half)) = -sign k sin(half) + i k cos(half)
  return {-sign * k * std::sin(half), k * std::cos(half)};
}

// Depth into the split-field PML, in units of its thickness, at the (possibly half-integer) index s of an axis of
// n points with layers of W points at both ends (docs/numerics.md): 0 outside, 1 at the outer edge.
SPECWAVE_HD inline double pml_depth(double s, int n, int W) {
  if (W <= 0) return 0;
  double xi = 0;
  if (s < W) xi = (W - s) / W;
  if (s > n - 1 - W) xi = (s - (n - 1 - W)) / W;
  return xi < 0 ? 0 : (xi > 1 ? 1 : xi);
}

// Split-field PML updates, b = exp(-d dt / 2) at the field's own points.
//   w^{n+1/2} = bs (bs w^{n-1/2} - dt D+ p^n),   p_a^{n+1} = b (b p_a^n - dt v^2 D- w_a^{n+1/2})
template <class T>
SPECWAVE_HD inline T pml_velocity_update(T w, T bs, T dt, T grad_p) {
  return bs * (bs * w - dt * grad_p);
}
template <class T>
SPECWAVE_HD inline T pml_pressure_update(T p_a, T b, T dt_v2, T div_w) {
  return b * (b * p_a - dt_v2 * div_w);
}
// With attenuation (docs/numerics.md, "Attenuation in the k-space method"): dt_v2 = dt v_U^2 (unrelaxed) and the
// memory variables' part of dp_a/dt over the step, memory = (dt / 2) sum_l (r_{l,a}^{n+1} + r_{l,a}^n), under the
// same exponential step: p_a^{n+1} = b (b p_a^n - dt v_U^2 D_a^- w_a + memory).
template <class T>
SPECWAVE_HD inline T pml_pressure_memory_update(T p_a, T b, T dt_v2, T div_w, T memory) {
  return b * (b * p_a - dt_v2 * div_w + memory);
}

// The transposed step with attenuation (docs/numerics.md, "Adjoint of the spectral scheme", "With attenuation"), on
// the scaled adjoint P_a (as without) and M_{l,a} = (adjoint of r_{l,a}) / dt, at one point: the drive of the velocity
// adjoint's D_a^+, X_a = P_a (1 - dt G / (2 K)) + sum_l g_l M_{l,a} (G = sum_l g_l, K = dt v_U^2), from the values
// after the step, and then each memory adjoint's update M_{l,a} <- a_l M_{l,a} - (dt / 2) (1 + a_l) P_a / K.
template <class T>
SPECWAVE_HD inline T pml_adjoint_drive(T P, T half_dt_G_over_K, T memory_sum) {
  return P * (T(1) - half_dt_G_over_K) + memory_sum;
}
template <class T>
SPECWAVE_HD inline T pml_adjoint_memory(T M, T decay, T half_dt, T P_over_K) {
  return decay * M - half_dt * (T(1) + decay) * P_over_K;
}

// The split pressure's derivative with respect to (v dt)^2: p_a^{n+1} = b^2 p_a^n - (v dt)^2 b D-w / dt + (v dt)^2
// F^n / 3, so q_a^n = d p_a^{n+1} / d (v dt)^2 = (p_a^{n+1} - b (b p_a^n)) / (v dt)^2 from two consecutive fields: the
// Born source of p_a (times the perturbation) and the gradient's factor (docs/numerics.md, "Adjoint of the spectral
// scheme").
template <class T>
SPECWAVE_HD inline T pml_pressure_derivative(T p_a_next, T p_a, T b, T vel2dt2) {
  return (p_a_next - b * (b * p_a)) / vel2dt2;
}

}  // namespace specwave
