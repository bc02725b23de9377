#pragma once
// The CUDA side of the k-space pseudo-spectral method (docs/numerics.md, "Pseudo-spectral k-space propagator"):
// cuFFT plans of the 3-D real transforms and host launchers of the pointwise kernels between them
// (spectral_cuda.cu), callable from plain C++. All pointers are device pointers. Real fields are dense
// (nz, ny, nx); spectra are the (nz, ny, nx/2 + 1) half spectrum of the real transforms; both C order, x fastest.
// Every call is checked and queued in `stream` (asynchronous). Explicitly instantiated for float and double.
#include <cuda_runtime_api.h>
#include <vector_types.h>

#include <cstddef>

#include "kernels/common.hpp"
#include "kernels/cuda/device_buffer.hpp"

namespace specwave::cuda {

// The complex type of a real type, laid out as cufftComplex / cufftDoubleComplex (re, im).
template <class T>
struct ComplexOf;
template <>
struct ComplexOf<float> {
  using type = float2;
};
template <>
struct ComplexOf<double> {
  using type = double2;
};
template <class T>
using Complex = typename ComplexOf<T>::type;

struct SpectralShape {
  int nz = 0, ny = 0, nx = 0;
  int half_x() const { return nx / 2 + 1; }
  std::size_t points() const { return std::size_t(nz) * ny * nx; }
  std::size_t spectrum_points() const { return std::size_t(nz) * ny * half_x(); }
};

// A cuFFT plan handle (RAII: cufftCreate / cufftDestroy).
class FftPlan {
 public:
  FftPlan();
  ~FftPlan();
  FftPlan(const FftPlan&) = delete;
  FftPlan& operator=(const FftPlan&) = delete;
  int handle() const { return handle_; }  // a cufftHandle

 private:
  int handle_ = -1;
};

// The forward (R2C / D2Z) and inverse (C2R / Z2D) transforms of one (nz, ny, nx) real field, planned once and
// run in `stream`. Both plans share one work area allocated here (cuFFT's own allocation is switched off), so
// nothing is allocated when they run. Both transforms are unnormalised: a round trip multiplies by nz ny nx.
template <class T>
class RealFft3d {
 public:
  RealFft3d(SpectralShape shape, cudaStream_t stream);
  void forward(const T* real, Complex<T>* spectrum) const;  // out of place; `real` is left unchanged
  void backward(Complex<T>* spectrum, T* real) const;       // out of place; cuFFT overwrites `spectrum`
  std::size_t work_bytes() const { return work_.bytes(); }
  SpectralShape shape() const { return shape_; }

 private:
  SpectralShape shape_;
  DeviceBuffer work_;  // declared before the plans: destroyed after them
  FftPlan forward_, backward_;
};

// The sources of one step: value += sum_j amplitudes[j * nt + n] * patterns[j * points + i], j = 0 .. count-1
// in order, a term skipped where its amplitude is 0 (as on the CPU).
template <class T>
struct SourceTerms {
  const T* patterns = nullptr;    // count dense fields
  const T* amplitudes = nullptr;  // (count, nt)
  int count = 0, nt = 0, n = 0;
};

// spectrum[k] *= symbol[k] (a real symbol on the half spectrum).
template <class T>
void multiply_spectrum(SpectralShape shape, Complex<T>* spectrum, const T* symbol, cudaStream_t stream);

// The spectra of D_a^+ p for a = z, y, x from FFT(p) = `in`:
//   out_a[k] = in[k] * kappa[k] * shift_a[m_a(k)]   (m_a: the wavenumber index of k along axis a)
// out_z may be `in` itself (each thread reads its value before writing); out_y, out_x must be distinct.
template <class T>
void staggered_gradient_spectra(SpectralShape shape, const Complex<T>* in, Complex<T>* out_z, Complex<T>* out_y,
                                Complex<T>* out_x, const T* kappa, const Complex<T>* shift_z, const Complex<T>* shift_y,
                                const Complex<T>* shift_x, cudaStream_t stream);

// In place, one axis: spectrum[k] *= kappa[k] * shift[m_axis(k)]   (the spectrum of D_a^- w_a).
template <class T>
void staggered_multiply(SpectralShape shape, Complex<T>* spectrum, const T* kappa, const Complex<T>* shift, int axis,
                        cudaStream_t stream);

// Split-field PML, velocity of axis a:  w_a <- bs_a (bs_a w_a - dt D_a^+ p),  grad = D_a^+ p, bs indexed along the
// axis.
// With a density model, `beta` (beta_a at the staggered points, SpectralSetup::beta) multiplies dt at each point as on
// the CPU (dt beta_a); null without one.
template <class T>
void pml_velocity_step(SpectralShape shape, T* w, const T* grad, const T* bs, int axis, T dt, const T* beta,
                       cudaStream_t stream);

// Split-field PML, pressure of all three axes at once, and their sum:
//   p_a <- b_a (b_a p_a - dt v^2 D_a^- w_a) + sources   (a = z, y, x),   p_sum <- p_z + p_y + p_x
template <class T>
struct PmlPressureStep {
  T* p[3];
  const T* div[3];  // D_a^- w_a
  const T* dt_vel2;
  const T* b[3];  // per axis, indexed along that axis
  T* p_sum;
  SourceTerms<T> sources;
  bool source_y = true;  // false in 2-D: p_y takes no share of the sources (SpectralSetup::active)
  // Attenuation (docs/numerics.md, "Attenuation in the k-space method"): each active component's memory variables
  // r[a][l] (an inactive axis' are null), their drives g[l] and decays, dt / 2: with them p_a^{n+1} =
  // pml_pressure_memory_update(p_a, b_a, dt v_U^2, D_a, (dt / 2) sum_l (r^{n+1} + r^n)) + sources.
  int mechanisms = 0;
  T* r[3][8] = {};
  const T* g[8] = {};
  T decay[8] = {};
  T half_dt = 0;
};
template <class T>
void pml_pressure_step(SpectralShape shape, const PmlPressureStep<T>& step, cudaStream_t stream);

// Damping layer, written over u_prev:
//   u_prev <- ( 2 u - (1 - eta dt) u_prev + (v dt)^2 lap ) / (1 + eta dt) + sources,
//   eta dt = (d_z[z] + d_y[y] + d_x[x]) dt, summed in fp64 and rounded to T (as SpectralSetup::eta_dt)
template <class T>
struct DampedStep {
  const T* u;
  T* u_prev;
  const T* lap;
  const T* vel2dt2;
  const double* damping[3];  // d_a per axis, indexed along that axis
  double dt;
  SourceTerms<T> sources;
};
template <class T>
void damped_step(SpectralShape shape, const DampedStep<T>& step, cudaStream_t stream);

}  // namespace specwave::cuda
