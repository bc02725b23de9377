// The elastic velocity-stress scheme on the CPU: kernels/cpu/elastic_cpu on the arrays of ElasticSetup, on the whole
// grid or, with a domain communicator, on this rank's block. Step n records the pressure receivers (s^n), exchanges the
// stresses' halos, updates the velocities, adds the forces, records the velocity receivers (v^{n+1/2}), exchanges the
// velocities' halos, updates the stresses and adds the pressure and moment sources; a velocity trace's sample n is
// (v^{n-1/2} + v^{n+1/2}) / 2. Each field's halo is exchanged along each axis a derivative reads it (R planes beyond a
// shared face, over the field's computed range along the other axes), so that every point is computed by the same
// arithmetic as on one rank: the decomposed run is bitwise the single-rank run.
#include "solver/propagators/elastic/elastic_cpu_propagator.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "kernels/cpu/elastic_cpu.hpp"
#include "kernels/cpu/fdtd_cpu.hpp"
#include "kernels/cpu/flush_denormals.hpp"
#include "solver/parallel/block_reduce.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/elastic/elastic_setup.hpp"
#include "solver/propagators/fdtd/fdtd_halo.hpp"
#include "solver/propagators/host_field.hpp"
#include "solver/propagators/host_halo.hpp"
#include "solver/propagators/staggered/staggered_setup.hpp"

namespace specwave {
namespace {

// The faces of field f's halo along axis a on this block: R planes beyond each face shared with a neighbour, over the
// field's computed range along the other two axes.
template <class T>
std::vector<HaloFace> field_faces(const Block& block, const ElasticStep<T>& step, int f, int a, int R) {
  std::vector<HaloFace> faces = halo_faces(block, step.layout, R, a);
  for (HaloFace& h : faces)
    for (int b = 0; b < 3; ++b) {
      if (b == a) continue;
      h.send.lo[b] = h.receive.lo[b] = step.lo(f, b);
      h.send.extent[b] = h.receive.extent[b] = step.hi(f, b) - step.lo(f, b);
    }
  return faces;
}

template <class T>
class ElasticCpu final : public Propagator {
 public:
  ElasticCpu(const Case& c, const Plan& plan, const Comm* domain)
      : domain_(domain && domain->size() > 1 ? domain : nullptr),
        setup_(setup_of(c, plan, domain_)),
        fields_(setup_),
        pressure_(std::size_t(setup_.layout.size()), T(0)),
        flush_denormals_(c.run.flush_denormals) {
    if (domain_) {
      // Each (field, axis) a step's derivatives read (kernels/elastic_step.hpp's terms: 0..8 the velocity update's,
      // reading the stresses; 9..17 the stress update's, reading the velocities), once.
      const ElasticStep<T> step = fields_.step(setup_);
      const int R = c.scheme.order / 2;
      for (int t = 0; t < elastic_terms; ++t) {
        const ElasticTerm& term = elastic_term[t];
        std::vector<Halo>& halos = t < elastic_terms / 2 ? stress_halos_ : velocity_halos_;
        const bool seen = std::any_of(halos.begin(), halos.end(),
                                      [&](const Halo& h) { return h.field == term.source && h.axis == term.axis; });
        std::vector<HaloFace> faces = field_faces(setup_.block, step, term.source, term.axis, R);
        if (!seen && !faces.empty())
          halos.push_back({term.source, term.axis, HostHaloExchange<T>(*domain_, std::move(faces), setup_.layout)});
      }
    }
  }

  std::string name() const override {
    std::string n = std::string("elastic-cpu-") + (sizeof(T) == 4 ? "fp32" : "fp64");
    if (domain_) {
      const Dims3 p = setup_.block.process_grid;
      n += fmt::format(" on {} ranks ({}x{}x{})", domain_->size(), p[0], p[1], p[2]);
    }
    return n;
  }

  void begin_shot(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets,
                  const std::vector<PointStencil>& receivers) override {
    host::zero(std::span<T>(fields_.all));
    for (auto& s : fields_.slabs) host::zero(std::span<T>(s));
    sources_ = setup_.sources(sources);
    // The pressure receivers and the velocity receivers, each list recorded at its own time of the step.
    std::vector<PointStencil> lists[2];
    split_elastic_receivers(receivers, lists, velocity_, row_);
    for (int k = 0; k < 2; ++k) {
      receivers_[k] = make_block_receivers<T>(setup_.layout, lists[k], setup_.block);
      samples_[k].assign(lists[k].size() * std::size_t(setup_.nt), 0.0);
      parts_[k].assign(std::size_t(receivers_[k].slots()) * setup_.nt, 0.0);
    }
    wavelets_ = wavelets;
    running_ = running_sums(wavelets);
  }

  void advance(int n_begin, int n_end) override {
    const cpu::FlushDenormals flush(flush_denormals_);
    const ElasticStep<T> step = fields_.step(setup_);
    const T* all = fields_.all.data();
    for (int n = n_begin; n < n_end; ++n) {
      record_block(receivers_[0], all, samples_[0], parts_[0], setup_.nt, n);
      exchange(stress_halos_);
      cpu::elastic_velocity_step(step);
      inject(n, true);
      record_block(receivers_[1], all, samples_[1], parts_[1], setup_.nt, n);
      exchange(velocity_halos_);
      cpu::elastic_stress_step(step);
      inject(n, false);
      if (setup_.free_surface) cpu::zero_top_plane(setup_.layout, fields_.f[szz].data());  // s_zz = 0 on it
    }
  }

  std::span<const double> traces() override {
    std::vector<double> gathered[2];
    for (int k = 0; k < 2; ++k)
      gathered[k] =
          domain_ ? gather_block_traces(*domain_, receivers_[k], samples_[k], parts_[k], setup_.nt) : samples_[k];
    elastic_traces(velocity_, row_, gathered[0], gathered[1], setup_.nt, traces_);
    return traces_;
  }
  FieldStats field_stats() override {
    const FieldStats local = host::field_stats(setup_.layout, pressure());
    return domain_ ? reduce_field_stats(*domain_, setup_.block, local) : local;
  }
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
    const std::vector<std::string> slab_names = elastic_slab_names(setup_);
    for (std::size_t s = 0; s < fields_.slabs.size(); ++s) v.visit_array(slab_names[s], fields_.slabs[s]);
    v.visit_array("traces_p", samples_[0]);
    v.visit_array("trace_parts_p", parts_[0]);
    v.visit_array("traces_v", samples_[1]);
    v.visit_array("trace_parts_v", parts_[1]);
  }
  std::optional<Block> block() const override {
    if (!domain_) return std::nullopt;
    return setup_.block;
  }

 private:
  struct Halo {
    int field, axis;
    HostHaloExchange<T> exchange;
  };

  static ElasticSetup<T> setup_of(const Case& c, const Plan& plan, const Comm* domain) {
    if (!domain) return make_elastic_setup<T>(c, plan);
    const Block block = block_of(c.grid.shape, plan.process_grid, domain->rank());
    return make_elastic_setup<T>(c, plan, &block);
  }
  // One field and axis at a time (the faces' tags repeat from one to the next).
  void exchange(std::vector<Halo>& halos) {
    for (Halo& h : halos) {
      T* f = fields_.f[std::size_t(h.field)].data();
      h.exchange.start(f);
      h.exchange.finish(f);
    }
  }
  // Forces (velocity) add factor s(t_n) to v^{n+1/2}; pressure sources factor F^n, moment tensors factor times the
  // rate at t_{n+1/2} (the mean of s(t_n) and s(t_{n+1}); s(t_n) at the last step) to s^{n+1}.
  void inject(int n, bool velocity) {
    using P = ElasticPoints<T>;
    for (std::size_t j = 0; j + 1 < sources_.offsets.size(); ++j)
      for (std::int32_t p = sources_.offsets[j]; p < sources_.offsets[j + 1]; ++p) {
        const std::uint8_t kind = sources_.signal[std::size_t(p)];
        if ((kind == P::sample) != velocity) continue;
        const double signal = elastic_signal(kind, wavelets_[j], running_[j], n);
        fields_.f[sources_.field[std::size_t(p)]][std::size_t(sources_.index[std::size_t(p)])] +=
            sources_.factor[std::size_t(p)] * T(signal);
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

  const Comm* domain_ = nullptr;
  ElasticSetup<T> setup_;
  ElasticFields<T> fields_;
  std::vector<T> pressure_;
  std::vector<Halo> stress_halos_, velocity_halos_;
  ElasticPoints<T> sources_;
  BlockReceivers<T> receivers_[2];  // the pressure receivers, the velocity receivers
  std::vector<double> samples_[2], parts_[2];
  std::vector<bool> velocity_;    // per receiver: records a velocity component
  std::vector<std::size_t> row_;  // per receiver: its row in its list
  std::vector<std::vector<double>> wavelets_, running_;
  std::vector<double> traces_;
  bool flush_denormals_;
  HeldField<T> held_;
};

}  // namespace

std::unique_ptr<Propagator> make_elastic_cpu_propagator(const Case& c, const Plan& plan, const Comm* domain) {
  if (c.run.precision == Precision::fp64) return std::make_unique<ElasticCpu<double>>(c, plan, domain);
  return std::make_unique<ElasticCpu<float>>(c, plan, domain);
}

}  // namespace specwave
