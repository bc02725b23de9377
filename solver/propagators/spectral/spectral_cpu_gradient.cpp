// Spectral (k-space) forward, Born and adjoint operators on the CPU, both absorbers, one rank (docs/numerics.md,
// "Adjoint of the spectral scheme"). The forward steps are those of the forward propagator
// (solver/propagators/spectral/spectral_cpu_steps.hpp: same transforms, same per-point functions, same bits); the
// adjoint of each absorber is the same kind of step on scaled adjoint variables:
//  - damping layer: nu = (v dt)^2 mu follows the forward step itself, the adjoint sources injected like sources;
//  - split-field PML: P_a = -(v dt)^2 / dt^2 b_a pi_a and Omega_a = bs_a omega_a follow the forward's two updates
//    with D^+ and D^- wired the other way round (SpectralCpuSteps::pml_adjoint_step).
#include <algorithm>
#include <array>
#include <stdexcept>

#include "kernels/cpu/flush_denormals.hpp"
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
    set_spectral_model(setup_, velocity.data());  // one rank: the layout order is (nz, ny, nx)
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
        receivers_(c, plan) {
    traces_.assign(n_receivers() * std::size_t(setup_.nt), 0.0);
  }

  std::string precision() const { return sizeof(T) == 4 ? "fp32" : "fp64"; }
  std::size_t n_receivers() const { return setup_.receivers.offsets.size() - 1; }
  // (v dt)^2 at every point as the scheme holds it: the damping layer's vel2dt2, the PML's source factor.
  virtual const T* model() const = 0;
  virtual void reset_state() = 0;

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

// The split-field PML: w_a^{n+1/2} = bs (bs w_a - dt D_a^+ p^n), p_a^{n+1} = b (b p_a^n - (V / dt) D_a^- w_a^{n+1/2}) +
// V s^n.
template <class T>
class SpectralPmlGradient final : public SpectralGradientBase<T> {
  using Base = SpectralGradientBase<T>;
  using Base::setup_, Base::steps_, Base::sources_, Base::traces_, Base::history_;

 public:
  SpectralPmlGradient(const Case& c, const Plan& plan, const HistoryChoice& history)
      : Base(c, plan, history), f_(setup_.points()) {
    // Lossless only: make_gradient_propagator refuses [attenuation] with the spectral method (its adjoint has no
    // memory variables), and these fields have none.
    if (setup_.mechanisms() > 0) throw std::logic_error("SpectralPmlGradient: the spectral adjoint is lossless");
  }

  std::string name() const override { return "spectral-cpu-pml-" + this->precision(); }

  // The perturbation's fields follow the same step, each dp_a^{n+1} with the source dV q_a^n,
  // q_a^n = (p_a^{n+1} - b_a^2 p_a^n) / V, in lockstep with the background.
  std::vector<double> born(int shot, std::span<const double> dm_in) override {
    const std::vector<T> dm = this->perturbation(dm_in);
    const cpu::FlushDenormals flush(this->flush_denormals_);
    this->begin_shot(shot);
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

  // The transposed recurrence on P_a = -(V / dt^2) b_a pi_a and Omega_a = bs_a omega_a (pi_a, omega_a: the
  // multipliers of the p_a and w_a updates), from zero at nt: P_a^n = pml_adjoint_step(...) - (V / dt^2) b_a R^T g^n;
  // gradient += sum_a pi_a^{n+1} q_a^n (docs/numerics.md).
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
    ReverseFields<T> fields(*history_, *this, 3 * points);
    const T* f_next = fields(nt);
    const T* f_now = fields(nt - 1);
    const T* vel = model();
    const T* dt_v2 = setup_.dt_vel2.data();
    const double dt = setup_.dt;
    const FieldLayout& L = setup_.layout;
    const auto& rec = setup_.receivers;
    const host::PointScatter& scatter = this->receiver_scatter_;
    std::vector<double> residual_n(rec.offsets.size() - 1);  // the residuals of step n
    // (b_z, b_y, b_x) at each receiver point, looked up once.
    std::vector<std::array<T, 3>> b_at(scatter.point.size());
    for (std::size_t k = 0; k < b_at.size(); ++k) {
      const std::size_t i = std::size_t(scatter.point[k]);
      const std::size_t x = i % L.nx, y = (i / L.nx) % L.ny, z = i / (std::size_t(L.nx) * L.ny);
      b_at[k] = {setup_.pml_b[0][z], setup_.pml_b[1][y], setup_.pml_b[2][x]};
    }
    std::vector<double> scale(points);  // -(V / dt^2) = -(dt v^2) / dt, without b_a
    for (std::size_t i = 0; i < points; ++i) scale[i] = -double(dt_v2[i]) / dt;
    for (int n = nt - 1; n >= 0; --n) {
      if (!illumination.empty()) {  // the pressure p^n = p_z + p_y + p_x, summed as the forward step sums it
        const T* f0 = f_now;
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < points; ++i) {
          const double p = double(f0[i] + f0[points + i] + f0[2 * points + i]);
          illumination[i] += p * p;
        }
      }
      // gradient += sum_a pi_a^{n+1} q_a^n, pi_a = P_a / (scale b_a).
      for (int a = 0; a < 3; ++a) {
        const T *Pa = P[a].data(), *p1 = f_next + a * points, *p0 = f_now + a * points;
        const double* s = scale.data();
        double* g = gradient.data();
        steps_.for_each_row(a, setup_.pml_b[a], [=](std::size_t i, T b) {
          g[i] += double(Pa[i]) / (s[i] * double(b)) * double(pml_pressure_derivative(p1[i], p0[i], b, vel[i]));
        });
      }
      if (n == 0) break;  // P^0 would multiply nothing
      steps_.pml_adjoint_step({P[0].data(), P[1].data(), P[2].data()},
                              {Omega[0].data(), Omega[1].data(), Omega[2].data()}, dt_v2);
      for (std::size_t r = 0; r < residual_n.size(); ++r) residual_n[r] = residual[r * nt + n];  // contiguous
      host::for_each_scattered(scatter, [&](std::size_t k, index_t point, double factor, std::int32_t r) {
        const std::size_t i = std::size_t(point);
        const double g = factor * residual_n[std::size_t(r)] * scale[i];
        const std::array<T, 3>& b = b_at[k];
        for (int a = 0; a < 3; ++a) P[a][i] += T(g * double(b[std::size_t(a)]));
      });
      f_next = f_now;
      f_now = fields(n - 1);
    }
  }

 private:
  const T* model() const override { return setup_.source_factor.data(); }  // the PML's source factor is (v dt)^2
  void reset_state() override { f_.reset(); }
  void background_step(int n) {
    steps_.pml_step(f_, setup_.dt_vel2.data(), sources_.term(0, n), sources_.patterns.size() <= 1,
                    [&](int a) { sources_.add(f_.p_split[a].data(), n, 1); });
  }

  // ForwardStepper: the state is p_a and w_a (p is their sum, recomputed on restore); the field (p_z, p_y, p_x).
  std::size_t state_values() const override { return 6 * setup_.points(); }
  void save_state(std::span<T> out) const override {
    auto it = out.begin();
    for (int a = 0; a < 3; ++a) it = std::copy(f_.p_split[a].begin(), f_.p_split[a].end(), it);
    for (int a = 0; a < 3; ++a) it = std::copy(f_.w[a].begin(), f_.w[a].end(), it);
  }
  void restore_state(std::span<const T> in) override {
    const std::size_t n = setup_.points();
    for (int a = 0; a < 3; ++a) std::copy(in.begin() + a * n, in.begin() + (a + 1) * n, f_.p_split[a].begin());
    for (int a = 0; a < 3; ++a) std::copy(in.begin() + (3 + a) * n, in.begin() + (4 + a) * n, f_.w[a].begin());
    steps_.sum_components(f_);
  }
  void step(int n) override {
    host::record(setup_.receivers, f_.p.data(), traces_, setup_.nt, n);
    background_step(n);
  }
  std::size_t field_values() const override { return 3 * setup_.points(); }
  void copy_field(std::span<T> out) const override {
    auto it = out.begin();
    for (int a = 0; a < 3; ++a) it = std::copy(f_.p_split[a].begin(), f_.p_split[a].end(), it);
  }

  SpectralPmlFields<T> f_;
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
