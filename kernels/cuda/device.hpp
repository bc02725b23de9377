#pragma once
// CUDA device discovery, callable from plain C++ (the implementation lives in device.cu).
#include <cstddef>
#include <string>
#include <vector>

namespace specwave::cuda {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int compute_major = 0, compute_minor = 0;
  std::size_t total_bytes = 0, free_bytes = 0;
  int multiprocessors = 0;
};

struct CudaStatus {
  bool compiled = false;     // the CUDA backend is in this binary
  bool usable = false;       // at least one device can run kernels
  std::string reason;        // why not usable, in words a user can act on
  int driver_version = 0;    // e.g. 13000 for 13.0; 0 when no driver
  int runtime_version = 0;
  std::vector<DeviceInfo> devices;
};

// Never throws: a machine without a GPU (or with a driver older than the runtime) yields usable = false.
CudaStatus query_devices();

}  // namespace specwave::cuda
