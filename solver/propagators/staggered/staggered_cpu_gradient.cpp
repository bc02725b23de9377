// The staggered scheme's forward, Born and adjoint operators on the CPU (docs/numerics.md, "The staggered scheme's
// adjoint"): the gradient with respect to m = (v dt)^2 with the density and Q fixed. dt K and the memory variables'
// drives are proportional to m at every point, so the step's derivative at a point is (D-bar D^n) / m there, D^n the
// divergence the forward step used (what the history keeps) and D-bar its adjoint; the sources, whose factors are
// proportional to m at their points, add u-bar F^n factor / m there. With inversion.parameters naming "density", the
// density gradient at fixed velocity too: the same image over rho, the buoyancy's sum_n w-bar dw (the history then
// keeps the velocity increments dw too) and the sources' rho_s.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "kernels/cpu/fdtd_cpu.hpp"
#include "kernels/cpu/flush_denormals.hpp"
#include "kernels/cpu/staggered_cpu.hpp"
#include "kernels/staggered_kernels.hpp"
#include "solver/case/errors.hpp"
#include "solver/forward/progress.hpp"
#include "solver/plan/model.hpp"
#include "solver/plan/plan.hpp"
#include "solver/plan/shot_receivers.hpp"
#include "solver/propagators/gradient_propagator.hpp"
#include "solver/propagators/history/wavefield_history.hpp"
#include "solver/propagators/host_field.hpp"
#include "solver/propagators/staggered/staggered_gradient_model.hpp"

namespace specwave {
namespace {

template <class T>
class StaggeredCpuGradient final : public StaggeredGradientModel<T>, private ForwardStepper<T> {
  using Model = StaggeredGradientModel<T>;
  using Model::case_, Model::dt_, Model::flush_denormals_, Model::setup_, Model::source_stencils_, Model::wavelets_,
      Model::with_density_, Model::density_gradient_;

 public:
  StaggeredCpuGradient(const Case& c, const Plan& plan, const HistoryChoice& history)
      : Model(c, plan),
        state_(setup_),
        divergence_(std::size_t(setup_.layout.interior_points()), T(0)),
        history_(make_history<T>(history)),
        receivers_(c, plan) {
    set_receivers(plan.receivers);
    if (with_density_)
      for (auto& dw : increment_) dw.assign(setup_.layout.size(), T(0));
  }

  std::string name() const override { return this->scheme_name("cpu"); }
  std::string history_name() const override { return history_->name(); }
  std::size_t history_bytes() const override { return history_->bytes(); }
  long long history_forward_steps() const override { return history_->forward_steps(); }

  std::vector<double> forward(int shot, bool keep_history) override {
    const cpu::FlushDenormals flush(flush_denormals_);
    begin_shot(shot);
    if (keep_history) {
      illumination_.assign(divergence_.size(), 0.0);
      accumulate_illumination_ = true;
      history_->run_forward(*this, setup_.nt);
      accumulate_illumination_ = false;
      history_shot_ = shot;
    } else {
      for (int n = 0; n < setup_.nt; ++n) step(n);
    }
    return traces_;
  }

  // born_run (staggered_gradient_model.hpp), background and perturbation in lockstep: the perturbation's step, then
  // the scattering of step n at every node, du += (dm / m) (-dt K + dt/2 sum_l g_l) D^n and dr_l += (dm / m) g_l D^n,
  // and at the source points du += (dm / m) factor F^n; the free surface's zeroed plane last.
  std::vector<double> born_run(int shot, const std::vector<T>& relative, const std::array<std::vector<T>, 3>* buoyancy,
                               const std::vector<T>& source_relative) override {
    const FieldLayout& L = setup_.layout;
    const cpu::FlushDenormals flush(flush_denormals_);
    begin_shot(shot);
    StaggeredFields<T> du(setup_);
    std::vector<double> out(traces_.size(), 0.0);
    const StaggeredStep<T> s = du.step(setup_);
    StaggeredBornScatter<T> scatter{
        L, du.u.data(), setup_.kdt.data(), relative.data(), divergence_.data(), int(du.memory.size())};
    for (std::size_t l = 0; l < du.memory.size(); ++l)
      scatter.memory[l] = du.memory[l].data(), scatter.g[l] = setup_.sls_drive[l].data();
    scatter.half_dt = T(dt_ / 2);
    for (int n = 0; n < setup_.nt; ++n) {
      host::record(receivers_list_, du.u.data(), out, setup_.nt, n);
      step(n);  // the background: divergence_ = D^n (and increment_ = dw^n with a density parameter)
      cpu::staggered_velocity_step(s);
      if (buoyancy)
        for (int a = 0; a < 3; ++a) {
          T* w = du.w[std::size_t(a)].data();
          const T *rel = (*buoyancy)[std::size_t(a)].data(), *dw = increment_[std::size_t(a)].data();
          const std::size_t size = du.w[std::size_t(a)].size();
#pragma omp parallel for schedule(static)
          for (std::size_t i = 0; i < size; ++i) w[i] += rel[i] * dw[i];
        }
      cpu::staggered_pressure_step(s);
#pragma omp parallel for collapse(2) schedule(static)
      for (int z = 0; z < L.nz; ++z)
        for (int y = 0; y < L.ny; ++y)
          for (int x = 0; x < L.nx; ++x) staggered_kernels::born_scatter_point(scatter, z, y, x);
      for (std::size_t p = 0; p < sources_.index.size(); ++p) {
        int z, y, x;
        L.coordinates(sources_.index[p], z, y, x);
        const std::size_t k = (std::size_t(z) * L.ny + y) * L.nx + x;
        const T r = source_relative.empty() ? relative[k] : relative[k] + source_relative[sources_.owner[p]];
        du.u[sources_.index[p]] += r * sources_.factor[p] * T(running_[sources_.owner[p]][n]);
      }
      if (setup_.free_surface) cpu::zero_top_plane(L, du.u.data());
    }
    return out;
  }

  // The exact adjoint of the forward steps (kernels/cpu/staggered_adjoint_cpu.cpp), backwards from rest at nt: for n =
  // nt - 1 .. 0 the free surface's zeroed plane, the sources' imaging term, the step's transpose with the imaging
  // condition D-bar D^n, then the receivers' adjoint sources R^T g^n; the gradient is the image over m.
  void adjoint(std::span<const double> residual, std::span<double> gradient, std::span<double> illumination) override {
    const FieldLayout& L = setup_.layout;
    const int nt = setup_.nt;
    check_adjoint_arguments(history_shot_ >= 0, traces_.size(), std::size_t(L.interior_points()), residual.size(),
                            gradient.size(), illumination.size());
    const cpu::FlushDenormals flush(flush_denormals_);
    AdjointFields& a = adjoint_fields();
    // The forward step's view on the adjoint's fields (their shapes are the state's), with the scratch fields.
    const StaggeredStep<T> f = a.fields.step(setup_);
    T* const q[3] = {a.q[0].data(), a.q[1].data(), a.q[2].data()};
    T* const e[3] = {a.e[0].data(), a.e[1].data(), a.e[2].data()};
    StaggeredAdjointStep<T> s = adjoint_view(f, q, e);
    s.image = a.image.data();
    if (with_density_)
      for (int k = 0; k < 3; ++k) s.buoyancy_image[k] = a.buoyancy[std::size_t(k)].data();
    std::vector<double> source_image(source_stencils_.at(std::size_t(history_shot_)).size(), 0.0);  // S per source
    ReverseFields<T> fields(*history_, *this, field_values());
    // The sources' points: interior index and factor.
    std::vector<std::size_t> source_point(sources_.index.size());
    for (std::size_t p = 0; p < source_point.size(); ++p) source_point[p] = interior_index(sources_.index[p]);
    shot_step(ShotPass::adjoint, 0, nt);  // the adjoint pass begins (replays count as its)
    for (int n = nt - 1; n >= 0; --n) {
      const T* field = fields.one(n + 1);  // field n + 1 is D^n, what step n used (and its dw)
      s.divergence = field;
      for (int k = 0; k < 3 && with_density_; ++k)
        s.velocity_increment[k] = field + divergence_.size() + std::size_t(k) * L.size();
      T* u = s.u;
      if (setup_.free_surface) cpu::zero_top_plane(L, u);
      for (std::size_t p = 0; p < source_point.size(); ++p) {
        const double term =
            double(u[sources_.index[p]]) * double(sources_.factor[p]) * running_[sources_.owner[p]][std::size_t(n)];
        a.image[source_point[p]] += term;
        source_image[std::size_t(sources_.owner[p])] += term;
      }
      cpu::staggered_adjoint_step(s);
      const auto& rec = receivers_list_;
      for (std::size_t r = 0; r + 1 < rec.offsets.size(); ++r)
        for (std::int32_t p = rec.offsets[r]; p < rec.offsets[r + 1]; ++p)
          u[rec.index[p]] += rec.factor[p] * T(residual[r * std::size_t(nt) + std::size_t(n)]);
      shot_step(ShotPass::adjoint, nt - n, nt);
    }
    (void)fields.one(0);  // hands out the last field (zero: no step before n = 0)
    this->add_velocity_gradient(a.image.data(), gradient);
    if (!illumination.empty())
      for (std::size_t k = 0; k < illumination.size(); ++k) illumination[k] += illumination_[k];
    if (with_density_)
      density_gradient_ =
          this->density_gradient(history_shot_, a.image.data(),
                                 {a.buoyancy[0].data(), a.buoyancy[1].data(), a.buoyancy[2].data()}, source_image);
  }

 private:
  std::size_t n_receivers() const { return receivers_list_.offsets.size() - 1; }
  std::size_t interior_index(index_t i) const {
    int z, y, x;
    setup_.layout.coordinates(i, z, y, x);
    return (std::size_t(z) * setup_.layout.ny + y) * setup_.layout.nx + x;
  }
  void set_receivers(const std::vector<PointStencil>& stencils) {
    receivers_list_ = make_point_lists<T>(setup_.layout, stencils, 1.0, nullptr);
    traces_.assign(n_receivers() * std::size_t(setup_.nt), 0.0);
  }

  void begin_shot(int shot) {
    for (std::vector<T>* v : state_.arrays()) host::zero(std::span<T>(*v));
    std::fill(divergence_.begin(), divergence_.end(), T(0));
    for (auto& dw : increment_) std::fill(dw.begin(), dw.end(), T(0));
    density_gradient_.clear();  // add_density_gradient refuses until the next adjoint
    if (const auto* own = receivers_.own(shot)) set_receivers(*own);
    std::fill(traces_.begin(), traces_.end(), 0.0);
    sources_ = setup_.sources(source_stencils_.at(std::size_t(shot)));
    running_ = running_sums(wavelets_.at(std::size_t(shot)));
    history_shot_ = -1;
  }

  // ForwardStepper. The state: the fields, the CPML and attenuation memory. The history's field (D and dw of the last
  // step) lies beside it: a step writes all of it and reads none (ForwardStepper::field_beside_state).
  bool field_beside_state() const override { return true; }
  std::size_t state_values() const override {
    std::size_t n = 0;
    for (const std::vector<T>* v : state_.arrays()) n += v->size();
    return n;
  }
  void save_state(std::span<T> out) const override {
    auto it = out.begin();
    for (const std::vector<T>* v : state_.arrays()) it = std::copy(v->begin(), v->end(), it);
  }
  void restore_state(std::span<const T> in) override {
    auto it = in.begin();
    for (std::vector<T>* v : state_.arrays()) {
      std::copy(it, it + std::ptrdiff_t(v->size()), v->begin());
      it += std::ptrdiff_t(v->size());
    }
  }
  // Records u^n, then u^{n+1}: the velocity and pressure steps (D^n into divergence_), the sources, the free surface.
  void step(int n) override {
    const FieldLayout& L = setup_.layout;
    host::record(receivers_list_, state_.u.data(), traces_, setup_.nt, n);
    if (accumulate_illumination_) {
#pragma omp parallel for collapse(2) schedule(static)
      for (int z = 0; z < L.nz; ++z)
        for (int y = 0; y < L.ny; ++y) {
          const T* u = state_.u.data() + L.index(z, y, 0);
          double* out = illumination_.data() + (std::size_t(z) * L.ny + y) * L.nx;
          for (int x = 0; x < L.nx; ++x) out[x] += double(u[x]) * double(u[x]);
        }
    }
    StaggeredStep<T> s = state_.step(setup_);
    s.divergence_out = divergence_.data();
    if (with_density_)
      for (int a = 0; a < 3; ++a) s.increment_out[a] = increment_[std::size_t(a)].data();
    cpu::staggered_velocity_step(s);
    cpu::staggered_pressure_step(s);
    for (std::size_t p = 0; p < sources_.index.size(); ++p)
      state_.u[sources_.index[p]] += sources_.factor[p] * T(running_[sources_.owner[p]][std::size_t(n)]);
    if (setup_.free_surface) cpu::zero_top_plane(L, state_.u.data());
    forward_step(n + 1, setup_.nt, [&] { return host::field_stats(L, state_.u.data()); });
  }
  // The history's field: D of the last step and, for the density gradient, its velocity increments dw_a (padded).
  std::size_t field_values() const override {
    std::size_t n = divergence_.size();
    for (const auto& dw : increment_) n += dw.size();
    return n;
  }
  void copy_field(std::span<T> out) const override {
    auto it = std::copy(divergence_.begin(), divergence_.end(), out.begin());
    for (const auto& dw : increment_) it = std::copy(dw.begin(), dw.end(), it);
  }

  // The adjoint's fields, allocated by the first adjoint and kept (zeroed for each).
  struct AdjointFields {
    AdjointFields(const StaggeredSetup<T>& s, bool density) : fields(s) {
      for (auto& v : q) v.assign(s.layout.size(), T(0));
      for (auto& v : e) v.assign(s.layout.size(), T(0));
      image.assign(std::size_t(s.layout.interior_points()), 0.0);
      if (density)
        for (auto& v : buoyancy) v.assign(s.layout.size(), 0.0);
    }
    StaggeredFields<T> fields;  // u-bar, w-bar, phi-bar, chi-bar, r-bar
    std::array<std::vector<T>, 3> q, e;
    std::vector<double> image;
    std::array<std::vector<double>, 3> buoyancy;  // sum_n w-bar_a dw_a (the density gradient's)
  };
  AdjointFields& adjoint_fields() {
    if (!adjoint_) adjoint_ = std::make_unique<AdjointFields>(setup_, with_density_);
    for (std::vector<T>* v : adjoint_->fields.arrays()) host::zero(std::span<T>(*v));
    for (auto* v : {&adjoint_->q, &adjoint_->e})
      for (auto& field : *v) host::zero(std::span<T>(field));
    host::zero(std::span<double>(adjoint_->image));
    for (auto& v : adjoint_->buoyancy) host::zero(std::span<double>(v));
    return *adjoint_;
  }

  StaggeredFields<T> state_;
  std::vector<T> divergence_;  // D of the last forward step (compact)
  std::array<std::vector<T>, 3>
      increment_;  // dw_a of the last step (padded; density only): StaggeredStep::increment_out
  std::unique_ptr<WavefieldHistory<T>> history_;
  ShotReceivers receivers_;
  PointLists<T> receivers_list_;
  PointLists<T> sources_;
  std::vector<std::vector<double>> running_;  // F^n per source of the shot
  std::vector<double> traces_;
  std::vector<double> illumination_;  // sum_{n < nt} (u^n)^2 of the last forward(shot, true)
  bool accumulate_illumination_ = false;
  int history_shot_ = -1;
  std::unique_ptr<AdjointFields> adjoint_;
};

}  // namespace

std::unique_ptr<GradientPropagator> make_staggered_cpu_gradient(const Case& c, const Plan& plan,
                                                                const HistoryChoice& history) {
  if (c.run.precision == Precision::fp64) return std::make_unique<StaggeredCpuGradient<double>>(c, plan, history);
  return std::make_unique<StaggeredCpuGradient<float>>(c, plan, history);
}

}  // namespace specwave
