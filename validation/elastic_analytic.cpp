#include "validation/elastic_analytic.hpp"

#include <fftw3.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <stdexcept>

namespace specwave::validation {
namespace {

// The Ricker wavelet, its derivative and its antiderivative (zero at t = -infinity), with x = t - t0, a = pi^2 f^2:
//   F = A (1 - 2 a x^2) e^{-a x^2},  F' = -2 a A x (3 - 2 a x^2) e^{-a x^2},  F1 = A x e^{-a x^2}.
struct Ricker {
  double a, t0, amplitude;
  explicit Ricker(const RickerForce& f)
      : a(M_PI * M_PI * f.peak_frequency * f.peak_frequency), t0(f.delay), amplitude(f.amplitude) {}
  double value(double t) const {
    const double x = t - t0;
    return amplitude * (1 - 2 * a * x * x) * std::exp(-a * x * x);
  }
  double derivative(double t) const {
    const double x = t - t0;
    return -2 * a * amplitude * x * (3 - 2 * a * x * x) * std::exp(-a * x * x);
  }
  double integral(double t) const {
    const double x = t - t0;
    return amplitude * x * std::exp(-a * x * x);
  }
};

// 16-point Gauss-Legendre nodes and weights on [-1, 1], by Newton's method on P_16 (computed once).
constexpr int gauss_points = 16;
struct GaussLegendre {
  std::array<double, gauss_points> node{}, weight{};
  GaussLegendre() {
    const int n = gauss_points;
    for (int i = 0; i < n; ++i) {
      double x = std::cos(M_PI * (i + 0.75) / (n + 0.5)), dp = 0;
      for (int iteration = 0; iteration < 100; ++iteration) {
        double p0 = 1, p1 = x;  // P_k by the three-term recurrence, then P_n' from P_n and P_{n-1}
        for (int k = 2; k <= n; ++k) {
          const double p2 = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
          p0 = p1;
          p1 = p2;
        }
        dp = n * (x * p1 - p0) / (x * x - 1);
        const double step = p1 / dp;
        x -= step;
        if (std::abs(step) < 1e-16) break;
      }
      node[i] = x;
      weight[i] = 2 / ((1 - x * x) * dp * dp);
    }
  }
};

void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(what);
}

}  // namespace

// J(t) = int_{tau_p}^{tau_s} tau F'(t - tau) dtau. Integrating by parts (d/dtau F(t - tau) = -F'(t - tau)),
//   J = H(tau_p) - H(tau_s),  H(tau) = tau F(t - tau) + F1(t - tau),
// exact for the Ricker. For short intervals (small r) H(tau_p) and H(tau_s) nearly cancel (J ~ tau^2 F' while
// H ~ F1), so there a 16-point Gauss-Legendre rule is used instead: over at most a quarter period of the peak
// frequency it is exact to rounding for this entire integrand.
double stokes_near_field_integral(const RickerForce& f, double tau_p, double tau_s, double t) {
  const Ricker F(f);
  if (tau_s * f.peak_frequency > 0.25) {
    auto h = [&](double tau) { return tau * F.value(t - tau) + F.integral(t - tau); };
    return h(tau_p) - h(tau_s);
  }
  static const GaussLegendre rule;
  const double half = (tau_s - tau_p) / 2, mid = (tau_s + tau_p) / 2;
  double sum = 0;
  for (int i = 0; i < gauss_points; ++i) {
    const double tau = mid + half * rule.node[i];
    sum += rule.weight[i] * tau * F.derivative(t - tau);
  }
  return sum * half;
}

// v_i = d/dt of Aki and Richards eq. 4.23, with g = x / r and tau_p = r / vp, tau_s = r / vs:
//   v_i = [(3 g_i g_j - delta_ij) J(t) / r^3 + g_i g_j F'(t - tau_p) / (vp^2 r)
//          - (g_i g_j - delta_ij) F'(t - tau_s) / (vs^2 r)] d_j / (4 pi rho).
std::array<double, 3> stokes_force_velocity(const ElasticMedium& m, const RickerForce& f,
                                            const std::array<double, 3>& d, const std::array<double, 3>& x, double t) {
  require(m.vp > 0 && m.vs > 0 && m.rho > 0, "stokes_force_velocity: needs vp > 0, vs > 0 and rho > 0");
  const double r = std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
  require(r > 0, "stokes_force_velocity: the offset must be nonzero");
  const Ricker F(f);
  const double tau_p = r / m.vp, tau_s = r / m.vs;
  const double near = stokes_near_field_integral(f, tau_p, tau_s, t) / (r * r * r);
  const double far_p = F.derivative(t - tau_p) / (m.vp * m.vp * r);
  const double far_s = F.derivative(t - tau_s) / (m.vs * m.vs * r);
  const std::array<double, 3> g = {x[0] / r, x[1] / r, x[2] / r};
  const double g_dot_d = g[0] * d[0] + g[1] * d[1] + g[2] * d[2];
  std::array<double, 3> v{};
  for (int i = 0; i < 3; ++i) {
    // (g_i g_j - c delta_ij) d_j = g_i (g . d) - c d_i
    const double gg = g[i] * g_dot_d;
    v[i] = (near * (3 * gg - d[i]) + far_p * gg - far_s * (gg - d[i])) / (4 * M_PI * m.rho);
  }
  return v;
}

std::vector<std::array<double, 3>> stokes_force_velocity_sampled(const ElasticMedium& m, const std::vector<double>& s,
                                                                 double dt, const std::array<double, 3>& d,
                                                                 const std::array<double, 3>& x, bool leapfrog) {
  require(m.vp > 0 && m.vs > 0 && m.rho > 0 && dt > 0, "stokes_force_velocity_sampled: needs vp, vs, rho, dt > 0");
  const double r = std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
  require(r > 0, "stokes_force_velocity_sampled: the offset must be nonzero");
  const std::size_t nt = s.size();
  std::size_t n = 1;
  while (n < 4 * nt + std::size_t(8)) n *= 2;
  std::vector<double> samples(n, 0.0);
  std::copy(s.begin(), s.end(), samples.begin());
  std::vector<std::complex<double>> spectrum(n / 2 + 1);
  fftw_plan forward =
      fftw_plan_dft_r2c_1d(int(n), samples.data(), reinterpret_cast<fftw_complex*>(spectrum.data()), FFTW_ESTIMATE);
  fftw_execute(forward);
  fftw_destroy_plan(forward);
  const std::array<double, 3> g = {x[0] / r, x[1] / r, x[2] / r};
  const double g_dot_d = g[0] * d[0] + g[1] * d[1] + g[2] * d[2];
  const double a = r / m.vp, b = r / m.vs;
  std::array<std::vector<std::complex<double>>, 3> out;
  for (auto& o : out) o.assign(spectrum.size(), 0.0);
  const std::complex<double> i(0, 1);
  for (std::size_t k = 1; k < spectrum.size(); ++k) {
    const double w = 2 * M_PI * double(k) / (double(n) * dt);
    const double W = leapfrog ? 2 / dt * std::sin(w * dt / 2) : w;
    const double average = leapfrog ? std::cos(w * dt / 2) : 1.0;
    const auto e = [&](double tau) { return std::exp(-i * W * tau); };
    const std::complex<double> near = (e(b) * (1.0 + i * W * b) - e(a) * (1.0 + i * W * a)) / (W * W);
    const std::complex<double> p = e(a) / (m.vp * m.vp * r), q = e(b) / (m.vs * m.vs * r);
    const std::complex<double> factor = average * i * W * spectrum[k] / (4 * M_PI * m.rho * double(n));
    for (std::size_t c = 0; c < 3; ++c) {
      const double gg = g[c] * g_dot_d;  // (g_c g_j) d_j
      out[c][k] = factor * ((3 * gg - d[c]) * near / (r * r * r) + gg * p - (gg - d[c]) * q);
    }
  }
  std::vector<std::array<double, 3>> v(nt);
  std::vector<double> back(n);
  for (std::size_t c = 0; c < 3; ++c) {
    fftw_plan inverse =
        fftw_plan_dft_c2r_1d(int(n), reinterpret_cast<fftw_complex*>(out[c].data()), back.data(), FFTW_ESTIMATE);
    fftw_execute(inverse);
    fftw_destroy_plan(inverse);
    for (std::size_t t = 0; t < nt; ++t) v[t][c] = back[t];
  }
  return v;
}

// The explosive source. The engine steps sigma_t = lambda tr(eps_t) I + 2 mu eps_t - rho vp^2 Q(t) delta(x) I,
// Q = (1/rho) int_0^t s. Integrated in time: sigma = C:eps - M0(t) delta(x) I with M0 = rho vp^2 int_0^t Q
// = vp^2 int int s, an isotropic moment tensor M0 delta_ij (equivalent force -M0 grad delta). Then
// rho u_tt = div sigma is solved by u = grad phi,
//   (1/vp^2) phi_tt - lap phi = -(M0 / (rho vp^2)) delta  =>  phi = -M0(t - r/vp) / (4 pi rho vp^2 r),
// and away from r = 0, div u = lap phi = phi_tt / vp^2 = -M0''(T) / (4 pi rho vp^4 r) = -s(T) / (4 pi rho vp^2 r),
// T = t - r/vp. The mean stress is (lambda + 2 mu / 3) div u = K div u (the source's -M0 delta only at r = 0), so
//   p = -K div u = (K / (rho vp^2)) s(T) / (4 pi r) = (1 - 4 vs^2 / (3 vp^2)) s(T) / (4 pi r).
// The source enters with rho vp^2 = lambda + 2 mu, not K: the radiated P wave carries K / (lambda + 2 mu) of the
// fluid's pressure (the same factor as the moment's: volume change M0 / (lambda + 2 mu) against M0 / K). There is no
// near-field pressure term: it lives in the displacement only. With vs = 0 this is s(T) / (4 pi r), the solution
// of (1/vp^2) p_tt - lap p = s delta.
double explosive_pressure(const ElasticMedium& m, const RickerForce& s, double r, double t) {
  require(m.vp > 0 && m.vs >= 0 && m.rho > 0, "explosive_pressure: needs vp > 0, vs >= 0 and rho > 0");
  require(r > 0, "explosive_pressure: r must be > 0");
  const double bulk_over_p_modulus = 1 - 4 * m.vs * m.vs / (3 * m.vp * m.vp);
  return bulk_over_p_modulus * Ricker(s).value(t - r / m.vp) / (4 * M_PI * r);
}

// v = d/dt grad phi: with phi = -G(T) / (4 pi r), G = M0 / (rho vp^2) = (1/rho) int int s,
//   u_r = (G'(T) / (vp r) + G(T) / r^2) / (4 pi),  v_r = (s(T) / (vp r) + S1(T) / r^2) / (4 pi rho).
std::array<double, 3> explosive_velocity(const ElasticMedium& m, const RickerForce& s, const std::array<double, 3>& x,
                                         double t) {
  require(m.vp > 0 && m.vs >= 0 && m.rho > 0, "explosive_velocity: needs vp > 0, vs >= 0 and rho > 0");
  const double r = std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
  require(r > 0, "explosive_velocity: the offset must be nonzero");
  const Ricker S(s);
  const double T = t - r / m.vp;
  const double v_r = (S.value(T) / (m.vp * r) + S.integral(T) / (r * r)) / (4 * M_PI * m.rho);
  return {v_r * x[0] / r, v_r * x[1] / r, v_r * x[2] / r};
}

// Lamb's problem for a vertical surface force, surface receivers (Lamb 1904; Pekeris 1955; Johnson 1974; Aki and
// Richards 2002, ch. 6). Potentials u = grad phi + curl curl (psi z), zero shear traction and s_zz = -F delta(x, y)
// on z = 0 give, in the Laplace domain (time -> s), the surface displacements of the step force F = H(t) (one newton)
//   u_z = (1 / (2 pi mu vs)) int_0^inf g(q) J0(s q r / vs) dq,  g = q A / R,
//   u_r = (1 / (2 pi mu vs)) int_0^inf h(q) J1(s q r / vs) dq,  h = q^2 (2 q^2 + 1 - 2 A B) / R,
//   A = sqrt(q^2 + p^2), B = sqrt(q^2 + 1), R = (2 q^2 + 1)^2 - 4 q^2 A B, p = vs / vp,
// with slownesses in units of 1/vs. With J0(x) = (2/pi) int_1^inf sin(x w) dw / sqrt(w^2 - 1), the q path turned to
// the imaginary axis q = i U (the Cagniard-de Hoop path for source and receiver on the surface: t = U r / vs w) and
// the Laplace transform read off, with T = vs t / r and a = sqrt(U^2 - p^2), b = sqrt(1 - U^2), b' = sqrt(U^2 - 1),
// c = 1 - 2 U^2:
//   u_z(t) = (1 / (pi^2 mu r)) PV int_p^T K(U) dU / sqrt(T^2 - U^2),
//   K = Re g(iU) = -U a c^2 / (c^4 + 16 U^4 a^2 b^2) (p < U < 1),  -U a / (c^2 - 4 U^2 a b') (U > 1);
//   u_r(t) = (T / (pi^2 mu r)) [int_p^min(T,1) X(U) dU / sqrt(T^2 - U^2) - pi D H(T - U0) / sqrt(T^2 - U0^2)],
//   X = Re(h(iU) / (iU)) = 2 U a b c / (c^4 + 16 U^4 a^2 b^2) (zero for U > 1 but for the pole), D = U0 N / R'(U0),
// N = c + 2 a b', R = c^2 - 4 U^2 a b', U0 = vs / c_R the Rayleigh pole (R(U0) = 0). The path passes the pole on
// its right; of its half residue only the imaginary part counts (the sine takes Im of int g e^{i s q r w} dq). For
// the vertical it is real (g(iU) real beyond U = 1): a principal value. For the radial (J1 = -d/dr J0 / (s q), the
// same steps on h / q, then d/dr) it is imaginary and leaves -pi D delta(U - U0) (Sokhotski-Plemelj). Checks: T ->
// inf gives Boussinesq's u_z = (1 - nu) / (2 pi mu r), u_r = -(1 - 2 nu) / (4 pi mu r); p^2 = 1/3 gives Pekeris'
// (1955) closed form (both in the tests, as is the Laplace transform against the q integrals above).
// For the step response U = T cos(theta) removes the 1/sqrt(T^2 - U^2) end point (u_z = PV int K dtheta / (pi^2 mu r)).
// For a force F(t) the time convolution is done first, in closed form: with t' = U r cosh(eta) / vs,
//   u_z(t) = int G_z(t') F'(t - t') dt' = (1 / (pi^2 mu vs)) PV int_p^inf K(U) W0(U) dU,
//   u_r(t) = (1 / (pi^2 mu vs)) [int_p^1 X(U) U W1(U) dU - pi D U0 W1(U0)],
//   W_k(U) = int_0^inf F'(t - U r cosh(eta) / vs) cosh(eta)^k d eta  (F'' for the velocity),
// W_k smooth in U (on the scale vs / (f r)), so that the Rayleigh singularity of the step response never enters a
// quadrature: the vertical's pole is a principal value over U, taken on [U0 - d, U0 + d] as the integral over
// 0 < e < d of K(U0 + e) W0(U0 + e) + K(U0 - e) W0(U0 - e), where the 1/e parts cancel exactly.
namespace {

double ricker_second_derivative(const Ricker& F, double t) {
  const double x = t - F.t0, ax2 = F.a * x * x;
  return -2 * F.a * F.amplitude * (3 - 12 * ax2 + 4 * ax2 * ax2) * std::exp(-ax2);
}

// The half-space in slowness units of 1/vs: branch points p = vs/vp and 1, Rayleigh pole u0 = vs/c_R. Beyond U = 1
// K is rationalized, K = -U a (c^2 + 4 U^2 a b') / Q(U^2), where
// Q(v) = (1 - 2v)^4 - 16 v^2 (v - p^2)(v - 1) = (u0^2 - v)(1 + b1 v + b0 v^2) / u0^2 (the Rayleigh cubic, deflated),
// so that with du = U - u0 given exactly (the principal value's fold) K keeps full precision next to the pole. Below
// U = 1 the denominators c^4 + 16 U^4 a^2 b^2 (= Q) are sums of squares, taken as they are: the deflated factor
// loses its precision near p when vp/vs is near sqrt(2), where Q(p^2) = (1 - 2 p^2)^4 is tiny.
struct HalfSpace {
  double p, u0, residue, mu, b1, b0, near_p;
  explicit HalfSpace(const ElasticMedium& m) : p(m.vs / m.vp), mu(m.rho * m.vs * m.vs) {
    require(m.vs > 0 && m.rho > 0 && 3 * m.vp * m.vp > 4 * m.vs * m.vs,
            "Lamb's problem: needs vs > 0, rho > 0 and vp > sqrt(4/3) vs");
    u0 = m.vs / rayleigh_velocity(m);
    const double x0 = 1 / (u0 * u0);  // x^3 - 8 x^2 + (24 - 16 p^2) x - 16 (1 - p^2) = (x - x0)(x^2 + b1 x + b0)
    b1 = x0 - 8, b0 = x0 * b1 + 24 - 16 * p * p;
    const double a = std::sqrt((u0 - p) * (u0 + p)), b = std::sqrt((u0 - 1) * (u0 + 1)), c = 1 - 2 * u0 * u0;
    const double dR = -8 * u0 * c - 8 * u0 * a * b - 4 * u0 * u0 * u0 * (b / a + a / b);  // dR/dU at U0
    residue = u0 * (c + 2 * a * b) / dR;
    // The other roots of Q, 1 + b1 v + b0 v^2 = 0 (real below p^2 or complex), come within |v - p^2| / (2p) of
    // U = p when vp/vs is near sqrt(2): the panels on (p, 1) are graded down to that distance.
    const double disc = b1 * b1 - 4 * b0, p2 = p * p;
    double gap = 1;
    if (disc >= 0)
      for (double sign : {-1.0, 1.0}) gap = std::min(gap, std::abs((-b1 + sign * std::sqrt(disc)) / (2 * b0) - p2));
    else
      gap = std::hypot(-b1 / (2 * b0) - p2, std::sqrt(-disc) / (2 * b0));
    near_p = std::clamp(gap / (2 * p), 1e-10, 1e-3);
  }
  double vertical(double U, double du) const {  // K(U), U > p, du = U - u0
    const double v = U * U, c = 1 - 2 * v, a2 = (U - p) * (U + p), a = std::sqrt(a2);
    if (U < 1) return a == 0 ? 0 : -U * a * c * c / (c * c * c * c + 16 * v * v * a2 * (1 - U) * (1 + U));
    const double b = std::sqrt((U - 1) * (U + 1));
    return U * a * (c * c + 4 * v * a * b) * u0 * u0 / (du * (U + u0) * (1 + b1 * v + b0 * v * v));
  }
  double vertical(double U) const { return vertical(U, U - u0); }
  double radial(double U) const {  // X(U), p < U < 1
    const double v = U * U, c = 1 - 2 * v, a2 = (U - p) * (U + p), b2 = (1 - U) * (1 + U);
    return a2 == 0 ? 0 : 2 * U * std::sqrt(a2 * b2) * c / (c * c * c * c + 16 * v * v * a2 * b2);
  }
};

// int_a^b f by 16-point Gauss-Legendre, the variable clustered (x = a + L s^2, b - L s^2 or a + L sin^2(pi s/2),
// 0 < s < 1) at the ends (bit 1: a, bit 2: b) where f has a square-root branch point, which makes it smooth in s.
template <class V, class Fn>
V gauss(const Fn& f, double a, double b, int ends) {
  static const GaussLegendre rule;
  const double L = b - a;
  V sum{};
  for (int i = 0; i < gauss_points; ++i) {
    const double s = 0.5 * (1 + rule.node[i]);
    double x = a + L * s, jacobian = L;
    if (ends == 1) x = a + L * s * s, jacobian = 2 * L * s;
    if (ends == 2) x = b - L * s * s, jacobian = 2 * L * s;
    if (ends == 3) x = a + L * std::pow(std::sin(M_PI / 2 * s), 2), jacobian = L * M_PI / 2 * std::sin(M_PI * s);
    const V value = f(x);
    for (std::size_t k = 0; k < sum.size(); ++k) sum[k] += 0.5 * rule.weight[i] * jacobian * value[k];
  }
  return sum;
}

using Scalar = std::array<double, 1>;
using Pair = std::array<double, 2>;

// Adaptive bisection of the Gauss-Legendre rule (the pieces at a clustered end stay clustered), to an absolute
// tolerance of 1e-14 (the integrals are O(1)) or 1e-13 relative: for the step response, whose integrand grows
// without bound as T nears U0.
template <class Fn>
double adaptive(const Fn& f, double a, double b, int ends, double whole, int depth = 0) {
  const double m = (a + b) / 2, left = gauss<Scalar>(f, a, m, ends & 1)[0], right = gauss<Scalar>(f, m, b, ends & 2)[0];
  const double change = std::abs(left + right - whole);
  if (depth == 30 || change < 1e-14 || change < 1e-13 * std::abs(whole)) return left + right;
  return adaptive(f, a, m, ends & 1, left, depth + 1) + adaptive(f, m, b, ends & 2, right, depth + 1);
}
template <class Fn>
double integrate(const Fn& f, double a, double b, int ends) {
  return adaptive(f, a, b, ends, gauss<Scalar>(f, a, b, ends)[0]);
}

// W0 and W1 of the comment above for the wavelet's derivative of `order` (1 or 2) at time t, with
// sigma = U r / vs: the lag tau = sigma cosh(eta) runs over the wavelet's support (|t - tau - t0| < support), cut
// into panels of `step` seconds. Within a panel of sigma (or above it) each is integrated over eta (smooth there,
// also at tau = sigma). Further below, W is the small remainder of an oscillating integrand against a smooth weight
// (1e-9 of its terms in the far field, which rounding and quadrature errors of 1e-16 of the terms would spoil):
// there the derivative is moved onto the weight by parts, order + 2 times (the boundary terms are the wavelet's
// negligible tails), to leave the Gaussian F2 = -A exp(-a x^2) / (2a) (F = F2'') against the order + 2'th
// derivative of 1/sqrt(tau^2 - sigma^2) and of tau / (sigma sqrt(tau^2 - sigma^2)), with y = tau^2 - sigma^2:
//   3rd: -3 tau (2 tau^2 + 3 sigma^2) / y^(7/2), -3 sigma (4 tau^2 + sigma^2) / y^(7/2);
//   4th: 3 (8 tau^4 + 24 sigma^2 tau^2 + 3 sigma^4) / y^(9/2), 15 sigma tau (4 tau^2 + 3 sigma^2) / y^(9/2),
// of one sign each over the panel: no cancellation.
Pair abel(const Ricker& F, int order, double t, double sigma, double support, double step) {
  const double lo = std::max(sigma, t - F.t0 - support), hi = t - F.t0 + support;
  Pair sum{};
  if (hi <= lo) return sum;
  const int panels = static_cast<int>(std::ceil((hi - lo) / step));
  if (sigma < lo - step) {
    const double s2 = sigma * sigma;
    auto f = [&](double tau) {
      const double x = t - tau - F.t0, t2 = tau * tau, y = t2 - s2, root = std::sqrt(y);
      const double f2 = -F.amplitude * std::exp(-F.a * x * x) / (2 * F.a) / (y * y * y * root);
      if (order == 1) return Pair{-3 * tau * (2 * t2 + 3 * s2) * f2, -3 * sigma * (4 * t2 + s2) * f2};
      return Pair{3 * (8 * t2 * t2 + 24 * s2 * t2 + 3 * s2 * s2) * f2 / y,
                  15 * sigma * tau * (4 * t2 + 3 * s2) * f2 / y};
    };
    for (int k = 0; k < panels; ++k) {
      const Pair w = gauss<Pair>(f, lo + (hi - lo) * k / panels, lo + (hi - lo) * (k + 1) / panels, 0);
      sum[0] += w[0], sum[1] += w[1];
    }
    return sum;
  }
  auto f = [&](double eta) {
    const double ch = std::cosh(eta),
                 v = order == 1 ? F.derivative(t - sigma * ch) : ricker_second_derivative(F, t - sigma * ch);
    return Pair{v, v * ch};
  };
  double eta_a = std::acosh(lo / sigma);
  for (int k = 1; k <= panels; ++k) {
    // at most 1/2 in eta as well: tau grows exponentially in eta where sigma is small against the lag
    const double eta_b = std::acosh((lo + (hi - lo) * k / panels) / sigma);
    const int parts = static_cast<int>(std::ceil((eta_b - eta_a) / 0.5));
    for (int j = 0; j < parts; ++j) {
      const Pair w = gauss<Pair>(f, eta_a + (eta_b - eta_a) * j / parts, eta_a + (eta_b - eta_a) * (j + 1) / parts, 0);
      sum[0] += w[0], sum[1] += w[1];
    }
    eta_a = eta_b;
  }
  return sum;
}

// Composite rule on [a, b]: panels at most `width(x)` wide from their left end x, the first and last clustered as
// `ends` says.
template <class Fn, class Width>
Pair composite(const Fn& f, double a, double b, int ends, const Width& width) {
  Pair sum{};
  for (double x = a; x < b;) {
    const double w = width(x), y = b - x < 1.5 * w ? b : x + w;
    const Pair v = gauss<Pair>(f, x, y, (x == a ? ends & 1 : 0) | (y == b ? ends & 2 : 0));
    sum[0] += v[0], sum[1] += v[1];
    x = y;
  }
  return sum;
}

// The Ricker response: order 1 for the displacement (F'), 2 for the velocity (F'').
Pair lamb_ricker(const ElasticMedium& m, const RickerForce& f, double r, double t, int order) {
  const HalfSpace h(m);
  require(r > 0 && f.peak_frequency > 0, "Lamb's problem: needs r > 0 and a positive peak frequency");
  const Ricker F(f);
  const double support = 2.5 / f.peak_frequency, scale = m.vs / r;  // U = scale * lag
  const double u_hi = (t - f.delay + support) * scale, u_lo = (t - f.delay - support) * scale;
  if (u_hi <= h.p) return {0, 0};
  auto w = [&](double U) { return abel(F, order, t, U / scale, support, 0.5 / f.peak_frequency); };
  // Panel widths: half a period of the wavelet in U where W varies on that scale (U > u_lo), half the distance
  // to u_lo below it (W smooth there on that scale), and at most the distance to the kernel's nearest singular
  // point on the left (p, graded from near_p; U0 beyond it), at most 1/8 on (p, 1) and d about the pole (there the
  // width at U0 + e, the nearer to the wavelet's window, for both sides of the fold). Refining
  // all of these 2.5 to 4 times (and the lag panels) changes the traces by < 2e-13 of their peak (vp/vs 1.42 to 5,
  // r from 0.05 to 40 Rayleigh wavelengths).
  const double h_wave = 0.5 * scale / f.peak_frequency;
  auto width = [&](double x, double singular, double floor, double cap) {
    return std::min({std::max(h_wave, 0.5 * (u_lo - x)), std::max(floor, x - singular), cap});
  };
  // (p, 1): both components, square-root branch points at both ends (of a at p, of b at 1).
  const double end1 = std::min(1.0, u_hi);
  const Pair below_1 = composite(
      [&](double U) {
        const Pair v = w(U);
        return Pair{h.vertical(U) * v[0], h.radial(U) * U * v[1]};
      },
      h.p, end1, end1 == 1 ? 3 : 1, [&](double x) { return width(x, h.p, h.near_p, 0.125); });
  Pair sum = below_1;
  auto vertical = [&](double U) { return Pair{h.vertical(U) * w(U)[0], 0}; };
  const double d = (h.u0 - 1) / 2;
  if (u_hi > 1)
    sum[0] += composite(vertical, 1, std::min(h.u0 - d, u_hi), 1, [&](double x) { return width(x, 0, 0, d); })[0];
  if (u_hi > h.u0 - d) {
    sum[0] += composite(
        [&](double e) {
          return Pair{h.vertical(h.u0 + e, e) * w(h.u0 + e)[0] + h.vertical(h.u0 - e, -e) * w(h.u0 - e)[0], 0};
        },
        0, d, 0, [&](double e) { return width(h.u0 + e, 0, 0, d); })[0];
    if (u_hi > h.u0 + d)
      sum[0] += composite(vertical, h.u0 + d, u_hi, 0, [&](double x) { return width(x, h.u0, 0, 1e300); })[0];
  }
  const double pole = -M_PI * h.residue * h.u0 * w(h.u0)[1];
  const double factor = 1 / (M_PI * M_PI * h.mu * m.vs);
  return {sum[0] * factor, (sum[1] + pole) * factor};
}

}  // namespace

// Bisection for the one root x = c^2/vs^2 in (0, 1) of the rationalized Rayleigh equation
//   x^3 - 8 x^2 + (24 - 16 k) x - 16 (1 - k) = 0,  k = vs^2 / vp^2
// (negative at 0, 1 at 1, and, as a scan of vp/vs from 1.155 to 20 shows, only this root in between).
double rayleigh_velocity(const ElasticMedium& m) {
  require(m.vs > 0 && 3 * m.vp * m.vp > 4 * m.vs * m.vs, "rayleigh_velocity: needs vs > 0 and vp > sqrt(4/3) vs");
  const double k = m.vs * m.vs / (m.vp * m.vp);
  double lo = 0, hi = 1;
  for (int iteration = 0; iteration < 60; ++iteration) {
    const double x = (lo + hi) / 2;
    (((x - 8) * x + 24 - 16 * k) * x - 16 * (1 - k) < 0 ? lo : hi) = x;
  }
  return m.vs * std::sqrt((lo + hi) / 2);
}

SurfaceDisplacement lamb_step_displacement(const ElasticMedium& m, double r, double t) {
  const HalfSpace h(m);
  require(r > 0, "lamb_step_displacement: needs r > 0");
  const double T = m.vs * t / r, p = h.p, u0 = h.u0;
  if (T <= p) return {0, 0};
  if (T == u0) return {-INFINITY, NAN};
  // U = T cos(theta): theta_p, theta_1 and theta_R where U = p, 1 and U0.
  const double theta_p = std::acos(p / T), theta_1 = T > 1 ? std::acos(1 / T) : 0;
  // U - U0 = (T - U0) - 2 T sin^2(theta / 2), exact next to the pole; the fold about theta_R takes it as
  // -2 U0 sin^2(e / 2) -+ sqrt(T^2 - U0^2) sin(e) at theta_R +- e, centred on the pole exactly.
  auto k = [&](double th) {
    const double half = std::sin(th / 2);
    return Scalar{h.vertical(T * std::cos(th), (T - u0) - 2 * T * half * half)};
  };
  double vertical = integrate(k, theta_1, theta_p, 2);
  if (T > 1 && T < u0) vertical += integrate(k, 0, theta_1, 2);
  if (T > u0) {
    const double theta_r = std::acos(u0 / T), d = std::min(theta_r, theta_1 - theta_r) / 2;
    const double sine = std::sqrt((T - u0) * (T + u0));
    auto fold = [&](double e) {
      const double half = std::sin(e / 2), even = -2 * u0 * half * half, odd = sine * std::sin(e);
      return Scalar{h.vertical(u0 + even - odd, even - odd) + h.vertical(u0 + even + odd, even + odd)};
    };
    vertical += integrate(k, 0, theta_r - d, 0) + integrate(fold, 0, d, 0) + integrate(k, theta_r + d, theta_1, 2);
  }
  double radial =
      T * integrate([&](double th) { return Scalar{h.radial(T * std::cos(th))}; }, theta_1, theta_p, T > 1 ? 3 : 2);
  if (T > u0) radial -= M_PI * h.residue * T / std::sqrt((T - u0) * (T + u0));
  const double factor = 1 / (M_PI * M_PI * h.mu * r);
  return {vertical * factor, radial * factor};
}

SurfaceDisplacement lamb_surface_displacement(const ElasticMedium& m, const RickerForce& f, double r, double t) {
  const Pair u = lamb_ricker(m, f, r, t, 1);
  return {u[0], u[1]};
}

SurfaceVelocity lamb_surface_velocity(const ElasticMedium& m, const RickerForce& f, double r, double t) {
  const Pair v = lamb_ricker(m, f, r, t, 2);
  return {v[0], v[1]};
}

}  // namespace specwave::validation
