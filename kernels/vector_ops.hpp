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
  virtual double nrm2(std::size_t n, const double* x) const = 0;                     // sqrt(x . x)
  virtual void axpy(std::size_t n, double a, const double* x, double* y) const = 0;  // y += a x
  virtual void scal(std::size_t n, double a, double* x) const = 0;                   // x *= a
  virtual void copy(std::size_t n, const double* x, double* y) const = 0;            // y = x
  // x = min(max(x, lower), upper) component-wise: the projection onto box bounds.
  virtual void project(std::size_t n, double* x, const double* lower, const double* upper) const = 0;
  // w = x + a y (w may alias x or y): the optimiser's trial points x0 + a d and differences x1 - x0 (a = -1).
  virtual void add_scaled(std::size_t n, const double* x, double a, const double* y, double* w) const = 0;
  // The bound-constrained optimiser's masks (docs/numerics.md, "Optimisation"), exact (comparisons only):
  // feasible direction: d_k = 0 where x_k <= lower_k and d_k < 0, or x_k >= upper_k and d_k > 0 (d leaves the box);
  void feasible_direction(std::size_t n, const double* x, const double* lower, const double* upper, double* d) const {
    mask_outward(n, x, lower, upper, d, 1);
  }
  // projected gradient: g_k = 0 where x_k <= lower_k and g_k > 0, or x_k >= upper_k and g_k < 0 (-g leaves the box);
  void projected_gradient(std::size_t n, const double* x, const double* lower, const double* upper, double* g) const {
    mask_outward(n, x, lower, upper, g, -1);
  }
  // path tangent of the projected path P(x0 + a d): t = d, with t_k = 0 where x0_k + a d_k is outside the box.
  virtual void path_tangent(std::size_t n, double a, const double* x0, const double* d, const double* lower,
                            const double* upper, double* t) const = 0;

  // Memory where these operations run (host for Eigen, device for cuBLAS): allocate (zero-filled), release,
  // and the copies from and to host memory (ordered after the operations queued before).
  virtual bool on_device() const = 0;
  virtual double* allocate(std::size_t n) const = 0;
  virtual void release(double* x) const = 0;
  virtual void upload(std::size_t n, const double* host, double* x) const = 0;
  virtual void download(std::size_t n, const double* x, double* host) const = 0;

 protected:
  // v_k = 0 where x_k <= lower_k and sign v_k < 0, or x_k >= upper_k and sign v_k > 0.
  virtual void mask_outward(std::size_t n, const double* x, const double* lower, const double* upper, double* v,
                            int sign) const = 0;
};

// Eigen on host memory: each operation is the Eigen expression the optimiser used before this interface
// (dot, norm, y += a x, ...), so its results are bitwise those.
std::unique_ptr<VectorOps> make_cpu_vector_ops();

// cuBLAS (ddot, dnrm2, daxpy, dscal, dcopy) and a projection kernel on device memory, queued in `stream`
// (cudaStream_t; nullptr: the default stream); dot and nrm2 wait for their result. Only with SPECWAVE_HAVE_CUDA.
std::unique_ptr<VectorOps> make_cublas_vector_ops(void* stream = nullptr);

}  // namespace specwave
