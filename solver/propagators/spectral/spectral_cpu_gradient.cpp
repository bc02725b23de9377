// Spectral (k-space) forward, Born and adjoint operators on the CPU, both absorbers, one rank (docs/numerics.md,
// "Adjoint of the spectral scheme"). The forward steps are those of the forward propagator
// (solver/propagators/spectral/spectral_cpu_steps.hpp: same transforms, same per-point functions, same bits); the
// adjoint of each absorber is the same kind of step on scaled adjoint variables:
//  - damping layer: nu = (v dt)^2 mu follows the forward step itself, the adjoint sources injected like sources;
//  - split-field PML: P_a = -(v dt)^2 / dt^2 b_a pi_a and Omega_a = bs_a omega_a follow the forward's two updates
//    with D^+ and D^- wired the other way round (SpectralCpuSteps::pml_adjoint_step).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "kernels/cpu/flush_denormals.hpp"
#include "solver/case/errors.hpp"
#include "solver/forward/progress.hpp"
#include "solver/plan/model.hpp"
#include "solver/plan/plan.hpp"
#include "solver/plan/shot_receivers.hpp"
#include "solver/propagators/gradient_propagator.hpp"
#include "solver/propagators/host_field.hpp"
#include "solver/propagators/spectral/spectral_cpu_steps.hpp"
#include "solver/propagators/spectral/spectral_setup.hpp"

namespace specwave {
namespace {

// What both absorbers share: the plan's frozen discretisation, the setup (whose per-point factors follow the
// model), the steps, one shot's sources, the traces and the history.
template <class T>
class SpectralGradientBase : public GradientPropagator, protected ForwardStepper<T> {
 public:
  std::string history_name() const override { return history_->name(); }
  std::size_t history_bytes() const override { return history_->bytes(); }
  long long history_forward_steps() const override { return history_->forward_steps(); }

  void set_velocity(std::span<const double> velocity) override {
    check_model_velocity(velocity, setup_.points(), v_limit_, setup_.dt);
    velocity_.assign(velocity.begin(), velocity.end());
    model_changed();
  }

  std::vector<double> vel2dt2() const override {
    const T* v = model();
    return std::vector<double>(v, v + setup_.points());
  }

  std::vector<double> forward(int shot, bool keep_history) override {
    const cpu::FlushDenormals flush(flush_denormals_);
    begin_shot(shot);
    if (keep_history) {
      history_->run_forward(*this, setup_.nt);
      history_shot_ = shot;
    } else {
      for (int n = 0; n < setup_.nt; ++n) this->step(n);
    }
    return traces_;
  }

 protected:
  SpectralGradientBase(const Case& c, const Plan& plan, const HistoryChoice& history)
      : v_limit_(plan.v_reference / plan.cfl),
        flush_denormals_(c.run.flush_denormals),
        source_stencils_(plan.sources),
        wavelets_(plan.wavelets),
        setup_(make_spectral_setup<T>(c, plan)),
        receiver_scatter_(host::make_point_scatter(setup_.receivers)),
        steps_(setup_, nullptr, plan),
        history_(make_history<T>(history)),
        receivers_(c, plan),
        velocity_(plan.model.velocity.begin(), plan.model.velocity.end()) {
    traces_.assign(n_receivers() * std::size_t(setup_.nt), 0.0);
  }

  std::string precision() const { return sizeof(T) == 4 ? "fp32" : "fp64"; }
  std::size_t n_receivers() const { return setup_.receivers.offsets.size() - 1; }
  // (v dt)^2 at every point as the scheme holds it: the damping layer's vel2dt2, the PML's source factor.
  virtual const T* model() const = 0;
  virtual void reset_state() = 0;
  // The per-point factors anew for velocity_ (and the setup's density).
  virtual void model_changed() { set_spectral_model(setup_, velocity_.data()); }  // one rank: (nz, ny, nx) order

  void begin_shot(int shot) {
    reset_state();
    // A shot with receivers of its own (ShotReceivers): its lists, grouping and traces made anew when they change.
    if (const auto* own = receivers_.own(shot); own && setup_.set_receivers(*own)) {
      receiver_scatter_ = host::make_point_scatter(setup_.receivers);
      traces_.assign(n_receivers() * std::size_t(setup_.nt), 0.0);
    }
    std::fill(traces_.begin(), traces_.end(), 0.0);
    sources_.begin(setup_, source_stencils_.at(shot), wavelets_.at(shot));
    history_shot_ = -1;
  }

  void check_adjoint_arguments(std::span<const double> residual, std::span<double> gradient,
                               std::span<const double> illumination) const {
    specwave::check_adjoint_arguments(history_shot_ >= 0, traces_.size(), setup_.points(), residual.size(),
                                      gradient.size(), illumination.size());
  }
  std::vector<T> perturbation(std::span<const double> dm) const {
    check_born_perturbation(dm.size(), setup_.points());
    return std::vector<T>(dm.begin(), dm.end());
  }

  // Frozen from the plan: dt, the stability limit of the model, the acquisition.
  double v_limit_;
  bool flush_denormals_;
  std::vector<std::vector<PointStencil>> source_stencils_;  // [shot][source]
  std::vector<std::vector<std::vector<double>>> wavelets_;  // [shot][source][n]
  SpectralSetup<T> setup_;
  host::PointScatter receiver_scatter_;  // setup_.receivers grouped by grid point: the adjoint sources, on all threads
  SpectralCpuSteps<T> steps_;
  std::unique_ptr<WavefieldHistory<T>> history_;
  SpectralSources<T> sources_;  // this shot's, with the current model's source factor
  std::vector<double> traces_;
  int history_shot_ = -1;
  ShotReceivers receivers_;
  std::vector<double> velocity_;  // the current model (m/s)
};

// The damping layer: u^{n+1} = damped_leapfrog(u^n, u^{n-1}, V, Lk u^n, eta dt) + V f^n / (1 + eta dt), V = (v dt)^2.
template <class T>
class SpectralDampingGradient final : public SpectralGradientBase<T> {
  using Base = SpectralGradientBase<T>;
  using Base::setup_, Base::steps_, Base::sources_, Base::traces_, Base::history_;

 public:
  SpectralDampingGradient(const Case& c, const Plan& plan, const HistoryChoice& history)
      : Base(c, plan, history),
        u_(setup_.points(), T(0)),
        u_prev_(setup_.points(), T(0)),
        eta_dt_(setup_.eta_dt_field()) {}

  std::string name() const override { return "spectral-cpu-damping-" + this->precision(); }

  // du^{n+1} = damped_leapfrog(du^n, du^{n-1}, V, Lk du^n, eta dt) + dV a^n / (1 + eta dt), in lockstep with u.
  std::vector<double> born(int shot, std::span<const double> dm_in) override {
    const std::vector<T> dm = this->perturbation(dm_in);
    const cpu::FlushDenormals flush(this->flush_denormals_);
    this->begin_shot(shot);
    const std::size_t points = setup_.points();
    fft::Buffer<T> du(points, T(0)), du_prev(points, T(0));
    std::vector<T> u_before(points);
    std::vector<double> out(traces_.size(), 0.0);
    const T* vel = setup_.vel2dt2.data();
    const T* eta = eta_dt_.data();
    for (int n = 0; n < setup_.nt; ++n) {
      host::record(setup_.receivers, du.data(), out, setup_.nt, n);
      std::copy(u_prev_.begin(), u_prev_.end(), u_before.begin());  // u^{n-1}
      background_step(n);                                           // u_prev_ = u^{n+1}, not yet swapped
      steps_.damped_step(du.data(), du_prev.data(), vel, eta);
      const T *u1 = u_prev_.data(), *u0 = u_.data(), *um = u_before.data(), *d = dm.data();
      T* out_field = du_prev.data();
#pragma omp parallel for simd schedule(static)
      for (std::size_t i = 0; i < points; ++i)
        out_field[i] += d[i] * damped_second_difference(u1[i], u0[i], um[i], eta[i], vel[i]) / (T(1) + eta[i]);
      std::swap(du, du_prev);
      std::swap(u_, u_prev_);
    }
    return out;
  }

  // nu^n = damped_leapfrog(nu^{n+1}, nu^{n+2}, V, Lk nu^{n+1}, eta dt) + V / (1 + eta dt) R^T g^n, from
  // nu^{nt} = nu^{nt+1} = 0; gradient += (nu^{n+1} / V) a^n (docs/numerics.md).
  void adjoint(std::span<const double> residual, std::span<double> gradient, std::span<double> illumination) override {
    this->check_adjoint_arguments(residual, gradient, illumination);
    const cpu::FlushDenormals flush(this->flush_denormals_);
    const int nt = setup_.nt;
    const std::size_t points = setup_.points();
    fft::Buffer<T> nu(points, T(0)), nu_next(points, T(0));  // nu^{n+1}, nu^{n+2}
    // u^{n+1}, u^n, u^{n-1}, handed out in decreasing n (in place when the history holds them).
    ReverseFields<T> fields(*history_, *this, points);
    const std::vector<T> zeros(points, T(0));  // u^{-1}
    const T* u1 = fields(nt);
    const T* u0 = fields(nt - 1);
    const T* vel = setup_.vel2dt2.data();
    const T* eta = eta_dt_.data();
    const T* injection = setup_.source_factor.data();  // V / (1 + eta dt)
    const auto& rec = setup_.receivers;
    const host::PointScatter& scatter = this->receiver_scatter_;
    std::vector<double> residual_n(rec.offsets.size() - 1);  // the residuals of step n
    shot_step(ShotPass::adjoint, 0, nt);                     // the adjoint pass begins (replays count as its)
    for (int n = nt - 1; n >= 0; --n) {
      const T* um = n >= 1 ? fields(n - 1) : zeros.data();
      const T* m = nu.data();
#pragma omp parallel for schedule(static)
      for (std::size_t i = 0; i < points; ++i)
        gradient[i] +=
            double(m[i]) / double(vel[i]) * double(damped_second_difference(u1[i], u0[i], um[i], eta[i], vel[i]));
      if (!illumination.empty()) {
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < points; ++i) illumination[i] += double(u0[i]) * double(u0[i]);
      }
      if (n == 0) break;                                        // nu^0 would multiply nothing
      steps_.damped_step(nu.data(), nu_next.data(), vel, eta);  // nu_next = nu^n without the adjoint sources
      T* next = nu_next.data();
      for (std::size_t r = 0; r < residual_n.size(); ++r) residual_n[r] = residual[r * nt + n];  // contiguous
      host::for_each_scattered(scatter, [&](std::size_t, index_t i, double factor, std::int32_t r) {
        next[i] += injection[i] * T(factor * residual_n[std::size_t(r)]);
      });
      std::swap(nu, nu_next);
      u1 = u0;
      u0 = um;
      shot_step(ShotPass::adjoint, nt - n, nt);
    }
  }

 private:
  const T* model() const override { return setup_.vel2dt2.data(); }
  void reset_state() override {
    std::fill(u_.begin(), u_.end(), T(0));
    std::fill(u_prev_.begin(), u_prev_.end(), T(0));
  }
  // u^{n+1} into u_prev_ (sources added); the caller swaps.
  void background_step(int n) {
    steps_.damped_step(u_.data(), u_prev_.data(), setup_.vel2dt2.data(), eta_dt_.data(), sources_.term(0, n));
    sources_.add(u_prev_.data(), n, 1);
    // (step(), and Born runs, which step here)
    forward_step(n + 1, setup_.nt, [&] { return host::field_stats(setup_.layout, u_prev_.data()); });
  }

  // ForwardStepper: the state is u^n, u^{n-1}; the field u^n.
  std::size_t state_values() const override { return 2 * setup_.points(); }
  void save_state(std::span<T> out) const override {
    std::copy(u_prev_.begin(), u_prev_.end(), std::copy(u_.begin(), u_.end(), out.begin()));
  }
  void restore_state(std::span<const T> in) override {
    const std::size_t n = setup_.points();
    std::copy(in.begin(), in.begin() + n, u_.begin());
    std::copy(in.begin() + n, in.begin() + 2 * n, u_prev_.begin());
  }
  void step(int n) override {
    host::record(setup_.receivers, u_.data(), traces_, setup_.nt, n);
    background_step(n);
    std::swap(u_, u_prev_);
  }
  std::size_t field_values() const override { return setup_.points(); }
  void copy_field(std::span<T> out) const override { std::copy(u_.begin(), u_.end(), out.begin()); }

  fft::Buffer<T> u_, u_prev_;
  std::vector<T> eta_dt_;
};

// The split-field PML: w_a^{n+1/2} = bs (bs w_a - dt beta_a D_a^+ p^n), p_a^{n+1} = b (b p_a^n - (V / dt) (rho /
// rho_ref) D_a^- w_a^{n+1/2}) + V (rho_p / rho_s) s^n (beta = 1 and rho = rho_ref without a density model).
template <class T>
class SpectralPmlGradient final : public SpectralGradientBase<T> {
  using Base = SpectralGradientBase<T>;
  using Base::setup_, Base::steps_, Base::sources_, Base::traces_, Base::history_;

 public:
  SpectralPmlGradient(const Case& c, const Plan& plan, const HistoryChoice& history)
      : Base(c, plan, history),
        f_(setup_.points(), setup_.mechanisms(), setup_.active),
        lossy_(setup_.mechanisms() > 0),
        with_density_(c.inversion.density_parameter) {
    if (lossy_) f_.keep_divergence();  // D_a^n, which the history keeps
    if (with_density_ && setup_.density.empty())
      throw std::logic_error("SpectralPmlGradient: a density gradient needs a density model");
    vel2dt2_.resize(setup_.points());
    set_vel2dt2();
  }

  std::string name() const override { return "spectral-cpu-pml-" + this->precision(); }

  // A density model (the whole grid): beta, dt v^2 (rho / rho_ref) and the sources' factors anew; rho_ref stays the
  // plan's (the pressure does not depend on it). The velocity's limit keeps dt stable (docs/numerics.md).
  void set_density(std::span<const double> density) override {
    if (setup_.density.empty()) return GradientPropagator::set_density(density);
    if (density.size() != setup_.points())
      throw std::invalid_argument("set_density: the model must have nz * ny * nx values");
    for (std::size_t k = 0; k < density.size(); ++k)
      if (!std::isfinite(density[k]) || density[k] <= 0)
        throw Error(ExitCode::invalid_case,
                    fmt::format("model density {} kg/m^3 at flat index {} is not positive and finite", density[k], k));
    set_spectral_density(setup_, density);
    this->model_changed();
    density_gradient_.clear();
  }
  void set_model(std::span<const double> velocity, std::span<const double> density) override {
    if (density.empty()) return this->set_velocity(velocity);
    check_model_velocity(velocity, setup_.points(), this->v_limit_, setup_.dt);
    this->velocity_.assign(velocity.begin(), velocity.end());
    set_density(density);  // and the velocity's factors with it
  }
  std::vector<double> density() const override { return setup_.density; }
  void add_density_gradient(std::span<double> out) const override {
    add_kept_density_gradient(*this, with_density_, density_gradient_, out);
  }

  // The perturbation's fields follow the same step, each dp_a^{n+1} with the source dV q_a^n,
  // q_a^n = (p_a^{n+1} - b_a^2 p_a^n) / V, in lockstep with the background. With attenuation (born_lossy) the
  // sources come from the background's D_a^n instead.
  std::vector<double> born(int shot, std::span<const double> dm_in) override {
    const std::vector<T> dm = this->perturbation(dm_in);
    const cpu::FlushDenormals flush(this->flush_denormals_);
    this->begin_shot(shot);
    if (lossy_) return born_lossy(dm);
    const std::size_t points = setup_.points();
    SpectralPmlFields<T> d(points);
    std::array<std::vector<T>, 3> p_before;  // p_a^n
    for (auto& p : p_before) p.resize(points);
    std::vector<double> out(traces_.size(), 0.0);
    const T* vel = model();
    const T* dt_v2 = setup_.dt_vel2.data();
    for (int n = 0; n < setup_.nt; ++n) {
      host::record(setup_.receivers, d.p.data(), out, setup_.nt, n);
      for (int a = 0; a < 3; ++a) std::copy(f_.p_split[a].begin(), f_.p_split[a].end(), p_before[a].begin());
      background_step(n);  // f_ at n + 1
      steps_.pml_step(d, dt_v2, [&](int a) {
        T* dpa = d.p_split[a].data();
        const T *p1 = f_.p_split[a].data(), *p0 = p_before[a].data(), *dv = dm.data();
        steps_.for_each_row(a, setup_.pml_b[a], [=](std::size_t i, T b) {
          dpa[i] += dv[i] * pml_pressure_derivative(p1[i], p0[i], b, vel[i]);
        });
      });
    }
    return out;
  }

  // F_rho drho, the density's Born operator at fixed velocity (docs/numerics.md, "With a density model"): the
  // perturbation's fields follow the same step with the sources of the density gradient's three terms:
  //  - dt v^2 (rho / rho_ref), the drives and the sources' factors: the velocity's Born sources with drho / rho for
  //    dV / V;
  //  - beta_a: w_a^{n+1/2} gains -d beta_a bs_a dt D_a^+ p^n, d beta_a = -beta_a^2 / (2 rho_ref) (drho_i +
  //  drho_{i+e_a});
  //  - each source's rho_s: its term s_j^n gains -(drho_s / rho_s) s_j^n.
  std::vector<double> born_density(int shot, std::span<const double> drho) override {
    if (!with_density_) return GradientPropagator::born_density(shot, drho);
    check_born_perturbation(drho.size(), setup_.points());
    const cpu::FlushDenormals flush(this->flush_denormals_);
    this->begin_shot(shot);
    const std::size_t points = setup_.points();
    const int L = setup_.mechanisms();
    const Dims3 shape = setup_.blocks.real.shape;
    std::vector<T> relative(points);  // drho / rho
    for (std::size_t i = 0; i < points; ++i) relative[i] = T(drho[i] / setup_.density[i]);
    std::array<std::vector<T>, 3> dbeta;  // d beta_a at the staggered points i + 1/2
    for (int a = 0; a < 3; ++a) {
      auto& out = dbeta[std::size_t(a)];
      out.resize(points);
      const auto& beta = setup_.beta[std::size_t(a)];
      for_each_staggered_pair(shape, a, [&](std::size_t i, std::size_t j) {
        out[i] = T(-double(beta[i]) * double(beta[i]) / (2 * setup_.rho_ref) * (drho[i] + drho[j]));
      });
    }
    const auto& stencils = this->source_stencils_.at(std::size_t(shot));
    std::vector<T> source_relative(stencils.size());  // -drho_s / rho_s
    for (std::size_t j = 0; j < stencils.size(); ++j) {
      const double rho_s = point_density(stencils[j], std::span<const double>(setup_.density), shape);
      source_relative[j] = T(-point_density_change(stencils[j], drho, shape) / rho_s);
    }
    const auto where = source_points();
    const std::vector<T> effective = lossy_ ? effective_modulus() : std::vector<T>{};
    SpectralPmlFields<T> d(points, L, setup_.active);
    std::array<fft::Buffer<T>, 3> gradient_p;  // D_a^+ p^n of the background
    std::array<std::vector<T>, 3> p_before;    // p_a^n (lossless)
    for (int a = 0; a < 3; ++a) {
      gradient_p[std::size_t(a)].assign(points, T(0));
      if (!lossy_) p_before[std::size_t(a)].resize(points);
    }
    std::vector<double> out(traces_.size(), 0.0);
    const T dt = T(setup_.dt);
    for (int n = 0; n < setup_.nt; ++n) {
      host::record(setup_.receivers, d.p.data(), out, setup_.nt, n);
      if (!lossy_)
        for (int a = 0; a < 3; ++a) std::copy(f_.p_split[a].begin(), f_.p_split[a].end(), p_before[a].begin());
      background_step(n, &gradient_p);  // f_ at n + 1 (and its divergence D^n with attenuation)
      steps_.pml_step(
          d, setup_.dt_vel2.data(),
          [&](int a) {
            T* dpa = d.p_split[a].data();
            const T* rel = relative.data();
            if (lossy_) {
              add_modulus_scattering(d, a, relative, effective, where, n);
            } else {
              const T *p1 = f_.p_split[a].data(), *p0 = p_before[std::size_t(a)].data();
              steps_.for_each_row(a, setup_.pml_b[a],
                                  [=](std::size_t i, T b) { dpa[i] += rel[i] * (p1[i] - b * (b * p0[i])); });
            }
            for_each_source_term(where, n,
                                 [&](std::size_t j, std::size_t i, T term) { dpa[i] += source_relative[j] * term; });
          },
          [&](int a) {
            T* dw = d.w[a].data();
            const T *gp = gradient_p[std::size_t(a)].data(), *db = dbeta[std::size_t(a)].data();
            steps_.for_each_row(a, setup_.pml_bs[a],
                                [=](std::size_t i, T bs) { dw[i] -= db[i] * (bs * (dt * gp[i])); });
          });
    }
    return out;
  }

  // The transposed recurrence on P_a = -(dt v^2 / dt) b_a pi_a and Omega_a = beta_a bs_a omega_a (pi_a, omega_a: the
  // multipliers of the p_a and w_a updates), from zero at nt: P_a^n = pml_adjoint_step(...) - (dt v^2 / dt) b_a R^T
  // g^n; gradient += sum_a pi_a^{n+1} q_a^n (docs/numerics.md). With a density parameter also the density's terms
  // (density_gradient).
  void adjoint(std::span<const double> residual, std::span<double> gradient, std::span<double> illumination) override {
    this->check_adjoint_arguments(residual, gradient, illumination);
    const cpu::FlushDenormals flush(this->flush_denormals_);
    const int nt = setup_.nt;
    const std::size_t points = setup_.points();
    std::array<fft::Buffer<T>, 3> P, Omega;
    for (int a = 0; a < 3; ++a) {
      P[a].assign(points, T(0));
      Omega[a].assign(points, T(0));
    }
    // (p_z, p_y, p_x) at n + 1 and n, handed out in decreasing n (in place when the history holds them).
    shot_step(ShotPass::adjoint, 0, nt);  // the adjoint pass begins (the replays of its first fields count as its)
    ReverseFields<T> fields(*history_, *this, field_values());
    const T* f_next = fields(nt);
    const T* f_now = fields(nt - 1);
    const T* vel = model();
    const T* dt_v2 = setup_.dt_vel2.data();
    const double dt = setup_.dt;
    const auto& rec = setup_.receivers;
    const host::PointScatter& scatter = this->receiver_scatter_;
    std::vector<double> residual_n(rec.offsets.size() - 1);  // the residuals of step n
    // (b_z, b_y, b_x) at each receiver point, looked up once.
    std::vector<std::array<T, 3>> b_at(scatter.point.size());
    for (std::size_t k = 0; k < b_at.size(); ++k) b_at[k] = b_of(std::size_t(scatter.point[k]));
    std::vector<double> scale(points);  // -(dt v^2) / dt, without b_a
    for (std::size_t i = 0; i < points; ++i) scale[i] = -double(dt_v2[i]) / dt;
    // With a density parameter the velocity's image of this shot is kept apart (the density's needs it alone), with
    // the sources' images and the buoyancy's sums (DensityTerms).
    std::unique_ptr<DensityTerms> density;
    if (with_density_) density = std::make_unique<DensityTerms>(*this);
    double* image = density ? density->image.data() : gradient.data();
    std::unique_ptr<MemoryAdjoint> memory;  // with attenuation
    if (lossy_) memory = std::make_unique<MemoryAdjoint>(*this);
    for (int n = nt - 1; n >= 0; --n) {
      if (!illumination.empty()) {  // the pressure p^n = p_z + p_y + p_x, summed as the forward step sums it
        const T* f0 = f_now;
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < points; ++i) {
          const double p = double(lossy_ ? f0[i] : f0[i] + f0[points + i] + f0[2 * points + i]);
          illumination[i] += p * p;
        }
      }
      if (memory) {
        // gradient += sum_a (dt X_a^{n+1} D_a^n + pi_a^{n+1} s_a^n) / V (MemoryAdjoint).
        memory->drives(P);
        memory->add_image(P, scale, f_next, n, image);
      } else {
        // gradient += sum_a pi_a^{n+1} q_a^n, pi_a = P_a / (scale b_a).
        for (int a = 0; a < 3; ++a) {
          const T *Pa = P[a].data(), *p1 = f_next + a * points, *p0 = f_now + a * points;
          const double* s = scale.data();
          double* g = image;
          steps_.for_each_row(a, setup_.pml_b[a], [=](std::size_t i, T b) {
            g[i] += double(Pa[i]) / (s[i] * double(b)) * double(pml_pressure_derivative(p1[i], p0[i], b, vel[i]));
          });
        }
      }
      if (density) density->add_sources(P, scale, n);
      if (n == 0) break;  // P^0 would multiply nothing (and Omega^{1/2} meets p^0 = 0)
      if (memory) memory->step(P);
      steps_.pml_adjoint_step({P[0].data(), P[1].data(), P[2].data()},
                              {Omega[0].data(), Omega[1].data(), Omega[2].data()}, dt_v2,
                              memory ? memory->drive() : std::array<const T*, 3>{});
      if (density) density->add_buoyancy(Omega, f_now);
      for (std::size_t r = 0; r < residual_n.size(); ++r) residual_n[r] = residual[r * nt + n];  // contiguous
      host::for_each_scattered(scatter, [&](std::size_t k, index_t point, double factor, std::int32_t r) {
        const std::size_t i = std::size_t(point);
        const double g = factor * residual_n[std::size_t(r)] * scale[i];
        const std::array<T, 3>& b = b_at[k];
        for (int a = 0; a < 3; ++a) P[a][i] += T(g * double(b[std::size_t(a)]));
      });
      f_next = f_now;
      f_now = fields(n - 1);
      shot_step(ShotPass::adjoint, nt - n, nt);
    }
    if (density) {
      for (std::size_t i = 0; i < points; ++i) gradient[i] += density->image[i];
      density_gradient_ = density->gradient();
    }
  }

 private:
  // The density's share of the gradient (docs/numerics.md, "Adjoint of the spectral scheme"), at fixed velocity:
  //  - dt v^2 (rho / rho_ref) and the sources' factors are proportional to rho at each point: the velocity's image
  //    (dJ/dV) times V / rho;
  //  - a source's factor is inversely proportional to its rho_s (a |w|-weighted mean of its points' densities):
  //    -S_j / rho_s d rho_s / d rho_p, S_j = sum_n sum_i sum_a pi_a^{n+1} pattern_j(i) amplitude_j^n;
  //  - beta_a = 2 rho_ref / (rho_i + rho_{i+1}) at the half node i + 1/2: dJ/d beta_a = -(dt / beta_a) sum_n
  //    Omega_a^{n+1/2} D_a^+ p^n and d beta_a / d rho = -beta_a^2 / (2 rho_ref) for both nodes.
  struct DensityTerms {
    SpectralPmlGradient& g;
    std::vector<double> image;                    // dJ/dV of the shot
    std::array<std::vector<double>, 3> buoyancy;  // sum_n Omega_a^{n+1/2} D_a^+ p^n
    std::vector<std::vector<std::size_t>> where;  // per source: its pattern's nonzero points (source_points)
    std::vector<double> source_image;             // S_j
    fft::Buffer<T> p;                             // p^n
    std::array<fft::Buffer<T>, 3> gradient_p;     // D_a^+ p^n

    explicit DensityTerms(SpectralPmlGradient& owner) : g(owner) {
      const std::size_t n = g.setup_.points();
      image.assign(n, 0.0);
      for (int a = 0; a < 3; ++a) {
        buoyancy[std::size_t(a)].assign(n, 0.0);
        gradient_p[std::size_t(a)].assign(n, T(0));
      }
      p.assign(n, T(0));
      where = g.source_points();
      source_image.assign(where.size(), 0.0);
    }
    // S_j += sum_i pattern_j(i) amplitude_j^n sum_a pi_a^{n+1}(i) (the active components, which take the source).
    void add_sources(const std::array<fft::Buffer<T>, 3>& P, const std::vector<double>& scale, int n) {
      g.for_each_source_term(where, n, [&](std::size_t j, std::size_t i, T term) {
        source_image[j] += g.pi_sum(P, scale, i) * double(term);
      });
    }
    // buoyancy_a += Omega_a^{n+1/2} D_a^+ p^n, p^n summed from the history's components as the forward step sums them.
    void add_buoyancy(const std::array<fft::Buffer<T>, 3>& Omega, const T* f_now) {
      const std::size_t n = p.size();
      T* pn = p.data();
      if (g.lossy_)  // the history's field is (p, D_z, D_y, D_x)
        std::copy_n(f_now, n, pn);
      else
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < n; ++i) pn[i] = f_now[i] + f_now[n + i] + f_now[2 * n + i];
      g.steps_.gradient_plus(pn, {gradient_p[0].data(), gradient_p[1].data(), gradient_p[2].data()});
      for (int a = 0; a < 3; ++a) {
        if (!g.setup_.active[std::size_t(a)]) continue;
        double* out = buoyancy[std::size_t(a)].data();
        const T *om = Omega[std::size_t(a)].data(), *dp = gradient_p[std::size_t(a)].data();
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < n; ++i) out[i] += double(om[i]) * double(dp[i]);
      }
    }
    std::vector<double> gradient() const {
      const auto& s = g.setup_;
      const std::size_t n = s.points();
      const Dims3 shape = s.blocks.real.shape;
      std::vector<double> out(n);
      for (std::size_t i = 0; i < n; ++i) out[i] = image[i] * double(g.vel2dt2_[i]) / s.density[i];
      const double c = s.dt / (2 * s.rho_ref);
      for (int a = 0; a < 3; ++a) {
        if (!s.active[std::size_t(a)]) continue;
        const auto& beta = s.beta[std::size_t(a)];
        const auto& sum = buoyancy[std::size_t(a)];
        for_each_staggered_pair(shape, a, [&](std::size_t i, std::size_t j) {
          const double term = c * double(beta[i]) * sum[i];  // the half node i + 1/2: nodes i and j
          out[i] += term;
          out[j] += term;
        });
      }
      const auto& stencils = g.source_stencils_.at(std::size_t(g.history_shot_));
      for (std::size_t k = 0; k < stencils.size(); ++k) {
        const double rho_s = point_density(stencils[k], std::span<const double>(s.density), shape);
        const std::vector<double> d = point_density_derivative(stencils[k]);
        for (std::size_t q = 0; q < d.size(); ++q) {
          const auto& pt = stencils[k].points[q];
          out[(std::size_t(pt.iz) * shape[1] + pt.iy) * shape[2] + pt.ix] -= source_image[k] / rho_s * d[q];
        }
      }
      return out;
    }
  };

  // The attenuation's share of the adjoint (docs/numerics.md, "Adjoint of the spectral scheme", "With attenuation"):
  // the memory adjoints M_{l,a} (active components), the drives X_a of the velocity adjoint's D_a^+, and the velocity
  // image dJ/dV = sum_n sum_a (dt X_a^{n+1} D_a^n + pi_a^{n+1} s_a^n) / V, D_a^n = D_a^- w_a^{n+1/2} from the history
  // (its field (p^n, D^{n-1})) and s_a^n the sources' term of step n.
  struct MemoryAdjoint {
    SpectralPmlGradient& g;
    std::vector<fft::Buffer<T>> M;                // [a * mechanisms + l] (empty for an inactive axis)
    std::array<fft::Buffer<T>, 3> X;              // X_a of the current P, M
    std::vector<T> half_dt_G_over_K;              // (dt / 2) sum_l g_l / K
    std::vector<T> inverse_K;                     // 1 / K, K = dt v_U^2 (the p_a update's factor)
    std::vector<std::vector<std::size_t>> where;  // the sources' points (source_points)

    explicit MemoryAdjoint(SpectralPmlGradient& owner) : g(owner), where(owner.source_points()) {
      const auto& s = g.setup_;
      const std::size_t n = s.points();
      const int L = s.mechanisms();
      for (int a = 0; a < 3; ++a)
        for (int l = 0; l < L; ++l) M.emplace_back(s.active[std::size_t(a)] ? n : 0, T(0));
      for (auto& x : X) x.assign(n, T(0));
      half_dt_G_over_K.resize(n);
      inverse_K.resize(n);
      for (std::size_t i = 0; i < n; ++i) {
        const double K = double(s.dt_vel2[i]);
        half_dt_G_over_K[i] = T(0.5 * s.dt * g.drive_sum(i) / K);
        inverse_K[i] = T(1 / K);
      }
    }
    // X_a = pml_adjoint_drive(P_a, (dt / 2) G / K, sum_l g_l M_{l,a}) (X_a = P_a on an inactive axis).
    void drives(const std::array<fft::Buffer<T>, 3>& P) {
      const auto& s = g.setup_;
      const std::size_t n = s.points();
      const int L = s.mechanisms();
      for (int a = 0; a < 3; ++a) {
        T* x = X[std::size_t(a)].data();
        const T* p = P[std::size_t(a)].data();
        if (!s.active[std::size_t(a)]) {
          std::copy_n(p, n, x);
          continue;
        }
        const T* h = half_dt_G_over_K.data();
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < n; ++i) {
          T sum = 0;
          for (int l = 0; l < L; ++l) sum += s.sls_drive[std::size_t(l)][i] * M[std::size_t(a * L + l)][i];
          x[i] = pml_adjoint_drive(p[i], h[i], sum);
        }
      }
    }
    // M_{l,a} <- pml_adjoint_memory(M_{l,a}, a_l, dt / 2, P_a / K), from P before the step.
    void step(const std::array<fft::Buffer<T>, 3>& P) {
      const auto& s = g.setup_;
      const std::size_t n = s.points();
      const int L = s.mechanisms();
      const T half_dt = T(0.5 * s.dt);
      for (int a = 0; a < 3; ++a) {
        if (!s.active[std::size_t(a)]) continue;
        const T *p = P[std::size_t(a)].data(), *k = inverse_K.data();
        for (int l = 0; l < L; ++l) {
          T* m = M[std::size_t(a * L + l)].data();
          const T decay = s.sls_decay[std::size_t(l)];
#pragma omp parallel for schedule(static)
          for (std::size_t i = 0; i < n; ++i) m[i] = pml_adjoint_memory(m[i], decay, half_dt, p[i] * k[i]);
        }
      }
    }
    std::array<const T*, 3> drive() const { return {X[0].data(), X[1].data(), X[2].data()}; }
    // image += sum_a (dt X_a D_a^n + pi_a s_a^n) / V, D_a^n in f_next (the field after step n: p^{n+1}, D^n).
    void add_image(const std::array<fft::Buffer<T>, 3>& P, const std::vector<double>& scale, const T* f_next, int n,
                   double* image) const {
      const auto& s = g.setup_;
      const std::size_t points = s.points();
      const double dt = s.dt;
      const T* V = g.vel2dt2_.data();
      for (int a = 0; a < 3; ++a) {
        if (!s.active[std::size_t(a)]) continue;
        const T *x = X[std::size_t(a)].data(), *d = f_next + std::size_t(1 + a) * points;
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < points; ++i) image[i] += dt * double(x[i]) * double(d[i]) / double(V[i]);
      }
      g.for_each_source_term(where, n, [&](std::size_t, std::size_t i, T term) {
        image[i] += g.pi_sum(P, scale, i) * double(term) / double(V[i]);
      });
    }
  };

  // Per source, the points where its pattern is nonzero.
  std::vector<std::vector<std::size_t>> source_points() const {
    std::vector<std::vector<std::size_t>> out;
    for (const auto& pattern : sources_.patterns) {
      auto& w = out.emplace_back();
      for (std::size_t i = 0; i < pattern.size(); ++i)
        if (pattern[i] != T(0)) w.push_back(i);
    }
    return out;
  }
  // f(j, i, pattern_j(i) amplitude_j^n) for every source j with a nonzero amplitude at step n and its points
  // `where[j]`: the term the step adds to each active component at i.
  template <class F>
  void for_each_source_term(const std::vector<std::vector<std::size_t>>& where, int n, F&& f) const {
    for (std::size_t j = 0; j < where.size(); ++j) {
      const T amplitude = T(sources_.amplitudes[j][std::size_t(n)]);
      if (amplitude == T(0)) continue;
      const T* pattern = sources_.patterns[j].data();
      for (std::size_t i : where[j]) f(j, i, pattern[i] * amplitude);
    }
  }
  // sum_l g_l at point i (attenuation's drives).
  double drive_sum(std::size_t i) const {
    double G = 0;
    for (int l = 0; l < setup_.mechanisms(); ++l) G += double(setup_.sls_drive[std::size_t(l)][i]);
    return G;
  }
  // sum over the active components of pi_a = P_a / (scale b_a) at point i.
  double pi_sum(const std::array<fft::Buffer<T>, 3>& P, const std::vector<double>& scale, std::size_t i) const {
    const std::array<T, 3> b = b_of(i);
    double pi = 0;
    for (int a = 0; a < 3; ++a)
      if (setup_.active[std::size_t(a)]) pi += double(P[std::size_t(a)][i]) / (scale[i] * double(b[std::size_t(a)]));
    return pi;
  }

  // born() with attenuation: after the perturbation's step of component a, dp_a += (dV / V) (-b (K - (dt / 2) G) D_a +
  // s_a) and dr_{l,a} += (dV / V) g_l D_a, D_a the background's D_a^- w_a^{n+1/2} (docs/numerics.md).
  std::vector<double> born_lossy(const std::vector<T>& dm) {
    const std::size_t points = setup_.points();
    SpectralPmlFields<T> d(points, setup_.mechanisms(), setup_.active);
    std::vector<double> out(traces_.size(), 0.0);
    const auto where = source_points();
    std::vector<T> relative(points);  // dV / V
    for (std::size_t i = 0; i < points; ++i) relative[i] = T(double(dm[i]) / double(vel2dt2_[i]));
    const std::vector<T> effective = effective_modulus();
    for (int n = 0; n < setup_.nt; ++n) {
      host::record(setup_.receivers, d.p.data(), out, setup_.nt, n);
      background_step(n);  // f_ at n + 1, its divergence D^n
      steps_.pml_step(d, setup_.dt_vel2.data(),
                      [&](int a) { add_modulus_scattering(d, a, relative, effective, where, n); });
    }
    return out;
  }
  // -(K - (dt / 2) G) at every point: the factor of D_a in p_a^{n+1} once r^{n+1} is substituted.
  std::vector<T> effective_modulus() const {
    const std::size_t points = setup_.points();
    std::vector<T> out(points);
    for (std::size_t i = 0; i < points; ++i) out[i] = T(-(double(setup_.dt_vel2[i]) - 0.5 * setup_.dt * drive_sum(i)));
    return out;
  }
  // With attenuation, the scattering of a relative perturbation `relative` of K, the drives and the sources' factors
  // (dV / V, or drho / rho at fixed velocity) after the perturbation's step of component a: dp_a += relative (-b (K -
  // (dt / 2) G) D_a + s_a) and dr_{l,a} += relative g_l D_a, D_a the background's D_a^- w_a^{n+1/2}.
  void add_modulus_scattering(SpectralPmlFields<T>& d, int a, const std::vector<T>& relative,
                              const std::vector<T>& effective, const std::vector<std::vector<std::size_t>>& where,
                              int n) const {
    const std::size_t points = setup_.points();
    const int L = setup_.mechanisms();
    T* dpa = d.p_split[a].data();
    const T *D = f_.divergence[std::size_t(a)].data(), *rel = relative.data(), *e = effective.data();
    steps_.for_each_row(a, setup_.pml_b[a], [=](std::size_t i, T b) { dpa[i] += rel[i] * (b * e[i] * D[i]); });
    for_each_source_term(where, n, [&](std::size_t, std::size_t i, T term) { dpa[i] += rel[i] * term; });
    for (int l = 0; l < L; ++l) {
      T* r = d.memory[std::size_t(a * L + l)].data();
      const T* gl = setup_.sls_drive[std::size_t(l)].data();
#pragma omp parallel for schedule(static)
      for (std::size_t i = 0; i < points; ++i) r[i] += rel[i] * (gl[i] * D[i]);
    }
  }

  // (b_z, b_y, b_x) at point i (one rank: (nz, ny, nx) order).
  std::array<T, 3> b_of(std::size_t i) const {
    const FieldLayout& L = setup_.layout;
    const std::size_t x = i % L.nx, y = (i / L.nx) % L.ny, z = i / (std::size_t(L.nx) * L.ny);
    return {setup_.pml_b[0][z], setup_.pml_b[1][y], setup_.pml_b[2][x]};
  }
  // V = (v dt)^2 (without a density model the source factor: the same values).
  void set_vel2dt2() {
    const double dt = setup_.dt;
    for (std::size_t i = 0; i < vel2dt2_.size(); ++i) {
      const double v2 = this->velocity_[i] * this->velocity_[i];
      vel2dt2_[i] = T(v2 * dt * dt);
    }
  }
  void model_changed() override {
    Base::model_changed();
    set_vel2dt2();
  }
  const T* model() const override { return vel2dt2_.data(); }
  void reset_state() override {  // (a new shot: add_density_gradient refuses until its adjoint)
    f_.reset();
    density_gradient_.clear();
  }
  // With attenuation the step leaves each component's D_a^- w_a^{n+1/2} in f_.divergence; with `gradient`, D_a^+ p^n
  // there (born_density).
  void background_step(int n, std::array<fft::Buffer<T>, 3>* gradient = nullptr) {
    const std::size_t points = setup_.points();
    steps_.pml_step(
        f_, setup_.dt_vel2.data(), sources_.term(0, n), sources_.patterns.size() <= 1 && !lossy_,
        [&](int a) { sources_.add(f_.p_split[a].data(), n, 1); },
        [&](int a) {
          if (gradient) std::copy_n(steps_.component_derivative(), points, (*gradient)[std::size_t(a)].data());
        });
    // (step(), and Born runs, which step here)
    forward_step(n + 1, setup_.nt, [&] { return host::field_stats(setup_.layout, f_.p.data()); });
  }

  // ForwardStepper: the state is p_a and w_a (p is their sum, recomputed on restore), with attenuation also the
  // memory variables and the last step's D_a; the field (p_z, p_y, p_x), with attenuation (p, D_z, D_y, D_x) (the
  // velocity image needs D_a^n; p^n the illumination and the density's buoyancy).
  template <class Self, class F>
  static void for_each_state_array(Self& self, F&& f) {
    for (auto& p : self.f_.p_split) f(p);
    for (auto& w : self.f_.w) f(w);
    if (!self.lossy_) return;
    for (auto& r : self.f_.memory) f(r);
    for (auto& d : self.f_.divergence) f(d);
  }
  std::size_t state_values() const override {
    std::size_t values = 0;
    for_each_state_array(*this, [&](const auto& a) { values += a.size(); });
    return values;
  }
  void save_state(std::span<T> out) const override {
    auto it = out.begin();
    for_each_state_array(*this, [&](const auto& a) { it = std::copy(a.begin(), a.end(), it); });
  }
  void restore_state(std::span<const T> in) override {
    auto it = in.begin();
    for_each_state_array(*this, [&](auto& a) {
      std::copy(it, it + std::ptrdiff_t(a.size()), a.begin());
      it += std::ptrdiff_t(a.size());
    });
    steps_.sum_components(f_);
  }
  void step(int n) override {
    host::record(setup_.receivers, f_.p.data(), traces_, setup_.nt, n);
    background_step(n);
  }
  std::size_t field_values() const override { return (lossy_ ? 4 : 3) * setup_.points(); }
  void copy_field(std::span<T> out) const override {
    auto it = out.begin();
    if (lossy_) {
      it = std::copy(f_.p.begin(), f_.p.end(), it);
      for (const auto& d : f_.divergence) it = std::copy(d.begin(), d.end(), it);
      return;
    }
    for (int a = 0; a < 3; ++a) it = std::copy(f_.p_split[a].begin(), f_.p_split[a].end(), it);
  }

  SpectralPmlFields<T> f_;  // with attenuation its `divergence`: D_a^- w_a^{n+1/2} of the last step
  bool lossy_;              // attenuation: memory variables
  std::vector<T> vel2dt2_;  // V = (v dt)^2: the scheme's parameter (dt v^2 and the source factor carry rho / rho_ref)
  bool with_density_;       // inversion.parameters names "density"
  std::vector<double> density_gradient_;  // of the last adjoint()
};

}  // namespace

std::unique_ptr<GradientPropagator> make_spectral_cpu_gradient(const Case& c, const Plan& plan,
                                                               const HistoryChoice& history) {
  const bool pml = c.boundary.spectral_absorber == SpectralAbsorber::pml;
  if (c.run.precision == Precision::fp64) {
    if (pml) return std::make_unique<SpectralPmlGradient<double>>(c, plan, history);
    return std::make_unique<SpectralDampingGradient<double>>(c, plan, history);
  }
  if (pml) return std::make_unique<SpectralPmlGradient<float>>(c, plan, history);
  return std::make_unique<SpectralDampingGradient<float>>(c, plan, history);
}

}  // namespace specwave
