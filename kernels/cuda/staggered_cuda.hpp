#pragma once
// Host launchers of the CUDA kernels of the staggered velocity-pressure step (staggered_cuda.cu; docs/numerics.md,
// "Variable density"), callable from plain C++. The view is kernels/staggered_step.hpp's StaggeredStep with device
// pointers; every launch is checked and queued in `stream`. One rank (every ghost band is the grid's own). Explicitly
// instantiated for float and double.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

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

// The adjoint step (cpu::staggered_adjoint_step's values; kernels/staggered_kernels.hpp, "The adjoint step"): the
// transposed pressure step on the nodes (q_a, r-bar, chi-bar, the image), w-bar -= D+ q on the half nodes, the free
// surface's mirror of w_z folded back, the buoyancy's image, e_a and phi-bar on the half nodes, u-bar -= sum D- e_a,
// the mirror of u folded back. The caller zeroes the top plane of u-bar before it and adds the adjoint sources after.
template <class T>
void staggered_adjoint_step(const StaggeredAdjointStep<T>& s, cudaStream_t stream);

// The Born step's scattering on every node (staggered_kernels::born_scatter_point).
template <class T>
void staggered_born_scatter(const StaggeredBornScatter<T>& b, cudaStream_t stream);

// out[k] += double(u[i])^2 on every node (k compact, i padded): the forward pass's illumination.
template <class T>
void add_squares(const FieldLayout& layout, const T* u, double* out, cudaStream_t stream);

// w[i] += relative[i] * dw[i] for i < n: the density's Born term on the half nodes.
template <class T>
void add_products(T* w, const T* relative, const T* dw, std::size_t n, cudaStream_t stream);

// The sources' imaging term of adjoint step n, point by point in the CPU's order (one thread: a few points, and the
// sums stay deterministic): term = double(u[index[p]]) double(factor[p]) running[owner[p] * nt + n], image[point[p]] +=
// term, source_image[owner[p]] += term.
template <class T>
void add_source_image(const T* u, const index_t* index, const T* factor, const std::int32_t* owner,
                      const std::int64_t* point, int n_points, const double* running, int nt, int n, double* image,
                      double* source_image, cudaStream_t stream);

}  // namespace specwave::cuda
