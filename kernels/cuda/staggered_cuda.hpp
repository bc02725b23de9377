#pragma once
// Host launchers of the CUDA kernels of the staggered velocity-pressure step (staggered_cuda.cu; docs/numerics.md,
// "Variable density"), callable from plain C++. The view is kernels/staggered_step.hpp's StaggeredStep with device
// pointers; every launch is checked and queued in `stream`. One rank (every ghost band is the grid's own); the
// gradient's outputs (divergence_out, increment_out) are the CPU's only. Explicitly instantiated for float and double.
#include <cuda_runtime_api.h>

#include "kernels/staggered_step.hpp"

namespace specwave::cuda {

// Step 1 (cpu::staggered_velocity_step's values): with a free surface the odd mirror of u on the R planes above
// z = 0, then w_a^{n+1/2} on every half node of each axis (ghost bands included) with its CPML phi.
template <class T>
void staggered_velocity_step(const StaggeredStep<T>& s, cudaStream_t stream);

// Step 2 (cpu::staggered_pressure_step's): with a free surface the even mirror of w_z, then every node's divergence
// with its CPML chi, the memory variables and u^{n+1}. The caller adds the sources and zeroes the top plane.
template <class T>
void staggered_pressure_step(const StaggeredStep<T>& s, cudaStream_t stream);

}  // namespace specwave::cuda
