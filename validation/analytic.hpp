#pragma once
// Analytic solutions of m u_tt - lap u = s(t) delta(x - x_s) in a homogeneous medium (docs/validation.md).
#include <vector>

namespace specwave::validation {

// Continuous in space and time: u(r, t) = s(t - r/v) / (4 pi r), from samples s_n = s(n dt) by band-limited
// (Fourier) time shift. Returns u(r, n dt), n = 0..nt-1. With dimension = 2, the solution in the plane (a point
// source of the x-z plane: m u_tt - (u_xx + u_zz) = s(t) delta(x) delta(z)), u = s * H(t - r/v) / (2 pi sqrt(t^2 -
// r^2 / v^2)), computed in the frequency domain as S(w) (-i / 4) H0^(2)(w r / v).
std::vector<double> green_continuous(const std::vector<double>& wavelet, double dt, double r, double v,
                                     int dimension = 3);

// Continuous in space, leapfrog in time: the exact solution of u^{n+1} - 2u^n + u^{n-1} = dt^2 v^2 (lap u^n + f^n).
// In the frequency domain it is the continuous Green's function with the discrete wavenumber
// k(w) = (2 / (v dt)) sin(w dt / 2), so comparing an FDTD run with it isolates the spatial error.
std::vector<double> green_time_discrete(const std::vector<double>& wavelet, double dt, double r, double v,
                                        int dimension = 3);

}  // namespace specwave::validation
