#pragma once
// The CUDA side of kernels/launch_geometry.hpp: a kernel's own block and thread indices as launch::Int3 / Dim, and
// a launch::Dim as dim3, so kernels map threads to points only through the functions the CPU tests check.
#include <cuda_runtime.h>

#include "kernels/cuda/check.cuh"
#include "kernels/launch_geometry.hpp"

namespace specwave::cuda {

__device__ inline launch::Int3 block_index() { return {int(blockIdx.x), int(blockIdx.y), int(blockIdx.z)}; }
__device__ inline launch::Int3 thread_index() { return {int(threadIdx.x), int(threadIdx.y), int(threadIdx.z)}; }
__device__ inline launch::Dim block_dim() { return {blockDim.x, blockDim.y, blockDim.z}; }
__device__ inline launch::Dim grid_dim() { return {gridDim.x, gridDim.y, gridDim.z}; }
inline dim3 to_dim3(launch::Dim d) { return dim3(d.x, d.y, d.z); }

}  // namespace specwave::cuda

namespace specwave::cuda {

// kernel<<<...>>>(args..., box): one thread a point of `box` (launch::box_launch, block_x by block_y threads), the
// launch checked before (naming `what`) and after; nothing for an empty box.
template <class Kernel, class... Args>
void launch_over_box(Kernel kernel, const launch::Box& box, int block_x, int block_y, const char* what,
                     cudaStream_t stream, Args... args);

}  // namespace specwave::cuda

// kernel<<<SPECWAVE_LAUNCH(l, stream)>>>(...) for a checked launch::Launch l.
#define SPECWAVE_LAUNCH(l, stream) \
  ::specwave::cuda::to_dim3((l).grid), ::specwave::cuda::to_dim3((l).block), 0, (stream)

namespace specwave::cuda {
template <class Kernel, class... Args>
void launch_over_box(Kernel kernel, const launch::Box& box, int block_x, int block_y, const char* what,
                     cudaStream_t stream, Args... args) {
  if (box.extent.x <= 0 || box.extent.y <= 0 || box.extent.z <= 0) return;
  const launch::Launch l = launch::box_launch(box.extent, block_x, block_y);
  launch::check_launch(l, what);
  kernel<<<SPECWAVE_LAUNCH(l, stream)>>>(args..., box);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}
}  // namespace specwave::cuda
