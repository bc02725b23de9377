// FDTD on the CPU: owns padded fields and CPML slabs, drives kernels/cpu/fdtd_cpu.
#include <algorithm>
#include <cmath>
#include <omp.h>

#include "kernels/cpu/fdtd_cpu.hpp"
#include "kernels/fdtd_coefficients.hpp"
#include "solver/cpml.hpp"
#include "solver/fdtd_cpu_propagator.hpp"
#include "solver/plan.hpp"

namespace specwave {
namespace {

// A grid point with a precomputed factor: injection adds factor * s^n, sampling sums factor * u.
template <class T>
struct WeightedIndex {
  index_t index;
  T factor;
};

template <class T>
class FdtdCpu final : public Propagator {
 public:
  FdtdCpu(const Case& c, const Plan& plan) : nt_(plan.nt), free_surface_(c.boundary.free_surface) {
    const int R = c.scheme.order / 2;
    const auto& g = c.grid;
    layout_ = FieldLayout{g.shape[0], g.shape[1], g.shape[2], R};
    u_.assign(layout_.size(), T(0));
    u_prev_.assign(layout_.size(), T(0));
    vel2dt2_.assign(layout_.size(), T(0));
    for (int z = 0; z < g.shape[0]; ++z)
      for (int y = 0; y < g.shape[1]; ++y)
        for (int x = 0; x < g.shape[2]; ++x) {
          const double v = plan.model.velocity[(std::size_t(z) * g.shape[1] + y) * g.shape[2] + x];
          vel2dt2_[layout_.index(z, y, x)] = T(v * v * plan.dt * plan.dt);
        }
    coef_ = make_fdtd_coefficients<T>(R, g.spacing);
    // CPML: coefficient profiles and the two slabs of each axis.
    const CpmlProfile profile = make_cpml_profile(g, c.boundary, plan.model.v_max, plan.pml_frequency, plan.dt);
    for (int a = 0; a < 3; ++a) {
      pml_a_[a].assign(profile.a[a].begin(), profile.a[a].end());
      pml_b_[a].assign(profile.b[a].begin(), profile.b[a].end());
      CpmlAxis<T>& axis = pml_[a];
      axis.n = g.shape[a];
      axis.width = profile.width;
      axis.radius = R;
      axis.a = pml_a_[a].data();
      axis.b = pml_b_[a].data();
      int e[3];
      cpml_slab_extents(a, g.shape[0], g.shape[1], g.shape[2], profile.width, R, e);
      axis.slab_stride[2] = 1;
      axis.slab_stride[1] = e[2];
      axis.slab_stride[0] = index_t(e[1]) * e[2];
      for (int side = 0; side < 2; ++side) {
        axis.face[side] = profile.face[a][side];
        if (!axis.face[side]) continue;
        slabs_.emplace_back(std::size_t(e[0]) * e[1] * e[2], T(0));
        axis.psi[side] = slabs_.back().data();
        slabs_.emplace_back(std::size_t(e[0]) * e[1] * e[2], T(0));
        axis.zeta[side] = slabs_.back().data();
      }
    }
    for (const auto& r : plan.receivers) receivers_.push_back(weighted(r, 1.0));
    traces_.assign(receivers_.size() * std::size_t(nt_), 0.0);
    cell_volume_ = g.spacing[0] * g.spacing[1] * g.spacing[2];
  }

  std::string name() const override { return std::string("fdtd-cpu-") + (sizeof(T) == 4 ? "fp32" : "fp64"); }

  void begin_shot(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets) override {
    std::fill(u_.begin(), u_.end(), T(0));
    std::fill(u_prev_.begin(), u_prev_.end(), T(0));
    for (auto& s : slabs_) std::fill(s.begin(), s.end(), T(0));
    std::fill(traces_.begin(), traces_.end(), 0.0);
    sources_.clear();
    for (const auto& s : sources) sources_.push_back(weighted(s, 1.0 / cell_volume_, true));
    wavelets_ = wavelets;
  }

  void advance(int n_begin, int n_end) override {
    for (int n = n_begin; n < n_end; ++n) {
      record(n);
      cpu::FdtdStep<T> step{layout_, u_.data(), u_prev_.data(), vel2dt2_.data(), coef_, {pml_[0], pml_[1], pml_[2]},
                            free_surface_};
      cpu::fdtd_step(step);
      // f^n: u^{n+1} += (v dt)^2 * w / (dz dy dx) * s(t_n)   (the factor holds everything but s)
      for (std::size_t j = 0; j < sources_.size(); ++j) {
        const T amplitude = T(wavelets_[j][n]);
        for (const auto& p : sources_[j]) u_prev_[p.index] += p.factor * amplitude;
      }
      if (free_surface_) cpu::zero_top_plane(layout_, u_prev_.data());
      std::swap(u_, u_prev_);
    }
  }

  std::span<const double> traces() override { return traces_; }

  FieldStats field_stats() override {
    FieldStats stats;
    const auto& L = layout_;
    // Scan rows in parallel, reduce per-thread maxima in a fixed order (deterministic result).
    std::vector<FieldStats> per_thread(omp_get_max_threads());
#pragma omp parallel
    {
      FieldStats local;
#pragma omp for collapse(2) schedule(static)
      for (int z = 0; z < L.nz; ++z)
        for (int y = 0; y < L.ny; ++y)
          for (int x = 0; x < L.nx; ++x) {
            const double v = u_[L.index(z, y, x)];
            const std::int64_t flat = (std::int64_t(z) * L.ny + y) * L.nx + x;
            if (!std::isfinite(v)) {
              if (local.finite) local = {INFINITY, flat, false};
            } else if (local.finite && std::abs(v) > local.max_abs) {
              local.max_abs = std::abs(v);
              local.argmax = flat;
            }
          }
      per_thread[omp_get_thread_num()] = local;
    }
    for (const auto& t : per_thread) {
      if (!t.finite) return t;
      if (t.max_abs > stats.max_abs) stats = t;
    }
    return stats;
  }

  void copy_field(std::span<float> out) override { copy_out(out); }
  void copy_field(std::span<double> out) override { copy_out(out); }

  std::size_t device_bytes() const override { return 0; }

 private:
  std::vector<WeightedIndex<T>> weighted(const PointStencil& s, double scale, bool times_vel2dt2 = false) const {
    std::vector<WeightedIndex<T>> out;
    for (const auto& p : s.points) {
      const index_t i = layout_.index(p.iz, p.iy, p.ix);
      const double factor = p.weight * scale * (times_vel2dt2 ? double(vel2dt2_[i]) : 1.0);
      out.push_back({i, T(factor)});
    }
    return out;
  }

  // r(t_n) = sum_p w_p u^n_p
  void record(int n) {
    for (std::size_t r = 0; r < receivers_.size(); ++r) {
      double sum = 0;
      for (const auto& p : receivers_[r]) sum += double(p.factor) * double(u_[p.index]);
      traces_[r * nt_ + n] = sum;
    }
  }

  template <class U>
  void copy_out(std::span<U> out) const {
    const auto& L = layout_;
#pragma omp parallel for collapse(2)
    for (int z = 0; z < L.nz; ++z)
      for (int y = 0; y < L.ny; ++y)
        for (int x = 0; x < L.nx; ++x) out[(std::size_t(z) * L.ny + y) * L.nx + x] = U(u_[L.index(z, y, x)]);
  }

  int nt_;
  bool free_surface_;
  double cell_volume_ = 1;
  FieldLayout layout_;
  std::vector<T> u_, u_prev_, vel2dt2_;
  FdtdCoefficients<T> coef_;
  CpmlAxis<T> pml_[3];
  std::vector<T> pml_a_[3], pml_b_[3];
  std::vector<std::vector<T>> slabs_;
  std::vector<std::vector<WeightedIndex<T>>> receivers_, sources_;
  std::vector<std::vector<double>> wavelets_;
  std::vector<double> traces_;
};

}  // namespace

std::unique_ptr<Propagator> make_fdtd_cpu_propagator(const Case& c, const Plan& plan) {
  if (c.run.precision == Precision::fp64) return std::make_unique<FdtdCpu<double>>(c, plan);
  return std::make_unique<FdtdCpu<float>>(c, plan);
}

}  // namespace specwave
