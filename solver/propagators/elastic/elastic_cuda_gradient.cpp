// The elastic scheme's forward, Born and adjoint operators on an NVIDIA GPU (docs/numerics.md, "The elastic adjoint";
// docs/gpu.md): the GPU counterpart of elastic_cpu_gradient.cpp, step for step, on the kernels of
// kernels/cuda/elastic_cuda.hpp (the step's and the adjoint's bodies are the CPU-tested kernels/elastic_kernels.hpp and
// kernels/elastic_adjoint_kernels.hpp). The model's coefficients, the fields, the CPML memory (forward, Born
// perturbation, adjoint), the history (device memory or pinned host memory: solver/propagators/history/
// device_history.hpp) and the coefficients' fp64 images live on the device; the host sees the traces and, once per
// shot, the images, from which it assembles the gradients of vp, vs and the density as the CPU does
// (elastic_gradient_model.hpp). Sources and adjoint sources are added without atomics, grouped by target point in the
// CPU's order. A history field is the step's increments packed on the fields' computed ranges; the device histories
// keep no field beside a state, so here the state holds it (restoring a checkpoint restores its step's field). One
// rank.
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/elastic_cuda.hpp"
#include "kernels/cuda/fdtd_adjoint_cuda.hpp"
#include "kernels/cuda/fdtd_cuda.hpp"
#include "kernels/cuda/staggered_cuda.hpp"
#include "solver/forward/progress.hpp"
#include "solver/propagators/device_field_stats.hpp"
#include "solver/propagators/elastic/elastic_device.hpp"
#include "solver/propagators/elastic/elastic_gradient_model.hpp"
#include "solver/propagators/history/device_history.hpp"

namespace specwave {
namespace {

template <class T>
class ElasticCudaGradient final : public ElasticGradientModel<T>, private DeviceForwardStepper<T> {
  using Model = ElasticGradientModel<T>;
  using Model::dt_, Model::setup_, Model::wavelets_, Model::packed_values_, Model::lists_, Model::list_receivers_,
      Model::sources_, Model::running_, Model::vp_gradient_, Model::density_gradient_, Model::shot_;
  using typename Model::Perturbation;
  using P = ElasticPoints<T>;

 public:
  ElasticCudaGradient(const Case& c, const Plan& plan, const HistoryChoice& history)
      : Model(c, plan),
        device_(select_gpu(plan.device)),
        stream_(),
        size_(std::size_t(setup_.layout.size())),
        model_(setup_),
        state_(setup_),
        increments_(elastic_fields * size_),
        packed_(packed_values_),
        pressure_(size_),
        history_(make_device_history<T>(history)),
        illumination_(setup_.vp.size()) {
    // Room for the largest shot, so that begin_shot never allocates for its sources (nor for its receivers, unless
    // they change).
    const auto [max_points, max_sources] = largest_shot(plan.sources);
    for (auto& g : sources_device_) g = DeviceGather<T>(max_points);
    for (auto& g : born_sources_) g = DeviceGather<T>(max_points);
    signals_ = cuda::DeviceArray<double>(3 * max_sources * std::size_t(setup_.nt));
    point_field_ = cuda::DeviceArray<std::uint8_t>(max_points);
    point_kind_ = cuda::DeviceArray<std::uint8_t>(max_points);
    point_index_ = cuda::DeviceArray<index_t>(max_points);
    point_factor_ = cuda::DeviceArray<T>(max_points);
    point_source_ = cuda::DeviceArray<std::int32_t>(max_points);
    source_image_ = cuda::DeviceArray<double>(std::max<std::size_t>(max_points, 1));
  }

  std::string name() const override { return std::string("elastic-cuda-") + (sizeof(T) == 4 ? "fp32" : "fp64"); }
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
    return traces_of_device(raw_);
  }

  // The CPU's adjoint on the device: backwards from rest at nt, for n = nt - 1 .. 0, s_zz = 0 on a free surface; the
  // stress sources' images; the stress images and the stress step's transpose; the velocity receivers' adjoint
  // sources; the forces' images; the velocity images and the velocity step's transpose; the pressure receivers'
  // adjoint sources.
  void adjoint(std::span<const double> residual, std::span<double> gradient, std::span<double> illumination) override {
    const FieldLayout& L = setup_.layout;
    const int nt = setup_.nt;
    const std::size_t points = setup_.vp.size();
    check_adjoint_arguments(history_shot_ >= 0, (list_receivers_[0] + list_receivers_[1]) * std::size_t(nt), points,
                            residual.size(), gradient.size(), illumination.size());
    const cudaStream_t st = stream_.handle();
    Adjoint& a = adjoint_state();
    const ElasticStep<T> s = a.fields.step(setup_, model_);
    const std::array<std::vector<double>, 2> rows = this->list_adjoint_sources(residual);
    for (std::size_t k = 0; k < 2; ++k)
      if (!rows[k].empty())
        cuda::copy_to_device(adjoint_rows_[k].data(), rows[k].data(), rows[k].size() * sizeof(double), st);
    const int n_points = int(sources_.index.size());
    source_image_.zero(st);
    shot_step(ShotPass::adjoint, 0, nt);  // the adjoint pass begins (replays count as its)
    for (int n = nt - 1; n >= 0; --n) {
      history_->field(*this, n + 1, a.field.data());  // field n + 1: what step n's coefficients multiplied (packed)
      const T* inc = a.field.data();
      if (setup_.free_surface) cuda::zero_top_plane(L, s.f[szz], st);
      source_images(s, n, false, n_points);
      cuda::elastic_normal_images(s, inc, a.images[0].data(), a.images[1].data(), st);
      for (int c = 0; c < 3; ++c)
        cuda::elastic_add_packed_product(s, szy + c, a.images[2 + std::size_t(c)].data(), s.f[szy + c], inc, st);
      cuda::elastic_stress_adjoint(s, a.scratch.data(), st);
      cuda::add_point_signals(a.fields.all.data(), adjoint_sources_[1].view(), adjoint_rows_[1].data(), nt, n, st);
      source_images(s, n, true, n_points);
      for (int c = 0; c < 3; ++c)
        cuda::elastic_add_packed_product(s, vz + c, a.images[5 + std::size_t(c)].data(), s.f[vz + c], inc, st);
      cuda::elastic_velocity_adjoint(s, a.scratch.data(), st);
      cuda::add_point_signals(a.fields.all.data(), adjoint_sources_[0].view(), adjoint_rows_[0].data(), nt, n, st);
      shot_step(ShotPass::adjoint, nt - n, nt);
    }
    history_->field(*this, 0, a.field.data());  // hands out the last field
    ElasticImages images(size_);
    std::vector<double>* host[8] = {&images.lam,     &images.mu2,    &images.mudt[0], &images.mudt[1],
                                    &images.mudt[2], &images.bdt[0], &images.bdt[1],  &images.bdt[2]};
    for (std::size_t k = 0; k < 8; ++k)
      cuda::copy_to_host(host[k]->data(), a.images[k].data(), a.images[k].bytes(), st);
    std::vector<double> source_image(std::size_t(n_points), 0.0);
    if (n_points > 0)
      cuda::copy_to_host(source_image.data(), source_image_.data(), std::size_t(n_points) * sizeof(double), st);
    this->assemble_gradient(images, source_image);
    for (std::size_t k = 0; k < points; ++k) gradient[k] += vp_gradient_[k];
    if (!illumination.empty()) {
      std::vector<double> sum(points);
      cuda::copy_to_host(sum.data(), illumination_.data(), illumination_.bytes(), st);
      for (std::size_t k = 0; k < points; ++k) illumination[k] += sum[k];
    }
  }

 private:
  // The coefficients the base's setters made (the CPU's), on the device too.
  void model_changed() override { model_.update(setup_, stream_.handle()); }

  // A shot: the host lists (elastic_gradient_model.hpp), then the device's: the receiver lists and their adjoint
  // sources (row r of a list: its points, owner r), the sources' two groups and signal table, each source point's
  // field, kind, index, factor and source for the adjoint's images.
  void begin_shot(int shot) {
    const cudaStream_t st = stream_.handle();
    state_.zero(st);
    increments_.zero(st);
    packed_.zero(st);
    packed_current_ = true;  // (at rest: no step yet, a zero field)
    this->begin_shot_lists(shot);
    make_device_lists(shot);
    for (auto& raw : raw_) raw.zero(st);
    const auto gathers = elastic_source_gathers(sources_, sources_.factor, size_);
    for (std::size_t g = 0; g < 2; ++g) sources_device_[g].assign(gathers[g], st);
    const std::vector<double> table = elastic_signal_table(wavelets_.at(std::size_t(shot)), running_, setup_.nt);
    if (table.size() > signals_.size()) throw std::logic_error("elastic-cuda gradient: more sources than the plan's");
    if (!table.empty()) cuda::copy_to_device(signals_.data(), table.data(), table.size() * sizeof(double), st);
    const std::size_t n = sources_.index.size();
    std::vector<std::int32_t> source(n);
    for (std::size_t j = 0; j + 1 < sources_.offsets.size(); ++j)
      for (std::int32_t p = sources_.offsets[j]; p < sources_.offsets[j + 1]; ++p) source[std::size_t(p)] = int(j);
    if (n > 0) {
      cuda::copy_to_device(point_field_.data(), sources_.field.data(), n, st);
      cuda::copy_to_device(point_kind_.data(), sources_.signal.data(), n, st);
      cuda::copy_to_device(point_index_.data(), sources_.index.data(), n * sizeof(index_t), st);
      cuda::copy_to_device(point_factor_.data(), sources_.factor.data(), n * sizeof(T), st);
      cuda::copy_to_device(point_source_.data(), source.data(), n * sizeof(std::int32_t), st);
    }
    history_shot_ = -1;
  }

  // The receiver lists on the device (list_receivers_ whole, in order) and their adjoint sources (row r of a list: its
  // points, owner r), made anew only when the shot's receivers are not those of the last lists (after the device is
  // idle, so that no queued step reads the old ones).
  void make_device_lists(int shot) {
    const int key = this->receivers_.list_key(shot);
    if (key == lists_key_) return;
    cuda::synchronize();
    const cudaStream_t st = stream_.handle();
    for (std::size_t k = 0; k < 2; ++k) {
      if (lists_[k].whole_id.size() != list_receivers_[k])
        throw std::logic_error("elastic-cuda gradient: a receiver not whole on the one rank's grid");
      device_lists_[k] = DeviceElasticList<T>(lists_[k]);
      const PointLists<T>& p = lists_[k].whole;
      std::vector<std::int32_t> owner(p.index.size());
      for (std::size_t r = 0; r + 1 < p.offsets.size(); ++r)
        for (std::int32_t q = p.offsets[r]; q < p.offsets[r + 1]; ++q) owner[std::size_t(q)] = std::int32_t(r);
      adjoint_sources_[k] = DeviceGather<T>(p.index.size());
      adjoint_sources_[k].assign(gather_by_target(p.index, p.factor, owner), st);
      const std::size_t samples = list_receivers_[k] * std::size_t(setup_.nt);
      raw_[k] = cuda::DeviceArray<double>(samples);
      adjoint_rows_[k] = cuda::DeviceArray<double>(samples);
    }
    lists_key_ = key;
  }

  // The traces of the two lists' device records (the host's elastic_traces).
  std::vector<double> traces_of_device(const std::array<cuda::DeviceArray<double>, 2>& raw) {
    std::vector<double> host[2];
    for (std::size_t k = 0; k < 2; ++k) {
      host[k].resize(raw[k].size());
      if (!host[k].empty()) cuda::copy_to_host(host[k].data(), raw[k].data(), raw[k].bytes(), stream_.handle());
    }
    return this->traces_of(host[0], host[1]);
  }

  void record(std::size_t k, const T* all, double* raw, int n) {
    const DeviceElasticList<T>& l = device_lists_[k];
    cuda::record_receivers(all, l.index.data(), l.factor.data(), l.offsets.data(), l.receivers, raw, setup_.nt, n,
                           stream_.handle());
  }

  void source_images(const ElasticStep<T>& s, int n, bool velocity, int n_points) {
    cuda::elastic_source_images(s.f[0], size_, point_field_.data(), point_index_.data(), point_factor_.data(),
                                point_kind_.data(), point_source_.data(), n_points, signals_.data(), setup_.nt, n,
                                velocity, P::sample, P::midpoint, source_image_.data(), stream_.handle());
  }

  // The background's view, its increments written to increments_.
  ElasticStep<T> background() {
    ElasticStep<T> s = state_.step(setup_, model_);
    for (int f = 0; f < elastic_fields; ++f) s.increment_out[f] = increments_.data() + std::size_t(f) * size_;
    return s;
  }

  // The Born run (elastic_cpu_gradient.cpp's born_run, step for step): the perturbation's fields stepped with the
  // background's coefficients, each half adding the perturbed coefficients times the background's increments and the
  // sources' perturbed factors; the traces of du.
  std::vector<double> born_run(int shot, std::span<const double> dmp, std::span<const double> dms,
                               std::span<const double> drho) override {
    const FieldLayout& L = setup_.layout;
    begin_shot(shot);
    const cudaStream_t st = stream_.handle();
    const Perturbation p = this->perturbation(dmp, dms, drho);
    if (!born_) born_ = std::make_unique<Born>(setup_);
    Born& b = *born_;
    b.du.zero(st);
    cuda::copy_to_device(b.lam.data(), p.lam.data(), b.lam.bytes(), st);
    cuda::copy_to_device(b.mu2.data(), p.mu2.data(), b.mu2.bytes(), st);
    for (std::size_t c = 0; c < 3; ++c) {
      cuda::copy_to_device(b.mudt[c].data(), p.mudt[c].data(), b.mudt[c].bytes(), st);
      cuda::copy_to_device(b.bdt[c].data(), p.bdt[c].data(), b.bdt[c].bytes(), st);
    }
    const auto gathers = elastic_source_gathers(sources_, p.factor, size_);
    for (std::size_t g = 0; g < 2; ++g) born_sources_[g].assign(gathers[g], st);
    std::array<cuda::DeviceArray<double>, 2> raw;
    for (std::size_t k = 0; k < 2; ++k) raw[k] = cuda::DeviceArray<double>(raw_[k].size());
    const ElasticStep<T> ds = b.du.step(setup_, model_);
    const T* inc = increments_.data();
    for (int n = 0; n < setup_.nt; ++n) {
      record(0, ds.f[0], raw[0].data(), n);
      const ElasticStep<T> s = background();
      cuda::elastic_velocity_step(s, st);
      cuda::add_point_signals(s.f[0], sources_device_[0].view(), signals_.data(), setup_.nt, n, st);
      cuda::elastic_velocity_step(ds, st);
      for (int c = 0; c < 3; ++c)
        cuda::add_products(ds.f[vz + c], b.bdt[std::size_t(c)].data(), inc + std::size_t(vz + c) * size_, size_, st);
      cuda::add_point_signals(ds.f[0], born_sources_[0].view(), signals_.data(), setup_.nt, n, st);
      record(1, ds.f[0], raw[1].data(), n);
      cuda::elastic_stress_step(s, st);
      cuda::add_point_signals(s.f[0], sources_device_[1].view(), signals_.data(), setup_.nt, n, st);
      cuda::elastic_stress_step(ds, st);
      cuda::elastic_scatter_normal(ds, b.lam.data(), b.mu2.data(), inc, st);
      for (int c = 0; c < 3; ++c)
        cuda::add_products(ds.f[szy + c], b.mudt[std::size_t(c)].data(), inc + std::size_t(szy + c) * size_, size_, st);
      cuda::add_point_signals(ds.f[0], born_sources_[1].view(), signals_.data(), setup_.nt, n, st);
      if (setup_.free_surface) {
        cuda::zero_top_plane(L, s.f[szz], st);
        cuda::zero_top_plane(L, ds.f[szz], st);
      }
      step_done(s, n);
    }
    return traces_of_device(raw);
  }

  // DeviceForwardStepper. The state: the fields, the CPML memory and the packed increments of the last step (the
  // history's field, packed when asked for: a restored state's is the checkpoint's).
  cudaStream_t stream() const override { return stream_.handle(); }
  std::size_t state_values() const override { return state_.values() + packed_values_; }
  void save_state(T* out) override {
    pack();
    save_arrays(state_arrays(), out, stream_.handle());
  }
  void restore_state(const T* in) override {
    restore_arrays(state_arrays(), in, stream_.handle());
    packed_current_ = true;  // (increments_ is not the state's: the packed field is)
  }
  // After the background's step n (its view s): its progress, and `forward`'s checks on its pressure (forward_step).
  void step_done(const ElasticStep<T>& s, int n) {
    forward_step(n + 1, setup_.nt, [&] {
      cuda::elastic_pressure(s, pressure_.data(), stream_.handle());
      return field_stats_(setup_.layout, pressure_.data(), stream_.handle());
    });
  }
  // Records the pressure receivers on s^n, then the velocity step, the forces, the velocity receivers on v^{n+1/2},
  // the stress step, the pressure and moment sources, s_zz = 0 on a free surface.
  void step(int n) override {
    if (counting_) ++history_steps_;
    const cudaStream_t st = stream_.handle();
    record(0, state_.all.data(), raw_[0].data(), n);
    const ElasticStep<T> s = background();
    if (accumulate_illumination_) cuda::elastic_add_pressure_squares(s, illumination_.data(), st);
    cuda::elastic_velocity_step(s, st);
    cuda::add_point_signals(state_.all.data(), sources_device_[0].view(), signals_.data(), setup_.nt, n, st);
    record(1, state_.all.data(), raw_[1].data(), n);
    cuda::elastic_stress_step(s, st);
    cuda::add_point_signals(state_.all.data(), sources_device_[1].view(), signals_.data(), setup_.nt, n, st);
    if (setup_.free_surface) cuda::zero_top_plane(setup_.layout, s.f[szz], st);
    packed_current_ = false;
    step_done(s, n);
  }
  std::size_t field_values() const override { return packed_values_; }
  void copy_field(T* out) override {
    pack();
    cuda::copy_async(out, packed_.data(), packed_.bytes(), stream_.handle());
  }
  void pack() {
    if (packed_current_) return;
    cuda::elastic_pack_increments(state_.step(setup_, model_), increments_.data(), packed_.data(), stream_.handle());
    packed_current_ = true;
  }
  std::vector<cuda::DeviceArray<T>*> state_arrays() {
    std::vector<cuda::DeviceArray<T>*> out = state_.arrays();
    out.push_back(&packed_);
    return out;
  }

  // The adjoint's fields, scratch, field and images, made by the first adjoint and kept (the fields and images zeroed
  // for each): the images of lam, mu2, dt mu (three) and dt b (three), padded, fp64.
  struct Adjoint {
    DeviceElasticFields<T> fields;
    cuda::DeviceArray<T> scratch, field;
    std::array<cuda::DeviceArray<double>, 8> images;
    Adjoint(const ElasticSetup<T>& s, std::size_t field_values)
        : fields(s), scratch(std::size_t(s.layout.size())), field(field_values) {
      for (auto& image : images) image = cuda::DeviceArray<double>(std::size_t(s.layout.size()));
    }
  };
  Adjoint& adjoint_state() {
    if (!adjoint_) adjoint_ = std::make_unique<Adjoint>(setup_, packed_values_);
    const cudaStream_t st = stream_.handle();
    adjoint_->fields.zero(st);  // (the scratch needs none: each term writes its range before its gather reads it)
    for (auto& image : adjoint_->images) image.zero(st);
    return *adjoint_;
  }

  // The Born perturbation's fields and perturbed coefficients (padded), made by the first Born run.
  struct Born {
    DeviceElasticFields<T> du;
    cuda::DeviceArray<T> lam, mu2;
    std::array<cuda::DeviceArray<T>, 3> mudt, bdt;
    explicit Born(const ElasticSetup<T>& s)
        : du(s), lam(std::size_t(s.layout.size())), mu2(std::size_t(s.layout.size())) {
      for (std::size_t c = 0; c < 3; ++c) {
        mudt[c] = cuda::DeviceArray<T>(std::size_t(s.layout.size()));
        bdt[c] = cuda::DeviceArray<T>(std::size_t(s.layout.size()));
      }
    }
  };

  int device_;                           // selected before any allocation
  cuda::Stream stream_;                  // created before, destroyed after the buffers used in it
  DeviceFieldStatsBuffers field_stats_;  // forward_step's checks, on the pressure
  std::size_t size_;                     // values of one padded field
  DeviceElasticModel<T> model_;
  DeviceElasticFields<T> state_;
  cuda::DeviceArray<T> increments_;  // the last step's, per field (padded, one after another)
  cuda::DeviceArray<T> packed_;      // the same on the computed ranges (the history's field)
  cuda::DeviceArray<T> pressure_;    // forward_step's checks
  bool packed_current_ = true;       // packed_ holds the current field (zero at rest)
  std::unique_ptr<DeviceWavefieldHistory<T>> history_;
  bool counting_ = false, accumulate_illumination_ = false;
  long long history_steps_ = 0;
  cuda::DeviceArray<double> illumination_;            // sum_{n < nt} p^2 of the last forward with history
  std::array<DeviceElasticList<T>, 2> device_lists_;  // the pressure receivers, the velocity receivers
  int lists_key_ = -2;  // ShotReceivers::list_key of the receivers device_lists_ were made for (-2: none yet)
  std::array<DeviceGather<T>, 2> adjoint_sources_;  // their transposes
  std::array<cuda::DeviceArray<double>, 2> raw_, adjoint_rows_;
  std::array<DeviceGather<T>, 2> sources_device_, born_sources_;  // after the velocity step, after the stress step
  cuda::DeviceArray<double> signals_;                             // (3 sources, nt): each source's three signals
  cuda::DeviceArray<std::uint8_t> point_field_, point_kind_;      // each source point's, for the adjoint's images
  cuda::DeviceArray<index_t> point_index_;
  cuda::DeviceArray<T> point_factor_;
  cuda::DeviceArray<std::int32_t> point_source_;
  cuda::DeviceArray<double> source_image_;  // per source point
  int history_shot_ = -1;
  std::unique_ptr<Adjoint> adjoint_;
  std::unique_ptr<Born> born_;
};

}  // namespace

std::unique_ptr<GradientPropagator> make_elastic_cuda_gradient(const Case& c, const Plan& plan,
                                                               const HistoryChoice& history) {
  if (c.run.precision == Precision::fp64) return std::make_unique<ElasticCudaGradient<double>>(c, plan, history);
  return std::make_unique<ElasticCudaGradient<float>>(c, plan, history);
}

}  // namespace specwave
