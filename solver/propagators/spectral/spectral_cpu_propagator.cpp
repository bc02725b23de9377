// k-space pseudo-spectral propagator on the CPU (docs/numerics.md, "Pseudo-spectral k-space propagator"), with
// FFTW r2c/c2r transforms (threads, FFTW_MEASURE plans made once, wisdom cached). Two absorbing boundaries:
//  - the split-field PML in first-order form (default): ten transforms a step
//      w_a^{n+1/2} = bs_a (bs_a w_a^{n-1/2} - dt D_a^+ p^n)
//      p_a^{n+1}   = b_a (b_a p_a^n - dt v^2 D_a^- w_a^{n+1/2}) + dt^2 v^2 F^n / 3,   p = sum_a p_a
//  - the damping layer in second-order form: two transforms a step
//      (1 + eta dt) u^{n+1} = 2u^n - (1 - eta dt) u^{n-1} + (v dt)^2 ( Lk u^n + f^n )
// The source's share of the k-space source factor is in its weights (solver/plan/acquisition.hpp); the receivers
// carry the other share.
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>

#include <fmt/format.h>

#include "kernels/cpu/flush_denormals.hpp"
#include "solver/parallel/block_reduce.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/host_field.hpp"
#include "solver/propagators/spectral/spectral_cpu_propagator.hpp"
#include "solver/propagators/spectral/spectral_cpu_steps.hpp"
#include "solver/propagators/spectral/spectral_setup.hpp"

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

// What both absorbers share: the setup tables (solver/propagators/spectral/spectral_setup.hpp), transforms, receivers,
// traces.
template <class T>
class SpectralCpuBase : public Propagator {
 public:
  SpectralCpuBase(const Case& c, const Plan& plan, const Comm* domain)
      : domain_(domain && domain->size() > 1 ? domain : nullptr),
        flush_denormals_(c.run.flush_denormals),
        setup_(setup_for<T>(c, plan, domain_)),
        layout_(setup_.layout),
        steps_(setup_, domain_, plan) {
    size_traces();
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
  void start_copy_field() override {
    host::copy_interior(layout_, field(), held_.hold(std::size_t(layout_.interior_points())));
  }
  void finish_copy_field(std::span<float> out) override { held_.take(out); }
  void finish_copy_field(std::span<double> out) override { held_.take(out); }
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

  // This shot's receivers, zeroed traces, the sources' dense patterns source_factor p_j / (dz dy dx) and their
  // amplitudes per step.
  void begin_sources(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets,
                     const std::vector<PointStencil>& receivers) {
    if (setup_.set_receivers(receivers)) size_traces();
    std::fill(local_.begin(), local_.end(), 0.0);
    std::fill(parts_.begin(), parts_.end(), 0.0);
    sources_.begin(setup_, sources, wavelets);
  }

  void size_traces() {
    local_.assign(setup_.receiver_keys.size() * std::size_t(setup_.nt), 0.0);
    parts_.assign(std::size_t(setup_.block_receivers.slots()) * setup_.nt, 0.0);
  }
  void record(int n) { record_block(setup_.block_receivers, field(), local_, parts_, setup_.nt, n); }

  const Comm* domain_ = nullptr;
  bool flush_denormals_ = true;
  SpectralSetup<T> setup_;
  FieldLayout layout_;
  SpectralCpuSteps<T> steps_;  // transforms and steps (solver/propagators/spectral/spectral_cpu_steps.hpp)
  SpectralSources<T> sources_;
  std::vector<double> local_, parts_, traces_;  // this rank's samples; every receiver gathered (several ranks)
  HeldField<T> held_;                           // start_copy_field's copy
};

// The damping layer in second-order form.
template <class T>
class SpectralCpuDamping final : public SpectralCpuBase<T> {
  using Base = SpectralCpuBase<T>;
  using Base::setup_, Base::steps_, Base::sources_;

 public:
  SpectralCpuDamping(const Case& c, const Plan& plan, const Comm* domain)
      : Base(c, plan, domain), u_(setup_.points()), u_prev_(setup_.points()), eta_dt_(setup_.eta_dt_field()) {}

  std::string name() const override {
    return std::string("spectral-cpu-damping-") + (sizeof(T) == 4 ? "fp32" : "fp64") + this->suffix();
  }

  void begin_shot(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets,
                  const std::vector<PointStencil>& receivers) override {
    std::fill(u_.begin(), u_.end(), T(0));
    std::fill(u_prev_.begin(), u_prev_.end(), T(0));
    this->begin_sources(sources, wavelets, receivers);
  }

  void advance(int n_begin, int n_end) override {
    const cpu::FlushDenormals flush(this->flush_denormals_);
    for (int n = n_begin; n < n_end; ++n) {
      this->record(n);
      // u^{n+1} with the first source in the same pass, then any others
      steps_.damped_step(u_.data(), u_prev_.data(), setup_.vel2dt2.data(), eta_dt_.data(), sources_.term(0, n));
      sources_.add(u_prev_.data(), n, 1);
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
  using Base::setup_, Base::steps_, Base::sources_;

 public:
  SpectralCpuPml(const Case& c, const Plan& plan, const Comm* domain)
      : Base(c, plan, domain), f_(setup_.points(), setup_.mechanisms(), setup_.active) {}

  std::string name() const override {
    return std::string("spectral-cpu-pml-") + (sizeof(T) == 4 ? "fp32" : "fp64") + this->suffix();
  }

  void begin_shot(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets,
                  const std::vector<PointStencil>& receivers) override {
    f_.reset();
    this->begin_sources(sources, wavelets, receivers);
  }

  void advance(int n_begin, int n_end) override {
    const cpu::FlushDenormals flush(this->flush_denormals_);
    for (int n = n_begin; n < n_end; ++n) {
      this->record(n);
      // A third of the source term in each component.
      steps_.pml_step(f_, setup_.dt_vel2.data(), sources_.term(0, n), sources_.patterns.size() <= 1,
                      [&](int a) { sources_.add(f_.p_split[a].data(), n, 1); });
    }
  }

 private:
  const T* field() const override { return f_.p.data(); }
  void visit_fields(StateVisitor& v) override {
    v.visit_array("p", f_.p);
    for (int a = 0; a < 3; ++a) {
      v.visit_array(fmt::format("p_{}", "zyx"[a]), f_.p_split[a]);
      v.visit_array(fmt::format("w_{}", "zyx"[a]), f_.w[a]);
    }
    const int mechanisms = setup_.mechanisms();  // r_{l,a} of the active components (sls_<axis>_<l>)
    for (int a = 0; a < 3; ++a)
      for (int l = 0; l < mechanisms && setup_.active[a]; ++l)
        v.visit_array(fmt::format("sls_{}_{}", "zyx"[a], l), f_.memory[std::size_t(a * mechanisms + l)]);
  }

  SpectralPmlFields<T> f_;  // p, p_a at grid points, w_a at staggered points
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
