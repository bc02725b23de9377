// FDTD on an NVIDIA GPU: the FdtdSetup arrays copied to the device once, the kernels of
// kernels/cuda/fdtd_cuda.cu in the time loop. Traces stay on the device and are copied back in one batch when
// asked for; no allocation happens after construction.
//
// Domain-decomposed (a domain communicator of several ranks, one GPU each): the block of FdtdSetup, and each
// step as on the CPU (docs/architecture.md): the shell, then its halo planes packed on the device and sent
// (from device memory with a CUDA-aware MPI, else staged through pinned host buffers on a second stream),
// while the interior update runs; the received planes are unpacked into the ghost planes.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/fdtd_cuda.hpp"
#include "solver/block_reduce.hpp"
#include "solver/comm.hpp"
#include "solver/halo.hpp"
#include "solver/fdtd_cuda_propagator.hpp"
#include "solver/device_state.hpp"
#include "solver/fdtd_setup.hpp"
#include "solver/plan.hpp"

namespace specwave {
namespace {

template <class T>
cuda::DeviceArray<T> upload(const std::vector<T>& host) {
  cuda::DeviceArray<T> d(host.size());
  cuda::copy_to_device(d.data(), host.data(), host.size() * sizeof(T));  // before any stream work: default stream
  return d;
}

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

// SPECWAVE_CUDA_KERNEL=tiled selects the 2.5D-blocked kernel; the default stays the generic one until the
// tiled kernel has been validated and measured on a GPU (tests/test_gpu.cpp, specwave-gpu-bench).
cuda::StencilKernel stencil_kernel_from_environment() {
  const char* v = std::getenv("SPECWAVE_CUDA_KERNEL");
  if (!v || std::string(v) == "generic") return cuda::StencilKernel::generic;
  if (std::string(v) == "tiled") return cuda::StencilKernel::tiled;
  throw std::invalid_argument(std::string("SPECWAVE_CUDA_KERNEL = '") + v + "': use 'generic' or 'tiled'");
}

int select(int device) {
  cuda::select_device(device);
  return device;
}

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
        device_(select(plan.device)),
        stream_(),
        setup_(setup_of<T>(c, plan, domain_)),
        u_(setup_.layout.size()),
        u_prev_(setup_.layout.size()),
        vel2dt2_(upload(setup_.vel2dt2)),
        dense_(std::size_t(setup_.layout.interior_points())),
        traces_device_((setup_.receivers.offsets.size() - 1) * std::size_t(setup_.nt)),
        parts_device_(std::size_t(setup_.block_receivers.slots()) * setup_.nt),
        stats_max_(cuda::stats_blocks()),
        stats_index_(cuda::stats_blocks()) {
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
    receivers_ = DevicePointLists<T>(setup_.receivers.index.size(), setup_.receivers.offsets.size() - 1);
    receivers_.assign(setup_.receivers, stream_.handle());
    const PointLists<T>& parts = setup_.block_receivers.parts;
    receiver_parts_ = DevicePointLists<T>(parts.index.size(), 0);
    receiver_parts_.assign(PointLists<T>{parts.index, parts.factor, parts.owner, {0}}, stream_.handle());
    if (domain_) halo_ = std::make_unique<DeviceHalo<T>>(*domain_, setup_.block, setup_.layout);
    // Room for the largest shot, so begin_shot never allocates.
    std::size_t max_points = 0, max_sources = 0;
    for (const auto& shot : plan.sources) {
      std::size_t points = 0;
      for (const auto& s : shot) points += s.points.size();
      max_points = std::max(max_points, points);
      max_sources = std::max(max_sources, shot.size());
    }
    shell_sources_ = DevicePointLists<T>(max_points, max_sources);
    interior_sources_ = DevicePointLists<T>(max_points, max_sources);
    wavelets_ = cuda::DeviceArray<T>(max_sources * std::size_t(setup_.nt));
    whole_host_.assign(traces_device_.size(), 0.0);
    parts_host_.assign(parts_device_.size(), 0.0);
    local_.assign(plan.receivers.size() * std::size_t(setup_.nt), 0.0);
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

  void begin_shot(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets) override {
    const cudaStream_t st = stream_.handle();
    u_.zero(st);
    u_prev_.zero(st);
    for (auto& s : slabs_) s.zero(st);
    traces_device_.zero(st);
    parts_device_.zero(st);
    PointLists<T> shell, interior;
    split_sources(setup_.sources(sources), halo_ ? halo_->shell : Shell{}, setup_.layout, shell, interior);
    shell.offsets = interior.offsets = {0};
    shell_sources_.assign(shell, st);
    interior_sources_.assign(interior, st);
    std::vector<T> flat(wavelets.size() * std::size_t(setup_.nt));
    for (std::size_t j = 0; j < wavelets.size(); ++j)
      for (int n = 0; n < setup_.nt; ++n) flat[j * setup_.nt + n] = T(wavelets[j][n]);
    cuda::copy_to_device(wavelets_.data(), flat.data(), flat.size() * sizeof(T), st);
    traces_valid_ = false;
  }

  void advance(int n_begin, int n_end) override {
    const int n_receivers = int(setup_.receivers.offsets.size()) - 1;
    const cudaStream_t st = stream_.handle();
    for (int n = n_begin; n < n_end; ++n) {
      cuda::record_receivers(u_.data(), receivers_.index.data(), receivers_.factor.data(), receivers_.offsets.data(),
                             n_receivers, traces_device_.data(), setup_.nt, n, st);
      cuda::record_parts(u_.data(), receiver_parts_.index.data(), receiver_parts_.factor.data(),
                         receiver_parts_.owner.data(), receiver_parts_.points, parts_device_.data(), setup_.nt, n, st);
      const FdtdStep<T> step{setup_.layout, u_.data(), u_prev_.data(), vel2dt2_.data(), setup_.coef,
                             {setup_.pml[0], setup_.pml[1], setup_.pml[2]}, setup_.free_surface};
      if (!halo_ || !halo_->active()) {
        cuda::fdtd_step(step, st, kernel_);
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
      const cudaStream_t st = stream_.handle();
      cuda::copy_to_host(whole_host_.data(), traces_device_.data(), whole_host_.size() * sizeof(double), st);
      cuda::copy_to_host(parts_host_.data(), parts_device_.data(), parts_host_.size() * sizeof(double), st);
      const auto& r = setup_.block_receivers;
      const std::size_t nt = std::size_t(setup_.nt);
      std::fill(local_.begin(), local_.end(), 0.0);
      for (std::size_t k = 0; k < r.whole_id.size(); ++k)
        std::copy_n(whole_host_.data() + k * nt, nt, local_.data() + std::size_t(r.whole_id[k]) * nt);
      traces_ = domain_ ? gather_block_traces(*domain_, r, local_, parts_host_, setup_.nt) : local_;
      traces_valid_ = true;
    }
    return traces_;
  }

  FieldStats field_stats() override {
    const auto s = cuda::field_stats(setup_.layout, u_.data(), stats_max_.data(), stats_index_.data(), stream_.handle());
    const FieldStats local{s.finite ? s.max_abs : INFINITY, s.argmax, s.finite};
    return domain_ ? reduce_field_stats(*domain_, setup_.block, local) : local;
  }

  std::optional<Block> block() const override {
    if (!domain_) return std::nullopt;
    return setup_.block;
  }

  void copy_field(std::span<float> out) override { copy_out(out); }
  void copy_field(std::span<double> out) override { copy_out(out); }

  void visit_state(StateVisitor& v) override {
    const cudaStream_t st = stream_.handle();
    visit_device(v, "u", u_, st);
    visit_device(v, "u_prev", u_prev_, st);
    for (std::size_t s = 0; s < slabs_.size(); ++s) visit_device(v, fmt::format("cpml_{}", s), slabs_[s], st);
    visit_device(v, "traces", traces_device_, st);
    visit_device(v, "trace_parts", parts_device_, st);
    traces_valid_ = false;
  }

  std::size_t device_bytes() const override {
    std::size_t bytes = u_.bytes() + u_prev_.bytes() + vel2dt2_.bytes() + dense_.bytes() + traces_device_.bytes() +
                        parts_device_.bytes() + wavelets_.bytes() + (halo_ ? halo_->device_bytes() : 0);
    for (const auto& s : slabs_) bytes += s.bytes();
    return bytes;
  }

 private:
  void inject(const DevicePointLists<T>& src, int n) {
    cuda::inject_sources(u_prev_.data(), src.index.data(), src.factor.data(), src.owner.data(), src.points,
                         wavelets_.data(), setup_.nt, n, stream_.handle());
  }

  // One step of a decomposed block: the shell, its planes packed and on their way (staged on the copy stream)
  // while the interior is updated, then the received planes unpacked into u^{n+1}'s ghost planes. The host
  // blocks in MPI while the GPU computes the interior.
  void exchange_step(const FdtdStep<T>& step, int n) {
    const cudaStream_t st = stream_.handle(), cp = copy_stream_.handle();
    DeviceHalo<T>& h = *halo_;
    cuda::fdtd_step_part(step, StepPart::shell, h.shell, st);
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
    cuda::fdtd_step_part(step, StepPart::interior, h.shell, st);
    inject(interior_sources_, n);
    if (setup_.free_surface) cuda::zero_top_plane(setup_.layout, u_prev_.data(), st);
    if (h.staged) copy_stream_.synchronize();
    else packed_.synchronize();
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

  template <class U>
  void copy_out(std::span<U> out) {
    cuda::unpad(setup_.layout, u_.data(), dense_.data(), stream_.handle());
    if constexpr (std::is_same_v<U, T>) {
      cuda::copy_to_host(out.data(), dense_.data(), dense_.bytes(), stream_.handle());
    } else {
      std::vector<T> host(dense_.size());
      cuda::copy_to_host(host.data(), dense_.data(), dense_.bytes(), stream_.handle());
      for (std::size_t i = 0; i < host.size(); ++i) out[i] = U(host[i]);
    }
  }

  const Comm* domain_ = nullptr;
  int device_;           // selected before any allocation
  cuda::Stream stream_;  // created before, destroyed after the buffers used in it
  cuda::Stream copy_stream_;  // halo staging copies (decomposed runs)
  cuda::Event packed_, received_;
  FdtdSetup<T> setup_;
  cuda::DeviceArray<T> u_, u_prev_, vel2dt2_, dense_;
  cuda::DeviceArray<double> traces_device_, parts_device_;
  cuda::DeviceArray<double> stats_max_;
  cuda::DeviceArray<std::int64_t> stats_index_;
  std::array<cuda::DeviceArray<T>, 3> pml_a_, pml_b_;
  std::vector<cuda::DeviceArray<T>> slabs_;
  DevicePointLists<T> receivers_, receiver_parts_, shell_sources_, interior_sources_;
  std::unique_ptr<DeviceHalo<T>> halo_;
  cuda::DeviceArray<T> wavelets_;
  std::vector<double> whole_host_, parts_host_, local_, traces_;
  bool traces_valid_ = false;
  cuda::StencilKernel kernel_ = stencil_kernel_from_environment();
};

}  // namespace

std::unique_ptr<Propagator> make_fdtd_cuda_propagator(const Case& c, const Plan& plan, const Comm* domain) {
  if (c.run.precision == Precision::fp64) return std::make_unique<FdtdCuda<double>>(c, plan, domain);
  return std::make_unique<FdtdCuda<float>>(c, plan, domain);
}

}  // namespace specwave
