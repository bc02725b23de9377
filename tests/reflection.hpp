#pragma once
// The normal-incidence reflection coefficient a case measures at a flat interface (tests/test_staggered.cpp,
// tests/test_elastic.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <optional>

#include "case_builders.hpp"
#include "solver/forward/forward.hpp"
#include "validation/analytic.hpp"

namespace specwave::testing {

// Normal-incidence reflection at a flat interface z_i half-way between two node planes, from a source and a receiver
// on nodes 12 cells apart on one vertical line above it: the reflected wave (the trace after the direct wave has
// passed) over the analytic direct wave at the image distance, green_time_discrete(r = (z_i - z_s) + (z_i - z_r)),
// by least squares. Upper medium v1, rho1; lower v2, rho2.
// With `shear` (the lower medium's vs; the upper one a fluid) the case runs the elastic scheme.
inline double measured_reflection(double v1, double rho1, double v2, double rho2, Method method = Method::fdtd,
                                  std::optional<double> shear = std::nullopt) {
  // 5 m cells, 15 Hz: 11 points per wavelength at f_max. At 10 m (5.6 points) the errors are 0.7-2.4%
  // (docs/validation.md).
  const double f = 15, scale = 2, h = 10 / scale;
  Case c = testing::small_case(40, h, v1, 8, 10, f, 0.55);
  const int lateral = 48;
  c.grid.shape = {int(84 * scale), lateral, lateral};
  c.scheme.method = method;  // the k-space method takes the density in its split-field PML form
  c.scheme.formulation = method == Method::fdtd ? Formulation::staggered : Formulation::second_order;
  c.model.kind = ModelSpec::Kind::layered;
  const double z_s = 22 * scale * h, z_r = 16 * scale * h, z_i = (48 * scale + 0.5) * h;
  c.model.interfaces = {z_i};
  c.model.velocities = {v1, v2};
  c.model.densities = {rho1, rho2};
  if (shear) {
    c.scheme.formulation = Formulation::elastic;
    c.model.shear_velocities = {0.0, *shear};
    // The plain CPML, as the acoustic schemes': the M-PML's layers damp the derivatives along them, and in this tall
    // column the waves run along the side layers, which then reflect about 1% of them (docs/validation.md, "A
    // fluid-solid interface").
    c.boundary.pml_multiaxial = 0.0;
  }
  c.shots[0].sources[0].position = {z_s, lateral / 2 * h, lateral / 2 * h};
  c.receivers = {{z_r, lateral / 2 * h, lateral / 2 * h}};
  const Plan plan = make_plan(c);
  const auto out = simulate_shot(c, plan, 0);
  // The direct wave is over by (z_s - z_r) / v1 + 2 delay.
  const double delay = 1.5 / f, t_cut = (z_s - z_r) / v1 + 2 * delay;
  const auto image = validation::green_time_discrete(plan.wavelets[0][0], plan.dt, (z_i - z_s) + (z_i - z_r), v1);
  double num = 0, den = 0;
  for (int n = int(std::ceil(t_cut / plan.dt)); n < plan.nt; ++n) {
    num += out.traces[std::size_t(n)] * image[std::size_t(n)];
    den += image[std::size_t(n)] * image[std::size_t(n)];
  }
  REQUIRE(den > 0);
  return num / den;
}

}  // namespace specwave::testing
