#include "kernels/cuda/check.cuh"
#include "kernels/cuda/device.hpp"

namespace specwave::cuda {

CudaStatus query_devices(bool free_memory) {
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
                    std::to_string(status.runtime_version / 1000) + "." +
                    std::to_string(status.runtime_version % 1000 / 10) +
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
    DeviceInfo info;
    info.index = d;
    cudaDeviceProp prop{};
    const cudaError_t e = cudaGetDeviceProperties(&prop, d);
    if (e != cudaSuccess) {
      info.problem = std::string("cudaGetDeviceProperties failed: ") + cudaGetErrorString(e);
    } else {
      info.name = prop.name;
      info.compute_major = prop.major;
      info.compute_minor = prop.minor;
      info.total_bytes = prop.totalGlobalMem;
      info.multiprocessors = prop.multiProcessorCount;
      for (int b = 0; b < 16; ++b) info.uuid[std::size_t(b)] = std::uint8_t(prop.uuid.bytes[b]);
      if (free_memory) {
        std::string why;
        if (!device_free_bytes(d, info.free_bytes, info.total_bytes, why)) info.problem = why;
      }
    }
    if (info.problem.empty()) status.usable = true;
    status.devices.push_back(info);
  }
  if (!status.usable) status.reason = "no CUDA device could be queried";
  (void)cudaGetLastError();  // what failed here is reported above, not by the next checked call
  return status;
}

bool device_free_bytes(int device, std::size_t& free_bytes, std::size_t& total_bytes, std::string& why) {
  cudaError_t e = cudaSetDevice(device);
  if (e == cudaSuccess) e = cudaMemGetInfo(&free_bytes, &total_bytes);
  if (e == cudaSuccess) return true;
  why = "CUDA device " + std::to_string(device) + " cannot be used (" + cudaGetErrorString(e) +
        "; is it in exclusive-process mode and taken by another process?)";
  (void)cudaGetLastError();
  return false;
}

}  // namespace specwave::cuda
