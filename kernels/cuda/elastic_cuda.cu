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

// ---- The gradient's pointwise kernels.
template <class T>
__global__ void pack_kernel(ElasticStep<T> s, int f, index_t offset, const T* increments, T* packed, launch::Box box) {
  Int3 q;
  if (!launch::box_point(box.lo, box.extent, block_dim(), block_index(), thread_index(), q)) return;
  const index_t i = s.layout.index(q.z, q.y, q.x);
  packed[elastic_adjoint_kernels::packed_index(s, f, offset, q.z, q.y, q.x)] =
      increments[index_t(f) * s.layout.size() + i];
}
template <class T>
__global__ void packed_product_kernel(ElasticStep<T> s, int f, index_t offset, double* out, const T* a, const T* packed,
                                      launch::Box box) {
  Int3 q;
  if (!launch::box_point(box.lo, box.extent, block_dim(), block_index(), thread_index(), q)) return;
  const index_t i = s.layout.index(q.z, q.y, q.x);
  out[i] += double(a[i]) * double(packed[elastic_adjoint_kernels::packed_index(s, f, offset, q.z, q.y, q.x)]);
}
template <class T>
__global__ void normal_images_kernel(ElasticStep<T> s, const T* packed, index_t zz, index_t yy, index_t xx,
                                     double* lam_image, double* mu2_image, launch::Box box) {
  Int3 q;
  if (!launch::box_point(box.lo, box.extent, block_dim(), block_index(), thread_index(), q)) return;
  const index_t i = s.layout.index(q.z, q.y, q.x);
  const auto at = [&](int f, index_t offset) {
    return packed[elastic_adjoint_kernels::packed_index(s, f, offset, q.z, q.y, q.x)];
  };
  elastic_adjoint_kernels::normal_stress_images(s.f[szz][i], s.f[syy][i], s.f[sxx][i], at(szz, zz), at(syy, yy),
                                                at(sxx, xx), s.lamdt[i], s.mu2dt[i], q.z == 0 && s.free_surface,
                                                lam_image[i], mu2_image[i]);
}
template <class T>
__global__ void scatter_normal_kernel(ElasticStep<T> du, const T* dlam, const T* dmu2, const T* increments,
                                      launch::Box box) {
  Int3 q;
  if (!launch::box_point(box.lo, box.extent, block_dim(), block_index(), thread_index(), q)) return;
  const index_t i = du.layout.index(q.z, q.y, q.x), size = du.layout.size();
  elastic_adjoint_kernels::scatter_normal_stress(
      &du.f[szz][i], &du.f[syy][i], &du.f[sxx][i], dlam[i], dmu2[i], increments[szz * size + i],
      increments[syy * size + i], increments[sxx * size + i], du.lamdt[i], du.mu2dt[i], q.z == 0 && du.free_surface);
}
template <class T>
__global__ void pressure_squares_kernel(ElasticStep<T> s, double* out, launch::Box box) {
  Int3 q;
  if (!launch::box_point(box.lo, box.extent, block_dim(), block_index(), thread_index(), q)) return;
  const index_t i = s.layout.index(q.z, q.y, q.x);
  const double p = (double(s.f[szz][i]) + s.f[syy][i] + s.f[sxx][i]) / 3;
  out[(index_t(q.z) * s.layout.ny + q.y) * s.layout.nx + q.x] += p * p;
}
template <class T>
__global__ void source_images_kernel(const T* all, std::size_t size, const std::uint8_t* field, const index_t* index,
                                     const T* factor, const std::uint8_t* kind, const std::int32_t* source,
                                     int n_points, const double* table, int nt, int n, bool velocity,
                                     std::uint8_t sample, std::uint8_t midpoint, double* image) {
  for (int p = 0; p < n_points; ++p) {
    if ((kind[p] == sample) != velocity || kind[p] == midpoint) continue;
    image[p] += double(all[field[p] * size + std::size_t(index[p])]) * double(factor[p]) *
                table[(3 * std::size_t(source[p]) + kind[p]) * std::size_t(nt) + std::size_t(n)];
  }
}

// launch_over_box (launch.cuh) with this file's block shape.
template <class Kernel, class... Args>
void over_box(Kernel kernel, const launch::Box& box, const char* what, cudaStream_t stream, Args... args) {
  launch_over_box(kernel, box, block_x, block_y, what, stream, args...);
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

template <class T>
void elastic_pack_increments(const ElasticStep<T>& s, const T* increments, T* packed, cudaStream_t stream) {
  for (int f = 0; f < elastic_fields; ++f)
    over_box(pack_kernel<T>, elastic_kernels::fields_box(s, f, 1), "cuda::elastic_pack_increments", stream, s, f,
             elastic_adjoint_kernels::packed_offset(s, f), increments, packed);
}

template <class T>
void elastic_add_packed_product(const ElasticStep<T>& s, int f, double* out, const T* a, const T* packed,
                                cudaStream_t stream) {
  over_box(packed_product_kernel<T>, elastic_kernels::fields_box(s, f, 1), "cuda::elastic_add_packed_product", stream,
           s, f, elastic_adjoint_kernels::packed_offset(s, f), out, a, packed);
}

template <class T>
void elastic_normal_images(const ElasticStep<T>& s, const T* packed, double* lam_image, double* mu2_image,
                           cudaStream_t stream) {
  over_box(normal_images_kernel<T>, elastic_kernels::fields_box(s, szz, 1), "cuda::elastic_normal_images", stream, s,
           packed, elastic_adjoint_kernels::packed_offset(s, szz), elastic_adjoint_kernels::packed_offset(s, syy),
           elastic_adjoint_kernels::packed_offset(s, sxx), lam_image, mu2_image);
}

template <class T>
void elastic_scatter_normal(const ElasticStep<T>& du, const T* dlam, const T* dmu2, const T* increments,
                            cudaStream_t stream) {
  over_box(scatter_normal_kernel<T>, elastic_kernels::fields_box(du, szz, 1), "cuda::elastic_scatter_normal", stream,
           du, dlam, dmu2, increments);
}

template <class T>
void elastic_add_pressure_squares(const ElasticStep<T>& s, double* out, cudaStream_t stream) {
  const FieldLayout& L = s.layout;
  over_box(pressure_squares_kernel<T>, launch::Box{{0, 0, 0}, {L.nx, L.ny, L.nz}}, "cuda::elastic_add_pressure_squares",
           stream, s, out);
}

template <class T>
void elastic_source_images(const T* all, std::size_t size, const std::uint8_t* field, const index_t* index,
                           const T* factor, const std::uint8_t* kind, const std::int32_t* source, int n_points,
                           const double* table, int nt, int n, bool velocity, std::uint8_t sample,
                           std::uint8_t midpoint, double* image, cudaStream_t stream) {
  if (n_points == 0) return;
  launch::check_launch(launch::items_launch(1, 1), "cuda::elastic_source_images");
  source_images_kernel<<<1, 1, 0, stream>>>(all, size, field, index, factor, kind, source, n_points, table, nt, n,
                                            velocity, sample, midpoint, image);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

#define SPECWAVE_ELASTIC_GRADIENT(T)                                                                                   \
  template void elastic_pack_increments<T>(const ElasticStep<T>&, const T*, T*, cudaStream_t);                         \
  template void elastic_add_packed_product<T>(const ElasticStep<T>&, int, double*, const T*, const T*, cudaStream_t);  \
  template void elastic_normal_images<T>(const ElasticStep<T>&, const T*, double*, double*, cudaStream_t);             \
  template void elastic_scatter_normal<T>(const ElasticStep<T>&, const T*, const T*, const T*, cudaStream_t);          \
  template void elastic_add_pressure_squares<T>(const ElasticStep<T>&, double*, cudaStream_t);                         \
  template void elastic_source_images<T>(const T*, std::size_t, const std::uint8_t*, const index_t*, const T*,         \
                                         const std::uint8_t*, const std::int32_t*, int, const double*, int, int, bool, \
                                         std::uint8_t, std::uint8_t, double*, cudaStream_t);
SPECWAVE_ELASTIC_GRADIENT(float)
SPECWAVE_ELASTIC_GRADIENT(double)
#undef SPECWAVE_ELASTIC_GRADIENT

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
