#pragma once
// CPU (OpenMP) launchers of the FDTD step. Explicitly instantiated for float and double in fdtd_cpu.cpp.
#include <cstddef>

#include "kernels/fdtd_step.hpp"

namespace specwave::cpu {

// One leapfrog step without sources: u_prev <- 2u - u_prev + (v dt)^2 Ltilde u, updating the CPML memory;
// `part` and `shell` as in kernels/fdtd_step.hpp.
template <class T>
void fdtd_step(const FdtdStep<T>& step, StepPart part = StepPart::all, const Shell& shell = {});

// Free surface: the odd mirror above it, u[-k] = -u[k] for k = 1..halo (whole padded planes).
template <class T>
void mirror_top_ghosts(const FieldLayout& layout, T* u);

// Free surface: u = 0 on the plane iz = 0 (applied after sources are injected).
template <class T>
void zero_top_plane(const FieldLayout& layout, T* u);

// The steps sweep their rows in blocks of this many rows along y, each block through z, so that the 2R + 1 planes'
// rows a z stencil of radius R reads stay in the L2 cache (the forward and the adjoint step); equal blocks, and (with
// `parts` > 1) as many as a multiple of `parts`, for a static share of whole blocks per thread.
int row_block_height(const FieldLayout& layout, int radius, std::size_t value_bytes, int parts = 1);

}  // namespace specwave::cpu
