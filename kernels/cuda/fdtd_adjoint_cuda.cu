// CUDA kernels of the FDTD gradient. The physics is the per-point adjoint functions of kernels/fdtd_point.hpp, the
// ones the CPU adjoint step (kernels/cpu/fdtd_adjoint_cpu.cpp) calls, in the same phases and, at every point, the
// same order of operations; these kernels only map threads to points.
//
// Launch contract (all kernels): interior coordinates; x the fastest thread index (consecutive addresses in a
// warp), y and z from blockIdx.y and blockIdx.z; one point per thread.
#include <stdexcept>

#include "kernels/cuda/check.cuh"
#include "kernels/cuda/fdtd_adjoint_cuda.hpp"

namespace specwave::cuda {
namespace {

constexpr int threads_x = 128;

int blocks_for(index_t n, int threads) { return int((n + threads - 1) / threads); }

// A grid over the box [lo, lo + extent) (z, y, x): x in blocks of threads_x, one block row per (y, z).
dim3 box_grid(const int extent[3]) { return dim3(blocks_for(extent[2], threads_x), extent[1], extent[0]); }

// w = (v dt)^2 mu on the interior (the ghosts of w are never written here: zero, or set by mirror_top_kernel).
template <class T>
__global__ void scale_kernel(FdtdAdjointStep<T> s) {
  const int x = int(blockIdx.x * blockDim.x + threadIdx.x), y = int(blockIdx.y), z = int(blockIdx.z);
  if (x >= s.layout.nx) return;
  const index_t i = s.layout.index(z, y, x);
  s.w[i] = s.vel2dt2[i] * s.mu[i];
}

// Odd mirror above the free surface: w[-k] = -w[k], k = 1..halo, whole padded planes (as cpu::mirror_top_ghosts).
template <class T>
__global__ void mirror_top_kernel(FieldLayout L, T* u) {
  const index_t plane = L.stride_z();
  const index_t p = index_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int k = int(blockIdx.y) + 1;
  if (p >= plane) return;
  const index_t surface = index_t(L.halo) * plane;
  u[surface - k * plane + p] = -u[surface + k * plane + p];
}

// Phase 1 on the layer points of one face: betah = b betah + a w, gamma = w + betah.
template <class T>
__global__ void beta_kernel(FdtdAdjointStep<T> s, int axis, int side, int3 lo, int3 extent) {
  const int dx = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (dx >= extent.x) return;
  const int x = lo.x + dx, y = lo.y + int(blockIdx.y), z = lo.z + int(blockIdx.z);
  const CpmlAdjointAxis<T>& p = s.pml[axis];
  const int c[3] = {z, y, x};
  const int k = c[axis];
  const index_t j = slab_index(p, axis, z, y, x);
  p.gamma[side][j] = cpml_adjoint_beta(p.b[k], p.a[k], &p.beta[side][j], s.w[s.layout.index(z, y, x)]);
}

// Phase 2 on the layer points of one face: alphah = b alphah - a D1 gamma (every gamma of the face is complete:
// this kernel runs after beta_kernel in the same stream).
template <int R, class T>
__global__ void alpha_kernel(FdtdAdjointStep<T> s, int axis, int side, int3 lo, int3 extent) {
  const int dx = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (dx >= extent.x) return;
  const int x = lo.x + dx, y = lo.y + int(blockIdx.y), z = lo.z + int(blockIdx.z);
  const CpmlAdjointAxis<T>& p = s.pml[axis];
  const int c[3] = {z, y, x};
  const int k = c[axis];
  const index_t j = slab_index(p, axis, z, y, x);
  p.alpha[side][j] =
      cpml_adjoint_alpha<R>(p.b[k], p.a[k], p.alpha[side][j], p.gamma[side], j, p.slab_stride[axis], s.coef.d1[axis]);
}

// Phase 3 on every point: lambda = 2 mu - mu_next + L_h w + the PML terms of the axes whose reach holds the point,
// added in axis order z, y, x (as update_row on the CPU).
template <int R, class T>
__global__ void adjoint_update_kernel(FdtdAdjointStep<T> s) {
  const FieldLayout& L = s.layout;
  const int x = int(blockIdx.x * blockDim.x + threadIdx.x), y = int(blockIdx.y), z = int(blockIdx.z);
  if (x >= L.nx) return;
  const index_t i = L.index(z, y, x);
  T lap = laplacian<R>(s.w, i, L.stride_y(), L.stride_z(), s.coef);
  const int c[3] = {z, y, x};
#pragma unroll
  for (int axis = 0; axis < 3; ++axis) {
    const CpmlAdjointAxis<T>& p = s.pml[axis];
    if (!p.in_reach(c[axis])) continue;
    const int side = p.side(c[axis]);
    lap += cpml_adjoint_correction<R>(p.alpha[side], p.beta[side], slab_index(p, axis, z, y, x), p.slab_stride[axis],
                                      s.coef.d2[axis], s.coef.d1[axis]);
  }
  s.mu_next[i] = adjoint_leapfrog(s.mu[i], s.mu_next[i], lap);
}

template <int R, class T>
void adjoint_radius(const FdtdAdjointStep<T>& s, cudaStream_t stream) {
  const FieldLayout& L = s.layout;
  if (L.halo != R) throw std::logic_error("cuda::fdtd_adjoint_step: field halo must equal the stencil radius");
  const int whole[3] = {L.nz, L.ny, L.nx};
  scale_kernel<<<box_grid(whole), threads_x, 0, stream>>>(s);
  SPECWAVE_CUDA_CHECK_LAUNCH();
  if (s.free_surface) {
    mirror_top_kernel<<<dim3(blocks_for(L.stride_z(), 256), L.halo), 256, 0, stream>>>(L, s.w);
    SPECWAVE_CUDA_CHECK_LAUNCH();
  }
  // The layer box of (axis, side): the axis' [0, W) or [n - W, n), the other axes whole (as layer_box on the CPU).
  auto layer_box = [&](int axis, int side, int lo[3], int ext[3]) {
    const CpmlAdjointAxis<T>& p = s.pml[axis];
    lo[0] = lo[1] = lo[2] = 0;
    ext[0] = L.nz, ext[1] = L.ny, ext[2] = L.nx;
    lo[axis] = side == 0 ? 0 : p.n - p.width;
    ext[axis] = p.width;
  };
  for (int phase = 0; phase < 2; ++phase)
    for (int axis = 0; axis < 3; ++axis)
      for (int side = 0; side < 2; ++side) {
        if (!s.pml[axis].face[side]) continue;
        int lo[3], ext[3];
        layer_box(axis, side, lo, ext);
        if (ext[0] * ext[1] * ext[2] == 0) continue;
        const int3 lo3 = make_int3(lo[2], lo[1], lo[0]), ext3 = make_int3(ext[2], ext[1], ext[0]);
        if (phase == 0)
          beta_kernel<<<box_grid(ext), threads_x, 0, stream>>>(s, axis, side, lo3, ext3);
        else
          alpha_kernel<R><<<box_grid(ext), threads_x, 0, stream>>>(s, axis, side, lo3, ext3);
        SPECWAVE_CUDA_CHECK_LAUNCH();
      }
  adjoint_update_kernel<R><<<box_grid(whole), threads_x, 0, stream>>>(s);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

// A product rounded on its own, never fused with the sum that follows into an FMA (nvcc fuses by default; the
// CPU code, ISO C++ without -ffp-contract, does not): source injection then rounds as on the CPU.
__device__ inline float product_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double product_rn(double a, double b) { return __dmul_rn(a, b); }

// One thread per target point: its contributions in order, each added to u as on the CPU.
template <class T>
__global__ void gather_kernel(T* u, PointGather<T> g, const double* signal, int nt, int n) {
  const int t = int(blockIdx.x * blockDim.x + threadIdx.x);
  if (t >= g.n_targets) return;
  const index_t i = g.target[t];
  T value = u[i];
  for (std::int32_t k = g.offsets[t]; k < g.offsets[t + 1]; ++k)
    value = value + product_rn(g.factor[k], T(signal[index_t(g.owner[k]) * nt + n]));
  u[i] = value;
}

template <class T>
__global__ void gradient_kernel(FieldLayout L, const T* mu, const T* u_next, const T* u_now, const T* u_before,
                                const T* vel2dt2, double* gradient, double* illumination) {
  const int x = int(blockIdx.x * blockDim.x + threadIdx.x), y = int(blockIdx.y), z = int(blockIdx.z);
  if (x >= L.nx) return;
  const index_t k = (index_t(z) * L.ny + y) * L.nx + x;
  const index_t i = L.index(z, y, x);
  const T a = (u_next[k] - T(2) * u_now[k] + u_before[k]) / vel2dt2[i];
  gradient[k] += double(mu[i]) * double(a);
  if (illumination) illumination[k] += double(u_now[k]) * double(u_now[k]);
}

template <class T>
__global__ void born_kernel(FieldLayout L, T* du_next, const T* dm, const T* u_next, const T* u_now, const T* u_before,
                            const T* vel2dt2) {
  const int x = int(blockIdx.x * blockDim.x + threadIdx.x), y = int(blockIdx.y), z = int(blockIdx.z);
  if (x >= L.nx) return;
  const index_t i = L.index(z, y, x);
  const T a = (u_next[i] - T(2) * u_now[i] + u_before[i]) / vel2dt2[i];
  du_next[i] += dm[(index_t(z) * L.ny + y) * L.nx + x] * a;
}

}  // namespace

template <class T>
void fdtd_adjoint_step(const FdtdAdjointStep<T>& s, cudaStream_t stream) {
  switch (s.coef.radius) {
    case 1: return adjoint_radius<1>(s, stream);
    case 2: return adjoint_radius<2>(s, stream);
    case 3: return adjoint_radius<3>(s, stream);
    case 4: return adjoint_radius<4>(s, stream);
    case 5: return adjoint_radius<5>(s, stream);
    case 6: return adjoint_radius<6>(s, stream);
    case 7: return adjoint_radius<7>(s, stream);
    case 8: return adjoint_radius<8>(s, stream);
    default: throw std::invalid_argument("cuda::fdtd_adjoint_step: stencil radius must be 1..8");
  }
}

template <class T>
void add_point_signals(T* u, const PointGather<T>& g, const double* signal, int nt, int n, cudaStream_t stream) {
  if (g.n_targets == 0) return;
  gather_kernel<<<blocks_for(g.n_targets, 128), 128, 0, stream>>>(u, g, signal, nt, n);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

template <class T>
void accumulate_gradient(const FieldLayout& L, const T* mu, const T* u_next, const T* u_now, const T* u_before,
                         const T* vel2dt2, double* gradient, double* illumination, cudaStream_t stream) {
  const int whole[3] = {L.nz, L.ny, L.nx};
  gradient_kernel<<<box_grid(whole), threads_x, 0, stream>>>(L, mu, u_next, u_now, u_before, vel2dt2, gradient,
                                                             illumination);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

template <class T>
void add_born_source(const FieldLayout& L, T* du_next, const T* dm, const T* u_next, const T* u_now, const T* u_before,
                     const T* vel2dt2, cudaStream_t stream) {
  const int whole[3] = {L.nz, L.ny, L.nx};
  born_kernel<<<box_grid(whole), threads_x, 0, stream>>>(L, du_next, dm, u_next, u_now, u_before, vel2dt2);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

#define SPECWAVE_INSTANTIATE(T)                                                                                       \
  template void fdtd_adjoint_step<T>(const FdtdAdjointStep<T>&, cudaStream_t);                                        \
  template void add_point_signals<T>(T*, const PointGather<T>&, const double*, int, int, cudaStream_t);               \
  template void accumulate_gradient<T>(const FieldLayout&, const T*, const T*, const T*, const T*, const T*, double*, \
                                       double*, cudaStream_t);                                                        \
  template void add_born_source<T>(const FieldLayout&, T*, const T*, const T*, const T*, const T*, const T*,          \
                                   cudaStream_t);
SPECWAVE_INSTANTIATE(float)
SPECWAVE_INSTANTIATE(double)
#undef SPECWAVE_INSTANTIATE

}  // namespace specwave::cuda
