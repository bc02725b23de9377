// FDTD on the CPU: runs kernels/cpu/fdtd_cpu on the host arrays of FdtdSetup.
#include <algorithm>
#include <cmath>
#include <omp.h>

#include "kernels/cpu/fdtd_cpu.hpp"
#include "solver/fdtd_cpu_propagator.hpp"
#include "solver/fdtd_setup.hpp"
#include "solver/host_field.hpp"
#include "solver/plan.hpp"

namespace specwave {
namespace {

template <class T>
class FdtdCpu final : public Propagator {
 public:
  FdtdCpu(const Case& c, const Plan& plan) : setup_(make_fdtd_setup<T>(c, plan)) {
    u_.assign(setup_.layout.size(), T(0));
    u_prev_.assign(setup_.layout.size(), T(0));
    for (int a = 0; a < 3; ++a) {
      CpmlAxis<T>& axis = setup_.pml[a];
      axis.a = setup_.pml_a[a].data();
      axis.b = setup_.pml_b[a].data();
      for (int side = 0; side < 2; ++side) {
        if (!axis.face[side]) continue;
        axis.psi[side] = slabs_.emplace_back(setup_.slab_points[a], T(0)).data();
        axis.zeta[side] = slabs_.emplace_back(setup_.slab_points[a], T(0)).data();
      }
    }
    traces_.assign((setup_.receivers.offsets.size() - 1) * std::size_t(setup_.nt), 0.0);
  }

  std::string name() const override { return std::string("fdtd-cpu-") + (sizeof(T) == 4 ? "fp32" : "fp64"); }

  void begin_shot(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets) override {
    std::fill(u_.begin(), u_.end(), T(0));
    std::fill(u_prev_.begin(), u_prev_.end(), T(0));
    for (auto& s : slabs_) std::fill(s.begin(), s.end(), T(0));
    std::fill(traces_.begin(), traces_.end(), 0.0);
    sources_ = setup_.sources(sources);
    wavelets_ = wavelets;
  }

  void advance(int n_begin, int n_end) override {
    const auto& src = sources_;
    for (int n = n_begin; n < n_end; ++n) {
      record(n);
      const FdtdStep<T> step{setup_.layout, u_.data(), u_prev_.data(), setup_.vel2dt2.data(), setup_.coef,
                             {setup_.pml[0], setup_.pml[1], setup_.pml[2]}, setup_.free_surface};
      cpu::fdtd_step(step);
      // f^n: u^{n+1} += (v dt)^2 w / (dz dy dx) s(t_n)
      for (std::size_t p = 0; p < src.index.size(); ++p)
        u_prev_[src.index[p]] += src.factor[p] * T(wavelets_[src.owner[p]][n]);
      if (setup_.free_surface) cpu::zero_top_plane(setup_.layout, u_prev_.data());
      std::swap(u_, u_prev_);
    }
  }

  std::span<const double> traces() override { return traces_; }

  FieldStats field_stats() override { return host::field_stats(setup_.layout, u_.data()); }

  void copy_field(std::span<float> out) override { copy_out(out); }
  void copy_field(std::span<double> out) override { copy_out(out); }
  std::size_t device_bytes() const override { return 0; }

 private:
  void record(int n) { host::record(setup_.receivers, u_.data(), traces_, setup_.nt, n); }

  template <class U>
  void copy_out(std::span<U> out) const {
    host::copy_interior(setup_.layout, u_.data(), out);
  }

  FdtdSetup<T> setup_;
  std::vector<T> u_, u_prev_;
  std::vector<std::vector<T>> slabs_;
  PointLists<T> sources_;
  std::vector<std::vector<double>> wavelets_;
  std::vector<double> traces_;
};

}  // namespace

std::unique_ptr<Propagator> make_fdtd_cpu_propagator(const Case& c, const Plan& plan) {
  if (c.run.precision == Precision::fp64) return std::make_unique<FdtdCpu<double>>(c, plan);
  return std::make_unique<FdtdCpu<float>>(c, plan);
}

}  // namespace specwave
