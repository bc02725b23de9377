#pragma once
// Analytic whole-space solutions of the isotropic elastic velocity-stress system (docs/numerics.md, "Isotropic
// elastic waves"), for validating its point-force and explosive sources. Vectors are (z, y, x), as the engine's.
// The Ricker wavelet is taken as its formula for all t (not zero before t = 0): for a delay t0 >= 1.5 / f the
// difference from a source switched on at t = 0 is below 1e-8 of the peak.
#include <array>

namespace specwave::validation {

struct ElasticMedium {
  double vp, vs, rho;  // m/s, m/s, kg/m^3
};

// F(t) = amplitude (1 - 2 pi^2 f^2 (t - delay)^2) exp(-pi^2 f^2 (t - delay)^2): newtons for a force, the wavelet s
// of a pressure (explosive) source otherwise.
struct RickerForce {
  double peak_frequency, delay, amplitude = 1;
};

// Particle velocity (z, y, x components, m/s) at offset x (z, y, x metres, nonzero) from a point force F(t) d at
// the origin, at time t: the time derivative of Stokes' solution (Aki and Richards 2002, eq. 4.23). Linear in d
// (a unit vector for a force of F newtons). Requires vs > 0.
std::array<double, 3> stokes_force_velocity(const ElasticMedium& m, const RickerForce& f,
                                            const std::array<double, 3>& d, const std::array<double, 3>& x, double t);

// The near-field integral of the Stokes velocity, J(t) = int_{tau_p}^{tau_s} tau F'(t - tau) dtau (s^2 N for a
// force), exposed for its own test.
double stokes_near_field_integral(const RickerForce& f, double tau_p, double tau_s, double t);

// Pressure p = -(s_zz + s_yy + s_xx) / 3 (Pa) at distance r > 0 from the engine's explosive source of wavelet s:
//   p(r, t) = (1 - 4 vs^2 / (3 vp^2)) s(t - r / vp) / (4 pi r),
// which with vs = 0 is the acoustic solution of (1/vp^2) p_tt - lap p = s(t) delta(x). The derivation is in
// elastic_analytic.cpp.
double explosive_pressure(const ElasticMedium& m, const RickerForce& s, double r, double t);

// Particle velocity (z, y, x, m/s) of the same source at offset x: radial, v_r = (s(T) / (vp r) + S1(T) / r^2) /
// (4 pi rho) with T = t - r / vp and S1 = int s dt (a pure P wave, whatever vs).
std::array<double, 3> explosive_velocity(const ElasticMedium& m, const RickerForce& s, const std::array<double, 3>& x,
                                         double t);

}  // namespace specwave::validation
