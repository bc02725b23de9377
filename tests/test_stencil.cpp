// Stencil coefficients (by formula) and the CFL limit.
#include <doctest/doctest.h>

#include <cmath>

#include "kernels/stencil.hpp"
#include "solver/plan/plan.hpp"

using namespace specwave;

TEST_CASE("second-derivative stencils are exact on polynomials up to degree 2R+1") {
  for (int R = 1; R <= 8; ++R) {
    const auto c = second_derivative_coefficients(R);
    for (int degree = 0; degree <= 2 * R + 1; ++degree) {
      // D2 x^p at x = 0.3 (h = 1): sum_k c_k ((x+k)^p + (x-k)^p) + c_0 x^p vs p (p-1) x^{p-2}.
      const double x = 0.3;
      double approx = c[0] * std::pow(x, degree);
      for (int k = 1; k <= R; ++k) approx += c[k] * (std::pow(x + k, degree) + std::pow(x - k, degree));
      const double exact = degree >= 2 ? degree * (degree - 1) * std::pow(x, degree - 2) : 0.0;
      // Cancellation grows like the largest term, ~R^p; allow that many ulps.
      CHECK(approx == doctest::Approx(exact).epsilon(1e-12).scale(std::pow(R + 1.0, degree)));
    }
  }
}

TEST_CASE("first-derivative stencils are exact on polynomials up to degree 2R") {
  for (int R = 1; R <= 8; ++R) {
    const auto d = first_derivative_coefficients(R);
    for (int degree = 0; degree <= 2 * R; ++degree) {
      const double x = -0.7;
      double approx = 0;
      for (int k = 1; k <= R; ++k) approx += d[k] * (std::pow(x + k, degree) - std::pow(x - k, degree));
      const double exact = degree >= 1 ? degree * std::pow(x, degree - 1) : 0.0;
      CHECK(approx == doctest::Approx(exact).epsilon(1e-12).scale(std::pow(R + 1.0, degree)));
    }
  }
}

TEST_CASE("known coefficients and the stability symbol") {
  const auto c1 = second_derivative_coefficients(1);
  CHECK(c1[0] == doctest::Approx(-2.0));
  CHECK(c1[1] == doctest::Approx(1.0));
  const auto c2 = second_derivative_coefficients(2);  // (-1/12, 4/3, -5/2)
  CHECK(c2[0] == doctest::Approx(-2.5));
  CHECK(c2[1] == doctest::Approx(4.0 / 3));
  CHECK(c2[2] == doctest::Approx(-1.0 / 12));
  // Order 2: S_max = 4 at theta = pi, so dt_max = h / (v sqrt(3)) in 3-D with equal spacing.
  CHECK(second_derivative_symbol_max(1) == doctest::Approx(4.0));
  GridSpec g;
  g.spacing = {10, 10, 10};
  CHECK(stable_dt(g, 2, 2000) == doctest::Approx(10 / (2000 * std::sqrt(3.0))));
  // Higher orders have a larger symbol (smaller dt), increasing with R.
  for (int R = 2; R <= 8; ++R) CHECK(second_derivative_symbol_max(R) > second_derivative_symbol_max(R - 1));
  CHECK_THROWS(second_derivative_coefficients(9));
}
