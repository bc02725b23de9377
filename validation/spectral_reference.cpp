// Independent fp64 reference of the pseudo-spectral k-space scheme of docs/numerics.md
// (section "Pseudo-spectral k-space propagator": the split-field PML and the damping layer). Written from the
// specification only, with plain loops and Eigen's 1-D FFT (kissfft backend); no engine code. Clarity over speed.
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

// The time-averaged source sample of docs/numerics.md: s~_n = s_n + (s_{n+1} - 2 s_n + s_{n-1}) / 12, with the
// wavelet taken as zero before its first and after its last sample.
double averaged_sample(const std::vector<double>& s, int n) {
  const auto at = [&](int m) { return m >= 0 && m < int(s.size()) ? s[std::size_t(m)] : 0.0; };
  return at(n) + (at(n + 1) - 2 * at(n) + at(n - 1)) / 12;
}

// Flat C-order index of (iz, iy, ix) in an (nz, ny, nx) array.
std::size_t flat(const std::array<int, 3>& n, int iz, int iy, int ix) {
  return (std::size_t(iz) * n[1] + iy) * n[2] + ix;
}

// In-place unnormalised 1-D DFT of every line of `data` along `axis`:
//   forward: X_m = sum_j x_j exp(-2 pi i j m / n),  inverse: x_j = sum_m X_m exp(+2 pi i j m / n).
// The lines are independent, so threading over them gives the same result as a serial loop. Small grids stay
// serial: a parallel region per axis costs more than it saves there, and much more on a loaded machine
// (a 32^3 split-field PML run took 3x longer with 2 threads than with 1 on the shared 2-core VM).
constexpr std::size_t kParallelMinPoints = std::size_t(1) << 16;

void transform_axis(std::vector<cd>& data, const std::array<int, 3>& n, int axis, bool inverse) {
  const int len = n[axis];
  if (len == 1) return;  // the DFT of length 1 is the identity
  const std::array<long, 3> stride{long(n[1]) * n[2], long(n[2]), 1};
  // The two other axes enumerate the lines.
  const int o1 = axis == 0 ? 1 : 0;
  const int o2 = axis == 2 ? 1 : 2;
  const long n_lines = long(n[o1]) * n[o2];
#pragma omp parallel if (data.size() >= kParallelMinPoints)
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

// sinc(c_ref |k| dt / 2) of every mode (flat C-order mode index), sinc(x) = sin(x)/x, sinc(0) = 1: kappa of the
// split-field PML; kappa^2 is the k-space factor of the Laplacian (sources and receivers carry K = kappa^2 in their
// weights, half each).
std::vector<double> kspace_sinc(const std::array<int, 3>& n, const std::array<std::vector<double>, 3>& k, double c_ref,
                                double dt) {
  std::vector<double> sinc(std::size_t(n[0]) * n[1] * n[2]);
  for (int mz = 0; mz < n[0]; ++mz)
    for (int my = 0; my < n[1]; ++my)
      for (int mx = 0; mx < n[2]; ++mx) {
        const double k2 = k[0][mz] * k[0][mz] + k[1][my] * k[1][my] + k[2][mx] * k[2][mx];
        const double x = c_ref * std::sqrt(k2) * dt / 2;
        sinc[flat(n, mz, my, mx)] = x == 0 ? 1.0 : std::sin(x) / x;
      }
  return sinc;
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

// The interpolation stencil of one point with flat (nz, ny, nx) indices.
struct Stencil {
  std::vector<std::size_t> idx;
  std::vector<double> w;
};

// The spectral method's stencil of a point: the product of reference_spectral_point_weights on each axis, with
// courant c_ref dt / h_a. Throws std::invalid_argument when the point or its stencil leaves the grid.
Stencil make_stencil(const ReferenceProblem& pb, const RefPoint& pt, const char* what) {
  const double c_ref = *std::max_element(pb.velocity.begin(), pb.velocity.end());
  const std::array<double, 3> pos{pt.z, pt.y, pt.x};
  std::array<RefWeights1D, 3> w;
  for (int a = 0; a < 3; ++a) {
    const double q = (pos[a] - pb.origin[a]) / pb.spacing[a];
    w[a] = reference_spectral_point_weights(q, c_ref * pb.dt / pb.spacing[a], pb.spectral_point_band[a],
                                            pb.spectral_point_radius);
    for (int i : w[a].index)
      if (i < 0 || i >= pb.shape[a])
        throw std::invalid_argument(std::string("spectral reference: the stencil of ") + what + " leaves the grid");
  }
  Stencil st;
  for (std::size_t kz = 0; kz < w[0].index.size(); ++kz)
    for (std::size_t ky = 0; ky < w[1].index.size(); ++ky)
      for (std::size_t kx = 0; kx < w[2].index.size(); ++kx) {
        st.idx.push_back(flat(pb.shape, w[0].index[kz], w[1].index[ky], w[2].index[kx]));
        st.w.push_back(w[0].weight[kz] * w[1].weight[ky] * w[2].weight[kx]);
      }
  return st;
}

// r = sum_p w_p g_p
double sample(const Stencil& st, const std::vector<double>& g) {
  double acc = 0;
  for (std::size_t p = 0; p < st.w.size(); ++p) acc += st.w[p] * g[st.idx[p]];
  return acc;
}

void validate(const ReferenceProblem& pb) {
  if (pb.free_surface)
    throw std::invalid_argument("spectral reference: the spectral method has no free surface option");
  if (pb.spectral_absorber != "pml" && pb.spectral_absorber != "damping")
    throw std::invalid_argument("spectral reference: spectral_absorber must be \"pml\" or \"damping\", not \"" +
                                pb.spectral_absorber + "\"");
  check_reference_problem(pb, "spectral reference");
}

// ---------------------------------------------------------------------------------------------------------------
// Damping layer (spectral_absorber = "damping"), second-order form:
//   (1 + eta dt) u^{n+1} = 2 u^n - (1 - eta dt) u^{n-1} + dt^2 v^2 ( Lk u^n + f^n ).
ReferenceResult run_damping(const ReferenceProblem& pb) {
  const std::array<int, 3> n = pb.shape;
  const auto& h = pb.spacing;
  const double dt = pb.dt;
  const std::size_t N = std::size_t(n[0]) * n[1] * n[2];

  // c_ref = v_max, the largest velocity of the model.
  const double c_ref = *std::max_element(pb.velocity.begin(), pb.velocity.end());

  // k-space symbol: -|k|^2 sinc^2(c_ref |k| dt / 2).
  std::array<std::vector<double>, 3> k;
  for (int a = 0; a < 3; ++a) k[a] = wavenumbers(n[a], h[a]);
  const std::vector<double> sinc = kspace_sinc(n, k, c_ref, dt);
  std::vector<double> symbol(N);
  for (int mz = 0; mz < n[0]; ++mz)
    for (int my = 0; my < n[1]; ++my)
      for (int mx = 0; mx < n[2]; ++mx) {
        const std::size_t i = flat(n, mz, my, mx);
        const double k2 = k[0][mz] * k[0][mz] + k[1][my] * k[1][my] + k[2][mx] * k[2][mx];
        symbol[i] = -k2 * sinc[i] * sinc[i];
      }

  // Damping: eta = d_z(iz) + d_y(iy) + d_x(ix); all six faces absorb.
  std::array<std::vector<double>, 3> d;
  for (int a = 0; a < 3; ++a) d[a] = damping_profile(n[a], h[a], pb.pml_width, c_ref, pb.pml_power, pb.pml_reflection);
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
    for (std::size_t r = 0; r < rec.size(); ++r) res.traces(Eigen::Index(r), step) = sample(rec[r], u_cur);

    // f^n = sum_j s~_j(t_n) sum_p w_p delta_p / (dz dy dx)  (s~: the time-averaged sample)
    std::fill(f.begin(), f.end(), 0.0);
    for (std::size_t j = 0; j < src.size(); ++j) {
      const double s = averaged_sample(pb.source_wavelets[j], step);
      for (std::size_t p = 0; p < src[j].w.size(); ++p) f[src[j].idx[p]] += s * src[j].w[p] * inv_cell;
    }

    // Lk u^n = IFFT( symbol * FFT(u^n) ), inverse normalised by 1/(nz ny nx); real part kept.
    for (std::size_t i = 0; i < N; ++i) spec[i] = cd(u_cur[i], 0.0);
    transform_3d(spec, n, /*inverse=*/false);
    for (std::size_t i = 0; i < N; ++i) spec[i] *= symbol[i];
    transform_3d(spec, n, /*inverse=*/true);

    // (1 + eta dt) u^{n+1} = 2 u^n - (1 - eta dt) u^{n-1} + dt^2 v^2 ( Lk u^n + f^n )
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

// ---------------------------------------------------------------------------------------------------------------
// Split-field PML (spectral_absorber = "pml"), first-order form on staggered grids.

// The PML factor b = exp(-d dt / 2) of one axis with n points at the positions s = i + shift, i = 0..n-1
// (shift 0: the grid points; shift 1/2: the staggered points of w_a). d(s) = d0 xi(s)^p,
// d0 = -(p + 1) v_max ln(R0) / (2 W h), xi = (W - s)/W for s < W, (s - (n-1-W))/W for s > n-1-W, 0 otherwise,
// clipped to [0, 1] (the staggered point n - 1/2, between the last point and the periodic image of the first,
// gets (W + 1/2)/W -> 1). Width 0: no layer, b = 1. No frequency shift (the alpha of the FDTD CPML).
std::vector<double> pml_factor(int n, double h, int W, double v_max, double p, double R0, double dt, double shift) {
  std::vector<double> b(n, 1.0);
  if (W <= 0) return b;
  const double d0 = -(p + 1) * v_max * std::log(R0) / (2 * W * h);
  for (int i = 0; i < n; ++i) {
    const double s = i + shift;
    double xi = 0;
    // Both faces apply only at s = W - 1/2 when 2W = n, and give the same 1/(2W) there.
    if (s < W) xi = (W - s) / W;                                  // low face
    if (s > n - 1 - W) xi = std::max(xi, (s - (n - 1 - W)) / W);  // high face
    xi = std::clamp(xi, 0.0, 1.0);
    const double d = xi > 0 ? d0 * std::pow(xi, p) : 0.0;
    b[std::size_t(i)] = std::exp(-d * dt / 2);
  }
  return b;
}

ReferenceResult run_pml(const ReferenceProblem& pb) {
  const std::array<int, 3> n = pb.shape;
  const auto& h = pb.spacing;
  const double dt = pb.dt;
  const std::size_t N = std::size_t(n[0]) * n[1] * n[2];
  const double inv_N = 1.0 / double(N);
  const double c_ref = *std::max_element(pb.velocity.begin(), pb.velocity.end());  // = v_max

  std::array<std::vector<double>, 3> k;
  for (int a = 0; a < 3; ++a) k[a] = wavenumbers(n[a], h[a]);
  const std::vector<double> kappa = kspace_sinc(n, k, c_ref, dt);  // sinc(c_ref |k| dt / 2)

  // The 1-D factors of the staggered derivatives along axis a: i k_a exp(+-i k_a h_a / 2); the full multiplier
  // of D_a^+- at mode (mz, my, mx) is kappa * this factor at m_a.
  //
  // Real fields and the full complex transforms. For a real field f, F = FFT(f) is Hermitian
  // (F(-m) = conj F(m), indices mod n). Split a multiplier M into its Hermitian part M_h(m) = (M(m) + conj M(-m))/2
  // and the rest M_a: IFFT(M_h F) is real and IFFT(M_a F) purely imaginary, so Re IFFT(M F) = IFFT(M_h F). Taking
  // the real part after the inverse transform is therefore the operator with the multiplier's Hermitian part,
  // which is also all that an r2c/c2r pair can represent (c2r reads the half spectrum and assumes Hermitian data).
  // Here M is Hermitian at every index: k_a(-m) = -k_a(m) for m != n_a/2 gives M(-m) = conj M(m), and at the
  // Nyquist index m = n_a/2 of an even axis (its own mirror, k_a = +pi/h_a) the factor is real:
  //   i k exp(+i k h/2) = i (pi/h) i = -pi/h,   i k exp(-i k h/2) = i (pi/h) (-i) = +pi/h
  // (the same with k = -pi/h, so the sign convention of the wavenumber does not matter there). So the Nyquist
  // mode survives (a centred i k would be purely imaginary there and be dropped), the full complex transform
  // with the real part kept gives the same operator as the engine's r2c/c2r, and D_a^- D_a^+ has the symbol
  // -k_a^2 kappa^2 at every index, Nyquist included: sum_a D_a^- D_a^+ = Lk. The imaginary parts dropped are
  // rounding noise (exp(i pi/2) is i only to ~6e-17, which the real part discards with the rest).
  std::array<std::vector<cd>, 3> e_plus, e_minus;
  for (int a = 0; a < 3; ++a) {
    e_plus[a].resize(std::size_t(n[a]));
    e_minus[a].resize(std::size_t(n[a]));
    for (int m = 0; m < n[a]; ++m) {
      const double ka = k[a][std::size_t(m)];
      e_plus[a][std::size_t(m)] = cd(0, ka) * std::exp(cd(0, +ka * h[a] / 2));
      e_minus[a][std::size_t(m)] = cd(0, ka) * std::exp(cd(0, -ka * h[a] / 2));
    }
  }

  // b_a at the grid points, bs_a at the staggered points (+h_a/2), per axis index.
  std::array<std::vector<double>, 3> b, bs;
  for (int a = 0; a < 3; ++a) {
    b[a] = pml_factor(n[a], h[a], pb.pml_width, c_ref, pb.pml_power, pb.pml_reflection, dt, 0.0);
    bs[a] = pml_factor(n[a], h[a], pb.pml_width, c_ref, pb.pml_power, pb.pml_reflection, dt, 0.5);
  }

  std::vector<double> dtv2(N), dt2v2_3(N);
  for (std::size_t i = 0; i < N; ++i) {
    const double v2 = pb.velocity[i] * pb.velocity[i];
    dtv2[i] = dt * v2;
    dt2v2_3[i] = dt * dt * v2 / 3;  // the source is split equally over the three components
  }

  std::vector<Stencil> src, rec;
  for (const auto& s : pb.sources) src.push_back(make_stencil(pb, s, "source"));
  for (const auto& r : pb.receivers) rec.push_back(make_stencil(pb, r, "receiver"));

  // F^n = sum_{m<=n} f^m with f^m = sum_j s~_j(t_m) g_j, g_j = sum_p w_p delta_p / (dz dy dx): by linearity
  // F^n = sum_j S_j^n g_j with the running sums S_j^n = sum_{m<=n} s~_j(t_m).
  const double inv_cell = 1.0 / (h[0] * h[1] * h[2]);
  std::vector<cd> spec(N), tmp(N);
  std::vector<std::vector<double>> g(src.size(), std::vector<double>(N, 0.0));
  for (std::size_t j = 0; j < src.size(); ++j)
    for (std::size_t p = 0; p < src[j].w.size(); ++p) g[j][src[j].idx[p]] += src[j].w[p] * inv_cell;
  std::vector<double> S(src.size(), 0.0);  // S_j^n
  std::vector<double> F(N, 0.0);

  // p_a^0 = 0, w_a^{-1/2} = 0; p = p_z + p_y + p_x.
  std::array<std::vector<double>, 3> pa, wa;
  for (int a = 0; a < 3; ++a) {
    pa[a].assign(N, 0.0);
    wa[a].assign(N, 0.0);
  }
  std::vector<double> p(N, 0.0);

  ReferenceResult res;
  res.traces = Eigen::MatrixXd::Zero(Eigen::Index(rec.size()), pb.nt);
  res.energy.assign(std::size_t(pb.nt) + 1, 0.0);

  for (int step = 0; step < pb.nt; ++step) {
    // Receivers: r(t_n) = sum_p w_p p^n_p, recorded before step n.
    for (std::size_t r = 0; r < rec.size(); ++r) res.traces(Eigen::Index(r), step) = sample(rec[r], p);

    // F^n = sum_j S_j^n g_j
    std::fill(F.begin(), F.end(), 0.0);
    for (std::size_t j = 0; j < src.size(); ++j) {
      S[j] += averaged_sample(pb.source_wavelets[j], step);
      for (std::size_t i = 0; i < N; ++i) F[i] += S[j] * g[j][i];
    }

    // w_a^{n+1/2} = bs_a ( bs_a w_a^{n-1/2} - dt D_a^+ p^n ),  D_a^+ p = Re IFFT( kappa e_a^+ FFT(p) ) / N
    for (std::size_t i = 0; i < N; ++i) spec[i] = cd(p[i], 0.0);
    transform_3d(spec, n, /*inverse=*/false);
    for (int a = 0; a < 3; ++a) {
      for (int mz = 0; mz < n[0]; ++mz)
        for (int my = 0; my < n[1]; ++my)
          for (int mx = 0; mx < n[2]; ++mx) {
            const std::array<int, 3> m{mz, my, mx};
            const std::size_t i = flat(n, mz, my, mx);
            tmp[i] = spec[i] * kappa[i] * e_plus[a][std::size_t(m[a])];
          }
      transform_3d(tmp, n, /*inverse=*/true);
      for (int iz = 0; iz < n[0]; ++iz)
        for (int iy = 0; iy < n[1]; ++iy)
          for (int ix = 0; ix < n[2]; ++ix) {
            const std::array<int, 3> ii{iz, iy, ix};
            const std::size_t i = flat(n, iz, iy, ix);
            const double s = bs[a][std::size_t(ii[a])];
            wa[a][i] = s * (s * wa[a][i] - dt * tmp[i].real() * inv_N);
          }
    }

    // p_a^{n+1} = b_a ( b_a p_a^n - dt v^2 D_a^- w_a^{n+1/2} ) + (1/3) dt^2 v^2 F^n,
    // D_a^- w = Re IFFT( kappa e_a^- FFT(w) ) / N
    for (int a = 0; a < 3; ++a) {
      for (std::size_t i = 0; i < N; ++i) tmp[i] = cd(wa[a][i], 0.0);
      transform_3d(tmp, n, /*inverse=*/false);
      for (int mz = 0; mz < n[0]; ++mz)
        for (int my = 0; my < n[1]; ++my)
          for (int mx = 0; mx < n[2]; ++mx) {
            const std::array<int, 3> m{mz, my, mx};
            const std::size_t i = flat(n, mz, my, mx);
            tmp[i] *= kappa[i] * e_minus[a][std::size_t(m[a])];
          }
      transform_3d(tmp, n, /*inverse=*/true);
      for (int iz = 0; iz < n[0]; ++iz)
        for (int iy = 0; iy < n[1]; ++iy)
          for (int ix = 0; ix < n[2]; ++ix) {
            const std::array<int, 3> ii{iz, iy, ix};
            const std::size_t i = flat(n, iz, iy, ix);
            const double s = b[a][std::size_t(ii[a])];
            pa[a][i] = s * (s * pa[a][i] - dtv2[i] * tmp[i].real() * inv_N) + dt2v2_3[i] * F[i];
          }
    }

    // p^{n+1} = p_z + p_y + p_x;  energy[n+1] = sum (p^{n+1})^2  (serial sum: deterministic)
    double e = 0;
    for (std::size_t i = 0; i < N; ++i) {
      p[i] = pa[0][i] + pa[1][i] + pa[2][i];
      e += p[i] * p[i];
    }
    res.energy[std::size_t(step) + 1] = e;
  }

  res.final_field = p;
  return res;
}

}  // namespace

RefWeights1D reference_spectral_point_weights(double q, double courant, double band_, int radius) {
  if (radius < 2 || radius > 8) throw std::invalid_argument("spectral reference: point radius must be 2..8");
  // Nodes j = round(q) - r .. round(q) + r, x_j = j - q. J(w) = int_0^band |H(k) - G(k)|^2 dk,
  // H(k) = sum_j w_j exp(i k x_j), G(k) = exp(-(courant k)^2 / 24), by composite Simpson on 16000 intervals (its
  // error, ~ h^4 x^4 / 180 with offsets x up to 8.5, stays below 1e-14).
  // Constraints C w = d: sum w = 1, sum (-1)^j w = 0. Solved by the null space: with
  // C^T = Q R (Householder), w = Q_1 R^{-T} d + Q_2 z, z by least squares (column-pivoted QR). In long double:
  // the problem's condition number is ~3e5.
  using R = long double;
  using Mat = Eigen::Matrix<R, Eigen::Dynamic, Eigen::Dynamic>;
  using Vec = Eigen::Matrix<R, Eigen::Dynamic, 1>;
  const int j0 = static_cast<int>(std::round(q)) - radius, n = 2 * radius + 1, intervals = 16000;
  const R band = band_, dk = band / intervals;
  Vec x(n);
  Mat C(2, n);
  for (int i = 0; i < n; ++i) {
    x(i) = R(j0 + i) - R(q);
    const R sign = ((j0 + i) % 2 + 2) % 2 == 0 ? 1 : -1;
    C(0, i) = 1;
    C(1, i) = sign;
  }
  Vec d = Vec::Zero(2);
  d(0) = 1;
  Mat A(2 * (intervals + 1), n);
  Vec t(2 * (intervals + 1));
  for (int j = 0; j <= intervals; ++j) {
    const R c = (j == 0 || j == intervals ? R(1) : (j % 2 ? R(4) : R(2))) * dk / 3;
    const R k = j * dk, s = std::sqrt(c), ck = R(courant) * k;
    for (int i = 0; i < n; ++i) {
      A(2 * j, i) = s * std::cos(k * x(i));
      A(2 * j + 1, i) = s * std::sin(k * x(i));
    }
    t(2 * j) = s * std::exp(-ck * ck / 24);
    t(2 * j + 1) = 0;
  }
  const Eigen::HouseholderQR<Mat> qr(C.transpose());
  const Mat Q = qr.householderQ();
  const Mat Rt = qr.matrixQR().topRows(2).template triangularView<Eigen::Upper>();
  const Vec wp = Q.leftCols(2) * Rt.transpose().template triangularView<Eigen::Lower>().solve(d);
  const Mat N = Q.rightCols(n - 2);
  const Vec z = (A * N).colPivHouseholderQr().solve(t - A * wp);
  const Vec w = wp + N * z;
  RefWeights1D out;
  for (int i = 0; i < n; ++i) {
    out.index.push_back(j0 + i);
    out.weight.push_back(double(w(i)));
  }
  return out;
}

ReferenceResult run_spectral_reference(const ReferenceProblem& pb) {
  validate(pb);
  return pb.spectral_absorber == "pml" ? run_pml(pb) : run_damping(pb);
}

}  // namespace specwave::validation
