// CUDA kernels of the staggered velocity-pressure step (docs/numerics.md, "Variable density"). Their bodies are
// kernels/staggered_kernels.hpp's, which a CPU test runs over the same boxes against the CPU loops (the per-point
// physics of kernels/staggered_point.hpp, in the CPU's order a point); these kernels only map threads to points,
// through kernels/launch_geometry.hpp (tests/test_launch_geometry.cpp), each launch checked first. The adjoint step's
// passes and the gradient's pointwise helpers likewise (test_staggered, "the CUDA adjoint kernels' bodies").
#include <stdexcept>
#include <type_traits>

#include "kernels/cuda/check.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/staggered_cuda.hpp"
#include "kernels/staggered_kernels.hpp"

namespace specwave::cuda {
namespace {

constexpr int block_x = 64, block_y = 4;

using launch::Int3;

// Every half node of the velocity box: its w_z, w_y and w_x where the step updates each (staggered_kernels.hpp).
template <int R, class T>
__global__ void velocity_kernel(StaggeredStep<T> s, launch::Box box) {
  Int3 q;
  if (launch::box_point(box.lo, box.extent, block_dim(), block_index(), thread_index(), q))
    staggered_kernels::velocity_point<R>(s, q.z, q.y, q.x);
}

// Every node: u^{n+1} with its CPML and memory variables (staggered_kernels.hpp).
template <int R, class T>
__global__ void pressure_kernel(StaggeredStep<T> s, launch::Box box) {
  Int3 q;
  if (launch::box_point(box.lo, box.extent, block_dim(), block_index(), thread_index(), q))
    staggered_kernels::pressure_point<R>(s, q.z, q.y, q.x);
}

// The free surface's ghosts on the R planes above z = 0 (whole padded planes).
template <bool Odd, class T>
__global__ void mirror_kernel(FieldLayout L, T* f) {
  index_t p;
  int k;
  if (launch::mirror_point(L.stride_z(), block_dim(), block_index(), thread_index(), p, k))
    staggered_kernels::mirror_point<Odd>(L, f, p, k);
}

template <bool Odd, class T>
void mirror(const FieldLayout& L, int R, T* f, cudaStream_t stream) {
  const launch::Launch l = launch::mirror_launch(L.stride_z(), R, 256);
  launch::check_launch(l, "cuda::staggered step (free-surface mirror)");
  mirror_kernel<Odd><<<SPECWAVE_LAUNCH(l, stream)>>>(L, f);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

template <class T>
void check_view(const StaggeredStep<T>& s) {
  for (int a = 0; a < 3; ++a)
    if (!s.ghost_band[a][0] || !s.ghost_band[a][1])
      throw std::logic_error("cuda::staggered step: one rank only (every ghost band the grid's own)");
  if (s.mechanisms < 0 || s.mechanisms > 8) throw std::logic_error("cuda::staggered step: 0 to 8 mechanisms");
}

// ---- The adjoint step's passes (staggered_kernels.hpp, "The adjoint step"), one thread a point of their boxes.
template <int R, class T>
__global__ void transpose_pressure_kernel(StaggeredAdjointStep<T> s, launch::Box box) {
  Int3 q;
  if (launch::box_point(box.lo, box.extent, block_dim(), block_index(), thread_index(), q))
    staggered_kernels::transpose_pressure_point<R>(s, q.z, q.y, q.x);
}
template <int R, class T>
__global__ void transpose_divergence_kernel(StaggeredAdjointStep<T> s, launch::Box box) {
  Int3 q;
  if (launch::box_point(box.lo, box.extent, block_dim(), block_index(), thread_index(), q))
    staggered_kernels::transpose_divergence_point<R>(s, q.z, q.y, q.x);
}
template <class T>
__global__ void fold_velocity_kernel(FieldLayout L, T* w) {
  index_t p;
  int k;
  if (launch::mirror_point(L.stride_z(), block_dim(), block_index(), thread_index(), p, k))
    staggered_kernels::fold_velocity_mirror(L, w, p, k);
}
template <class T>
__global__ void buoyancy_kernel(StaggeredAdjointStep<T> s) {
  index_t i;
  if (launch::item_index(s.layout.size(), block_dim(), block_index(), thread_index(), i))
    staggered_kernels::buoyancy_point(s, i);
}
template <int R, class T>
__global__ void transpose_velocity_kernel(StaggeredAdjointStep<T> s, launch::Box box) {
  Int3 q;
  if (launch::box_point(box.lo, box.extent, block_dim(), block_index(), thread_index(), q))
    staggered_kernels::transpose_velocity_point<R>(s, q.z, q.y, q.x);
}
template <int R, class T>
__global__ void transpose_velocity_u_kernel(StaggeredAdjointStep<T> s, launch::Box box) {
  Int3 q;
  if (launch::box_point(box.lo, box.extent, block_dim(), block_index(), thread_index(), q))
    staggered_kernels::transpose_velocity_u_point<R>(s, q.z, q.y, q.x);
}
template <int R, class T>
__global__ void fold_pressure_kernel(StaggeredAdjointStep<T> s, launch::Box box) {
  Int3 q;
  if (launch::box_point(box.lo, box.extent, block_dim(), block_index(), thread_index(), q))
    staggered_kernels::fold_pressure_mirror_point<R>(s, q.z, q.y, q.x);
}

// launch_over_box (launch.cuh) with this file's block shape.
template <class Kernel, class... Args>
void over_box(Kernel kernel, const launch::Box& box, const char* what, cudaStream_t stream, Args... args) {
  launch_over_box(kernel, box, block_x, block_y, what, stream, args...);
}

template <int R, class T>
void adjoint_radius(const StaggeredAdjointStep<T>& s, cudaStream_t stream) {
  const FieldLayout& L = s.layout;
  const launch::Box nodes = staggered_kernels::pressure_box(L), half = staggered_kernels::velocity_box(L, R);
  over_box(transpose_pressure_kernel<R, T>, nodes, "cuda::staggered_adjoint_step (pressure)", stream, s);
  over_box(transpose_divergence_kernel<R, T>, half, "cuda::staggered_adjoint_step (divergence)", stream, s);
  if (s.free_surface) {
    const launch::Launch l = launch::mirror_launch(L.stride_z(), R, 256);
    launch::check_launch(l, "cuda::staggered_adjoint_step (w_z mirror)");
    fold_velocity_kernel<<<SPECWAVE_LAUNCH(l, stream)>>>(L, s.w[0]);
    SPECWAVE_CUDA_CHECK_LAUNCH();
  }
  if (s.buoyancy_image[0]) {
    const launch::Launch l = launch::items_launch(L.size(), 256);
    launch::check_launch(l, "cuda::staggered_adjoint_step (buoyancy image)");
    buoyancy_kernel<<<SPECWAVE_LAUNCH(l, stream)>>>(s);
    SPECWAVE_CUDA_CHECK_LAUNCH();
  }
  over_box(transpose_velocity_kernel<R, T>, half, "cuda::staggered_adjoint_step (velocity)", stream, s);
  over_box(transpose_velocity_u_kernel<R, T>, nodes, "cuda::staggered_adjoint_step (nodes)", stream, s);
  if (s.free_surface)
    over_box(fold_pressure_kernel<R, T>, staggered_kernels::pressure_fold_box(L, R),
             "cuda::staggered_adjoint_step (u mirror)", stream, s);
}

template <class T>
__global__ void born_scatter_kernel(StaggeredBornScatter<T> b, launch::Box box) {
  Int3 q;
  if (launch::box_point(box.lo, box.extent, block_dim(), block_index(), thread_index(), q))
    staggered_kernels::born_scatter_point(b, q.z, q.y, q.x);
}

template <class T>
__global__ void add_squares_kernel(FieldLayout L, const T* u, double* out, launch::Box box) {
  Int3 q;
  if (!launch::box_point(box.lo, box.extent, block_dim(), block_index(), thread_index(), q)) return;
  const double v = double(u[L.index(q.z, q.y, q.x)]);
  out[(index_t(q.z) * L.ny + q.y) * L.nx + q.x] += v * v;
}

template <class T>
__global__ void add_products_kernel(T* w, const T* relative, const T* dw, index_t n) {
  index_t i;
  if (launch::item_index(n, block_dim(), block_index(), thread_index(), i)) w[i] += relative[i] * dw[i];
}

template <class T>
__global__ void source_image_kernel(const T* u, const index_t* index, const T* factor, const std::int32_t* owner,
                                    const std::int64_t* point, int n_points, const double* running, int nt, int n,
                                    double* image, double* source_image) {
  for (int p = 0; p < n_points; ++p) {
    const double term = double(u[index[p]]) * double(factor[p]) * running[std::size_t(owner[p]) * nt + n];
    image[point[p]] += term;
    source_image[owner[p]] += term;
  }
}

template <int R, class T>
void velocity_radius(const StaggeredStep<T>& s, cudaStream_t stream) {
  const FieldLayout& L = s.layout;
  if (s.free_surface) mirror<true>(L, R, s.u, stream);
  const launch::Box box = staggered_kernels::velocity_box(L, R);
  const launch::Launch l = launch::box_launch(box.extent, block_x, block_y);
  launch::check_launch(l, "cuda::staggered_velocity_step");
  velocity_kernel<R><<<SPECWAVE_LAUNCH(l, stream)>>>(s, box);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

template <int R, class T>
void pressure_radius(const StaggeredStep<T>& s, cudaStream_t stream) {
  const FieldLayout& L = s.layout;
  if (s.free_surface) mirror<false>(L, R, s.w[0], stream);
  const launch::Box box = staggered_kernels::pressure_box(L);
  const launch::Launch l = launch::box_launch(box.extent, block_x, block_y);
  launch::check_launch(l, "cuda::staggered_pressure_step");
  pressure_kernel<R><<<SPECWAVE_LAUNCH(l, stream)>>>(s, box);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

}  // namespace

template <class T>
void staggered_velocity_step(const StaggeredStep<T>& s, cudaStream_t stream) {
  check_view(s);
  with_radius(s.coef.radius, [&](auto R) { velocity_radius<decltype(R)::value>(s, stream); });
}

template <class T>
void staggered_pressure_step(const StaggeredStep<T>& s, cudaStream_t stream) {
  check_view(s);
  with_radius(s.coef.radius, [&](auto R) { pressure_radius<decltype(R)::value>(s, stream); });
}

template <class T>
void staggered_adjoint_step(const StaggeredAdjointStep<T>& s, cudaStream_t stream) {
  if (s.mechanisms < 0 || s.mechanisms > 8) throw std::logic_error("cuda::staggered_adjoint_step: 0 to 8 mechanisms");
  with_radius(s.coef.radius, [&](auto R) { adjoint_radius<decltype(R)::value>(s, stream); });
}

template <class T>
void staggered_born_scatter(const StaggeredBornScatter<T>& b, cudaStream_t stream) {
  over_box(born_scatter_kernel<T>, staggered_kernels::pressure_box(b.layout), "cuda::staggered_born_scatter", stream,
           b);
}

template <class T>
void add_squares(const FieldLayout& layout, const T* u, double* out, cudaStream_t stream) {
  over_box(add_squares_kernel<T>, staggered_kernels::pressure_box(layout), "cuda::add_squares", stream, layout, u, out);
}

template <class T>
void add_products(T* w, const T* relative, const T* dw, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  const launch::Launch l = launch::items_launch(index_t(n), 256);
  launch::check_launch(l, "cuda::add_products");
  add_products_kernel<<<SPECWAVE_LAUNCH(l, stream)>>>(w, relative, dw, index_t(n));
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

template <class T>
void add_source_image(const T* u, const index_t* index, const T* factor, const std::int32_t* owner,
                      const std::int64_t* point, int n_points, const double* running, int nt, int n, double* image,
                      double* source_image, cudaStream_t stream) {
  if (n_points == 0) return;
  launch::check_launch(launch::items_launch(1, 1), "cuda::add_source_image");
  source_image_kernel<<<1, 1, 0, stream>>>(u, index, factor, owner, point, n_points, running, nt, n, image,
                                           source_image);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

#define SPECWAVE_STAGGERED_GRADIENT(T)                                                                                 \
  template void staggered_adjoint_step<T>(const StaggeredAdjointStep<T>&, cudaStream_t);                               \
  template void staggered_born_scatter<T>(const StaggeredBornScatter<T>&, cudaStream_t);                               \
  template void add_squares<T>(const FieldLayout&, const T*, double*, cudaStream_t);                                   \
  template void add_products<T>(T*, const T*, const T*, std::size_t, cudaStream_t);                                    \
  template void add_source_image<T>(const T*, const index_t*, const T*, const std::int32_t*, const std::int64_t*, int, \
                                    const double*, int, int, double*, double*, cudaStream_t);
SPECWAVE_STAGGERED_GRADIENT(float)
SPECWAVE_STAGGERED_GRADIENT(double)
#undef SPECWAVE_STAGGERED_GRADIENT

template void staggered_velocity_step<float>(const StaggeredStep<float>&, cudaStream_t);
template void staggered_velocity_step<double>(const StaggeredStep<double>&, cudaStream_t);
template void staggered_pressure_step<float>(const StaggeredStep<float>&, cudaStream_t);
template void staggered_pressure_step<double>(const StaggeredStep<double>&, cudaStream_t);

}  // namespace specwave::cuda
