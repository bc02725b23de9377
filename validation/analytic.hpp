#pragma once
// Analytic solutions of m u_tt - lap u = s(t) delta(x - x_s) in a homogeneous medium (docs/validation.md).
#include <vector>

namespace specwave::validation {

// Continuous in space and time: u(r, t) = s(t - r/v) / (4 pi r), from samples s_n = s(n dt) by band-limited
// (Fourier) time shift. Returns u(r, n dt), n = 0..nt-1.
std::vector<double> green_continuous(const std::vector<double>& wavelet, double dt, double r, double v);

// Continuous in space, leapfrog in time: the exact solution of u^{n+1} - 2u^n + u^{n-1} = dt^2 v^2 (lap u^n + f^n).
// In the frequency domain it is the continuous Green's function with the discrete wavenumber
// k(w) = (2 / (v dt)) sin(w dt / 2), so comparing an FDTD run with it isolates the spatial error.
std::vector<double> green_time_discrete(const std::vector<double>& wavelet, double dt, double r, double v);

}  // namespace specwave::validation
