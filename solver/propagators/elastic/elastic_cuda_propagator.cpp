// The elastic velocity-stress scheme on an NVIDIA GPU (forward): the ElasticSetup arrays copied to the device once, the
// nine fields in one device array (field k from k * layout.size(), as the sources' and receivers' point lists index
// them), kernels/cuda/elastic_cuda.cu's two steps in the time loop, in the CPU propagator's order a step (the pressure
// receivers on s^n, the velocity step, the forces, the velocity receivers on v^{n+1/2}, the stress step, the pressure
// and moment sources, s_zz = 0 on a free surface). Sources are added per target point in the CPU's order, each point's
// signal (s(t_n), the running sum F^n or the moment rate at t_{n+1/2}) tabulated in fp64 and converted at injection as
// on the CPU; the two receiver lists are two groups of one device ring (solver/propagators/gpu/device_trace_ring.hpp),
// and snapshots show the pressure -(s_zz + s_yy + s_xx) / 3, as on the CPU. One rank a shot: the plan keeps a grid
// split over ranks off the GPU (cuda_cannot_run), and the factory refuses it too. The gradient is
// elastic_cuda_gradient.cpp's.
#include "solver/propagators/elastic/elastic_cuda_propagator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/elastic_cuda.hpp"
#include "kernels/cuda/fdtd_adjoint_cuda.hpp"
#include "kernels/cuda/fdtd_cuda.hpp"
#include "solver/case/errors.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/device_field_stats.hpp"
#include "solver/propagators/elastic/elastic_device.hpp"
#include "solver/propagators/gpu/device_field_copy.hpp"
#include "solver/propagators/gpu/device_gather.hpp"
#include "solver/propagators/gpu/device_state.hpp"
#include "solver/propagators/gpu/device_trace_ring.hpp"
#include "solver/propagators/gpu/device_upload.hpp"
#include "solver/propagators/point_lists.hpp"
#include "solver/propagators/staggered/staggered_setup.hpp"

namespace specwave {
namespace {

// `count` values of device memory at `data` as a state array (visit_device's staging, for a part of an array).
template <class T>
void visit_device_part(StateVisitor& v, const std::string& name, T* data, std::size_t count, cudaStream_t stream) {
  std::vector<T> host(count);
  if (!v.loading()) cuda::copy_to_host(host.data(), data, count * sizeof(T), stream);
  v.visit_array(name, host);
  if (v.loading()) cuda::copy_to_device(data, host.data(), count * sizeof(T), stream);
}

template <class T>
class ElasticCuda final : public Propagator {
 public:
  ElasticCuda(const Case& c, const Plan& plan)
      : device_(select_gpu(plan.device)),
        setup_(make_elastic_setup<T>(c, plan)),
        size_(std::size_t(setup_.layout.size())),
        model_(setup_),
        fields_(setup_),
        pressure_(size_),
        field_copy_(stream_, output_stream_, std::size_t(setup_.layout.interior_points()), c.output.snapshot_every > 0,
                    /*dense_now=*/true) {
    const auto [max_points, max_sources] =
        largest_shot(plan.sources);  // room for the largest shot: begin_shot never allocates for sources
    for (auto& g : sources_) g = DeviceGather<T>(max_points);
    signals_ = cuda::DeviceArray<double>(3 * max_sources * std::size_t(setup_.nt));
  }

  std::string name() const override { return std::string("elastic-cuda-") + (sizeof(T) == 4 ? "fp32" : "fp64"); }

  void begin_shot(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets,
                  const std::vector<PointStencil>& receivers) override {
    if (!ring_ || receivers != receivers_made_) make_receivers(receivers);  // kept while a shot's receivers stay
    const cudaStream_t st = stream_.handle();
    fields_.zero(st);
    ring_->discard(0);
    field_copy_.discard();
    ring_->zero_host();
    // The points split by when they are added (forces after the velocity step, the rest after the stress step), each
    // group by target in the CPU's order, with each source's three signals in fp64 (elastic_device.hpp).
    const ElasticPoints<T> points = setup_.sources(sources);
    const auto gathers = elastic_source_gathers(points, points.factor, size_);
    for (std::size_t g = 0; g < 2; ++g) sources_[g].assign(gathers[g], st);
    const std::vector<double> table = elastic_signal_table(wavelets, running_sums(wavelets), setup_.nt);
    if (table.size() > signals_.size()) throw std::logic_error("elastic-cuda: more sources than the plan's shots");
    if (!table.empty()) cuda::copy_to_device(signals_.data(), table.data(), table.size() * sizeof(double), st);
    traces_valid_ = false;
  }

  void advance(int n_begin, int n_end) override {
    const cudaStream_t st = stream_.handle();
    const ElasticStep<T> s = step();
    for (int n = n_begin; n < n_end; ++n) {
      const auto at = ring_->begin_sample(n);
      record(0, at);
      cuda::elastic_velocity_step(s, st);
      cuda::add_point_signals(fields_.all.data(), sources_[0].view(), signals_.data(), setup_.nt, n, st);
      record(1, at);
      ring_->end_sample(n);
      cuda::elastic_stress_step(s, st);
      cuda::add_point_signals(fields_.all.data(), sources_[1].view(), signals_.data(), setup_.nt, n, st);
      if (setup_.free_surface) cuda::zero_top_plane(setup_.layout, s.f[szz], st);
    }
    traces_valid_ = false;
  }

  std::span<const double> traces() override {
    if (!traces_valid_) {
      ring_->flush();
      elastic_traces(velocity_, row_, ring_->host(0), ring_->host(1), setup_.nt, traces_);
      traces_valid_ = true;
    }
    return traces_;
  }

  FieldStats field_stats() override {
    const cudaStream_t st = stream_.handle();
    cuda::elastic_pressure(step(), pressure_.data(), st);
    return field_stats_(setup_.layout, pressure_.data(), st);
  }

  void copy_field(std::span<float> out) override { copy_out(out); }
  void copy_field(std::span<double> out) override { copy_out(out); }
  void start_copy_field() override {
    field_copy_.start([&](T* dense) { pressure_to(dense); });
  }
  void finish_copy_field(std::span<float> out) override { field_copy_.finish(out); }
  void finish_copy_field(std::span<double> out) override { field_copy_.finish(out); }

  // The CPU propagator's names (ElasticCpu::visit_state), so that a run saved on one backend resumes on the other; the
  // samples recorded so far are flushed into the ring's host matrices first (begin_state_visit). One rank: every
  // receiver is whole, so the ring's rows are the lists' and there are no split receivers' parts.
  void visit_state(StateVisitor& v) override {
    static constexpr const char* names[elastic_fields] = {"s_zz", "s_yy", "s_xx", "s_zy", "s_zx",
                                                          "s_yx", "v_z",  "v_y",  "v_x"};
    const cudaStream_t st = stream_.handle();
    begin_state_visit(v, *ring_, field_copy_);
    for (int k = 0; k < elastic_fields; ++k)
      visit_device_part(v, names[k], fields_.all.data() + std::size_t(k) * size_, size_, st);
    const std::vector<std::string> slab_names = elastic_slab_names(setup_);
    for (std::size_t s = 0; s < fields_.slabs.size(); ++s) visit_device(v, slab_names[s], fields_.slabs[s], st);
    std::vector<double> parts;
    v.visit_array("traces_p", ring_->host(0));
    v.visit_array("trace_parts_p", parts);
    v.visit_array("traces_v", ring_->host(1));
    v.visit_array("trace_parts_v", parts);
    traces_valid_ = false;
  }

  std::size_t device_bytes() const override {
    std::size_t bytes = fields_.bytes() + model_.bytes() + pressure_.bytes() + signals_.bytes() +
                        field_copy_.device_bytes() + (ring_ ? ring_->device_bytes() : 0);
    for (const auto& g : sources_) bytes += g.bytes();
    for (const auto& l : lists_) bytes += l.bytes();
    return bytes;
  }

 private:
  // The step's view of the device arrays (ElasticSetup::step's values with device pointers).
  ElasticStep<T> step() const { return fields_.step(setup_, model_); }

  // The pressure receivers (list 0, the normal stresses') and the velocity receivers (list 1), as the CPU splits them,
  // and a ring with a group per list (every receiver whole on one rank).
  void make_receivers(const std::vector<PointStencil>& receivers) {
    cuda::synchronize();  // no queued step reads the old lists
    std::vector<PointStencil> lists[2];
    split_elastic_receivers(receivers, lists, velocity_, row_);
    std::vector<std::size_t> rows(2);
    for (std::size_t k = 0; k < 2; ++k) {
      const BlockReceivers<T> r = make_block_receivers<T>(setup_.layout, lists[k], setup_.block);
      if (r.whole_id.size() != lists[k].size())
        throw std::logic_error("elastic-cuda: a receiver not whole on the one rank's grid");
      lists_[k] = DeviceElasticList<T>(r);
      rows[k] = lists[k].size();
    }
    ring_.reset();
    ring_ = std::make_unique<DeviceTraceRing>(stream_, output_stream_, setup_.nt, rows);
    traces_.assign(receivers.size() * std::size_t(setup_.nt), 0.0);
    receivers_made_ = receivers;
  }

  void record(std::size_t list, DeviceTraceRing::Position at) {
    const DeviceElasticList<T>& l = lists_[list];
    cuda::record_receivers(fields_.all.data(), l.index.data(), l.factor.data(), l.offsets.data(), l.receivers,
                           ring_->half_data(list, at.half), ring_->columns(), at.column, stream_.handle());
  }

  void pressure_to(T* dense) {
    const cudaStream_t st = stream_.handle();
    cuda::elastic_pressure(step(), pressure_.data(), st);
    cuda::unpad(setup_.layout, pressure_.data(), dense, st);
  }

  template <class U>
  void copy_out(std::span<U> out) {
    field_copy_.copy_now(out, [&](T* dense) { pressure_to(dense); });
  }

  int device_;                  // selected before any allocation
  cuda::Stream stream_;         // created before, destroyed after the buffers used in it
  cuda::Stream output_stream_;  // receiver samples and snapshots to the host
  ElasticSetup<T> setup_;
  std::size_t size_;  // values of one padded field
  DeviceElasticModel<T> model_;
  DeviceElasticFields<T> fields_;  // the nine fields, one after another, and the CPML memory
  cuda::DeviceArray<T> pressure_;
  DeviceFieldCopy<T> field_copy_;
  DeviceFieldStatsBuffers field_stats_;     // the blow-up checks' reduction
  std::array<DeviceGather<T>, 2> sources_;  // added after the velocity step (forces), after the stress step (the rest)
  cuda::DeviceArray<double> signals_;       // (3 sources, nt): each source's three signals in fp64
  std::array<DeviceElasticList<T>, 2> lists_;  // the pressure receivers, the velocity receivers
  std::unique_ptr<DeviceTraceRing> ring_;
  std::vector<PointStencil> receivers_made_;  // the receivers of lists_ and ring_
  std::vector<bool> velocity_;                // per receiver: records a velocity component
  std::vector<std::size_t> row_;              // per receiver: its row in its list
  std::vector<double> traces_;
  bool traces_valid_ = false;
};

}  // namespace

std::unique_ptr<Propagator> make_elastic_cuda_propagator(const Case& c, const Plan& plan, const Comm* domain) {
  if (domain && domain->size() > 1)
    throw Error(ExitCode::invalid_case,
                fmt::format("{}: the elastic scheme runs one rank a shot on the GPU in this version, and this shot "
                            "group has {} ranks; set run.shot_groups to the number of ranks, or run.backend = \"cpu\" "
                            "to split the grid",
                            c.label(), domain->size()));
  if (c.run.precision == Precision::fp64) return std::make_unique<ElasticCuda<double>>(c, plan);
  return std::make_unique<ElasticCuda<float>>(c, plan);
}

}  // namespace specwave
