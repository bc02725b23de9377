#pragma once
// Host launchers of the CUDA FDTD kernels (fdtd_cuda.cu), callable from plain C++. All pointers are device
// pointers; every launch is checked and queued
// in `stream` (asynchronous unless said otherwise). Explicitly instantiated for float and double.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/fdtd_step.hpp"
#include "kernels/launch_geometry.hpp"

namespace specwave::cuda {

// The stencil kernel: `generic` runs update_kernel, one thread per point through the per-point functions (the
// reference); `tiled` (the default) runs the 2.5D-blocked update_tiled_kernel (shared-memory planes, z column in
// registers) over the points outside every CPML layer and update_boxes_kernel over the layers' points.
enum class StencilKernel { generic, tiled };

// The tiled kernel's shape (threads along x and y, planes per block along z): launch::TileShape, any within
// launch::check_tile_shape's rule.
using launch::TileShape;

// The kernel and tile shape a run uses: SPECWAVE_CUDA_KERNEL ("tiled", the default, or "generic") and
// SPECWAVE_CUDA_TILE ("XxY", "XxYxZ" or "XxYxZxP"; default launch::default_tile_shape of the precision, whose values
// have `value_bytes`), read when a propagator is made, so that one GPU run can compare them without a rebuild. A
// wrong value throws std::invalid_argument naming the variable and the accepted values.
StencilKernel stencil_kernel_from_environment();
TileShape tile_shape_from_environment(std::size_t value_bytes);

// One leapfrog step without sources: free-surface mirror, CPML psi update, then the fused
// Laplacian + CPML correction + leapfrog update of every point (the per-point functions of fdtd_point.hpp).
template <class T>
void fdtd_step(const FdtdStep<T>& step, cudaStream_t stream, StencilKernel kernel = StencilKernel::generic,
               TileShape tile = {});  // tile: for StencilKernel::tiled

// The step in two parts for a domain-decomposed block (kernels/fdtd_step.hpp): `shell` runs the mirror, psi and
// the update of the points within shell.width of the faces with a neighbour (up to six thin boxes); `interior` the
// update of the rest. Each box goes through the same split as `fdtd_step` (with `kernel` tiled: the tiled kernel
// outside the CPML layers, the layers' kernel inside), so every point gets the arithmetic it gets in `fdtd_step`.
template <class T>
void fdtd_step_part(const FdtdStep<T>& step, StepPart part, const Shell& shell, cudaStream_t stream,
                    StencilKernel kernel = StencilKernel::generic, TileShape tile = {});

// The box [lo, lo + extent) (interior coordinates, z y x; lo may reach into the halo) of a padded field to and
// from a dense buffer in C order: the halo planes sent to and received from a neighbouring rank.
template <class T>
void pack_box(const FieldLayout& layout, const T* u, const int lo[3], const int extent[3], T* buffer,
              cudaStream_t stream);
template <class T>
void unpack_box(const FieldLayout& layout, T* u, const int lo[3], const int extent[3], const T* buffer,
                cudaStream_t stream);

// parts[slot[p] * nt + n] = factor[p] * u[index[p]] (fp64), the points of receivers split between blocks.
template <class T>
void record_parts(const T* u, const index_t* index, const T* factor, const std::int32_t* slot, int n_points,
                  double* parts, int nt, int n, cudaStream_t stream);

// traces[r * nt + n] = sum_{p in receiver r} weight[p] * u[index[p]] (accumulated in fp64), for all receivers;
// receiver r owns points offsets[r] .. offsets[r+1]-1.
template <class T>
void record_receivers(const T* u, const index_t* index, const T* weight, const std::int32_t* offsets, int n_receivers,
                      double* traces, int nt, int n, cudaStream_t stream);

// u = 0 on the plane iz = 0.
template <class T>
void zero_top_plane(const FieldLayout& layout, T* u, cudaStream_t stream);

// max |u| over the interior and its flat (nz, ny, nx) index; a non-finite value wins. `partial_max` and
// `partial_index` are device scratch of at least stats_blocks() entries. Synchronises `stream`.
struct DeviceFieldStats {
  double max_abs;
  std::int64_t argmax;
  bool finite;
};
int stats_blocks();
template <class T>
DeviceFieldStats field_stats(const FieldLayout& layout, const T* u, double* partial_max, std::int64_t* partial_index,
                             cudaStream_t stream);

// Copies the interior of a padded device field into a dense (nz, ny, nx) device array.
template <class T>
void unpad(const FieldLayout& layout, const T* padded, T* dense, cudaStream_t stream);

}  // namespace specwave::cuda
