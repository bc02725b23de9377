#pragma once
// The free surface's odd mirror of a field above z = 0 (u[-k] = -u[k], k = 1..halo, whole padded planes), shared by
// the forward and the adjoint FDTD steps (the mapping: launch::mirror_launch and launch::mirror_point).
#include "kernels/common.hpp"
#include "kernels/cuda/check.cuh"
#include "kernels/cuda/launch.cuh"

namespace specwave::cuda {

template <class T>
__global__ void mirror_top_kernel(FieldLayout L, T* u) {
  const index_t plane = L.stride_z();
  index_t p;
  int k;
  if (!launch::mirror_point(plane, block_dim(), block_index(), thread_index(), p, k)) return;
  const index_t surface = index_t(L.halo) * plane;
  u[surface - k * plane + p] = -u[surface + k * plane + p];
}

// Queues the mirror of `u` in `stream`; `what` names the caller in a launch-limit error.
template <class T>
void mirror_top(const FieldLayout& L, T* u, cudaStream_t stream, const char* what) {
  const launch::Launch l = launch::mirror_launch(L.stride_z(), L.halo, 256);
  launch::check_launch(l, what);
  mirror_top_kernel<<<SPECWAVE_LAUNCH(l, stream)>>>(L, u);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

}  // namespace specwave::cuda
