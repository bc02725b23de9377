// CUDA kernels of the elastic velocity-stress step (docs/numerics.md, "Isotropic elastic waves") and of its adjoint
// ("The elastic adjoint"). Their bodies are kernels/elastic_kernels.hpp's and kernels/elastic_adjoint_kernels.hpp's,
// which CPU tests (tests/test_elastic_kernels.cpp) run over the same boxes against the CPU loops; these kernels only
// map threads to points, through kernels/launch_geometry.hpp (tests/test_launch_geometry.cpp), each launch checked
// first.
#include <stdexcept>

#include "kernels/cuda/check.cuh"
#include "kernels/cuda/elastic_cuda.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/elastic_adjoint_kernels.hpp"
#include "kernels/elastic_kernels.hpp"
#include "kernels/staggered_step.hpp"

namespace specwave::cuda {
namespace {

constexpr int block_x = 64, block_y = 4;

using launch::Int3;

// Every point of the velocity box: v_z, v_y and v_x where each is computed.
template <int R, class T>
__global__ void velocity_kernel(ElasticStep<T> s, launch::Box box) {
  Int3 q;
  if (launch::box_point(box.lo, box.extent, block_dim(), block_index(), thread_index(), q))
    elastic_kernels::velocity_point<R>(s, q.z, q.y, q.x);
}

// Every point of the stress box: the normal stresses on the nodes, each shear stress where it is computed.
template <int R, class T>
__global__ void stress_kernel(ElasticStep<T> s, launch::Box box) {
  Int3 q;
  if (launch::box_point(box.lo, box.extent, block_dim(), block_index(), thread_index(), q))
    elastic_kernels::stress_point<R>(s, q.z, q.y, q.x);
}

// The free surface's images on the R planes above z = 0 (whole padded planes): the stresses' before step 1
// (Stresses), the velocities' before step 2.
template <bool Stresses, class T>
__global__ void mirror_kernel(ElasticStep<T> s) {
  index_t p;
  int k;
  if (!launch::mirror_point(s.layout.stride_z(), block_dim(), block_index(), thread_index(), p, k)) return;
  if constexpr (Stresses)
    elastic_kernels::velocity_mirror_point(s, p, k);
  else
    elastic_kernels::stress_mirror_point(s, p, k);
}

// ---- The adjoint (elastic_adjoint_kernels.hpp): a term's two passes, and the images folded back.
template <int Term, class T>
__global__ void scratch_kernel(ElasticStep<T> s, T* g, launch::Box box) {
  Int3 q;
  if (launch::box_point(box.lo, box.extent, block_dim(), block_index(), thread_index(), q))
    elastic_adjoint_kernels::term_scratch_point<Term>(s, g, q.z, q.y, q.x);
}
template <int R, int Term, class T>
__global__ void gather_kernel(ElasticStep<T> s, const T* g, launch::Box box) {
  Int3 q;
  if (launch::box_point(box.lo, box.extent, block_dim(), block_index(), thread_index(), q))
    elastic_adjoint_kernels::term_gather_point<R, Term>(s, g, q.z, q.y, q.x);
}
template <bool Stress, class T>
__global__ void fold_kernel(ElasticStep<T> s) {
  index_t p;
  int k;
  if (!launch::mirror_point(s.layout.stride_z(), block_dim(), block_index(), thread_index(), p, k)) return;
  if constexpr (Stress)
    elastic_adjoint_kernels::stress_adjoint_fold_point(s, p, k);
  else
    elastic_adjoint_kernels::velocity_adjoint_fold_point(s, p, k);
}

// Terms First .. Last - 1 (a half), each scratch then gather, then the folds of that half.
template <int R, int First, int Last, class T>
void adjoint_half(const ElasticStep<T>& s, T* g, cudaStream_t stream) {
  elastic_adjoint_kernels::for_terms<First, Last>([&](auto term) {
    constexpr int t = decltype(term)::value;
    if (!elastic_adjoint_kernels::term_active<t>(s)) return;
    const launch::Box a = elastic_adjoint_kernels::scratch_box<t>(s), b = elastic_adjoint_kernels::gather_box<R, t>(s);
    const launch::Launch la = launch::box_launch(a.extent, block_x, block_y),
                         lb = launch::box_launch(b.extent, block_x, block_y);
    launch::check_launch(la, "cuda::elastic adjoint (a term's scratch)");
    launch::check_launch(lb, "cuda::elastic adjoint (a term's gather)");
    scratch_kernel<t><<<SPECWAVE_LAUNCH(la, stream)>>>(s, g, a);
    SPECWAVE_CUDA_CHECK_LAUNCH();
    gather_kernel<R, t><<<SPECWAVE_LAUNCH(lb, stream)>>>(s, g, b);
    SPECWAVE_CUDA_CHECK_LAUNCH();
  });
  if (!s.free_surface) return;
  const launch::Launch l = launch::mirror_launch(s.layout.stride_z(), R, 256);
  launch::check_launch(l, "cuda::elastic adjoint (free-surface folds)");
  fold_kernel<(First > 0)><<<SPECWAVE_LAUNCH(l, stream)>>>(s);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

template <class T>
__global__ void pressure_kernel(ElasticStep<T> s, T* out, launch::Box box) {
  Int3 q;
  if (launch::box_point(box.lo, box.extent, block_dim(), block_index(), thread_index(), q)) {
    const index_t i = s.layout.index(q.z, q.y, q.x);
    out[i] = elastic_kernels::pressure_at(s, i);
  }
}

template <bool Stresses, class T>
void mirror(const ElasticStep<T>& s, int R, cudaStream_t stream) {
  const launch::Launch l = launch::mirror_launch(s.layout.stride_z(), R, 256);
  launch::check_launch(l, "cuda::elastic step (free-surface images)");
  mirror_kernel<Stresses><<<SPECWAVE_LAUNCH(l, stream)>>>(s);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

template <class T>
void check_view(const ElasticStep<T>& s) {
  for (int a = 0; a < 3; ++a)
    if (!s.ghost_band[a][0] || !s.ghost_band[a][1]) throw std::logic_error("cuda::elastic step: one rank only");
  if (s.coef.radius < 1 || s.coef.radius > 4) throw std::logic_error("cuda::elastic step: order 2 to 8");
}

// Radius 1 .. 4 (orders 2 to 8, as the CPU loops).
template <class T, class Fn>
void with_elastic_radius(const ElasticStep<T>& s, Fn&& fn) {
  check_view(s);
  with_radius(s.coef.radius, [&](auto R) {
    if constexpr (decltype(R)::value <= 4) fn(R);
  });
}

}  // namespace

template <class T>
void elastic_velocity_step(const ElasticStep<T>& s, cudaStream_t stream) {
  with_elastic_radius(s, [&](auto R) {
    constexpr int r = decltype(R)::value;
    if (s.free_surface) mirror<true>(s, r, stream);
    const launch::Box box = elastic_kernels::velocity_box(s);
    const launch::Launch l = launch::box_launch(box.extent, block_x, block_y);
    launch::check_launch(l, "cuda::elastic_velocity_step");
    velocity_kernel<r><<<SPECWAVE_LAUNCH(l, stream)>>>(s, box);
    SPECWAVE_CUDA_CHECK_LAUNCH();
  });
}

template <class T>
void elastic_stress_step(const ElasticStep<T>& s, cudaStream_t stream) {
  with_elastic_radius(s, [&](auto R) {
    constexpr int r = decltype(R)::value;
    if (s.free_surface) mirror<false>(s, r, stream);
    const launch::Box box = elastic_kernels::stress_box(s);
    const launch::Launch l = launch::box_launch(box.extent, block_x, block_y);
    launch::check_launch(l, "cuda::elastic_stress_step");
    stress_kernel<r><<<SPECWAVE_LAUNCH(l, stream)>>>(s, box);
    SPECWAVE_CUDA_CHECK_LAUNCH();
  });
}

template <class T>
void elastic_pressure(const ElasticStep<T>& s, T* out, cudaStream_t stream) {
  const FieldLayout& L = s.layout;
  const launch::Box box{{0, 0, 0}, {L.nx, L.ny, L.nz}};
  const launch::Launch l = launch::box_launch(box.extent, block_x, block_y);
  launch::check_launch(l, "cuda::elastic_pressure");
  pressure_kernel<<<SPECWAVE_LAUNCH(l, stream)>>>(s, out, box);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

template <class T>
void elastic_stress_adjoint(const ElasticStep<T>& s, T* scratch, cudaStream_t stream) {
  with_elastic_radius(s, [&](auto R) { adjoint_half<decltype(R)::value, 9, elastic_terms>(s, scratch, stream); });
}

template <class T>
void elastic_velocity_adjoint(const ElasticStep<T>& s, T* scratch, cudaStream_t stream) {
  with_elastic_radius(s, [&](auto R) { adjoint_half<decltype(R)::value, 0, 9>(s, scratch, stream); });
}

template void elastic_stress_adjoint<float>(const ElasticStep<float>&, float*, cudaStream_t);
template void elastic_stress_adjoint<double>(const ElasticStep<double>&, double*, cudaStream_t);
template void elastic_velocity_adjoint<float>(const ElasticStep<float>&, float*, cudaStream_t);
template void elastic_velocity_adjoint<double>(const ElasticStep<double>&, double*, cudaStream_t);
template void elastic_velocity_step<float>(const ElasticStep<float>&, cudaStream_t);
template void elastic_velocity_step<double>(const ElasticStep<double>&, cudaStream_t);
template void elastic_stress_step<float>(const ElasticStep<float>&, cudaStream_t);
template void elastic_stress_step<double>(const ElasticStep<double>&, cudaStream_t);
template void elastic_pressure<float>(const ElasticStep<float>&, float*, cudaStream_t);
template void elastic_pressure<double>(const ElasticStep<double>&, double*, cudaStream_t);

}  // namespace specwave::cuda
