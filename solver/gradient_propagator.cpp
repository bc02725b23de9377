#include "solver/gradient_propagator.hpp"

#include <cmath>
#include <fmt/format.h>
#include <stdexcept>

#include "solver/errors.hpp"

namespace specwave {

std::unique_ptr<GradientPropagator> make_gradient_propagator(const Case& c, const Plan& plan, const HistoryChoice& history) {
  if (c.scheme.method == Method::spectral) return make_spectral_cpu_gradient(c, plan, history);
  return make_fdtd_cpu_gradient(c, plan, history);
}

void check_model_velocity(std::span<const double> velocity, std::size_t points, double v_limit, double dt) {
  if (velocity.size() != points) throw std::invalid_argument("set_velocity: the model must have nz * ny * nx values");
  for (std::size_t k = 0; k < velocity.size(); ++k) {
    const double v = velocity[k];
    if (!std::isfinite(v) || v <= 0 || v > v_limit)
      throw Error(ExitCode::invalid_case,
                  fmt::format("model velocity {} m/s at flat index {} is outside (0, {:.6g}] m/s, where the fixed dt = {:.6g} s "
                              "is stable; raise inversion.velocity_max (it sets dt) or bound the model",
                              v, k, v_limit, dt));
  }
}

}  // namespace specwave
