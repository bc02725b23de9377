// FDTD on an NVIDIA GPU: the FdtdSetup arrays copied to the device once, the kernels of
// kernels/cuda/fdtd_cuda.cu in the time loop; no allocation happens after construction. Sources are added per
// target point in the CPU's order (deterministic). Receiver samples go into a device ring of two halves
// (solver/propagators/gpu/device_trace_ring.hpp): a full half is copied on the output stream into pinned host memory
// while the steps go on, and scattered into the host traces later. Snapshots (start/finish_copy_field,
// solver/propagators/gpu/device_field_copy.hpp) are copied on the same stream.
//
// Domain-decomposed (a domain communicator of several ranks, one GPU each): the block of FdtdSetup, and each
// step as on the CPU (docs/architecture.md): the shell, then its halo planes packed on the device and sent
// (from device memory with a CUDA-aware MPI, else staged through pinned host buffers on a second stream),
// while the interior update runs; the received planes are unpacked into the ghost planes.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/fdtd_adjoint_cuda.hpp"
#include "kernels/cuda/fdtd_cuda.hpp"
#include "solver/parallel/block_reduce.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/device_field_stats.hpp"
#include "solver/propagators/elastic/elastic_cuda_propagator.hpp"
#include "solver/propagators/fdtd/fdtd_cuda_propagator.hpp"
#include "solver/propagators/fdtd/fdtd_halo.hpp"
#include "solver/propagators/fdtd/fdtd_setup.hpp"
#include "solver/propagators/gpu/device_field_copy.hpp"
#include "solver/propagators/gpu/device_gather.hpp"
#include "solver/propagators/gpu/device_state.hpp"
#include "solver/propagators/gpu/device_trace_ring.hpp"
#include "solver/propagators/gpu/device_upload.hpp"
#include "solver/propagators/staggered/staggered_cuda_propagator.hpp"

namespace specwave {
namespace {

template <class T>
struct DevicePointLists {
  cuda::DeviceArray<index_t> index;
  cuda::DeviceArray<T> factor;
  cuda::DeviceArray<std::int32_t> owner, offsets;
  int points = 0;
  explicit DevicePointLists(std::size_t capacity = 0, std::size_t owners = 0)
      : index(capacity), factor(capacity), owner(capacity), offsets(owners + 1) {}
  void assign(const PointLists<T>& host, cudaStream_t stream) {
    if (host.index.size() > index.size() || host.offsets.size() > offsets.size())
      throw std::logic_error("DevicePointLists: capacity exceeded");
    cuda::copy_to_device(index.data(), host.index.data(), host.index.size() * sizeof(index_t), stream);
    cuda::copy_to_device(factor.data(), host.factor.data(), host.factor.size() * sizeof(T), stream);
    cuda::copy_to_device(owner.data(), host.owner.data(), host.owner.size() * sizeof(std::int32_t), stream);
    cuda::copy_to_device(offsets.data(), host.offsets.data(), host.offsets.size() * sizeof(std::int32_t), stream);
    points = int(host.index.size());
  }
};

template <class T>
FdtdSetup<T> setup_of(const Case& c, const Plan& plan, const Comm* domain) {
  if (!domain) return make_fdtd_setup<T>(c, plan);
  const Block block = block_of(c.grid.shape, plan.process_grid, domain->rank());
  return make_fdtd_setup<T>(c, plan, &block);
}

// The device side of a block's halo exchange: device send/receive buffers per face, pinned host copies when
// MPI cannot use device memory, the persistent messages, and the copy stream.
template <class T>
struct DeviceHalo {
  std::vector<HaloFace> faces;
  Shell shell;
  std::vector<cuda::DeviceArray<T>> send, receive;
  std::vector<cuda::PinnedArray<T>> send_host, receive_host;
  bool staged = true;
  std::unique_ptr<Exchange> exchange;

  DeviceHalo(const Comm& comm, const Block& block, const FieldLayout& layout)
      : faces(halo_faces(block, layout)), shell(halo_shell(faces, layout.halo)), staged(!mpi_accepts_device_buffers()) {
    exchange = std::make_unique<Exchange>(comm.exchange());
    for (const HaloFace& f : faces) {
      send.emplace_back(f.send.points());
      receive.emplace_back(f.receive.points());
      if (staged) {
        send_host.emplace_back(f.send.points());
        receive_host.emplace_back(f.receive.points());
      }
    }
    for (std::size_t k = 0; k < faces.size(); ++k) {
      T* out = staged ? send_host[k].data() : send[k].data();
      T* in = staged ? receive_host[k].data() : receive[k].data();
      exchange->add_send<T>(std::span<const T>(out, faces[k].send.points()), faces[k].peer, faces[k].send_tag());
      exchange->add_receive<T>(std::span<T>(in, faces[k].receive.points()), faces[k].peer, faces[k].receive_tag());
    }
  }
  bool active() const { return !faces.empty(); }
  std::size_t device_bytes() const {
    std::size_t b = 0;
    for (const auto& a : send) b += a.bytes();
    for (const auto& a : receive) b += a.bytes();
    return b;
  }
};

template <class T>
class FdtdCuda final : public Propagator {
 public:
  FdtdCuda(const Case& c, const Plan& plan, const Comm* domain)
      : domain_(domain && domain->size() > 1 ? domain : nullptr),
        device_(select_gpu(plan.device)),
        stream_(),
        setup_(setup_of<T>(c, plan, domain_)),
        u_(setup_.layout.size()),
        u_prev_(setup_.layout.size()),
        vel2dt2_(upload(setup_.vel2dt2)),
        field_copy_(stream_, output_stream_, std::size_t(setup_.layout.interior_points()), c.output.snapshot_every > 0,
                    /*dense_now=*/true) {
    for (int a = 0; a < 3; ++a) {
      pml_a_[a] = upload(setup_.pml_a[a]);
      pml_b_[a] = upload(setup_.pml_b[a]);
      CpmlAxis<T>& axis = setup_.pml[a];
      axis.a = pml_a_[a].data();
      axis.b = pml_b_[a].data();
      for (int side = 0; side < 2; ++side) {
        if (!axis.face[side]) continue;
        axis.psi[side] = slabs_.emplace_back(setup_.slab_points[a]).data();
        axis.zeta[side] = slabs_.emplace_back(setup_.slab_points[a]).data();
      }
    }
    make_receivers();
    if (domain_) halo_ = std::make_unique<DeviceHalo<T>>(*domain_, setup_.block, setup_.layout);
    // Room for the largest shot, so begin_shot never allocates.
    const auto [max_points, max_sources] = largest_shot(plan.sources);
    shell_sources_ = DeviceGather<T>(max_points);
    interior_sources_ = DeviceGather<T>(max_points);
    wavelets_ = cuda::DeviceArray<double>(max_sources * std::size_t(setup_.nt));
  }

  std::string name() const override {
    std::string n = std::string("fdtd-cuda-") + (sizeof(T) == 4 ? "fp32" : "fp64");
    if (domain_) {
      const Dims3 p = setup_.block.process_grid;
      n += fmt::format(" on {} ranks ({}x{}x{}, halo {})", domain_->size(), p[0], p[1], p[2],
                       halo_->staged ? "staged through pinned host memory" : "CUDA-aware MPI");
    }
    return n;
  }

  void begin_shot(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets,
                  const std::vector<PointStencil>& receivers) override {
    // A shot with receivers of its own (ShotReceivers): the device lists and the trace ring made anew for them.
    if (setup_.set_receivers(receivers)) make_receivers();
    const cudaStream_t st = stream_.handle();
    u_.zero(st);
    u_prev_.zero(st);
    for (auto& s : slabs_) s.zero(st);
    ring_->discard(0);
    field_copy_.discard();
    ring_->zero_host();
    PointLists<T> shell, interior;
    split_sources(setup_.sources(sources), halo_ ? halo_->shell : Shell{}, setup_.layout, shell, interior);
    // Grouped by target point in the CPU's order: deterministic sums, the CPU's per-point arithmetic.
    shell_sources_.assign(gather_by_target(shell.index, shell.factor, shell.owner), st);
    interior_sources_.assign(gather_by_target(interior.index, interior.factor, interior.owner), st);
    // fp64 on the device, converted to T at injection as on the CPU (u += factor * T(s)).
    std::vector<double> flat(wavelets.size() * std::size_t(setup_.nt));
    for (std::size_t j = 0; j < wavelets.size(); ++j)
      std::copy_n(wavelets[j].begin(), setup_.nt, flat.begin() + std::ptrdiff_t(j * setup_.nt));
    cuda::copy_to_device(wavelets_.data(), flat.data(), flat.size() * sizeof(double), st);
    traces_valid_ = false;
  }

  void advance(int n_begin, int n_end) override {
    const cudaStream_t st = stream_.handle();
    for (int n = n_begin; n < n_end; ++n) {
      record(n);
      const FdtdStep<T> step{setup_.layout,      u_.data(),   u_prev_.data(),
                             vel2dt2_.data(),    setup_.coef, {setup_.pml[0], setup_.pml[1], setup_.pml[2]},
                             setup_.free_surface};
      if (!halo_ || !halo_->active()) {
        cuda::fdtd_step(step, st, kernel_, tile_);
        inject(shell_sources_, n);
        inject(interior_sources_, n);
        if (setup_.free_surface) cuda::zero_top_plane(setup_.layout, u_prev_.data(), st);
      } else {
        exchange_step(step, n);
      }
      std::swap(u_, u_prev_);
    }
    traces_valid_ = false;
  }

  std::span<const double> traces() override {
    if (!traces_valid_) {
      ring_->flush();
      const auto& r = setup_.block_receivers;
      const std::size_t nt = std::size_t(setup_.nt);
      std::fill(local_.begin(), local_.end(), 0.0);
      for (std::size_t k = 0; k < r.whole_id.size(); ++k)
        std::copy_n(ring_->host(whole_group).data() + k * nt, nt, local_.data() + std::size_t(r.whole_id[k]) * nt);
      traces_ = domain_ ? gather_block_traces(*domain_, r, local_, ring_->host(parts_group), setup_.nt) : local_;
      traces_valid_ = true;
    }
    return traces_;
  }

  FieldStats field_stats() override {
    const FieldStats local = field_stats_(setup_.layout, u_.data(), stream_.handle());
    return domain_ ? reduce_field_stats(*domain_, setup_.block, local) : local;
  }

  std::optional<Block> block() const override {
    if (!domain_) return std::nullopt;
    return setup_.block;
  }

  void copy_field(std::span<float> out) override { copy_out(out); }
  void copy_field(std::span<double> out) override { copy_out(out); }

  // u^n unpadded into the dense buffer on the compute stream, then copied on the output stream into pinned memory
  // while the next steps run; finish waits for that copy (solver/propagators/gpu/device_field_copy.hpp).
  void start_copy_field() override {
    field_copy_.start([&](T* dense) { cuda::unpad(setup_.layout, u_.data(), dense, stream_.handle()); });
  }
  void finish_copy_field(std::span<float> out) override { field_copy_.finish(out); }
  void finish_copy_field(std::span<double> out) override { field_copy_.finish(out); }

  // Saving: every sample recorded so far is flushed into the host matrices and saved with them ("traces",
  // "trace_parts": the shapes the device arrays had before the ring). Loading: copies still queued belong to the
  // state replaced and are dropped; the ring restarts at the next advance's first step.
  void visit_state(StateVisitor& v) override {
    const cudaStream_t st = stream_.handle();
    begin_state_visit(v, *ring_, field_copy_);
    visit_device(v, "u", u_, st);
    visit_device(v, "u_prev", u_prev_, st);
    for (std::size_t s = 0; s < slabs_.size(); ++s) visit_device(v, fmt::format("cpml_{}", s), slabs_[s], st);
    v.visit_array("traces", ring_->host(whole_group));
    v.visit_array("trace_parts", ring_->host(parts_group));
    traces_valid_ = false;
  }

  std::size_t device_bytes() const override {
    std::size_t bytes = u_.bytes() + u_prev_.bytes() + vel2dt2_.bytes() + field_copy_.device_bytes() +
                        ring_->device_bytes() + wavelets_.bytes() + shell_sources_.bytes() + interior_sources_.bytes() +
                        (halo_ ? halo_->device_bytes() : 0);
    for (const auto& s : slabs_) bytes += s.bytes();
    return bytes;
  }

 private:
  // f^n into u^{n+1}: one thread per target point, its contributions in the CPU's order (no atomics).
  void inject(const DeviceGather<T>& src, int n) {
    cuda::add_point_signals(u_prev_.data(), src.view(), wavelets_.data(), setup_.nt, n, stream_.handle());
  }

  // One step of a decomposed block: the shell, its planes packed and on their way (staged on the copy stream)
  // while the interior is updated, then the received planes unpacked into u^{n+1}'s ghost planes. The host
  // blocks in MPI while the GPU computes the interior.
  void exchange_step(const FdtdStep<T>& step, int n) {
    const cudaStream_t st = stream_.handle(), cp = copy_stream_.handle();
    DeviceHalo<T>& h = *halo_;
    cuda::fdtd_step_part(step, StepPart::shell, h.shell, st, kernel_, tile_);
    inject(shell_sources_, n);
    if (setup_.free_surface) cuda::zero_top_plane(setup_.layout, u_prev_.data(), st);
    for (std::size_t k = 0; k < h.faces.size(); ++k)
      cuda::pack_box(setup_.layout, u_prev_.data(), h.faces[k].send.lo, h.faces[k].send.extent, h.send[k].data(), st);
    packed_.record(st);
    if (h.staged) {
      packed_.wait(cp);
      for (std::size_t k = 0; k < h.faces.size(); ++k)
        cuda::copy_to_host_async(h.send_host[k].data(), h.send[k].data(), h.send[k].bytes(), cp);
    }
    cuda::fdtd_step_part(step, StepPart::interior, h.shell, st, kernel_, tile_);
    inject(interior_sources_, n);
    if (setup_.free_surface) cuda::zero_top_plane(setup_.layout, u_prev_.data(), st);
    if (h.staged)
      copy_stream_.synchronize();
    else
      packed_.synchronize();
    h.exchange->start();
    h.exchange->wait();
    if (h.staged) {
      for (std::size_t k = 0; k < h.faces.size(); ++k)
        cuda::copy_to_device_async(h.receive[k].data(), h.receive_host[k].data(), h.receive[k].bytes(), cp);
      received_.record(cp);
      received_.wait(st);
    }
    for (std::size_t k = 0; k < h.faces.size(); ++k)
      cuda::unpack_box(setup_.layout, u_prev_.data(), h.faces[k].receive.lo, h.faces[k].receive.extent,
                       h.receive[k].data(), st);
  }

  // The receivers' device lists, the trace ring (rows of whole receivers and of split receivers' slots) and the host
  // traces, for setup_'s receivers: at construction, and for a shot whose receivers differ from the last one's (after
  // the device is idle). The old ring waits for its queued copies as it goes.
  void make_receivers() {
    cuda::synchronize();  // no queued step reads the old lists
    whole_rows_ = setup_.receivers.offsets.size() - 1;
    part_rows_ = std::size_t(setup_.block_receivers.slots());
    ring_.reset();
    ring_ = std::make_unique<DeviceTraceRing>(stream_, output_stream_, setup_.nt,
                                              std::vector<std::size_t>{whole_rows_, part_rows_});
    receivers_ = DevicePointLists<T>(setup_.receivers.index.size(), whole_rows_);
    receivers_.assign(setup_.receivers, stream_.handle());
    const PointLists<T>& parts = setup_.block_receivers.parts;
    receiver_parts_ = DevicePointLists<T>(parts.index.size(), 0);
    receiver_parts_.assign(PointLists<T>{parts.index, parts.factor, parts.owner, {0}}, stream_.handle());
    local_.assign(setup_.receiver_keys.size() * std::size_t(setup_.nt), 0.0);
  }

  // Sample n of every receiver into the ring (stream order); the ring makes the compute stream wait before it
  // writes a half again and queues a complete half's copy (solver/propagators/gpu/device_trace_ring.hpp).
  void record(int n) {
    const cudaStream_t st = stream_.handle();
    const auto at = ring_->begin_sample(n);
    cuda::record_receivers(u_.data(), receivers_.index.data(), receivers_.factor.data(), receivers_.offsets.data(),
                           int(whole_rows_), ring_->half_data(whole_group, at.half), ring_->columns(), at.column, st);
    cuda::record_parts(u_.data(), receiver_parts_.index.data(), receiver_parts_.factor.data(),
                       receiver_parts_.owner.data(), receiver_parts_.points, ring_->half_data(parts_group, at.half),
                       ring_->columns(), at.column, st);
    ring_->end_sample(n);
  }

  template <class U>
  void copy_out(std::span<U> out) {
    field_copy_.copy_now(out, [&](T* dense) { cuda::unpad(setup_.layout, u_.data(), dense, stream_.handle()); });
  }

  const Comm* domain_ = nullptr;
  int device_;                  // selected before any allocation
  cuda::Stream stream_;         // created before, destroyed after the buffers used in it
  cuda::Stream copy_stream_;    // halo staging copies (decomposed runs)
  cuda::Stream output_stream_;  // receiver samples and snapshots to the host
  cuda::Event packed_, received_;
  FdtdSetup<T> setup_;
  cuda::DeviceArray<T> u_, u_prev_, vel2dt2_;
  // The dense interior (copy_field, and start_copy_field's copy through pinned memory, allocated with the
  // propagator when snapshots are due).
  DeviceFieldCopy<T> field_copy_;
  // The receiver ring: rows of the receivers whole in this block (whole_group) and of split receivers' slots
  // (parts_group), sharing the halves' copies; ring_->host(group) is that group's (rows, nt) matrix.
  static constexpr std::size_t whole_group = 0, parts_group = 1;
  std::size_t whole_rows_ = 0, part_rows_ = 0;
  std::unique_ptr<DeviceTraceRing> ring_;  // made for the receivers (make_receivers)
  DeviceFieldStatsBuffers field_stats_;    // the blow-up checks' reduction
  std::array<cuda::DeviceArray<T>, 3> pml_a_, pml_b_;
  std::vector<cuda::DeviceArray<T>> slabs_;
  DevicePointLists<T> receivers_, receiver_parts_;
  DeviceGather<T> shell_sources_, interior_sources_;
  std::unique_ptr<DeviceHalo<T>> halo_;
  cuda::DeviceArray<double> wavelets_;  // (sources, nt) in fp64, as the CPU holds them
  std::vector<double> local_, traces_;
  bool traces_valid_ = false;
  cuda::StencilKernel kernel_ = cuda::stencil_kernel_from_environment();
  cuda::TileShape tile_ = cuda::tile_shape_from_environment(sizeof(T));
};

}  // namespace

std::unique_ptr<Propagator> make_fdtd_cuda_propagator(const Case& c, const Plan& plan, const Comm* domain) {
  if (c.scheme.formulation == Formulation::staggered) return make_staggered_cuda_propagator(c, plan, domain);
  if (c.scheme.formulation == Formulation::elastic) return make_elastic_cuda_propagator(c, plan, domain);
  if (c.run.precision == Precision::fp64) return std::make_unique<FdtdCuda<double>>(c, plan, domain);
  return std::make_unique<FdtdCuda<float>>(c, plan, domain);
}

}  // namespace specwave
