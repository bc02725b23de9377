// CUDA kernels of the FDTD step. The physics is the per-point functions of kernels/fdtd_point.hpp, the same
// ones the CPU loops call; these kernels only map threads to points.
//
// Launch contracts: every kernel takes interior coordinates (0 .. n-1) and the padded FieldLayout; x is the
// fastest thread index so a warp reads consecutive addresses. Each kernel maps (block, thread) to its points only
// through the functions of kernels/launch_geometry.hpp, which tests/test_launch_geometry.cpp checks on the CPU, and
// each launch's configuration passes launch::check_launch first.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/check.cuh"
#include "kernels/cuda/fdtd_cuda.hpp"
#include "kernels/cuda/free_surface.cuh"
#include "kernels/cuda/launch.cuh"

namespace specwave::cuda {
namespace {

constexpr int block_x = 64, block_y = 4;
constexpr int reduce_threads = 256, reduce_blocks = 1024;

using launch::Int3;

Int3 int3_of(const int zyx[3]) { return {zyx[2], zyx[1], zyx[0]}; }

// CPML step 1 on every face: psi_a^n = b psi_a^{n-1} + a D1_a u^n. One launch for all faces (fewer launches a
// step for small grids, and no gridDim.y/z limit), each face flattened over its box (launch::FaceSet: no block
// idles on a short x row, 32-bit index arithmetic inside a face).
template <int R, class T>
__global__ void psi_kernel(FdtdStep<T> s, launch::FaceSet faces) {
  int f;
  Int3 q;
  if (!launch::face_point(faces, blockIdx.x, int(threadIdx.x), f, q)) return;
  const int x = q.x, y = q.y, z = q.z;
  const int axis = faces.axis[f], side = faces.side[f];
  const CpmlAxis<T>& p = s.pml[axis];
  const int c[3] = {z, y, x};
  const int i_axis = c[axis];
  const index_t j = slab_index(p, axis, z, y, x);
  const index_t i = s.layout.index(z, y, x);
  p.psi[side][j] = cpml_memory(p.b[i_axis], p.a[i_axis], p.psi[side][j],
                               first_derivative<R>(s.u, i, s.layout.stride(axis), s.coef.d1[axis]));
}

// CPML step 2 and the time update of one point q: u^{n+1} = 2u^n - u^{n-1} + (v dt)^2 (L_h u^n + sum of layer
// corrections). The body of update_kernel and update_boxes_kernel.
template <int R, class T>
__device__ inline void update_point(const FdtdStep<T>& s, Int3 q) {
  const FieldLayout& L = s.layout;
  const index_t i = L.index(q.z, q.y, q.x);
  const T lap = laplacian<R>(s.u, i, L.stride_y(), L.stride_z(), s.coef) + cpml_corrections<R>(s, i, q.z, q.y, q.x);
  s.u_prev[i] = leapfrog(s.u[i], s.u_prev[i], s.vel2dt2[i], lap);
}

// The points of the box [lo, lo + extent) (the whole grid, or one part of a decomposed step), one thread a point: the
// generic (reference) kernel.
template <int R, class T>
__global__ void update_kernel(FdtdStep<T> s, Int3 lo, Int3 extent) {
  Int3 q;
  if (launch::box_point(lo, extent, block_dim(), block_index(), thread_index(), q)) update_point<R>(s, q);
}

// The update of the points of a box [lo, lo + extent), the CPML layers' points included: update_kernel's arithmetic,
// one thread per point, the boxes (up to six, disjoint) flattened into one launch (launch::FaceSet) with 32-bit index
// arithmetic inside a box. The tiled step runs the layers' points through it, the layer-free box through
// update_tiled_kernel.
template <int R, class T>
__global__ void update_boxes_kernel(FdtdStep<T> s, launch::FaceSet boxes) {
  int f;
  Int3 q;
  if (launch::face_point(boxes, blockIdx.x, int(threadIdx.x), f, q)) update_point<R>(s, q);
}

// The 2.5D-blocked update of a box outside every CPML layer (docs/gpu.md, "The tiled kernel"): a (BX, BY) tile of
// threads marches its columns along z through z_per_block planes. The current plane and its halo sit in shared
// memory, the z neighbours in registers (each value loaded from device memory once a step and shifted), so a point
// reads u once (plus the tile's halo, 2R (BX + BY) values a plane), u^{n-1} and (v dt)^2 once, and writes u^{n+1}
// once: 16 bytes in fp32. No CPML code, so no register pressure from it (the layers run through
// update_boxes_kernel). Latency: the next plane's halo, u^{n-1} and (v dt)^2 are loaded into registers while this
// plane computes, and the tile is double-buffered, so a plane costs one barrier and no load waits between barriers.
// The halo is loaded by all threads of the block, each taking the slots launch::tile_halo_slot assigns (rows
// coalesced); the first two slots of a thread are prefetched, the rare shapes with more (R = 8 on small tiles) load
// the rest directly. The arithmetic is laplacian()'s of fdtd_point.hpp (near terms in difference form, far terms
// summed with far_centre); the GPU tests check it against update_kernel.
template <int R, int P, class T>
__global__ void __launch_bounds__(launch::max_tile_threads)
    update_tiled_kernel(FdtdStep<T> s, Int3 lo, Int3 extent, int z_per_block) {
  extern __shared__ unsigned char tile_memory[];  // two planes of (P BY + 2R) rows of BX + 2R values
  const int BX = int(blockDim.x), BY = int(blockDim.y), rows = P * BY, pitch = BX + 2 * R;
  const int plane = (rows + 2 * R) * pitch;
  T* const tiles = reinterpret_cast<T*>(tile_memory);
  const FieldLayout L = s.layout;
  const int tx = int(threadIdx.x), ty = int(threadIdx.y), t = ty * BX + tx, threads = BX * BY;
  const index_t sy = L.stride_y(), sz = L.stride_z();
  constexpr int near_terms = R < SPECWAVE_NEAR_TERMS ? R : SPECWAVE_NEAR_TERMS;
  const T* __restrict__ u = s.u;
  T* __restrict__ u_prev = s.u_prev;
  const T* __restrict__ vel = s.vel2dt2;
  // This thread's P columns: rows ty, ty + BY, ... of the block's tile (launch::tile_column with the tile's height).
  bool active[P], loadable[P];  // loadable: inside the padded array
  index_t i[P];
  int centre[P];
  int z0 = 0, z1 = 0, x_origin = 0, y_origin = 0;
#pragma unroll
  for (int r = 0; r < P; ++r) {
    const launch::TileColumn c = launch::tile_column(lo, extent, {L.nx, L.ny, L.nz}, R, BX, rows, z_per_block,
                                                     block_index(), Int3{tx, ty + r * BY, 0});
    active[r] = c.active;
    loadable[r] = c.loadable;
    z0 = c.z_begin;
    z1 = c.z_end;
    i[r] = c.loadable ? L.index(z0, c.y, c.x) : 0;
    centre[r] = (ty + r * BY + R) * pitch + tx + R;
    if (r == 0) x_origin = c.x - tx - R, y_origin = c.y - ty - R;  // the tile's first column and row (>= -R)
  }
  const int halo = launch::tile_halo_count(BX, rows, R);
  index_t origin = L.index(z0, y_origin, x_origin);
  // This thread's two prefetched halo slots: where they go in the tile (-1: none), where they come from relative to
  // the tile's origin, and whether that lies in the padded array (else 0).
  int slot[2] = {-1, -1}, offset[2] = {0, 0};
  bool inside[2] = {false, false};
#pragma unroll
  for (int j = 0; j < 2; ++j) {
    const int h = t + j * threads;
    if (h >= halo) continue;
    int row, col;
    launch::tile_halo_slot(BX, rows, R, h, row, col);
    slot[j] = row * pitch + col;
    offset[j] = int(row * sy) + col;
    inside[j] = x_origin + col < L.nx + R && y_origin + row < L.ny + R;
  }

  T behind[P][R], infront[P][R], cur[P], before[P], v[P];
#pragma unroll
  for (int r = 0; r < P; ++r) {
    cur[r] = loadable[r] ? u[i[r]] : T(0);
#pragma unroll
    for (int k = 0; k < R; ++k) {
      behind[r][k] = loadable[r] ? u[i[r] - (k + 1) * sz] : T(0);
      infront[r][k] = loadable[r] ? u[i[r] + (k + 1) * sz] : T(0);
    }
    before[r] = active[r] ? u_prev[i[r]] : T(0);
    v[r] = active[r] ? vel[i[r]] : T(0);
  }
  T halo_value[2];
#pragma unroll
  for (int j = 0; j < 2; ++j) halo_value[j] = inside[j] ? u[origin + offset[j]] : T(0);
  for (int z = z0; z < z1; ++z) {
    T* const tile = tiles + ((z - z0) & 1) * plane;
#pragma unroll
    for (int r = 0; r < P; ++r) tile[centre[r]] = cur[r];
#pragma unroll
    for (int j = 0; j < 2; ++j)
      if (slot[j] >= 0) tile[slot[j]] = halo_value[j];
    for (int h = t + 2 * threads; h < halo; h += threads) {  // shapes with more than two halo values a thread
      int row, col;
      launch::tile_halo_slot(BX, rows, R, h, row, col);
      const bool in = x_origin + col < L.nx + R && y_origin + row < L.ny + R;
      tile[row * pitch + col] = in ? u[origin + row * sy + col] : T(0);
    }
    // One barrier a plane: the other buffer, written next, was last read before this barrier.
    __syncthreads();
    // The next plane's loads, in flight while this plane computes.
    const bool more = z + 1 < z1;
#pragma unroll
    for (int j = 0; j < 2; ++j) halo_value[j] = (more && inside[j]) ? u[origin + sz + offset[j]] : T(0);
    T next_before[P], next_v[P];
#pragma unroll
    for (int r = 0; r < P; ++r) {
      next_before[r] = (more && active[r]) ? u_prev[i[r] + sz] : T(0);
      next_v[r] = (more && active[r]) ? vel[i[r] + sz] : T(0);
    }
#pragma unroll
    for (int r = 0; r < P; ++r) {
      if (active[r]) {
        const T mid = cur[r];
        const T* const c = tile + centre[r];
        T sum = 0;
#pragma unroll
        for (int k = 1; k <= near_terms; ++k)
          sum += s.coef.d2[0][k] * ((infront[r][k - 1] - mid) + (behind[r][k - 1] - mid)) +
                 s.coef.d2[1][k] * ((c[k * pitch] - mid) + (c[-k * pitch] - mid)) +
                 s.coef.d2[2][k] * ((c[k] - mid) + (c[-k] - mid));
        if constexpr (R > near_terms) {
          T far = s.coef.far_centre * mid;
#pragma unroll
          for (int k = near_terms + 1; k <= R; ++k)
            far += s.coef.d2[0][k] * (infront[r][k - 1] + behind[r][k - 1]) +
                   s.coef.d2[1][k] * (c[k * pitch] + c[-k * pitch]) + s.coef.d2[2][k] * (c[k] + c[-k]);
          sum += far;
        }
        u_prev[i[r]] = leapfrog(mid, before[r], v[r], sum);
      }
      before[r] = next_before[r];
      v[r] = next_v[r];
      // Shift the z column by one plane; the new front value (z + 1 + R) is needed only if plane z + 1 is this
      // block's.
#pragma unroll
      for (int k = R - 1; k > 0; --k) behind[r][k] = behind[r][k - 1];
      behind[r][0] = cur[r];
      cur[r] = infront[r][0];
#pragma unroll
      for (int k = 0; k < R - 1; ++k) infront[r][k] = infront[r][k + 1];
      infront[r][R - 1] = (loadable[r] && more) ? u[i[r] + (R + 1) * sz] : T(0);
      i[r] += sz;
    }
    origin += sz;
  }
}

// What every point of a step needs first: the free-surface mirror of u^n and the CPML memory psi.
template <int R, class T>
void mirror_and_psi(const FdtdStep<T>& s, cudaStream_t stream) {
  const FieldLayout& L = s.layout;
  if (s.free_surface) {
    mirror_top(L, s.u, stream, "cuda::fdtd_step (free-surface mirror)");
  }
  launch::FaceSet faces;
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) {
      const CpmlAxis<T>& p = s.pml[axis];
      if (!p.face[side]) continue;
      int lo[3] = {0, 0, 0}, ext[3] = {L.nz, L.ny, L.nx};
      lo[axis] = side == 0 ? 0 : p.n - p.width;
      ext[axis] = p.width;
      launch::add_face(faces, axis, side, int3_of(lo), int3_of(ext));
    }
  if (faces.blocks() == 0) return;
  const launch::Launch l = launch::face_launch(faces);
  launch::check_launch(l, "cuda::fdtd_step (CPML faces)");
  psi_kernel<R><<<SPECWAVE_LAUNCH(l, stream)>>>(s, faces);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

// The layer-free region of the grid: the interior box of the shell whose widths are the CPML layers' (launch::Box).
template <class T>
launch::Box layer_free_box(const FdtdStep<T>& s) {
  const FieldLayout& L = s.layout;
  int width[3][2] = {};
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) width[axis][side] = s.pml[axis].face[side] ? s.pml[axis].width : 0;
  launch::Box boxes[7];
  launch::shell_boxes({L.nx, L.ny, L.nz}, width, boxes);
  return boxes[6];
}

template <int R, class T>
void update_box_generic(const FdtdStep<T>& s, const launch::Box& box, cudaStream_t stream) {
  if (box.extent.x <= 0 || box.extent.y <= 0 || box.extent.z <= 0) return;
  const launch::Launch l = launch::box_launch(box.extent, block_x, block_y);
  launch::check_launch(l, "cuda::fdtd_step (update of a box)");
  update_kernel<R><<<SPECWAVE_LAUNCH(l, stream)>>>(s, box.lo, box.extent);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

// The update of `box` with the chosen kernel. tiled: the box's part outside every CPML layer through
// update_tiled_kernel (tile shape `tile`, launch::check_tile_shape), the rest (up to six disjoint boxes) through one
// update_boxes_kernel launch. Every point of the box is updated once either way.
template <int R, class T>
void update_box(const FdtdStep<T>& s, const launch::Box& box, StencilKernel kernel, TileShape tile,
                cudaStream_t stream) {
  if (box.extent.x <= 0 || box.extent.y <= 0 || box.extent.z <= 0) return;
  if (kernel == StencilKernel::generic) return update_box_generic<R>(s, box, stream);
  launch::check_tile_shape(tile, "cuda::fdtd_step");
  // The tiled kernel keeps a halo value's offset from the tile's origin in 32 bits: a tile's rows times a row of the
  // padded field must stay below 2^31 (a grid over 4 million points along x with the tallest tiles), else the
  // generic kernel takes the box.
  const std::int64_t tile_span = std::int64_t(tile.y * tile.p + 2 * R + 1) * s.layout.stride_y();
  if (tile_span >= (std::int64_t(1) << 31)) return update_box_generic<R>(s, box, stream);
  launch::Box parts[7];
  launch::split_box(box, layer_free_box(s), parts);
  const launch::Box& inner = parts[6];
  if (inner.extent.x > 0 && inner.extent.y > 0 && inner.extent.z > 0) {
    const launch::Launch l = launch::tile_launch(inner.extent, tile.x, tile.y, tile.z, tile.p);
    launch::check_launch(l, "cuda::fdtd_step (tiled update)");
    const std::size_t shared = launch::tile_shared_bytes(tile, R, sizeof(T));
    if (tile.p == 2)
      update_tiled_kernel<R, 2, T>
          <<<to_dim3(l.grid), to_dim3(l.block), shared, stream>>>(s, inner.lo, inner.extent, tile.z);
    else
      update_tiled_kernel<R, 1, T>
          <<<to_dim3(l.grid), to_dim3(l.block), shared, stream>>>(s, inner.lo, inner.extent, tile.z);
    SPECWAVE_CUDA_CHECK_LAUNCH();
  }
  launch::FaceSet rest;
  for (int b = 0; b < 6; ++b) launch::add_face(rest, 0, 0, parts[b].lo, parts[b].extent);
  if (rest.blocks() == 0) return;
  const launch::Launch l = launch::face_launch(rest);
  launch::check_launch(l, "cuda::fdtd_step (update of the CPML layers)");
  update_boxes_kernel<R><<<SPECWAVE_LAUNCH(l, stream)>>>(s, rest);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

template <int R, class T>
void step_radius(const FdtdStep<T>& s, cudaStream_t stream, StencilKernel kernel, TileShape tile) {
  const FieldLayout& L = s.layout;
  if (L.halo != R) throw std::logic_error("cuda::fdtd_step: field halo must equal the stencil radius");
  mirror_and_psi<R>(s, stream);
  update_box<R>(s, launch::Box{{}, {L.nx, L.ny, L.nz}}, kernel, tile, stream);
}

// The shell as six disjoint boxes and the interior box, each through update_box: every point gets the kernel it gets
// in an undecomposed run (the tiled kernel outside the CPML layers, the layers' kernel inside), so a decomposed run
// stays bitwise the undecomposed one whatever the two kernels' rounding.
template <int R, class T>
void step_part_radius(const FdtdStep<T>& s, StepPart part, const Shell& shell, StencilKernel kernel, TileShape tile,
                      cudaStream_t stream) {
  const FieldLayout& L = s.layout;
  if (L.halo != R) throw std::logic_error("cuda::fdtd_step_part: field halo must equal the stencil radius");
  launch::Box boxes[7];
  launch::shell_boxes({L.nx, L.ny, L.nz}, shell.width, boxes);
  if (part == StepPart::interior) return update_box<R>(s, boxes[6], kernel, tile, stream);
  mirror_and_psi<R>(s, stream);
  if (part == StepPart::all) return update_box<R>(s, launch::Box{{}, {L.nx, L.ny, L.nz}}, kernel, tile, stream);
  for (int b = 0; b < 6; ++b) update_box<R>(s, boxes[b], kernel, tile, stream);
}

template <class T>
__global__ void box_copy_kernel(FieldLayout L, T* u, Int3 lo, Int3 extent, T* buffer, bool to_buffer) {
  Int3 q;
  if (!launch::box_point(Int3{}, extent, block_dim(), block_index(), thread_index(), q)) return;
  const index_t i = L.index(lo.z + q.z, lo.y + q.y, lo.x + q.x);
  const index_t j = launch::box_buffer_index(extent, q);
  if (to_buffer)
    buffer[j] = u[i];
  else
    u[i] = buffer[j];
}

template <class T>
__global__ void record_parts_kernel(const T* u, const index_t* index, const T* factor, const std::int32_t* slot,
                                    int n_points, double* parts, int nt, int n) {
  index_t p;
  if (!launch::item_index(n_points, block_dim(), block_index(), thread_index(), p)) return;
  parts[index_t(slot[p]) * nt + n] = double(factor[p]) * double(u[index[p]]);
}

template <class T>
__global__ void record_kernel(const T* u, const index_t* index, const T* weight, const std::int32_t* offsets,
                              int n_receivers, double* traces, int nt, int n) {
  index_t r;
  if (!launch::item_index(n_receivers, block_dim(), block_index(), thread_index(), r)) return;
  double sum = 0;
  for (int p = offsets[r]; p < offsets[r + 1]; ++p) sum += double(weight[p]) * double(u[index[p]]);
  traces[index_t(r) * nt + n] = sum;
}

template <class T>
__global__ void zero_top_kernel(FieldLayout L, T* u) {
  Int3 q;
  if (launch::box_point(Int3{}, Int3{L.nx, L.ny, 1}, block_dim(), block_index(), thread_index(), q))
    u[L.index(0, q.y, q.x)] = T(0);
}

// Block-wise max |u| with the smallest index among ties; non-finite values count as +inf.
template <class T>
__global__ void stats_kernel(FieldLayout L, const T* u, double* partial_max, std::int64_t* partial_index) {
  __shared__ double best[reduce_threads];
  __shared__ std::int64_t where[reduce_threads];
  double m = -1;
  std::int64_t w = -1;
  const std::int64_t total = L.interior_points();
  const std::int64_t step = launch::stride_step(grid_dim(), block_dim());
  for (std::int64_t k = launch::stride_start(block_dim(), block_index(), thread_index()); k < total; k += step) {
    const int x = int(k % L.nx), y = int(k / L.nx % L.ny), z = int(k / (std::int64_t(L.nx) * L.ny));
    double v = fabs(double(u[L.index(z, y, x)]));
    if (!isfinite(v)) v = INFINITY;
    if (v > m) m = v, w = k;
  }
  best[threadIdx.x] = m;
  where[threadIdx.x] = w;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      const double o = best[threadIdx.x + half];
      const std::int64_t ow = where[threadIdx.x + half];
      if (o > best[threadIdx.x] ||
          (o == best[threadIdx.x] && ow >= 0 && (where[threadIdx.x] < 0 || ow < where[threadIdx.x]))) {
        best[threadIdx.x] = o;
        where[threadIdx.x] = ow;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    partial_max[blockIdx.x] = best[0];
    partial_index[blockIdx.x] = where[0];
  }
}

template <class T>
__global__ void unpad_kernel(FieldLayout L, const T* padded, T* dense) {
  Int3 q;
  const Int3 n{L.nx, L.ny, L.nz};
  if (launch::box_point(Int3{}, n, block_dim(), block_index(), thread_index(), q))
    dense[launch::box_buffer_index(n, q)] = padded[L.index(q.z, q.y, q.x)];
}

}  // namespace

template <class T>
void fdtd_step(const FdtdStep<T>& s, cudaStream_t stream, StencilKernel kernel, TileShape tile) {
  switch (s.coef.radius) {
    case 1: return step_radius<1>(s, stream, kernel, tile);
    case 2: return step_radius<2>(s, stream, kernel, tile);
    case 3: return step_radius<3>(s, stream, kernel, tile);
    case 4: return step_radius<4>(s, stream, kernel, tile);
    case 5: return step_radius<5>(s, stream, kernel, tile);
    case 6: return step_radius<6>(s, stream, kernel, tile);
    case 7: return step_radius<7>(s, stream, kernel, tile);
    case 8: return step_radius<8>(s, stream, kernel, tile);
    default: throw std::invalid_argument("cuda::fdtd_step: stencil radius must be 1..8");
  }
}

template <class T>
void fdtd_step_part(const FdtdStep<T>& s, StepPart part, const Shell& shell, cudaStream_t stream, StencilKernel kernel,
                    TileShape tile) {
  switch (s.coef.radius) {
    case 1: return step_part_radius<1>(s, part, shell, kernel, tile, stream);
    case 2: return step_part_radius<2>(s, part, shell, kernel, tile, stream);
    case 3: return step_part_radius<3>(s, part, shell, kernel, tile, stream);
    case 4: return step_part_radius<4>(s, part, shell, kernel, tile, stream);
    case 5: return step_part_radius<5>(s, part, shell, kernel, tile, stream);
    case 6: return step_part_radius<6>(s, part, shell, kernel, tile, stream);
    case 7: return step_part_radius<7>(s, part, shell, kernel, tile, stream);
    case 8: return step_part_radius<8>(s, part, shell, kernel, tile, stream);
    default: throw std::invalid_argument("cuda::fdtd_step_part: stencil radius must be 1..8");
  }
}

template <class T>
void pack_box(const FieldLayout& L, const T* u, const int lo[3], const int extent[3], T* buffer, cudaStream_t stream) {
  if (extent[0] * extent[1] * extent[2] == 0) return;
  const launch::Launch l = launch::box_launch(int3_of(extent), 128);
  launch::check_launch(l, "cuda::pack_box");
  box_copy_kernel<<<SPECWAVE_LAUNCH(l, stream)>>>(L, const_cast<T*>(u), int3_of(lo), int3_of(extent), buffer, true);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

template <class T>
void unpack_box(const FieldLayout& L, T* u, const int lo[3], const int extent[3], const T* buffer,
                cudaStream_t stream) {
  if (extent[0] * extent[1] * extent[2] == 0) return;
  const launch::Launch l = launch::box_launch(int3_of(extent), 128);
  launch::check_launch(l, "cuda::unpack_box");
  box_copy_kernel<<<SPECWAVE_LAUNCH(l, stream)>>>(L, u, int3_of(lo), int3_of(extent), const_cast<T*>(buffer), false);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

template <class T>
void record_parts(const T* u, const index_t* index, const T* factor, const std::int32_t* slot, int n_points,
                  double* parts, int nt, int n, cudaStream_t stream) {
  if (n_points == 0) return;
  const launch::Launch l = launch::items_launch(n_points, 128);
  launch::check_launch(l, "cuda::record_parts");
  record_parts_kernel<<<SPECWAVE_LAUNCH(l, stream)>>>(u, index, factor, slot, n_points, parts, nt, n);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

template <class T>
void record_receivers(const T* u, const index_t* index, const T* weight, const std::int32_t* offsets, int n_receivers,
                      double* traces, int nt, int n, cudaStream_t stream) {
  if (n_receivers == 0) return;
  const launch::Launch l = launch::items_launch(n_receivers, 128);
  launch::check_launch(l, "cuda::record_receivers");
  record_kernel<<<SPECWAVE_LAUNCH(l, stream)>>>(u, index, weight, offsets, n_receivers, traces, nt, n);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

template <class T>
void zero_top_plane(const FieldLayout& L, T* u, cudaStream_t stream) {
  const launch::Launch l = launch::box_launch({L.nx, L.ny, 1}, 128);
  launch::check_launch(l, "cuda::zero_top_plane");
  zero_top_kernel<<<SPECWAVE_LAUNCH(l, stream)>>>(L, u);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

int stats_blocks() { return reduce_blocks; }

StencilKernel stencil_kernel_from_environment() {
  const char* v = std::getenv("SPECWAVE_CUDA_KERNEL");
  if (!v || std::string(v) == "tiled") return StencilKernel::tiled;
  if (std::string(v) == "generic") return StencilKernel::generic;
  throw std::invalid_argument(std::string("SPECWAVE_CUDA_KERNEL = '") + v +
                              "': use 'tiled' (the default) or 'generic'");
}

TileShape tile_shape_from_environment(std::size_t value_bytes) {
  const char* v = std::getenv("SPECWAVE_CUDA_TILE");
  return v ? launch::parse_tile_shape(v, "SPECWAVE_CUDA_TILE") : launch::default_tile_shape(value_bytes);
}

template <class T>
DeviceFieldStats field_stats(const FieldLayout& L, const T* u, double* partial_max, std::int64_t* partial_index,
                             cudaStream_t stream) {
  stats_kernel<<<reduce_blocks, reduce_threads, 0, stream>>>(L, u, partial_max, partial_index);
  SPECWAVE_CUDA_CHECK_LAUNCH();
  std::vector<double> m(reduce_blocks);
  std::vector<std::int64_t> w(reduce_blocks);
  SPECWAVE_CUDA_CHECK(
      cudaMemcpyAsync(m.data(), partial_max, reduce_blocks * sizeof(double), cudaMemcpyDeviceToHost, stream));
  SPECWAVE_CUDA_CHECK(
      cudaMemcpyAsync(w.data(), partial_index, reduce_blocks * sizeof(std::int64_t), cudaMemcpyDeviceToHost, stream));
  SPECWAVE_CUDA_CHECK(cudaStreamSynchronize(stream));
  DeviceFieldStats out{0, 0, true};
  double best = -1;
  for (int b = 0; b < reduce_blocks; ++b)
    if (w[b] >= 0 && (m[b] > best || (m[b] == best && w[b] < out.argmax))) best = m[b], out.argmax = w[b];
  out.finite = std::isfinite(best);
  out.max_abs = best < 0 ? 0 : best;
  return out;
}

template <class T>
void unpad(const FieldLayout& L, const T* padded, T* dense, cudaStream_t stream) {
  const launch::Launch l = launch::box_launch({L.nx, L.ny, L.nz}, 128);
  launch::check_launch(l, "cuda::unpad");
  unpad_kernel<<<SPECWAVE_LAUNCH(l, stream)>>>(L, padded, dense);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

#define SPECWAVE_INSTANTIATE(T)                                                                                        \
  template void fdtd_step<T>(const FdtdStep<T>&, cudaStream_t, StencilKernel, TileShape);                              \
  template void fdtd_step_part<T>(const FdtdStep<T>&, StepPart, const Shell&, cudaStream_t, StencilKernel, TileShape); \
  template void pack_box<T>(const FieldLayout&, const T*, const int*, const int*, T*, cudaStream_t);                   \
  template void unpack_box<T>(const FieldLayout&, T*, const int*, const int*, const T*, cudaStream_t);                 \
  template void record_parts<T>(const T*, const index_t*, const T*, const std::int32_t*, int, double*, int, int,       \
                                cudaStream_t);                                                                         \
  template void record_receivers<T>(const T*, const index_t*, const T*, const std::int32_t*, int, double*, int, int,   \
                                    cudaStream_t);                                                                     \
  template void zero_top_plane<T>(const FieldLayout&, T*, cudaStream_t);                                               \
  template DeviceFieldStats field_stats<T>(const FieldLayout&, const T*, double*, std::int64_t*, cudaStream_t);        \
  template void unpad<T>(const FieldLayout&, const T*, T*, cudaStream_t);
SPECWAVE_INSTANTIATE(float)
SPECWAVE_INSTANTIATE(double)
#undef SPECWAVE_INSTANTIATE

}  // namespace specwave::cuda
