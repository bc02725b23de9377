// Independent fp64 reference of the staggered velocity-pressure scheme of docs/numerics.md (section "Variable
// density: the staggered velocity-pressure scheme"): the pressure u on the nodes, the particle velocity w_a on the
// half nodes of axis a, its first-order CPML and its free surface, and its visco-acoustic memory variables (subsection
// "Attenuation: standard linear solids"; the fit is in sls_reference.cpp). Written from the specification only, with
// plain loops; no engine code (nothing from kernels/ or solver/). Clarity over speed. The points' interpolation
// stencils (section "Sources and receivers") come from reference.cpp (reference_point_stencil).
#include "validation/reference.hpp"

#include <unsupported/Eigen/CXX11/Tensor>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstddef>
#include <map>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

namespace specwave::validation {

namespace {

using Field = Eigen::Tensor<double, 3, Eigen::RowMajor>;
constexpr double kPi = std::numbers::pi;

// Small grids stay serial (as in spectral_reference.cpp): a parallel region per loop costs more than it saves there.
constexpr long kParallelMinPoints = long(1) << 16;

int half_order(int order) {
  if (order < 2 || order > 16 || order % 2 != 0)
    throw std::invalid_argument("staggered reference: order must be even, 2..16, got " + std::to_string(order));
  return order / 2;
}

// A field on the box of indices lo[a] .. lo[a] + ext[a] - 1 along each axis a (lo < 0 or lo + ext > n: points outside
// the grid), zero initially. Point (iz, iy, ix) is stored at (iz - lo[0], iy - lo[1], ix - lo[2]).
struct BoxField {
  std::array<int, 3> lo, ext;
  Field data;
  std::array<long, 3> stride;  // strides along z, y, x

  BoxField(std::array<int, 3> lo_, std::array<int, 3> ext_) : lo(lo_), ext(ext_), data(ext_[0], ext_[1], ext_[2]) {
    data.setZero();
    stride = {long(ext[1]) * ext[2], long(ext[2]), 1};
  }
  long index(int iz, int iy, int ix) const {
    return (iz - lo[0]) * stride[0] + (iy - lo[1]) * stride[1] + (ix - lo[2]) * stride[2];
  }
  double& operator()(int iz, int iy, int ix) { return data.data()[index(iz, iy, ix)]; }
  double operator()(int iz, int iy, int ix) const { return data.data()[index(iz, iy, ix)]; }
  long size() const { return long(ext[0]) * ext[1] * ext[2]; }
};

// The nodes of the grid.
BoxField node_field(const std::array<int, 3>& n) { return BoxField({0, 0, 0}, n); }

// u with its ghost nodes: the reads of D+ at the half nodes -R .. n - 2 + R reach the nodes -2R + 1 .. n - 2 + 2R.
// They hold zero (u outside the grid), except the odd mirror above a free surface (mirror_top below).
BoxField padded_node_field(const std::array<int, 3>& n, int R) {
  return BoxField({-2 * R, -2 * R, -2 * R}, {n[0] + 4 * R, n[1] + 4 * R, n[2] + 4 * R});
}

// A field on the half nodes of axis a: array index i along a is the point i + 1/2, i = -R .. n_a - 2 + R (every half
// node whose value D-_a reads at a node of the grid); the nodes of the grid along the other axes.
BoxField half_node_field(const std::array<int, 3>& n, int a, int R) {
  std::array<int, 3> lo{0, 0, 0}, ext = n;
  lo[a] = -R;
  ext[a] = n[a] + 2 * R - 1;
  return BoxField(lo, ext);
}

// CPML coefficients b and a at the position s (grid units) along an axis of n points: the profiles of the
// second-order CPML (section "Absorbing boundary"), with xi continued outside the grid and clamped to at most 1:
//   xi(s) = min(1, (W - s) / W) for s < W (low face), min(1, (s - (n - 1 - W)) / W) for s > n - 1 - W (high face),
//   0 otherwise;  d = d0 xi^p,  d0 = -(p + 1) v_max ln(R0) / (2 L),  L = W h;  alpha = alpha_max (1 - xi),
//   alpha_max = pi f_peak;  b = exp(-(d + alpha) dt),  a = d / (d + alpha) (b - 1)  (a = 0 where d = 0).
struct PmlCoefficients {
  double a, b;
};

PmlCoefficients pml_at(double s, int n, double h, int W, bool low_face, double v_max, const ReferenceProblem& pb) {
  const double L = W * h;
  const double d0 = -(pb.pml_power + 1) * v_max * std::log(pb.pml_reflection) / (2 * L);
  const double alpha_max = kPi * pb.pml_frequency;
  double xi = 0;
  if (low_face && s < W) xi = std::min(1.0, (W - s) / W);
  if (s > n - 1 - W) xi = std::min(1.0, (s - (n - 1 - W)) / W);
  const double d = xi > 0 ? d0 * std::pow(xi, pb.pml_power) : 0.0;
  const double alpha = alpha_max * (1 - xi);
  const double b = std::exp(-(d + alpha) * pb.dt);
  return {d > 0 ? d / (d + alpha) * (b - 1) : 0.0, b};
}

// The coefficients of one axis: on its nodes i = 0 .. n - 1 (s = i) and on its half nodes i = -R .. n - 2 + R
// (s = i + 1/2, stored at i + R).
struct PmlAxis {
  std::vector<PmlCoefficients> node, half;
};

PmlAxis make_pml_axis(int n, double h, int R, bool low_face, double v_max, const ReferenceProblem& pb) {
  PmlAxis axis;
  for (int i = 0; i < n; ++i) axis.node.push_back(pml_at(i, n, h, pb.pml_width, low_face, v_max, pb));
  for (int i = -R; i <= n - 2 + R; ++i) axis.half.push_back(pml_at(i + 0.5, n, h, pb.pml_width, low_face, v_max, pb));
  return axis;
}

void validate(const ReferenceProblem& pb) {
  check_reference_problem(pb, "staggered reference");
  half_order(pb.order);
  if (pb.density.empty()) return;
  if (pb.density.size() != pb.velocity.size())
    throw std::invalid_argument("staggered reference: density size != nz*ny*nx");
  for (double rho : pb.density)
    if (!(std::isfinite(rho) && rho > 0))
      throw std::invalid_argument("staggered reference: density must be finite and positive");
}

void validate_attenuation(const ReferenceProblem& pb) {
  if (pb.q.empty()) return;
  if (pb.q.size() != pb.velocity.size()) throw std::invalid_argument("staggered reference: q size != nz*ny*nx");
  for (double q : pb.q)
    if (!(std::isfinite(q) && q >= 1)) throw std::invalid_argument("staggered reference: Q must be finite and >= 1");
  const auto [f1, f2] = pb.attenuation_band;
  if (!(std::isfinite(f1) && std::isfinite(f2) && f1 > 0 && f1 < f2))
    throw std::invalid_argument("staggered reference: the attenuation band must be 0 < f_1 < f_2");
  if (!(std::isfinite(pb.attenuation_reference_frequency) && pb.attenuation_reference_frequency >= 0))
    throw std::invalid_argument("staggered reference: the reference frequency must be finite and >= 0");
  if (pb.attenuation_mechanisms < 1 || pb.attenuation_mechanisms > 8)
    throw std::invalid_argument("staggered reference: attenuation_mechanisms must be 1..8");
}

}  // namespace

std::vector<double> reference_staggered_coefficients(int order) {
  const int R = half_order(order);
  std::vector<double> g(R + 1, 0.0);
  // g_k = 1 / (2k - 1) * prod_{j = 1..R, j != k} (2j - 1)^2 / ((2j - 1)^2 - (2k - 1)^2)
  for (int k = 1; k <= R; ++k) {
    const double ok = 2.0 * k - 1;
    double prod = 1;
    for (int j = 1; j <= R; ++j) {
      if (j == k) continue;
      const double oj = 2.0 * j - 1;
      prod *= oj * oj / (oj * oj - ok * ok);
    }
    g[k] = prod / ok;
  }
  return g;
}

ReferenceResult run_staggered_reference(const ReferenceProblem& pb) {
  validate(pb);
  validate_attenuation(pb);
  const int R = half_order(pb.order);
  const std::array<int, 3> n = pb.shape;
  const auto& h = pb.spacing;
  const double dt = pb.dt;
  const bool pml_on = pb.pml_width > 0;
  const bool fs = pb.free_surface;
  const bool parallel = long(n[0]) * n[1] * n[2] >= kParallelMinPoints;
  const std::vector<double> g = reference_staggered_coefficients(pb.order);

  // rho at a node of the grid (1 without a density model); rho_clamped continues it outside the grid along axis a by
  // rho[clamp(i, 0, n_a - 1)].
  const auto rho = [&](int iz, int iy, int ix) {
    return pb.density.empty() ? 1.0 : pb.density[(std::size_t(iz) * n[1] + iy) * n[2] + ix];
  };
  const auto rho_clamped = [&](std::array<int, 3> p) {
    for (int a = 0; a < 3; ++a) p[a] = std::clamp(p[a], 0, n[a] - 1);
    return rho(p[0], p[1], p[2]);
  };

  // Material. K = rho v^2 on the nodes, with dt^2 v^2 (the source's factor); buoyancy on the half nodes of axis a,
  // beta_a[i] = 2 / (rho[i] + rho[i + 1]) along a.
  BoxField K = node_field(n), dt2v2 = node_field(n);
  for (int iz = 0; iz < n[0]; ++iz)
    for (int iy = 0; iy < n[1]; ++iy)
      for (int ix = 0; ix < n[2]; ++ix) {
        const double v = pb.velocity[(std::size_t(iz) * n[1] + iy) * n[2] + ix];
        K(iz, iy, ix) = rho(iz, iy, ix) * v * v;
        dt2v2(iz, iy, ix) = dt * dt * v * v;
      }
  std::array<BoxField, 3> beta{half_node_field(n, 0, R), half_node_field(n, 1, R), half_node_field(n, 2, R)};
  for (int a = 0; a < 3; ++a) {
    const BoxField& b = beta[a];
    for (int iz = b.lo[0]; iz < b.lo[0] + b.ext[0]; ++iz)
      for (int iy = b.lo[1]; iy < b.lo[1] + b.ext[1]; ++iy)
        for (int ix = b.lo[2]; ix < b.lo[2] + b.ext[2]; ++ix) {
          std::array<int, 3> p{iz, iy, ix};
          const double rho_i = rho_clamped(p);
          ++p[a];
          beta[a](iz, iy, ix) = 2 / (rho_i + rho_clamped(p));
        }
  }

  // Attenuation (subsection "Attenuation: standard linear solids"): tau_l for the grid, y_l per point's Q (fitted once
  // per distinct Q), K_R = rho v^2 [Re m(omega_r)^(-1/2)]^2 (read as Re of m^(-1/2): v the phase velocity at f_r),
  // m(omega) = 1 + sum_l y_l i omega tau_l / (1 + i omega tau_l). K then holds the unrelaxed K_R (1 + sum_l y_l) and
  // KRy[l] holds K_R y_l; a_l = (1 - dt / (2 tau_l)) / (1 + dt / (2 tau_l)), b_l = (dt / tau_l) / (1 + dt / (2 tau_l)).
  const bool lossy = !pb.q.empty();
  const int L = lossy ? pb.attenuation_mechanisms : 0;
  std::vector<BoxField> KRy, r;  // K_R y_l and the memory variables r_l (r_l^0 = 0), on the nodes
  std::vector<double> a_l(static_cast<std::size_t>(L)), b_l(static_cast<std::size_t>(L));
  if (lossy) {
    const auto [f1, f2] = pb.attenuation_band;
    const std::vector<double> tau = reference_sls_relaxation(f1, f2, L).tau;
    const double f_r = pb.attenuation_reference_frequency > 0 ? pb.attenuation_reference_frequency : std::sqrt(f1 * f2);
    const double omega_r = 2 * kPi * f_r;
    for (int l = 0; l < L; ++l) {
      const double x = pb.dt / (2 * tau[std::size_t(l)]);
      a_l[std::size_t(l)] = (1 - x) / (1 + x);
      b_l[std::size_t(l)] = (pb.dt / tau[std::size_t(l)]) / (1 + x);
      KRy.push_back(node_field(n));
      r.push_back(node_field(n));
    }
    std::map<double, std::vector<double>> weights;  // y_l per distinct Q
    for (int iz = 0; iz < n[0]; ++iz)
      for (int iy = 0; iy < n[1]; ++iy)
        for (int ix = 0; ix < n[2]; ++ix) {
          const std::size_t p = (std::size_t(iz) * n[1] + iy) * n[2] + ix;
          auto it = weights.find(pb.q[p]);
          if (it == weights.end()) it = weights.emplace(pb.q[p], reference_sls_weights(tau, f1, f2, pb.q[p])).first;
          const std::vector<double>& y = it->second;
          std::complex<double> m = 1;
          double y_sum = 0;
          for (int l = 0; l < L; ++l) {
            const std::complex<double> iwt(0, omega_r * tau[std::size_t(l)]);
            m += y[std::size_t(l)] * iwt / (1.0 + iwt);
            y_sum += y[std::size_t(l)];
          }
          const double re = (1.0 / std::sqrt(m)).real();
          const double v = pb.velocity[p];
          const double K_R = rho(iz, iy, ix) * v * v * re * re;
          K(iz, iy, ix) = K_R * (1 + y_sum);
          for (int l = 0; l < L; ++l) KRy[std::size_t(l)](iz, iy, ix) = K_R * y[std::size_t(l)];
        }
  }

  // CPML coefficients per axis (v_max = max of the velocity array, as run_reference); no low z face with a free
  // surface.
  const double v_max = *std::max_element(pb.velocity.begin(), pb.velocity.end());
  std::array<PmlAxis, 3> pml;
  if (pml_on)
    for (int a = 0; a < 3; ++a) pml[a] = make_pml_axis(n[a], h[a], R, !(a == 0 && fs), v_max, pb);

  // Sources: f^m = sum_j s_j(t_m) sum_p (rho_p / rho_s) w_p delta_p / (dz dy dx), rho_s the density at the source:
  // rho_s = sum_p |w_p| rho_p / sum_p |w_p| over the source's own stencil (folded at a free surface). At a constant
  // density rho_p / rho_s = 1.
  const double inv_cell = 1.0 / (h[0] * h[1] * h[2]);
  std::vector<RefStencil> src, rec;
  for (const auto& s : pb.sources) {
    RefStencil st = reference_point_stencil(pb, s, "source");
    double a_sum = 0, a_rho = 0;
    for (std::size_t k = 0; k < st.w.size(); ++k) {
      const double r = rho(st.idx[k][0], st.idx[k][1], st.idx[k][2]);
      a_sum += std::abs(st.w[k]), a_rho += std::abs(st.w[k]) * r;
    }
    const double rho_s = a_rho / a_sum;
    if (!(rho_s > 0)) throw std::invalid_argument("staggered reference: the density at a source is not positive");
    for (std::size_t k = 0; k < st.w.size(); ++k)
      st.w[k] *= rho(st.idx[k][0], st.idx[k][1], st.idx[k][2]) / rho_s * inv_cell;
    src.push_back(st);
  }
  for (const auto& r : pb.receivers) rec.push_back(reference_point_stencil(pb, r, "receiver"));

  // u^n with its ghosts; w_a^{n-1/2} and phi_a on the half nodes of a; chi_a on the nodes; F^n on the nodes.
  BoxField u = padded_node_field(n, R), F = node_field(n);
  std::array<BoxField, 3> w{half_node_field(n, 0, R), half_node_field(n, 1, R), half_node_field(n, 2, R)};
  std::array<BoxField, 3> phi = w;
  std::array<BoxField, 3> chi{node_field(n), node_field(n), node_field(n)};

  ReferenceResult res;
  res.traces = Eigen::MatrixXd::Zero(Eigen::Index(rec.size()), pb.nt);
  res.energy.assign(std::size_t(pb.nt) + 1, 0.0);

  for (int step = 0; step < pb.nt; ++step) {
    // Receivers: r(t_n) = sum_p w_p u^n_p, recorded before step n.
    for (std::size_t r = 0; r < rec.size(); ++r) {
      double acc = 0;
      for (std::size_t k = 0; k < rec[r].w.size(); ++k) {
        const auto& i = rec[r].idx[k];
        acc += rec[r].w[k] * u(i[0], i[1], i[2]);
      }
      res.traces(Eigen::Index(r), step) = acc;
    }

    // Free surface: the ghosts of u above it are odd mirrors, u[-k] = -u[k] (k = 1..R), set before step 1 reads them.
    if (fs)
      for (int k = 1; k <= R; ++k)
        for (int iy = 0; iy < n[1]; ++iy)
          for (int ix = 0; ix < n[2]; ++ix) u(-k, iy, ix) = -u(k, iy, ix);

    // F^n = F^{n-1} + f^n  (the running sum of the source term)
    for (std::size_t j = 0; j < src.size(); ++j) {
      const double s = pb.source_wavelets[j][std::size_t(step)];
      for (std::size_t k = 0; k < src[j].w.size(); ++k) {
        const auto& i = src[j].idx[k];
        F(i[0], i[1], i[2]) += s * src[j].w[k];
      }
    }

    // 1. On the half nodes i of axis a:  G_a = D+_a u^n = (1/h) sum_k g_k (u[i + k] - u[i - k + 1]),
    //    phi_a^n = b_a(i + 1/2) phi_a^{n-1} + a_a(i + 1/2) G_a,  w_a^{n+1/2} = w_a^{n-1/2} - dt beta_a (G_a + phi_a^n).
    //    With a free surface w_z is not computed above z = 0 (half nodes i < 0: mirrored below).
    for (int a = 0; a < 3; ++a) {
      BoxField& wa = w[a];
      const long su = u.stride[a];
      const int iz_first = (a == 0 && fs) ? 0 : wa.lo[0];
#pragma omp parallel for schedule(static) if (parallel)
      for (int iz = iz_first; iz < wa.lo[0] + wa.ext[0]; ++iz)
        for (int iy = wa.lo[1]; iy < wa.lo[1] + wa.ext[1]; ++iy)
          for (int ix = wa.lo[2]; ix < wa.lo[2] + wa.ext[2]; ++ix) {
            const long iu = u.index(iz, iy, ix);  // node i along a (the half node is i + 1/2)
            double G = 0;
            for (int k = 1; k <= R; ++k) G += g[k] * (u.data.data()[iu + k * su] - u.data.data()[iu - (k - 1) * su]);
            G /= h[a];
            double memory = 0;
            if (pml_on) {
              const int i = a == 0 ? iz : (a == 1 ? iy : ix);
              const PmlCoefficients& c = pml[a].half[std::size_t(i + R)];
              double& p = phi[a](iz, iy, ix);
              p = c.b * p + c.a * G;
              memory = p;
            }
            wa(iz, iy, ix) -= dt * beta[a](iz, iy, ix) * (G + memory);
          }
    }
    // Free surface: the ghosts of w_z are even mirrors, w_z[-k] = w_z[k - 1] (k = 1..R), set before step 2.
    if (fs)
      for (int k = 1; k <= R; ++k)
        for (int iy = 0; iy < n[1]; ++iy)
          for (int ix = 0; ix < n[2]; ++ix) w[0](-k, iy, ix) = w[0](k - 1, iy, ix);

            // 2. On the nodes:  Q_a = D-_a w_a^{n+1/2} = (1/h) sum_k g_k (w[i + k - 1] - w[i - k]),
            //    chi_a^{n+1/2} = b_a(i) chi_a^{n-1/2} + a_a(i) Q_a,
            //    u^{n+1} = u^n - dt K sum_a (Q_a + chi_a^{n+1/2}) + dt^2 v^2 F^n   (in place: a node reads only its own
            //    u).
#pragma omp parallel for schedule(static) if (parallel)
    for (int iz = 0; iz < n[0]; ++iz)
      for (int iy = 0; iy < n[1]; ++iy)
        for (int ix = 0; ix < n[2]; ++ix) {
          const std::array<int, 3> ia{iz, iy, ix};
          double div = 0;
          for (int a = 0; a < 3; ++a) {
            const BoxField& wa = w[a];
            const long iw = wa.index(iz, iy, ix), sw = wa.stride[a];
            double Q = 0;
            for (int k = 1; k <= R; ++k) Q += g[k] * (wa.data.data()[iw + (k - 1) * sw] - wa.data.data()[iw - k * sw]);
            Q /= h[a];
            double memory = 0;
            if (pml_on) {
              const PmlCoefficients& c = pml[a].node[std::size_t(ia[a])];
              double& x = chi[a](iz, iy, ix);
              x = c.b * x + c.a * Q;
              memory = x;
            }
            div += Q + memory;
          }
          // Attenuation: r_l^{n+1} = a_l r_l^n + b_l K_R y_l D and u^{n+1} = u^n - dt K_R (1 + sum_l y_l) D
          // + (dt / 2) sum_l (r_l^{n+1} + r_l^n) + dt^2 v^2 F^n, D = div (the CPML's chi included).
          double relax = 0;
          for (int l = 0; l < L; ++l) {
            double& rl = r[std::size_t(l)](iz, iy, ix);
            const double old = rl;
            rl = a_l[std::size_t(l)] * old + b_l[std::size_t(l)] * KRy[std::size_t(l)](iz, iy, ix) * div;
            relax += rl + old;
          }
          u(iz, iy, ix) += -dt * K(iz, iy, ix) * div + 0.5 * dt * relax + dt2v2(iz, iy, ix) * F(iz, iy, ix);
        }

    // 3. Free surface: u^{n+1}[iz = 0] = 0.
    if (fs)
      for (int iy = 0; iy < n[1]; ++iy)
        for (int ix = 0; ix < n[2]; ++ix) u(0, iy, ix) = 0;

    // energy[n+1] = sum (u^{n+1})^2 over the grid (serial sum: deterministic)
    double e = 0;
    for (int iz = 0; iz < n[0]; ++iz)
      for (int iy = 0; iy < n[1]; ++iy)
        for (int ix = 0; ix < n[2]; ++ix) e += u(iz, iy, ix) * u(iz, iy, ix);
    res.energy[std::size_t(step) + 1] = e;
  }

  res.final_field.resize(std::size_t(n[0]) * n[1] * n[2]);
  for (int iz = 0; iz < n[0]; ++iz)
    for (int iy = 0; iy < n[1]; ++iy)
      for (int ix = 0; ix < n[2]; ++ix) res.final_field[(std::size_t(iz) * n[1] + iy) * n[2] + ix] = u(iz, iy, ix);
  return res;
}

}  // namespace specwave::validation
