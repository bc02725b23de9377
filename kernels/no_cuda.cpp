// The CUDA entry points of kernels/ in a build without the CUDA backend (CMake compiles this file instead of
// kernels/cuda/*.cu): the device query answers "not compiled" with the reason the plan prints, so that callers
// need no #if. Nothing else here is reachable: the plan never resolves a backend to cuda in such a build.
#include <stdexcept>

#include "kernels/cuda/cublas_library.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/vector_ops.hpp"

namespace specwave {
namespace cuda {

CudaStatus query_devices(bool) {
  CudaStatus status;
  status.reason = std::string(no_cuda_backend);
  return status;
}

bool device_free_bytes(int, std::size_t& free_bytes, std::size_t& total_bytes, std::string& why) {
  free_bytes = total_bytes = 0;
  why = std::string(no_cuda_backend);
  return false;
}

std::string cublas_library_problem() { return std::string(no_cuda_backend); }

std::string cublas_library_name() { return {}; }

}  // namespace cuda

std::unique_ptr<VectorOps> make_cublas_vector_ops(void*) {
  throw std::logic_error(std::string("cuBLAS vector operations: ") + cuda::no_cuda_backend);
}

}  // namespace specwave
