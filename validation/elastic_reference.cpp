// Independent fp64 reference of the isotropic elastic velocity-stress scheme of docs/numerics.md (section "Isotropic
// elastic waves: the velocity-stress scheme"): the normal stresses on the nodes, the shear stresses on the edge points,
// the particle velocity v_a on the half nodes of axis a, the staggered D+ / D- of the acoustic staggered scheme, its
// first-order CPML with one memory variable a derivative, pressure and force sources, pressure and velocity receivers.
// Written from the specification only, with plain loops; no engine code (nothing from kernels/ or solver/). Clarity
// over speed. The points' interpolation weights come from reference.cpp, the g_k from staggered_reference.cpp.
#include "validation/elastic_reference.hpp"

#include <unsupported/Eigen/CXX11/Tensor>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

namespace specwave::validation {

namespace {

using Field = Eigen::Tensor<double, 3, Eigen::RowMajor>;
constexpr double kPi = std::numbers::pi;
const std::string kWho = "elastic reference";

// Small grids stay serial (as in staggered_reference.cpp): a parallel region per loop costs more than it saves there.
constexpr long kParallelMinPoints = long(1) << 16;

// A field on the box of indices lo[a] .. lo[a] + ext[a] - 1 along each axis a (points outside the grid included), zero
// initially. Point (iz, iy, ix) is stored at (iz - lo[0], iy - lo[1], ix - lo[2]).
struct BoxField {
  std::array<int, 3> lo{0, 0, 0}, ext{0, 0, 0};
  Field data;
  std::array<long, 3> stride{0, 0, 0};  // strides along z, y, x

  BoxField() = default;
  BoxField(std::array<int, 3> lo_, std::array<int, 3> ext_) : lo(lo_), ext(ext_), data(ext_[0], ext_[1], ext_[2]) {
    data.setZero();
    stride = {long(ext[1]) * ext[2], long(ext[2]), 1};
  }
  long index(int iz, int iy, int ix) const {
    return (iz - lo[0]) * stride[0] + (iy - lo[1]) * stride[1] + (ix - lo[2]) * stride[2];
  }
  double& operator()(int iz, int iy, int ix) { return data.data()[index(iz, iy, ix)]; }
  double operator()(int iz, int iy, int ix) const { return data.data()[index(iz, iy, ix)]; }
};

// The nine fields, in the order of ElasticReferenceResult::final_fields, and the axes each lies half way along
// (docs/numerics.md, the grid's table).
enum FieldId { kSzz, kSyy, kSxx, kSzy, kSzx, kSyx, kVz, kVy, kVx };
constexpr std::array<std::array<bool, 3>, 9> kHalf{{{false, false, false},
                                                    {false, false, false},
                                                    {false, false, false},
                                                    {true, true, false},
                                                    {true, false, true},
                                                    {false, true, true},
                                                    {true, false, false},
                                                    {false, true, false},
                                                    {false, false, true}}};

// The stress s_ab: the normal stress s_aa for a = b, else the shear stress of the two axes.
int stress_id(int a, int b) {
  if (a == b) return a;
  const int lo = std::min(a, b), hi = std::max(a, b);
  return lo == 0 ? (hi == 1 ? kSzy : kSzx) : kSyx;
}

// An inclusive box of indices.
struct Range {
  std::array<int, 3> lo, hi;
};

// CPML coefficients b and a at the position s (grid units) along an axis of n points, as the acoustic staggered
// reference computes them: the profiles of the second-order CPML with xi continued outside the grid, clamped to 1:
//   xi(s) = min(1, (W - s) / W) for s < W, min(1, (s - (n - 1 - W)) / W) for s > n - 1 - W, 0 otherwise;
//   d = d0 xi^p, d0 = -(p + 1) v_max ln(R0) / (2 L), L = W h; alpha = alpha_max (1 - xi), alpha_max = pi f_peak;
//   b = exp(-(d + alpha) dt), a = d / (d + alpha) (b - 1)  (a = 0 where d = 0); the M-PML's d is pml_multiaxial
//   d0 xi^(p + 8) where xi > 1/2, none elsewhere.
struct PmlCoefficients {
  double a, b;
};

PmlCoefficients pml_at(double s, int n, double h, double v_max, const ReferenceProblem& pb, double scale,
                       double extra_power, double min_xi) {
  const int W = pb.pml_width;
  const double L = W * h;
  const double d0 = scale * -(pb.pml_power + 1) * v_max * std::log(pb.pml_reflection) / (2 * L);
  const double alpha_max = kPi * pb.pml_frequency;
  double xi = 0;
  if (s < W) xi = std::min(1.0, (W - s) / W);
  if (s > n - 1 - W) xi = std::min(1.0, (s - (n - 1 - W)) / W);
  if (xi <= min_xi) return {0.0, 1.0};
  const double d = xi > 0 ? d0 * std::pow(xi, pb.pml_power + extra_power) : 0.0;
  const double alpha = alpha_max * (1 - xi);
  const double b = std::exp(-(d + alpha) * pb.dt);
  return {d > 0 ? d / (d + alpha) * (b - 1) : 0.0, b};
}

// One axis' coefficients on its nodes i = 0 .. n - 1 (s = i) and half nodes i = -R .. n - 2 + R (s = i + 1/2, stored
// at i + R), for the derivatives along the axis (own) and, with a multi-axial PML, along the other axes (d times
// the ratio and xi^8); `on` is false for an axis without layers (pml_width = 0, or y in 2-D).
struct PmlAxis {
  bool on = false;
  int R = 0;
  std::vector<PmlCoefficients> node, half, other_node, other_half;
  const PmlCoefficients& at(bool own, bool half_point, int i) const {
    const auto& h = own ? half : other_half;
    const auto& n = own ? node : other_node;
    return half_point ? h[std::size_t(i + R)] : n[std::size_t(i)];
  }
};

PmlAxis make_pml_axis(int n, double h, int R, double v_max, const ReferenceProblem& pb, double multiaxial) {
  PmlAxis axis;
  axis.on = true;
  axis.R = R;
  for (int i = 0; i < n; ++i) {
    axis.node.push_back(pml_at(i, n, h, v_max, pb, 1, 0, 0));
    axis.other_node.push_back(pml_at(i, n, h, v_max, pb, multiaxial, 8, 0.5));
  }
  for (int i = -R; i <= n - 2 + R; ++i) {
    axis.half.push_back(pml_at(i + 0.5, n, h, v_max, pb, 1, 0, 0));
    axis.other_half.push_back(pml_at(i + 0.5, n, h, v_max, pb, multiaxial, 8, 0.5));
  }
  return axis;
}

// G = D+_a X at the half point i + 1/2 (X on nodes along a):  (1/h) sum_k g_k (X[i + k] - X[i - k + 1]);
// G = D-_a X at the node i (X half way along a):              (1/h) sum_k g_k (X[i + k - 1] - X[i - k]).
double staggered_derivative(const BoxField& X, int a, bool plus, int iz, int iy, int ix, const std::vector<double>& g,
                            double h) {
  const double* p = X.data.data();
  const long c = X.index(iz, iy, ix), s = X.stride[a];
  const int R = int(g.size()) - 1;
  double acc = 0;
  for (int k = 1; k <= R; ++k)
    acc += plus ? g[k] * (p[c + k * s] - p[c - (k - 1) * s]) : g[k] * (p[c + (k - 1) * s] - p[c - k * s]);
  return acc / h;
}

template <class Body>
void for_each_point(const Range& r, bool parallel, Body&& body) {
#pragma omp parallel for schedule(static) if (parallel)
  for (int iz = r.lo[0]; iz <= r.hi[0]; ++iz)
    for (int iy = r.lo[1]; iy <= r.hi[1]; ++iy)
      for (int ix = r.lo[2]; ix <= r.hi[2]; ++ix) body(iz, iy, ix);
}

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument(kWho + ": " + what); }

void validate(const ElasticReferenceProblem& problem) {
  const ReferenceProblem& pb = problem.base;
  if (pb.free_surface) fail("free_surface is not supported (it must be false)");
  if (pb.order < 2 || pb.order > 8 || pb.order % 2 != 0)
    fail("order must be 2, 4, 6 or 8, got " + std::to_string(pb.order));
  if (pb.interpolation_radius < 1 || pb.interpolation_radius > 6) fail("interpolation_radius must be 1..6");
  // The common checks, on a copy without points (this reference has its own) and, in 2-D, without the y layer that
  // check_reference_problem would find overlapping on one point: the layers of z and x are checked below.
  ReferenceProblem common = pb;
  common.sources.clear();
  common.receivers.clear();
  common.source_wavelets.clear();
  const bool two_d = pb.shape[1] == 1;
  if (two_d) common.pml_width = 0;
  check_reference_problem(common, kWho);
  if (two_d && pb.pml_width > 0) {
    if (!(pb.pml_reflection > 0 && pb.pml_reflection < 1)) fail("pml_reflection must be in (0, 1)");
    if (2 * pb.pml_width > pb.shape[0] || 2 * pb.pml_width > pb.shape[2]) fail("PML layers overlap");
  }
  const std::size_t npts = std::size_t(pb.shape[0]) * pb.shape[1] * pb.shape[2];
  for (double v : pb.velocity)
    if (!std::isfinite(v)) fail("vp must be finite");
  if (pb.density.size() != npts) fail("a density of nz*ny*nx values is required");
  for (double rho : pb.density)
    if (!(std::isfinite(rho) && rho > 0)) fail("density must be finite and positive");
  if (problem.shear_velocity.size() != npts) fail("shear_velocity size != nz*ny*nx");
  for (double vs : problem.shear_velocity)
    if (!(std::isfinite(vs) && vs >= 0)) fail("shear velocity must be finite and >= 0");
  for (const auto& s : problem.sources) {
    if (s.wavelet.size() < std::size_t(pb.nt)) fail("wavelet shorter than nt");
    if (!s.force) continue;
    const auto& d = s.direction;
    const double norm = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    if (!(std::isfinite(norm) && std::abs(norm - 1) < 1e-6)) fail("a force's direction must be a unit vector");
    if (two_d && d[1] != 0) fail("a force with a y component in 2-D (ny = 1)");
  }
  for (const auto& r : problem.receivers) {
    if (r.component < 0 || r.component > 3) fail("receiver component must be 0 (pressure), 1 (vz), 2 (vy) or 3 (vx)");
    if (two_d && r.component == 2) fail("a vy receiver in 2-D (ny = 1)");
  }
}

// The node stencil of a point (reference_point_stencil), its errors renamed.
RefStencil node_stencil(const ReferenceProblem& pb, const RefPoint& point, const char* what) {
  try {
    return reference_point_stencil(pb, point, what);
  } catch (const std::invalid_argument& e) {
    fail(e.what());
  }
  return {};
}

// The stencil of the point shifted by -h_a / 2 along a, on the half-node grid of axis a: its index i along a is the
// half node i + 1/2 and must lie in -R .. n_a - 2 + R (the computed range of v_a); along the other axes the node
// weights, on 0 .. n - 1. The point itself must lie on the grid.
RefStencil shifted_stencil(const ReferenceProblem& pb, const RefPoint& point, int a, int R, const char* what) {
  const std::array<double, 3> pos{point.z, point.y, point.x};
  std::array<RefWeights1D, 3> w1;
  for (int b = 0; b < 3; ++b) {
    const int n = pb.shape[b];
    const double q = (pos[b] - pb.origin[b]) / pb.spacing[b];
    const double tol = 1e-9 * std::max(1.0, std::abs(q));
    if (!(q >= -tol && q <= (n - 1) + tol)) fail(std::string(what) + " outside the grid");
    const double q_b = b == a ? (pos[b] - pb.spacing[b] / 2 - pb.origin[b]) / pb.spacing[b] : q;
    w1[b] = reference_interpolation_weights(q_b, pb.interpolation_radius);
    const int first = b == a ? -R : 0, last = b == a ? n - 2 + R : n - 1;
    for (int i : w1[b].index)
      if (i < first || i > last) fail(std::string("shifted interpolation stencil of ") + what + " leaves the grid");
  }
  RefStencil st;
  for (std::size_t kz = 0; kz < w1[0].index.size(); ++kz)
    for (std::size_t ky = 0; ky < w1[1].index.size(); ++ky)
      for (std::size_t kx = 0; kx < w1[2].index.size(); ++kx) {
        st.idx.push_back({w1[0].index[kz], w1[1].index[ky], w1[2].index[kx]});
        st.w.push_back(w1[0].weight[kz] * w1[1].weight[ky] * w1[2].weight[kx]);
      }
  return st;
}

double sample(const RefStencil& st, const BoxField& f) {
  double acc = 0;
  for (std::size_t k = 0; k < st.w.size(); ++k) acc += st.w[k] * f(st.idx[k][0], st.idx[k][1], st.idx[k][2]);
  return acc;
}

// A pressure source: its node stencil with the factors c_p = dt^2 vp_p^2 (rho_p / rho_s) w_p / V (V the cell volume)
// and its running sum F^n of the wavelet. A force: one shifted stencil per axis a with d_a != 0, with the factors
// dt b_a(p) d_a w_p / V.
struct SourceTerm {
  const ElasticRefSource* source;
  std::array<RefStencil, 3> stencil;  // [0] for a pressure source; [a] for a force's axis a
  double running_sum = 0;             // F^n, pressure sources
};

}  // namespace

ElasticReferenceResult run_elastic_reference(const ElasticReferenceProblem& problem) {
  validate(problem);
  const ReferenceProblem& pb = problem.base;
  const int R = pb.order / 2;
  const std::array<int, 3> n = pb.shape;
  const auto& h = pb.spacing;
  const double dt = pb.dt;
  const bool two_d = n[1] == 1;
  const std::array<bool, 3> active{true, !two_d, true};  // axes with a derivative
  const bool parallel = long(n[0]) * n[1] * n[2] >= kParallelMinPoints;
  const std::vector<double> g = reference_staggered_coefficients(pb.order);
  const double cell_volume = two_d ? h[0] * h[2] : h[0] * h[1] * h[2];

  // Computed ranges: along an active axis nodes 0 .. n - 1, half nodes -R .. n - 2 + R; the inactive y axis iy = 0.
  // Storage: every field holds the indices -2R .. n - 1 + 2R of an active axis (zero outside its computed range), the
  // reach of D+ from a half node of the range (-2R + 1 .. n - 2 + 2R) and of D- from a node (-R .. n - 2 + R).
  std::array<Range, 9> range;
  std::array<BoxField, 9> field;
  for (int f = 0; f < 9; ++f) {
    std::array<int, 3> lo{}, ext{};
    for (int a = 0; a < 3; ++a) {
      range[f].lo[a] = !active[a] ? 0 : (kHalf[f][a] ? -R : 0);
      range[f].hi[a] = !active[a] ? 0 : (kHalf[f][a] ? n[a] - 2 + R : n[a] - 1);
      lo[a] = active[a] ? -2 * R : 0;
      ext[a] = active[a] ? n[a] + 4 * R : 1;
    }
    field[f] = BoxField(lo, ext);
  }
  const auto box_of = [&](int f) {
    std::array<int, 3> ext{};
    for (int a = 0; a < 3; ++a) ext[a] = range[f].hi[a] - range[f].lo[a] + 1;
    return BoxField(range[f].lo, ext);
  };

  // Material. The medium is continued outside the grid by its nearest node (clamp(i, 0, n - 1) on each axis).
  const auto node_value = [&](const std::vector<double>& v, std::array<int, 3> p) {
    for (int a = 0; a < 3; ++a) p[a] = std::clamp(p[a], 0, n[a] - 1);
    return v[(std::size_t(p[0]) * n[1] + p[1]) * n[2] + p[2]];
  };
  const auto mu_node = [&](const std::array<int, 3>& p) {
    const double vs = node_value(problem.shear_velocity, p);
    return node_value(pb.density, p) * vs * vs;
  };
  // lambda = rho (vp^2 - 2 vs^2), mu = rho vs^2 on the nodes.
  BoxField lambda = box_of(kSzz), mu = box_of(kSzz);
  for_each_point(range[kSzz], false, [&](int iz, int iy, int ix) {
    const std::array<int, 3> p{iz, iy, ix};
    const double vp = node_value(pb.velocity, p), vs = node_value(problem.shear_velocity, p);
    lambda(iz, iy, ix) = node_value(pb.density, p) * (vp * vp - 2 * vs * vs);
    mu(iz, iy, ix) = mu_node(p);
  });
  // Buoyancy on v_a's points: b_a = 2 / (rho[i] + rho[i + e_a]).
  std::array<BoxField, 3> buoyancy;
  for (int a = 0; a < 3; ++a) {
    buoyancy[a] = box_of(kVz + a);
    for_each_point(range[kVz + a], false, [&](int iz, int iy, int ix) {
      std::array<int, 3> p{iz, iy, ix};
      const double rho_i = node_value(pb.density, p);
      ++p[a];
      buoyancy[a](iz, iy, ix) = 2 / (rho_i + node_value(pb.density, p));
    });
  }
  // mu on the edge points half along a and b: mu_ab = 4 / sum_corners (1 / mu) over the corners i, i + e_a, i + e_b,
  // i + e_a + e_b; 0 when a corner has mu = 0.
  std::array<BoxField, 9> mu_edge;  // indexed by the shear stress' FieldId
  for (int f = kSzy; f <= kSyx; ++f) {
    const int a = f == kSyx ? 1 : 0, b = f == kSzy ? 1 : 2;
    mu_edge[f] = box_of(f);
    for_each_point(range[f], false, [&](int iz, int iy, int ix) {
      double inverse_sum = 0;
      bool fluid = false;
      for (int ca = 0; ca <= 1; ++ca)
        for (int cb = 0; cb <= 1; ++cb) {
          std::array<int, 3> p{iz, iy, ix};
          p[a] += ca;
          p[b] += cb;
          const double m = mu_node(p);
          if (m == 0) fluid = true;
          inverse_sum += fluid ? 0.0 : 1 / m;
        }
      mu_edge[f](iz, iy, ix) = fluid ? 0.0 : 4 / inverse_sum;
    });
  }

  // CPML: profiles per axis (v_max the largest vp) where the axis has layers.
  const double v_max = *std::max_element(pb.velocity.begin(), pb.velocity.end());
  std::array<PmlAxis, 3> pml;
  if (pb.pml_width > 0)
    for (int a = 0; a < 3; ++a)
      if (active[a]) pml[a] = make_pml_axis(n[a], h[a], R, v_max, pb, problem.pml_multiaxial);
  // Memory variables psi[3 (3 f + a) + k] of the derivative along axis a in the update of field f, filtered by the
  // layers of axis k, on f's points: the velocities' nine (f = v_c, a = z, y, x), e_a = D-_a v_a in slot kSzz (shared
  // by the three normal stresses), and the two of each shear stress. Allocated where axis k has layers (k = a, or any
  // with a multi-axial PML); used where xi > 0 along k, zero elsewhere.
  std::vector<BoxField> psi(81);
  const auto allocate_psi = [&](int f, int slot_field, int a) {
    for (int k = 0; k < 3; ++k)
      if (pml[k].on && (k == a || problem.pml_multiaxial > 0))
        psi[std::size_t(3 * (3 * slot_field + a) + k)] = box_of(f);
  };
  for (int a = 0; a < 3; ++a) {
    for (int c = 0; c < 3; ++c) allocate_psi(kVz + c, kVz + c, a);
    allocate_psi(kSzz, kSzz, a);
  }
  for (int f = kSzy; f <= kSyx; ++f)
    for (int a = 0; a < 3; ++a)
      if (kHalf[f][a]) allocate_psi(f, f, a);
  // The derivative along a of X at a point of field f through the filters of the layers holding the point, axis a's
  // first, then a + 1 and a + 2 (mod 3), each: psi^new = b psi^old + a G, G = G + psi^new (the profile at f's
  // position along the filter's axis: node or half node; along another axis than a, d times pml_multiaxial).
  const auto derivative = [&](int f, int slot, int X, int a, int iz, int iy, int ix) {
    const bool plus = !kHalf[X][a];  // D+ from nodes to half points, D- from half points to nodes
    double G = staggered_derivative(field[X], a, plus, iz, iy, ix, g, h[a]);
    const std::array<int, 3> p{iz, iy, ix};
    for (int j = 0; j < 3; ++j) {
      const int k = (a + j) % 3;
      if (!pml[k].on || (k != a && problem.pml_multiaxial == 0)) continue;
      const PmlCoefficients& c = pml[k].at(k == a, kHalf[f][k], p[k]);
      if (c.a == 0) continue;
      double& memory = psi[std::size_t(3 * (3 * slot + a) + k)](iz, iy, ix);
      memory = c.b * memory + c.a * G;
      G += memory;
    }
    return G;
  };

  // Sources and receivers.
  std::vector<SourceTerm> sources;
  for (const auto& s : problem.sources) {
    SourceTerm term{&s, {}, 0};
    if (!s.force) {
      // c_p = dt^2 vp_p^2 (rho_p / rho_s) w_p / V, rho_s = sum_p |w_p| rho_p / sum_p |w_p|.
      RefStencil st = node_stencil(pb, s.position, "source");
      double abs_sum = 0, abs_rho = 0;
      for (std::size_t k = 0; k < st.w.size(); ++k) {
        abs_sum += std::abs(st.w[k]);
        abs_rho += std::abs(st.w[k]) * node_value(pb.density, st.idx[k]);
      }
      const double rho_s = abs_rho / abs_sum;
      for (std::size_t k = 0; k < st.w.size(); ++k) {
        const double vp = node_value(pb.velocity, st.idx[k]);
        st.w[k] = dt * dt * vp * vp * (node_value(pb.density, st.idx[k]) / rho_s) * st.w[k] / cell_volume;
      }
      term.stencil[0] = st;
    } else {
      // c_p = dt b_a(p) d_a w_p / V on v_a's half-node grid.
      for (int a = 0; a < 3; ++a) {
        if (s.direction[a] == 0) continue;
        RefStencil st = shifted_stencil(pb, s.position, a, R, "source");
        for (std::size_t k = 0; k < st.w.size(); ++k)
          st.w[k] = dt * buoyancy[a](st.idx[k][0], st.idx[k][1], st.idx[k][2]) * s.direction[a] * st.w[k] / cell_volume;
        term.stencil[a] = st;
      }
    }
    sources.push_back(term);
  }
  std::vector<RefStencil> receivers;
  for (const auto& r : problem.receivers)
    receivers.push_back(r.component == 0 ? node_stencil(pb, r.position, "receiver")
                                         : shifted_stencil(pb, r.position, r.component - 1, R, "receiver"));
  std::vector<double> velocity_before(receivers.size(), 0.0);  // raw v^{n-1/2} samples (v^{-1/2} = 0)

  ElasticReferenceResult res;
  res.traces = Eigen::MatrixXd::Zero(Eigen::Index(receivers.size()), pb.nt);

  for (int step = 0; step < pb.nt; ++step) {
    // Pressure receivers: p^n = -(s_zz^n + s_yy^n + s_xx^n) / 3, before step n.
    for (std::size_t r = 0; r < receivers.size(); ++r) {
      if (problem.receivers[r].component != 0) continue;
      const RefStencil& st = receivers[r];
      double acc = 0;
      for (std::size_t k = 0; k < st.w.size(); ++k) {
        const auto& i = st.idx[k];
        acc += st.w[k] *
               (-(field[kSzz](i[0], i[1], i[2]) + field[kSyy](i[0], i[1], i[2]) + field[kSxx](i[0], i[1], i[2])) / 3);
      }
      res.traces(Eigen::Index(r), step) = acc;
    }

    // 1. v_c^{n+1/2} = v_c^{n-1/2} + dt b_c sum_a (D_a s_ca + psi), D = D+ along c (s_cc on nodes), D- along the
    //    other axes (s_ca half along a); the inactive y axis contributes nothing.
    for (int c = 0; c < 3; ++c) {
      const int f = kVz + c;
      for_each_point(range[f], parallel, [&](int iz, int iy, int ix) {
        double sum = 0;
        for (int a = 0; a < 3; ++a)
          if (active[a]) sum += derivative(f, f, stress_id(c, a), a, iz, iy, ix);
        field[f](iz, iy, ix) += dt * buoyancy[c](iz, iy, ix) * sum;
      });
    }
    // Force sources: v_a^{n+1/2} += dt b_a(p) d_a s(t_n) w_p / V at the shifted stencil's half nodes.
    for (const auto& term : sources) {
      if (!term.source->force) continue;
      const double s = term.source->wavelet[std::size_t(step)];
      for (int a = 0; a < 3; ++a)
        for (std::size_t k = 0; k < term.stencil[a].w.size(); ++k) {
          const auto& i = term.stencil[a].idx[k];
          field[kVz + a](i[0], i[1], i[2]) += term.stencil[a].w[k] * s;
        }
    }
    // Velocity receivers: sample n = (v^{n-1/2} + v^{n+1/2}) / 2 on the shifted stencil.
    for (std::size_t r = 0; r < receivers.size(); ++r) {
      const int component = problem.receivers[r].component;
      if (component == 0) continue;
      const double now = sample(receivers[r], field[kVz + component - 1]);
      res.traces(Eigen::Index(r), step) = (velocity_before[r] + now) / 2;
      velocity_before[r] = now;
    }

    // 2. On the nodes: e_a = D-_a v_a (+ psi), s_aa^{n+1} = s_aa^n + dt (lambda (e_z + e_y + e_x) + 2 mu e_a).
    for_each_point(range[kSzz], parallel, [&](int iz, int iy, int ix) {
      std::array<double, 3> e{0, 0, 0};
      for (int a = 0; a < 3; ++a)
        if (active[a]) e[a] = derivative(kSzz, kSzz, kVz + a, a, iz, iy, ix);
      const double trace = e[0] + e[1] + e[2];
      for (int a = 0; a < 3; ++a) field[a](iz, iy, ix) += dt * (lambda(iz, iy, ix) * trace + 2 * mu(iz, iy, ix) * e[a]);
    });
    //    On the edge points half along a and b (a < b): s_ab^{n+1} = s_ab^n + dt mu_ab (D+_b v_a + D+_a v_b) (+ psi).
    for (int f = kSzy; f <= kSyx; ++f) {
      const int a = f == kSyx ? 1 : 0, b = f == kSzy ? 1 : 2;
      for_each_point(range[f], parallel, [&](int iz, int iy, int ix) {
        double sum = 0;
        if (active[b]) sum += derivative(f, f, kVz + a, b, iz, iy, ix);
        if (active[a]) sum += derivative(f, f, kVz + b, a, iz, iy, ix);
        field[f](iz, iy, ix) += dt * mu_edge[f](iz, iy, ix) * sum;
      });
    }
    // Pressure sources: s_aa^{n+1} -= dt^2 vp_p^2 (rho_p / rho_s) F^n w_p / V, F^n = sum_{m <= n} s(t_m).
    for (auto& term : sources) {
      if (term.source->force) continue;
      term.running_sum += term.source->wavelet[std::size_t(step)];
      const RefStencil& st = term.stencil[0];
      for (std::size_t k = 0; k < st.w.size(); ++k) {
        const auto& i = st.idx[k];
        for (int a = 0; a < 3; ++a) field[a](i[0], i[1], i[2]) -= st.w[k] * term.running_sum;
      }
    }
  }

  for (int f = 0; f < 9; ++f) {
    auto& out = res.final_fields[std::size_t(f)];
    out.resize(std::size_t(n[0]) * n[1] * n[2]);
    for (int iz = 0; iz < n[0]; ++iz)
      for (int iy = 0; iy < n[1]; ++iy)
        for (int ix = 0; ix < n[2]; ++ix) out[(std::size_t(iz) * n[1] + iy) * n[2] + ix] = field[f](iz, iy, ix);
  }
  return res;
}

}  // namespace specwave::validation
