#pragma once
// Per-point and per-wavenumber physics of the k-space pseudo-spectral method (docs/numerics.md), shared by
// the CPU loops and (later) the CUDA kernels.
#include <cmath>

#include "kernels/common.hpp"

namespace specwave {

// The k-space Laplacian's symbol: -|k|^2 sinc^2(c_ref |k| dt / 2), sinc(x) = sin(x)/x.
SPECWAVE_HD inline double kspace_symbol(double k2, double c_ref, double dt) {
  const double x = 0.5 * c_ref * std::sqrt(k2) * dt;
  const double sinc = x < 1e-8 ? 1.0 : std::sin(x) / x;
  return -k2 * sinc * sinc;
}

// The k-space source correction: sinc^2(c_ref |k| dt / 2).
SPECWAVE_HD inline double kspace_source_symbol(double k2, double c_ref, double dt) {
  const double x = 0.5 * c_ref * std::sqrt(k2) * dt;
  const double sinc = x < 1e-8 ? 1.0 : std::sin(x) / x;
  return sinc * sinc;
}

// (1 + eta dt) u^{n+1} = 2 u^n - (1 - eta dt) u^{n-1} + (v dt)^2 lap, with eta_dt = eta * dt (0 outside the layer).
template <class T>
SPECWAVE_HD inline T damped_leapfrog(T u, T u_prev, T vel2dt2, T lap, T eta_dt) {
  return (T(2) * u - (T(1) - eta_dt) * u_prev + vel2dt2 * lap) / (T(1) + eta_dt);
}

}  // namespace specwave
