#include <Eigen/Core>
#include <algorithm>
#include <cstring>

#include "kernels/vector_ops.hpp"

namespace specwave {
namespace {

using Map = Eigen::Map<Eigen::VectorXd>;
using ConstMap = Eigen::Map<const Eigen::VectorXd>;

Eigen::Index size(std::size_t n) { return Eigen::Index(n); }

class CpuVectorOps final : public VectorOps {
 public:
  std::string name() const override { return "eigen"; }
  double dot(std::size_t n, const double* x, const double* y) const override {
    return ConstMap(x, size(n)).dot(ConstMap(y, size(n)));
  }
  double nrm2(std::size_t n, const double* x) const override { return ConstMap(x, size(n)).norm(); }
  void axpy(std::size_t n, double a, const double* x, double* y) const override {
    Map(y, size(n)) += a * ConstMap(x, size(n));
  }
  void scal(std::size_t n, double a, double* x) const override { Map(x, size(n)) *= a; }
  void copy(std::size_t n, const double* x, double* y) const override { Map(y, size(n)) = ConstMap(x, size(n)); }
  void project(std::size_t n, double* x, const double* lower, const double* upper) const override {
    Map v(x, size(n));
    v = v.cwiseMax(ConstMap(lower, size(n))).cwiseMin(ConstMap(upper, size(n)));
  }
  // The Eigen expression x + a y of the former Eigen-only optimiser (x0_ + a * d_, x1 - x0), so the same rounding
  // (and the same FMA contraction, if any) as before.
  void add_scaled(std::size_t n, const double* x, double a, const double* y, double* w) const override {
    if (a == -1)
      Map(w, size(n)) = ConstMap(x, size(n)) - ConstMap(y, size(n));
    else
      Map(w, size(n)) = ConstMap(x, size(n)) + a * ConstMap(y, size(n));
  }
  // The loop of the former line search (solver/optim/line_search.cpp), raw computed the same way.
  void path_tangent(std::size_t n, double a, const double* x0, const double* d, const double* lower,
                    const double* upper, double* t) const override {
    for (std::size_t k = 0; k < n; ++k) {
      const double raw = x0[k] + a * d[k];
      t[k] = raw < lower[k] || raw > upper[k] ? 0.0 : d[k];
    }
  }

  bool on_device() const override { return false; }
  // Aligned as Eigen aligns its own vectors, so the operations see the memory layout of the Eigen::VectorXd of
  // ReferenceOptimizer (the bitwise test also passed with a buffer offset by one double: the maps use unaligned
  // packets).
  double* allocate(std::size_t n) const override {
    auto* x = static_cast<double*>(Eigen::internal::aligned_malloc(std::max<std::size_t>(n, 1) * sizeof(double)));
    std::fill(x, x + n, 0.0);
    return x;
  }
  void release(double* x) const override { Eigen::internal::aligned_free(x); }
  void upload(std::size_t n, const double* host, double* x) const override {
    if (n > 0) std::memcpy(x, host, n * sizeof(double));
  }
  void download(std::size_t n, const double* x, double* host) const override {
    if (n > 0) std::memcpy(host, x, n * sizeof(double));
  }

 protected:
  void mask_outward(std::size_t n, const double* x, const double* lower, const double* upper, double* v,
                    int sign) const override {
    for (std::size_t k = 0; k < n; ++k)
      if ((x[k] <= lower[k] && sign * v[k] < 0) || (x[k] >= upper[k] && sign * v[k] > 0)) v[k] = 0;
  }
};

}  // namespace

std::unique_ptr<VectorOps> make_cpu_vector_ops() { return std::make_unique<CpuVectorOps>(); }

}  // namespace specwave
