// FDTD on the CPU: runs kernels/cpu/fdtd_cpu on the host arrays of FdtdSetup, on the whole grid or, with a
// domain communicator, on this rank's block with a halo exchange that overlaps the interior update
// (docs/architecture.md, "Domain decomposition").
#include <fmt/format.h>
#include <omp.h>
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/fdtd_cpu.hpp"
#include "kernels/cpu/flush_denormals.hpp"
#include "solver/parallel/block_reduce.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/elastic/elastic_cpu_propagator.hpp"
#include "solver/propagators/fdtd/fdtd_cpu_propagator.hpp"
#include "solver/propagators/fdtd/fdtd_halo.hpp"
#include "solver/propagators/fdtd/fdtd_setup.hpp"
#include "solver/propagators/host_field.hpp"
#include "solver/propagators/host_halo.hpp"
#include "solver/propagators/staggered/staggered_cpu_propagator.hpp"

namespace specwave {
namespace {

template <class T>
class FdtdCpu final : public Propagator {
 public:
  FdtdCpu(const Case& c, const Plan& plan, const Comm* domain)
      : domain_(domain && domain->size() > 1 ? domain : nullptr), flush_denormals_(c.run.flush_denormals) {
    std::optional<Block> block;
    if (domain_) block = block_of(c.grid.shape, plan.process_grid, domain_->rank());
    setup_ = make_fdtd_setup<T>(c, plan, block ? &*block : nullptr);
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
    size_traces();
    if (domain_) halo_ = HostHaloExchange<T>(*domain_, halo_faces(setup_.block, setup_.layout), setup_.layout);
  }

  std::string name() const override {
    std::string n = std::string("fdtd-cpu-") + (sizeof(T) == 4 ? "fp32" : "fp64");
    if (domain_) {
      const Dims3 p = setup_.block.process_grid;
      n += fmt::format(" on {} ranks ({}x{}x{})", domain_->size(), p[0], p[1], p[2]);
    }
    return n;
  }

  void begin_shot(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets,
                  const std::vector<PointStencil>& receivers) override {
    if (setup_.set_receivers(receivers)) size_traces();
    std::fill(u_.begin(), u_.end(), T(0));
    std::fill(u_prev_.begin(), u_prev_.end(), T(0));
    for (auto& s : slabs_) std::fill(s.begin(), s.end(), T(0));
    std::fill(local_.begin(), local_.end(), 0.0);
    std::fill(parts_.begin(), parts_.end(), 0.0);
    wavelets_ = wavelets;
    // Sources in the exchanged shell are injected before the shell is sent, the others after the interior.
    split_sources(setup_.sources(sources), halo_.active() ? halo_shell(halo_.faces(), setup_.layout.halo) : Shell{},
                  setup_.layout, shell_sources_, interior_sources_);
  }

  void advance(int n_begin, int n_end) override {
    const cpu::FlushDenormals flush(flush_denormals_);
    for (int n = n_begin; n < n_end; ++n) {
      record_block(setup_.block_receivers, u_.data(), local_, parts_, setup_.nt, n);
      const FdtdStep<T> step{setup_.layout,         u_.data(),   u_prev_.data(),
                             setup_.vel2dt2.data(), setup_.coef, {setup_.pml[0], setup_.pml[1], setup_.pml[2]},
                             setup_.free_surface};
      if (!halo_.active()) {
        cpu::fdtd_step(step);
        inject(shell_sources_, n);
        inject(interior_sources_, n);
        if (setup_.free_surface) cpu::zero_top_plane(setup_.layout, u_prev_.data());
      } else {
        // The shell first (u^n's halo is in place from the last exchange), then its exchange runs while the
        // interior is updated. The top plane of a free surface is zero in u^{n-1} already, so zeroing it
        // before the interior update changes nothing there, and it is zeroed again after.
        const Shell sh = halo_shell(halo_.faces(), setup_.layout.halo);
        cpu::fdtd_step(step, StepPart::shell, sh);
        inject(shell_sources_, n);
        if (setup_.free_surface) cpu::zero_top_plane(setup_.layout, u_prev_.data());
        halo_.start(u_prev_.data());
        cpu::fdtd_step(step, StepPart::interior, sh);
        inject(interior_sources_, n);
        if (setup_.free_surface) cpu::zero_top_plane(setup_.layout, u_prev_.data());
        halo_.finish(u_prev_.data());
      }
      std::swap(u_, u_prev_);
    }
  }

  std::span<const double> traces() override {
    if (!domain_) return local_;
    traces_ = gather_block_traces(*domain_, setup_.block_receivers, local_, parts_, setup_.nt);
    return traces_;
  }

  FieldStats field_stats() override {
    const FieldStats local = host::field_stats(setup_.layout, u_.data());
    return domain_ ? reduce_field_stats(*domain_, setup_.block, local) : local;
  }

  void copy_field(std::span<float> out) override { copy_out(out); }
  void copy_field(std::span<double> out) override { copy_out(out); }
  void start_copy_field() override { copy_out(held_.hold(std::size_t(setup_.layout.interior_points()))); }
  void finish_copy_field(std::span<float> out) override { held_.take(out); }
  void finish_copy_field(std::span<double> out) override { held_.take(out); }
  std::size_t device_bytes() const override { return 0; }
  void visit_state(StateVisitor& v) override {
    v.visit_array("u", u_);
    v.visit_array("u_prev", u_prev_);
    for (std::size_t s = 0; s < slabs_.size(); ++s) v.visit_array(fmt::format("cpml_{}", s), slabs_[s]);
    v.visit_array("traces", local_);
    v.visit_array("trace_parts", parts_);
  }
  std::optional<Block> block() const override {
    if (!domain_) return std::nullopt;
    return setup_.block;
  }

 private:
  void size_traces() {
    local_.assign(setup_.receiver_keys.size() * std::size_t(setup_.nt), 0.0);
    parts_.assign(std::size_t(setup_.block_receivers.slots()) * setup_.nt, 0.0);
  }
  void inject(const PointLists<T>& src, int n) {
    // f^n: u^{n+1} += (v dt)^2 w / (dz dy dx) s(t_n)
    for (std::size_t p = 0; p < src.index.size(); ++p)
      u_prev_[src.index[p]] += src.factor[p] * T(wavelets_[src.owner[p]][n]);
  }

  template <class U>
  void copy_out(std::span<U> out) const {
    host::copy_interior(setup_.layout, u_.data(), out);
  }

  const Comm* domain_ = nullptr;
  FdtdSetup<T> setup_;
  HostHaloExchange<T> halo_;
  std::vector<T> u_, u_prev_;
  std::vector<std::vector<T>> slabs_;
  PointLists<T> shell_sources_, interior_sources_;
  std::vector<std::vector<double>> wavelets_;
  std::vector<double> local_, parts_;  // this rank's samples: whole receivers, split receivers' slots
  bool flush_denormals_;
  std::vector<double> traces_;  // every receiver, gathered (domain-decomposed runs)
  HeldField<T> held_;           // start_copy_field's copy
};

}  // namespace

std::unique_ptr<Propagator> make_fdtd_cpu_propagator(const Case& c, const Plan& plan, const Comm* domain) {
  if (c.scheme.formulation == Formulation::staggered) return make_staggered_cpu_propagator(c, plan, domain);
  if (c.scheme.formulation == Formulation::elastic) return make_elastic_cpu_propagator(c, plan, domain);
  if (c.run.precision == Precision::fp64) return std::make_unique<FdtdCpu<double>>(c, plan, domain);
  return std::make_unique<FdtdCpu<float>>(c, plan, domain);
}

}  // namespace specwave
