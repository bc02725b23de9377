#include "solver/misfit.hpp"

#include <fmt/format.h>
#include <stdexcept>

#include "solver/errors.hpp"

namespace specwave {

double LeastSquaresMisfit::evaluate(std::span<const double> synthetic, std::span<const double> observed, double dt,
                                    std::span<double> adjoint_source) const {
  if (synthetic.size() != observed.size() || adjoint_source.size() != synthetic.size())
    throw std::invalid_argument("LeastSquaresMisfit: synthetic, observed and adjoint source differ in size");
  double sum = 0;
  for (std::size_t k = 0; k < synthetic.size(); ++k) {
    const double r = synthetic[k] - observed[k];
    sum += r * r;
    adjoint_source[k] = dt * r;
  }
  return 0.5 * dt * sum;
}

std::unique_ptr<Misfit> make_misfit(const std::string& name) {
  if (name == "least_squares") return std::make_unique<LeastSquaresMisfit>();
  throw Error(ExitCode::invalid_case,
              fmt::format("inversion.misfit = \"{}\" is not available; use \"least_squares\"", name));
}

}  // namespace specwave
