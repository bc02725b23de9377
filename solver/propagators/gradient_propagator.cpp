#include "solver/propagators/gradient_propagator.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "solver/case/errors.hpp"
#include "solver/forward/particle_velocity.hpp"
#include "solver/plan/model.hpp"
#include "solver/plan/plan.hpp"
#include "solver/plan/shot_receivers.hpp"
#include "solver/propagators/capabilities.hpp"

namespace specwave {

namespace {

// Particle-velocity receivers (docs/numerics.md, "Force sources and particle-velocity receivers"): the backend's
// propagator samples d . grad u; this wrapper hands out the velocity (forward and Born traces) and takes the adjoint
// source with respect to it, applying the transpose of the conversion before the backend's adjoint. Every user of
// a gradient propagator (the misfit, source estimation, migration, the Python module) then sees velocity traces.
// With a density model (the staggered scheme, the spectral method) each velocity receiver divides by its own density
// rho_r (point_density of its stencil at the current density: ReceiverDensities), so a velocity trace is v = G / rho_r
// with G independent of rho_r, and the density gradient gains dJ/d rho_r = -sum_n (dJ/dv_n) v_n / rho_r, spread over
// the stencil's points by d rho_r / d rho_p = |w_p| / sum |w| (point_density_derivative).
class ReceiverDensities {
 public:
  ReceiverDensities(const Case& c, const Plan& plan)
      : receivers_(c, plan), shape_(c.grid.shape), velocity_(c.shots.size()), densities_(c.shots.size()) {
    if (receivers_.shared()) shared_ = plan.receivers;
    for (std::size_t s = 0; s < c.shots.size(); ++s)
      for (std::size_t r = 0; r < shot_receivers(c, s).size(); ++r)
        velocity_[s].push_back(shot_receiver_component(c, s, r) != ReceiverComponent::pressure);
    set_from(std::span<const float>(plan.model.density));
  }
  void set(std::span<const double> density) { set_from(density); }
  std::span<const double> of(int shot) const { return densities_.at(std::size_t(shot)); }
  // The Born operator's receivers' term for a density perturbation drho: out_r -= v_r drho_r / rho_r (velocity traces
  // v of shot `shot`, drho_r = sum_p drho_p |w_p| / sum |w|).
  void add_born(int shot, std::span<const double> drho, std::span<const double> traces, std::span<double> out) {
    const auto& stencils = receivers_.of(shot, shared_);
    const std::size_t nt = traces.size() / std::max<std::size_t>(1, stencils.size());
    for (std::size_t r = 0; r < stencils.size(); ++r) {
      if (!velocity_[std::size_t(shot)][r]) continue;
      const double relative = point_density_change(stencils[r], drho, shape_) / densities_[std::size_t(shot)][r];
      for (std::size_t n = 0; n < nt; ++n) out[r * nt + n] -= traces[r * nt + n] * relative;
    }
  }
  // gradient += the receivers' term above for shot `shot`'s velocity traces and their adjoint source.
  void add_gradient(int shot, std::span<const double> traces, std::span<const double> adjoint_source,
                    std::span<double> gradient) {
    const auto& stencils = receivers_.of(shot, shared_);
    const std::size_t nt = traces.size() / std::max<std::size_t>(1, stencils.size());
    for (std::size_t r = 0; r < stencils.size(); ++r) {
      if (!velocity_[std::size_t(shot)][r]) continue;
      double dot = 0;
      for (std::size_t n = 0; n < nt; ++n) dot += adjoint_source[r * nt + n] * traces[r * nt + n];
      const double d_rho_r = -dot / densities_[std::size_t(shot)][r];
      const std::vector<double> share = point_density_derivative(stencils[r]);
      for (std::size_t k = 0; k < share.size(); ++k) {
        const auto& p = stencils[r].points[k];
        gradient[(std::size_t(p.iz) * shape_[1] + p.iy) * shape_[2] + p.ix] += d_rho_r * share[k];
      }
    }
  }

 private:
  template <class D>
  void set_from(std::span<const D> density) {
    for (std::size_t s = 0; s < densities_.size(); ++s) {
      const auto& stencils = receivers_.of(int(s), shared_);
      auto& out = densities_[s];
      out.assign(stencils.size(), 0.0);
      for (std::size_t r = 0; r < stencils.size(); ++r)
        if (velocity_[s][r]) out[r] = point_density(stencils[r], density, shape_);
    }
  }

  ShotReceivers receivers_;
  std::vector<PointStencil> shared_;  // the plan's receivers when every shot shares them
  std::array<int, 3> shape_;
  std::vector<std::vector<bool>> velocity_;     // [shot][receiver]: records particle velocity
  std::vector<std::vector<double>> densities_;  // [shot][receiver] (0 for pressure)
};

class VelocityReceivers final : public GradientPropagator {
 public:
  // With a density model (the staggered scheme, the spectral method): `densities` follows the density that set_density
  // and set_model set.
  VelocityReceivers(std::unique_ptr<GradientPropagator> inner, const Case& c, double dt,
                    std::unique_ptr<ReceiverDensities> densities = nullptr)
      : inner_(std::move(inner)),
        case_(c),
        dt_(dt),
        densities_(std::move(densities)),
        density_gradient_wanted_(c.inversion.density_parameter) {}
  std::string name() const override { return inner_->name(); }
  void set_velocity(std::span<const double> velocity) override { inner_->set_velocity(velocity); }
  void set_density(std::span<const double> density) override {
    inner_->set_density(density);
    if (densities_) densities_->set(density);
  }
  void set_model(std::span<const double> velocity, std::span<const double> density) override {
    inner_->set_model(velocity, density);
    if (densities_ && !density.empty()) densities_->set(density);
  }
  std::vector<double> vel2dt2() const override { return inner_->vel2dt2(); }
  std::vector<double> forward(int shot, bool keep_history) override {
    std::vector<double> t = inner_->forward(shot, keep_history);
    if (keep_history) shot_ = shot;
    particle_velocity_traces(case_, std::size_t(shot), dt_, t, densities(shot));
    if (keep_history && density_gradient_wanted_) traces_ = t;
    return t;
  }
  std::vector<double> born(int shot, std::span<const double> dvel2dt2) override {
    std::vector<double> t = inner_->born(shot, dvel2dt2);
    particle_velocity_traces(case_, std::size_t(shot), dt_, t, densities(shot));
    return t;
  }
  void adjoint(std::span<const double> adjoint_source, std::span<double> gradient,
               std::span<double> illumination) override {
    if (shot_ < 0) throw std::logic_error("adjoint: call forward(shot, true) first");
    if (density_gradient_wanted_ && densities_) {  // the receivers' own term, for add_density_gradient
      receiver_gradient_.assign(std::size_t(case_.grid.points()), 0.0);
      densities_->add_gradient(shot_, traces_, adjoint_source, receiver_gradient_);
    }
    std::vector<double> r(adjoint_source.begin(), adjoint_source.end());
    particle_velocity_adjoint(case_, std::size_t(shot_), dt_, r, densities(shot_));
    inner_->adjoint(r, gradient, illumination);
  }
  std::vector<double> born_density(int shot, std::span<const double> drho) override {
    std::vector<double> t = inner_->born_density(shot, drho);
    particle_velocity_traces(case_, std::size_t(shot), dt_, t, densities(shot));
    if (densities_) densities_->add_born(shot, drho, inner_velocity_traces(shot), t);
    return t;
  }
  std::vector<double> density() const override { return inner_->density(); }
  void add_density_gradient(std::span<double> out) const override {
    inner_->add_density_gradient(out);
    if (out.size() != receiver_gradient_.size())
      throw std::invalid_argument("add_density_gradient: call adjoint() first; out must be nz * ny * nx");
    for (std::size_t k = 0; k < out.size(); ++k) out[k] += receiver_gradient_[k];
  }
  std::string history_name() const override { return inner_->history_name(); }
  std::size_t history_bytes() const override { return inner_->history_bytes(); }
  long long history_forward_steps() const override { return inner_->history_forward_steps(); }

 private:
  // Shot `shot`'s velocity traces at the current model (a forward run without history).
  std::vector<double> inner_velocity_traces(int shot) {
    std::vector<double> t = inner_->forward(shot, false);
    particle_velocity_traces(case_, std::size_t(shot), dt_, t, densities(shot));
    return t;
  }
  std::span<const double> densities(int shot) const {
    return densities_ ? densities_->of(shot) : std::span<const double>();
  }

  std::unique_ptr<GradientPropagator> inner_;
  Case case_;  // the shots' receivers and components, and the density
  double dt_;
  std::unique_ptr<ReceiverDensities> densities_;  // null: model.density (the second-order scheme)
  bool density_gradient_wanted_;
  int shot_ = -1;                          // the shot of the last forward(shot, true)
  std::vector<double> traces_;             // its velocity traces (with a density gradient)
  std::vector<double> receiver_gradient_;  // the receivers' term of the last adjoint()
};

std::unique_ptr<GradientPropagator> backend_gradient(const Case& c, const Plan& plan, const HistoryChoice& history) {
  const Capability& row = capability(c.scheme.method, plan.backend);
  if (row.make_gradient) return row.make_gradient(c, plan, history);
  // No gradient on this backend: asking for it is refused; "auto" that picked it runs the gradient on the CPU.
  if (c.run.backend != BackendKind::auto_select) throw Error(ExitCode::invalid_case, row.no_gradient);
  return capability(c.scheme.method, BackendKind::cpu).make_gradient(c, plan, history);
}

}  // namespace

std::unique_ptr<GradientPropagator> make_gradient_propagator(const Case& c, const Plan& plan,
                                                             const HistoryChoice& history) {
  // The first-order schemes keep no boundary history: they do not run backwards (the objective refuses the key first,
  // naming the case file; this is for a caller that asks directly).
  if (c.scheme.method == Method::fdtd && c.scheme.formulation != Formulation::second_order &&
      history.storage == WavefieldStorage::boundary)
    throw Error(ExitCode::invalid_case,
                fmt::format("inversion.wavefield_storage = \"boundary\": the {} scheme does not run backwards; use "
                            "\"memory\", \"checkpoints\", \"binomial\", \"disk\" or \"auto\"",
                            to_string(c.scheme.formulation)));
  if (c.scheme.formulation == Formulation::elastic)
    return plan.backend == BackendKind::cuda ? make_elastic_cuda_gradient(c, plan, history)
                                             : make_elastic_cpu_gradient(c, plan, history);
  const bool staggered = c.scheme.formulation == Formulation::staggered;
  auto propagator = !staggered                          ? backend_gradient(c, plan, history)
                    : plan.backend == BackendKind::cuda ? make_staggered_cuda_gradient(c, plan, history)
                                                        : make_staggered_cpu_gradient(c, plan, history);
  if (!has_velocity_receivers(c)) return propagator;
  // A density model (the staggered scheme, or the spectral method with one): each velocity receiver's own density.
  std::unique_ptr<ReceiverDensities> densities;
  if (staggered || !plan.model.density.empty()) densities = std::make_unique<ReceiverDensities>(c, plan);
  return std::make_unique<VelocityReceivers>(std::move(propagator), c, plan.dt, std::move(densities));
}

void GradientPropagator::set_density(std::span<const double>) {
  throw Error(ExitCode::invalid_case,
              fmt::format("{}: this scheme has no density model (a density enters through model.densities or "
                          "model.density_dataset, which run the staggered scheme)",
                          name()));
}

void GradientPropagator::set_model(std::span<const double> velocity, std::span<const double> density) {
  if (!density.empty()) set_density(density);
  set_velocity(velocity);
}

std::vector<double> GradientPropagator::born_density(int, std::span<const double>) {
  throw Error(ExitCode::invalid_case,
              fmt::format("{}: no density Born operator: it needs a density model and inversion.parameters = "
                          "[\"velocity\", \"density\"]",
                          name()));
}

void add_kept_density_gradient(const GradientPropagator& g, bool with_density, std::span<const double> kept,
                               std::span<double> out) {
  if (!with_density) g.GradientPropagator::add_density_gradient(out);
  if (out.size() != kept.size())
    throw std::invalid_argument("add_density_gradient: call adjoint() first; out must be nz * ny * nx");
  for (std::size_t k = 0; k < out.size(); ++k) out[k] += kept[k];
}

void GradientPropagator::add_density_gradient(std::span<double>) const {
  throw Error(ExitCode::invalid_case,
              fmt::format("{}: no density gradient: it needs a density model and inversion.parameters = [\"velocity\", "
                          "\"density\"]",
                          name()));
}

void check_staggered_stability(const Case& c, std::span<const double> velocity, std::span<const double> density,
                               double speedup, double dt) {
  VelocityModel m;
  m.block = whole_grid(c.grid.shape).sub;
  m.velocity.assign(velocity.begin(), velocity.end());
  m.density.assign(density.begin(), density.end());
  m.v_max = *std::max_element(velocity.begin(), velocity.end());
  m.rho_min = *std::min_element(density.begin(), density.end());
  m.rho_max = *std::max_element(density.begin(), density.end());
  const double limit = staggered_dt_max(c, m, m.v_max * speedup, speedup);
  if (dt > limit * (1 + 1e-9))
    throw Error(ExitCode::invalid_case,
                fmt::format("the model (velocities up to {:.6g} m/s, densities {:.6g} to {:.6g} kg/m^3) makes the "
                            "fixed dt = {:.6g} s unstable: the staggered scheme's limit there is {:.6g} s (a density "
                            "contrast lowers it; docs/numerics.md, \"Stability\"); lower time.cfl_safety or raise "
                            "inversion.velocity_max, which set dt",
                            m.v_max, m.rho_min, m.rho_max, dt, limit));
}

void GradientPropagator::set_shear_velocity(std::span<const double>) {
  throw Error(ExitCode::invalid_case,
              fmt::format("{}: this scheme has no shear velocity (model.shear_velocity, model.shear_velocities or "
                          "model.shear_dataset run the elastic scheme)",
                          name()));
}

void GradientPropagator::set_elastic_model(std::span<const double> velocity, std::span<const double> density,
                                           std::span<const double> vs) {
  if (!vs.empty()) set_shear_velocity(vs);  // (refuses: this scheme has none)
  set_model(velocity, density);
}

void GradientPropagator::add_shear_gradient(std::span<double>) const {
  throw Error(ExitCode::invalid_case,
              fmt::format("{}: no shear-velocity gradient: it needs the elastic scheme", name()));
}

std::vector<double> GradientPropagator::born_shear(int, std::span<const double>) {
  throw Error(ExitCode::invalid_case,
              fmt::format("{}: no shear-velocity Born operator: it needs the elastic scheme", name()));
}

void check_adjoint_arguments(bool has_history, std::size_t trace_values, std::size_t points, std::size_t residual,
                             std::size_t gradient, std::size_t illumination) {
  if (!has_history) throw std::logic_error("adjoint: call forward(shot, true) first");
  if (residual != trace_values) throw std::invalid_argument("adjoint: the adjoint source must be (n_receivers, nt)");
  if (gradient != points) throw std::invalid_argument("adjoint: gradient must be nz * ny * nx");
  if (illumination != 0 && illumination != points)
    throw std::invalid_argument("adjoint: illumination must be empty or nz * ny * nx");
}

void check_born_perturbation(std::size_t dm, std::size_t points) {
  if (dm != points) throw std::invalid_argument("born: dm must have nz * ny * nx values");
}

void check_model_velocity(std::span<const double> velocity, std::size_t points, double v_limit, double dt) {
  if (velocity.size() != points) throw std::invalid_argument("set_velocity: the model must have nz * ny * nx values");
  for (std::size_t k = 0; k < velocity.size(); ++k) {
    const double v = velocity[k];
    if (!std::isfinite(v) || v <= 0 || v > v_limit)
      throw Error(
          ExitCode::invalid_case,
          fmt::format(
              "model velocity {} m/s at flat index {} is outside (0, {:.6g}] m/s, where the fixed dt = {:.6g} s "
              "is stable; raise inversion.velocity_max (it sets dt) or bound the model",
              v, k, v_limit, dt));
  }
}

}  // namespace specwave
