#include "solver/propagators/gradient_propagator.hpp"

#include <fmt/format.h>
#include <cmath>
#include <stdexcept>

#include "solver/case/errors.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/capabilities.hpp"

namespace specwave {

std::unique_ptr<GradientPropagator> make_gradient_propagator(const Case& c, const Plan& plan,
                                                             const HistoryChoice& history) {
  const Capability& row = capability(c.scheme.method, plan.backend);
  if (row.make_gradient) return row.make_gradient(c, plan, history);
  // No gradient on this backend: asking for it is refused; "auto" that picked it runs the gradient on the CPU.
  if (c.run.backend != BackendKind::auto_select) throw Error(ExitCode::invalid_case, row.no_gradient);
  return capability(c.scheme.method, BackendKind::cpu).make_gradient(c, plan, history);
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
