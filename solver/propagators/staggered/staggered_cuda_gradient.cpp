// The staggered scheme's forward, Born and adjoint operators on an NVIDIA GPU (docs/numerics.md, "The staggered
// scheme's adjoint"; docs/gpu.md): the GPU counterpart of staggered_cpu_gradient.cpp, step for step, on the kernels of
// kernels/cuda/staggered_cuda.hpp (their bodies are the CPU-tested kernels/staggered_kernels.hpp). The model, the
// fields, the CPML and attenuation memory (forward, Born perturbation, adjoint), the history (device memory or pinned
// host memory: solver/propagators/history/device_history.hpp) and the fp64 images live on the device; the host sees
// the traces and the images once per shot and assembles the gradients as the CPU does (staggered_gradient_model.hpp).
// Sources and adjoint sources are added without atomics, grouped by target point in the CPU's order, so replayed steps
// are bitwise the same. A history field is the step's divergence D and, with a density parameter, the three velocity
// increments; the device histories keep no field beside a state, so here the state holds it (restoring a checkpoint
// restores the field of its step). One rank.
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/fdtd_adjoint_cuda.hpp"
#include "kernels/cuda/fdtd_cuda.hpp"
#include "kernels/cuda/staggered_cuda.hpp"
#include "solver/forward/progress.hpp"
#include "solver/plan/shot_receivers.hpp"
#include "solver/propagators/device_field_stats.hpp"
#include "solver/propagators/gpu/device_gather.hpp"
#include "solver/propagators/history/device_history.hpp"
#include "solver/propagators/staggered/staggered_device.hpp"
#include "solver/propagators/staggered/staggered_gradient_model.hpp"

namespace specwave {
namespace {

template <class T>
class StaggeredCudaGradient final : public StaggeredGradientModel<T>, private DeviceForwardStepper<T> {
  using Model = StaggeredGradientModel<T>;
  using Model::dt_, Model::setup_, Model::source_stencils_, Model::wavelets_, Model::with_density_,
      Model::density_gradient_;

 public:
  StaggeredCudaGradient(const Case& c, const Plan& plan, const HistoryChoice& history)
      : Model(c, plan),
        device_(select_gpu(plan.device)),
        stream_(),
        model_(setup_),
        state_(setup_),
        divergence_(points()),
        history_(make_device_history<T>(history)),
        shot_receivers_(c, plan) {
    if (with_density_)
      for (auto& dw : increment_) dw = cuda::DeviceArray<T>(setup_.layout.size());
    set_receivers(plan.receivers);
    // Room for the largest shot, so that begin_shot never allocates.
    const auto [max_points, max_sources] = largest_shot(plan.sources);
    sources_ = DeviceGather<T>(max_points);
    born_sources_ = DeviceGather<T>(max_points);
    source_index_ = cuda::DeviceArray<index_t>(max_points);
    source_factor_ = cuda::DeviceArray<T>(max_points);
    source_owner_ = cuda::DeviceArray<std::int32_t>(max_points);
    source_point_ = cuda::DeviceArray<std::int64_t>(max_points);
    source_image_ = cuda::DeviceArray<double>(std::max<std::size_t>(max_sources, 1));
    running_ = cuda::DeviceArray<double>(max_sources * std::size_t(setup_.nt));
    illumination_ = cuda::DeviceArray<double>(points());
  }

  std::string name() const override { return this->scheme_name("cuda"); }
  std::string history_name() const override { return history_->name(); }
  std::size_t history_bytes() const override { return history_->bytes(); }
  long long history_forward_steps() const override { return history_steps_; }

  std::vector<double> forward(int shot, bool keep_history) override {
    begin_shot(shot);
    const cudaStream_t st = stream_.handle();
    counting_ = keep_history;
    if (keep_history) {
      history_steps_ = 0;
      illumination_.zero(st);
      accumulate_illumination_ = true;
      history_->run_forward(*this, setup_.nt);
      accumulate_illumination_ = false;
      history_shot_ = shot;
    } else {
      for (int n = 0; n < setup_.nt; ++n) step(n);
    }
    cuda::copy_to_host(traces_.data(), traces_device_.data(), traces_device_.bytes(), st);
    return traces_;
  }

  // The CPU's adjoint (staggered_cpu_gradient.cpp) on the device: for n = nt - 1 .. 0 the free surface's zeroed plane,
  // the sources' imaging term, the step's transpose with the imaging conditions, then the receivers' adjoint sources.
  void adjoint(std::span<const double> residual, std::span<double> gradient, std::span<double> illumination) override {
    const FieldLayout& L = setup_.layout;
    const int nt = setup_.nt;
    check_adjoint_arguments(history_shot_ >= 0, traces_.size(), points(), residual.size(), gradient.size(),
                            illumination.size());
    const cudaStream_t st = stream_.handle();
    Adjoint& a = adjoint_state();
    cuda::copy_to_device(residual_device_.data(), residual.data(), residual.size() * sizeof(double), st);
    const StaggeredStep<T> f = a.fields.step(setup_, model_);
    T* const q[3] = {a.q[0].data(), a.q[1].data(), a.q[2].data()};
    T* const e[3] = {a.e[0].data(), a.e[1].data(), a.e[2].data()};
    StaggeredAdjointStep<T> s = adjoint_view(f, q, e);
    s.image = a.image.data();
    s.divergence = a.field.data();
    for (int k = 0; k < 3 && with_density_; ++k) {
      s.buoyancy_image[k] = a.buoyancy[std::size_t(k)].data();
      s.velocity_increment[k] = a.field.data() + points() + std::size_t(k) * L.size();
    }
    const int n_sources = int(sources_list_.index.size());
    const std::size_t n_shot_sources = source_stencils_.at(std::size_t(history_shot_)).size();
    source_image_.zero(st);
    const cuda::PointGather<T> adjoint_sources = adjoint_sources_.view();
    shot_step(ShotPass::adjoint, 0, nt);  // the adjoint pass begins (replays count as its)
    for (int n = nt - 1; n >= 0; --n) {
      history_->field(*this, n + 1, a.field.data());  // field n + 1 is D^n, what step n used (and its dw)
      if (setup_.free_surface) cuda::zero_top_plane(L, s.u, st);
      cuda::add_source_image(s.u, source_index_.data(), source_factor_.data(), source_owner_.data(),
                             source_point_.data(), n_sources, running_.data(), nt, n, a.image.data(),
                             source_image_.data(), st);
      cuda::staggered_adjoint_step(s, st);
      cuda::add_point_signals(s.u, adjoint_sources, residual_device_.data(), nt, n, st);
      shot_step(ShotPass::adjoint, nt - n, nt);
    }
    history_->field(*this, 0, a.field.data());  // hands out the last field (zero: no step before n = 0)
    std::vector<double> image(points());
    cuda::copy_to_host(image.data(), a.image.data(), a.image.bytes(), st);
    this->add_velocity_gradient(image.data(), gradient);
    if (!illumination.empty()) {
      std::vector<double> sum(points());
      cuda::copy_to_host(sum.data(), illumination_.data(), illumination_.bytes(), st);
      for (std::size_t k = 0; k < illumination.size(); ++k) illumination[k] += sum[k];
    }
    if (!with_density_) return;
    std::array<std::vector<double>, 3> buoyancy;
    for (std::size_t k = 0; k < 3; ++k) {
      buoyancy[k].resize(L.size());
      cuda::copy_to_host(buoyancy[k].data(), a.buoyancy[k].data(), a.buoyancy[k].bytes(), st);
    }
    std::vector<double> source_image(n_shot_sources);
    if (n_shot_sources > 0)
      cuda::copy_to_host(source_image.data(), source_image_.data(), n_shot_sources * sizeof(double), st);
    density_gradient_ = this->density_gradient(
        history_shot_, image.data(), {buoyancy[0].data(), buoyancy[1].data(), buoyancy[2].data()}, source_image);
  }

 private:
  void model_changed() override { model_.update(setup_, stream_.handle()); }
  std::size_t points() const { return std::size_t(setup_.layout.interior_points()); }

  // The receivers of `stencils` (the CPU's lists), the adjoint sources (receiver r's points in the CPU's order, r then
  // p, grouped by target point), the traces and residuals on the device; after the device is idle, so that no queued
  // step reads the old lists.
  void set_receivers(const std::vector<PointStencil>& stencils) {
    cuda::synchronize();
    receivers_ = make_point_lists<T>(setup_.layout, stencils, 1.0, nullptr);
    const std::size_t n_receivers = receivers_.offsets.size() - 1;
    const std::size_t samples = n_receivers * std::size_t(setup_.nt);
    receiver_index_ = upload(receivers_.index);
    receiver_factor_ = upload(receivers_.factor);
    receiver_offsets_ = upload(receivers_.offsets);
    std::vector<std::int32_t> owner(receivers_.index.size());
    for (std::size_t r = 0; r < n_receivers; ++r)
      for (std::int32_t p = receivers_.offsets[r]; p < receivers_.offsets[r + 1]; ++p) owner[std::size_t(p)] = int(r);
    adjoint_sources_ = DeviceGather<T>(receivers_.index.size());
    adjoint_sources_.assign(gather_by_target(receivers_.index, receivers_.factor, owner), stream_.handle());
    traces_device_ = cuda::DeviceArray<double>(samples);
    residual_device_ = cuda::DeviceArray<double>(samples);
    traces_.assign(samples, 0.0);
  }

  void begin_shot(int shot) {
    // A shot's own receivers: the device lists anew when they change (set_receivers waits for the device).
    if (const auto* own = shot_receivers_.own(shot); own && shot_receivers_.list_key(shot) != receivers_key_) {
      set_receivers(*own);
      receivers_key_ = shot_receivers_.list_key(shot);
    }
    const cudaStream_t st = stream_.handle();
    state_.zero(st);
    divergence_.zero(st);
    for (auto& dw : increment_) dw.zero(st);
    traces_device_.zero(st);
    density_gradient_.clear();  // add_density_gradient refuses until the next adjoint
    sources_list_ = setup_.sources(source_stencils_.at(std::size_t(shot)));
    sources_.assign(gather_by_target(sources_list_.index, sources_list_.factor, sources_list_.owner), st);
    // The adjoint's imaging term of the sources: each point's padded and compact index, factor and owner.
    const std::size_t n = sources_list_.index.size();
    std::vector<std::int64_t> compact(n);
    for (std::size_t p = 0; p < n; ++p) {
      int z, y, x;
      setup_.layout.coordinates(sources_list_.index[p], z, y, x);
      compact[p] = (std::int64_t(z) * setup_.layout.ny + y) * setup_.layout.nx + x;
    }
    if (n > 0) {
      cuda::copy_to_device(source_index_.data(), sources_list_.index.data(), n * sizeof(index_t), st);
      cuda::copy_to_device(source_factor_.data(), sources_list_.factor.data(), n * sizeof(T), st);
      cuda::copy_to_device(source_owner_.data(), sources_list_.owner.data(), n * sizeof(std::int32_t), st);
      cuda::copy_to_device(source_point_.data(), compact.data(), n * sizeof(std::int64_t), st);
    }
    // F^n = sum_{m <= n} s(t_m) (running_sums), fp64 on the device, converted to T at injection as on the CPU.
    const std::vector<std::vector<double>> running = running_sums(wavelets_.at(std::size_t(shot)));
    std::vector<double> flat(running.size() * std::size_t(setup_.nt));
    for (std::size_t j = 0; j < running.size(); ++j)
      std::copy_n(running[j].begin(), setup_.nt, flat.begin() + std::ptrdiff_t(j * std::size_t(setup_.nt)));
    if (!flat.empty()) cuda::copy_to_device(running_.data(), flat.data(), flat.size() * sizeof(double), st);
    history_shot_ = -1;
  }

  // The Born run of a relative perturbation (staggered_cpu_gradient.cpp's born_run, step for step).
  std::vector<double> born_run(int shot, const std::vector<T>& relative, const std::array<std::vector<T>, 3>* buoyancy,
                               const std::vector<T>& source_relative) override {
    const FieldLayout& L = setup_.layout;
    begin_shot(shot);
    counting_ = false;  // (the background's steps are not a history's)
    const cudaStream_t st = stream_.handle();
    if (!born_) born_ = std::make_unique<Born>(setup_, traces_.size(), with_density_);
    Born& b = *born_;
    if (b.traces.size() != traces_.size()) b.traces = cuda::DeviceArray<double>(traces_.size());
    b.du.zero(st);
    b.traces.zero(st);
    cuda::copy_to_device(b.relative.data(), relative.data(), relative.size() * sizeof(T), st);
    if (buoyancy)
      for (std::size_t a = 0; a < 3; ++a)
        cuda::copy_to_device(b.buoyancy[a].data(), (*buoyancy)[a].data(), b.buoyancy[a].bytes(), st);
    // The sources' factors times the relative perturbation at their points (T, as the CPU rounds r * factor).
    std::vector<T> factor(sources_list_.factor.size());
    for (std::size_t p = 0; p < factor.size(); ++p) {
      int z, y, x;
      L.coordinates(sources_list_.index[p], z, y, x);
      const std::size_t k = (std::size_t(z) * L.ny + y) * L.nx + x;
      const T r = source_relative.empty() ? relative[k] : relative[k] + source_relative[sources_list_.owner[p]];
      factor[p] = r * sources_list_.factor[p];
    }
    born_sources_.assign(gather_by_target(sources_list_.index, factor, sources_list_.owner), st);
    const StaggeredStep<T> s = b.du.step(setup_, model_);
    StaggeredBornScatter<T> scatter{L, s.u, s.kdt, b.relative.data(), divergence_.data(), s.mechanisms};
    for (int l = 0; l < s.mechanisms; ++l) scatter.memory[l] = s.r[l], scatter.g[l] = s.g[l];
    scatter.half_dt = s.half_dt;
    const int n_receivers = int(receivers_.offsets.size()) - 1;
    for (int n = 0; n < setup_.nt; ++n) {
      cuda::record_receivers(s.u, receiver_index_.data(), receiver_factor_.data(), receiver_offsets_.data(),
                             n_receivers, b.traces.data(), setup_.nt, n, st);
      step(n);  // the background: divergence_ = D^n (and increment_ = dw^n with a density parameter)
      cuda::staggered_velocity_step(s, st);
      if (buoyancy)
        for (std::size_t a = 0; a < 3; ++a)
          cuda::add_products(s.w[a], b.buoyancy[a].data(), increment_[a].data(), std::size_t(L.size()), st);
      cuda::staggered_pressure_step(s, st);
      cuda::staggered_born_scatter(scatter, st);
      cuda::add_point_signals(s.u, born_sources_.view(), running_.data(), setup_.nt, n, st);
      if (setup_.free_surface) cuda::zero_top_plane(L, s.u, st);
    }
    std::vector<double> out(traces_.size());
    cuda::copy_to_host(out.data(), b.traces.data(), b.traces.bytes(), st);
    return out;
  }

  // DeviceForwardStepper. The state: the fields, the CPML and attenuation memory, and the history's field (D, dw).
  cudaStream_t stream() const override { return stream_.handle(); }
  std::vector<cuda::DeviceArray<T>*> state_arrays() {
    std::vector<cuda::DeviceArray<T>*> out = state_.arrays();
    out.push_back(&divergence_);
    if (with_density_)
      for (auto& dw : increment_) out.push_back(&dw);
    return out;
  }
  std::size_t state_values() const override { return state_.values() + field_values(); }
  void save_state(T* out) override { save_arrays(state_arrays(), out, stream_.handle()); }
  void restore_state(const T* in) override { restore_arrays(state_arrays(), in, stream_.handle()); }
  // Records u^n, then u^{n+1}: the velocity and pressure steps (D^n into divergence_), the sources, the free surface.
  void step(int n) override {
    if (counting_) ++history_steps_;
    const cudaStream_t st = stream_.handle();
    const FieldLayout& L = setup_.layout;
    const int n_receivers = int(receivers_.offsets.size()) - 1;
    cuda::record_receivers(state_.u.data(), receiver_index_.data(), receiver_factor_.data(), receiver_offsets_.data(),
                           n_receivers, traces_device_.data(), setup_.nt, n, st);
    if (accumulate_illumination_) cuda::add_squares(L, state_.u.data(), illumination_.data(), st);
    StaggeredStep<T> s = state_.step(setup_, model_);
    s.divergence_out = divergence_.data();
    if (with_density_)
      for (std::size_t a = 0; a < 3; ++a) s.increment_out[a] = increment_[a].data();
    cuda::staggered_velocity_step(s, st);
    cuda::staggered_pressure_step(s, st);
    cuda::add_point_signals(state_.u.data(), sources_.view(), running_.data(), setup_.nt, n, st);
    if (setup_.free_surface) cuda::zero_top_plane(L, state_.u.data(), st);
    forward_step(n + 1, setup_.nt, [&] { return field_stats_(L, state_.u.data(), st); });
  }
  // The history's field: D of the last step and, for the density gradient, its velocity increments dw_a (padded).
  std::size_t field_values() const override {
    return points() + (with_density_ ? 3 * std::size_t(setup_.layout.size()) : 0);
  }
  void copy_field(T* out) override {
    const cudaStream_t st = stream_.handle();
    cuda::copy_async(out, divergence_.data(), divergence_.bytes(), st);
    out += divergence_.size();
    if (with_density_)
      for (const auto& dw : increment_) {
        cuda::copy_async(out, dw.data(), dw.bytes(), st);
        out += dw.size();
      }
  }

  // The adjoint's fields, made by the first adjoint and kept (zeroed for each).
  struct Adjoint {
    DeviceStaggeredFields<T> fields;  // u-bar, w-bar, phi-bar, chi-bar, r-bar
    std::array<cuda::DeviceArray<T>, 3> q, e;
    cuda::DeviceArray<T> field;  // the history's field of the step being transposed
    cuda::DeviceArray<double> image;
    std::array<cuda::DeviceArray<double>, 3> buoyancy;
    Adjoint(const StaggeredSetup<T>& s, std::size_t field_values, bool density)
        : fields(s), field(field_values), image(std::size_t(s.layout.interior_points())) {
      for (std::size_t a = 0; a < 3; ++a) {
        q[a] = cuda::DeviceArray<T>(s.layout.size());
        e[a] = cuda::DeviceArray<T>(s.layout.size());
        if (density) buoyancy[a] = cuda::DeviceArray<double>(s.layout.size());
      }
    }
  };
  Adjoint& adjoint_state() {
    if (!adjoint_) adjoint_ = std::make_unique<Adjoint>(setup_, field_values(), with_density_);
    const cudaStream_t st = stream_.handle();
    adjoint_->fields.zero(st);
    for (std::size_t a = 0; a < 3; ++a) {
      adjoint_->q[a].zero(st);
      adjoint_->e[a].zero(st);
      adjoint_->buoyancy[a].zero(st);  // (none without a density parameter: a no-op)
    }
    adjoint_->image.zero(st);
    return *adjoint_;
  }

  // The Born perturbation's state, made by the first Born run (check-gradient; an inversion never calls it).
  struct Born {
    DeviceStaggeredFields<T> du;
    cuda::DeviceArray<T> relative;
    std::array<cuda::DeviceArray<T>, 3> buoyancy;
    cuda::DeviceArray<double> traces;
    Born(const StaggeredSetup<T>& s, std::size_t samples, bool density)
        : du(s), relative(std::size_t(s.layout.interior_points())), traces(samples) {
      if (density)
        for (auto& b : buoyancy) b = cuda::DeviceArray<T>(s.layout.size());
    }
  };

  int device_;                           // selected before any allocation
  cuda::Stream stream_;                  // created before, destroyed after the buffers used in it
  DeviceFieldStatsBuffers field_stats_;  // forward_step's checks
  DeviceStaggeredModel<T> model_;
  DeviceStaggeredFields<T> state_;
  cuda::DeviceArray<T> divergence_;                // D of the last forward step (compact)
  std::array<cuda::DeviceArray<T>, 3> increment_;  // dw_a of the last step (padded; density only)
  std::unique_ptr<DeviceWavefieldHistory<T>> history_;
  bool counting_ = false, accumulate_illumination_ = false;
  long long history_steps_ = 0;
  ShotReceivers shot_receivers_;  // a shot's own receivers (none: every shot records the plan's)
  int receivers_key_ = -1;        // ShotReceivers::list_key of the receivers the device lists hold (-1: the plan's)
  PointLists<T> receivers_, sources_list_;
  cuda::DeviceArray<index_t> receiver_index_;
  cuda::DeviceArray<T> receiver_factor_;
  cuda::DeviceArray<std::int32_t> receiver_offsets_;
  DeviceGather<T> adjoint_sources_, sources_, born_sources_;
  cuda::DeviceArray<index_t> source_index_;  // the shot's source points, for the adjoint's imaging term
  cuda::DeviceArray<T> source_factor_;
  cuda::DeviceArray<std::int32_t> source_owner_;
  cuda::DeviceArray<std::int64_t> source_point_;
  cuda::DeviceArray<double> source_image_, running_, traces_device_, residual_device_, illumination_;
  std::vector<double> traces_;
  int history_shot_ = -1;
  std::unique_ptr<Adjoint> adjoint_;
  std::unique_ptr<Born> born_;
};

}  // namespace

std::unique_ptr<GradientPropagator> make_staggered_cuda_gradient(const Case& c, const Plan& plan,
                                                                 const HistoryChoice& history) {
  if (c.run.precision == Precision::fp64) return std::make_unique<StaggeredCudaGradient<double>>(c, plan, history);
  return std::make_unique<StaggeredCudaGradient<float>>(c, plan, history);
}

}  // namespace specwave
