// DevicePreconditioner in a build without the CUDA backend (CMake compiles this file instead of
// device_preconditioner.cpp): invert's vectors are never on a device there, so nothing reaches it; a direct
// construction is refused with the reason.
#include "kernels/cuda/device.hpp"
#include "solver/case/errors.hpp"
#include "solver/inversion/device_preconditioner.hpp"

namespace specwave {

struct DevicePreconditioner::Impl {};

DevicePreconditioner::DevicePreconditioner(const GradientPreconditioner&, void*) {
  throw Error(ExitCode::backend_unavailable, std::string("the device preconditioner: ") + cuda::no_cuda_backend);
}

DevicePreconditioner::~DevicePreconditioner() = default;

void DevicePreconditioner::apply(double*) {}

}  // namespace specwave
