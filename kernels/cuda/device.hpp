#pragma once
// CUDA device discovery, callable from plain C++ (the implementation lives in device.cu; a build without the CUDA
// backend links kernels/no_cuda.cpp instead, whose query answers compiled = false with `no_cuda_backend`).
#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace specwave::cuda {

// Why a build without the CUDA backend runs nothing on a GPU.
inline constexpr const char* no_cuda_backend =
    "this build has no CUDA backend (configure with SPECWAVE_CUDA=ON and a CUDA toolkit)";

// A device allocation failed (cudaErrorMemoryAllocation, CUFFT_ALLOC_FAILED, CUBLAS_STATUS_ALLOC_FAILED): the
// run needs more GPU memory than is free. `specwave` reports it as a resources error (exit 6), not a bug.
struct DeviceMemoryError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct DeviceInfo {
  int index = 0;
  std::string name;
  int compute_major = 0, compute_minor = 0;
  std::size_t total_bytes = 0;
  std::size_t free_bytes = 0;  // filled only by query_devices(true) or device_free_bytes()
  int multiprocessors = 0;
  std::array<std::uint8_t, 16> uuid{};  // the same GPU seen by several processes has the same uuid
  std::string problem;                  // non-empty: this device could not be queried (why)
};

struct CudaStatus {
  bool compiled = false;   // the CUDA backend is in this binary
  bool usable = false;     // at least one device can run kernels
  std::string reason;      // why not usable, in words a user can act on
  int driver_version = 0;  // e.g. 13000 for 13.0; 0 when no driver
  int runtime_version = 0;
  std::vector<DeviceInfo> devices;
};

// Never throws: a machine without a GPU (or with a driver older than the runtime) yields usable = false.
// devices[i] is CUDA device i. Without `free_memory` it reads device properties only, which opens no CUDA
// context: a process (or each MPI rank) then holds a context only on the device it runs on. With
// `free_memory` (`specwave info`) it also opens one on each device to read its free memory.
CudaStatus query_devices(bool free_memory = false);

// Free memory on `device` now (cudaMemGetInfo): makes `device` current, which opens its context. Returns false
// with the reason when the device cannot be used (e.g. taken by another process in exclusive mode).
bool device_free_bytes(int device, std::size_t& free_bytes, std::size_t& total_bytes, std::string& why);

}  // namespace specwave::cuda
