// The staggered velocity-pressure scheme on the CPU (docs/numerics.md, "Variable density"): kernels/cpu/staggered_cpu
// on the arrays of StaggeredSetup, on the whole grid or, with a domain communicator, on this rank's block: u's halo
// exchanged before the velocity step and each w_a's along axis a before the pressure step (R planes each), so that
// every node and half node is computed by the same arithmetic as on one rank (bitwise the same run).
#include "solver/propagators/staggered/staggered_cpu_propagator.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "kernels/cpu/fdtd_cpu.hpp"
#include "kernels/cpu/flush_denormals.hpp"
#include "solver/parallel/block_reduce.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/host_field.hpp"
#include "solver/propagators/host_halo.hpp"
#include "solver/propagators/staggered/staggered_setup.hpp"

namespace specwave {
namespace {

template <class T>
class StaggeredCpu final : public Propagator {
 public:
  StaggeredCpu(const Case& c, const Plan& plan, const Comm* domain)
      : domain_(domain && domain->size() > 1 ? domain : nullptr),
        setup_(setup_of(c, plan, domain_)),
        fields_(setup_),
        flush_denormals_(c.run.flush_denormals) {
    size_traces();
    if (domain_) {
      const int R = c.scheme.order / 2;
      u_halo_ = HostHaloExchange<T>(*domain_, halo_faces(setup_.block, setup_.layout, R), setup_.layout);
      std::vector<HaloFace> w_faces;
      for (int a = 0; a < 3; ++a)
        for (const HaloFace& f : halo_faces(setup_.block, setup_.layout, R, a)) w_faces.push_back(f);
      w_halo_ = HostHaloExchange<T>(*domain_, std::move(w_faces), setup_.layout);
    }
  }

  std::string name() const override {
    std::string n = std::string(fields_.memory.empty() ? "staggered-cpu-" : "visco-staggered-cpu-") +
                    (sizeof(T) == 4 ? "fp32" : "fp64");
    if (domain_) {
      const Dims3 p = setup_.block.process_grid;
      n += fmt::format(" on {} ranks ({}x{}x{})", domain_->size(), p[0], p[1], p[2]);
    }
    return n;
  }

  void begin_shot(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets,
                  const std::vector<PointStencil>& receivers) override {
    if (setup_.set_receivers(receivers)) size_traces();
    for (std::vector<T>* v : fields_.arrays()) host::zero(std::span<T>(*v));
    std::fill(local_.begin(), local_.end(), 0.0);
    std::fill(parts_.begin(), parts_.end(), 0.0);
    running_ = running_sums(wavelets);
    sources_ = setup_.sources(sources);
  }

  void advance(int n_begin, int n_end) override {
    const cpu::FlushDenormals flush(flush_denormals_);
    const StaggeredStep<T> step = fields_.step(setup_);
    for (int n = n_begin; n < n_end; ++n) {
      record_block(setup_.block_receivers, u(), local_, parts_, setup_.nt, n);
      if (u_halo_.active()) {
        u_halo_.start(u());
        u_halo_.finish(u());
      }
      cpu::staggered_velocity_step(step);
      if (w_halo_.active()) {
        const auto w_of = [&](const HaloFace& f) { return fields_.w[std::size_t(f.axis)].data(); };
        w_halo_.start_fields(w_of);
        w_halo_.finish_fields(w_of);
      }
      cpu::staggered_pressure_step(step);
      for (std::size_t p = 0; p < sources_.index.size(); ++p)
        u()[sources_.index[p]] += sources_.factor[p] * T(running_[sources_.owner[p]][n]);
      if (setup_.free_surface) cpu::zero_top_plane(setup_.layout, u());
    }
  }

  std::span<const double> traces() override {
    if (!domain_) return local_;
    traces_ = gather_block_traces(*domain_, setup_.block_receivers, local_, parts_, setup_.nt);
    return traces_;
  }
  FieldStats field_stats() override {
    const FieldStats local = host::field_stats(setup_.layout, u());
    return domain_ ? reduce_field_stats(*domain_, setup_.block, local) : local;
  }
  void copy_field(std::span<float> out) override { host::copy_interior(setup_.layout, u(), out); }
  void copy_field(std::span<double> out) override { host::copy_interior(setup_.layout, u(), out); }
  void start_copy_field() override {
    host::copy_interior(setup_.layout, u(), held_.hold(std::size_t(setup_.layout.interior_points())));
  }
  void finish_copy_field(std::span<float> out) override { held_.take(out); }
  void finish_copy_field(std::span<double> out) override { held_.take(out); }
  std::size_t device_bytes() const override { return 0; }
  void visit_state(StateVisitor& v) override {
    v.visit_array("u", fields_.u);
    for (int a = 0; a < 3; ++a) v.visit_array(fmt::format("w_{}", "zyx"[a]), fields_.w[a]);
    for (std::size_t s = 0; s < fields_.slabs.size(); ++s) v.visit_array(fmt::format("cpml_{}", s), fields_.slabs[s]);
    for (std::size_t l = 0; l < fields_.memory.size(); ++l) v.visit_array(fmt::format("sls_{}", l), fields_.memory[l]);
    v.visit_array("traces", local_);
    v.visit_array("trace_parts", parts_);
  }
  std::optional<Block> block() const override {
    if (!domain_) return std::nullopt;
    return setup_.block;
  }

 private:
  T* u() { return fields_.u.data(); }
  // The whole grid, or this rank's block of plan.process_grid.
  static StaggeredSetup<T> setup_of(const Case& c, const Plan& plan, const Comm* domain) {
    if (!domain) return make_staggered_setup<T>(c, plan);
    const Block block = block_of(c.grid.shape, plan.process_grid, domain->rank());
    return make_staggered_setup<T>(c, plan, &block);
  }
  void size_traces() {
    local_.assign(setup_.receiver_keys.size() * std::size_t(setup_.nt), 0.0);
    parts_.assign(std::size_t(setup_.block_receivers.slots()) * setup_.nt, 0.0);
  }

  const Comm* domain_ = nullptr;
  StaggeredSetup<T> setup_;
  StaggeredFields<T> fields_;
  HostHaloExchange<T> u_halo_, w_halo_;
  PointLists<T> sources_;
  std::vector<std::vector<double>> running_;
  std::vector<double> local_, parts_;  // this rank's samples: whole receivers, split receivers' slots
  std::vector<double> traces_;         // every receiver, gathered (domain-decomposed runs)
  bool flush_denormals_;
  HeldField<T> held_;
};

}  // namespace

std::unique_ptr<Propagator> make_staggered_cpu_propagator(const Case& c, const Plan& plan, const Comm* domain) {
  if (c.run.precision == Precision::fp64) return std::make_unique<StaggeredCpu<double>>(c, plan, domain);
  return std::make_unique<StaggeredCpu<float>>(c, plan, domain);
}

}  // namespace specwave
