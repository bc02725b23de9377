#include "solver/propagators/gradient_propagator.hpp"

#include <fmt/format.h>
#include <cmath>
#include <stdexcept>

#include "solver/case/errors.hpp"
#include "solver/forward/particle_velocity.hpp"
#include "solver/plan/plan.hpp"
#include "solver/plan/shot_receivers.hpp"
#include "solver/propagators/capabilities.hpp"

namespace specwave {

namespace {

// Particle-velocity receivers (docs/numerics.md, "Force sources and particle-velocity receivers"): the backend's
// propagator samples d . grad u; this wrapper hands out the velocity (forward and Born traces) and takes the adjoint
// source with respect to it, applying the transpose of the conversion before the backend's adjoint. Every user of
// a gradient propagator (the misfit, source estimation, migration, the Python module) then sees velocity traces.
// With a density model (the staggered scheme) each velocity receiver divides by its own density
// (velocity_receiver_densities, per shot, fixed: the density gradient refuses these receivers).
class VelocityReceivers final : public GradientPropagator {
 public:
  VelocityReceivers(std::unique_ptr<GradientPropagator> inner, const Case& c, double dt,
                    std::vector<std::vector<double>> receiver_densities = {})
      : inner_(std::move(inner)), case_(c), dt_(dt), densities_(std::move(receiver_densities)) {}
  std::string name() const override { return inner_->name(); }
  void set_velocity(std::span<const double> velocity) override { inner_->set_velocity(velocity); }
  std::vector<double> vel2dt2() const override { return inner_->vel2dt2(); }
  std::vector<double> forward(int shot, bool keep_history) override {
    std::vector<double> t = inner_->forward(shot, keep_history);
    if (keep_history) shot_ = shot;
    particle_velocity_traces(case_, std::size_t(shot), dt_, t, densities(shot));
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
    std::vector<double> r(adjoint_source.begin(), adjoint_source.end());
    particle_velocity_adjoint(case_, std::size_t(shot_), dt_, r, densities(shot_));
    inner_->adjoint(r, gradient, illumination);
  }
  std::vector<double> density() const override { return inner_->density(); }
  std::string history_name() const override { return inner_->history_name(); }
  std::size_t history_bytes() const override { return inner_->history_bytes(); }
  long long history_forward_steps() const override { return inner_->history_forward_steps(); }

 private:
  std::span<const double> densities(int shot) const {
    return densities_.empty() ? std::span<const double>() : std::span<const double>(densities_.at(std::size_t(shot)));
  }

  std::unique_ptr<GradientPropagator> inner_;
  Case case_;  // the shots' receivers and components, and the density
  double dt_;
  std::vector<std::vector<double>> densities_;  // [shot][receiver], or empty: model.density
  int shot_ = -1;                               // the shot of the last forward(shot, true)
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
  if (c.scheme.formulation == Formulation::staggered) {
    auto staggered = make_staggered_cpu_gradient(c, plan, history);
    if (!has_velocity_receivers(c)) return staggered;
    // A velocity receiver's conversion divides by its density (velocity_receiver_densities), whose derivative the
    // density gradient does not carry yet.
    if (c.inversion.density_parameter)
      throw Error(ExitCode::invalid_case,
                  fmt::format("{}: inversion.parameters names \"density\", and receivers.components has "
                              "particle-velocity receivers, whose conversion takes each receiver's density: the "
                              "density gradient is given with pressure receivers (\"p\") only in this version",
                              c.source_path.empty() ? c.name : c.source_path));
    std::vector<std::vector<double>> densities;
    for (std::size_t s = 0; s < c.shots.size(); ++s) densities.push_back(velocity_receiver_densities(c, plan, s));
    return std::make_unique<VelocityReceivers>(std::move(staggered), c, plan.dt, std::move(densities));
  }
  auto propagator = backend_gradient(c, plan, history);
  if (!has_velocity_receivers(c)) return propagator;
  return std::make_unique<VelocityReceivers>(std::move(propagator), c, plan.dt);
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

void GradientPropagator::add_density_gradient(std::span<double>) const {
  throw Error(ExitCode::invalid_case,
              fmt::format("{}: no density gradient: it needs a density model and inversion.parameters = [\"velocity\", "
                          "\"density\"]",
                          name()));
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
