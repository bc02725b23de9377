#include "validation/analytic.hpp"

#include <fftw3.h>

#include <cmath>
#include <complex>
#include <stdexcept>

namespace specwave::validation {
namespace {

// u_n = IDFT[ S(w) G(k(w), r) ], zero-padded 4x so the causal delay does not wrap around: in 3-D
// G = exp(-i k r) / (4 pi r); in 2-D G = (-i / 4) H0^(2)(k r) = -(Y0(k r) + i J0(k r)) / 4 (the outgoing solution
// of the Helmholtz equation in the plane, for the DFT's exp(+i w t) signals; G(0) is taken as 0: a Ricker has no
// DC).
template <class Wavenumber>
std::vector<double> propagate(const std::vector<double>& s, double dt, double r, Wavenumber k_of_w, bool plane) {
  if (r <= 0) throw std::invalid_argument("analytic Green's function: r must be > 0");
  const std::size_t nt = s.size();
  std::size_t n = 1;
  while (n < (plane ? 64 : 4) * nt + std::size_t(8)) n *= 2;
  std::vector<double> x(n, 0.0);
  std::copy(s.begin(), s.end(), x.begin());
  std::vector<std::complex<double>> spectrum(n / 2 + 1);
  auto* c = reinterpret_cast<fftw_complex*>(spectrum.data());
  fftw_plan forward = fftw_plan_dft_r2c_1d(int(n), x.data(), c, FFTW_ESTIMATE);
  fftw_execute(forward);
  fftw_destroy_plan(forward);
  for (std::size_t m = 0; m < spectrum.size(); ++m) {
    const double w = 2 * M_PI * double(m) / (double(n) * dt);
    const double k = k_of_w(w);
    if (plane)
      spectrum[m] *= m == 0 ? std::complex<double>(0)
                            : std::complex<double>(-std::cyl_neumann(0.0, k * r), -std::cyl_bessel_j(0.0, k * r)) /
                                  (4 * double(n));
    else
      spectrum[m] *= std::exp(std::complex<double>(0, -k * r)) / (4 * M_PI * r * double(n));
  }
  fftw_plan backward = fftw_plan_dft_c2r_1d(int(n), c, x.data(), FFTW_ESTIMATE);
  fftw_execute(backward);
  fftw_destroy_plan(backward);
  x.resize(nt);
  return x;
}

}  // namespace

std::vector<double> green_continuous(const std::vector<double>& s, double dt, double r, double v, int dimension) {
  return propagate(
      s, dt, r, [v](double w) { return w / v; }, dimension == 2);
}

std::vector<double> green_time_discrete(const std::vector<double>& s, double dt, double r, double v, int dimension) {
  return propagate(
      s, dt, r, [v, dt](double w) { return 2 / (v * dt) * std::sin(w * dt / 2); }, dimension == 2);
}

}  // namespace specwave::validation
