#pragma once
// Host-side construction of the per-axis FDTD coefficients handed to the kernels.
#include <array>

#include "kernels/fdtd_point.hpp"
#include "kernels/stencil.hpp"

namespace specwave {

template <class T>
FdtdCoefficients<T> make_fdtd_coefficients(int radius, const std::array<double, 3>& spacing,
                                           const std::array<bool, 3>& active = {true, true, true}) {
  const auto c2 = second_derivative_coefficients(radius);
  const auto c1 = first_derivative_coefficients(radius);
  FdtdCoefficients<T> coef;
  coef.radius = radius;
  double far_centre = 0;
  for (int a = 0; a < 3; ++a) {
    if (!active[a]) continue;  // an axis of one point (2-D): no derivative along it
    const double h = spacing[a];
    for (int k = 0; k <= radius; ++k) {
      coef.d2[a][k] = T(c2[k] / (h * h));
      coef.d1[a][k] = T(c1[k] / h);
      if (k > SPECWAVE_NEAR_TERMS) far_centre -= 2 * c2[k] / (h * h);
    }
  }
  coef.far_centre = T(far_centre);
  return coef;
}

}  // namespace specwave
