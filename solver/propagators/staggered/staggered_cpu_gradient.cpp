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
#include "solver/case/errors.hpp"
#include "solver/forward/progress.hpp"
#include "solver/plan/model.hpp"
#include "solver/plan/plan.hpp"
#include "solver/plan/shot_receivers.hpp"
#include "solver/propagators/gradient_propagator.hpp"
#include "solver/propagators/history/wavefield_history.hpp"
#include "solver/propagators/host_field.hpp"
#include "solver/propagators/staggered/staggered_setup.hpp"

namespace specwave {
namespace {

template <class T>
class StaggeredCpuGradient final : public GradientPropagator, private ForwardStepper<T> {
 public:
  StaggeredCpuGradient(const Case& c, const Plan& plan, const HistoryChoice& history)
      : dt_(plan.dt),
        v_limit_(plan.v_reference / plan.cfl),
        speedup_(plan.unrelaxed_speedup),
        case_(c),
        flush_denormals_(c.run.flush_denormals),
        source_stencils_(plan.sources),
        wavelets_(plan.wavelets),
        sls_(plan.sls),
        q_(plan.model.q),
        setup_(make_staggered_setup<T>(c, plan)),
        state_(setup_),
        divergence_(std::size_t(setup_.layout.interior_points()), T(0)),
        with_density_(c.inversion.density_parameter),
        history_(make_history<T>(history)),
        receivers_(c, plan) {
    set_receivers(plan.receivers);
    if (with_density_)
      for (auto& dw : increment_) dw.assign(setup_.layout.size(), T(0));
  }

  std::string name() const override {
    return std::string(setup_.sls_drive.empty() ? "staggered-cpu-" : "visco-staggered-cpu-") +
           (sizeof(T) == 4 ? "fp32" : "fp64");
  }
  std::string history_name() const override { return history_->name(); }
  std::size_t history_bytes() const override { return history_->bytes(); }
  long long history_forward_steps() const override { return history_->forward_steps(); }

  void set_velocity(std::span<const double> velocity) override {
    check_model_velocity(velocity, setup_.velocity.size(), v_limit_, dt_);
    check_stable(velocity, setup_.density);
    setup_.set_velocity(velocity, sls_, q_);
  }

  void set_density(std::span<const double> density) override {
    check_density(density);
    check_stable(setup_.velocity, density);
    setup_.set_density(density, sls_, q_);
  }
  void set_model(std::span<const double> velocity, std::span<const double> density) override {
    if (density.empty()) return set_velocity(velocity);
    check_model_velocity(velocity, setup_.velocity.size(), v_limit_, dt_);
    check_density(density);
    check_stable(velocity, density);
    setup_.set_density(density, sls_, q_);
    setup_.set_velocity(velocity, sls_, q_);
  }
  std::vector<double> density() const override { return setup_.density; }
  void add_density_gradient(std::span<double> out) const override {
    add_kept_density_gradient(*this, with_density_, density_gradient_, out);
  }

  std::vector<double> vel2dt2() const override {
    std::vector<double> out(setup_.velocity.size());
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = setup_.velocity[k] * setup_.velocity[k] * dt_ * dt_;
    return out;
  }

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

  // Background and perturbation in lockstep: the perturbation's step, then the scattering of step n at every node,
  // du += (dm / m) (-dt K + dt/2 sum_l g_l) D^n and dr_l += (dm / m) g_l D^n, and at the source points
  // du += (dm / m) factor F^n; the free surface's zeroed plane last.
  std::vector<double> born(int shot, std::span<const double> dm) override {
    const FieldLayout& L = setup_.layout;
    check_born_perturbation(dm.size(), std::size_t(L.interior_points()));
    std::vector<T> relative(dm.size());  // dm / m
    for (std::size_t k = 0; k < dm.size(); ++k)
      relative[k] = T(dm[k] / (setup_.velocity[k] * setup_.velocity[k] * dt_ * dt_));
    return born_run(shot, relative);
  }

  // F_rho drho, the density's Born operator at fixed velocity: the scattering of born() with drho / rho for dm / m (dt
  // K, the drives and the sources' factors are proportional to rho at each point), each half node's w_a gaining
  // (d(dt beta) / (dt beta)) dw_a^n between the velocity and the pressure steps (dw_a the background's increment, dt
  // beta = 2 dt / (rho_0 + rho_1) of its two nodes), and each source's factor -(drho_s / rho_s) of itself.
  std::vector<double> born_density(int shot, std::span<const double> drho) override {
    if (!with_density_) return GradientPropagator::born_density(shot, drho);
    const FieldLayout& L = setup_.layout;
    check_born_perturbation(drho.size(), std::size_t(L.interior_points()));
    std::vector<T> relative(drho.size());  // drho / rho
    for (std::size_t k = 0; k < drho.size(); ++k) relative[k] = T(drho[k] / setup_.density[k]);
    std::array<std::vector<T>, 3> buoyancy;  // d(dt beta_a) / (dt beta_a) = -(dt beta_a) (drho_0 + drho_1) / (2 dt)
    for (int axis = 0; axis < 3; ++axis) {
      auto& out = buoyancy[std::size_t(axis)];
      out.assign(std::size_t(L.size()), T(0));
      const T* bdt = setup_.bdt[std::size_t(axis)].data();
      for_each_half_node(axis, [&](index_t i, std::size_t n0, std::size_t n1) {
        out[std::size_t(i)] = T(-double(bdt[i]) / (2 * dt_) * (drho[n0] + drho[n1]));
      });
    }
    const auto& stencils = source_stencils_.at(std::size_t(shot));
    const std::array<int, 3> shape{L.nz, L.ny, L.nx};
    std::vector<T> source_relative(stencils.size());  // -drho_s / rho_s
    for (std::size_t j = 0; j < stencils.size(); ++j) {
      const double rho_s = point_density(stencils[j], std::span<const double>(setup_.grid_density), shape);
      source_relative[j] = T(-point_density_change(stencils[j], drho, shape) / rho_s);
    }
    return born_run(shot, relative, &buoyancy, source_relative);
  }

  // The Born run of a relative perturbation of dt K, the drives and the sources' factors (`relative`, at the nodes),
  // with `buoyancy` (born_density) the relative perturbations of dt beta_a at the half nodes and `source_relative`
  // one more of each source's factor.
  std::vector<double> born_run(int shot, const std::vector<T>& relative,
                               const std::array<std::vector<T>, 3>* buoyancy = nullptr,
                               const std::vector<T>& source_relative = {}) {
    const FieldLayout& L = setup_.layout;
    const cpu::FlushDenormals flush(flush_denormals_);
    begin_shot(shot);
    StaggeredFields<T> du(setup_);
    std::vector<double> out(traces_.size(), 0.0);
    const StaggeredStep<T> s = du.step(setup_);
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
      const T half_dt = T(dt_ / 2);
#pragma omp parallel for collapse(2) schedule(static)
      for (int z = 0; z < L.nz; ++z)
        for (int y = 0; y < L.ny; ++y)
          for (int x = 0; x < L.nx; ++x) {
            const std::size_t k = (std::size_t(z) * L.ny + y) * L.nx + x;
            const T scattered = relative[k] * divergence_[k];
            T sum = 0;
            for (std::size_t l = 0; l < du.memory.size(); ++l) {
              const T g = setup_.sls_drive[l][k];
              du.memory[l][k] += g * scattered;
              sum += g;
            }
            du.u[L.index(z, y, x)] += (half_dt * sum - setup_.kdt[L.index(z, y, x)]) * scattered;
          }
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
    StaggeredAdjointStep<T> s;
    s.layout = f.layout;
    s.u = f.u;
    for (int k = 0; k < 3; ++k) {
      s.w[k] = f.w[k], s.bdt[k] = f.bdt[k], s.pml[k] = f.pml[k];
      s.q[k] = a.q[std::size_t(k)].data();
      s.e[k] = a.e[std::size_t(k)].data();
    }
    s.kdt = f.kdt;
    s.coef = f.coef;
    s.free_surface = f.free_surface;
    s.mechanisms = f.mechanisms;
    for (int l = 0; l < s.mechanisms; ++l) s.r[l] = f.r[l], s.g[l] = f.g[l], s.decay[l] = f.decay[l];
    s.half_dt = f.half_dt;
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
    for (std::size_t k = 0; k < gradient.size(); ++k)
      gradient[k] += a.image[k] / (setup_.velocity[k] * setup_.velocity[k] * dt_ * dt_);
    if (!illumination.empty())
      for (std::size_t k = 0; k < illumination.size(); ++k) illumination[k] += illumination_[k];
    if (with_density_) density_gradient(*adjoint_, source_image);
  }

 private:
  void check_density(std::span<const double> density) const {
    if (density.size() != setup_.density.size())
      throw std::invalid_argument("set_density: the model must have nz * ny * nx values");
    for (std::size_t k = 0; k < density.size(); ++k)
      if (!std::isfinite(density[k]) || density[k] <= 0)
        throw Error(ExitCode::invalid_case,
                    fmt::format("model density {} kg/m^3 at flat index {} is not positive and finite", density[k], k));
  }
  void check_stable(std::span<const double> velocity, std::span<const double> density) const {
    check_staggered_stability(case_, velocity, density, speedup_, dt_);
  }
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
    shot_step(ShotPass::forward, n + 1, setup_.nt);
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

  // fn(i, n0, n1) for every half node of axis `axis` whose dt beta the step uses (-R .. n + R - 1 along it, the grid's
  // nodes along the others; i its padded index) and the two nodes whose densities make it (buoyancy_nodes).
  template <class Fn>
  void for_each_half_node(int axis, Fn&& fn) const {
    const FieldLayout& L = setup_.layout;
    const int R = setup_.coef.radius;
    int lo[3] = {0, 0, 0}, hi[3] = {L.nz, L.ny, L.nx};
    lo[axis] = -R, hi[axis] = L.extent(axis) + R;
    for (int z = lo[0]; z < hi[0]; ++z)
      for (int y = lo[1]; y < hi[1]; ++y)
        for (int x = lo[2]; x < hi[2]; ++x) {
          std::size_t n0, n1;
          setup_.buoyancy_nodes(axis, z, y, x, n0, n1);
          fn(L.index(z, y, x), n0, n1);
        }
  }

  // dJ/d rho at fixed velocity: dt K, the drives and the sources' factors are proportional to rho at each point (the
  // image over rho); dt beta_a at a half node is 2 dt / (rho_0 + rho_1) of its two nodes (buoyancy_nodes), whose
  // derivative with respect to each is -dt beta^2 / (2 dt), and dJ/d(dt beta) = sum_n w-bar dw / (dt beta); a
  // source's factor is inversely proportional to its rho_s, a mean of its stencil's densities (point_density).
  void density_gradient(const AdjointFields& a, const std::vector<double>& source_image) {
    const FieldLayout& L = setup_.layout;
    density_gradient_.assign(a.image.size(), 0.0);
    for (std::size_t k = 0; k < a.image.size(); ++k) density_gradient_[k] = a.image[k] / setup_.density[k];
    for (int axis = 0; axis < 3; ++axis) {
      const double* image = a.buoyancy[std::size_t(axis)].data();
      const T* bdt = setup_.bdt[std::size_t(axis)].data();
      for_each_half_node(axis, [&](index_t i, std::size_t n0, std::size_t n1) {
        const double term = -image[i] * double(bdt[i]) / (2 * dt_);
        density_gradient_[n0] += term;
        density_gradient_[n1] += term;
      });
    }
    const auto& stencils = source_stencils_.at(std::size_t(history_shot_));
    const std::array<int, 3> shape{L.nz, L.ny, L.nx};
    for (std::size_t j = 0; j < stencils.size(); ++j) {
      const double rho_s = point_density(stencils[j], std::span<const double>(setup_.grid_density), shape);
      const std::vector<double> d = point_density_derivative(stencils[j]);
      for (std::size_t p = 0; p < d.size(); ++p) {
        const GridPointWeight& q = stencils[j].points[p];
        density_gradient_[(std::size_t(q.iz) * L.ny + q.iy) * L.nx + q.ix] -= source_image[j] / rho_s * d[p];
      }
    }
  }

  double dt_, v_limit_, speedup_;
  Case case_;  // the grid and scheme, for check_stable
  bool flush_denormals_;
  std::vector<std::vector<PointStencil>> source_stencils_;  // [shot][source]
  std::vector<std::vector<std::vector<double>>> wavelets_;  // [shot][source][n]
  SlsFit sls_;
  std::vector<float> q_;  // the whole grid's Q (attenuation), or empty
  StaggeredSetup<T> setup_;
  StaggeredFields<T> state_;
  std::vector<T> divergence_;  // D of the last forward step (compact)
  bool with_density_;          // inversion.parameters names "density"
  std::array<std::vector<T>, 3>
      increment_;                         // dw_a of the last step (padded; density only): StaggeredStep::increment_out
  std::vector<double> density_gradient_;  // dJ/d rho of the last adjoint
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
