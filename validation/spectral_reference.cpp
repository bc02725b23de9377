// Independent fp64 reference of the pseudo-spectral k-space scheme of docs/numerics.md
// (section "Pseudo-spectral k-space propagator"). Written from the specification only, with
// plain loops and Eigen's 1-D FFT (kissfft backend); no engine code. Clarity over speed.
#include "validation/spectral_reference.hpp"

#include <unsupported/Eigen/FFT>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstddef>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

namespace specwave::validation {

namespace {

using cd = std::complex<double>;
constexpr double kPi = std::numbers::pi;

// Flat C-order index of (iz, iy, ix) in an (nz, ny, nx) array.
std::size_t flat(const std::array<int, 3>& n, int iz, int iy, int ix) {
  return (std::size_t(iz) * n[1] + iy) * n[2] + ix;
}

// In-place unnormalised 1-D DFT of every line of `data` along `axis`:
//   forward: X_m = sum_j x_j exp(-2 pi i j m / n),  inverse: x_j = sum_m X_m exp(+2 pi i j m / n).
// The lines are independent, so threading over them gives the same result as a serial loop.
void transform_axis(std::vector<cd>& data, const std::array<int, 3>& n, int axis, bool inverse) {
  const int len = n[axis];
  if (len == 1) return;  // the DFT of length 1 is the identity
  const std::array<long, 3> stride{long(n[1]) * n[2], long(n[2]), 1};
  // The two other axes enumerate the lines.
  const int o1 = axis == 0 ? 1 : 0;
  const int o2 = axis == 2 ? 1 : 2;
  const long n_lines = long(n[o1]) * n[o2];
#pragma omp parallel
  {
    Eigen::FFT<double> fft;  // one per thread: its plan cache is not thread-safe
    fft.SetFlag(Eigen::FFT<double>::Unscaled);
    std::vector<cd> in(len), out(len);
#pragma omp for schedule(static)
    for (long line = 0; line < n_lines; ++line) {
      const long i1 = line / n[o2], i2 = line % n[o2];
      const long base = i1 * stride[o1] + i2 * stride[o2];
      for (int j = 0; j < len; ++j) in[j] = data[std::size_t(base + j * stride[axis])];
      if (inverse)
        fft.inv(out.data(), in.data(), len);
      else
        fft.fwd(out.data(), in.data(), len);
      for (int j = 0; j < len; ++j) data[std::size_t(base + j * stride[axis])] = out[j];
    }
  }
}

// Full 3-D DFT as 1-D DFTs along z, y and x (unnormalised in both directions).
void transform_3d(std::vector<cd>& data, const std::array<int, 3>& n, bool inverse) {
  for (int a = 0; a < 3; ++a) transform_axis(data, n, a, inverse);
}

// k_a(m) = 2 pi m' / (n_a h_a),  m' = m for m <= n_a/2, m - n_a otherwise.
std::vector<double> wavenumbers(int n, double h) {
  std::vector<double> k(n);
  for (int m = 0; m < n; ++m) {
    const int mp = (m <= n / 2) ? m : m - n;
    k[m] = 2 * kPi * mp / (n * h);
  }
  return k;
}

// Damping profile of one axis: d(i) = d0 xi(i)^p, d0 = -(p + 1) v_max ln(R0) / (2 L), L = W h,
// xi = (W - i)/W (i < W), (i - (n-1-W))/W (i > n-1-W), 0 otherwise. Both faces absorb.
std::vector<double> damping_profile(int n, double h, int W, double v_max, double p, double R0) {
  std::vector<double> d(n, 0.0);
  if (W <= 0) return d;
  const double L = W * h;
  const double d0 = -(p + 1) * v_max * std::log(R0) / (2 * L);
  for (int i = 0; i < n; ++i) {
    double xi = 0;
    if (i < W) xi = double(W - i) / W;
    if (i > n - 1 - W) xi = double(i - (n - 1 - W)) / W;
    d[i] = xi > 0 ? d0 * std::pow(xi, p) : 0.0;
  }
  return d;
}

// The Hicks stencil of one point with flat (nz, ny, nx) indices.
struct Stencil {
  std::vector<std::size_t> idx;
  std::vector<double> w;
};

Stencil make_stencil(const ReferenceProblem& pb, const RefPoint& pt, const char* what) {
  const RefStencil s = reference_point_stencil(pb, pt, what);
  Stencil st;
  st.w = s.w;
  for (const auto& i : s.idx) st.idx.push_back(flat(pb.shape, i[0], i[1], i[2]));
  return st;
}

void validate(const ReferenceProblem& pb) {
  if (pb.free_surface)
    throw std::invalid_argument("spectral reference: the spectral method has no free surface option");
  check_reference_problem(pb, "spectral reference");
}

}  // namespace

ReferenceResult run_spectral_reference(const ReferenceProblem& pb) {
  validate(pb);
  const std::array<int, 3> n = pb.shape;
  const auto& h = pb.spacing;
  const double dt = pb.dt;
  const std::size_t N = std::size_t(n[0]) * n[1] * n[2];

  // c_ref = v_max, the largest velocity of the model.
  const double c_ref = *std::max_element(pb.velocity.begin(), pb.velocity.end());

  // k-space symbol: -|k|^2 sinc^2(c_ref |k| dt / 2), sinc(x) = sin(x)/x, sinc(0) = 1.
  std::array<std::vector<double>, 3> k;
  for (int a = 0; a < 3; ++a) k[a] = wavenumbers(n[a], h[a]);
  std::vector<double> symbol(N), source_symbol(N);
  for (int mz = 0; mz < n[0]; ++mz)
    for (int my = 0; my < n[1]; ++my)
      for (int mx = 0; mx < n[2]; ++mx) {
        const double k2 = k[0][mz] * k[0][mz] + k[1][my] * k[1][my] + k[2][mx] * k[2][mx];
        const double x = c_ref * std::sqrt(k2) * dt / 2;
        const double sinc = x == 0 ? 1.0 : std::sin(x) / x;
        symbol[flat(n, mz, my, mx)] = -k2 * sinc * sinc;
        source_symbol[flat(n, mz, my, mx)] = sinc * sinc;
      }

  // Damping: eta = d_z(iz) + d_y(iy) + d_x(ix); all six faces absorb.
  std::array<std::vector<double>, 3> d;
  for (int a = 0; a < 3; ++a)
    d[a] = damping_profile(n[a], h[a], pb.pml_width, c_ref, pb.pml_power, pb.pml_reflection);
  std::vector<double> eta(N), dt2v2(N);
  for (int iz = 0; iz < n[0]; ++iz)
    for (int iy = 0; iy < n[1]; ++iy)
      for (int ix = 0; ix < n[2]; ++ix) {
        const std::size_t i = flat(n, iz, iy, ix);
        eta[i] = d[0][iz] + d[1][iy] + d[2][ix];
        dt2v2[i] = dt * dt * pb.velocity[i] * pb.velocity[i];
      }

  std::vector<Stencil> src, rec;
  for (const auto& s : pb.sources) src.push_back(make_stencil(pb, s, "source"));
  for (const auto& r : pb.receivers) rec.push_back(make_stencil(pb, r, "receiver"));

  std::vector<double> u_prev(N, 0.0), u_cur(N, 0.0), u_next(N, 0.0), f(N, 0.0);
  std::vector<cd> spec(N);
  const double inv_cell = 1.0 / (h[0] * h[1] * h[2]);
  const double inv_N = 1.0 / double(N);

  ReferenceResult res;
  res.traces = Eigen::MatrixXd::Zero(Eigen::Index(rec.size()), pb.nt);
  res.energy.assign(std::size_t(pb.nt) + 1, 0.0);

  for (int step = 0; step < pb.nt; ++step) {
    // Receivers: r(t_n) = sum_p w_p u^n_p, recorded before step n.
    for (std::size_t r = 0; r < rec.size(); ++r) {
      double acc = 0;
      for (std::size_t p = 0; p < rec[r].w.size(); ++p) acc += rec[r].w[p] * u_cur[rec[r].idx[p]];
      res.traces(Eigen::Index(r), step) = acc;
    }

    // f^n = sum_j s_j(t_n) sum_p w_p delta_p / (dz dy dx)
    std::fill(f.begin(), f.end(), 0.0);
    for (std::size_t j = 0; j < src.size(); ++j) {
      const double s = pb.source_wavelets[j][step];
      for (std::size_t p = 0; p < src[j].w.size(); ++p) f[src[j].idx[p]] += s * src[j].w[p] * inv_cell;
    }

    // K f^n = IFFT( sinc^2(c_ref |k| dt / 2) FFT(f^n) ): the k-space source correction.
    for (std::size_t i = 0; i < N; ++i) spec[i] = cd(f[i], 0.0);
    transform_3d(spec, n, /*inverse=*/false);
    for (std::size_t i = 0; i < N; ++i) spec[i] *= source_symbol[i];
    transform_3d(spec, n, /*inverse=*/true);
    for (std::size_t i = 0; i < N; ++i) f[i] = spec[i].real() * inv_N;

    // Lk u^n = IFFT( symbol * FFT(u^n) ), inverse normalised by 1/(nz ny nx); real part kept.
    for (std::size_t i = 0; i < N; ++i) spec[i] = cd(u_cur[i], 0.0);
    transform_3d(spec, n, /*inverse=*/false);
    for (std::size_t i = 0; i < N; ++i) spec[i] *= symbol[i];
    transform_3d(spec, n, /*inverse=*/true);

    // (1 + eta dt) u^{n+1} = 2 u^n - (1 - eta dt) u^{n-1} + dt^2 v^2 ( Lk u^n + K f^n )
    for (std::size_t i = 0; i < N; ++i) {
      const double lk = spec[i].real() * inv_N;
      const double ed = eta[i] * dt;
      u_next[i] = (2 * u_cur[i] - (1 - ed) * u_prev[i] + dt2v2[i] * (lk + f[i])) / (1 + ed);
    }

    // energy[n+1] = sum (u^{n+1})^2  (serial sum: deterministic)
    double e = 0;
    for (std::size_t i = 0; i < N; ++i) e += u_next[i] * u_next[i];
    res.energy[std::size_t(step) + 1] = e;

    std::swap(u_prev, u_cur);
    std::swap(u_cur, u_next);
  }

  res.final_field = u_cur;
  return res;
}

}  // namespace specwave::validation
