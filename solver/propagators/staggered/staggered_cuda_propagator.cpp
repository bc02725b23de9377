// The staggered velocity-pressure scheme (variable density, attenuation) on an NVIDIA GPU: the StaggeredSetup arrays
// copied to the device once, kernels/cuda/staggered_cuda.cu's two steps in the time loop, the sources added per target
// point in the CPU's order (their running sums F^n in fp64, converted at injection as on the CPU), the receivers
// sampled into a device ring (solver/propagators/gpu/device_trace_ring.hpp) and snapshots copied on the output stream
// (solver/propagators/gpu/device_field_copy.hpp), as the FDTD GPU propagator does. One rank a shot: the plan keeps a
// grid split over ranks off the GPU (cuda_cannot_run: the CPU under "auto", refused under "cuda"), and the factory
// refuses it too. No allocation after construction.
#include "solver/propagators/staggered/staggered_cuda_propagator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/fdtd_adjoint_cuda.hpp"
#include "kernels/cuda/fdtd_cuda.hpp"
#include "kernels/cuda/staggered_cuda.hpp"
#include "solver/case/errors.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/device_field_stats.hpp"
#include "solver/propagators/gpu/device_field_copy.hpp"
#include "solver/propagators/gpu/device_gather.hpp"
#include "solver/propagators/gpu/device_state.hpp"
#include "solver/propagators/gpu/device_trace_ring.hpp"
#include "solver/propagators/gpu/device_upload.hpp"
#include "solver/propagators/staggered/staggered_device.hpp"

namespace specwave {
namespace {

template <class T>
class StaggeredCuda final : public Propagator {
 public:
  StaggeredCuda(const Case& c, const Plan& plan)
      : device_(select_gpu(plan.device)),
        setup_(make_staggered_setup<T>(c, plan)),
        model_(setup_),
        fields_(setup_),
        field_copy_(stream_, output_stream_, std::size_t(setup_.layout.interior_points()), c.output.snapshot_every > 0,
                    /*dense_now=*/true) {
    make_receivers();
    const auto [max_points, max_sources] =
        largest_shot(plan.sources);  // room for the largest shot: begin_shot never allocates
    sources_ = DeviceGather<T>(max_points);
    running_ = cuda::DeviceArray<double>(max_sources * std::size_t(setup_.nt));
  }

  std::string name() const override {
    return std::string(fields_.memory.empty() ? "staggered-cuda-" : "visco-staggered-cuda-") +
           (sizeof(T) == 4 ? "fp32" : "fp64");
  }

  void begin_shot(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets,
                  const std::vector<PointStencil>& receivers) override {
    if (setup_.set_receivers(receivers)) make_receivers();
    const cudaStream_t st = stream_.handle();
    fields_.zero(st);
    ring_->discard(0);
    field_copy_.discard();
    ring_->zero_host();
    const PointLists<T> points = setup_.sources(sources);
    sources_.assign(gather_by_target(points.index, points.factor, points.owner), st);
    // F^n = sum_{m <= n} s(t_m) (running_sums), fp64 on the device, converted to T at injection as on the CPU.
    const std::vector<std::vector<double>> running = running_sums(wavelets);
    std::vector<double> flat(running.size() * std::size_t(setup_.nt));
    for (std::size_t j = 0; j < running.size(); ++j)
      std::copy_n(running[j].begin(), setup_.nt, flat.begin() + std::ptrdiff_t(j * setup_.nt));
    cuda::copy_to_device(running_.data(), flat.data(), flat.size() * sizeof(double), st);
    traces_valid_ = false;
  }

  void advance(int n_begin, int n_end) override {
    const cudaStream_t st = stream_.handle();
    const StaggeredStep<T> s = fields_.step(setup_, model_);
    for (int n = n_begin; n < n_end; ++n) {
      record(n);
      cuda::staggered_velocity_step(s, st);
      cuda::staggered_pressure_step(s, st);
      cuda::add_point_signals(fields_.u.data(), sources_.view(), running_.data(), setup_.nt, n, st);
      if (setup_.free_surface) cuda::zero_top_plane(setup_.layout, fields_.u.data(), st);
    }
    traces_valid_ = false;
  }

  std::span<const double> traces() override {
    if (!traces_valid_) {
      ring_->flush();
      const auto& r = setup_.block_receivers;
      const std::size_t nt = std::size_t(setup_.nt);
      std::fill(traces_.begin(), traces_.end(), 0.0);
      for (std::size_t k = 0; k < r.whole_id.size(); ++k)
        std::copy_n(ring_->host(0).data() + k * nt, nt, traces_.data() + std::size_t(r.whole_id[k]) * nt);
      traces_valid_ = true;
    }
    return traces_;
  }

  FieldStats field_stats() override { return field_stats_(setup_.layout, fields_.u.data(), stream_.handle()); }

  void copy_field(std::span<float> out) override { copy_out(out); }
  void copy_field(std::span<double> out) override { copy_out(out); }
  void start_copy_field() override {
    field_copy_.start([&](T* dense) { cuda::unpad(setup_.layout, fields_.u.data(), dense, stream_.handle()); });
  }
  void finish_copy_field(std::span<float> out) override { field_copy_.finish(out); }
  void finish_copy_field(std::span<double> out) override { field_copy_.finish(out); }

  // The CPU propagator's names (StaggeredCpu::visit_state), so that a run saved on one backend resumes on the other;
  // the samples recorded so far are flushed into "traces" first (begin_state_visit).
  void visit_state(StateVisitor& v) override {
    const cudaStream_t st = stream_.handle();
    begin_state_visit(v, *ring_, field_copy_);
    visit_device(v, "u", fields_.u, st);
    for (int a = 0; a < 3; ++a) visit_device(v, fmt::format("w_{}", "zyx"[a]), fields_.w[std::size_t(a)], st);
    for (std::size_t s = 0; s < fields_.slabs.size(); ++s)
      visit_device(v, fmt::format("cpml_{}", s), fields_.slabs[s], st);
    for (std::size_t l = 0; l < fields_.memory.size(); ++l)
      visit_device(v, fmt::format("sls_{}", l), fields_.memory[l], st);
    v.visit_array("traces", ring_->host(0));
    std::vector<double> parts;  // (none on one rank; the CPU's checkpoint has the array)
    v.visit_array("trace_parts", parts);
    traces_valid_ = false;
  }

  std::size_t device_bytes() const override {
    return fields_.bytes() + model_.bytes() + field_copy_.device_bytes() + ring_->device_bytes() + running_.bytes() +
           sources_.bytes() + receivers_index_.bytes() + receivers_factor_.bytes() + receivers_offsets_.bytes();
  }

 private:
  // The receivers' device lists and the trace ring (one group: every receiver is whole on one rank).
  void make_receivers() {
    cuda::synchronize();  // no queued step reads the old lists
    const PointLists<T>& r = setup_.block_receivers.whole;
    receivers_ = int(r.offsets.size()) - 1;
    ring_.reset();
    ring_ = std::make_unique<DeviceTraceRing>(stream_, output_stream_, setup_.nt,
                                              std::vector<std::size_t>{std::size_t(receivers_)});
    receivers_index_ = upload(r.index);
    receivers_factor_ = upload(r.factor);
    receivers_offsets_ = upload(r.offsets);
    traces_.assign(setup_.receiver_keys.size() * std::size_t(setup_.nt), 0.0);
  }

  void record(int n) {
    const auto at = ring_->begin_sample(n);
    cuda::record_receivers(fields_.u.data(), receivers_index_.data(), receivers_factor_.data(),
                           receivers_offsets_.data(), receivers_, ring_->half_data(0, at.half), ring_->columns(),
                           at.column, stream_.handle());
    ring_->end_sample(n);
  }

  template <class U>
  void copy_out(std::span<U> out) {
    field_copy_.copy_now(out, [&](T* dense) { cuda::unpad(setup_.layout, fields_.u.data(), dense, stream_.handle()); });
  }

  int device_;                  // selected before any allocation
  cuda::Stream stream_;         // created before, destroyed after the buffers used in it
  cuda::Stream output_stream_;  // receiver samples and snapshots to the host
  StaggeredSetup<T> setup_;
  DeviceStaggeredModel<T> model_;
  DeviceStaggeredFields<T> fields_;
  DeviceFieldCopy<T> field_copy_;
  DeviceFieldStatsBuffers field_stats_;  // the blow-up checks' reduction
  std::unique_ptr<DeviceTraceRing> ring_;
  int receivers_ = 0;
  cuda::DeviceArray<index_t> receivers_index_;
  cuda::DeviceArray<T> receivers_factor_;
  cuda::DeviceArray<std::int32_t> receivers_offsets_;
  DeviceGather<T> sources_;
  cuda::DeviceArray<double> running_;  // (sources, nt): F^n in fp64
  std::vector<double> traces_;
  bool traces_valid_ = false;
};

}  // namespace

std::unique_ptr<Propagator> make_staggered_cuda_propagator(const Case& c, const Plan& plan, const Comm* domain) {
  if (domain && domain->size() > 1)
    throw Error(ExitCode::invalid_case,
                fmt::format("{}: the staggered scheme (a density model or [attenuation]) runs one rank a shot on the "
                            "GPU in this version, and this shot group has {} ranks; set run.shot_groups to the "
                            "number of ranks, or run.backend = \"cpu\" to split the grid",
                            c.label(), domain->size()));
  if (c.run.precision == Precision::fp64) return std::make_unique<StaggeredCuda<double>>(c, plan);
  return std::make_unique<StaggeredCuda<float>>(c, plan);
}

}  // namespace specwave
