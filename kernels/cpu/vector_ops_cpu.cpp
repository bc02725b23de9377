#include <Eigen/Core>

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
  void axpy(std::size_t n, double a, const double* x, double* y) const override { Map(y, size(n)) += a * ConstMap(x, size(n)); }
  void scal(std::size_t n, double a, double* x) const override { Map(x, size(n)) *= a; }
  void copy(std::size_t n, const double* x, double* y) const override { Map(y, size(n)) = ConstMap(x, size(n)); }
  void project(std::size_t n, double* x, const double* lower, const double* upper) const override {
    Map v(x, size(n));
    v = v.cwiseMax(ConstMap(lower, size(n))).cwiseMin(ConstMap(upper, size(n)));
  }
};

}  // namespace

std::unique_ptr<VectorOps> make_cpu_vector_ops() { return std::make_unique<CpuVectorOps>(); }

}  // namespace specwave
