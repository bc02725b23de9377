#include "solver/plan/cpml.hpp"

#include <algorithm>
#include <cmath>

namespace specwave {

double CpmlAxisProfile::xi(double s) const {
  if (width <= 0) return 0;
  double x = 0;
  if (low && s < width) x = (width - s) / width;
  if (high && s > n - 1 - width) x = (s - (n - 1 - width)) / width;
  return std::min(x, 1.0);
}

void CpmlAxisProfile::coefficients(double s, double& a, double& b) const {
  const double x = xi(s);
  a = 0, b = 1;
  if (x <= 0) return;
  const double d = d0 * std::pow(x, power);
  const double alpha = alpha_max * (1 - x);
  b = std::exp(-(d + alpha) * dt);
  a = d / (d + alpha) * (b - 1);
}

CpmlAxisProfile make_cpml_axis_profile(const GridSpec& g, const BoundarySpec& bc, int axis, double power,
                                       double reflection, double v_max, double frequency, double dt) {
  CpmlAxisProfile p;
  const int W = bc.pml_width;
  p.n = g.shape[axis];
  p.width = W;
  p.low = W > 0 && !(axis == 0 && bc.free_surface) && g.active(axis);
  p.high = W > 0 && g.active(axis);
  p.d0 = p.high ? -(power + 1) * v_max * std::log(reflection) / (2 * W * g.spacing[axis]) : 0;
  p.alpha_max = M_PI * frequency;
  p.power = power;
  p.dt = dt;
  return p;
}

CpmlProfile make_cpml_profile(const GridSpec& g, const BoundarySpec& bc, double power, double reflection, double v_max,
                              double frequency, double dt) {
  CpmlProfile p;
  p.width = bc.pml_width;
  for (int axis = 0; axis < 3; ++axis) {
    const CpmlAxisProfile axis_profile = make_cpml_axis_profile(g, bc, axis, power, reflection, v_max, frequency, dt);
    const int n = g.shape[axis];
    p.face[axis] = {axis_profile.low, axis_profile.high};
    p.a[axis].assign(n, 0.0);
    p.b[axis].assign(n, 1.0);
    p.d[axis].assign(n, 0.0);
    for (int i = 0; i < n; ++i) {
      const double xi = axis_profile.xi(i);
      if (xi <= 0) continue;
      p.d[axis][i] = axis_profile.d0 * std::pow(xi, power);
      axis_profile.coefficients(i, p.a[axis][i], p.b[axis][i]);
    }
  }
  return p;
}

}  // namespace specwave
