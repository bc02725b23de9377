// Analytic elastic whole-space solutions (validation/elastic_analytic.hpp), checked against their own limits and
// against finite differences of independently written formulas: the far field, symmetry and reciprocity, the
// near-field integral, the static (Kelvin) limit, the elastic wave equation, and the explosive source's fluid
// limit and potential.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>

#include "validation/elastic_analytic.hpp"

using namespace specwave::validation;
using Vec = std::array<double, 3>;

namespace {

const ElasticMedium rock{3000, 1800, 2200};
const RickerForce force{10, 0.15, 1e6};
const double lambda_p = rock.vp / force.peak_frequency, lambda_s = rock.vs / force.peak_frequency;
const double a = M_PI * M_PI * force.peak_frequency * force.peak_frequency;

// The wavelet and its derivative, written again here so that a slip in the library's copy shows.
double F(double t) {
  const double x = t - force.delay;
  return force.amplitude * (1 - 2 * a * x * x) * std::exp(-a * x * x);
}
double F_dot(double t) {
  const double x = t - force.delay;
  return force.amplitude * (-6 * a * x + 4 * a * a * x * x * x) * std::exp(-a * x * x);
}

Vec scaled(const Vec& v, double c) { return {v[0] * c, v[1] * c, v[2] * c}; }
Vec plus(const Vec& u, const Vec& v) { return {u[0] + v[0], u[1] + v[1], u[2] + v[2]}; }
double norm(const Vec& v) { return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }
const Vec oblique = scaled(Vec{0.6, -0.48, 0.64}, 1 / norm(Vec{0.6, -0.48, 0.64}));
const Vec other_direction = scaled(Vec{-0.3, 0.5, 0.8}, 1 / norm(Vec{-0.3, 0.5, 0.8}));

// max_t |got - want| / max_t |want| over t = t_begin, t_begin + dt, ..., t_end, all components.
double trace_error(const std::function<Vec(double)>& got, const std::function<Vec(double)>& want, double t_begin,
                   double t_end, double dt) {
  double worst = 0, peak = 0;
  for (double t = t_begin; t <= t_end; t += dt) {
    const Vec g = got(t), w = want(t);
    for (int i = 0; i < 3; ++i) {
      worst = std::max(worst, std::abs(g[i] - w[i]));
      peak = std::max(peak, std::abs(w[i]));
    }
  }
  return worst / peak;
}

// The far-field P and S terms of the Stokes velocity, and the intermediate (1/r^2) term that the near-field
// integral contributes through its end points (J = tau_p F(t - tau_p) - tau_s F(t - tau_s) + O(F1)).
Vec far_field(const Vec& d, const Vec& x, double t, bool with_intermediate) {
  const double r = norm(x), tp = r / rock.vp, ts = r / rock.vs;
  Vec v{};
  const double gd = (x[0] * d[0] + x[1] * d[1] + x[2] * d[2]) / r;
  for (int i = 0; i < 3; ++i) {
    const double gg = x[i] / r * gd;
    v[i] = gg * F_dot(t - tp) / (rock.vp * rock.vp * r) - (gg - d[i]) * F_dot(t - ts) / (rock.vs * rock.vs * r);
    if (with_intermediate) v[i] += (3 * gg - d[i]) * (F(t - tp) / rock.vp - F(t - ts) / rock.vs) / (r * r);
    v[i] /= 4 * M_PI * rock.rho;
  }
  return v;
}

}  // namespace

TEST_CASE("Stokes velocity: the far-field terms dominate far away, the rest falling as 1 / (k r)") {
  auto error_at = [](double wavelengths, bool with_intermediate) {
    const Vec x = scaled(oblique, wavelengths * lambda_p);
    const double tp = norm(x) / rock.vp, ts = norm(x) / rock.vs;
    return trace_error([&](double t) { return stokes_force_velocity(rock, force, other_direction, x, t); },
                       [&](double t) { return far_field(other_direction, x, t, with_intermediate); }, tp - 0.1,
                       ts + 0.4, 2e-4);
  };
  const double at_50 = error_at(50, false), at_500 = error_at(500, false);
  MESSAGE("far field alone: relative difference " << at_50 << " at 50 P wavelengths, " << at_500 << " at 500");
  // The intermediate term is ~ 1 / (k r) of the far field: 1.7e-3 at 50 P wavelengths here (up to 6e-3 in other
  // directions), so a fixed 1e-3 holds only hundreds of wavelengths out; the difference must fall as 1 / r.
  CHECK(at_500 < 1e-3);
  CHECK(at_50 / at_500 == doctest::Approx(10).epsilon(0.01));
  // With the 1/r^2 term added, what is left is the 1/r^3 term: (1 / (k r))^2 ~ 1e-5 at 50 wavelengths.
  const double with_intermediate = error_at(50, true);
  MESSAGE("far + intermediate field at 50 P wavelengths: " << with_intermediate);
  CHECK(with_intermediate < 1e-4);
}

TEST_CASE("Stokes velocity: point symmetry, mirror symmetry and reciprocity") {
  const Vec x = scaled(oblique, 0.7 * lambda_s), ez{1, 0, 0}, ey{0, 1, 0}, ex{0, 0, 1};
  double worst = 0, peak = 0;
  for (double t = 0; t <= 0.6; t += 1e-3) {
    // v(-x) = v(x): the Green's tensor depends on g only through g_i g_j.
    const Vec v = stokes_force_velocity(rock, force, ez, x, t);
    const Vec v_opposite = stokes_force_velocity(rock, force, ez, scaled(x, -1), t);
    // Mirror x -> -x (third component) with the force along z: v_x changes sign, v_z and v_y do not.
    const Vec v_mirror = stokes_force_velocity(rock, force, ez, {x[0], x[1], -x[2]}, t);
    const std::array<Vec, 3> by_axis = {v, stokes_force_velocity(rock, force, ey, x, t),
                                        stokes_force_velocity(rock, force, ex, x, t)};
    for (int i = 0; i < 3; ++i) {
      peak = std::max(peak, std::abs(v[i]));
      worst = std::max({worst, std::abs(v_opposite[i] - v[i]), std::abs(v_mirror[i] - (i == 2 ? -v[i] : v[i]))});
      for (int j = 0; j < 3; ++j) worst = std::max(worst, std::abs(by_axis[j][i] - by_axis[i][j]));
    }
  }
  MESSAGE("symmetry and reciprocity: worst difference / peak " << worst / peak);
  CHECK(peak > 0);
  CHECK(worst / peak < 1e-14);
}

TEST_CASE("Stokes near-field integral against a fine trapezoidal rule, on both of its branches") {
  // 0.3 S wavelength uses the closed form, 0.1 (tau_s f < 0.25) the Gauss-Legendre rule.
  for (double wavelengths : {0.3, 0.1}) {
    const double r = wavelengths * lambda_s, tp = r / rock.vp, ts = r / rock.vs;
    const int intervals = 40000;  // h^2 w^2 / 12 < 1e-10 relative
    const double h = (ts - tp) / intervals;
    double worst = 0, peak = 0;
    for (double t = 0; t <= 0.4; t += 5e-4) {
      double sum = (tp * F_dot(t - tp) + ts * F_dot(t - ts)) / 2;
      for (int k = 1; k < intervals; ++k) sum += (tp + k * h) * F_dot(t - tp - k * h);
      const double brute = sum * h, got = stokes_near_field_integral(force, tp, ts, t);
      worst = std::max(worst, std::abs(got - brute));
      peak = std::max(peak, std::abs(brute));
    }
    MESSAGE("r = " << wavelengths << " S wavelength: relative difference " << worst / peak);
    CHECK(worst / peak < 1e-8);
  }
}

TEST_CASE("Stokes velocity: the static (Kelvin) limit close to the force") {
  // For r << wavelength, u -> Kelvin's solution F(t) [(l + 3m) delta_ij + (l + m) g_i g_j] d_j / (8 pi m (l + 2m) r)
  // with l, m the Lame parameters, so v -> the same with F'(t); the first correction is O(k r).
  const double mu = rock.rho * rock.vs * rock.vs, lambda = rock.rho * rock.vp * rock.vp - 2 * mu;
  auto error_at = [&](double wavelengths) {
    const Vec x = scaled(oblique, wavelengths * lambda_s);
    const double r = norm(x),
                 gd = (x[0] * other_direction[0] + x[1] * other_direction[1] + x[2] * other_direction[2]) / r;
    auto kelvin = [&](double t) {
      Vec v{};
      for (int i = 0; i < 3; ++i)
        v[i] = F_dot(t) * ((lambda + 3 * mu) * other_direction[i] + (lambda + mu) * x[i] / r * gd) /
               (8 * M_PI * mu * (lambda + 2 * mu) * r);
      return v;
    };
    return trace_error([&](double t) { return stokes_force_velocity(rock, force, other_direction, x, t); }, kelvin, 0,
                       0.4, 2e-4);
  };
  const double at_4 = error_at(1e-4), at_5 = error_at(1e-5);
  MESSAGE("Kelvin limit: relative difference " << at_4 << " at 1e-4 S wavelength, " << at_5 << " at 1e-5");
  CHECK(at_4 < 2e-3);
  CHECK(at_4 / at_5 == doctest::Approx(10).epsilon(0.02));
}

TEST_CASE("Stokes velocity solves rho v_tt = (lambda + mu) grad div v + mu lap v away from the force") {
  const double mu = rock.rho * rock.vs * rock.vs, lambda = rock.rho * rock.vp * rock.vp - 2 * mu;
  const Vec x0 = scaled(oblique, 0.5 * lambda_s);
  const double h = 2e-4 * lambda_s, ht = 1e-4 / force.peak_frequency;  // (k h)^2 / 12 ~ 1e-7
  double worst = 0, peak = 0;
  for (double t = 0.05; t <= 0.5; t += 2e-3) {
    // v at x0 + h (p, q, s), p, q, s in {-1, 0, 1}.
    std::array<std::array<std::array<Vec, 3>, 3>, 3> v;
    for (int p = 0; p < 3; ++p)
      for (int q = 0; q < 3; ++q)
        for (int s = 0; s < 3; ++s)
          v[p][q][s] =
              stokes_force_velocity(rock, force, other_direction, plus(x0, {h * (p - 1), h * (q - 1), h * (s - 1)}), t);
    auto at = [&](const std::array<int, 3>& o, int c) { return v[1 + o[0]][1 + o[1]][1 + o[2]][c]; };
    // d2/(dx_i dx_j) of component c by central differences
    auto second = [&](int i, int j, int c) {
      std::array<int, 3> pp{}, pm{}, mp{}, mm{};
      if (i == j) {
        pp[i] = 1, mm[i] = -1;
        return (at(pp, c) - 2 * at({0, 0, 0}, c) + at(mm, c)) / (h * h);
      }
      pp[i] = pm[i] = 1, mp[i] = mm[i] = -1;
      pp[j] = mp[j] = 1, pm[j] = mm[j] = -1;
      return (at(pp, c) - at(pm, c) - at(mp, c) + at(mm, c)) / (4 * h * h);
    };
    const Vec before = stokes_force_velocity(rock, force, other_direction, x0, t - ht);
    const Vec after = stokes_force_velocity(rock, force, other_direction, x0, t + ht);
    for (int i = 0; i < 3; ++i) {
      const double inertia = rock.rho * (after[i] - 2 * v[1][1][1][i] + before[i]) / (ht * ht);
      double grad_div = 0, laplacian = 0;
      for (int j = 0; j < 3; ++j) grad_div += second(i, j, j), laplacian += second(j, j, i);
      worst = std::max(worst, std::abs(inertia - (lambda + mu) * grad_div - mu * laplacian));
      peak = std::max(peak, std::abs(inertia));
    }
  }
  MESSAGE("elastic wave equation residual / peak of rho v_tt: " << worst / peak);
  CHECK(worst / peak < 1e-5);
}

TEST_CASE("explosive pressure: the fluid limit is the acoustic s(t - r / vp) / (4 pi r)") {
  const ElasticMedium water{1500, 0, 1000};
  double worst = 0, peak = 0;
  for (double r : {1.0, 37.5, 400.0})
    for (double t = 0; t <= 0.6; t += 1e-3) {
      const double want = F(t - r / water.vp) / (4 * M_PI * r);
      worst = std::max(worst, std::abs(explosive_pressure(water, force, r, t) - want));
      peak = std::max(peak, std::abs(want));
    }
  MESSAGE("fluid limit: relative difference " << worst / peak);
  CHECK(worst / peak < 1e-12);
}

TEST_CASE("explosive source in a solid: pressure and velocity from the displacement potential") {
  // phi = -G(t - r / vp) / (4 pi r), G = (1 / rho) int int s = -A exp(-a (t - t0)^2) / (2 a rho), u = grad phi:
  //   u_r = (G'(T) / (vp r) + G(T) / r^2) / (4 pi), G' = A (t - t0) exp(-a (t - t0)^2) / rho.
  auto displacement = [](const Vec& x, double t) {
    const double r = norm(x), T = t - r / rock.vp - force.delay;
    const double G = -force.amplitude * std::exp(-a * T * T) / (2 * a * rock.rho);
    const double G_dot = force.amplitude * T * std::exp(-a * T * T) / rock.rho;
    return scaled(x, (G_dot / (rock.vp * r) + G / (r * r)) / (4 * M_PI * r));
  };
  const double bulk = rock.rho * (rock.vp * rock.vp - 4 * rock.vs * rock.vs / 3);
  for (double wavelengths : {0.3, 3.0}) {
    const Vec x = scaled(oblique, wavelengths * lambda_p);
    // Central differences: truncation (k h)^2 / 6 ~ 3e-9 times the near field's amplification, rounding ~ 1e-11.
    const double h = 2e-5 * lambda_p, ht = 3e-6;
    auto pressure_from_u = [&](double t) {
      double div = 0;
      for (int i = 0; i < 3; ++i) {
        Vec step{};
        step[i] = h;
        div += (displacement(plus(x, step), t)[i] - displacement(plus(x, scaled(step, -1)), t)[i]) / (2 * h);
      }
      return Vec{-bulk * div, 0, 0};
    };
    const double pressure_error = trace_error(
        [&](double t) {
          return Vec{explosive_pressure(rock, force, norm(x), t), 0, 0};
        },
        pressure_from_u, 0, 0.6, 5e-4);
    const double velocity_error = trace_error(
        [&](double t) { return explosive_velocity(rock, force, x, t); },
        [&](double t) { return scaled(plus(displacement(x, t + ht), scaled(displacement(x, t - ht), -1)), 0.5 / ht); },
        0, 0.6, 5e-4);
    MESSAGE(wavelengths << " P wavelengths: pressure vs -K div u " << pressure_error << ", velocity vs du/dt "
                        << velocity_error);
    CHECK(pressure_error < 1e-6);
    CHECK(velocity_error < 1e-6);
  }
}
