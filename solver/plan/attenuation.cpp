#include "solver/plan/attenuation.hpp"

#include <Eigen/Dense>
#include <cmath>
#include <complex>
#include <numbers>
#include <stdexcept>
#include <unordered_map>

namespace specwave {
namespace {

// f_1 (f_2 / f_1)^(k / (count - 1)), k = 0 .. count - 1.
std::vector<double> log_spaced(double f1, double f2, int count) {
  std::vector<double> f(static_cast<std::size_t>(count), 0.0);
  for (int k = 0; k < count; ++k) f[std::size_t(k)] = f1 * std::pow(f2 / f1, double(k) / (count - 1));
  return f;
}

std::complex<double> modulus_factor(const std::vector<double>& tau, const std::vector<double>& y, double f) {
  const double w = 2 * std::numbers::pi * f;
  std::complex<double> m = 1;
  for (std::size_t l = 0; l < tau.size(); ++l) {
    const std::complex<double> iwt(0, w * tau[l]);
    m += y[l] * iwt / (1.0 + iwt);
  }
  return m;
}

std::vector<double> relaxation_times(double f1, double f2, int L, double c) {
  if (L == 1) return {1 / (2 * std::numbers::pi * std::sqrt(f1 * f2))};
  std::vector<double> tau;
  for (double f : log_spaced(f1 / c, f2 * c, L)) tau.push_back(1 / (2 * std::numbers::pi * f));
  return tau;
}

}  // namespace

void SlsFit::prepare() {
  const std::size_t L = tau.size();
  ss.assign(L * L, 0.0), sc.assign(L * L, 0.0), cc.assign(L * L, 0.0), s1.assign(L, 0.0), c1.assign(L, 0.0);
  std::vector<double> S(L), C(L);
  for (double f : log_spaced(f1, f2, 64)) {
    const double w = 2 * std::numbers::pi * f;
    for (std::size_t l = 0; l < L; ++l) {
      const double wt = w * tau[l], d = 1 + wt * wt;
      S[l] = wt / d, C[l] = wt * wt / d;
    }
    for (std::size_t k = 0; k < L; ++k) {
      s1[k] += S[k], c1[k] += C[k];
      for (std::size_t l = 0; l < L; ++l) {
        ss[k * L + l] += S[k] * S[l];
        sc[k * L + l] += S[k] * C[l] + C[k] * S[l];
        cc[k * L + l] += C[k] * C[l];
      }
    }
  }
}

std::vector<double> SlsFit::weights(double q) const {
  const int L = int(tau.size());
  Eigen::MatrixXd A(L, L);
  Eigen::VectorXd rhs(L);
  for (int k = 0; k < L; ++k) {
    rhs(k) = (s1[std::size_t(k)] - c1[std::size_t(k)] / q) / q;
    for (int l = 0; l < L; ++l) {
      const std::size_t i = std::size_t(k) * L + std::size_t(l);
      A(k, l) = ss[i] - sc[i] / q + cc[i] / (q * q);
    }
  }
  const Eigen::VectorXd y = A.ldlt().solve(rhs);
  return {y.data(), y.data() + L};
}

double SlsFit::q_at(const std::vector<double>& y, double f) const {
  const std::complex<double> m = modulus_factor(tau, y, f);
  return m.real() / m.imag();
}

double SlsFit::relaxed_factor(const std::vector<double>& y) const {
  const double r = std::real(std::pow(modulus_factor(tau, y, f_ref), -0.5));
  return r * r;
}

double SlsFit::unrelaxed_speedup(const std::vector<double>& y) const {
  double sum = 1;
  for (double v : y) sum += v;
  return std::sqrt(sum * relaxed_factor(y));
}

double SlsFit::largest_error(double q) const {
  const std::vector<double> y = weights(q);
  double worst = 0;
  for (double f : log_spaced(f1, f2, 2001)) worst = std::max(worst, std::abs(q_at(y, f) / q - 1));
  return worst;
}

SlsFit fit_sls(double f1, double f2, int mechanisms, double f_ref) {
  if (!(f1 > 0 && f2 > f1)) throw std::invalid_argument("fit_sls: the band must be 0 < f1 < f2");
  if (mechanisms < 1 || mechanisms > 8) throw std::invalid_argument("fit_sls: mechanisms must be in 1..8");
  SlsFit best;
  best.f1 = f1, best.f2 = f2, best.f_ref = f_ref > 0 ? f_ref : std::sqrt(f1 * f2);
  double best_error = INFINITY;
  for (int k = 0; k <= 10; ++k) {
    SlsFit trial = best;
    trial.widening = 1 + 0.1 * k;
    trial.tau = relaxation_times(f1, f2, mechanisms, trial.widening);
    trial.prepare();
    const double e = trial.largest_error(100);
    if (e < best_error) best_error = e, best = trial;
    if (mechanisms == 1) break;
  }
  return best;
}

SlsStep sls_step(const SlsFit& fit, double dt) {
  SlsStep out;
  for (const double tau : fit.tau) {
    const double h = dt / (2 * tau);
    out.a.push_back((1 - h) / (1 + h));
    out.b.push_back((dt / tau) / (1 + h));
  }
  return out;
}

void fit_points(const SlsFit& fit, std::size_t points, const std::function<float(std::size_t)>& q,
                const std::function<void(std::size_t, const SlsPointFit&)>& set) {
  const auto fit_of = [&](double value) {
    SlsPointFit f;
    f.y = fit.weights(value);
    for (double y : f.y) f.sum += y;
    f.relaxed = fit.relaxed_factor(f.y);
    return f;
  };
  constexpr std::size_t few = 4096;
  std::unordered_map<float, SlsPointFit> fits;
  for (std::size_t k = 0; k < points; ++k) {
    const float value = q(k);
    if (!fits.count(value)) {
      if (fits.size() > few) break;
      fits.emplace(value, fit_of(value));
    }
  }
  const long n = long(points);
  if (fits.size() <= few) {
#pragma omp parallel for schedule(static)
    for (long k = 0; k < n; ++k) set(std::size_t(k), fits.at(q(std::size_t(k))));
  } else {
#pragma omp parallel for schedule(static)
    for (long k = 0; k < n; ++k) set(std::size_t(k), fit_of(q(std::size_t(k))));
  }
}

}  // namespace specwave
