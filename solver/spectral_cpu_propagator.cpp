// k-space pseudo-spectral propagator on the CPU (docs/numerics.md, "Pseudo-spectral k-space propagator"), with
// FFTW r2c/c2r transforms (threads, FFTW_MEASURE plans made once, wisdom cached). Two absorbing boundaries:
//  - the split-field PML in first-order form (default): ten transforms a step
//      w_a^{n+1/2} = bs_a (bs_a w_a^{n-1/2} - dt D_a^+ p^n)
//      p_a^{n+1}   = b_a (b_a p_a^n - dt v^2 D_a^- w_a^{n+1/2}) + dt^2 v^2 K F^n / 3,   p = sum_a p_a
//  - the damping layer in second-order form: two transforms a step
//      (1 + eta dt) u^{n+1} = 2u^n - (1 - eta dt) u^{n-1} + (v dt)^2 ( Lk u^n + K f^n )
// K = IFFT(sinc^2(c_ref |k| dt/2) FFT(.)) is the k-space source correction.
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>

#include "kernels/fft/fftw3d.hpp"
#include "kernels/spectral_point.hpp"
#include "solver/cpml.hpp"
#include "solver/host_field.hpp"
#include "solver/plan.hpp"
#include "solver/spectral_cpu_propagator.hpp"

namespace specwave {
namespace {

// Angular wavenumber of DFT index m on an axis of `count` points spaced h (docs/numerics.md).
double wavenumber(int m, int count, double h) { return 2 * M_PI * (m <= count / 2 ? m : m - count) / (count * h); }

// What both absorbers share: grid, transforms, receivers, the k-space source correction.
template <class T>
class SpectralCpuBase : public Propagator {
 public:
  SpectralCpuBase(const Case& c, const Plan& plan)
      : layout_{c.grid.shape[0], c.grid.shape[1], c.grid.shape[2], 0},
        nt_(plan.nt),
        half_x_(layout_.nx / 2 + 1),
        dt_(plan.dt),
        c_ref_(plan.model.v_max),
        work_(layout_.size()),
        spectrum_(std::size_t(layout_.nz) * layout_.ny * half_x_),
        fft_(layout_.nz, layout_.ny, layout_.nx, work_.data(), spectrum_.data(), plan.threads),
        spacing_(c.grid.spacing),
        cell_volume_(c.grid.spacing[0] * c.grid.spacing[1] * c.grid.spacing[2]),
        receivers_(make_point_lists<T>(layout_, plan.receivers, 1.0, nullptr)) {
    vel2_.resize(layout_.size());
    for (std::size_t i = 0; i < vel2_.size(); ++i) vel2_[i] = double(plan.model.velocity[i]) * plan.model.velocity[i];
    traces_.assign((receivers_.offsets.size() - 1) * std::size_t(nt_), 0.0);
  }

  std::span<const double> traces() override { return traces_; }
  FieldStats field_stats() override { return host::field_stats(layout_, field()); }
  void copy_field(std::span<float> out) override { host::copy_interior(layout_, field(), out); }
  void copy_field(std::span<double> out) override { host::copy_interior(layout_, field(), out); }
  std::size_t device_bytes() const override { return 0; }

 protected:
  virtual const T* field() const = 0;

  // |k|^2 at half-spectrum index (z, y, x).
  double k2_at(int z, int y, int x) const {
    const double kz = wavenumber(z, layout_.nz, spacing_[0]), ky = wavenumber(y, layout_.ny, spacing_[1]),
                 kx = wavenumber(x, layout_.nx, spacing_[2]);
    return kz * kz + ky * ky + kx * kx;
  }
  std::size_t spectral_index(int z, int y, int x) const { return (std::size_t(z) * layout_.ny + y) * half_x_ + x; }

  // Per source j: factor(i) * K p_j / (dz dy dx), K the k-space source correction of its interpolation pattern
  // p_j. Dense (sinc^2 is discontinuous at the edge of the wavenumber box): one grid-sized array per source.
  std::vector<fft::Buffer<T>> source_patterns(const std::vector<PointStencil>& sources, const std::vector<double>& factor) {
    const double norm = 1.0 / double(layout_.size());
    const auto raw = make_point_lists<T>(layout_, sources, 1.0 / cell_volume_, nullptr);
    std::vector<fft::Buffer<T>> patterns(sources.size());
    for (std::size_t j = 0; j < sources.size(); ++j) {
      std::fill(work_.begin(), work_.end(), T(0));
      for (std::int32_t p = raw.offsets[j]; p < raw.offsets[j + 1]; ++p) work_[raw.index[p]] += raw.factor[p];
      fft_.forward();
      for (int z = 0; z < layout_.nz; ++z)
        for (int y = 0; y < layout_.ny; ++y)
          for (int x = 0; x < half_x_; ++x)
            spectrum_[spectral_index(z, y, x)] *= T(kspace_source_symbol(k2_at(z, y, x), c_ref_, dt_) * norm);
      fft_.backward();
      patterns[j].resize(work_.size());
      for (std::size_t i = 0; i < work_.size(); ++i) patterns[j][i] = T(work_[i] * factor[i]);
    }
    return patterns;
  }

  void record(int n) { host::record(receivers_, field(), traces_, nt_, n); }

  FieldLayout layout_;
  int nt_;
  int half_x_;
  double dt_, c_ref_;
  std::vector<double> vel2_;      // v^2
  fft::Buffer<T> work_;           // real work array of the planned transforms
  fft::Buffer<std::complex<T>> spectrum_;
  fft::RealFft3d<T> fft_;
  std::array<double, 3> spacing_;
  double cell_volume_;
  PointLists<T> receivers_;
  std::vector<double> traces_;
};

// The damping layer in second-order form.
template <class T>
class SpectralCpuDamping final : public SpectralCpuBase<T> {
  using Base = SpectralCpuBase<T>;
  using Base::layout_, Base::spectrum_, Base::fft_, Base::work_, Base::dt_, Base::c_ref_, Base::vel2_, Base::half_x_;

 public:
  SpectralCpuDamping(const Case& c, const Plan& plan) : Base(c, plan), u_(layout_.size()), u_prev_(layout_.size()) {
    const auto& g = c.grid;
    const std::size_t n = layout_.size();
    vel2dt2_.resize(n);
    eta_dt_.assign(n, T(0));
    for (std::size_t i = 0; i < n; ++i) vel2dt2_[i] = T(vel2_[i] * dt_ * dt_);
    // eta = d_z + d_y + d_x with the CPML profile's d (all six faces absorb).
    BoundarySpec bc = c.boundary;
    bc.free_surface = false;
    const CpmlProfile profile = make_cpml_profile(g, bc, plan.model.v_max, plan.pml_frequency, dt_);
    const auto& d = profile.d;
    for (int z = 0; z < g.shape[0]; ++z)
      for (int y = 0; y < g.shape[1]; ++y)
        for (int x = 0; x < g.shape[2]; ++x) eta_dt_[layout_.index(z, y, x)] = T((d[0][z] + d[1][y] + d[2][x]) * dt_);
    // The symbol on the half spectrum, with the 1 / (nz ny nx) of the unnormalised inverse folded in.
    symbol_.resize(spectrum_.size());
    const double norm = 1.0 / double(n);
    for (int z = 0; z < g.shape[0]; ++z)
      for (int y = 0; y < g.shape[1]; ++y)
        for (int x = 0; x < half_x_; ++x)
          symbol_[this->spectral_index(z, y, x)] = T(kspace_symbol(this->k2_at(z, y, x), c_ref_, dt_) * norm);
    // Source factor: (v dt)^2 / (1 + eta dt).
    source_factor_.resize(n);
    for (std::size_t i = 0; i < n; ++i) source_factor_[i] = double(vel2dt2_[i]) / (1.0 + double(eta_dt_[i]));
    std::vector<double>().swap(this->vel2_);  // setup only
  }

  std::string name() const override {
    return std::string("spectral-cpu-damping-") + (sizeof(T) == 4 ? "fp32" : "fp64");
  }

  void begin_shot(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets) override {
    std::fill(u_.begin(), u_.end(), T(0));
    std::fill(u_prev_.begin(), u_prev_.end(), T(0));
    std::fill(this->traces_.begin(), this->traces_.end(), 0.0);
    wavelets_ = wavelets;
    patterns_ = this->source_patterns(sources, source_factor_);
  }

  void advance(int n_begin, int n_end) override {
    const std::size_t n_points = layout_.size();
    for (int n = n_begin; n < n_end; ++n) {
      this->record(n);
      // Lk u^n = IFFT(symbol * FFT(u^n)) into work_.
      fft_.forward(u_.data(), spectrum_.data());
      const std::size_t n_spec = spectrum_.size();
      T* spec = reinterpret_cast<T*>(spectrum_.data());
      const T* sym = symbol_.data();
#pragma omp parallel for simd schedule(static)
      for (std::size_t k = 0; k < n_spec; ++k) {
        spec[2 * k] *= sym[k];
        spec[2 * k + 1] *= sym[k];
      }
      fft_.backward();
#pragma omp parallel for simd schedule(static)
      for (std::size_t i = 0; i < n_points; ++i)
        u_prev_[i] = damped_leapfrog(u_[i], u_prev_[i], vel2dt2_[i], work_[i], eta_dt_[i]);
      for (std::size_t j = 0; j < patterns_.size(); ++j) {
        const T amplitude = T(wavelets_[j][n]);
        const T* pattern = patterns_[j].data();
        if (amplitude == T(0)) continue;
#pragma omp parallel for simd schedule(static)
        for (std::size_t i = 0; i < n_points; ++i) u_prev_[i] += pattern[i] * amplitude;
      }
      std::swap(u_, u_prev_);
    }
  }

 private:
  const T* field() const override { return u_.data(); }

  fft::Buffer<T> u_, u_prev_;
  std::vector<T> vel2dt2_, eta_dt_, symbol_;
  std::vector<double> source_factor_;
  std::vector<fft::Buffer<T>> patterns_;  // (v dt)^2 / (1 + eta dt) K p_j / (dz dy dx), per source
  std::vector<std::vector<double>> wavelets_;
};

// The split-field PML in first-order form on staggered grids.
template <class T>
class SpectralCpuPml final : public SpectralCpuBase<T> {
  using Base = SpectralCpuBase<T>;
  using Base::layout_, Base::spectrum_, Base::fft_, Base::work_, Base::dt_, Base::c_ref_, Base::vel2_, Base::half_x_;

 public:
  SpectralCpuPml(const Case& c, const Plan& plan)
      : Base(c, plan), p_(layout_.size()), scratch_(spectrum_.size()), kappa_(spectrum_.size()) {
    const auto& g = c.grid;
    const std::size_t n = layout_.size();
    for (int a = 0; a < 3; ++a) {
      p_split_[a].assign(n, T(0));
      w_[a].assign(n, T(0));
    }
    dt_v2_.resize(n);
    for (std::size_t i = 0; i < n; ++i) dt_v2_[i] = T(dt_ * vel2_[i]);
    // kappa = sinc(c_ref |k| dt / 2) with the 1 / (nz ny nx) of the unnormalised inverse folded in.
    const double norm = 1.0 / double(n);
    for (int z = 0; z < g.shape[0]; ++z)
      for (int y = 0; y < g.shape[1]; ++y)
        for (int x = 0; x < half_x_; ++x)
          kappa_[this->spectral_index(z, y, x)] = T(std::sqrt(kspace_source_symbol(this->k2_at(z, y, x), c_ref_, dt_)) * norm);
    // Per axis: the staggered multipliers i k exp(+-i k h / 2) along the axis' spectral index, and the
    // decay b = exp(-d dt / 2) at the grid points and at the staggered points.
    const int W = c.boundary.pml_width;
    for (int a = 0; a < 3; ++a) {
      const int count = g.shape[a], spectral_count = a == 2 ? half_x_ : count;
      const double h = g.spacing[a];
      for (int sign : {+1, -1}) {
        auto& m = sign > 0 ? plus_[a] : minus_[a];
        m.resize(spectral_count);
        for (int i = 0; i < spectral_count; ++i) {
          const Complex2 v = staggered_multiplier(wavenumber(i, count, h), h, sign);
          m[i] = {T(v.re), T(v.im)};
        }
      }
      const double d0 =
          W > 0 ? -(c.boundary.pml_power + 1) * plan.model.v_max * std::log(c.boundary.pml_reflection) / (2 * W * h) : 0;
      b_[a].resize(count);
      bs_[a].resize(count);
      for (int i = 0; i < count; ++i) {
        b_[a][i] = T(std::exp(-0.5 * dt_ * d0 * std::pow(pml_depth(i, count, W), c.boundary.pml_power)));
        bs_[a][i] = T(std::exp(-0.5 * dt_ * d0 * std::pow(pml_depth(i + 0.5, count, W), c.boundary.pml_power)));
      }
    }
    source_factor_.resize(n);
    for (std::size_t i = 0; i < n; ++i) source_factor_[i] = dt_ * dt_ * vel2_[i] / 3.0;
    std::vector<double>().swap(this->vel2_);  // setup only
  }

  std::string name() const override { return std::string("spectral-cpu-pml-") + (sizeof(T) == 4 ? "fp32" : "fp64"); }

  void begin_shot(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets) override {
    std::fill(p_.begin(), p_.end(), T(0));
    for (int a = 0; a < 3; ++a) {
      std::fill(p_split_[a].begin(), p_split_[a].end(), T(0));
      std::fill(w_[a].begin(), w_[a].end(), T(0));
    }
    std::fill(this->traces_.begin(), this->traces_.end(), 0.0);
    // The running sums F_j^n = sum_{m <= n} s_j(t_m) (in fp64).
    running_.assign(wavelets.size(), {});
    for (std::size_t j = 0; j < wavelets.size(); ++j) {
      running_[j].resize(wavelets[j].size());
      double sum = 0;
      for (std::size_t m = 0; m < wavelets[j].size(); ++m) running_[j][m] = sum += wavelets[j][m];
    }
    patterns_ = this->source_patterns(sources, source_factor_);
  }

  void advance(int n_begin, int n_end) override {
    for (int n = n_begin; n < n_end; ++n) {
      this->record(n);
      fft_.forward(p_.data(), spectrum_.data());  // P = FFT(p^n), kept for the three gradients
      for (int a = 0; a < 3; ++a) {
        multiply(spectrum_.data(), scratch_.data(), a, plus_[a]);
        fft_.backward(scratch_.data(), work_.data());  // D_a^+ p^n
        update_velocity(a);
      }
      for (int a = 0; a < 3; ++a) {
        fft_.forward(w_[a].data(), scratch_.data());
        multiply(scratch_.data(), scratch_.data(), a, minus_[a]);
        fft_.backward(scratch_.data(), work_.data());  // D_a^- w_a^{n+1/2}
        update_pressure(a, n);
      }
    }
  }

 private:
  const T* field() const override { return p_.data(); }

  // out = in * kappa * m(index along axis a) on the half spectrum (out may alias in).
  void multiply(const std::complex<T>* in, std::complex<T>* out, int a, const std::vector<std::array<T, 2>>& m) {
    const int ny = layout_.ny, hx = half_x_;
    const T* src = reinterpret_cast<const T*>(in);
    T* dst = reinterpret_cast<T*>(out);
    const T* kap = kappa_.data();
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < layout_.nz; ++z)
      for (int y = 0; y < ny; ++y) {
        const std::size_t row = (std::size_t(z) * ny + y) * hx;
        if (a == 2) {
          const auto* mx = m.data();
#pragma omp simd
          for (int x = 0; x < hx; ++x) {
            const std::size_t k = row + x;
            const T re = src[2 * k], im = src[2 * k + 1], s = kap[k];
            dst[2 * k] = s * (re * mx[x][0] - im * mx[x][1]);
            dst[2 * k + 1] = s * (re * mx[x][1] + im * mx[x][0]);
          }
        } else {
          const T mr = m[a == 0 ? z : y][0], mi = m[a == 0 ? z : y][1];
#pragma omp simd
          for (int x = 0; x < hx; ++x) {
            const std::size_t k = row + x;
            const T re = src[2 * k], im = src[2 * k + 1], s = kap[k];
            dst[2 * k] = s * (re * mr - im * mi);
            dst[2 * k + 1] = s * (re * mi + im * mr);
          }
        }
      }
  }

  void update_velocity(int a) {
    const int ny = layout_.ny, nx = layout_.nx;
    const T dt = T(dt_);
    T* w = w_[a].data();
    const T* grad = work_.data();
    const T* bs = bs_[a].data();
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < layout_.nz; ++z)
      for (int y = 0; y < ny; ++y) {
        const std::size_t row = (std::size_t(z) * ny + y) * nx;
#pragma omp simd
        for (int x = 0; x < nx; ++x) {
          const T b = a == 0 ? bs[z] : (a == 1 ? bs[y] : bs[x]);
          w[row + x] = pml_velocity_update(w[row + x], b, dt, grad[row + x]);
        }
      }
  }

  // p_a^{n+1} from D_a^- w_a (in work_), plus a third of the source; after the last axis p = sum_a p_a.
  void update_pressure(int a, int n) {
    const int ny = layout_.ny, nx = layout_.nx;
    T* pa = p_split_[a].data();
    const T* div = work_.data();
    const T* b = b_[a].data();
    const T* dtv2 = dt_v2_.data();
    const std::size_t n_points = layout_.size();
    // The sources' amplitudes this step (patterns_ hold dt^2 v^2 K p_j / (3 dz dy dx)).
    std::array<const T*, 8> pattern{};
    std::array<T, 8> amplitude{};
    std::size_t n_src = 0;
    auto flush = [&] {
      if (n_src == 0) return;
#pragma omp parallel for schedule(static)
      for (std::size_t i = 0; i < n_points; ++i) {
        T s = 0;
        for (std::size_t j = 0; j < n_src; ++j) s += pattern[j][i] * amplitude[j];
        pa[i] += s;
      }
      n_src = 0;
    };
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < layout_.nz; ++z)
      for (int y = 0; y < ny; ++y) {
        const std::size_t row = (std::size_t(z) * ny + y) * nx;
#pragma omp simd
        for (int x = 0; x < nx; ++x) {
          const T bb = a == 0 ? b[z] : (a == 1 ? b[y] : b[x]);
          pa[row + x] = pml_pressure_update(pa[row + x], bb, dtv2[row + x], div[row + x]);
        }
      }
    for (std::size_t j = 0; j < patterns_.size(); ++j) {
      if (running_[j][n] == 0) continue;
      pattern[n_src] = patterns_[j].data();
      amplitude[n_src++] = T(running_[j][n]);
      if (n_src == pattern.size()) flush();
    }
    flush();
    if (a == 2) {
      const T *pz = p_split_[0].data(), *py = p_split_[1].data(), *px = p_split_[2].data();
      T* p = p_.data();
#pragma omp parallel for simd schedule(static)
      for (std::size_t i = 0; i < n_points; ++i) p[i] = pz[i] + py[i] + px[i];
    }
  }

  fft::Buffer<T> p_;                             // p = p_z + p_y + p_x
  std::array<fft::Buffer<T>, 3> p_split_, w_;    // p_a at grid points, w_a at staggered points
  fft::Buffer<std::complex<T>> scratch_;         // spectrum work array (c2r destroys its input)
  std::vector<T> kappa_;                         // sinc(c_ref |k| dt / 2) / (nz ny nx) on the half spectrum
  std::array<std::vector<std::array<T, 2>>, 3> plus_, minus_;  // i k_a exp(+-i k_a h_a / 2), per axis index
  std::array<std::vector<T>, 3> b_, bs_;          // exp(-d dt / 2) at grid and staggered points, per axis
  std::vector<T> dt_v2_;                          // dt v^2
  std::vector<double> source_factor_;             // dt^2 v^2 / 3
  std::vector<fft::Buffer<T>> patterns_;          // dt^2 v^2 K p_j / (3 dz dy dx), per source
  std::vector<std::vector<double>> running_;      // F_j^n
};

}  // namespace

std::unique_ptr<Propagator> make_spectral_cpu_propagator(const Case& c, const Plan& plan) {
  const bool pml = c.boundary.spectral_absorber == SpectralAbsorber::pml;
  if (c.run.precision == Precision::fp64) {
    if (pml) return std::make_unique<SpectralCpuPml<double>>(c, plan);
    return std::make_unique<SpectralCpuDamping<double>>(c, plan);
  }
  if (pml) return std::make_unique<SpectralCpuPml<float>>(c, plan);
  return std::make_unique<SpectralCpuDamping<float>>(c, plan);
}

}  // namespace specwave
