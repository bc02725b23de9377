// The elastic scheme's forward, Born and adjoint operators on the CPU (docs/numerics.md, "The elastic adjoint"): the
// gradient with respect to m_p = (vp dt)^2, m_s = (vs dt)^2 and the density, each at fixed others, from the exact
// transpose of the discrete step (kernels/cpu/elastic_adjoint_cpu.cpp). The step's coefficients are dt lambda =
// rho (m_p - 2 m_s) / dt and 2 dt mu = 2 rho m_s / dt on the nodes, dt mu_e = dt 4 / sum 1/mu over an edge's four
// nodes (mu = rho m_s / dt^2) and dt b = 2 dt / (rho_0 + rho_1) on the velocities' points; what a coefficient
// multiplies at step n (the step's increment over it: a velocity's stress divergence, the strain rates) is the
// history's field, and dJ/d(coefficient) = sum_n (the updated field's adjoint) x (that increment). The sources'
// factors: a pressure source's -m_p rho / rho_s w / V, a force's dt b w / V. One rank (the decomposed gradient is the
// acoustic FDTD's).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "kernels/cpu/elastic_cpu.hpp"
#include "kernels/cpu/fdtd_cpu.hpp"
#include "kernels/cpu/flush_denormals.hpp"
#include "kernels/elastic_adjoint_kernels.hpp"
#include "solver/case/errors.hpp"
#include "solver/forward/progress.hpp"
#include "solver/plan/model.hpp"
#include "solver/plan/plan.hpp"
#include "solver/plan/shot_receivers.hpp"
#include "solver/propagators/elastic/elastic_gradient_model.hpp"
#include "solver/propagators/gradient_propagator.hpp"
#include "solver/propagators/history/wavefield_history.hpp"
#include "solver/propagators/host_field.hpp"
#include "solver/propagators/point_lists.hpp"
#include "solver/propagators/staggered/staggered_setup.hpp"

namespace specwave {
namespace {

template <class T>
class ElasticCpuGradient final : public ElasticGradientModel<T>, private ForwardStepper<T> {
  using Model = ElasticGradientModel<T>;
  using Model::case_, Model::dt_, Model::flush_denormals_, Model::setup_, Model::wavelets_, Model::rows_,
      Model::packed_values_, Model::lists_, Model::list_receivers_, Model::velocity_, Model::sources_, Model::running_,
      Model::vp_gradient_, Model::density_gradient_, Model::shot_, Model::row_;
  using typename Model::Perturbation, typename Model::Row;

 public:
  ElasticCpuGradient(const Case& c, const Plan& plan, const HistoryChoice& history)
      : Model(c, plan), state_(setup_), history_(make_history<T>(history)) {
    increments_.assign(elastic_fields * std::size_t(setup_.layout.size()), T(0));
  }

  std::string name() const override { return std::string("elastic-cpu-") + (sizeof(T) == 4 ? "fp32" : "fp64"); }
  std::string history_name() const override { return history_->name(); }
  std::size_t history_bytes() const override { return history_->bytes(); }
  long long history_forward_steps() const override { return history_->forward_steps(); }

  std::vector<double> forward(int shot, bool keep_history) override {
    const cpu::FlushDenormals flush(flush_denormals_);
    begin_shot(shot);
    if (keep_history) {
      illumination_.assign(std::size_t(setup_.layout.interior_points()), 0.0);
      accumulate_illumination_ = true;
      history_->run_forward(*this, setup_.nt);
      accumulate_illumination_ = false;
      history_shot_ = shot;
    } else {
      for (int n = 0; n < setup_.nt; ++n) step(n);
    }
    return traces();
  }

  // Backwards from rest at nt, for n = nt - 1 .. 0, the transpose of step n's parts in reverse order: s_zz = 0 on a
  // free surface; the stress sources' images; the stress images and the stress step's transpose; the velocity
  // receivers' adjoint sources; the forces' images; the velocity images and the velocity step's transpose; the
  // pressure receivers' adjoint sources.
  void adjoint(std::span<const double> residual, std::span<double> gradient, std::span<double> illumination) override {
    const FieldLayout& L = setup_.layout;
    const int nt = setup_.nt;
    const std::size_t points = setup_.vp.size();
    check_adjoint_arguments(history_shot_ >= 0, std::size_t(n_receivers()) * std::size_t(nt), points, residual.size(),
                            gradient.size(), illumination.size());
    const cpu::FlushDenormals flush(flush_denormals_);
    Adjoint& a = adjoint_fields();
    const ElasticStep<T> s = a.fields.step(setup_);
    const std::array<std::vector<double>, 2> adjoint_sources = this->list_adjoint_sources(residual);
    std::vector<double> source_image(sources_.index.size(), 0.0);
    ReverseFields<T> fields(*history_, *this, field_values());
    shot_step(ShotPass::adjoint, 0, nt);  // the adjoint pass begins (replays count as its)
    for (int n = nt - 1; n >= 0; --n) {
      const T* inc = fields.one(n + 1);  // field n + 1: what step n's coefficients multiplied (packed)
      if (setup_.free_surface) cpu::zero_top_plane(L, s.f[szz]);
      source_images(s, n, false, source_image);
      stress_images(s, inc, a.images);
      cpu::elastic_stress_adjoint(s, a.scratch.data());
      inject_adjoint(1, adjoint_sources[1], n, a.fields.all.data());
      source_images(s, n, true, source_image);
      for (int c = 0; c < 3; ++c) add_product(a.images.bdt[std::size_t(c)], s.f[vz + c], inc, vz + c);
      cpu::elastic_velocity_adjoint(s, a.scratch.data());
      inject_adjoint(0, adjoint_sources[0], n, a.fields.all.data());
      shot_step(ShotPass::adjoint, nt - n, nt);
    }
    (void)fields.one(0);
    this->assemble_gradient(a.images, source_image);
    for (std::size_t k = 0; k < points; ++k) gradient[k] += vp_gradient_[k];
    if (!illumination.empty())
      for (std::size_t k = 0; k < points; ++k) illumination[k] += illumination_[k];
  }

 private:
  struct Adjoint {
    explicit Adjoint(const ElasticSetup<T>& s)
        : fields(s), scratch(std::size_t(s.layout.size()), T(0)), images(std::size_t(s.layout.size())) {}
    ElasticFields<T> fields;
    std::vector<T> scratch;
    ElasticImages images;
  };
  Adjoint& adjoint_fields() {
    if (!adjoint_) adjoint_ = std::make_unique<Adjoint>(setup_);
    host::zero(std::span<T>(adjoint_->fields.all));
    for (auto& v : adjoint_->fields.slabs) host::zero(std::span<T>(v));
    adjoint_->images.zero();
    return *adjoint_;
  }

  int n_receivers() const { return int(velocity_.size()); }
  std::vector<double> traces() const { return this->traces_of(raw_[0], raw_[1]); }
  void begin_shot(int shot) {
    host::zero(std::span<T>(state_.all));
    for (auto& v : state_.slabs) host::zero(std::span<T>(v));
    std::fill(increments_.begin(), increments_.end(), T(0));
    this->begin_shot_lists(shot);
    for (int k = 0; k < 2; ++k) raw_[k].assign(list_receivers_[k] * std::size_t(setup_.nt), 0.0);
    history_shot_ = -1;
  }
  // Adds list k's adjoint source at step n (`rows`: its rows, list_adjoint_sources) to the adjoint fields.
  void inject_adjoint(int k, const std::vector<double>& rows, int n, T* all) const {
    const PointLists<T>& p = lists_[k].whole;
    const std::size_t nt = std::size_t(setup_.nt);
    for (std::size_t row = 0; row + 1 < p.offsets.size(); ++row) {
      const T value = T(rows[row * nt + std::size_t(n)]);
      for (std::int32_t q = p.offsets[row]; q < p.offsets[row + 1]; ++q) all[p.index[q]] += p.factor[q] * value;
    }
  }

  // The background's halves of step n (kept increments into increments_).
  ElasticStep<T> background() {
    ElasticStep<T> s = state_.step(setup_);
    const std::size_t size = std::size_t(setup_.layout.size());
    for (int f = 0; f < elastic_fields; ++f) s.increment_out[f] = increments_.data() + f * size;
    return s;
  }
  void inject(ElasticFields<T>& fields, const std::vector<T>& factor, int n, bool velocity) const {
    using P = ElasticPoints<T>;
    for (std::size_t j = 0; j + 1 < sources_.offsets.size(); ++j)
      for (std::int32_t p = sources_.offsets[j]; p < sources_.offsets[j + 1]; ++p) {
        const std::uint8_t kind = sources_.signal[std::size_t(p)];
        if ((kind == P::sample) != velocity) continue;
        fields.f[sources_.field[std::size_t(p)]][std::size_t(sources_.index[std::size_t(p)])] +=
            factor[std::size_t(p)] * T(elastic_signal(kind, wavelets_[std::size_t(shot_)][j], running_[j], n));
      }
  }
  void record(int k, const ElasticFields<T>& fields, std::vector<double>& raw, int n) const {
    std::vector<double> parts;  // (one rank: every receiver whole)
    record_block(lists_[k], fields.all.data(), raw, parts, setup_.nt, n);
  }

  // ForwardStepper: the state is the fields and the CPML memory; the last step's increments (the history's field) lie
  // beside it (a step writes all of them on the computed ranges and reads none), so a checkpoint keeps them packed
  // and a restore that is followed by stepping copies only the state.
  bool field_beside_state() const override { return true; }
  std::size_t state_values() const override {
    std::size_t n = state_.all.size();
    for (const auto& v : state_.slabs) n += v.size();
    return n;
  }
  void save_state(std::span<T> out) const override {
    auto it = std::copy(state_.all.begin(), state_.all.end(), out.begin());
    for (const auto& v : state_.slabs) it = std::copy(v.begin(), v.end(), it);
  }
  void restore_state(std::span<const T> in) override {
    auto it = in.begin();
    const auto take = [&](std::vector<T>& v) {
      std::copy(it, it + std::ptrdiff_t(v.size()), v.begin());
      it += std::ptrdiff_t(v.size());
    };
    take(state_.all);
    for (auto& v : state_.slabs) take(v);
  }
  // The history's field: the increments on each field's computed range, packed (row by row, field after field).
  std::size_t field_values() const override { return packed_values_; }
  void copy_field(std::span<T> out) const override {
    const std::size_t size = std::size_t(setup_.layout.size());
    for (int f = 0; f < elastic_fields; ++f) {
      const std::vector<Row>& rows = rows_[f];
      const T* in = increments_.data() + f * size;
#pragma omp parallel for schedule(static)
      for (std::size_t r = 0; r < rows.size(); ++r) std::copy_n(in + rows[r].i, rows[r].n, out.data() + rows[r].p);
    }
  }
  // After the background's step n: its progress, and `forward`'s checks on its pressure (forward_step; the pressure
  // as the forward propagator forms it, in T).
  void step_done(int n) {
    forward_step(n + 1, setup_.nt, [&] {
      const T *zz = state_.f[szz].data(), *yy = state_.f[syy].data(), *xx = state_.f[sxx].data();
      return host::field_stats_of(setup_.layout, [&](index_t i) { return double(-(zz[i] + yy[i] + xx[i]) / T(3)); });
    });
  }
  void step(int n) override {
    record(0, state_, raw_[0], n);
    if (accumulate_illumination_) add_illumination();
    const ElasticStep<T> s = background();
    cpu::elastic_velocity_step(s);
    inject(state_, sources_.factor, n, true);
    record(1, state_, raw_[1], n);
    cpu::elastic_stress_step(s);
    inject(state_, sources_.factor, n, false);
    if (setup_.free_surface) cpu::zero_top_plane(setup_.layout, state_.f[szz].data());
    step_done(n);
  }
  // illumination += p^2 with p = -(s_zz + s_yy + s_xx) / 3 (the preconditioner's source-side illumination).
  void add_illumination() {
    const FieldLayout& L = setup_.layout;
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < L.nz; ++z)
      for (int y = 0; y < L.ny; ++y)
        for (int x = 0; x < L.nx; ++x) {
          const index_t i = L.index(z, y, x);
          const double p = (double(state_.f[szz][i]) + state_.f[syy][i] + state_.f[sxx][i]) / 3;
          illumination_[(std::size_t(z) * L.ny + y) * L.nx + x] += p * p;
        }
  }

  // The Born run: the perturbation's fields du stepped with the background's coefficients, in lockstep with the
  // background, each half adding the perturbed coefficients times the background's increments, and the sources'
  // perturbed factors; the traces of du.
  std::vector<double> born_run(int shot, std::span<const double> dmp, std::span<const double> dms,
                               std::span<const double> drho) override {
    const FieldLayout& L = setup_.layout;
    const cpu::FlushDenormals flush(flush_denormals_);
    begin_shot(shot);
    const Perturbation p = this->perturbation(dmp, dms, drho);
    ElasticFields<T> du(setup_);
    const ElasticStep<T> ds = du.step(setup_);
    std::vector<double> raw[2] = {raw_[0], raw_[1]};
    const std::size_t size = std::size_t(L.size());
    const T* inc = increments_.data();
    for (int n = 0; n < setup_.nt; ++n) {
      record(0, du, raw[0], n);
      const ElasticStep<T> s = background();
      cpu::elastic_velocity_step(s);
      inject(state_, sources_.factor, n, true);
      cpu::elastic_velocity_step(ds);
      for (int c = 0; c < 3; ++c)
        add_scaled(du.f[std::size_t(vz + c)].data(), p.bdt[std::size_t(c)], inc + (vz + c) * size);
      inject(du, p.factor, n, true);
      record(1, du, raw[1], n);
      cpu::elastic_stress_step(s);
      inject(state_, sources_.factor, n, false);
      cpu::elastic_stress_step(ds);
      scatter_stress(du, p, inc);
      inject(du, p.factor, n, false);
      if (setup_.free_surface) {
        cpu::zero_top_plane(L, state_.f[szz].data());
        cpu::zero_top_plane(L, du.f[szz].data());
      }
      step_done(n);
    }
    std::vector<double> out;
    elastic_traces(velocity_, row_, raw[0], raw[1], setup_.nt, out);
    return out;
  }
  // du_s += d(lam) (e_z + e_y + e_x) + d(mu2) e_a on the nodes (on a free surface, where e_z = -r (e_y + e_x) with
  // r = lam / (lam + mu2): s_yy, s_xx += d(L) (e_y + e_x) + d(mu2) e_a, L = lam mu2 / (lam + mu2)), du_ab += d(mu_ab)
  // (D_b v_a + D_a v_b).
  void scatter_stress(ElasticFields<T>& du, const Perturbation& p, const T* inc) const {
    const std::size_t size = std::size_t(setup_.layout.size());
    const T *ez = inc + szz * size, *ey = inc + syy * size, *ex = inc + sxx * size;
    this->for_nodes([&](std::size_t, index_t i, int z) {
      const std::size_t u = std::size_t(i);
      elastic_adjoint_kernels::scatter_normal_stress(&du.f[szz][u], &du.f[syy][u], &du.f[sxx][u], p.lam[u], p.mu2[u],
                                                     ez[u], ey[u], ex[u], setup_.lamdt[u], setup_.mu2dt[u],
                                                     z == 0 && setup_.free_surface);
    });
    for (int c = 0; c < 3; ++c)
      add_scaled(du.f[std::size_t(szy + c)].data(), p.mudt[std::size_t(c)], inc + (szy + c) * size);
  }

  // The stress step's images at step n: lam's (sum of the normal stresses' adjoints) x (e_z + e_y + e_x), mu2's
  // sum_a s_aa-bar e_a (on a free surface, the derivatives of L = lam mu2 / (lam + mu2) and of mu2 e_a), and each
  // shear stress's s-bar x (D_b v_a + D_a v_b).
  void stress_images(const ElasticStep<T>& a, const T* inc, ElasticImages& images) const {
    const T *sz = a.f[szz], *sy = a.f[syy], *sx = a.f[sxx];
    const std::vector<Row>& rows = rows_[szz];  // (the three normal stresses' rows are the same)
#pragma omp parallel for schedule(static)
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const std::size_t i0 = rows[r].i;
      const T *ez = inc + rows[r].p, *ey = inc + rows_[syy][r].p, *ex = inc + rows_[sxx][r].p;
      double *lam_image = images.lam.data() + i0, *mu2_image = images.mu2.data() + i0;
      const bool surface = rows[r].z == 0 && setup_.free_surface;
      const T *lam = setup_.lamdt.data() + i0, *mu2 = setup_.mu2dt.data() + i0;
#pragma omp simd
      for (int x = 0; x < rows[r].n; ++x) {
        const std::size_t u = i0 + std::size_t(x);
        elastic_adjoint_kernels::normal_stress_images(sz[u], sy[u], sx[u], ez[x], ey[x], ex[x], lam[x], mu2[x], surface,
                                                      lam_image[x], mu2_image[x]);
      }
    }
    for (int c = 0; c < 3; ++c) add_product(images.mudt[std::size_t(c)], a.f[szy + c], inc, szy + c);
  }
  // The sources' images at step n (velocity: the forces; else the stress sources): each point's adjoint x factor x
  // signal, into `image` (per point).
  void source_images(const ElasticStep<T>& a, int n, bool velocity, std::vector<double>& image) const {
    using P = ElasticPoints<T>;
    for (std::size_t j = 0; j + 1 < sources_.offsets.size(); ++j)
      for (std::int32_t q = sources_.offsets[j]; q < sources_.offsets[j + 1]; ++q) {
        const std::size_t e = std::size_t(q);
        const std::uint8_t kind = sources_.signal[e];
        if ((kind == P::sample) != velocity || kind == P::midpoint) continue;
        image[e] += double(a.f[sources_.field[e]][sources_.index[e]]) * double(sources_.factor[e]) *
                    elastic_signal(kind, wavelets_[std::size_t(shot_)][j], running_[j], n);
      }
  }

  // out += a x b over field f's computed range, b packed (the history's field).
  void add_product(std::vector<double>& out, const T* a, const T* packed, int f) const {
    const std::vector<Row>& rows = rows_[f];
#pragma omp parallel for schedule(static)
    for (std::size_t r = 0; r < rows.size(); ++r) {
      double* o = out.data() + rows[r].i;
      const T *aa = a + rows[r].i, *b = packed + rows[r].p;
#pragma omp simd
      for (int x = 0; x < rows[r].n; ++x) o[x] += double(aa[x]) * double(b[x]);
    }
  }
  // out += c x b over the padded points.
  static void add_scaled(T* out, const std::vector<T>& c, const T* b) {
    const std::size_t size = c.size();
    const T* cc = c.data();
#pragma omp parallel for simd schedule(static)
    for (std::size_t i = 0; i < size; ++i) out[i] += cc[i] * b[i];
  }

  ElasticFields<T> state_;
  std::vector<T> increments_;  // the last step's, per field (padded, one after another): the history's field
  std::unique_ptr<WavefieldHistory<T>> history_;
  std::vector<double> raw_[2];
  std::vector<double> illumination_;
  bool accumulate_illumination_ = false;
  int history_shot_ = -1;
  std::unique_ptr<Adjoint> adjoint_;
};

}  // namespace

std::unique_ptr<GradientPropagator> make_elastic_cpu_gradient(const Case& c, const Plan& plan,
                                                              const HistoryChoice& history) {
  if (c.run.precision == Precision::fp64) return std::make_unique<ElasticCpuGradient<double>>(c, plan, history);
  return std::make_unique<ElasticCpuGradient<float>>(c, plan, history);
}

}  // namespace specwave
