#pragma once
// Central finite-difference coefficients of order 2R, computed by formula (docs/numerics.md).
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace specwave {

inline constexpr int max_stencil_radius = 8;  // order 16

// Second derivative: c_k = 2 (-1)^{k+1} (R!)^2 / (k^2 (R-k)! (R+k)!), c_0 = -2 sum_{k>=1} c_k.
inline std::vector<double> second_derivative_coefficients(int radius) {
  if (radius < 1 || radius > max_stencil_radius)
    throw std::invalid_argument("stencil radius " + std::to_string(radius) + " outside 1..8 (orders 2..16)");
  std::vector<double> c(radius + 1, 0.0);
  const double lg_r = std::lgamma(radius + 1.0);
  for (int k = 1; k <= radius; ++k) {
    const double magnitude = std::exp(2 * lg_r - std::lgamma(radius - k + 1.0) - std::lgamma(radius + k + 1.0));
    c[k] = 2.0 * (k % 2 == 1 ? 1.0 : -1.0) * magnitude / (double(k) * k);
    c[0] -= 2.0 * c[k];
  }
  return c;
}

// First derivative: d_k = (-1)^{k+1} (R!)^2 / (k (R-k)! (R+k)!), d_0 = 0.
inline std::vector<double> first_derivative_coefficients(int radius) {
  if (radius < 1 || radius > max_stencil_radius)
    throw std::invalid_argument("stencil radius " + std::to_string(radius) + " outside 1..8 (orders 2..16)");
  std::vector<double> d(radius + 1, 0.0);
  const double lg_r = std::lgamma(radius + 1.0);
  for (int k = 1; k <= radius; ++k) {
    const double magnitude = std::exp(2 * lg_r - std::lgamma(radius - k + 1.0) - std::lgamma(radius + k + 1.0));
    d[k] = (k % 2 == 1 ? 1.0 : -1.0) * magnitude / k;
  }
  return d;
}

// Staggered first derivative (docs/numerics.md, "Variable density"): (1/h) sum_k g_k (u_{i+k} - u_{i-k+1}) at i + 1/2,
// g_k = 1 / (2k - 1) prod_{j != k} (2j - 1)^2 / ((2j - 1)^2 - (2k - 1)^2); g_0 = 0.
inline std::vector<double> staggered_derivative_coefficients(int radius) {
  if (radius < 1 || radius > max_stencil_radius)
    throw std::invalid_argument("stencil radius " + std::to_string(radius) + " outside 1..8 (orders 2..16)");
  std::vector<double> g(radius + 1, 0.0);
  for (int k = 1; k <= radius; ++k) {
    const double ok = 2.0 * k - 1;
    double product = 1 / ok;
    for (int j = 1; j <= radius; ++j) {
      if (j == k) continue;
      const double oj = 2.0 * j - 1;
      product *= oj * oj / (oj * oj - ok * ok);
    }
    g[k] = product;
  }
  return g;
}

// 2 sum_k |g_k|: the largest value of the symbol of h D+ (at the Nyquist wavenumber).
inline double staggered_derivative_symbol_max(int radius) {
  double sum = 0;
  for (double g : staggered_derivative_coefficients(radius)) sum += std::abs(g);
  return 2 * sum;
}

// S_max = max over theta of -(c_0 + 2 sum_k c_k cos(k theta)): the largest eigenvalue of -h^2 D2.
inline double second_derivative_symbol_max(int radius) {
  const auto c = second_derivative_coefficients(radius);
  double best = 0;
  const int samples = 4096;
  for (int s = 0; s <= samples; ++s) {
    const double theta = M_PI * s / samples;
    double value = -c[0];
    for (int k = 1; k <= radius; ++k) value -= 2 * c[k] * std::cos(k * theta);
    best = std::max(best, value);
  }
  return best;
}

}  // namespace specwave
