// Independent fp64 reference of the standard-linear-solid fit of docs/numerics.md (subsection "Attenuation: standard
// linear solids" of the staggered scheme): the relaxation times with their widening c, the per-Q weights y_l (least
// squares by the normal equations) and the Q of a fit. Written from the specification only; no engine code.
#include "validation/reference.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

namespace specwave::validation {

namespace {

void check_band(double f1, double f2) {
  if (!(std::isfinite(f1) && std::isfinite(f2) && f1 > 0 && f1 < f2))
    throw std::invalid_argument("staggered reference: the attenuation band must be 0 < f_1 < f_2");
}

// n frequencies log-spaced over [f1, f2], ends included (n >= 2).
std::vector<double> sls_log_frequencies(double f1, double f2, int n) {
  std::vector<double> f(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) f[std::size_t(i)] = f1 * std::pow(f2 / f1, double(i) / (n - 1));
  return f;
}

// tau_l = 1 / (2 pi f_l), f_l = (f_1 / c) (c^2 f_2 / f_1)^((l - 1) / (L - 1)); L = 1: f_l = sqrt(f_1 f_2).
std::vector<double> sls_tau(double f1, double f2, int L, double c) {
  std::vector<double> tau(static_cast<std::size_t>(L));
  for (int l = 1; l <= L; ++l) {
    const double fl = L == 1 ? std::sqrt(f1 * f2) : (f1 / c) * std::pow(c * c * f2 / f1, double(l - 1) / (L - 1));
    tau[std::size_t(l - 1)] = 1 / (2 * std::numbers::pi * fl);
  }
  return tau;
}

}  // namespace

std::vector<double> reference_sls_weights(const std::vector<double>& tau, double f1, double f2, double q) {
  check_band(f1, f2);
  if (!(std::isfinite(q) && q >= 1)) throw std::invalid_argument("staggered reference: Q must be finite and >= 1");
  const int L = int(tau.size());
  if (L < 1) throw std::invalid_argument("staggered reference: no relaxation times");
  // Rows i = 0..63: A_il = S_l(omega_i) - C_l(omega_i) / Q, right-hand side 1 / Q; S_l = omega tau / (1 + (omega
  // tau)^2), C_l = (omega tau)^2 / (1 + (omega tau)^2). Normal equations A^T A y = A^T b.
  const std::vector<double> f = sls_log_frequencies(f1, f2, 64);
  Eigen::MatrixXd A(Eigen::Index(f.size()), L);
  Eigen::VectorXd b = Eigen::VectorXd::Constant(Eigen::Index(f.size()), 1 / q);
  for (std::size_t i = 0; i < f.size(); ++i) {
    const double omega = 2 * std::numbers::pi * f[i];
    for (int l = 0; l < L; ++l) {
      const double wt = omega * tau[std::size_t(l)];
      const double S = wt / (1 + wt * wt), C = wt * wt / (1 + wt * wt);
      A(Eigen::Index(i), l) = S - C / q;
    }
  }
  const Eigen::MatrixXd N = A.transpose() * A;
  const Eigen::VectorXd rhs = A.transpose() * b;
  const Eigen::VectorXd y = N.ldlt().solve(rhs);
  return std::vector<double>(y.data(), y.data() + L);
}

double reference_sls_q(const std::vector<double>& tau, const std::vector<double>& y, double f) {
  const double omega = 2 * std::numbers::pi * f;
  double re = 1, im = 0;  // Re m = 1 + sum_l y_l C_l, Im m = sum_l y_l S_l
  for (std::size_t l = 0; l < tau.size(); ++l) {
    const double wt = omega * tau[l];
    re += y[l] * wt * wt / (1 + wt * wt);
    im += y[l] * wt / (1 + wt * wt);
  }
  return re / im;
}

ReferenceSlsFit reference_sls_relaxation(double f1, double f2, int L) {
  check_band(f1, f2);
  if (L < 1 || L > 8) throw std::invalid_argument("staggered reference: L must be 1..8, got " + std::to_string(L));
  // c: the first of 1.0, 1.1, .., 2.0 minimising max |Q(f) / 100 - 1| over 2001 log-spaced frequencies of the band
  // (strictly smaller errors only replace the best: ties keep the first).
  const std::vector<double> f = sls_log_frequencies(f1, f2, 2001);
  ReferenceSlsFit best;
  double best_err = 0;
  for (int k = 0; k <= 10; ++k) {
    const double c = 1 + 0.1 * k;
    const std::vector<double> tau = sls_tau(f1, f2, L, c);
    const std::vector<double> y = reference_sls_weights(tau, f1, f2, 100);
    double err = 0;
    for (double fi : f) err = std::max(err, std::abs(reference_sls_q(tau, y, fi) / 100 - 1));
    if (k == 0 || err < best_err) best_err = err, best.tau = tau, best.widening = c;
  }
  return best;
}

}  // namespace specwave::validation
