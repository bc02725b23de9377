// CUDA kernels of the k-space pseudo-spectral step and the cuFFT plans around them. The per-point physics is
// that of kernels/spectral_point.hpp (damped_leapfrog, pml_velocity_update, pml_pressure_update), the same
// functions the CPU loops call; the symbols and profiles come from solver/propagators/spectral/spectral_setup.cpp.
//
// Launch contract of every kernel here: one thread per value; a (ceil(plane / threads), nz) grid, where plane is
// the ny * nx values (real fields) or ny * (nx/2 + 1) values (half spectra) of one z plane; x is the fastest
// thread index, so a warp reads consecutive addresses (launch::plane_launch and launch::plane_point of
// kernels/launch_geometry.hpp, checked on the CPU by tests/test_launch_geometry.cpp).
#include <cufft.h>

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/cuda/check.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/spectral_cuda.hpp"
#include "kernels/spectral_point.hpp"
#include "kernels/staggered_point.hpp"  // staggered_memory

namespace specwave::cuda {
namespace {

static_assert(std::is_same_v<cufftHandle, int>, "FftPlan stores a cufftHandle as int");
static_assert(sizeof(Complex<float>) == sizeof(cufftComplex) && sizeof(Complex<double>) == sizeof(cufftDoubleComplex));

constexpr int threads = 256;

// The launch for `plane` values per z plane and nz planes.
launch::Launch plane_grid(std::size_t plane, int nz) {
  if (plane == 0 || nz <= 0) throw std::invalid_argument("spectral CUDA kernels: empty grid");
  if (plane > std::size_t(INT_MAX) - threads || nz > 65535)
    throw std::invalid_argument("spectral CUDA kernels: a z plane of " + std::to_string(plane) +
                                " values or nz = " + std::to_string(nz) +
                                " exceeds the launch limits (2^31 values per plane, 65535 planes)");
  const launch::Launch l = launch::plane_launch(index_t(plane), nz, threads);
  launch::check_launch(l, "spectral CUDA kernels");
  return l;
}

// The value (x, y, z; packed index k) of a (nz, ny, width) array this thread owns.
__device__ inline bool my_value(int width, int plane, launch::PlanePoint& q) {
  return launch::plane_point(width, plane, block_dim(), block_index(), thread_index(), q);
}

template <class C, class T>
__device__ inline C scaled(C a, T s) {
  return C{a.x * s, a.y * s};
}
template <class C>
__device__ inline C times(C a, C b) {
  return C{a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x};
}

template <class T>
__device__ inline T source_sum(const SourceTerms<T>& s, index_t i, index_t points, T value) {
  for (int j = 0; j < s.count; ++j) {
    const T amplitude = s.amplitudes[index_t(j) * s.nt + s.n];
    if (amplitude != T(0)) value += s.patterns[index_t(j) * points + i] * amplitude;
  }
  return value;
}

template <class T>
__global__ void multiply_spectrum_kernel(int plane, Complex<T>* spectrum, const T* symbol) {
  launch::PlanePoint q;
  if (!my_value(plane, plane, q)) return;
  spectrum[q.k] = scaled(spectrum[q.k], symbol[q.k]);
}

// out_a = in * kappa * shift_a[m_a]. `in` may alias out_z: no __restrict__.
template <class T>
__global__ void gradient_spectra_kernel(int half_x, int plane, const Complex<T>* in, Complex<T>* out_z,
                                        Complex<T>* out_y, Complex<T>* out_x, const T* kappa, const Complex<T>* shift_z,
                                        const Complex<T>* shift_y, const Complex<T>* shift_x) {
  launch::PlanePoint q;
  if (!my_value(half_x, plane, q)) return;
  const int z = q.z, y = q.y, x = q.x;
  const index_t k = q.k;
  const Complex<T> value = in[k];
  const T kap = kappa[k];
  out_z[k] = times(value, scaled(shift_z[z], kap));
  out_y[k] = times(value, scaled(shift_y[y], kap));
  out_x[k] = times(value, scaled(shift_x[x], kap));
}

template <class T>
__global__ void staggered_multiply_kernel(int half_x, int plane, Complex<T>* spectrum, const T* kappa,
                                          const Complex<T>* shift, int axis) {
  launch::PlanePoint q;
  if (!my_value(half_x, plane, q)) return;
  const int m = axis == 0 ? q.z : axis == 1 ? q.y : q.x;
  const index_t k = q.k;
  spectrum[k] = times(spectrum[k], scaled(shift[m], kappa[k]));
}

template <class T>
__global__ void pml_velocity_kernel(int nx, int plane, T* __restrict__ w, const T* __restrict__ grad,
                                    const T* __restrict__ bs, int axis, T dt, const T* __restrict__ beta) {
  launch::PlanePoint q;
  if (!my_value(nx, plane, q)) return;
  const int m = axis == 0 ? q.z : axis == 1 ? q.y : q.x;
  const index_t i = q.k;
  w[i] = pml_velocity_update(w[i], bs[m], beta ? dt * beta[i] : dt, grad[i]);
}

// One component's pressure update at point i: without memory variables pml_pressure_update, with them their step
// (staggered_memory, CPU order) and pml_pressure_memory_update.
template <class T>
__device__ inline T pml_component(const PmlPressureStep<T>& s, int a, index_t i, T b, T dt_v2) {
  const T d = s.div[a][i];
  if (s.mechanisms == 0 || !s.r[a][0]) return pml_pressure_update(s.p[a][i], b, dt_v2, d);
  T memory = 0;
  for (int l = 0; l < s.mechanisms; ++l) {
    const T r = s.r[a][l][i], next = staggered_memory(s.decay[l], r, s.g[l][i], d);
    memory += next + r;
    s.r[a][l][i] = next;
  }
  return pml_pressure_memory_update(s.p[a][i], b, dt_v2, d, s.half_dt * memory);
}

template <class T>
__global__ void pml_pressure_kernel(int nx, int plane, PmlPressureStep<T> s) {
  launch::PlanePoint q;
  if (!my_value(nx, plane, q)) return;
  const int z = q.z, y = q.y, x = q.x;
  const index_t i = q.k;
  const index_t points = index_t(gridDim.y) * plane;
  const T source = source_sum(s.sources, i, points, T(0));
  const T dt_v2 = s.dt_vel2[i];
  const T pz = pml_component(s, 0, i, s.b[0][z], dt_v2) + source;
  const T py = pml_component(s, 1, i, s.b[1][y], dt_v2) + (s.source_y ? source : T(0));
  const T px = pml_component(s, 2, i, s.b[2][x], dt_v2) + source;
  s.p[0][i] = pz;
  s.p[1][i] = py;
  s.p[2][i] = px;
  s.p_sum[i] = pz + py + px;
}

template <class T>
__global__ void damped_kernel(int nx, int plane, DampedStep<T> s) {
  launch::PlanePoint q;
  if (!my_value(nx, plane, q)) return;
  const int z = q.z, y = q.y, x = q.x;
  const index_t i = q.k;
  const index_t points = index_t(gridDim.y) * plane;
  const T eta_dt = T((s.damping[0][z] + s.damping[1][y] + s.damping[2][x]) * s.dt);
  const T next = damped_leapfrog(s.u[i], s.u_prev[i], s.vel2dt2[i], s.lap[i], eta_dt);
  s.u_prev[i] = source_sum(s.sources, i, points, next);
}

}  // namespace

FftPlan::FftPlan() {
  cufftHandle h = -1;
  SPECWAVE_CUFFT_CHECK(cufftCreate(&h));
  handle_ = h;
}

FftPlan::~FftPlan() {
  if (handle_ >= 0) cufftDestroy(handle_);  // no throw from a destructor
}

template <class T>
RealFft3d<T>::RealFft3d(SpectralShape shape, cudaStream_t stream) : shape_(shape) {
  constexpr bool single = std::is_same_v<T, float>;
  long long n[3] = {shape.nz, shape.ny, shape.nx};
  std::size_t forward_bytes = 0, backward_bytes = 0;
  SPECWAVE_CUFFT_CHECK(cufftSetAutoAllocation(forward_.handle(), 0));
  SPECWAVE_CUFFT_CHECK(cufftSetAutoAllocation(backward_.handle(), 0));
  // Packed layouts (no embedding): real (nz, ny, nx), complex (nz, ny, nx/2 + 1); one transform per execution.
  SPECWAVE_CUFFT_CHECK(cufftMakePlanMany64(forward_.handle(), 3, n, nullptr, 1, 0, nullptr, 1, 0,
                                           single ? CUFFT_R2C : CUFFT_D2Z, 1, &forward_bytes));
  SPECWAVE_CUFFT_CHECK(cufftMakePlanMany64(backward_.handle(), 3, n, nullptr, 1, 0, nullptr, 1, 0,
                                           single ? CUFFT_C2R : CUFFT_Z2D, 1, &backward_bytes));
  // One work area for both: they never run at the same time (same stream).
  work_ = DeviceBuffer(std::max({forward_bytes, backward_bytes, std::size_t(256)}));
  SPECWAVE_CUFFT_CHECK(cufftSetWorkArea(forward_.handle(), work_.data()));
  SPECWAVE_CUFFT_CHECK(cufftSetWorkArea(backward_.handle(), work_.data()));
  SPECWAVE_CUFFT_CHECK(cufftSetStream(forward_.handle(), stream));
  SPECWAVE_CUFFT_CHECK(cufftSetStream(backward_.handle(), stream));
}

template <class T>
void RealFft3d<T>::forward(const T* real, Complex<T>* spectrum) const {
  if constexpr (std::is_same_v<T, float>)
    SPECWAVE_CUFFT_CHECK(cufftExecR2C(forward_.handle(), const_cast<cufftReal*>(real), spectrum));
  else
    SPECWAVE_CUFFT_CHECK(cufftExecD2Z(forward_.handle(), const_cast<cufftDoubleReal*>(real), spectrum));
}

template <class T>
void RealFft3d<T>::backward(Complex<T>* spectrum, T* real) const {
  if constexpr (std::is_same_v<T, float>)
    SPECWAVE_CUFFT_CHECK(cufftExecC2R(backward_.handle(), spectrum, real));
  else
    SPECWAVE_CUFFT_CHECK(cufftExecZ2D(backward_.handle(), spectrum, real));
}

template <class T>
void multiply_spectrum(SpectralShape s, Complex<T>* spectrum, const T* symbol, cudaStream_t stream) {
  const std::size_t plane = std::size_t(s.ny) * s.half_x();
  multiply_spectrum_kernel<T><<<SPECWAVE_LAUNCH(plane_grid(plane, s.nz), stream)>>>(int(plane), spectrum, symbol);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

template <class T>
void staggered_gradient_spectra(SpectralShape s, const Complex<T>* in, Complex<T>* out_z, Complex<T>* out_y,
                                Complex<T>* out_x, const T* kappa, const Complex<T>* shift_z, const Complex<T>* shift_y,
                                const Complex<T>* shift_x, cudaStream_t stream) {
  if (out_y == in || out_x == in || out_y == out_z || out_x == out_z || out_x == out_y)
    throw std::invalid_argument("staggered_gradient_spectra: only out_z may alias the input");
  const std::size_t plane = std::size_t(s.ny) * s.half_x();
  gradient_spectra_kernel<T><<<SPECWAVE_LAUNCH(plane_grid(plane, s.nz), stream)>>>(
      s.half_x(), int(plane), in, out_z, out_y, out_x, kappa, shift_z, shift_y, shift_x);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

template <class T>
void staggered_multiply(SpectralShape s, Complex<T>* spectrum, const T* kappa, const Complex<T>* shift, int axis,
                        cudaStream_t stream) {
  if (axis < 0 || axis > 2) throw std::invalid_argument("staggered_multiply: axis must be 0, 1 or 2");
  const std::size_t plane = std::size_t(s.ny) * s.half_x();
  staggered_multiply_kernel<T>
      <<<SPECWAVE_LAUNCH(plane_grid(plane, s.nz), stream)>>>(s.half_x(), int(plane), spectrum, kappa, shift, axis);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

template <class T>
void pml_velocity_step(SpectralShape s, T* w, const T* grad, const T* bs, int axis, T dt, const T* beta,
                       cudaStream_t stream) {
  if (axis < 0 || axis > 2) throw std::invalid_argument("pml_velocity_step: axis must be 0, 1 or 2");
  const std::size_t plane = std::size_t(s.ny) * s.nx;
  pml_velocity_kernel<T>
      <<<SPECWAVE_LAUNCH(plane_grid(plane, s.nz), stream)>>>(s.nx, int(plane), w, grad, bs, axis, dt, beta);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

template <class T>
void pml_pressure_step(SpectralShape s, const PmlPressureStep<T>& step, cudaStream_t stream) {
  const std::size_t plane = std::size_t(s.ny) * s.nx;
  pml_pressure_kernel<T><<<SPECWAVE_LAUNCH(plane_grid(plane, s.nz), stream)>>>(s.nx, int(plane), step);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

template <class T>
void damped_step(SpectralShape s, const DampedStep<T>& step, cudaStream_t stream) {
  const std::size_t plane = std::size_t(s.ny) * s.nx;
  damped_kernel<T><<<SPECWAVE_LAUNCH(plane_grid(plane, s.nz), stream)>>>(s.nx, int(plane), step);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

#define SPECWAVE_INSTANTIATE(T)                                                                                        \
  template class RealFft3d<T>;                                                                                         \
  template void multiply_spectrum<T>(SpectralShape, Complex<T>*, const T*, cudaStream_t);                              \
  template void staggered_gradient_spectra<T>(SpectralShape, const Complex<T>*, Complex<T>*, Complex<T>*, Complex<T>*, \
                                              const T*, const Complex<T>*, const Complex<T>*, const Complex<T>*,       \
                                              cudaStream_t);                                                           \
  template void staggered_multiply<T>(SpectralShape, Complex<T>*, const T*, const Complex<T>*, int, cudaStream_t);     \
  template void pml_velocity_step<T>(SpectralShape, T*, const T*, const T*, int, T, const T*, cudaStream_t);           \
  template void pml_pressure_step<T>(SpectralShape, const PmlPressureStep<T>&, cudaStream_t);                          \
  template void damped_step<T>(SpectralShape, const DampedStep<T>&, cudaStream_t);
SPECWAVE_INSTANTIATE(float)
SPECWAVE_INSTANTIATE(double)
#undef SPECWAVE_INSTANTIATE

}  // namespace specwave::cuda
