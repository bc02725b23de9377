// k-space pseudo-spectral propagator on the CPU (docs/numerics.md, "Pseudo-spectral k-space propagator"):
//   (1 + eta dt) u^{n+1} = 2u^n - (1 - eta dt) u^{n-1} + (v dt)^2 ( IFFT(-|k|^2 sinc^2(c_ref |k| dt/2) FFT(u^n)) + K f^n ),
//   K = IFFT(sinc^2(c_ref |k| dt/2) FFT(.)) (the k-space source correction)
// with FFTW r2c/c2r transforms (threads, FFTW_MEASURE plans made once, wisdom cached).
#include <omp.h>

#include <algorithm>
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

template <class T>
class SpectralCpu final : public Propagator {
 public:
  SpectralCpu(const Case& c, const Plan& plan)
      : layout_{c.grid.shape[0], c.grid.shape[1], c.grid.shape[2], 0},
        nt_(plan.nt),
        half_x_(layout_.nx / 2 + 1),
        u_(layout_.size()),
        u_prev_(layout_.size()),
        lap_(layout_.size()),
        spectrum_(std::size_t(layout_.nz) * layout_.ny * half_x_),
        fft_(layout_.nz, layout_.ny, layout_.nx, lap_.data(), spectrum_.data(), plan.threads) {
    const auto& g = c.grid;
    const std::size_t n = layout_.size();
    const double dt = plan.dt;
    vel2dt2_.resize(n);
    eta_dt_.assign(n, T(0));
    for (std::size_t i = 0; i < n; ++i) vel2dt2_[i] = T(double(plan.model.velocity[i]) * plan.model.velocity[i] * dt * dt);
    // The damping layer: eta = d_z + d_y + d_x with the CPML profile's d (all six faces absorb).
    BoundarySpec bc = c.boundary;
    bc.free_surface = false;
    const CpmlProfile profile = make_cpml_profile(g, bc, plan.model.v_max, plan.pml_frequency, dt);
    const auto& d = profile.d;
    for (int z = 0; z < g.shape[0]; ++z)
      for (int y = 0; y < g.shape[1]; ++y)
        for (int x = 0; x < g.shape[2]; ++x) eta_dt_[layout_.index(z, y, x)] = T((d[0][z] + d[1][y] + d[2][x]) * dt);
    // The symbol on the half spectrum, with the 1 / (nz ny nx) of the unnormalised inverse folded in.
    symbol_.resize(spectrum_.size());
    source_symbol_.resize(spectrum_.size());
    const double c_ref = plan.model.v_max, norm = 1.0 / double(n);
    auto k_of = [](int m, int count, double h) { return 2 * M_PI * (m <= count / 2 ? m : m - count) / (count * h); };
    for (int z = 0; z < g.shape[0]; ++z)
      for (int y = 0; y < g.shape[1]; ++y)
        for (int x = 0; x < half_x_; ++x) {
          const double kz = k_of(z, g.shape[0], g.spacing[0]), ky = k_of(y, g.shape[1], g.spacing[1]),
                       kx = k_of(x, g.shape[2], g.spacing[2]);
          const double k2 = kz * kz + ky * ky + kx * kx;
          const std::size_t at = (std::size_t(z) * g.shape[1] + y) * half_x_ + x;
          symbol_[at] = T(kspace_symbol(k2, c_ref, dt) * norm);
          source_symbol_[at] = T(kspace_source_symbol(k2, c_ref, dt) * norm);
        }
    receivers_ = make_point_lists<T>(layout_, plan.receivers, 1.0, nullptr);
    traces_.assign((receivers_.offsets.size() - 1) * std::size_t(nt_), 0.0);
    // Source factor field: (v dt)^2 / (1 + eta dt).
    source_field_.resize(n);
    for (std::size_t i = 0; i < n; ++i) source_field_[i] = vel2dt2_[i] / (T(1) + eta_dt_[i]);
    cell_volume_ = g.spacing[0] * g.spacing[1] * g.spacing[2];
  }

  std::string name() const override { return std::string("spectral-cpu-") + (sizeof(T) == 4 ? "fp32" : "fp64"); }

  void begin_shot(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets) override {
    std::fill(u_.begin(), u_.end(), T(0));
    std::fill(u_prev_.begin(), u_prev_.end(), T(0));
    std::fill(traces_.begin(), traces_.end(), 0.0);
    wavelets_ = wavelets;
    // The k-space source correction (docs/numerics.md): each source enters as (v dt)^2 / (1 + eta dt) K p_j s_j(t_n)
    // with K = IFFT(sinc^2(c_ref |k| dt / 2) FFT(.)) of its interpolation pattern p_j. K p_j is computed once per
    // shot; it is dense (sinc^2 is discontinuous at the edge of the wavenumber box), so one grid-sized array
    // per source.
    const auto raw = make_point_lists<T>(layout_, sources, 1.0 / cell_volume_, nullptr);
    const std::size_t n_points = layout_.size();
    source_patterns_.assign(sources.size(), std::vector<T>());
    for (std::size_t j = 0; j < sources.size(); ++j) {
      std::fill(lap_.begin(), lap_.end(), T(0));
      for (std::int32_t p = raw.offsets[j]; p < raw.offsets[j + 1]; ++p) lap_[raw.index[p]] += raw.factor[p];
      fft_.forward();
      for (std::size_t k = 0; k < spectrum_.size(); ++k) spectrum_[k] *= source_symbol_[k];
      fft_.backward();
      auto& pattern = source_patterns_[j];
      pattern.resize(n_points);
      for (std::size_t i = 0; i < n_points; ++i) pattern[i] = lap_[i] * source_field_[i];
    }
  }

  void advance(int n_begin, int n_end) override {
    const std::size_t n_points = layout_.size();
    for (int n = n_begin; n < n_end; ++n) {
      host::record(receivers_, u_.data(), traces_, nt_, n);
      // Lk u^n = IFFT(symbol * FFT(u^n)) into lap_ (the forward plan reads lap_, so copy u^n there first).
      std::copy(u_.begin(), u_.end(), lap_.begin());
      fft_.forward();
      const std::size_t n_spec = spectrum_.size();
#pragma omp parallel for simd schedule(static)
      for (std::size_t k = 0; k < n_spec; ++k) spectrum_[k] *= symbol_[k];
      fft_.backward();
#pragma omp parallel for simd schedule(static)
      for (std::size_t i = 0; i < n_points; ++i)
        u_prev_[i] = damped_leapfrog(u_[i], u_prev_[i], vel2dt2_[i], lap_[i], eta_dt_[i]);
      for (std::size_t j = 0; j < source_patterns_.size(); ++j) {
        const T amplitude = T(wavelets_[j][n]);
        const T* pattern = source_patterns_[j].data();
        if (amplitude == T(0)) continue;
#pragma omp parallel for simd schedule(static)
        for (std::size_t i = 0; i < n_points; ++i) u_prev_[i] += pattern[i] * amplitude;
      }
      std::swap(u_, u_prev_);
    }
  }

  std::span<const double> traces() override { return traces_; }
  FieldStats field_stats() override { return host::field_stats(layout_, u_.data()); }
  void copy_field(std::span<float> out) override { host::copy_interior(layout_, u_.data(), out); }
  void copy_field(std::span<double> out) override { host::copy_interior(layout_, u_.data(), out); }
  std::size_t device_bytes() const override { return 0; }

 private:
  FieldLayout layout_;
  int nt_;
  int half_x_;
  std::vector<T> u_, u_prev_, lap_;
  std::vector<std::complex<T>> spectrum_;
  fft::RealFft3d<T> fft_;
  std::vector<T> vel2dt2_, eta_dt_, symbol_, source_symbol_, source_field_;
  std::vector<std::vector<T>> source_patterns_;  // (v dt)^2 / (1 + eta dt) K p_j / (dz dy dx), per source
  double cell_volume_ = 1;
  PointLists<T> receivers_;
  std::vector<std::vector<double>> wavelets_;
  std::vector<double> traces_;
};

}  // namespace

std::unique_ptr<Propagator> make_spectral_cpu_propagator(const Case& c, const Plan& plan) {
  if (c.run.precision == Precision::fp64) return std::make_unique<SpectralCpu<double>>(c, plan);
  return std::make_unique<SpectralCpu<float>>(c, plan);
}

}  // namespace specwave
