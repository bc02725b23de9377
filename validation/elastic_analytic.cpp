#include "validation/elastic_analytic.hpp"

#include <cmath>
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

}  // namespace specwave::validation
