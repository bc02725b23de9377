#include "solver/inversion/device_preconditioner.hpp"

#include <cuda_runtime_api.h>

#include <optional>

#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/smoothing_cuda.hpp"
#include "solver/inversion/preconditioner.hpp"

namespace specwave {

struct DevicePreconditioner::Impl {
  const GradientPreconditioner& host;
  cudaStream_t stream;
  std::optional<cuda::DeviceGaussianSmoother> smoother;
  cuda::DeviceArray<double> weight;       // W D, uploaded from host.weight()
  std::optional<std::uint64_t> uploaded;  // host.weight_version() of `weight`; none before the first upload
};

DevicePreconditioner::DevicePreconditioner(const GradientPreconditioner& host, void* stream)
    : impl_(new Impl{host, static_cast<cudaStream_t>(stream), {}, {}, {}}) {
  if (const GaussianSmoother* s = host.smoother())
    impl_->smoother.emplace(s->shape(), s->pad(), s->filter(), impl_->stream);
}

DevicePreconditioner::~DevicePreconditioner() = default;

// P v = S (W D) S v, as GradientPreconditioner::apply.
void DevicePreconditioner::apply(double* v) {
  Impl& m = *impl_;
  if (m.uploaded != m.host.weight_version()) {
    const std::vector<double>& w = m.host.weight();  // throws before set_illumination with compensation
    if (m.weight.size() != w.size()) {
      m.weight = cuda::DeviceArray<double>(w.size());
      cuda::synchronize();  // the zero fill runs in the legacy default stream; the copy below may not wait for it
    }
    cuda::copy_to_device(m.weight.data(), w.data(), w.size() * sizeof(double), m.stream);
    m.uploaded = m.host.weight_version();
  }
  if (m.smoother) m.smoother->apply(v);
  cuda::multiply_pointwise(m.weight.size(), v, m.weight.data(), m.stream);
  if (m.smoother) m.smoother->apply(v);
}

}  // namespace specwave
