#pragma once
// CPML coefficient profiles (docs/numerics.md): per axis, a(i) and b(i) along that axis.
#include <array>
#include <vector>

#include "solver/case/case.hpp"

namespace specwave {

struct CpmlProfile {
  int width = 0;
  std::array<std::array<bool, 2>, 3> face{};  // [axis][low/high] absorbing
  std::array<std::vector<double>, 3> a, b;    // per axis, length n_axis
  std::array<std::vector<double>, 3> d;       // the damping d(i) itself (the spectral damping layer uses it)
};

// The profile of one axis at any position s in grid units (docs/numerics.md, "Absorbing boundary"): xi(s) from the
// layer's faces, clamped to at most 1 (the staggered scheme evaluates it on the half nodes, some outside the grid).
struct CpmlAxisProfile {
  int n = 0, width = 0;
  bool low = false, high = false;  // absorbing faces
  double d0 = 0, alpha_max = 0, power = 2, dt = 0;
  double xi(double s) const;
  // a(s), b(s); 0 and 1 outside the layer.
  void coefficients(double s, double& a, double& b) const;
};
// The profile of `axis` (d0 from v_max, the width and the spacing; alpha_max = pi frequency).
CpmlAxisProfile make_cpml_axis_profile(const GridSpec& grid, const BoundarySpec& boundary, int axis, double power,
                                       double reflection, double v_max, double frequency, double dt);

// d(xi) = d0 xi^p, d0 = -(p+1) v_max ln(R0) / (2 W h); alpha = pi f (1 - xi); b = exp(-(d+alpha) dt), a =
// d/(d+alpha)(b-1). W, the faces and the free surface come from `boundary`; p and R0 from the plan (the case's or the
// defaults).
CpmlProfile make_cpml_profile(const GridSpec& grid, const BoundarySpec& boundary, double power, double reflection,
                              double v_max, double frequency, double dt);

}  // namespace specwave
