// CUDA kernels of the staggered velocity-pressure step (docs/numerics.md, "Variable density"). Their bodies are
// kernels/staggered_kernels.hpp's, which a CPU test runs over the same boxes against the CPU loops (the per-point
// physics of kernels/staggered_point.hpp, in the CPU's order a point); these kernels only map threads to points,
// through kernels/launch_geometry.hpp (tests/test_launch_geometry.cpp), each launch checked first.
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
    if (!s.ghost_band[a][0] || !s.ghost_band[a][1] || s.increment_out[a])
      throw std::logic_error("cuda::staggered step: one rank only, and no gradient outputs");
  if (s.divergence_out) throw std::logic_error("cuda::staggered step: no gradient outputs");
  if (s.mechanisms < 0 || s.mechanisms > 8) throw std::logic_error("cuda::staggered step: 0 to 8 mechanisms");
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

template void staggered_velocity_step<float>(const StaggeredStep<float>&, cudaStream_t);
template void staggered_velocity_step<double>(const StaggeredStep<double>&, cudaStream_t);
template void staggered_pressure_step<float>(const StaggeredStep<float>&, cudaStream_t);
template void staggered_pressure_step<double>(const StaggeredStep<double>&, cudaStream_t);

}  // namespace specwave::cuda
