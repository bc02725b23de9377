#include "kernels/cuda/check.cuh"
#include "kernels/cuda/device.hpp"

namespace specwave::cuda {

CudaStatus query_devices() {
  CudaStatus status;
  status.compiled = true;
  cudaRuntimeGetVersion(&status.runtime_version);
  if (cudaDriverGetVersion(&status.driver_version) != cudaSuccess || status.driver_version == 0) {
    status.reason = "no NVIDIA driver found (no usable GPU on this machine)";
    return status;
  }
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err == cudaErrorInsufficientDriver) {
    status.reason = "the NVIDIA driver (" + std::to_string(status.driver_version / 1000) + "." +
                    std::to_string(status.driver_version % 1000 / 10) + ") is older than this build's CUDA runtime (" +
                    std::to_string(status.runtime_version / 1000) + "." + std::to_string(status.runtime_version % 1000 / 10) +
                    "), or no GPU is present: update the driver or run on the CPU backend";
    return status;
  }
  if (err == cudaErrorNoDevice || count == 0) {
    status.reason = "no CUDA device found";
    return status;
  }
  if (err != cudaSuccess) {
    status.reason = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(err);
    return status;
  }
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) continue;
    DeviceInfo info;
    info.index = d;
    info.name = prop.name;
    info.compute_major = prop.major;
    info.compute_minor = prop.minor;
    info.total_bytes = prop.totalGlobalMem;
    info.multiprocessors = prop.multiProcessorCount;
    if (cudaSetDevice(d) == cudaSuccess) cudaMemGetInfo(&info.free_bytes, &info.total_bytes);
    status.devices.push_back(info);
  }
  status.usable = !status.devices.empty();
  if (!status.usable) status.reason = "no CUDA device could be queried";
  return status;
}

}  // namespace specwave::cuda
