#include "solver/forward/particle_velocity.hpp"

#include <fmt/format.h>
#include <stdexcept>
#include <vector>

namespace specwave {

void integrate_in_time(std::span<double> g, double dt) {
  const std::size_t nt = g.size();
  if (nt == 0) return;
  // dt g'(t_n) by differences: centred inside, g^{-1} = 0 at the start, one-sided (second order) at the end.
  const auto slope = [&](std::size_t n) {
    if (n == 0) return g.size() > 1 ? g[1] / 2 : 0.0;
    if (n + 1 < nt) return (g[n + 1] - g[n - 1]) / 2;
    return (3 * g[n] - 4 * g[n - 1] + g[n - 2]) / 2;
  };
  const bool corrected = nt >= 3;
  std::vector<double> out(nt, 0.0);
  const double d0 = corrected ? slope(0) : 0.0;
  double sum = 0;
  for (std::size_t n = 1; n < nt; ++n) {
    sum += dt / 2 * (g[n - 1] + g[n]);
    out[n] = corrected ? sum - dt / 12 * (slope(n) - d0) : sum;
  }
  std::copy(out.begin(), out.end(), g.begin());
}

void integrate_in_time_transpose(std::span<double> y, double dt) {
  const std::size_t nt = y.size();
  if (nt == 0) return;
  std::vector<double> out(nt, 0.0);
  // Trapezoidal part: out[n] = sum_{m=1..n} dt/2 (g[m-1] + g[m]) (out[0] = 0), so g[k] collects dt/2 from each
  // n >= k with m = k >= 1, and dt/2 from each n >= k + 1 with m = k + 1.
  std::vector<double> suffix(nt + 1, 0.0);  // suffix[j] = sum_{n >= j} y[n]
  for (std::size_t n = nt; n-- > 0;) suffix[n] = suffix[n + 1] + y[n];
  for (std::size_t k = 0; k < nt; ++k) out[k] = dt / 2 * ((k >= 1 ? suffix[k] : 0.0) + suffix[k + 1]);
  if (nt >= 3) {
    // Correction part: out[n] -= dt/12 (slope(n) - slope(0)) for n >= 1, each slope a combination of samples.
    const auto add_slope = [&](std::size_t n, double c) {
      if (n == 0) {
        out[1] += c / 2;
      } else if (n + 1 < nt) {
        out[n + 1] += c / 2;
        out[n - 1] -= c / 2;
      } else {
        out[n] += 3 * c / 2;
        out[n - 1] -= 2 * c;
        out[n - 2] += c / 2;
      }
    };
    for (std::size_t n = 1; n < nt; ++n) {
      const double c = -dt / 12 * y[n];
      add_slope(n, c);
      add_slope(0, -c);
    }
  }
  std::copy(out.begin(), out.end(), y.begin());
}

void particle_velocity_traces(const Case& c, std::size_t shot, double dt, std::span<double> traces,
                              std::span<const double> receiver_density) {
  // The elastic scheme records particle velocity itself (docs/numerics.md, "Isotropic elastic waves").
  if (c.scheme.formulation == Formulation::elastic) return;
  const std::size_t n_rec = shot_receivers(c, shot).size();
  if (n_rec == 0 || traces.size() % n_rec != 0)
    throw std::invalid_argument(
        fmt::format("particle_velocity_traces: {} values for {} receivers", traces.size(), n_rec));
  const std::size_t nt = traces.size() / n_rec;
  for (std::size_t r = 0; r < n_rec; ++r) {
    if (shot_receiver_component(c, shot, r) == ReceiverComponent::pressure) continue;
    const std::span<double> t = traces.subspan(r * nt, nt);
    integrate_in_time(t, dt);
    const double scale = -1 / (receiver_density.empty() ? c.model.density.value() : receiver_density[r]);
    for (double& v : t) v *= scale;
  }
}

void particle_velocity_adjoint(const Case& c, std::size_t shot, double dt, std::span<double> adjoint_source,
                               std::span<const double> receiver_density) {
  const std::size_t n_rec = shot_receivers(c, shot).size();
  if (n_rec == 0 || adjoint_source.size() % n_rec != 0)
    throw std::invalid_argument(
        fmt::format("particle_velocity_adjoint: {} values for {} receivers", adjoint_source.size(), n_rec));
  const std::size_t nt = adjoint_source.size() / n_rec;
  for (std::size_t r = 0; r < n_rec; ++r) {
    if (shot_receiver_component(c, shot, r) == ReceiverComponent::pressure) continue;
    const std::span<double> t = adjoint_source.subspan(r * nt, nt);
    const double scale = -1 / (receiver_density.empty() ? c.model.density.value() : receiver_density[r]);
    for (double& v : t) v *= scale;
    integrate_in_time_transpose(t, dt);
  }
}

}  // namespace specwave
