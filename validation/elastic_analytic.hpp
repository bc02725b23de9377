#pragma once
// Analytic whole-space solutions of the isotropic elastic velocity-stress system (docs/numerics.md, "Isotropic
// elastic waves"), for validating its point-force and explosive sources. Vectors are (z, y, x), as the engine's.
// The Ricker wavelet is taken as its formula for all t (not zero before t = 0): for a delay t0 >= 1.5 / f the
// difference from a source switched on at t = 0 is below 1e-8 of the peak.
#include <array>
#include <vector>

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

// The same velocity from the samples s_n = s(n dt) (n = 0 .. nt - 1, newtons) of a force's wavelet, as the engine's
// velocity traces record it: continuous in space and, with `leapfrog`, discrete in time as the velocity-stress
// leapfrog steps it. In the frequency domain (signals exp(+i w t)) the leapfrog system is the continuous one at
// W = (2 / dt) sin(w dt / 2) for the velocities' half steps, and a trace's sample n, the mean of v^{n-1/2} and
// v^{n+1/2}, takes a factor cos(w dt / 2): v(w) = cos(w dt / 2) i W G(W) d S(w) with Stokes' displacement tensor
//   G_ij(w) = [(3 g_i g_j - delta_ij) I(w) / r^3 + g_i g_j exp(-i w r / vp) / (vp^2 r)
//              - (g_i g_j - delta_ij) exp(-i w r / vs) / (vs^2 r)] / (4 pi rho),
//   I(w) = int_{r/vp}^{r/vs} tau exp(-i w tau) dtau,
// so comparing the engine with it isolates the error of the spatial operator (docs/validation.md, section 14).
// Without `leapfrog`, W = w and no factor: the continuous solution of the band-limited samples. Returns nt (z, y, x)
// samples. Zero-padded in time so that the delay does not wrap around.
std::vector<std::array<double, 3>> stokes_force_velocity_sampled(const ElasticMedium& m, const std::vector<double>& s,
                                                                 double dt, const std::array<double, 3>& d,
                                                                 const std::array<double, 3>& x, bool leapfrog);

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

// Lamb's problem: a vertical point force F(t) (newtons) at the origin of the free surface z = 0 of the homogeneous
// half-space z >= 0 (z down, as the engine's), pointing down (+z, into the solid), with receivers on the surface at
// horizontal distance r > 0. Components: vertical positive down (+z, along the force), radial positive away from the
// source. Any Poisson ratio: vp > sqrt(4/3) vs (a positive bulk modulus), vs > 0, rho > 0, r > 0. Exact for all t
// (no far-field approximation); the method (Cagniard-de Hoop on the surface, Johnson 1974) is in
// elastic_analytic.cpp, and it reduces to Pekeris' (1955) closed form for the Poisson solid vp = sqrt(3) vs.
struct SurfaceVelocity {
  double vertical, radial;  // m/s
};
struct SurfaceDisplacement {
  double vertical, radial;  // m
};

// The Rayleigh wave speed c_R: the root in (0, vs) of (2 - c^2/vs^2)^2 = 4 sqrt(1 - c^2/vp^2) sqrt(1 - c^2/vs^2)
// (vs sqrt(2 - 2/sqrt(3)) = 0.9194 vs for the Poisson solid vp = sqrt(3) vs).
double rayleigh_velocity(const ElasticMedium& m);

// The step response: surface displacement (m per newton) for F(t) = H(t), the force switched on at t = 0. Zero
// before the P arrival r/vp; the vertical tends to -infinity as (t_R - t)^(-1/2) just before the Rayleigh arrival
// t_R = r/c_R and, after it, equals Boussinesq's static (1 - nu) / (2 pi mu r); the radial tends to -infinity as
// (t - t_R)^(-1/2) just after it and to the static -(1 - 2 nu) / (4 pi mu r) as t -> infinity. At t = t_R itself
// both are -infinity (vertical) or NaN (radial). Accurate to ~1e-13 relative except next to t_R, where rounding
// grows as 1e-14 / eps before it and 1e-16 eps^(-3/2) after it, eps = |t / t_R - 1| (1e-8 at eps = 1e-6).
SurfaceDisplacement lamb_step_displacement(const ElasticMedium& m, double r, double t);

// Surface displacement and particle velocity for the Ricker force f: the step response convolved with F'(t) and
// F''(t), finite everywhere (t_R included), to ~1e-13 of the trace's peak at every t (the singularity never enters
// a quadrature). Exactly zero before t0 - 2.5/f + r/vp, where the wavelet is below 1e-23 of its peak. About a
// millisecond a sample.
SurfaceDisplacement lamb_surface_displacement(const ElasticMedium& m, const RickerForce& f, double r, double t);
SurfaceVelocity lamb_surface_velocity(const ElasticMedium& m, const RickerForce& f, double r, double t);

}  // namespace specwave::validation
