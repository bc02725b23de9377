// The optimiser's vector operations on the device: cuBLAS level 1 and one projection kernel
// (kernels/vector_ops.hpp). Every cuBLAS call, runtime call and launch is checked (kernels/cuda/check.cuh and
// SPECWAVE_CUBLAS_CHECK below). cuBLAS is opened at run time (kernels/cuda/cublas_library.hpp).
#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/cuda/check.cuh"
#include "kernels/cuda/cublas_library.cuh"
#include "kernels/cuda/launch.cuh"
#include "kernels/vector_ops.hpp"

namespace specwave {
namespace {

using cuda::block_dim, cuda::block_index, cuda::grid_dim, cuda::thread_index;

[[noreturn]] void throw_cublas_error(cublasStatus_t s, const char* expr, const char* file, int line) {
  const cuda::CublasLibrary& blas = cuda::cublas_library();
  const std::string msg = std::string("cuBLAS error ") + blas.status_name(s) + " (" + blas.status_string(s) + ") in `" +
                          expr + "` at " + file + ":" + std::to_string(line);
  if (s == CUBLAS_STATUS_ALLOC_FAILED) throw cuda::DeviceMemoryError(msg);
  throw std::runtime_error(msg);
}

#define SPECWAVE_CUBLAS_CHECK(expr)                                      \
  do {                                                                   \
    const cublasStatus_t specwave_blas_err_ = (expr);                    \
    if (specwave_blas_err_ != CUBLAS_STATUS_SUCCESS)                     \
      throw_cublas_error(specwave_blas_err_, #expr, __FILE__, __LINE__); \
  } while (0)

// x = min(max(x, lower), upper), one component per thread (grid-stride: any n).
__global__ void project_kernel(std::size_t n, double* x, const double* lower, const double* upper) {
  for (std::size_t i = launch::stride_start(block_dim(), block_index(), thread_index()); i < n;
       i += launch::stride_step(grid_dim(), block_dim()))
    x[i] = fmin(fmax(x[i], lower[i]), upper[i]);
}

// w = x + a y; a = -1 as x - y (the same value: negation is exact).
__global__ void add_scaled_kernel(std::size_t n, const double* x, double a, const double* y, double* w) {
  for (std::size_t i = launch::stride_start(block_dim(), block_index(), thread_index()); i < n;
       i += launch::stride_step(grid_dim(), block_dim()))
    w[i] = a == -1 ? x[i] - y[i] : x[i] + a * y[i];
}

__global__ void path_tangent_kernel(std::size_t n, double a, const double* x0, const double* d, const double* lower,
                                    const double* upper, double* t) {
  for (std::size_t i = launch::stride_start(block_dim(), block_index(), thread_index()); i < n;
       i += launch::stride_step(grid_dim(), block_dim())) {
    const double raw = x0[i] + a * d[i];
    t[i] = raw < lower[i] || raw > upper[i] ? 0.0 : d[i];
  }
}

__global__ void mask_outward_kernel(std::size_t n, const double* x, const double* lower, const double* upper, double* v,
                                    int sign) {
  for (std::size_t i = launch::stride_start(block_dim(), block_index(), thread_index()); i < n;
       i += launch::stride_step(grid_dim(), block_dim()))
    if ((x[i] <= lower[i] && sign * v[i] < 0) || (x[i] >= upper[i] && sign * v[i] > 0)) v[i] = 0;
}

// cuBLAS takes int lengths: longer vectors are processed in chunks (dot and nrm2 combine the chunks' results).
constexpr std::size_t chunk = std::size_t(1) << 30;

class CublasVectorOps final : public VectorOps {
 public:
  explicit CublasVectorOps(cudaStream_t stream) : blas_(cuda::cublas_library()), stream_(stream) {
    SPECWAVE_CUBLAS_CHECK(blas_.create(&handle_));
    SPECWAVE_CUBLAS_CHECK(blas_.set_stream(handle_, stream_));
    SPECWAVE_CUBLAS_CHECK(blas_.set_pointer_mode(handle_, CUBLAS_POINTER_MODE_HOST));
  }
  ~CublasVectorOps() override {
    if (handle_) blas_.destroy(handle_);  // no throw from a destructor
  }
  CublasVectorOps(const CublasVectorOps&) = delete;
  CublasVectorOps& operator=(const CublasVectorOps&) = delete;

  std::string name() const override { return "cublas"; }
  double dot(std::size_t n, const double* x, const double* y) const override {
    double sum = 0;
    for (std::size_t k = 0; k < n; k += chunk) {
      double part = 0;
      SPECWAVE_CUBLAS_CHECK(blas_.ddot(handle_, length(n, k), x + k, 1, y + k, 1, &part));
      sum += part;
    }
    return sum;
  }
  double nrm2(std::size_t n, const double* x) const override {
    if (n <= chunk) {
      double r = 0;
      SPECWAVE_CUBLAS_CHECK(blas_.dnrm2(handle_, int(n), x, 1, &r));
      return r;
    }
    double sum = 0;
    for (std::size_t k = 0; k < n; k += chunk) {
      double part = 0;
      SPECWAVE_CUBLAS_CHECK(blas_.dnrm2(handle_, length(n, k), x + k, 1, &part));
      sum += part * part;
    }
    return std::sqrt(sum);
  }
  void axpy(std::size_t n, double a, const double* x, double* y) const override {
    for (std::size_t k = 0; k < n; k += chunk)
      SPECWAVE_CUBLAS_CHECK(blas_.daxpy(handle_, length(n, k), &a, x + k, 1, y + k, 1));
  }
  void scal(std::size_t n, double a, double* x) const override {
    for (std::size_t k = 0; k < n; k += chunk) SPECWAVE_CUBLAS_CHECK(blas_.dscal(handle_, length(n, k), &a, x + k, 1));
  }
  void copy(std::size_t n, const double* x, double* y) const override {
    for (std::size_t k = 0; k < n; k += chunk)
      SPECWAVE_CUBLAS_CHECK(blas_.dcopy(handle_, length(n, k), x + k, 1, y + k, 1));
  }
  void project(std::size_t n, double* x, const double* lower, const double* upper) const override {
    if (n == 0) return;
    project_kernel<<<SPECWAVE_LAUNCH(launch::stride_launch(index_t(n), 256), stream_)>>>(n, x, lower, upper);
    SPECWAVE_CUDA_CHECK_LAUNCH();
  }
  void add_scaled(std::size_t n, const double* x, double a, const double* y, double* w) const override {
    if (n == 0) return;
    add_scaled_kernel<<<SPECWAVE_LAUNCH(launch::stride_launch(index_t(n), 256), stream_)>>>(n, x, a, y, w);
    SPECWAVE_CUDA_CHECK_LAUNCH();
  }
  void path_tangent(std::size_t n, double a, const double* x0, const double* d, const double* lower,
                    const double* upper, double* t) const override {
    if (n == 0) return;
    path_tangent_kernel<<<SPECWAVE_LAUNCH(launch::stride_launch(index_t(n), 256), stream_)>>>(n, a, x0, d, lower, upper,
                                                                                              t);
    SPECWAVE_CUDA_CHECK_LAUNCH();
  }

  bool on_device() const override { return true; }
  double* allocate(std::size_t n) const override {
    void* p = nullptr;
    SPECWAVE_CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(double)));
    SPECWAVE_CUDA_CHECK(cudaMemsetAsync(p, 0, n * sizeof(double), stream_));
    return static_cast<double*>(p);
  }
  void release(double* x) const override {
    if (x) cudaFree(x);  // called from destructors: no throw
  }
  // Synchronous in stream_: the host buffer is pageable and may be used as soon as these return.
  void upload(std::size_t n, const double* host, double* x) const override {
    if (n == 0) return;
    SPECWAVE_CUDA_CHECK(cudaMemcpyAsync(x, host, n * sizeof(double), cudaMemcpyHostToDevice, stream_));
    SPECWAVE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void download(std::size_t n, const double* x, double* host) const override {
    if (n == 0) return;
    SPECWAVE_CUDA_CHECK(cudaMemcpyAsync(host, x, n * sizeof(double), cudaMemcpyDeviceToHost, stream_));
    SPECWAVE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

 protected:
  void mask_outward(std::size_t n, const double* x, const double* lower, const double* upper, double* v,
                    int sign) const override {
    if (n == 0) return;
    mask_outward_kernel<<<SPECWAVE_LAUNCH(launch::stride_launch(index_t(n), 256), stream_)>>>(n, x, lower, upper, v,
                                                                                              sign);
    SPECWAVE_CUDA_CHECK_LAUNCH();
  }

 private:
  static int length(std::size_t n, std::size_t k) { return int(std::min(chunk, n - k)); }
  const cuda::CublasLibrary& blas_;
  cudaStream_t stream_;
  cublasHandle_t handle_ = nullptr;
};

}  // namespace

std::unique_ptr<VectorOps> make_cublas_vector_ops(void* stream) {
  return std::make_unique<CublasVectorOps>(static_cast<cudaStream_t>(stream));
}

}  // namespace specwave
