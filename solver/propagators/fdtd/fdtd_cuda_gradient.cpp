// FDTD forward, Born and adjoint operators on an NVIDIA GPU (docs/numerics.md, "Adjoint and gradient";
// docs/gpu.md): the GPU counterpart of solver/propagators/fdtd/fdtd_cpu_gradient.cpp, step for step. The model, the
// fields, the CPML memory (forward and adjoint), the history (device memory, or pinned host memory:
// solver/propagators/history/device_history.hpp) and the fp64 gradient and illumination accumulators live on the
// device; the host sees the traces and the gradient once per shot. Sources and adjoint sources are added without
// atomics, grouped by target point in the CPU's order (kernels/cuda/fdtd_adjoint_cuda.hpp), so every step is
// deterministic: replayed steps give bitwise the same fields, and the history strategies bitwise the same gradient. One
// rank (no domain decomposition).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <string_view>

#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/fdtd_adjoint_cuda.hpp"
#include "kernels/cuda/fdtd_cuda.hpp"
#include "solver/case/errors.hpp"
#include "solver/forward/progress.hpp"
#include "solver/plan/plan.hpp"
#include "solver/plan/shot_receivers.hpp"
#include "solver/propagators/device_field_stats.hpp"
#include "solver/propagators/fdtd/fdtd_setup.hpp"
#include "solver/propagators/gpu/device_gather.hpp"
#include "solver/propagators/gpu/device_upload.hpp"
#include "solver/propagators/gradient_propagator.hpp"
#include "solver/propagators/history/device_history.hpp"
#include "solver/propagators/host_field.hpp"

namespace specwave {
namespace {

// SPECWAVE_CUDA_ADJOINT: "omega" (also when unset or empty) the adjoint in omega with the imaging fused
// (cuda::fdtd_scaled_adjoint_step), "mu" the 2026-12-04 adjoint in mu with a separate imaging kernel; anything else is
// refused naming the variable.
bool adjoint_in_mu_from_environment() {
  const char* v = std::getenv("SPECWAVE_CUDA_ADJOINT");
  if (!v || !*v || std::string_view(v) == "omega") return false;
  if (std::string_view(v) == "mu") return true;
  throw Error(ExitCode::invalid_case,
              std::string("SPECWAVE_CUDA_ADJOINT=\"") + v + "\": expected \"omega\" (the default) or \"mu\"");
}

// The forward state of one wavefield on the device: u^n, u^{n-1} (padded) and the CPML memory psi, zeta.
template <class T>
struct DeviceForwardState {
  cuda::DeviceArray<T> u, u_prev;
  std::vector<cuda::DeviceArray<T>> slabs;
  std::array<CpmlAxis<T>, 3> pml;
  // The forward propagator's stencil kernel (SPECWAVE_CUDA_KERNEL / SPECWAVE_CUDA_TILE), so that the gradient's
  // forward traces are the forward run's bit for bit.
  cuda::StencilKernel kernel = cuda::stencil_kernel_from_environment();
  cuda::TileShape tile = cuda::tile_shape_from_environment(sizeof(T));

  DeviceForwardState(const FdtdSetup<T>& setup, const std::array<cuda::DeviceArray<T>, 3>& a,
                     const std::array<cuda::DeviceArray<T>, 3>& b)
      : u(setup.layout.size()), u_prev(setup.layout.size()) {
    for (int axis = 0; axis < 3; ++axis) {
      pml[axis] = setup.pml[axis];
      pml[axis].a = a[axis].data();
      pml[axis].b = b[axis].data();
      for (int side = 0; side < 2; ++side) {
        if (!pml[axis].face[side]) continue;
        pml[axis].psi[side] = slabs.emplace_back(setup.slab_points[axis]).data();
        pml[axis].zeta[side] = slabs.emplace_back(setup.slab_points[axis]).data();
      }
    }
  }
  void reset(cudaStream_t stream) {
    u.zero(stream);
    u_prev.zero(stream);
    for (auto& s : slabs) s.zero(stream);
  }
  // u_prev <- u^{n+1} without sources; the caller injects, then finish_step applies Z and swaps.
  void step(const FdtdSetup<T>& setup, const T* vel2dt2, cudaStream_t stream) {
    cuda::fdtd_step(
        FdtdStep<T>{
            setup.layout, u.data(), u_prev.data(), vel2dt2, setup.coef, {pml[0], pml[1], pml[2]}, setup.free_surface},
        stream, kernel, tile);
  }
  void finish_step(const FdtdSetup<T>& setup, cudaStream_t stream) {
    if (setup.free_surface) cuda::zero_top_plane(setup.layout, u_prev.data(), stream);
    std::swap(u, u_prev);
  }
  std::size_t values() const {
    std::size_t n = u.size() + u_prev.size();
    for (const auto& s : slabs) n += s.size();
    return n;
  }
  std::size_t bytes() const { return values() * sizeof(T); }
};

template <class T>
class FdtdCudaGradient final : public GradientPropagator, private DeviceForwardStepper<T> {
 public:
  FdtdCudaGradient(const Case& c, const Plan& plan, const HistoryChoice& history)
      : dt_(plan.dt),
        v_limit_(plan.v_reference / plan.cfl),
        source_stencils_(plan.sources),
        wavelets_(plan.wavelets),
        device_(select_gpu(plan.device)),
        stream_(),
        setup_(make_fdtd_setup<T>(c, plan)),
        vel2dt2_(upload(setup_.vel2dt2)),
        pml_a_{upload(setup_.pml_a[0]), upload(setup_.pml_a[1]), upload(setup_.pml_a[2])},
        pml_b_{upload(setup_.pml_b[0]), upload(setup_.pml_b[1]), upload(setup_.pml_b[2])},
        state_(setup_, pml_a_, pml_b_),
        history_(make_device_history<T>(history)),
        history_tier_(history.tier),
        shot_receivers_(c, plan) {
    const FieldLayout& L = setup_.layout;
    const std::size_t points = std::size_t(L.interior_points());
    make_receivers();
    // Room for the largest shot, so that begin_shot never allocates.
    const auto [max_points, max_sources] = largest_shot(plan.sources);
    sources_ = DeviceGather<T>(max_points);
    wavelets_device_ = cuda::DeviceArray<double>(max_sources * std::size_t(setup_.nt));
    // copy_field's staging field, when the history is in pinned host memory (a device history takes u^n directly).
    if (history_tier_ != HistoryTier::device) dense_ = cuda::DeviceArray<T>(points);
    // The adjoint pass: omega^{n+1}, omega^{n+2} (mu's in the mu path, with its scratch w), the adjoint CPML memory,
    // the history fields (three in the mu path, two in omega's), the fp64 image (the mu path's gradient) and
    // illumination, and in fp32 the image's partial sums (omega).
    mu_ = cuda::DeviceArray<T>(L.size());
    mu_next_ = cuda::DeviceArray<T>(L.size());
    if (adjoint_in_mu_) w_ = cuda::DeviceArray<T>(L.size());
    adjoint_step_ =
        FdtdAdjointStep<T>{L, nullptr, nullptr, w_.data(), vel2dt2_.data(), setup_.coef, {}, setup_.free_surface};
    for (int a = 0; a < 3; ++a)
      make_cpml_adjoint_axis(adjoint_step_.pml[a], setup_.pml[a], a, L.nz, L.ny, L.nx, pml_a_[a].data(),
                             pml_b_[a].data(),
                             [&](std::size_t values) { return adjoint_slabs_.emplace_back(values).data(); });
    for (std::size_t k = 0; k < (adjoint_in_mu_ ? 3 : 2); ++k) history_fields_[k] = cuda::DeviceArray<T>(points);
    gradient_device_ = cuda::DeviceArray<double>(points);
    illumination_device_ = cuda::DeviceArray<double>(points);
    if (sizeof(T) == 4 && !adjoint_in_mu_) image_partial_ = cuda::DeviceArray<T>(points);
  }

  std::string name() const override { return std::string("fdtd-cuda-") + (sizeof(T) == 4 ? "fp32" : "fp64"); }
  std::string history_name() const override { return history_->name(); }
  std::size_t history_bytes() const override { return history_->bytes(); }
  // The forward steps of the last shot's forward pass with history and its adjoint pass (recomputed segments).
  long long history_forward_steps() const override { return history_steps_; }

  void set_velocity(std::span<const double> velocity) override {
    check_model_velocity(velocity, std::size_t(setup_.layout.interior_points()), v_limit_, dt_);
    setup_.set_velocity(velocity, dt_);
    cuda::copy_to_device(vel2dt2_.data(), setup_.vel2dt2.data(), vel2dt2_.bytes(), stream_.handle());
  }

  std::vector<double> vel2dt2() const override {
    std::vector<double> out(setup_.layout.interior_points());
    host::copy_interior(setup_.layout, setup_.vel2dt2.data(), std::span<double>(out));
    return out;
  }

  std::vector<double> forward(int shot, bool keep_history) override {
    begin_shot(shot);
    counting_ = keep_history;
    if (keep_history) {
      history_steps_ = 0;
      history_->run_forward(*this, setup_.nt);
      history_shot_ = shot;
    } else {
      for (int n = 0; n < setup_.nt; ++n) step(n);
    }
    cuda::copy_to_host(traces_.data(), traces_device_.data(), traces_device_.bytes(), stream_.handle());
    return traces_;
  }

  // Background and perturbation in lockstep: du^{n+1} = Z[step(du) + dm a^n], a^n = (u^{n+1} - 2u^n + u^{n-1}) / (v
  // dt)^2, u^{n+1} taken before Z as on the CPU (the plane Z zeroes is zeroed in du^{n+1} too).
  std::vector<double> born(int shot, std::span<const double> dm) override {
    const FieldLayout& L = setup_.layout;
    check_born_perturbation(dm.size(), std::size_t(L.interior_points()));
    const cudaStream_t st = stream_.handle();
    begin_shot(shot);
    if (!born_ || born_->traces.size() != traces_.size())
      born_ = std::make_unique<BornState>(setup_, pml_a_, pml_b_, traces_.size());
    BornState& b = *born_;
    b.du.reset(st);
    b.traces.zero(st);
    const std::vector<T> dm_t(dm.begin(), dm.end());  // T(dm[k]), as the CPU converts it
    cuda::copy_to_device(b.dm.data(), dm_t.data(), b.dm.bytes(), st);
    const int n_receivers = int(setup_.receivers.offsets.size()) - 1;
    for (int n = 0; n < setup_.nt; ++n) {
      cuda::record_receivers(b.du.u.data(), receiver_index_.data(), receiver_factor_.data(), receiver_offsets_.data(),
                             n_receivers, b.traces.data(), setup_.nt, n, st);
      cuda::copy_async(b.u_before.data(), state_.u_prev.data(), b.u_before.bytes(), st);  // u^{n-1}
      background_step(n);  // state_.u_prev = u^{n+1} (injected, before Z), not yet swapped
      b.du.step(setup_, vel2dt2_.data(), st);
      cuda::add_born_source(L, b.du.u_prev.data(), b.dm.data(), state_.u_prev.data(), state_.u.data(),
                            b.u_before.data(), vel2dt2_.data(), st);
      b.du.finish_step(setup_, st);
      state_.finish_step(setup_, st);
    }
    std::vector<double> out(traces_.size());
    cuda::copy_to_host(out.data(), b.traces.data(), b.traces.bytes(), st);
    return out;
  }

  void adjoint(std::span<const double> residual, std::span<double> gradient, std::span<double> illumination) override {
    const FieldLayout& L = setup_.layout;
    check_adjoint_arguments(history_shot_ >= 0, traces_.size(), std::size_t(L.interior_points()), residual.size(),
                            gradient.size(), illumination.size());
    if (adjoint_in_mu_) return adjoint_in_mu(residual, gradient, illumination);
    adjoint_in_omega(residual, gradient, illumination);
  }

 private:
  // The CPU's adjoint (fdtd_cpu_gradient.cpp) on the device: omega^n = Z [2 omega^{n+1} - omega^{n+2} + V (Ltilde^T
  // omega^{n+1} + R^T g^n)] from rest, one fused step a time step (cuda::fdtd_scaled_adjoint_step: the imaging
  // condition u^n d and the illumination inside), the receivers' term of the image where the adjoint sources enter;
  // the gradient is the image over V^2 at the end of the shot, summed on the host as on the CPU.
  void adjoint_in_omega(std::span<const double> residual, std::span<double> gradient, std::span<double> illumination) {
    const FieldLayout& L = setup_.layout;
    const int nt = setup_.nt;
    const cudaStream_t st = stream_.handle();
    const std::size_t points = std::size_t(L.interior_points());
    gradient_device_.zero(st);  // the image
    image_partial_.zero(st);    // (fp32; none in fp64)
    double* illum = nullptr;
    if (!illumination.empty()) {
      cuda::copy_to_device(illumination_device_.data(), illumination.data(), illumination_device_.bytes(), st);
      illum = illumination_device_.data();
    }
    cuda::copy_to_device(residual_device_.data(), residual.data(), residual_device_.bytes(), st);
    mu_.zero(st);
    mu_next_.zero(st);
    for (auto& s : adjoint_slabs_) s.zero(st);
    // The adjoint sources in omega, V R^T g: the receivers' weights times V at their points (T, as the CPU rounds
    // them), grouped by target point, and each target's interior index for its imaging term.
    const auto& rec = setup_.receivers;
    const std::vector<T>& vel = setup_.vel2dt2;
    std::vector<T> factor(rec.factor.size());
    for (std::size_t p = 0; p < factor.size(); ++p) factor[p] = rec.factor[p] * vel[std::size_t(rec.index[p])];
    const HostGather<T> gather = gather_by_target(rec.index, factor, receiver_owner_);
    scaled_sources_.assign(gather, st);
    std::vector<std::int64_t> interior(gather.target.size());
    for (std::size_t t = 0; t < interior.size(); ++t) {
      int z, y, x;
      L.coordinates(gather.target[t], z, y, x);
      interior[t] = (std::int64_t(z) * L.ny + y) * L.nx + x;
    }
    if (!interior.empty())
      cuda::copy_to_device(receiver_interior_.data(), interior.data(), interior.size() * sizeof(std::int64_t), st);
    FdtdScaledAdjointStep<T> step =
        scaled_adjoint_view(L, vel2dt2_.data(), setup_.coef, adjoint_step_.pml, setup_.free_surface);
    step.image = gradient_device_.data();
    step.illumination = illum;
    // fp32: the terms summed in fp32 over image_block_steps steps, then added to the fp64 image (as on the CPU).
    const int block = sizeof(T) == 4 ? image_block_steps : 1;
    if (block > 1) step.image_partial = image_partial_.data();
    auto& [u_last, u_now, unused] = history_fields_;
    (void)unused;
    history_->field(*this, nt, u_last.data());  // u^nt: its term has omega^nt = 0, but the history hands it out first
    const cuda::PointGather<T> sources = scaled_sources_.view();
    shot_step(ShotPass::adjoint, 0, nt);  // the adjoint pass begins (replays count as its)
    for (int n = nt - 1; n >= 0; --n) {
      history_->field(*this, n, u_now.data());
      step.omega = mu_.data();
      step.omega_next = mu_next_.data();
      step.u_now = u_now.data();
      step.flush = n % block == 0;
      cuda::fdtd_scaled_adjoint_step(step, st);
      cuda::add_point_signals_imaged(mu_next_.data(), sources, residual_device_.data(), nt, n,
                                     receiver_interior_.data(), u_now.data(), gradient_device_.data(), st);
      if (setup_.free_surface) cuda::zero_top_plane(L, mu_next_.data(), st);
      std::swap(mu_, mu_next_);
      shot_step(ShotPass::adjoint, nt - n, nt);
    }
    // dJ/dV = image / V^2 (fdtd_cpu_gradient.cpp's sum, in its order).
    image_.resize(points);
    cuda::copy_to_host(image_.data(), gradient_device_.data(), gradient_device_.bytes(), st);
    const std::vector<double>& image = image_;
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < L.nz; ++z)
      for (int y = 0; y < L.ny; ++y) {
        const std::size_t k0 = (std::size_t(z) * std::size_t(L.ny) + std::size_t(y)) * std::size_t(L.nx);
        const T* v = vel.data() + L.index(z, y, 0);
        for (int x = 0; x < L.nx; ++x) gradient[k0 + x] += image[k0 + x] / (double(v[x]) * double(v[x]));
      }
    if (illum) cuda::copy_to_host(illumination.data(), illumination_device_.data(), illumination_device_.bytes(), st);
  }

  // lambda^n from mu^{n+1}, mu^{n+2} (kernels/cuda/fdtd_adjoint_cuda.hpp), the adjoint sources R^T r^n and Z, from
  // mu^{nt} = mu^{nt+1} = 0; before each step gradient += mu^{n+1} a^n (and illumination += (u^n)^2) on the device
  // (the 2026-12-04 path: SPECWAVE_CUDA_ADJOINT=mu).
  void adjoint_in_mu(std::span<const double> residual, std::span<double> gradient, std::span<double> illumination) {
    const FieldLayout& L = setup_.layout;
    const int nt = setup_.nt;
    const cudaStream_t st = stream_.handle();
    // The caller's sums continue on the device (the same additions, in the same order, as on the CPU).
    cuda::copy_to_device(gradient_device_.data(), gradient.data(), gradient_device_.bytes(), st);
    double* illum = nullptr;
    if (!illumination.empty()) {
      cuda::copy_to_device(illumination_device_.data(), illumination.data(), illumination_device_.bytes(), st);
      illum = illumination_device_.data();
    }
    cuda::copy_to_device(residual_device_.data(), residual.data(), residual_device_.bytes(), st);
    mu_.zero(st);
    mu_next_.zero(st);
    w_.zero(st);
    for (auto& s : adjoint_slabs_) s.zero(st);
    // u^{n+1}, u^n, u^{n-1} (dense): the history hands them out in decreasing n.
    auto& [u_next, u_now, u_before] = history_fields_;
    history_->field(*this, nt, u_next.data());
    history_->field(*this, nt - 1, u_now.data());
    const cuda::PointGather<T> sources = adjoint_sources_.view();
    shot_step(ShotPass::adjoint, 0, nt);  // the adjoint pass begins (replays count as its)
    for (int n = nt - 1; n >= 0; --n) {
      if (n >= 1)
        history_->field(*this, n - 1, u_before.data());
      else
        u_before.zero(st);
      cuda::accumulate_gradient(L, mu_.data(), u_next.data(), u_now.data(), u_before.data(), vel2dt2_.data(),
                                gradient_device_.data(), illum, st);
      adjoint_step_.mu = mu_.data();
      adjoint_step_.mu_next = mu_next_.data();
      cuda::fdtd_adjoint_step(adjoint_step_, st);  // mu_next = lambda^n without the adjoint sources
      cuda::add_point_signals(mu_next_.data(), sources, residual_device_.data(), nt, n, st);
      if (setup_.free_surface) cuda::zero_top_plane(L, mu_next_.data(), st);
      std::swap(mu_, mu_next_);
      std::swap(u_next, u_now);
      std::swap(u_now, u_before);
      shot_step(ShotPass::adjoint, nt - n, nt);
    }
    cuda::copy_to_host(gradient.data(), gradient_device_.data(), gradient_device_.bytes(), st);
    if (illum) cuda::copy_to_host(illumination.data(), illumination_device_.data(), illumination_device_.bytes(), st);
  }

  // The perturbation's state of born(), made at its first call (check-gradient; an inversion never calls it).
  struct BornState {
    DeviceForwardState<T> du;
    cuda::DeviceArray<T> u_before, dm;
    cuda::DeviceArray<double> traces;
    BornState(const FdtdSetup<T>& setup, const std::array<cuda::DeviceArray<T>, 3>& a,
              const std::array<cuda::DeviceArray<T>, 3>& b, std::size_t samples)
        : du(setup, a, b),
          u_before(setup.layout.size()),
          dm(std::size_t(setup.layout.interior_points())),
          traces(samples) {}
  };

  // The receivers' device lists, the adjoint sources (receiver r's points in the CPU's order, r then p, grouped by
  // target point) and the traces, for setup_'s receivers: at construction, and for a shot with receivers of its own
  // that differ from the last shot's (after the device is idle, so that no queued step reads the old lists).
  void make_receivers() {
    cuda::synchronize();
    const auto& rec = setup_.receivers;
    const std::size_t n_receivers = rec.offsets.size() - 1;
    const std::size_t samples = n_receivers * std::size_t(setup_.nt);
    receiver_index_ = upload(rec.index);
    receiver_factor_ = upload(rec.factor);
    receiver_offsets_ = upload(rec.offsets);
    std::vector<std::int32_t> owner(rec.index.size());
    for (std::size_t r = 0; r < n_receivers; ++r)
      for (std::int32_t p = rec.offsets[r]; p < rec.offsets[r + 1]; ++p) owner[std::size_t(p)] = std::int32_t(r);
    adjoint_sources_ = DeviceGather<T>(rec.index.size());
    adjoint_sources_.assign(gather_by_target(rec.index, rec.factor, owner), stream_.handle());
    scaled_sources_ = DeviceGather<T>(rec.index.size());
    receiver_owner_ = std::move(owner);
    receiver_interior_ = cuda::DeviceArray<std::int64_t>(rec.index.size());
    traces_device_ = cuda::DeviceArray<double>(samples);
    residual_device_ = cuda::DeviceArray<double>(samples);
    traces_.assign(samples, 0.0);
  }

  void begin_shot(int shot) {
    if (const auto* own = shot_receivers_.own(shot); own && setup_.set_receivers(*own)) make_receivers();
    const cudaStream_t st = stream_.handle();
    state_.reset(st);
    traces_device_.zero(st);
    const PointLists<T> lists = setup_.sources(source_stencils_.at(shot));  // with the current model's (v dt)^2
    sources_.assign(gather_by_target(lists.index, lists.factor, lists.owner), st);
    const auto& wavelets = wavelets_.at(shot);
    std::vector<double> flat(wavelets.size() * std::size_t(setup_.nt));
    for (std::size_t j = 0; j < wavelets.size(); ++j)
      std::copy_n(wavelets[j].begin(), setup_.nt, flat.begin() + std::ptrdiff_t(j * setup_.nt));
    cuda::copy_to_device(wavelets_device_.data(), flat.data(), flat.size() * sizeof(double), st);
    history_shot_ = -1;
  }
  // u^{n+1} into state_.u_prev: the step, f^n injected (before Z); the caller applies Z and swaps.
  void background_step(int n) {
    const cudaStream_t st = stream_.handle();
    state_.step(setup_, vel2dt2_.data(), st);
    cuda::add_point_signals(state_.u_prev.data(), sources_.view(), wavelets_device_.data(), setup_.nt, n, st);
    // (step(), and Born runs, which step here; u^{n+1} is in u_prev now)
    forward_step(n + 1, setup_.nt, [&] { return field_stats_(setup_.layout, state_.u_prev.data(), st); });
  }

  // DeviceForwardStepper
  cudaStream_t stream() const override { return stream_.handle(); }
  std::size_t state_values() const override { return state_.values(); }
  void save_state(T* out) override {
    const cudaStream_t st = stream_.handle();
    cuda::copy_async(out, state_.u.data(), state_.u.bytes(), st);
    out += state_.u.size();
    cuda::copy_async(out, state_.u_prev.data(), state_.u_prev.bytes(), st);
    out += state_.u_prev.size();
    for (const auto& s : state_.slabs) {
      cuda::copy_async(out, s.data(), s.bytes(), st);
      out += s.size();
    }
  }
  void restore_state(const T* in) override {
    const cudaStream_t st = stream_.handle();
    cuda::copy_async(state_.u.data(), in, state_.u.bytes(), st);
    in += state_.u.size();
    cuda::copy_async(state_.u_prev.data(), in, state_.u_prev.bytes(), st);
    in += state_.u_prev.size();
    for (auto& s : state_.slabs) {
      cuda::copy_async(s.data(), in, s.bytes(), st);
      in += s.size();
    }
  }
  void step(int n) override {
    if (counting_) ++history_steps_;
    const cudaStream_t st = stream_.handle();
    const int n_receivers = int(setup_.receivers.offsets.size()) - 1;
    cuda::record_receivers(state_.u.data(), receiver_index_.data(), receiver_factor_.data(), receiver_offsets_.data(),
                           n_receivers, traces_device_.data(), setup_.nt, n, st);
    background_step(n);
    state_.finish_step(setup_, st);
  }
  std::size_t field_values() const override { return std::size_t(setup_.layout.interior_points()); }
  void copy_field(T* out) override {
    const cudaStream_t st = stream_.handle();
    if (history_tier_ == HistoryTier::device) return cuda::unpad(setup_.layout, state_.u.data(), out, st);
    cuda::unpad(setup_.layout, state_.u.data(), dense_.data(), st);  // then into pinned host memory
    cuda::copy_async(out, dense_.data(), dense_.bytes(), st);
  }

  // Frozen from the plan: dt, the stability limit of the model, the acquisition.
  double dt_, v_limit_;
  std::vector<std::vector<PointStencil>> source_stencils_;  // [shot][source]
  std::vector<std::vector<std::vector<double>>> wavelets_;  // [shot][source][n]
  int device_;                                              // selected before any allocation
  cuda::Stream stream_;                                     // created before, destroyed after the buffers used in it
  DeviceFieldStatsBuffers field_stats_;                     // forward_step's checks
  FdtdSetup<T> setup_;  // host: the model (v dt)^2 as set, the geometry, the point lists
  cuda::DeviceArray<T> vel2dt2_;
  std::array<cuda::DeviceArray<T>, 3> pml_a_, pml_b_;
  DeviceForwardState<T> state_;
  std::unique_ptr<DeviceWavefieldHistory<T>> history_;
  HistoryTier history_tier_;
  bool counting_ = false;
  long long history_steps_ = 0;
  cuda::DeviceArray<index_t> receiver_index_;
  cuda::DeviceArray<T> receiver_factor_;
  cuda::DeviceArray<std::int32_t> receiver_offsets_;
  DeviceGather<T> adjoint_sources_, sources_, scaled_sources_;  // (scaled: the adjoint in omega's, V R^T)
  std::vector<std::int32_t> receiver_owner_;                    // each receiver point's receiver
  cuda::DeviceArray<std::int64_t> receiver_interior_;           // each adjoint-source target's interior index
  bool adjoint_in_mu_ = adjoint_in_mu_from_environment();
  cuda::DeviceArray<double> wavelets_device_, traces_device_, residual_device_;
  cuda::DeviceArray<T> dense_;
  cuda::DeviceArray<T> mu_, mu_next_, w_;
  std::vector<cuda::DeviceArray<T>> adjoint_slabs_;
  FdtdAdjointStep<T> adjoint_step_;
  std::array<cuda::DeviceArray<T>, 3> history_fields_;               // u^{n+1}, u^n, u^{n-1}
  cuda::DeviceArray<double> gradient_device_, illumination_device_;  // (the image, in omega)
  cuda::DeviceArray<T> image_partial_;                               // fp32: the image's partial sums
  std::vector<double> image_;                                        // the image on the host (kept)
  std::unique_ptr<BornState> born_;
  std::vector<double> traces_;
  int history_shot_ = -1;
  ShotReceivers shot_receivers_;  // a shot's own receivers (none: every shot records the plan's)
};

}  // namespace

std::unique_ptr<GradientPropagator> make_fdtd_cuda_gradient(const Case& c, const Plan& plan,
                                                            const HistoryChoice& history) {
  if (c.run.precision == Precision::fp64) return std::make_unique<FdtdCudaGradient<double>>(c, plan, history);
  return std::make_unique<FdtdCudaGradient<float>>(c, plan, history);
}

}  // namespace specwave
