// CUDA kernels of the FDTD gradient. The physics is the per-point adjoint functions of kernels/fdtd_point.hpp, the
// ones the CPU adjoint step (kernels/cpu/fdtd_adjoint_cpu.cpp) calls, in the same phases and, at every point, the
// same order of operations; these kernels only map threads to points.
//
// Launch contract (all kernels): interior coordinates; x the fastest thread index (consecutive addresses in a
// warp), y and z from blockIdx.y and blockIdx.z; one point per thread: launch::box_launch and launch::box_point
// (kernels/launch_geometry.hpp, checked on the CPU by tests/test_launch_geometry.cpp).
#include <stdexcept>

#include "kernels/cuda/check.cuh"
#include "kernels/cuda/fdtd_adjoint_cuda.hpp"
#include "kernels/cuda/free_surface.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/fdtd_adjoint_kernels.hpp"

namespace specwave::cuda {
namespace {

constexpr int threads_x = 128;

using launch::Int3;

// A launch over the box of `extent` (z, y, x): x in blocks of threads_x, one block row per (y, z); checked.
launch::Launch box_grid(const int extent[3], const char* what) {
  const launch::Launch l = launch::box_launch({extent[2], extent[1], extent[0]}, threads_x);
  launch::check_launch(l, what);
  return l;
}

// The point (x, y, z) of the box [lo, lo + extent) this thread owns.
__device__ inline bool my_point(Int3 lo, Int3 extent, Int3& q) {
  return launch::box_point(lo, extent, block_dim(), block_index(), thread_index(), q);
}

// w = (v dt)^2 mu on the interior (the ghosts of w are never written here: zero, or set by mirror_top_kernel).
template <class T>
__global__ void scale_kernel(FdtdAdjointStep<T> s) {
  Int3 q;
  if (!my_point({}, {s.layout.nx, s.layout.ny, s.layout.nz}, q)) return;
  const index_t i = s.layout.index(q.z, q.y, q.x);
  s.w[i] = s.vel2dt2[i] * s.mu[i];
}

// Phase 1 on the layer points of one face: betah = b betah + a w, gamma = w + betah.
template <class T>
__global__ void beta_kernel(FdtdAdjointStep<T> s, int axis, int side, Int3 lo, Int3 extent) {
  Int3 q;
  if (!my_point(lo, extent, q)) return;
  const int x = q.x, y = q.y, z = q.z;
  const CpmlAdjointAxis<T>& p = s.pml[axis];
  const int c[3] = {z, y, x};
  const int k = c[axis];
  const index_t j = slab_index(p, axis, z, y, x);
  p.gamma[side][j] = cpml_adjoint_beta(p.b[k], p.a[k], &p.beta[side][j], s.w[s.layout.index(z, y, x)]);
}

// Phase 2 on the layer points of one face: alphah = b alphah - a D1 gamma (every gamma of the face is complete:
// this kernel runs after beta_kernel in the same stream).
template <int R, class T>
__global__ void alpha_kernel(FdtdAdjointStep<T> s, int axis, int side, Int3 lo, Int3 extent) {
  Int3 q;
  if (!my_point(lo, extent, q)) return;
  const int x = q.x, y = q.y, z = q.z;
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
  Int3 q;
  if (!my_point({}, {L.nx, L.ny, L.nz}, q)) return;
  const int x = q.x, y = q.y, z = q.z;
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
  scale_kernel<<<SPECWAVE_LAUNCH(box_grid(whole, "cuda::fdtd_adjoint_step (scale)"), stream)>>>(s);
  SPECWAVE_CUDA_CHECK_LAUNCH();
  if (s.free_surface) {
    mirror_top(L, s.w, stream, "cuda::fdtd_adjoint_step (free-surface mirror)");
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
        const Int3 lo3{lo[2], lo[1], lo[0]}, ext3{ext[2], ext[1], ext[0]};
        const launch::Launch l = box_grid(ext, "cuda::fdtd_adjoint_step (CPML face)");
        if (phase == 0)
          beta_kernel<<<SPECWAVE_LAUNCH(l, stream)>>>(s, axis, side, lo3, ext3);
        else
          alpha_kernel<R><<<SPECWAVE_LAUNCH(l, stream)>>>(s, axis, side, lo3, ext3);
        SPECWAVE_CUDA_CHECK_LAUNCH();
      }
  adjoint_update_kernel<R><<<SPECWAVE_LAUNCH(box_grid(whole, "cuda::fdtd_adjoint_step (update)"), stream)>>>(s);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

// ---- The adjoint in omega (fdtd_scaled_adjoint_step): the bodies of kernels/fdtd_adjoint_kernels.hpp over their
// boxes.
template <class T>
__global__ void scaled_beta_kernel(FdtdScaledAdjointStep<T> s, int axis, int side, launch::Box box) {
  Int3 q;
  if (my_point(box.lo, box.extent, q)) fdtd_adjoint_kernels::scaled_beta_point(s, axis, side, q.z, q.y, q.x);
}
template <int R, class T>
__global__ void scaled_alpha_kernel(FdtdScaledAdjointStep<T> s, int axis, int side, launch::Box box) {
  Int3 q;
  if (my_point(box.lo, box.extent, q)) fdtd_adjoint_kernels::scaled_alpha_point<R>(s, axis, side, q.z, q.y, q.x);
}
template <int R, class T>
__global__ void scaled_update_kernel(FdtdScaledAdjointStep<T> s, launch::Box box) {
  Int3 q;
  if (my_point(box.lo, box.extent, q)) fdtd_adjoint_kernels::scaled_update_point<R>(s, q.z, q.y, q.x);
}

// A launch over `box` (x, y, z), checked.
launch::Launch box_launch_of(const launch::Box& box, const char* what) {
  const launch::Launch l = launch::box_launch(box.extent, threads_x);
  launch::check_launch(l, what);
  return l;
}

template <int R, class T>
void scaled_adjoint_radius(const FdtdScaledAdjointStep<T>& s, cudaStream_t stream) {
  const FieldLayout& L = s.layout;
  if (L.halo != R) throw std::logic_error("cuda::fdtd_scaled_adjoint_step: field halo must equal the stencil radius");
  if (s.reverse.u) throw std::logic_error("cuda::fdtd_scaled_adjoint_step: no fused reverse step on the GPU");
  if (s.free_surface) mirror_top(L, s.omega, stream, "cuda::fdtd_scaled_adjoint_step (free-surface mirror)");
  for (int phase = 0; phase < 2; ++phase)
    for (int axis = 0; axis < 3; ++axis)
      for (int side = 0; side < 2; ++side) {
        if (!s.pml[axis].face[side]) continue;
        const launch::Box box = fdtd_adjoint_kernels::layer_box(L, s.pml[axis], axis, side);
        if (box.extent.x <= 0 || box.extent.y <= 0 || box.extent.z <= 0) continue;
        const launch::Launch l = box_launch_of(box, "cuda::fdtd_scaled_adjoint_step (CPML face)");
        if (phase == 0)
          scaled_beta_kernel<<<SPECWAVE_LAUNCH(l, stream)>>>(s, axis, side, box);
        else
          scaled_alpha_kernel<R><<<SPECWAVE_LAUNCH(l, stream)>>>(s, axis, side, box);
        SPECWAVE_CUDA_CHECK_LAUNCH();
      }
  const launch::Box whole = fdtd_adjoint_kernels::grid_box(L);
  scaled_update_kernel<R>
      <<<SPECWAVE_LAUNCH(box_launch_of(whole, "cuda::fdtd_scaled_adjoint_step (update)"), stream)>>>(s, whole);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

// A product rounded on its own, never fused with the sum that follows into an FMA (nvcc fuses by default). (GCC's
// default -ffp-contract=fast may fuse the CPU's `u += f s` where it sees one expression: the two backends can then
// differ at rounding at the injected points, within the CPU-GPU tests' 1e-12 (fp64) and 1e-5 (fp32).)
__device__ inline float product_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double product_rn(double a, double b) { return __dmul_rn(a, b); }

// One thread per target point: its contributions in order, each added to u as on the CPU.
template <class T>
__global__ void gather_kernel(T* u, PointGather<T> g, const double* signal, int nt, int n) {
  index_t t;
  if (!launch::item_index(g.n_targets, block_dim(), block_index(), thread_index(), t)) return;
  const index_t i = g.target[t];
  T value = u[i];
  for (std::int32_t k = g.offsets[t]; k < g.offsets[t + 1]; ++k)
    value = value + product_rn(g.factor[k], T(signal[index_t(g.owner[k]) * nt + n]));
  u[i] = value;
}

// gather_kernel, and each contribution's imaging term at the target's interior point.
template <class T>
__global__ void gather_imaged_kernel(T* u, PointGather<T> g, const double* signal, int nt, int n,
                                     const std::int64_t* interior, const T* u_now, double* image) {
  index_t t;
  if (!launch::item_index(g.n_targets, block_dim(), block_index(), thread_index(), t)) return;
  const index_t i = g.target[t];
  const std::int64_t k = interior[t];
  const T u0 = u_now[k];
  T value = u[i];
  double sum = image[k];
  for (std::int32_t c = g.offsets[t]; c < g.offsets[t + 1]; ++c) {
    const T source = product_rn(g.factor[c], T(signal[index_t(g.owner[c]) * nt + n]));
    value = value + source;
    sum = sum + __dmul_rn(double(u0), double(source));
  }
  u[i] = value;
  image[k] = sum;
}

template <class T>
__global__ void gradient_kernel(FieldLayout L, const T* mu, const T* u_next, const T* u_now, const T* u_before,
                                const T* vel2dt2, double* gradient, double* illumination) {
  Int3 q;
  const Int3 n{L.nx, L.ny, L.nz};
  if (!my_point({}, n, q)) return;
  const index_t k = launch::box_buffer_index(n, q);
  const index_t i = L.index(q.z, q.y, q.x);
  gradient[k] += imaging_term(mu[i], u_next[k], u_now[k], u_before[k], vel2dt2[i]);
  if (illumination) illumination[k] += double(u_now[k]) * double(u_now[k]);
}

template <class T>
__global__ void born_kernel(FieldLayout L, T* du_next, const T* dm, const T* u_next, const T* u_now, const T* u_before,
                            const T* vel2dt2) {
  Int3 q;
  const Int3 n{L.nx, L.ny, L.nz};
  if (!my_point({}, n, q)) return;
  const index_t i = L.index(q.z, q.y, q.x);
  const T a = (u_next[i] - T(2) * u_now[i] + u_before[i]) / vel2dt2[i];
  du_next[i] += dm[launch::box_buffer_index(n, q)] * a;
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
void fdtd_scaled_adjoint_step(const FdtdScaledAdjointStep<T>& s, cudaStream_t stream) {
  switch (s.coef.radius) {
    case 1: return scaled_adjoint_radius<1>(s, stream);
    case 2: return scaled_adjoint_radius<2>(s, stream);
    case 3: return scaled_adjoint_radius<3>(s, stream);
    case 4: return scaled_adjoint_radius<4>(s, stream);
    case 5: return scaled_adjoint_radius<5>(s, stream);
    case 6: return scaled_adjoint_radius<6>(s, stream);
    case 7: return scaled_adjoint_radius<7>(s, stream);
    case 8: return scaled_adjoint_radius<8>(s, stream);
    default: throw std::invalid_argument("cuda::fdtd_scaled_adjoint_step: stencil radius must be 1..8");
  }
}

template <class T>
void add_point_signals_imaged(T* u, const PointGather<T>& g, const double* signal, int nt, int n,
                              const std::int64_t* interior, const T* u_now, double* image, cudaStream_t stream) {
  if (g.n_targets == 0) return;
  const launch::Launch l = launch::items_launch(g.n_targets, 128);
  launch::check_launch(l, "cuda::add_point_signals_imaged");
  gather_imaged_kernel<<<SPECWAVE_LAUNCH(l, stream)>>>(u, g, signal, nt, n, interior, u_now, image);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

template <class T>
void add_point_signals(T* u, const PointGather<T>& g, const double* signal, int nt, int n, cudaStream_t stream) {
  if (g.n_targets == 0) return;
  const launch::Launch l = launch::items_launch(g.n_targets, 128);
  launch::check_launch(l, "cuda::add_point_signals");
  gather_kernel<<<SPECWAVE_LAUNCH(l, stream)>>>(u, g, signal, nt, n);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

template <class T>
void accumulate_gradient(const FieldLayout& L, const T* mu, const T* u_next, const T* u_now, const T* u_before,
                         const T* vel2dt2, double* gradient, double* illumination, cudaStream_t stream) {
  const int whole[3] = {L.nz, L.ny, L.nx};
  gradient_kernel<<<SPECWAVE_LAUNCH(box_grid(whole, "cuda::accumulate_gradient"), stream)>>>(
      L, mu, u_next, u_now, u_before, vel2dt2, gradient, illumination);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

template <class T>
void add_born_source(const FieldLayout& L, T* du_next, const T* dm, const T* u_next, const T* u_now, const T* u_before,
                     const T* vel2dt2, cudaStream_t stream) {
  const int whole[3] = {L.nz, L.ny, L.nx};
  born_kernel<<<SPECWAVE_LAUNCH(box_grid(whole, "cuda::add_born_source"), stream)>>>(L, du_next, dm, u_next, u_now,
                                                                                     u_before, vel2dt2);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

#define SPECWAVE_INSTANTIATE(T)                                                                                       \
  template void fdtd_adjoint_step<T>(const FdtdAdjointStep<T>&, cudaStream_t);                                        \
  template void fdtd_scaled_adjoint_step<T>(const FdtdScaledAdjointStep<T>&, cudaStream_t);                           \
  template void add_point_signals_imaged<T>(T*, const PointGather<T>&, const double*, int, int, const std::int64_t*,  \
                                            const T*, double*, cudaStream_t);                                         \
  template void add_point_signals<T>(T*, const PointGather<T>&, const double*, int, int, cudaStream_t);               \
  template void accumulate_gradient<T>(const FieldLayout&, const T*, const T*, const T*, const T*, const T*, double*, \
                                       double*, cudaStream_t);                                                        \
  template void add_born_source<T>(const FieldLayout&, T*, const T*, const T*, const T*, const T*, const T*,          \
                                   cudaStream_t);
SPECWAVE_INSTANTIATE(float)
SPECWAVE_INSTANTIATE(double)
#undef SPECWAVE_INSTANTIATE

}  // namespace specwave::cuda
