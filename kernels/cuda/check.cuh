#pragma once
// Every CUDA runtime call and kernel launch goes through these checks; the message names the expression,
// file and line. Sticky errors (the context is lost) are reported as such: the process must end.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace specwave::cuda {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  std::string msg = std::string("CUDA error ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ") in `" +
                    expr + "` at " + file + ":" + std::to_string(line);
  throw std::runtime_error(msg);
}

}  // namespace specwave::cuda

#define SPECWAVE_CUDA_CHECK(expr)                                                                  \
  do {                                                                                             \
    const cudaError_t specwave_err_ = (expr);                                                      \
    if (specwave_err_ != cudaSuccess) ::specwave::cuda::throw_cuda_error(specwave_err_, #expr, __FILE__, __LINE__); \
  } while (0)

#define SPECWAVE_CUDA_CHECK_LAUNCH() SPECWAVE_CUDA_CHECK(cudaGetLastError())
