#pragma once
// The Gaussian smoothing S of the inversion's gradient preconditioner on the device (docs/numerics.md,
// "Optimisation"; the host form is solver/inversion/preconditioner.hpp, GaussianSmoother): the field is copied into a
// grid padded with zeros by `pad` points on both sides of each axis, transformed by cuFFT (D2Z, fp64), multiplied by
// the filter exp(-|k|^2 sigma^2 / 2) / N on the half spectrum, transformed back (Z2D) and copied out of the
// padding. The filter is the host smoother's own array, uploaded, so the two cannot differ in their values; the
// results differ by the FFTs' rounding only. All pointers are device pointers; all work is queued in `stream`
// (asynchronous) and every CUDA and cuFFT call and launch is checked. Callable from plain C++.
#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <vector>

#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/spectral_cuda.hpp"

namespace specwave::cuda {

class DeviceGaussianSmoother {
 public:
  // shape (nz, ny, nx), pad per axis; filter: (pz, py, px/2 + 1) values of the padded grid (p = n + 2 pad),
  // normalisation included. Allocates the padded field, its half spectrum and the cuFFT work area: about
  // 16 pz py px bytes plus cuFFT's work area.
  DeviceGaussianSmoother(const std::array<int, 3>& shape, const std::array<int, 3>& pad,
                         const std::vector<double>& filter, cudaStream_t stream);
  void apply(double* field) const;  // (nz, ny, nx) in place
  std::size_t points() const { return std::size_t(shape_[0]) * shape_[1] * shape_[2]; }

 private:
  std::array<int, 3> shape_, pad_;
  SpectralShape padded_;
  cudaStream_t stream_;
  DeviceArray<double> real_, filter_;
  DeviceArray<Complex<double>> spectrum_;
  RealFft3d<double> fft_;
};

// v[i] *= w[i] for i < n (the diagonal of the preconditioner).
void multiply_pointwise(std::size_t n, double* v, const double* w, cudaStream_t stream);

}  // namespace specwave::cuda
