// Independent fp64 reference implementation of docs/numerics.md (plain loops, no engine code).
#include "validation/reference.hpp"

#include <unsupported/Eigen/CXX11/Tensor>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace specwave::validation {

namespace {

using Field = Eigen::Tensor<double, 3, Eigen::RowMajor>;
constexpr double kPi = std::numbers::pi;

int half_order(int order) {
  if (order < 2 || order > 16 || order % 2 != 0)
    throw std::invalid_argument("reference: order must be even, 2..16, got " + std::to_string(order));
  return order / 2;
}

// n! in double (exact for n <= 22, we need n <= 16).
double factorial(int n) {
  double f = 1;
  for (int i = 2; i <= n; ++i) f *= i;
  return f;
}

// A field stored with a halo of R points on every side; grid point (iz, iy, ix) lives at
// (iz + R, iy + R, ix + R). The halo holds the values "outside the grid": zero (Dirichlet),
// or, for the top z halo with a free surface, the odd mirror refreshed by mirror_top().
struct Padded {
  std::array<int, 3> n;  // nz, ny, nx (interior)
  int R;
  Field data;
  std::array<long, 3> stride;  // padded strides along z, y, x

  Padded(std::array<int, 3> n_, int R_) : n(n_), R(R_), data(n_[0] + 2 * R_, n_[1] + 2 * R_, n_[2] + 2 * R_) {
    data.setZero();
    stride = {long(n[1] + 2 * R) * (n[2] + 2 * R), long(n[2] + 2 * R), 1};
  }
  long index(int iz, int iy, int ix) const {
    return (iz + R) * stride[0] + (iy + R) * stride[1] + (ix + R) * stride[2];
  }
  double& operator()(int iz, int iy, int ix) { return data.data()[index(iz, iy, ix)]; }
  double operator()(int iz, int iy, int ix) const { return data.data()[index(iz, iy, ix)]; }

  // u[-k] = -u[k], k = 1..R (free surface odd mirror above iz = 0).
  void mirror_top() {
    for (int k = 1; k <= R; ++k)
      for (int iy = 0; iy < n[1]; ++iy)
        for (int ix = 0; ix < n[2]; ++ix) (*this)(-k, iy, ix) = -(*this)(k, iy, ix);
  }
};

// D2_a u at padded index i:  (1/h^2) [ c_0 u_i + sum_{k=1..R} c_k (u_{i+k} + u_{i-k}) ]  along axis a.
double d2_at(const Padded& u, long i, int axis, double h, const std::vector<double>& c) {
  const long s = u.stride[axis];
  const double* p = u.data.data();
  double acc = c[0] * p[i];
  for (int k = 1; k <= u.R; ++k) acc += c[k] * (p[i + k * s] + p[i - k * s]);
  return acc / (h * h);
}

// D1_a u at padded index i:  (1/h) sum_{k=1..R} d_k (u_{i+k} - u_{i-k})  along axis a.
double d1_at(const Padded& u, long i, int axis, double h, const std::vector<double>& d) {
  const long s = u.stride[axis];
  const double* p = u.data.data();
  double acc = 0;
  for (int k = 1; k <= u.R; ++k) acc += d[k] * (p[i + k * s] - p[i - k * s]);
  return acc / h;
}

// CPML coefficients along one axis (depend on that axis' index only).
struct PmlAxis {
  std::vector<double> a, b;
};

PmlAxis make_pml_axis(int n, double h, int W, bool low_face, bool high_face, double v_max, double dt, double p,
                      double R0, double f_peak) {
  PmlAxis pml{std::vector<double>(n, 0.0), std::vector<double>(n, 0.0)};
  // d0 = -(p + 1) v_max ln(R0) / (2 L),  L = W h;  alpha_max = pi f_peak
  const double L = W * h;
  const double d0 = W > 0 ? -(p + 1) * v_max * std::log(R0) / (2 * L) : 0.0;
  const double alpha_max = kPi * f_peak;
  for (int i = 0; i < n; ++i) {
    // xi = (W - i)/W (low face, i < W), (i - (n-1-W))/W (high face, i > n-1-W), 0 otherwise
    double xi = 0;
    if (W > 0 && low_face && i < W) xi = double(W - i) / W;
    if (W > 0 && high_face && i > n - 1 - W) xi = double(i - (n - 1 - W)) / W;
    // d = d0 xi^p, alpha = alpha_max (1 - xi), b = exp(-(d + alpha) dt), a = d/(d + alpha) (b - 1)
    const double d = xi > 0 ? d0 * std::pow(xi, p) : 0.0;
    const double alpha = alpha_max * (1 - xi);
    pml.b[i] = std::exp(-(d + alpha) * dt);
    pml.a[i] = d > 0 ? d / (d + alpha) * (pml.b[i] - 1) : 0.0;
  }
  return pml;
}

// With a free surface, a weight on iz < 0 is added with a minus sign to index -iz.
RefWeights1D fold_free_surface(const RefWeights1D& in) {
  RefWeights1D out;
  for (std::size_t k = 0; k < in.index.size(); ++k) {
    const int i = in.index[k] < 0 ? -in.index[k] : in.index[k];
    const double w = in.index[k] < 0 ? -in.weight[k] : in.weight[k];
    const auto it = std::find(out.index.begin(), out.index.end(), i);
    if (it == out.index.end()) {
      out.index.push_back(i);
      out.weight.push_back(w);
    } else {
      out.weight[it - out.index.begin()] += w;
    }
  }
  return out;
}

RefStencil make_point_stencil(const ReferenceProblem& pb, const RefPoint& pt, const char* what) {
  const std::array<double, 3> pos{pt.z, pt.y, pt.x};
  std::array<RefWeights1D, 3> w1;
  for (int a = 0; a < 3; ++a) {
    // q = (p - origin_a) / h_a
    const double q = (pos[a] - pb.origin[a]) / pb.spacing[a];
    const int n = pb.shape[a];
    const double tol = 1e-9 * std::max(1.0, std::abs(q));
    if (!(q >= -tol && q <= (n - 1) + tol))
      throw std::invalid_argument(std::string("reference: ") + what + " outside the grid");
    w1[a] = reference_interpolation_weights(q, pb.interpolation_radius);
    if (a == 0 && pb.free_surface) w1[a] = fold_free_surface(w1[a]);
    for (int i : w1[a].index)
      if (i < 0 || i >= n)
        throw std::invalid_argument(std::string("reference: interpolation stencil of ") + what + " leaves the grid");
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

void check_problem_impl(const ReferenceProblem& pb, const std::string& who) {
  for (int a = 0; a < 3; ++a) {
    if (pb.shape[a] < 1) throw std::invalid_argument(who + ": shape must be positive");
    if (!(pb.spacing[a] > 0)) throw std::invalid_argument(who + ": spacing must be positive");
  }
  const std::size_t npts = std::size_t(pb.shape[0]) * pb.shape[1] * pb.shape[2];
  if (pb.velocity.size() != npts) throw std::invalid_argument(who + ": velocity size != nz*ny*nx");
  for (double v : pb.velocity)
    if (!(v > 0)) throw std::invalid_argument(who + ": velocity must be positive");
  if (!(pb.dt > 0)) throw std::invalid_argument(who + ": dt must be positive");
  if (pb.nt < 0) throw std::invalid_argument(who + ": nt must be >= 0");
  if (pb.source_wavelets.size() != pb.sources.size())
    throw std::invalid_argument(who + ": one wavelet per source required");
  for (const auto& s : pb.source_wavelets)
    if (s.size() < std::size_t(pb.nt)) throw std::invalid_argument(who + ": wavelet shorter than nt");
  if (pb.pml_width < 0) throw std::invalid_argument(who + ": pml_width must be >= 0");
  if (pb.pml_width > 0) {
    if (!(pb.pml_reflection > 0 && pb.pml_reflection < 1))
      throw std::invalid_argument(who + ": pml_reflection must be in (0, 1)");
    for (int a = 0; a < 3; ++a) {
      const bool both_faces = !(a == 0 && pb.free_surface);
      if ((both_faces ? 2 : 1) * pb.pml_width > pb.shape[a]) throw std::invalid_argument(who + ": PML layers overlap");
    }
  }
}

void validate(const ReferenceProblem& pb) { check_problem_impl(pb, "reference"); }

}  // namespace

std::vector<double> reference_d2_coefficients(int order) {
  const int R = half_order(order);
  std::vector<double> c(R + 1, 0.0);
  // c_k = 2 (-1)^{k+1} (R!)^2 / ( k^2 (R-k)! (R+k)! ),  c_0 = -2 sum_{k>=1} c_k
  const double rf2 = factorial(R) * factorial(R);
  for (int k = 1; k <= R; ++k) {
    const double sign = (k % 2 == 1) ? 1.0 : -1.0;
    c[k] = 2 * sign * rf2 / (double(k) * k * factorial(R - k) * factorial(R + k));
    c[0] -= 2 * c[k];
  }
  return c;
}

std::vector<double> reference_d1_coefficients(int order) {
  const int R = half_order(order);
  std::vector<double> d(R + 1, 0.0);
  // d_k = (-1)^{k+1} (R!)^2 / ( k (R-k)! (R+k)! ),  d_0 = 0
  const double rf2 = factorial(R) * factorial(R);
  for (int k = 1; k <= R; ++k) {
    const double sign = (k % 2 == 1) ? 1.0 : -1.0;
    d[k] = sign * rf2 / (double(k) * factorial(R - k) * factorial(R + k));
  }
  return d;
}

RefWeights1D reference_interpolation_weights(double q, int radius) {
  if (radius < 1 || radius > 6) throw std::invalid_argument("reference: interpolation radius must be 1..6");
  RefWeights1D out;
  // on the grid: |q - round(q)| < 1e-9 max(1,|q|) -> the single index round(q)
  if (std::abs(q - std::round(q)) < 1e-9 * std::max(1.0, std::abs(q))) {
    out.index = {static_cast<int>(std::round(q))};
    out.weight = {1.0};
    return out;
  }
  // w_i, i = i0 - r + 1 .. i0 + r, x_i = i - q: minimise J(w) = int_0^{pi/2} |H(k) - 1|^2 dk with
  // H(k) = sum_i w_i exp(i k x_i), subject to sum_i w_i = 1. J by composite Simpson on 4000 intervals (the
  // integrand is smooth; error ~1e-13); the constraint by the null space: w = 1/n + N z with N an orthonormal
  // basis of {v : sum v = 0} (Householder QR of the ones vector); z by least squares (column-pivoted QR) on the
  // rows sqrt(c_j) (Re H(k_j) - 1, Im H(k_j)).
  const int i0 = static_cast<int>(std::floor(q)), n = 2 * radius, intervals = 4000;
  const double band = kPi / 2, dk = band / intervals;
  Eigen::VectorXd x(n);
  for (int i = 0; i < n; ++i) x(i) = (i0 - radius + 1 + i) - q;
  Eigen::MatrixXd A(2 * (intervals + 1), n);
  Eigen::VectorXd t(2 * (intervals + 1));
  for (int j = 0; j <= intervals; ++j) {
    const double c = (j == 0 || j == intervals ? 1.0 : (j % 2 ? 4.0 : 2.0)) * dk / 3;
    const double k = j * dk, s = std::sqrt(c);
    for (int i = 0; i < n; ++i) {
      A(2 * j, i) = s * std::cos(k * x(i));
      A(2 * j + 1, i) = s * std::sin(k * x(i));
    }
    t(2 * j) = s;
    t(2 * j + 1) = 0;
  }
  const Eigen::VectorXd w0 = Eigen::VectorXd::Constant(n, 1.0 / n);
  const Eigen::MatrixXd Q = Eigen::HouseholderQR<Eigen::MatrixXd>(Eigen::MatrixXd::Ones(n, 1)).householderQ();
  const Eigen::MatrixXd N = Q.rightCols(n - 1);
  const Eigen::VectorXd z = (A * N).colPivHouseholderQr().solve(t - A * w0);
  const Eigen::VectorXd w = w0 + N * z;
  for (int i = 0; i < n; ++i) {
    out.index.push_back(i0 - radius + 1 + i);
    out.weight.push_back(w(i));
  }
  return out;
}

double reference_ricker(double t, double f_peak, double t0) {
  // s(t) = (1 - 2 pi^2 f^2 (t - t0)^2) exp(-pi^2 f^2 (t - t0)^2)
  const double a = kPi * kPi * f_peak * f_peak * (t - t0) * (t - t0);
  return (1 - 2 * a) * std::exp(-a);
}

double relative_l2(const double* a, const double* b, std::size_t n) {
  // ||a - b||_2 / ||b||_2
  double num = 0, den = 0;
  for (std::size_t i = 0; i < n; ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  if (den == 0) return num == 0 ? 0.0 : INFINITY;
  return std::sqrt(num / den);
}

ReferenceResult run_reference(const ReferenceProblem& pb) {
  validate(pb);
  const int R = half_order(pb.order);
  const std::array<int, 3> n = pb.shape;
  const auto& h = pb.spacing;
  const double dt = pb.dt;
  const bool pml_on = pb.pml_width > 0;

  const std::vector<double> c = reference_d2_coefficients(pb.order);
  const std::vector<double> d = reference_d1_coefficients(pb.order);

  // dt^2 v^2 per point: the factor of step 3.
  Field dt2v2(n[0], n[1], n[2]);
  for (int iz = 0; iz < n[0]; ++iz)
    for (int iy = 0; iy < n[1]; ++iy)
      for (int ix = 0; ix < n[2]; ++ix) {
        const double v = pb.velocity[(std::size_t(iz) * n[1] + iy) * n[2] + ix];
        dt2v2(iz, iy, ix) = dt * dt * v * v;
      }

  // CPML coefficients per axis; v_max = max of the velocity array.
  const double v_max = *std::max_element(pb.velocity.begin(), pb.velocity.end());
  std::array<PmlAxis, 3> pml;
  for (int a = 0; a < 3; ++a) {
    const bool low = !(a == 0 && pb.free_surface);
    pml[a] = make_pml_axis(n[a], h[a], pb.pml_width, low, true, v_max, dt, pb.pml_power, pb.pml_reflection,
                           pb.pml_frequency);
  }

  std::vector<RefStencil> src, rec;
  for (const auto& s : pb.sources) src.push_back(make_point_stencil(pb, s, "source"));
  for (const auto& r : pb.receivers) rec.push_back(make_point_stencil(pb, r, "receiver"));

  // u^{n-1}, u^n, u^{n+1} with halos; psi_a (halo 0: "psi outside the layer is 0"); zeta_a.
  Padded u_prev(n, R), u_cur(n, R), u_next(n, R);
  std::array<Padded, 3> psi{Padded(n, R), Padded(n, R), Padded(n, R)};
  std::array<Field, 3> zeta;
  for (auto& z : zeta) {
    z = Field(n[0], n[1], n[2]);
    z.setZero();
  }
  Field f(n[0], n[1], n[2]);
  const double inv_cell = 1.0 / (h[0] * h[1] * h[2]);

  ReferenceResult res;
  res.traces = Eigen::MatrixXd::Zero(Eigen::Index(rec.size()), pb.nt);
  res.energy.assign(std::size_t(pb.nt) + 1, 0.0);

  for (int step = 0; step < pb.nt; ++step) {
    // Receivers: r(t_n) = sum_p w_p u^n_p, recorded before step n.
    for (std::size_t r = 0; r < rec.size(); ++r) {
      double acc = 0;
      for (std::size_t k = 0; k < rec[r].w.size(); ++k) {
        const auto& i = rec[r].idx[k];
        acc += rec[r].w[k] * u_cur(i[0], i[1], i[2]);
      }
      res.traces(Eigen::Index(r), step) = acc;
    }

    // Free surface: u[-k] = -u[k] above iz = 0.
    if (pb.free_surface) u_cur.mirror_top();

    // f^n = sum_j s_j(t_n) sum_p w_p delta_p / (dz dy dx)
    f.setZero();
    for (std::size_t j = 0; j < src.size(); ++j) {
      const double s = pb.source_wavelets[j][step];
      for (std::size_t k = 0; k < src[j].w.size(); ++k) {
        const auto& i = src[j].idx[k];
        f(i[0], i[1], i[2]) += s * src[j].w[k] * inv_cell;
      }
    }

    // 1. psi_a^n = b_a psi_a^{n-1} + a_a D1_a u^n   on the PML points of axis a (xi_a > 0, i.e. a_a != 0);
    //    elsewhere psi_a stays 0.
    if (pml_on) {
#pragma omp parallel for schedule(static)
      for (int iz = 0; iz < n[0]; ++iz)
        for (int iy = 0; iy < n[1]; ++iy)
          for (int ix = 0; ix < n[2]; ++ix) {
            const long i = u_cur.index(iz, iy, ix);
            const std::array<int, 3> ia{iz, iy, ix};
            for (int a = 0; a < 3; ++a) {
              if (pml[a].a[ia[a]] == 0.0) continue;
              psi[a](iz, iy, ix) = pml[a].b[ia[a]] * psi[a](iz, iy, ix) + pml[a].a[ia[a]] * d1_at(u_cur, i, a, h[a], d);
            }
          }
    }

    // 2. P_a = D2_a u^n + D1_a psi_a^n,  zeta_a^n = b_a zeta_a^{n-1} + a_a P_a,
    //    Ltilde u^n = sum_a ( P_a + zeta_a^n )   (without PML: L_h u^n = sum_a D2_a u^n)
    // 3. u^{n+1} = 2 u^n - u^{n-1} + dt^2 v^2 ( Ltilde u^n + f^n )
#pragma omp parallel for schedule(static)
    for (int iz = 0; iz < n[0]; ++iz)
      for (int iy = 0; iy < n[1]; ++iy)
        for (int ix = 0; ix < n[2]; ++ix) {
          const long i = u_cur.index(iz, iy, ix);
          const std::array<int, 3> ia{iz, iy, ix};
          double lap = 0;
          for (int a = 0; a < 3; ++a) {
            if (!pml_on) {
              lap += d2_at(u_cur, i, a, h[a], c);
              continue;
            }
            // Outside the layer of axis a (a_a = 0) the correction is absent: Ltilde_a = D2_a u.
            if (pml[a].a[ia[a]] == 0.0) {
              lap += d2_at(u_cur, i, a, h[a], c);
              continue;
            }
            const double P = d2_at(u_cur, i, a, h[a], c) + d1_at(psi[a], i, a, h[a], d);
            double& z = zeta[a](iz, iy, ix);
            z = pml[a].b[ia[a]] * z + pml[a].a[ia[a]] * P;
            lap += P + z;
          }
          u_next(iz, iy, ix) = 2 * u_cur(iz, iy, ix) - u_prev(iz, iy, ix) + dt2v2(iz, iy, ix) * (lap + f(iz, iy, ix));
        }

    // Free surface: u^{n+1}[iz = 0] = 0
    if (pb.free_surface)
      for (int iy = 0; iy < n[1]; ++iy)
        for (int ix = 0; ix < n[2]; ++ix) u_next(0, iy, ix) = 0;

    // energy[n+1] = sum (u^{n+1})^2  (serial sum: deterministic)
    double e = 0;
    for (int iz = 0; iz < n[0]; ++iz)
      for (int iy = 0; iy < n[1]; ++iy)
        for (int ix = 0; ix < n[2]; ++ix) e += u_next(iz, iy, ix) * u_next(iz, iy, ix);
    res.energy[std::size_t(step) + 1] = e;

    // (u^{n-1}, u^n) <- (u^n, u^{n+1}); the old u^{n-1} buffer becomes scratch for the next u^{n+1}.
    std::swap(u_prev, u_cur);
    std::swap(u_cur, u_next);
  }

  res.final_field.resize(std::size_t(n[0]) * n[1] * n[2]);
  for (int iz = 0; iz < n[0]; ++iz)
    for (int iy = 0; iy < n[1]; ++iy)
      for (int ix = 0; ix < n[2]; ++ix) res.final_field[(std::size_t(iz) * n[1] + iy) * n[2] + ix] = u_cur(iz, iy, ix);
  return res;
}

void check_reference_problem(const ReferenceProblem& problem, const std::string& who) {
  check_problem_impl(problem, who);
}

RefStencil reference_point_stencil(const ReferenceProblem& problem, const RefPoint& point, const char* what) {
  return make_point_stencil(problem, point, what);
}

}  // namespace specwave::validation
