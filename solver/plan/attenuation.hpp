#pragma once
// The standard-linear-solid fit of a constant Q (docs/numerics.md, "Attenuation"): the relaxation times of the grid's
// L mechanisms and, for a point's Q, the weights y_l, the relaxed modulus factor and the unrelaxed velocity.
#include <cstddef>
#include <functional>
#include <vector>

namespace specwave {

struct SlsFit {
  std::vector<double> tau;  // relaxation times tau_l (s); empty: no attenuation
  double widening = 1;      // c: the relaxation frequencies span [f_1 / c, c f_2]
  double f1 = 0, f2 = 0;    // the band (Hz)
  double f_ref = 0;         // where the model's velocity is the phase velocity (Hz)

  // The normal equations' pieces over the 64 frequencies (set by fit_sls, prepare): S^T S, S^T C + C^T S, C^T C (L x L,
  // row-major) and S^T 1, C^T 1 (L), S_il = S_l(omega_i), C_il = C_l(omega_i); weights(q) solves
  // (S^T S - (S^T C + C^T S) / q + C^T C / q^2) y = (S^T 1 - C^T 1 / q) / q, L x L work a point.
  std::vector<double> ss, sc, cc, s1, c1;

  bool empty() const { return tau.empty(); }
  void prepare();
  // y_1 .. y_L for `q` (least squares over 64 frequencies log-spaced over the band); thread-safe.
  std::vector<double> weights(double q) const;
  // Q at frequency f (Hz) of the weights y: Re m / Im m.
  double q_at(const std::vector<double>& y, double f) const;
  // [Re m(2 pi f_ref)^(-1/2)]^2: K_R = rho v^2 times this.
  double relaxed_factor(const std::vector<double>& y) const;
  // v_U / v = sqrt(1 + sum y_l) Re m(2 pi f_ref)^(-1/2): the unrelaxed wave's speed over the model's.
  double unrelaxed_speedup(const std::vector<double>& y) const;
  // The largest |Q(f) / q - 1| over 2001 frequencies log-spaced over the band.
  double largest_error(double q) const;
};

// The relaxation times for L mechanisms over [f1, f2] (the widening c searched over 1.0, 1.1, .., 2.0 for the
// smallest largest_error at Q = 100), with the reference frequency f_ref (0: sqrt(f1 f2)). Throws
// std::invalid_argument unless 0 < f1 < f2 and 1 <= L <= 8.
SlsFit fit_sls(double f1, double f2, int mechanisms, double f_ref = 0);

// The trapezoidal rule for a memory variable, r_l + tau_l dr_l/dt = g, over a step dt: r^{n+1} = a_l r^n + b_l g with
// a_l = (1 - h) / (1 + h), b_l = (dt / tau_l) / (1 + h), h = dt / (2 tau_l).
struct SlsStep {
  std::vector<double> a, b;
};
SlsStep sls_step(const SlsFit& fit, double dt);

// A point's fit: its weights y_l, 1 + sum y_l, and the relaxed factor (K_R = rho v^2 relaxed).
struct SlsPointFit {
  std::vector<double> y;
  double sum = 1, relaxed = 1;
};
// set(k, fit of q(k)) for every point k < points, on all threads: each distinct Q fitted once when there are few
// (a constant, layers), else every point fitted (a Q dataset).
void fit_points(const SlsFit& fit, std::size_t points, const std::function<float(std::size_t)>& q,
                const std::function<void(std::size_t, const SlsPointFit&)>& set);

}  // namespace specwave
