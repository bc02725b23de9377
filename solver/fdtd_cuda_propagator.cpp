// FDTD on an NVIDIA GPU: the FdtdSetup arrays copied to the device once, the kernels of
// kernels/cuda/fdtd_cuda.cu in the time loop. Traces stay on the device and are copied back in one batch when
// asked for; no allocation happens after construction.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/fdtd_cuda.hpp"
#include "solver/fdtd_cuda_propagator.hpp"
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
class FdtdCuda final : public Propagator {
 public:
  FdtdCuda(const Case& c, const Plan& plan)
      : device_(select(plan.device)),
        stream_(),
        setup_(make_fdtd_setup<T>(c, plan)),
        u_(setup_.layout.size()),
        u_prev_(setup_.layout.size()),
        vel2dt2_(upload(setup_.vel2dt2)),
        dense_(std::size_t(setup_.layout.interior_points())),
        traces_device_((setup_.receivers.offsets.size() - 1) * std::size_t(setup_.nt)),
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
    // Room for the largest shot, so begin_shot never allocates.
    std::size_t max_points = 0, max_sources = 0;
    for (const auto& shot : plan.sources) {
      std::size_t points = 0;
      for (const auto& s : shot) points += s.points.size();
      max_points = std::max(max_points, points);
      max_sources = std::max(max_sources, shot.size());
    }
    sources_ = DevicePointLists<T>(max_points, max_sources);
    wavelets_ = cuda::DeviceArray<T>(max_sources * std::size_t(setup_.nt));
    traces_host_.assign(traces_device_.size(), 0.0);
  }

  std::string name() const override { return std::string("fdtd-cuda-") + (sizeof(T) == 4 ? "fp32" : "fp64"); }

  void begin_shot(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets) override {
    const cudaStream_t st = stream_.handle();
    u_.zero(st);
    u_prev_.zero(st);
    for (auto& s : slabs_) s.zero(st);
    traces_device_.zero(st);
    sources_.assign(setup_.sources(sources), st);
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
      const FdtdStep<T> step{setup_.layout, u_.data(), u_prev_.data(), vel2dt2_.data(), setup_.coef,
                             {setup_.pml[0], setup_.pml[1], setup_.pml[2]}, setup_.free_surface};
      cuda::fdtd_step(step, st, kernel_);
      cuda::inject_sources(u_prev_.data(), sources_.index.data(), sources_.factor.data(), sources_.owner.data(),
                           sources_.points, wavelets_.data(), setup_.nt, n, st);
      if (setup_.free_surface) cuda::zero_top_plane(setup_.layout, u_prev_.data(), st);
      std::swap(u_, u_prev_);
    }
    traces_valid_ = false;
  }

  std::span<const double> traces() override {
    if (!traces_valid_) {
      cuda::copy_to_host(traces_host_.data(), traces_device_.data(), traces_host_.size() * sizeof(double), stream_.handle());
      traces_valid_ = true;
    }
    return traces_host_;
  }

  FieldStats field_stats() override {
    const auto s = cuda::field_stats(setup_.layout, u_.data(), stats_max_.data(), stats_index_.data(), stream_.handle());
    return FieldStats{s.finite ? s.max_abs : INFINITY, s.argmax, s.finite};
  }

  void copy_field(std::span<float> out) override { copy_out(out); }
  void copy_field(std::span<double> out) override { copy_out(out); }

  std::size_t device_bytes() const override {
    std::size_t bytes = u_.bytes() + u_prev_.bytes() + vel2dt2_.bytes() + dense_.bytes() + traces_device_.bytes() +
                        wavelets_.bytes();
    for (const auto& s : slabs_) bytes += s.bytes();
    return bytes;
  }

 private:
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

  int device_;           // selected before any allocation
  cuda::Stream stream_;  // created before, destroyed after the buffers used in it: created before, destroyed after the buffers used in it
  FdtdSetup<T> setup_;
  cuda::DeviceArray<T> u_, u_prev_, vel2dt2_, dense_;
  cuda::DeviceArray<double> traces_device_;
  cuda::DeviceArray<double> stats_max_;
  cuda::DeviceArray<std::int64_t> stats_index_;
  std::array<cuda::DeviceArray<T>, 3> pml_a_, pml_b_;
  std::vector<cuda::DeviceArray<T>> slabs_;
  DevicePointLists<T> receivers_, sources_;
  cuda::DeviceArray<T> wavelets_;
  std::vector<double> traces_host_;
  bool traces_valid_ = false;
  cuda::StencilKernel kernel_ = stencil_kernel_from_environment();
};

}  // namespace

std::unique_ptr<Propagator> make_fdtd_cuda_propagator(const Case& c, const Plan& plan) {
  if (c.run.precision == Precision::fp64) return std::make_unique<FdtdCuda<double>>(c, plan);
  return std::make_unique<FdtdCuda<float>>(c, plan);
}

}  // namespace specwave
