// The elastic velocity-stress scheme on the CPU: kernels/cpu/elastic_cpu on the arrays of ElasticSetup. Step n records
// the pressure receivers (s^n), updates the velocities, adds the forces, records the velocity receivers (v^{n+1/2}),
// updates the stresses and adds the pressure sources; a velocity trace's sample n is (v^{n-1/2} + v^{n+1/2}) / 2.
#include "solver/propagators/elastic/elastic_cpu_propagator.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "kernels/cpu/elastic_cpu.hpp"
#include "kernels/cpu/fdtd_cpu.hpp"
#include "kernels/cpu/flush_denormals.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/elastic/elastic_setup.hpp"
#include "solver/propagators/host_field.hpp"
#include "solver/propagators/staggered/staggered_setup.hpp"

namespace specwave {
namespace {

template <class T>
class ElasticCpu final : public Propagator {
 public:
  ElasticCpu(const Case& c, const Plan& plan)
      : setup_(make_elastic_setup<T>(c, plan)),
        fields_(setup_),
        pressure_(std::size_t(setup_.layout.size()), T(0)),
        flush_denormals_(c.run.flush_denormals) {}

  std::string name() const override { return std::string("elastic-cpu-") + (sizeof(T) == 4 ? "fp32" : "fp64"); }

  void begin_shot(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets,
                  const std::vector<PointStencil>& receivers) override {
    for (auto& f : fields_.f) host::zero(std::span<T>(f));
    for (auto& s : fields_.slabs) host::zero(std::span<T>(s));
    sources_ = setup_.sources(sources);
    receivers_ = setup_.receivers(receivers);
    velocity_.assign(receivers.size(), false);
    for (std::size_t r = 0; r < receivers.size(); ++r)
      velocity_[r] = !receivers[r].points.empty() && receivers[r].points.front().field >= ElasticField::vz;
    wavelets_ = wavelets;
    running_ = running_sums(wavelets);
    raw_.assign(receivers.size() * std::size_t(setup_.nt), 0.0);
  }

  void advance(int n_begin, int n_end) override {
    const cpu::FlushDenormals flush(flush_denormals_);
    const ElasticStep<T> step = fields_.step(setup_);
    for (int n = n_begin; n < n_end; ++n) {
      record(n, false);
      cpu::elastic_velocity_step(step);
      inject(n, true);
      record(n, true);
      cpu::elastic_stress_step(step);
      inject(n, false);
      if (setup_.free_surface) cpu::zero_top_plane(setup_.layout, fields_.f[szz].data());  // s_zz = 0 on it
    }
  }

  std::span<const double> traces() override {
    const std::size_t nt = std::size_t(setup_.nt);
    traces_ = raw_;
    for (std::size_t r = 0; r < velocity_.size(); ++r)
      if (velocity_[r])  // the mean of v^{n-1/2} and v^{n+1/2}
        for (std::size_t n = 0; n < nt; ++n)
          traces_[r * nt + n] = 0.5 * (raw_[r * nt + n] + (n > 0 ? raw_[r * nt + n - 1] : 0.0));
    return traces_;
  }
  FieldStats field_stats() override { return host::field_stats(setup_.layout, pressure()); }
  void copy_field(std::span<float> out) override { host::copy_interior(setup_.layout, pressure(), out); }
  void copy_field(std::span<double> out) override { host::copy_interior(setup_.layout, pressure(), out); }
  void start_copy_field() override {
    host::copy_interior(setup_.layout, pressure(), held_.hold(std::size_t(setup_.layout.interior_points())));
  }
  void finish_copy_field(std::span<float> out) override { held_.take(out); }
  void finish_copy_field(std::span<double> out) override { held_.take(out); }
  std::size_t device_bytes() const override { return 0; }
  void visit_state(StateVisitor& v) override {
    static constexpr const char* names[elastic_fields] = {"s_zz", "s_yy", "s_xx", "s_zy", "s_zx",
                                                          "s_yx", "v_z",  "v_y",  "v_x"};
    for (int k = 0; k < elastic_fields; ++k) v.visit_array(names[k], fields_.f[std::size_t(k)]);
    for (std::size_t s = 0; s < fields_.slabs.size(); ++s) v.visit_array(fmt::format("cpml_{}", s), fields_.slabs[s]);
    v.visit_array("traces", raw_);
  }

 private:
  // Pressure receivers sample s^n (before the step), velocity receivers v^{n+1/2} (after the velocity update).
  void record(int n, bool velocity) {
    const std::size_t nt = std::size_t(setup_.nt);
    const std::int64_t receivers = std::int64_t(velocity_.size());
#pragma omp parallel for schedule(static) if (receivers > 64)
    for (std::int64_t r = 0; r < receivers; ++r) {
      if (velocity_[std::size_t(r)] != velocity) continue;
      double sum = 0;
      for (std::int32_t p = receivers_.offsets[std::size_t(r)]; p < receivers_.offsets[std::size_t(r) + 1]; ++p)
        sum += double(receivers_.factor[std::size_t(p)]) *
               double(fields_.f[receivers_.field[std::size_t(p)]][std::size_t(receivers_.index[std::size_t(p)])]);
      raw_[std::size_t(r) * nt + std::size_t(n)] = sum;
    }
  }
  // Forces (velocity) add factor s(t_n) to v^{n+1/2}; pressure sources factor F^n, moment tensors factor times the
  // rate at t_{n+1/2} (the mean of s(t_n) and s(t_{n+1}); s(t_n) at the last step) to s^{n+1}.
  void inject(int n, bool velocity) {
    using P = ElasticPoints<T>;
    for (std::size_t j = 0; j + 1 < sources_.offsets.size(); ++j) {
      const std::vector<double>& s = wavelets_[j];
      const std::size_t m = std::size_t(n), next = std::min(m + 1, s.size() - 1);
      for (std::int32_t p = sources_.offsets[j]; p < sources_.offsets[j + 1]; ++p) {
        const std::uint8_t kind = sources_.signal[std::size_t(p)];
        if ((kind == P::sample) != velocity) continue;
        const double signal = kind == P::sample        ? s[m]
                              : kind == P::running_sum ? running_[j][m]
                                                       : 0.5 * (s[m] + s[next]);
        fields_.f[sources_.field[std::size_t(p)]][std::size_t(sources_.index[std::size_t(p)])] +=
            sources_.factor[std::size_t(p)] * T(signal);
      }
    }
  }
  // -(s_zz + s_yy + s_xx) / 3 on the nodes (interior), into pressure_.
  const T* pressure() {
    const FieldLayout& L = setup_.layout;
    const T *zz = fields_.f[szz].data(), *yy = fields_.f[syy].data(), *xx = fields_.f[sxx].data();
    T* p = pressure_.data();
#pragma omp parallel for collapse(2)
    for (int z = 0; z < L.nz; ++z)
      for (int y = 0; y < L.ny; ++y)
        for (int x = 0; x < L.nx; ++x) {
          const index_t i = L.index(z, y, x);
          p[i] = -(zz[i] + yy[i] + xx[i]) / T(3);
        }
    return p;
  }

  ElasticSetup<T> setup_;
  ElasticFields<T> fields_;
  std::vector<T> pressure_;
  ElasticPoints<T> sources_, receivers_;
  std::vector<bool> velocity_;  // per receiver: records a velocity component
  std::vector<std::vector<double>> wavelets_, running_;
  std::vector<double> raw_, traces_;
  bool flush_denormals_;
  HeldField<T> held_;
};

}  // namespace

std::unique_ptr<Propagator> make_elastic_cpu_propagator(const Case& c, const Plan& plan) {
  if (c.run.precision == Precision::fp64) return std::make_unique<ElasticCpu<double>>(c, plan);
  return std::make_unique<ElasticCpu<float>>(c, plan);
}

}  // namespace specwave
