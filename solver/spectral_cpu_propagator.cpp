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

#include <fmt/format.h>

#include "kernels/fft/fftw3d.hpp"
#include "kernels/spectral_point.hpp"
#include "solver/block_reduce.hpp"
#include "solver/comm.hpp"
#include "solver/distributed_fft.hpp"
#include "solver/host_field.hpp"
#include "solver/plan.hpp"
#include "solver/spectral_cpu_propagator.hpp"
#include "solver/spectral_setup.hpp"

namespace specwave {
namespace {

// The blocks of this rank: the whole grid and spectrum without a domain, else those of the distributed FFT
// over the domain's ranks (plan.process_grid = (pz, py, 1)).
SpectralBlocks spectral_blocks(const Case& c, const Plan& plan, const Comm* domain) {
  const Dims3 shape = c.grid.shape;
  const FftProcessGrid grid{plan.process_grid[0], plan.process_grid[1]};
  SpectralBlocks b;
  b.real = block_of(shape, {grid.ranks_z, grid.ranks_y, 1}, domain->rank());
  b.spectrum = fft_spectrum_block(shape, grid, domain->rank());
  return b;
}

template <class T>
SpectralSetup<T> setup_for(const Case& c, const Plan& plan, const Comm* domain) {
  if (!domain) return make_spectral_setup<T>(c, plan);
  const SpectralBlocks blocks = spectral_blocks(c, plan, domain);
  return make_spectral_setup<T>(c, plan, &blocks);
}

// The r2c/c2r pair on the local real block and spectrum block, on any arrays of those shapes (64-byte aligned):
// FFTW on one rank (planned on the caller's work arrays `real`, `spectrum`); the distributed FFT over the
// domain's ranks, planned on arrays of its own through which it copies (so that, as with FFTW, a transform
// touches only its input and output).
template <class T>
class SpectralTransforms {
 public:
  SpectralTransforms(const SpectralSetup<T>& s, const Comm* domain, const Plan& plan, T* real, std::complex<T>* spectrum)
      : points_(s.points()), spectrum_points_(s.spectrum_points()) {
    if (domain) {
      real_.resize(points_);
      spectrum_.resize(spectrum_points_);
      distributed_ = std::make_unique<DistributedRealFft3d<T>>(
          *domain, Dims3{s.blocks.real.shape}, FftProcessGrid{plan.process_grid[0], plan.process_grid[1]},
          real_.data(), spectrum_.data(), plan.threads);
    } else {
      serial_ = std::make_unique<fft::RealFft3d<T>>(s.layout.nz, s.layout.ny, s.layout.nx, real, spectrum, plan.threads);
    }
  }
  void forward(const T* in, std::complex<T>* out) {
    if (serial_) return serial_->forward(in, out);
    std::copy_n(in, points_, real_.data());
    distributed_->forward();
    std::copy_n(spectrum_.data(), spectrum_points_, out);
  }
  void backward(std::complex<T>* in, T* out) {  // destroys in
    if (serial_) return serial_->backward(in, out);
    std::copy_n(in, spectrum_points_, spectrum_.data());
    distributed_->backward();
    std::copy_n(real_.data(), points_, out);
  }

 private:
  std::size_t points_, spectrum_points_;
  std::unique_ptr<fft::RealFft3d<T>> serial_;
  std::unique_ptr<DistributedRealFft3d<T>> distributed_;
  fft::Buffer<T> real_;
  fft::Buffer<std::complex<T>> spectrum_;
};

// What both absorbers share: the setup tables (solver/spectral_setup.hpp), transforms, receivers, traces.
template <class T>
class SpectralCpuBase : public Propagator {
 public:
  SpectralCpuBase(const Case& c, const Plan& plan, const Comm* domain)
      : domain_(domain && domain->size() > 1 ? domain : nullptr),
        setup_(setup_for<T>(c, plan, domain_)),
        layout_(setup_.layout),
        work_(setup_.points()),
        spectrum_(setup_.spectrum_points()),
        fft_(setup_, domain_, plan, work_.data(), spectrum_.data()) {
    local_.assign(plan.receivers.size() * std::size_t(setup_.nt), 0.0);
    parts_.assign(std::size_t(setup_.block_receivers.slots()) * setup_.nt, 0.0);
  }

  std::span<const double> traces() override {
    if (!domain_) return local_;
    traces_ = gather_block_traces(*domain_, setup_.block_receivers, local_, parts_, setup_.nt);
    return traces_;
  }
  FieldStats field_stats() override {
    const FieldStats local = host::field_stats(layout_, field());
    return domain_ ? reduce_field_stats(*domain_, setup_.blocks.real, local) : local;
  }
  void copy_field(std::span<float> out) override { host::copy_interior(layout_, field(), out); }
  void copy_field(std::span<double> out) override { host::copy_interior(layout_, field(), out); }
  std::size_t device_bytes() const override { return 0; }
  std::optional<Block> block() const override {
    if (!domain_) return std::nullopt;
    return setup_.blocks.real;
  }
  void visit_state(StateVisitor& v) override {
    visit_fields(v);
    v.visit_array("traces", local_);
    v.visit_array("trace_parts", parts_);
  }

 protected:
  std::string suffix() const {
    if (!domain_) return "";
    return fmt::format(" on {} ranks ({}x{} FFT grid)", domain_->size(), setup_.blocks.real.process_grid[0],
                       setup_.blocks.real.process_grid[1]);
  }

  virtual const T* field() const = 0;
  virtual void visit_fields(StateVisitor& v) = 0;

  // Zeroed traces, the sources' dense patterns source_factor K p_j / (dz dy dx) and their amplitudes per step.
  void begin_sources(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets) {
    std::fill(local_.begin(), local_.end(), 0.0);
    std::fill(parts_.begin(), parts_.end(), 0.0);
    amplitudes_ = spectral_source_amplitudes(setup_.absorber, wavelets);
    const ApplySourceCorrection<T> apply_k = [&](std::span<T> field) {
      fft_.forward(field.data(), spectrum_.data());
      const std::size_t n = spectrum_.size();
      for (std::size_t k = 0; k < n; ++k) spectrum_[k] *= setup_.source_symbol[k];
      fft_.backward(spectrum_.data(), field.data());
    };
    patterns_.assign(sources.size(), {});
    for (std::size_t j = 0; j < sources.size(); ++j)
      make_source_pattern(setup_, sources[j], std::span<T>(work_.data(), work_.size()), apply_k, patterns_[j]);
  }

  // field += sum_j amplitudes_j[n] pattern_j (sources whose amplitude is exactly 0 this step are skipped).
  void add_sources(T* field, int n) {
    const std::size_t points = setup_.points();
    for (std::size_t j = 0; j < patterns_.size(); ++j) {
      const T amplitude = T(amplitudes_[j][n]);
      if (amplitude == T(0)) continue;
      const T* pattern = patterns_[j].data();
#pragma omp parallel for simd schedule(static)
      for (std::size_t i = 0; i < points; ++i) field[i] += pattern[i] * amplitude;
    }
  }

  void record(int n) { record_block(setup_.block_receivers, field(), local_, parts_, setup_.nt, n); }

  const Comm* domain_ = nullptr;
  SpectralSetup<T> setup_;
  FieldLayout layout_;
  fft::Buffer<T> work_;  // real work array of the planned transforms
  fft::Buffer<std::complex<T>> spectrum_;
  SpectralTransforms<T> fft_;
  std::vector<std::vector<T>> patterns_;
  std::vector<std::vector<double>> amplitudes_;
  std::vector<double> local_, parts_, traces_;  // this rank's samples; every receiver gathered (several ranks)
};

// The damping layer in second-order form.
template <class T>
class SpectralCpuDamping final : public SpectralCpuBase<T> {
  using Base = SpectralCpuBase<T>;
  using Base::setup_, Base::layout_, Base::spectrum_, Base::fft_, Base::work_;

 public:
  SpectralCpuDamping(const Case& c, const Plan& plan, const Comm* domain)
      : Base(c, plan, domain), u_(setup_.points()), u_prev_(setup_.points()), eta_dt_(setup_.eta_dt_field()) {}

  std::string name() const override {
    return std::string("spectral-cpu-damping-") + (sizeof(T) == 4 ? "fp32" : "fp64") + this->suffix();
  }

  void begin_shot(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets) override {
    std::fill(u_.begin(), u_.end(), T(0));
    std::fill(u_prev_.begin(), u_prev_.end(), T(0));
    this->begin_sources(sources, wavelets);
  }

  void advance(int n_begin, int n_end) override {
    const std::size_t n_points = setup_.points(), n_spec = spectrum_.size();
    const T* sym = setup_.laplacian_symbol.data();
    const T* vel2dt2 = setup_.vel2dt2.data();
    for (int n = n_begin; n < n_end; ++n) {
      this->record(n);
      // Lk u^n = IFFT(symbol * FFT(u^n)) into work_.
      fft_.forward(u_.data(), spectrum_.data());
      T* spec = reinterpret_cast<T*>(spectrum_.data());
#pragma omp parallel for simd schedule(static)
      for (std::size_t k = 0; k < n_spec; ++k) {
        spec[2 * k] *= sym[k];
        spec[2 * k + 1] *= sym[k];
      }
      fft_.backward(spectrum_.data(), work_.data());
#pragma omp parallel for simd schedule(static)
      for (std::size_t i = 0; i < n_points; ++i)
        u_prev_[i] = damped_leapfrog(u_[i], u_prev_[i], vel2dt2[i], work_[i], eta_dt_[i]);
      this->add_sources(u_prev_.data(), n);
      std::swap(u_, u_prev_);
    }
  }

 private:
  const T* field() const override { return u_.data(); }
  void visit_fields(StateVisitor& v) override {
    v.visit_array("u", u_);
    v.visit_array("u_prev", u_prev_);
  }

  fft::Buffer<T> u_, u_prev_;
  std::vector<T> eta_dt_;
};

// The split-field PML in first-order form on staggered grids.
template <class T>
class SpectralCpuPml final : public SpectralCpuBase<T> {
  using Base = SpectralCpuBase<T>;
  using Base::setup_, Base::layout_, Base::spectrum_, Base::fft_, Base::work_;

 public:
  SpectralCpuPml(const Case& c, const Plan& plan, const Comm* domain)
      : Base(c, plan, domain), p_(setup_.points()), scratch_(spectrum_.size()) {
    for (int a = 0; a < 3; ++a) {
      p_split_[a].assign(setup_.points(), T(0));
      w_[a].assign(setup_.points(), T(0));
    }
  }

  std::string name() const override {
    return std::string("spectral-cpu-pml-") + (sizeof(T) == 4 ? "fp32" : "fp64") + this->suffix();
  }

  void begin_shot(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets) override {
    std::fill(p_.begin(), p_.end(), T(0));
    for (int a = 0; a < 3; ++a) {
      std::fill(p_split_[a].begin(), p_split_[a].end(), T(0));
      std::fill(w_[a].begin(), w_[a].end(), T(0));
    }
    this->begin_sources(sources, wavelets);
  }

  void advance(int n_begin, int n_end) override {
    for (int n = n_begin; n < n_end; ++n) {
      this->record(n);
      fft_.forward(p_.data(), spectrum_.data());  // P = FFT(p^n), kept for the three gradients
      for (int a = 0; a < 3; ++a) {
        multiply(spectrum_.data(), scratch_.data(), a, setup_.shift_plus[a]);
        fft_.backward(scratch_.data(), work_.data());  // D_a^+ p^n
        update_velocity(a);
      }
      for (int a = 0; a < 3; ++a) {
        fft_.forward(w_[a].data(), scratch_.data());
        multiply(scratch_.data(), scratch_.data(), a, setup_.shift_minus[a]);
        fft_.backward(scratch_.data(), work_.data());  // D_a^- w_a^{n+1/2}
        update_pressure(a);
        this->add_sources(p_split_[a].data(), n);  // a third of the source term in each component
      }
      sum_components();
    }
  }

 private:
  const T* field() const override { return p_.data(); }
  void visit_fields(StateVisitor& v) override {
    v.visit_array("p", p_);
    for (int a = 0; a < 3; ++a) {
      v.visit_array(fmt::format("p_{}", "zyx"[a]), p_split_[a]);
      v.visit_array(fmt::format("w_{}", "zyx"[a]), w_[a]);
    }
  }

  // out = in * kappa * m(index along axis a) on the local block of the half spectrum (out may alias in); m is
  // indexed by the global wavenumber index.
  void multiply(const std::complex<T>* in, std::complex<T>* out, int a, const std::vector<std::complex<T>>& m) {
    const Dims3 sb = setup_.blocks.spectrum.begin, se = setup_.blocks.spectrum.extent;
    const int ny = se[1], hx = se[2];
    const T* src = reinterpret_cast<const T*>(in);
    T* dst = reinterpret_cast<T*>(out);
    const T* kap = setup_.kappa.data();
    const T* mm = reinterpret_cast<const T*>(m.data()) + (a == 2 ? 2 * sb[2] : 0);
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < se[0]; ++z)
      for (int y = 0; y < ny; ++y) {
        const std::size_t row = (std::size_t(z) * ny + y) * hx;
        if (a == 2) {
#pragma omp simd
          for (int x = 0; x < hx; ++x) {
            const std::size_t k = row + x;
            const T re = src[2 * k], im = src[2 * k + 1], s = kap[k], mr = mm[2 * x], mi = mm[2 * x + 1];
            dst[2 * k] = s * (re * mr - im * mi);
            dst[2 * k + 1] = s * (re * mi + im * mr);
          }
        } else {
          const int at = a == 0 ? z + sb[0] : y + sb[1];
          const T mr = mm[2 * at], mi = mm[2 * at + 1];
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

  // Row-wise loops over the local block: b depends on the point's (global) index along axis a only.
  template <class Update>
  void for_each_row(int a, const std::vector<T>& b, Update&& update) {
    const int ny = layout_.ny, nx = layout_.nx;
    const Dims3 rb = setup_.blocks.real.sub.begin;
    const T* bx = b.data() + (a == 2 ? rb[2] : 0);
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < layout_.nz; ++z)
      for (int y = 0; y < ny; ++y) {
        const std::size_t row = (std::size_t(z) * ny + y) * nx;
        if (a == 2) {
#pragma omp simd
          for (int x = 0; x < nx; ++x) update(row + x, bx[x]);
        } else {
          const T br = bx[a == 0 ? z + rb[0] : y + rb[1]];
#pragma omp simd
          for (int x = 0; x < nx; ++x) update(row + x, br);
        }
      }
  }

  void update_velocity(int a) {
    const T dt = T(setup_.dt);
    T* w = w_[a].data();
    const T* grad = work_.data();
    for_each_row(a, setup_.pml_bs[a], [=](std::size_t i, T bs) { w[i] = pml_velocity_update(w[i], bs, dt, grad[i]); });
  }

  void update_pressure(int a) {
    T* pa = p_split_[a].data();
    const T* div = work_.data();
    const T* dt_v2 = setup_.dt_vel2.data();
    for_each_row(a, setup_.pml_b[a],
                 [=](std::size_t i, T b) { pa[i] = pml_pressure_update(pa[i], b, dt_v2[i], div[i]); });
  }

  void sum_components() {
    const T *pz = p_split_[0].data(), *py = p_split_[1].data(), *px = p_split_[2].data();
    T* p = p_.data();
    const std::size_t n = setup_.points();
#pragma omp parallel for simd schedule(static)
    for (std::size_t i = 0; i < n; ++i) p[i] = pz[i] + py[i] + px[i];
  }

  fft::Buffer<T> p_;                           // p = p_z + p_y + p_x
  std::array<fft::Buffer<T>, 3> p_split_, w_;  // p_a at grid points, w_a at staggered points
  fft::Buffer<std::complex<T>> scratch_;       // spectrum work array (c2r destroys its input)
};

}  // namespace

std::unique_ptr<Propagator> make_spectral_cpu_propagator(const Case& c, const Plan& plan, const Comm* domain) {
  const bool pml = c.boundary.spectral_absorber == SpectralAbsorber::pml;
  if (c.run.precision == Precision::fp64) {
    if (pml) return std::make_unique<SpectralCpuPml<double>>(c, plan, domain);
    return std::make_unique<SpectralCpuDamping<double>>(c, plan, domain);
  }
  if (pml) return std::make_unique<SpectralCpuPml<float>>(c, plan, domain);
  return std::make_unique<SpectralCpuDamping<float>>(c, plan, domain);
}

}  // namespace specwave
