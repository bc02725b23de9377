#pragma once
// Every CUDA runtime call, cuFFT call and kernel launch goes through these checks; the message names the
// expression, file and line. Sticky errors (the context is lost) are reported as such: the process must end.
#include <cuda_runtime.h>
#include <cufft.h>

#include <stdexcept>
#include <string>

#include "kernels/cuda/device.hpp"

namespace specwave::cuda {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  std::string msg = std::string("CUDA error ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ") in `" +
                    expr + "` at " + file + ":" + std::to_string(line);
  if (err == cudaErrorMemoryAllocation) throw DeviceMemoryError(msg);
  throw std::runtime_error(msg);
}

inline const char* cufft_result_name(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED (out of device memory)";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE (no work area set)";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "unknown cuFFT error";
  }
}

[[noreturn]] inline void throw_cufft_error(cufftResult r, const char* expr, const char* file, int line) {
  const std::string msg = std::string("cuFFT error ") + cufft_result_name(r) + " (code " + std::to_string(int(r)) +
                          ") in `" + expr + "` at " + file + ":" + std::to_string(line);
  if (r == CUFFT_ALLOC_FAILED) throw DeviceMemoryError(msg);
  throw std::runtime_error(msg);
}

}  // namespace specwave::cuda

#define SPECWAVE_CUDA_CHECK(expr)                                                                                   \
  do {                                                                                                              \
    const cudaError_t specwave_err_ = (expr);                                                                       \
    if (specwave_err_ != cudaSuccess) ::specwave::cuda::throw_cuda_error(specwave_err_, #expr, __FILE__, __LINE__); \
  } while (0)

#define SPECWAVE_CUDA_CHECK_LAUNCH() SPECWAVE_CUDA_CHECK(cudaGetLastError())

#define SPECWAVE_CUFFT_CHECK(expr)                                                       \
  do {                                                                                   \
    const cufftResult specwave_fft_err_ = (expr);                                        \
    if (specwave_fft_err_ != CUFFT_SUCCESS)                                              \
      ::specwave::cuda::throw_cufft_error(specwave_fft_err_, #expr, __FILE__, __LINE__); \
  } while (0)
