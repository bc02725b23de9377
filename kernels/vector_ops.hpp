#pragma once
// Level-1 vector operations of the optimiser (docs/numerics.md, "Optimisation") on n fp64 values, wherever the
// vectors live: Eigen on the host (kernels/cpu/vector_ops_cpu.cpp), cuBLAS on the device
// (kernels/cuda/vector_ops_cuda.cu, SPECWAVE_HAVE_CUDA). Pointers are host pointers for the CPU operations and
// device pointers for the cuBLAS ones; scalars (a, the results of dot and nrm2) are always on the host.
#include <cstddef>
#include <memory>
#include <string>

namespace specwave {

class VectorOps {
 public:
  virtual ~VectorOps() = default;
  virtual std::string name() const = 0;
  virtual double dot(std::size_t n, const double* x, const double* y) const = 0;
  virtual double nrm2(std::size_t n, const double* x) const = 0;  // sqrt(x . x)
  virtual void axpy(std::size_t n, double a, const double* x, double* y) const = 0;  // y += a x
  virtual void scal(std::size_t n, double a, double* x) const = 0;                   // x *= a
  virtual void copy(std::size_t n, const double* x, double* y) const = 0;            // y = x
  // x = min(max(x, lower), upper) component-wise: the projection onto box bounds.
  virtual void project(std::size_t n, double* x, const double* lower, const double* upper) const = 0;
};

// Eigen on host memory: each operation is the Eigen expression the optimiser used before this interface
// (dot, norm, y += a x, ...), so its results are bitwise those.
std::unique_ptr<VectorOps> make_cpu_vector_ops();

// cuBLAS (ddot, dnrm2, daxpy, dscal, dcopy) and a projection kernel on device memory, queued in `stream`
// (cudaStream_t; nullptr: the default stream); dot and nrm2 wait for their result. Only with SPECWAVE_HAVE_CUDA.
std::unique_ptr<VectorOps> make_cublas_vector_ops(void* stream = nullptr);

}  // namespace specwave
