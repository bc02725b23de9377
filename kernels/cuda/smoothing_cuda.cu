// The device Gaussian smoother (kernels/cuda/smoothing_cuda.hpp): two grid-stride copy kernels around the cuFFT
// transforms and the spectral multiply of spectral_cuda.cu. Written without a GPU at hand: compiled, and compared
// with the host smoother by tests/test_gpu.cpp, which has not run yet (no device).
#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/cuda/check.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/smoothing_cuda.hpp"

namespace specwave::cuda {
namespace {

// The dense grid inside the padded one: point (z, y, x) of the field is point (z + pz, y + py, x + px) there.
struct Padding {
  int n[3], pad[3], padded[3];
};

// padded = the field inside, 0 in the padding: one thread per padded point (grid-stride), so no separate zeroing.
__global__ void pad_kernel(Padding p, const double* field, double* padded) {
  const std::size_t total = std::size_t(p.padded[0]) * p.padded[1] * p.padded[2];
  for (std::size_t i = launch::stride_start(block_dim(), block_index(), thread_index()); i < total;
       i += launch::stride_step(grid_dim(), block_dim())) {
    const int x = int(i % p.padded[2]) - p.pad[2];
    const std::size_t zy = i / p.padded[2];
    const int y = int(zy % p.padded[1]) - p.pad[1];
    const int z = int(zy / p.padded[1]) - p.pad[0];
    const bool inside = z >= 0 && z < p.n[0] && y >= 0 && y < p.n[1] && x >= 0 && x < p.n[2];
    padded[i] = inside ? field[(std::size_t(z) * p.n[1] + y) * p.n[2] + x] : 0.0;
  }
}

// field = the inner part of padded: one thread per field point (grid-stride).
__global__ void unpad_kernel(Padding p, const double* padded, double* field) {
  const std::size_t total = std::size_t(p.n[0]) * p.n[1] * p.n[2];
  for (std::size_t i = launch::stride_start(block_dim(), block_index(), thread_index()); i < total;
       i += launch::stride_step(grid_dim(), block_dim())) {
    const int x = int(i % p.n[2]);
    const std::size_t zy = i / p.n[2];
    const int y = int(zy % p.n[1]), z = int(zy / p.n[1]);
    field[i] = padded[(std::size_t(z + p.pad[0]) * p.padded[1] + y + p.pad[1]) * p.padded[2] + x + p.pad[2]];
  }
}

__global__ void multiply_pointwise_kernel(std::size_t n, double* v, const double* w) {
  for (std::size_t i = launch::stride_start(block_dim(), block_index(), thread_index()); i < n;
       i += launch::stride_step(grid_dim(), block_dim()))
    v[i] *= w[i];
}

SpectralShape padded_shape(const std::array<int, 3>& shape, const std::array<int, 3>& pad) {
  for (int a = 0; a < 3; ++a)
    if (shape[a] <= 0 || pad[a] < 0)
      throw std::invalid_argument("DeviceGaussianSmoother: empty grid or negative padding (axis " + std::to_string(a) +
                                  ")");
  return {shape[0] + 2 * pad[0], shape[1] + 2 * pad[1], shape[2] + 2 * pad[2]};
}

}  // namespace

DeviceGaussianSmoother::DeviceGaussianSmoother(const std::array<int, 3>& shape, const std::array<int, 3>& pad,
                                               const std::vector<double>& filter, cudaStream_t stream)
    : shape_(shape),
      pad_(pad),
      padded_(padded_shape(shape, pad)),
      stream_(stream),
      real_(padded_.points()),
      filter_(padded_.spectrum_points()),
      spectrum_(padded_.spectrum_points()),
      fft_(padded_, stream) {
  if (filter.size() != padded_.spectrum_points())
    throw std::invalid_argument("DeviceGaussianSmoother: the filter has " + std::to_string(filter.size()) +
                                " values, the padded grid's half spectrum " +
                                std::to_string(padded_.spectrum_points()));
  // DeviceBuffer zero-fills in the legacy default stream, which a non-blocking `stream` does not wait for: wait
  // for the fills here (once, at construction) before the filter is copied over one of them.
  synchronize();
  copy_to_device(filter_.data(), filter.data(), filter.size() * sizeof(double), stream_);
}

// S v = unpad( IFFT( filter * FFT( pad(v) ) ) ), filter including 1 / (pz py px).
void DeviceGaussianSmoother::apply(double* field) const {
  const Padding p{{shape_[0], shape_[1], shape_[2]}, {pad_[0], pad_[1], pad_[2]}, {padded_.nz, padded_.ny, padded_.nx}};
  pad_kernel<<<SPECWAVE_LAUNCH(launch::stride_launch(index_t(padded_.points()), 256), stream_)>>>(p, field,
                                                                                                  real_.data());
  SPECWAVE_CUDA_CHECK_LAUNCH();
  fft_.forward(real_.data(), spectrum_.data());
  multiply_spectrum<double>(padded_, spectrum_.data(), filter_.data(), stream_);
  fft_.backward(spectrum_.data(), real_.data());
  unpad_kernel<<<SPECWAVE_LAUNCH(launch::stride_launch(index_t(points()), 256), stream_)>>>(p, real_.data(), field);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

void multiply_pointwise(std::size_t n, double* v, const double* w, cudaStream_t stream) {
  if (n == 0) return;
  multiply_pointwise_kernel<<<SPECWAVE_LAUNCH(launch::stride_launch(index_t(n), 256), stream)>>>(n, v, w);
  SPECWAVE_CUDA_CHECK_LAUNCH();
}

}  // namespace specwave::cuda
