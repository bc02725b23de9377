// The k-space pseudo-spectral method on an NVIDIA GPU (docs/numerics.md, "Pseudo-spectral k-space propagator"):
// the SpectralSetup arrays (solver/propagators/spectral/spectral_setup.cpp, shared with the CPU propagator) copied to
// the device once, cuFFT transforms and the kernels of kernels/cuda/spectral_cuda.cu in the time loop. Receiver samples
// go into a device ring of two halves (solver/propagators/gpu/device_trace_ring.hpp): a full half is copied on the
// output stream into pinned host memory while the steps go on, and scattered into the host traces later. Snapshots
// (start/finish_copy_field, solver/propagators/gpu/device_field_copy.hpp) are copied on the same stream. The cuFFT
// plans and their work area are made in the constructor; nothing is allocated on the device after it (but the snapshot
// buffer when a start_copy_field comes without output.snapshot_every set).
#include <algorithm>
#include <cmath>
#include <complex>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <fmt/format.h>

#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/fdtd_cuda.hpp"  // record_receivers, field_stats
#include "kernels/cuda/spectral_cuda.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/device_field_stats.hpp"
#include "solver/propagators/gpu/device_field_copy.hpp"
#include "solver/propagators/gpu/device_state.hpp"
#include "solver/propagators/gpu/device_trace_ring.hpp"
#include "solver/propagators/gpu/device_upload.hpp"
#include "solver/propagators/spectral/spectral_cuda_propagator.hpp"
#include "solver/propagators/spectral/spectral_setup.hpp"

namespace specwave {
namespace {

template <class T>
class SpectralCuda final : public Propagator {
  using C = cuda::Complex<T>;

 public:
  SpectralCuda(const Case& c, const Plan& plan)
      : device_(select_gpu(plan.device)),
        stream_(),
        setup_(make_spectral_setup<T>(c, plan)),
        shape_{setup_.layout.nz, setup_.layout.ny, setup_.layout.nx},
        pml_(setup_.absorber == SpectralAbsorber::pml),
        fft_(shape_, stream_.handle()),
        field_copy_(stream_, output_stream_, setup_.points(), c.output.snapshot_every > 0,
                    /*dense_now=*/c.output.snapshot_every > 0) {
    static_assert(sizeof(std::complex<T>) == sizeof(C), "std::complex<T> and the cuFFT complex type share a layout");
    const std::size_t n = setup_.points(), n_spectrum = setup_.spectrum_points();
    const int spectra = pml_ ? 3 : 1;
    for (int k = 0; k < spectra; ++k) spectra_.emplace_back(n_spectrum);
    if (pml_) {
      for (int a = 0; a < 3; ++a) {
        p_[a] = cuda::DeviceArray<T>(n);
        w_[a] = cuda::DeviceArray<T>(n);
        work_[a] = cuda::DeviceArray<T>(n);
        shift_plus_[a] = upload_complex(setup_.shift_plus[a]);
        shift_minus_[a] = upload_complex(setup_.shift_minus[a]);
        b_[a] = upload(setup_.pml_b[a]);
        bs_[a] = upload(setup_.pml_bs[a]);
      }
      p_sum_ = cuda::DeviceArray<T>(n);
      dt_vel2_ = upload(setup_.dt_vel2);
      kappa_ = upload(setup_.kappa);
      // A density model: beta_a; attenuation: the drives, and the memory variables of each active component.
      for (int a = 0; a < 3; ++a)
        if (!setup_.beta[a].empty()) beta_[a] = upload(setup_.beta[a]);
      for (const auto& g : setup_.sls_drive) drives_.push_back(upload(g));
      for (int a = 0; a < 3; ++a)
        for (int l = 0; l < setup_.mechanisms() && setup_.active[a]; ++l) memory_[a].emplace_back(n);
    } else {
      u_ = cuda::DeviceArray<T>(n);
      u_prev_ = cuda::DeviceArray<T>(n);
      work_[0] = cuda::DeviceArray<T>(n);  // the Laplacian
      vel2dt2_ = upload(setup_.vel2dt2);
      laplacian_symbol_ = upload(setup_.laplacian_symbol);
      for (int a = 0; a < 3; ++a) damping_[a] = upload(setup_.damping[a]);
    }
    // The setup's per-point arrays now live on the device; the host keeps source_factor for the patterns.
    release(setup_.vel2dt2);
    release(setup_.dt_vel2);
    release(setup_.laplacian_symbol);
    release(setup_.kappa);

    make_receivers();
    // Room for the shot with the most sources, so begin_shot never allocates on the device.
    for (const auto& shot : plan.sources) max_sources_ = std::max(max_sources_, int(shot.size()));
    patterns_ = cuda::DeviceArray<T>(std::size_t(max_sources_) * n);
    amplitudes_ = cuda::DeviceArray<T>(std::size_t(max_sources_) * setup_.nt);
    // DeviceBuffer zero-fills in the legacy default stream, which this non-blocking stream does not wait for:
    // let every fill finish before any work is queued in the stream.
    cuda::synchronize();
  }

  std::string name() const override {
    return std::string("spectral-cuda-") + (pml_ ? "pml-" : "damping-") + (sizeof(T) == 4 ? "fp32" : "fp64");
  }

  void begin_shot(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets,
                  const std::vector<PointStencil>& receivers) override {
    // A shot with receivers of its own (ShotReceivers): the device lists and the trace ring made anew for them.
    if (setup_.set_receivers(receivers)) make_receivers();
    if (int(sources.size()) > max_sources_ || wavelets.size() != sources.size())
      throw std::logic_error("SpectralCuda::begin_shot: more sources than planned, or one wavelet per source missing");
    const cudaStream_t st = stream_.handle();
    if (pml_) {
      for (int a = 0; a < 3; ++a) p_[a].zero(st), w_[a].zero(st);
      for (auto& component : memory_)
        for (auto& r : component) r.zero(st);
      p_sum_.zero(st);
    } else {
      u_.zero(st);
      u_prev_.zero(st);
    }
    ring_->discard(0);
    field_copy_.discard();
    ring_->zero_host();
    traces_valid_ = false;
    n_sources_ = int(sources.size());
    if (n_sources_ == 0) return;

    const auto amplitudes = spectral_source_amplitudes(setup_.absorber, wavelets, setup_.components());
    std::vector<T> flat(std::size_t(n_sources_) * setup_.nt);
    for (int j = 0; j < n_sources_; ++j) {
      if (int(amplitudes[j].size()) < setup_.nt)
        throw std::logic_error("SpectralCuda::begin_shot: a wavelet has fewer than nt samples");
      for (int k = 0; k < setup_.nt; ++k) flat[std::size_t(j) * setup_.nt + k] = T(amplitudes[j][k]);
    }
    cuda::copy_to_device(amplitudes_.data(), flat.data(), flat.size() * sizeof(T), st);

    // Patterns source_factor * p_j (shared code).
    const std::size_t n = setup_.points();
    std::vector<T> pattern;
    for (int j = 0; j < n_sources_; ++j) {
      make_source_pattern(setup_, sources[j], pattern);
      cuda::copy_to_device(patterns_.data() + std::size_t(j) * n, pattern.data(), n * sizeof(T), st);
    }
  }

  void advance(int n_begin, int n_end) override {
    const cudaStream_t st = stream_.handle();
    for (int n = n_begin; n < n_end; ++n) {
      record(n);
      const cuda::SourceTerms<T> sources{patterns_.data(), amplitudes_.data(), n_sources_, setup_.nt, n};
      if (pml_)
        pml_step(sources, st);
      else
        damped_step(sources, st);
    }
    traces_valid_ = false;
  }

  std::span<const double> traces() override {
    if (!traces_valid_) {
      ring_->flush();
      traces_valid_ = true;
    }
    return ring_->host(0);
  }

  FieldStats field_stats() override { return field_stats_(setup_.layout, current(), stream_.handle()); }

  void copy_field(std::span<float> out) override { copy_out(out); }
  void copy_field(std::span<double> out) override { copy_out(out); }
  // The current field (p^n or u^n, overwritten by the next steps) copied into the dense buffer on the compute
  // stream, then on the output stream into pinned memory while the next steps run; finish waits for that copy.
  void start_copy_field() override {
    field_copy_.start([&](T* dense) {
      cuda::copy_async(dense, current(), setup_.points() * sizeof(T), stream_.handle());  // device to device
    });
  }
  void finish_copy_field(std::span<float> out) override { field_copy_.finish(out); }
  void finish_copy_field(std::span<double> out) override { field_copy_.finish(out); }

  // Saving: every sample recorded so far is flushed into the host matrix and saved as "traces" (receivers, nt), as
  // the device matrix was before the ring. Loading: copies still queued belong to the state replaced and are
  // dropped; the ring restarts at the next advance's first step.
  void visit_state(StateVisitor& v) override {
    const cudaStream_t st = stream_.handle();
    begin_state_visit(v, *ring_, field_copy_);
    if (pml_) {
      visit_device(v, "p", p_sum_, st);
      for (int a = 0; a < 3; ++a) {
        visit_device(v, fmt::format("p_{}", "zyx"[a]), p_[a], st);
        visit_device(v, fmt::format("w_{}", "zyx"[a]), w_[a], st);
      }
      for (int a = 0; a < 3; ++a)  // the CPU propagator's names (sls_<axis>_<l>)
        for (std::size_t l = 0; l < memory_[a].size(); ++l)
          visit_device(v, fmt::format("sls_{}_{}", "zyx"[a], l), memory_[a][l], st);
    } else {
      visit_device(v, "u", u_, st);
      visit_device(v, "u_prev", u_prev_, st);
    }
    v.visit_array("traces", ring_->host(0));
    traces_valid_ = false;
  }

  std::size_t device_bytes() const override {
    std::size_t bytes = fft_.work_bytes() + laplacian_symbol_.bytes() + kappa_.bytes() + u_.bytes() + u_prev_.bytes() +
                        vel2dt2_.bytes() + p_sum_.bytes() + dt_vel2_.bytes() + patterns_.bytes() + amplitudes_.bytes() +
                        ring_->device_bytes() + field_copy_.device_bytes() + receiver_index_.bytes() +
                        receiver_weight_.bytes() + receiver_offsets_.bytes() + field_stats_.bytes();
    for (const auto& s : spectra_) bytes += s.bytes();
    for (int a = 0; a < 3; ++a)
      bytes += p_[a].bytes() + w_[a].bytes() + work_[a].bytes() + shift_plus_[a].bytes() + shift_minus_[a].bytes() +
               b_[a].bytes() + bs_[a].bytes() + damping_[a].bytes() + beta_[a].bytes();
    for (const auto& g : drives_) bytes += g.bytes();
    for (const auto& component : memory_)
      for (const auto& r : component) bytes += r.bytes();
    return bytes;
  }

 private:
  // Copies in the legacy default stream, the one in which DeviceBuffer zero-fills: ordered after the fill, and
  // complete on return.
  template <class U>
  static cuda::DeviceArray<U> upload(const std::vector<U>& host) {
    cuda::DeviceArray<U> d(host.size());
    cuda::copy_to_device(d.data(), host.data(), host.size() * sizeof(U), nullptr);
    return d;
  }
  static cuda::DeviceArray<C> upload_complex(const std::vector<std::complex<T>>& host) {
    cuda::DeviceArray<C> d(host.size());
    cuda::copy_to_device(d.data(), host.data(), host.size() * sizeof(C), nullptr);
    return d;
  }
  template <class U>
  static void release(std::vector<U>& v) {
    std::vector<U>().swap(v);
  }

  // The receivers' device lists and the trace ring for setup_'s receivers: at construction, and for a shot whose
  // receivers differ from the last one's (after the device is idle, so that no queued step reads the old lists).
  void make_receivers() {
    cuda::synchronize();
    const auto& rec = setup_.receivers;
    n_receivers_ = int(rec.offsets.size()) - 1;
    ring_.reset();
    ring_ = std::make_unique<DeviceTraceRing>(stream_, output_stream_, setup_.nt,
                                              std::vector<std::size_t>{std::size_t(n_receivers_)});
    receiver_index_ = upload(rec.index);
    receiver_weight_ = upload(rec.factor);
    receiver_offsets_ = upload(rec.offsets);
  }

  // Sample n of every receiver into the ring (stream order); the ring makes the compute stream wait before it
  // writes a half again and queues a complete half's copy.
  void record(int n) {
    const auto at = ring_->begin_sample(n);
    cuda::record_receivers(current(), receiver_index_.data(), receiver_weight_.data(), receiver_offsets_.data(),
                           n_receivers_, ring_->half_data(0, at.half), ring_->columns(), at.column, stream_.handle());
    ring_->end_sample(n);
  }

  // The field at the current time: p^n (sum of the split components) or u^n.
  const T* current() const { return pml_ ? p_sum_.data() : u_.data(); }

  // Damping layer, docs/numerics.md:
  //   (1 + eta dt) u^{n+1} = 2 u^n - (1 - eta dt) u^{n-1} + (v dt)^2 ( Lk u^n + f^n ),  Lk = IFFT(symbol FFT(.))
  // written over u^{n-1}, then the two swap.
  void damped_step(const cuda::SourceTerms<T>& sources, cudaStream_t st) {
    C* spectrum = spectra_[0].data();
    T* lap = work_[0].data();
    fft_.forward(u_.data(), spectrum);                                        // FFT(u^n)
    cuda::multiply_spectrum(shape_, spectrum, laplacian_symbol_.data(), st);  // -|k|^2 sinc^2 / N
    fft_.backward(spectrum, lap);                                             // Lk u^n
    const cuda::DampedStep<T> step{
        u_.data(), u_prev_.data(), lap, vel2dt2_.data(), {damping_[0].data(), damping_[1].data(), damping_[2].data()},
        setup_.dt, sources};
    cuda::damped_step(shape_, step, st);  // u^{n+1} over u^{n-1}, sources added
    std::swap(u_, u_prev_);
  }

  // Split-field PML, docs/numerics.md (ten transforms):
  //   w_a^{n+1/2} = bs_a ( bs_a w_a^{n-1/2} - dt beta_a D_a^+ p^n ),   D_a^+ = IFFT(kappa shift_plus_a FFT(.))
  //   p_a^{n+1}   = b_a ( b_a p_a^n - dt v^2 D_a^- w_a^{n+1/2} [+ memory] ) + (1/3) dt^2 v^2 F^n,   D_a^- with
  //   shift_minus_a; p^{n+1} = p_z + p_y + p_x. beta_a = 1 and dt v^2 without rho / rho_ref without a density model;
  //   the memory variables' term with attenuation ("Attenuation in the k-space method").
  void pml_step(const cuda::SourceTerms<T>& sources, cudaStream_t st) {
    fft_.forward(p_sum_.data(), spectra_[0].data());  // FFT(p^n)
    cuda::staggered_gradient_spectra(shape_, spectra_[0].data(), spectra_[0].data(), spectra_[1].data(),
                                     spectra_[2].data(), kappa_.data(), shift_plus_[0].data(), shift_plus_[1].data(),
                                     shift_plus_[2].data(), st);
    for (int a = 0; a < 3; ++a) {
      C* spectrum = spectra_[a].data();
      T* scratch = work_[a].data();
      fft_.backward(spectrum, scratch);  // D_a^+ p^n
      cuda::pml_velocity_step(shape_, w_[a].data(), scratch, bs_[a].data(), a, T(setup_.dt), beta_[a].data(),
                              st);           // w_a^{n+1/2}
      fft_.forward(w_[a].data(), spectrum);  // FFT(w_a^{n+1/2})
      cuda::staggered_multiply(shape_, spectrum, kappa_.data(), shift_minus_[a].data(), a, st);
      fft_.backward(spectrum, scratch);  // D_a^- w_a^{n+1/2}
    }
    cuda::PmlPressureStep<T> step{{p_[0].data(), p_[1].data(), p_[2].data()},
                                  {work_[0].data(), work_[1].data(), work_[2].data()},
                                  dt_vel2_.data(),
                                  {b_[0].data(), b_[1].data(), b_[2].data()},
                                  p_sum_.data(),
                                  sources,
                                  setup_.active[1]};
    step.mechanisms = setup_.mechanisms();
    for (int l = 0; l < step.mechanisms; ++l) {
      step.g[l] = drives_[std::size_t(l)].data();
      step.decay[l] = setup_.sls_decay[std::size_t(l)];
      for (int a = 0; a < 3; ++a)
        if (!memory_[a].empty()) step.r[a][l] = memory_[a][std::size_t(l)].data();
    }
    step.half_dt = T(0.5 * setup_.dt);
    cuda::pml_pressure_step(shape_, step, st);  // p_a^{n+1} and p^{n+1}
  }

  template <class U>
  void copy_out(std::span<U> out) {
    const std::size_t n = setup_.points();
    if (out.size() < n)
      throw std::invalid_argument("SpectralCuda::copy_field: the output holds fewer than nz ny nx values");
    if constexpr (std::is_same_v<U, T>) {
      cuda::copy_to_host(out.data(), current(), n * sizeof(T), stream_.handle());
    } else {
      std::vector<T> host(n);
      cuda::copy_to_host(host.data(), current(), n * sizeof(T), stream_.handle());
      for (std::size_t i = 0; i < n; ++i) out[i] = U(host[i]);
    }
  }

  int device_;                  // selected before any allocation
  cuda::Stream stream_;         // created before, destroyed after the buffers and plans used in it
  cuda::Stream output_stream_;  // receiver samples and snapshots to the host
  SpectralSetup<T> setup_;
  cuda::SpectralShape shape_;
  bool pml_;
  cuda::RealFft3d<T> fft_;
  std::vector<cuda::DeviceArray<C>> spectra_;  // half spectra: damping 1, pml 3 (FFT(p) becomes the z one)
  cuda::DeviceArray<T> laplacian_symbol_, kappa_;
  // damping: u^n, u^{n-1}, (v dt)^2, d_a; work_[0] holds the Laplacian
  cuda::DeviceArray<T> u_, u_prev_, vel2dt2_;
  std::array<cuda::DeviceArray<double>, 3> damping_;
  // pml: split pressure, staggered velocities, their sum p, per-axis scratch (D_a^+ p, then D_a^- w_a)
  std::array<cuda::DeviceArray<T>, 3> p_, w_, work_;
  cuda::DeviceArray<T> p_sum_, dt_vel2_;
  std::array<cuda::DeviceArray<T>, 3> beta_;                 // a density model's beta_a (empty without)
  std::vector<cuda::DeviceArray<T>> drives_;                 // attenuation: g_l
  std::array<std::vector<cuda::DeviceArray<T>>, 3> memory_;  // r_{l,a} of the active components
  std::array<cuda::DeviceArray<C>, 3> shift_plus_, shift_minus_;
  std::array<cuda::DeviceArray<T>, 3> b_, bs_;
  // sources (dense patterns and per-step amplitudes, up to max_sources_) and receivers
  int max_sources_ = 0, n_sources_ = 0, n_receivers_ = 0;
  cuda::DeviceArray<T> patterns_, amplitudes_;
  cuda::DeviceArray<index_t> receiver_index_;
  cuda::DeviceArray<T> receiver_weight_;
  cuda::DeviceArray<std::int32_t> receiver_offsets_;
  DeviceFieldStatsBuffers field_stats_;    // the blow-up checks' reduction
  std::unique_ptr<DeviceTraceRing> ring_;  // one group: the receivers, (receivers, nt) on the host (make_receivers)
  DeviceFieldCopy<T> field_copy_;          // start_copy_field's dense device and pinned host buffers
  bool traces_valid_ = false;
};

}  // namespace

std::unique_ptr<Propagator> make_spectral_cuda_propagator(const Case& c, const Plan& plan) {
  if (c.run.precision == Precision::fp64) return std::make_unique<SpectralCuda<double>>(c, plan);
  return std::make_unique<SpectralCuda<float>>(c, plan);
}

}  // namespace specwave
