#include "solver/plan/cpml.hpp"

#include <cmath>

namespace specwave {

CpmlProfile make_cpml_profile(const GridSpec& g, const BoundarySpec& bc, double power, double reflection, double v_max,
                              double frequency, double dt) {
  CpmlProfile p;
  p.width = bc.pml_width;
  const int W = bc.pml_width;
  for (int axis = 0; axis < 3; ++axis) {
    const int n = g.shape[axis];
    p.face[axis] = {W > 0 && !(axis == 0 && bc.free_surface), W > 0};
    p.a[axis].assign(n, 0.0);
    p.b[axis].assign(n, 1.0);
    p.d[axis].assign(n, 0.0);
    if (W == 0) continue;
    const double thickness = W * g.spacing[axis];
    const double d0 = -(power + 1) * v_max * std::log(reflection) / (2 * thickness);
    const double alpha_max = M_PI * frequency;
    for (int i = 0; i < n; ++i) {
      double xi = 0;
      if (p.face[axis][0] && i < W) xi = double(W - i) / W;
      if (p.face[axis][1] && i > n - 1 - W) xi = double(i - (n - 1 - W)) / W;
      if (xi <= 0) continue;
      const double d = d0 * std::pow(xi, power);
      p.d[axis][i] = d;
      const double alpha = alpha_max * (1 - xi);
      p.b[axis][i] = std::exp(-(d + alpha) * dt);
      p.a[axis][i] = d / (d + alpha) * (p.b[axis][i] - 1);
    }
  }
  return p;
}

}  // namespace specwave
