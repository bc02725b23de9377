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
#include "solver/propagators/elastic/elastic_setup.hpp"
#include "solver/propagators/gradient_propagator.hpp"
#include "solver/propagators/history/wavefield_history.hpp"
#include "solver/propagators/host_field.hpp"
#include "solver/propagators/point_lists.hpp"
#include "solver/propagators/staggered/staggered_setup.hpp"

namespace specwave {
namespace {

// d(dt mu_e) / d(mu) of an edge's four corner slots (ElasticSetup::edge_nodes; a node can fill several at the grid's
// faces): dt H^2 / (4 mu_j^2) with H = 4 / sum 1/mu; next to a fluid, where H = 0, the one-sided derivative: 4 dt / z
// spread over the z fluid slots when they are all one node (H = 4 mu / z as it leaves 0), else 0.
std::array<double, 4> edge_derivative(const std::array<double, 4>& mu, const std::array<std::size_t, 4>& node,
                                      double dt) {
  std::array<double, 4> d{};
  int zeros = 0;
  double inverse = 0;
  for (int j = 0; j < 4; ++j) zeros += mu[std::size_t(j)] == 0, inverse += mu[std::size_t(j)] == 0 ? 0 : 1 / mu[j];
  if (zeros == 0) {
    const double h = 4 / inverse;
    for (std::size_t j = 0; j < 4; ++j) d[j] = dt * h * h / (4 * mu[j] * mu[j]);
    return d;
  }
  std::size_t first = 4;
  for (std::size_t j = 0; j < 4; ++j)
    if (mu[j] == 0) {
      if (first < 4 && node[j] != node[first]) return {};
      if (first == 4) first = j;
    }
  for (std::size_t j = 0; j < 4; ++j)
    if (mu[j] == 0) d[j] = 4 * dt / (double(zeros) * zeros);
  return d;
}

template <class T>
class ElasticCpuGradient final : public GradientPropagator, private ForwardStepper<T> {
 public:
  ElasticCpuGradient(const Case& c, const Plan& plan, const HistoryChoice& history)
      : case_(c),
        dt_(plan.dt),
        v_limit_(plan.v_reference / plan.cfl),
        speedup_(plan.unrelaxed_speedup),
        flush_denormals_(c.run.flush_denormals),
        source_stencils_(plan.sources),
        wavelets_(plan.wavelets),
        setup_(make_elastic_setup<T>(c, plan)),
        state_(setup_),
        history_(make_history<T>(history)),
        receivers_(c, plan),
        shared_receivers_(plan.receivers) {
    increments_.assign(elastic_fields * std::size_t(setup_.layout.size()), T(0));
    // The rows of every field's computed range, in the packed order.
    const ElasticStep<T> s = setup_.step();
    for (int f = 0; f < elastic_fields; ++f)
      for (int z = s.lo(f, 0); z < s.hi(f, 0); ++z)
        for (int y = s.lo(f, 1); y < s.hi(f, 1); ++y) {
          const int n = s.hi(f, 2) - s.lo(f, 2);
          rows_[f].push_back({std::size_t(setup_.layout.index(z, y, s.lo(f, 2))), packed_values_, z, n});
          packed_values_ += std::size_t(n);
        }
  }

  std::string name() const override { return std::string("elastic-cpu-") + (sizeof(T) == 4 ? "fp32" : "fp64"); }
  std::string history_name() const override { return history_->name(); }
  std::size_t history_bytes() const override { return history_->bytes(); }
  long long history_forward_steps() const override { return history_->forward_steps(); }

  void set_velocity(std::span<const double> vp) override { set_all(vp, setup_.vs, setup_.density); }
  void set_density(std::span<const double> rho) override { set_all(setup_.vp, setup_.vs, rho); }
  void set_model(std::span<const double> vp, std::span<const double> rho) override {
    set_all(vp, setup_.vs, rho.empty() ? std::span<const double>(setup_.density) : rho);
  }
  void set_shear_velocity(std::span<const double> vs) override { set_all(setup_.vp, vs, setup_.density); }
  void set_elastic_model(std::span<const double> vp, std::span<const double> rho, std::span<const double> vs) override {
    set_all(vp, vs.empty() ? std::span<const double>(setup_.vs) : vs,
            rho.empty() ? std::span<const double>(setup_.density) : rho);
  }
  std::vector<double> density() const override { return setup_.density; }
  std::vector<double> shear_velocity() const override { return setup_.vs; }
  std::vector<double> vel2dt2() const override {
    std::vector<double> out(setup_.vp.size());
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = setup_.vp[k] * setup_.vp[k] * dt_ * dt_;
    return out;
  }
  void add_density_gradient(std::span<double> out) const override {
    add_kept_density_gradient(*this, true, density_gradient_, out);
  }
  void add_shear_gradient(std::span<double> out) const override {
    if (out.size() != shear_gradient_.size())
      throw std::invalid_argument("add_shear_gradient: call adjoint() first; out must be nz * ny * nx");
    for (std::size_t k = 0; k < out.size(); ++k) out[k] += shear_gradient_[k];
  }

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

  std::vector<double> born(int shot, std::span<const double> dmp) override {
    check_born_perturbation(dmp.size(), setup_.vp.size());
    return born_run(shot, dmp, {}, {});
  }
  std::vector<double> born_density(int shot, std::span<const double> drho) override {
    check_born_perturbation(drho.size(), setup_.vp.size());
    return born_run(shot, {}, {}, drho);
  }
  std::vector<double> born_shear(int shot, std::span<const double> dms) override {
    check_born_perturbation(dms.size(), setup_.vp.size());
    return born_run(shot, {}, dms, {});
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
    const std::array<std::vector<double>, 2> adjoint_sources = list_adjoint_sources(residual);
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
    assemble_gradient(a.images, source_image);
    for (std::size_t k = 0; k < points; ++k) gradient[k] += vp_gradient_[k];
    if (!illumination.empty())
      for (std::size_t k = 0; k < points; ++k) illumination[k] += illumination_[k];
  }

 private:
  // dJ/d(coefficient) over the padded points (fp64 sums).
  struct Images {
    std::vector<double> lam, mu2;
    std::array<std::vector<double>, 3> mudt, bdt;
    explicit Images(std::size_t size) : lam(size, 0.0), mu2(size, 0.0) {
      for (auto& v : mudt) v.assign(size, 0.0);
      for (auto& v : bdt) v.assign(size, 0.0);
    }
    void zero() {
      for (auto* v : {&lam, &mu2, &mudt[0], &mudt[1], &mudt[2], &bdt[0], &bdt[1], &bdt[2]})
        std::fill(v->begin(), v->end(), 0.0);
    }
  };
  struct Adjoint {
    explicit Adjoint(const ElasticSetup<T>& s)
        : fields(s), scratch(std::size_t(s.layout.size()), T(0)), images(std::size_t(s.layout.size())) {}
    ElasticFields<T> fields;
    std::vector<T> scratch;
    Images images;
  };
  Adjoint& adjoint_fields() {
    if (!adjoint_) adjoint_ = std::make_unique<Adjoint>(setup_);
    host::zero(std::span<T>(adjoint_->fields.all));
    for (auto& v : adjoint_->fields.slabs) host::zero(std::span<T>(v));
    adjoint_->images.zero();
    return *adjoint_;
  }

  // The model's checks: vp positive, finite and within the frozen dt's limit (with the density's contrasts, as the
  // plan's staggered_dt_max), rho positive and finite, 0 <= vs < vp sqrt(3) / 2 (a positive bulk modulus).
  void set_all(std::span<const double> vp, std::span<const double> vs, std::span<const double> rho) {
    const std::size_t points = setup_.vp.size();
    check_model_velocity(vp, points, v_limit_, dt_);
    if (rho.size() != points || vs.size() != points)
      throw std::invalid_argument("elastic gradient: the model must have nz * ny * nx values");
    for (std::size_t k = 0; k < points; ++k) {
      if (!std::isfinite(rho[k]) || rho[k] <= 0)
        throw Error(ExitCode::invalid_case,
                    fmt::format("model density {} kg/m^3 at flat index {} is not positive and finite", rho[k], k));
      if (!std::isfinite(vs[k]) || vs[k] < 0 || vs[k] >= vp[k] * std::sqrt(0.75))
        throw Error(ExitCode::invalid_case,
                    fmt::format("model shear velocity {} m/s at flat index {} is outside [0, vp sqrt(3)/2 = {:.6g}) "
                                "m/s (vp {} m/s there), where the bulk modulus stays positive; keep vs below "
                                "inversion.velocity_min sqrt(3)/2 (invert checks its bounds so at the start)",
                                vs[k], k, vp[k] * std::sqrt(0.75), vp[k]));
    }
    check_staggered_stability(case_, vp, rho, speedup_, dt_);
    update_elastic_model(setup_, vp, vs, rho);
  }

  int n_receivers() const { return int(velocity_.size()); }
  void begin_shot(int shot) {
    host::zero(std::span<T>(state_.all));
    for (auto& v : state_.slabs) host::zero(std::span<T>(v));
    std::fill(increments_.begin(), increments_.end(), T(0));
    density_gradient_.clear();
    shear_gradient_.clear();
    sources_ = setup_.sources(source_stencils_.at(std::size_t(shot)));
    running_ = running_sums(wavelets_.at(std::size_t(shot)));
    shot_ = shot;
    const std::vector<PointStencil>& receivers = receivers_.of(shot, shared_receivers_);
    std::vector<PointStencil> lists[2];
    split_elastic_receivers(receivers, lists, velocity_, row_);
    for (int k = 0; k < 2; ++k) {
      lists_[k] = make_block_receivers<T>(setup_.layout, lists[k], setup_.block);
      raw_[k].assign(lists[k].size() * std::size_t(setup_.nt), 0.0);
    }
    history_shot_ = -1;
  }
  std::vector<double> traces() const {
    std::vector<double> out;
    elastic_traces(velocity_, row_, raw_[0], raw_[1], setup_.nt, out);
    return out;
  }

  // Each list's adjoint source in its own rows' order, the transpose of traces(): a pressure trace is its raw row; a
  // velocity trace's sample n is (raw^n + raw^{n-1}) / 2, so raw^n's adjoint is (r^n + r^{n+1}) / 2 (r^{nt} = 0).
  std::array<std::vector<double>, 2> list_adjoint_sources(std::span<const double> residual) const {
    const std::size_t nt = std::size_t(setup_.nt);
    std::array<std::vector<double>, 2> out{std::vector<double>(raw_[0].size()), std::vector<double>(raw_[1].size())};
    for (std::size_t r = 0; r < velocity_.size(); ++r) {
      const double* in = residual.data() + r * nt;
      double* o = out[velocity_[r]].data() + row_[r] * nt;
      for (std::size_t n = 0; n < nt; ++n) o[n] = velocity_[r] ? 0.5 * (in[n] + (n + 1 < nt ? in[n + 1] : 0.0)) : in[n];
    }
    return out;
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
    shot_step(ShotPass::forward, n + 1, setup_.nt);
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

  // The coefficients' perturbation for parameter perturbations dm_p, dm_s, drho (each empty: 0), padded, and the
  // sources' factors'.
  struct Perturbation {
    std::vector<T> lam, mu2;
    std::array<std::vector<T>, 3> mudt, bdt;
    std::vector<T> factor;
  };
  Perturbation perturbation(std::span<const double> dmp, std::span<const double> dms, std::span<const double> drho) {
    const FieldLayout& L = setup_.layout;
    const std::size_t size = std::size_t(L.size()), points = setup_.vp.size();
    const auto at = [](std::span<const double> v, std::size_t k) { return v.empty() ? 0.0 : v[k]; };
    Perturbation p;
    p.lam.assign(size, T(0)), p.mu2.assign(size, T(0));
    std::vector<double> dmu(points);
    for_nodes([&](std::size_t k, index_t i, int) {
      const double rho = setup_.density[k], mp = msq(setup_.vp[k]), ms = msq(setup_.vs[k]);
      p.lam[std::size_t(i)] = T(rho / dt_ * (at(dmp, k) - 2 * at(dms, k)) + (mp - 2 * ms) / dt_ * at(drho, k));
      p.mu2[std::size_t(i)] = T(2 * rho / dt_ * at(dms, k) + 2 * ms / dt_ * at(drho, k));
      dmu[k] = (rho * at(dms, k) + ms * at(drho, k)) / (dt_ * dt_);
    });
    for (int c = 0; c < 3; ++c) {
      p.mudt[std::size_t(c)].assign(size, T(0));
      for_edges(c, [&](index_t i, const std::array<std::size_t, 4>& node, const std::array<double, 4>& d) {
        double sum = 0;
        for (std::size_t j = 0; j < 4; ++j) sum += d[j] * dmu[node[j]];
        p.mudt[std::size_t(c)][std::size_t(i)] = T(sum);
      });
      p.bdt[std::size_t(c)].assign(size, T(0));
      if (!drho.empty())
        for_velocity(c, [&](index_t i, std::size_t n0, std::size_t n1, double bdt) {
          p.bdt[std::size_t(c)][std::size_t(i)] = T(-bdt * bdt / (2 * dt_) * (drho[n0] + drho[n1]));
        });
    }
    // The sources: a pressure point's factor is proportional to m_p rho_k / rho_s, a force's to dt b at its point.
    p.factor.assign(sources_.factor.size(), T(0));
    const auto& stencils = source_stencils_.at(std::size_t(shot_));
    for (std::size_t j = 0; j + 1 < sources_.offsets.size(); ++j) {
      const double rho_s = point_density(stencils[j], std::span<const double>(setup_.density), setup_.shape);
      const double drho_s = drho.empty() ? 0.0 : point_density_change(stencils[j], drho, setup_.shape);
      for (std::int32_t q = sources_.offsets[j]; q < sources_.offsets[j + 1]; ++q) {
        const std::size_t e = std::size_t(q), f = sources_.field[e];
        const double factor = double(sources_.factor[e]);
        if (sources_.signal[e] == ElasticPoints<T>::running_sum) {
          const std::size_t k = compact(sources_.index[e]);
          p.factor[e] = T(factor * (at(dmp, k) / msq(setup_.vp[k]) + at(drho, k) / setup_.density[k] - drho_s / rho_s));
        } else if (sources_.signal[e] == ElasticPoints<T>::sample) {
          const std::size_t i = std::size_t(sources_.index[e]);
          p.factor[e] = T(factor * double(p.bdt[f - vz][i]) / double(setup_.bdt[f - vz][i]));
        }
      }
    }
    return p;
  }

  // The Born run: the perturbation's fields du stepped with the background's coefficients, in lockstep with the
  // background, each half adding the perturbed coefficients times the background's increments, and the sources'
  // perturbed factors; the traces of du.
  std::vector<double> born_run(int shot, std::span<const double> dmp, std::span<const double> dms,
                               std::span<const double> drho) {
    const FieldLayout& L = setup_.layout;
    const cpu::FlushDenormals flush(flush_denormals_);
    begin_shot(shot);
    const Perturbation p = perturbation(dmp, dms, drho);
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
    for_nodes([&](std::size_t, index_t i, int z) {
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
  void stress_images(const ElasticStep<T>& a, const T* inc, Images& images) const {
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

  // The chain rule from the coefficients' images to m_p, m_s and rho (the transposes of perturbation()).
  void assemble_gradient(const Images& images, const std::vector<double>& source_image) {
    const std::size_t points = setup_.vp.size();
    vp_gradient_.assign(points, 0.0);
    shear_gradient_.assign(points, 0.0);
    density_gradient_.assign(points, 0.0);
    std::vector<double> mu_image(points, 0.0);  // dJ/d mu at each node
    for (int c = 0; c < 3; ++c)
      for_edges(c, [&](index_t i, const std::array<std::size_t, 4>& node, const std::array<double, 4>& d) {
        for (std::size_t j = 0; j < 4; ++j) mu_image[node[j]] += d[j] * images.mudt[std::size_t(c)][std::size_t(i)];
      });
    for_nodes([&](std::size_t k, index_t i, int) {
      const double rho = setup_.density[k], mp = msq(setup_.vp[k]), ms = msq(setup_.vs[k]);
      const double lam = images.lam[std::size_t(i)], mu2 = images.mu2[std::size_t(i)];
      vp_gradient_[k] = rho / dt_ * lam;
      shear_gradient_[k] = -2 * rho / dt_ * lam + 2 * rho / dt_ * mu2 + rho / (dt_ * dt_) * mu_image[k];
      density_gradient_[k] = (mp - 2 * ms) / dt_ * lam + 2 * ms / dt_ * mu2 + ms / (dt_ * dt_) * mu_image[k];
    });
    // The forces' images join their points' dt b images (factor = dt b w / V).
    std::array<std::vector<double>, 3> bdt_image = images.bdt;
    for (std::size_t e = 0; e < source_image.size(); ++e)
      if (sources_.signal[e] == ElasticPoints<T>::sample) {
        const int c = sources_.field[e] - vz;
        const std::size_t i = std::size_t(sources_.index[e]);
        bdt_image[std::size_t(c)][i] += source_image[e] / double(setup_.bdt[std::size_t(c)][i]);
      }
    for (int c = 0; c < 3; ++c)
      for_velocity(c, [&](index_t i, std::size_t n0, std::size_t n1, double bdt) {
        const double term = -bdt * bdt / (2 * dt_) * bdt_image[std::size_t(c)][std::size_t(i)];
        density_gradient_[n0] += term;
        density_gradient_[n1] += term;
      });
    // The pressure sources: factor -m_p rho_k / rho_s w / V.
    const auto& stencils = source_stencils_.at(std::size_t(shot_));
    for (std::size_t j = 0; j + 1 < sources_.offsets.size(); ++j) {
      double total = 0;
      for (std::int32_t q = sources_.offsets[j]; q < sources_.offsets[j + 1]; ++q) {
        const std::size_t e = std::size_t(q);
        if (sources_.signal[e] != ElasticPoints<T>::running_sum) continue;
        const std::size_t k = compact(sources_.index[e]);
        vp_gradient_[k] += source_image[e] / msq(setup_.vp[k]);
        density_gradient_[k] += source_image[e] / setup_.density[k];
        total += source_image[e];
      }
      if (total == 0) continue;
      const double rho_s = point_density(stencils[j], std::span<const double>(setup_.density), setup_.shape);
      const std::vector<double> d = point_density_derivative(stencils[j]);
      for (std::size_t q = 0; q < d.size(); ++q) {
        const GridPointWeight& w = stencils[j].points[q];
        density_gradient_[(std::size_t(w.iz) * setup_.shape[1] + w.iy) * setup_.shape[2] + w.ix] -=
            total / rho_s * d[q];
      }
    }
  }

  double msq(double v) const { return v * v * dt_ * dt_; }
  std::size_t compact(index_t i) const {
    int z, y, x;
    setup_.layout.coordinates(i, z, y, x);
    return (std::size_t(z) * setup_.shape[1] + y) * setup_.shape[2] + x;
  }
  // fn(k, i, z) for every node (compact index k, padded i), shared over the threads (fn writes at k or i only).
  template <class Fn>
  void for_nodes(Fn&& fn) const {
    const FieldLayout& L = setup_.layout;
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < L.nz; ++z)
      for (int y = 0; y < L.ny; ++y)
        for (int x = 0; x < L.nx; ++x) fn((std::size_t(z) * L.ny + y) * L.nx + x, L.index(z, y, x), z);
  }
  // fn(i, nodes, d(dt mu)/d mu per slot) for every point of shear stress szy + c's computed range.
  template <class Fn>
  void for_edges(int c, Fn&& fn) const {
    const ElasticStep<T> s = setup_.step();
    const int f = szy + c;
    for (int z = s.lo(f, 0); z < s.hi(f, 0); ++z)
      for (int y = s.lo(f, 1); y < s.hi(f, 1); ++y)
        for (int x = s.lo(f, 2); x < s.hi(f, 2); ++x) {
          const std::array<std::size_t, 4> node = setup_.edge_nodes(c, z, y, x);
          std::array<double, 4> mu{};
          for (std::size_t j = 0; j < 4; ++j) mu[j] = setup_.density[node[j]] * setup_.vs[node[j]] * setup_.vs[node[j]];
          fn(setup_.layout.index(z, y, x), node, edge_derivative(mu, node, dt_));
        }
  }
  // fn(i, n0, n1, dt b) for every point of v_{z+c}'s computed range and its two nodes.
  template <class Fn>
  void for_velocity(int c, Fn&& fn) const {
    const ElasticStep<T> s = setup_.step();
    const int f = vz + c;
    for (int z = s.lo(f, 0); z < s.hi(f, 0); ++z)
      for (int y = s.lo(f, 1); y < s.hi(f, 1); ++y)
        for (int x = s.lo(f, 2); x < s.hi(f, 2); ++x) {
          const auto [n0, n1] = setup_.velocity_nodes(c, z, y, x);
          fn(setup_.layout.index(z, y, x), n0, n1, 2 * dt_ / (setup_.density[n0] + setup_.density[n1]));
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

  Case case_;  // the grid and scheme, for the stability check
  double dt_, v_limit_, speedup_;
  bool flush_denormals_;
  std::vector<std::vector<PointStencil>> source_stencils_;  // [shot][source]
  std::vector<std::vector<std::vector<double>>> wavelets_;  // [shot][source][n]
  ElasticSetup<T> setup_;
  ElasticFields<T> state_;
  std::vector<T> increments_;  // the last step's, per field (padded, one after another): the history's field
  // A row of a field's computed range: its padded index, its offset in the packed field, its z and length.
  struct Row {
    std::size_t i, p;
    int z, n;
  };
  std::array<std::vector<Row>, elastic_fields> rows_;
  std::size_t packed_values_ = 0;  // the increments on the computed ranges
  std::unique_ptr<WavefieldHistory<T>> history_;
  ShotReceivers receivers_;
  std::vector<PointStencil> shared_receivers_;
  BlockReceivers<T> lists_[2];  // the pressure receivers, the velocity receivers (all whole: one rank)
  std::vector<double> raw_[2];
  std::vector<bool> velocity_;
  std::vector<std::size_t> row_;
  ElasticPoints<T> sources_;
  std::vector<std::vector<double>> running_;
  std::vector<double> vp_gradient_, shear_gradient_, density_gradient_;  // of the last adjoint
  std::vector<double> illumination_;
  bool accumulate_illumination_ = false;
  int shot_ = -1, history_shot_ = -1;
  std::unique_ptr<Adjoint> adjoint_;
};

}  // namespace

std::unique_ptr<GradientPropagator> make_elastic_cpu_gradient(const Case& c, const Plan& plan,
                                                              const HistoryChoice& history) {
  if (c.run.precision == Precision::fp64) return std::make_unique<ElasticCpuGradient<double>>(c, plan, history);
  return std::make_unique<ElasticCpuGradient<float>>(c, plan, history);
}

}  // namespace specwave
