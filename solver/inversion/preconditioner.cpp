#include "solver/inversion/preconditioner.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "kernels/fft/fftw3d.hpp"

namespace specwave {

struct GaussianSmoother::Impl {
  std::array<int, 3> shape{}, padded{}, pad{};
  fft::Buffer<double> real;
  fft::Buffer<std::complex<double>> spectrum;
  std::vector<double> filter;  // (pz, py, px/2+1)
  std::unique_ptr<fft::RealFft3d<double>> fft;
};

GaussianSmoother::GaussianSmoother(const GridSpec& g, const std::array<double, 3>& sigma_m, int threads)
    : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  m.shape = g.shape;
  for (int a = 0; a < 3; ++a) {
    m.pad[a] = int(std::ceil(3 * sigma_m[a] / g.spacing[a]));
    m.padded[a] = g.shape[a] + 2 * m.pad[a];
  }
  const int pz = m.padded[0], py = m.padded[1], px = m.padded[2], hx = px / 2 + 1;
  m.real.resize(std::size_t(pz) * py * px);
  m.spectrum.resize(std::size_t(pz) * py * hx);
  m.fft = std::make_unique<fft::RealFft3d<double>>(pz, py, px, m.real.data(), m.spectrum.data(), threads);
  // Filter exp(-k^2 sigma^2 / 2) per axis, divided by the number of points (FFTW's round trip is unnormalised).
  auto axis = [&](int a, int n) {
    std::vector<double> out(n);
    for (int i = 0; i < n; ++i) {
      const int j = i <= m.padded[a] / 2 ? i : i - m.padded[a];
      const double k = 2 * std::numbers::pi * j / (m.padded[a] * g.spacing[a]);
      out[i] = std::exp(-0.5 * k * k * sigma_m[a] * sigma_m[a]);
    }
    return out;
  };
  const auto fz = axis(0, pz), fy = axis(1, py), fx = axis(2, hx);
  const double norm = 1.0 / (double(pz) * py * px);
  m.filter.resize(m.spectrum.size());
  for (int z = 0; z < pz; ++z)
    for (int y = 0; y < py; ++y)
      for (int x = 0; x < hx; ++x) m.filter[(std::size_t(z) * py + y) * hx + x] = fz[z] * fy[y] * fx[x] * norm;
}

GaussianSmoother::~GaussianSmoother() = default;
const std::array<int, 3>& GaussianSmoother::shape() const { return impl_->shape; }
const std::array<int, 3>& GaussianSmoother::pad() const { return impl_->pad; }
const std::vector<double>& GaussianSmoother::filter() const { return impl_->filter; }

void GaussianSmoother::apply(std::vector<double>& field) const {
  auto& m = *impl_;
  const int nz = m.shape[0], ny = m.shape[1], nx = m.shape[2], py = m.padded[1], px = m.padded[2];
  std::fill(m.real.begin(), m.real.end(), 0.0);
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x)
        m.real[(std::size_t(z + m.pad[0]) * py + y + m.pad[1]) * px + x + m.pad[2]] =
            field[(std::size_t(z) * ny + y) * nx + x];
  m.fft->forward();
  for (std::size_t k = 0; k < m.spectrum.size(); ++k) m.spectrum[k] *= m.filter[k];
  m.fft->backward();
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x)
        field[(std::size_t(z) * ny + y) * nx + x] =
            m.real[(std::size_t(z + m.pad[0]) * py + y + m.pad[1]) * px + x + m.pad[2]];
}

std::vector<double> source_taper(const Case& c, double radius_m) {
  const GridSpec& g = c.grid;
  std::vector<double> w(std::size_t(g.points()), 1.0);
  for (int z = 0; z < g.shape[0]; ++z)
    for (int y = 0; y < g.shape[1]; ++y)
      for (int x = 0; x < g.shape[2]; ++x) {
        const Vec3 p = g.position(z, y, x);
        double& wk = w[(std::size_t(z) * g.shape[1] + y) * g.shape[2] + x];
        for (const auto& shot : c.shots)
          for (const auto& s : shot.sources) {
            const double r = std::hypot(p[0] - s.position[0], p[1] - s.position[1], p[2] - s.position[2]);
            if (r < radius_m) wk = std::min(wk, 0.5 * (1 - std::cos(std::numbers::pi * r / radius_m)));
          }
      }
  return w;
}

std::vector<double> illumination_weight(std::span<const double> illumination, double epsilon) {
  if (!(epsilon > 0)) throw std::invalid_argument("illumination_weight: epsilon must be > 0");
  double peak = 0;
  for (const double i : illumination) peak = std::max(peak, i);
  std::vector<double> w(illumination.size(), 1.0);
  if (!(peak > 0)) return w;  // no wavefield at all: nothing to compensate
  for (std::size_t k = 0; k < w.size(); ++k) w[k] = (1 + epsilon) * peak / (illumination[k] + epsilon * peak);
  return w;
}

GradientPreconditioner::GradientPreconditioner(const Case& c, int threads) {
  const auto& inv = c.inversion;
  compensates_ = inv.illumination_compensation;
  epsilon_ = inv.illumination_epsilon;
  if (inv.source_mask_m > 0) taper_ = source_taper(c, inv.source_mask_m);
  if (inv.smoothing_m > 0)
    smoother_ = std::make_unique<GaussianSmoother>(
        c.grid,
        std::array<double, 3>{inv.smoothing_m, c.grid.active(1) ? inv.smoothing_m : 0.0, inv.smoothing_m},  // (2-D)
        threads);
}

void GradientPreconditioner::set_illumination(std::span<const double> illumination) {
  if (!compensates_) throw std::logic_error("set_illumination: inversion.illumination_compensation is off");
  illumination_.assign(illumination.begin(), illumination.end());
  weight_ = illumination_weight(illumination_, epsilon_);
  if (!taper_.empty())
    for (std::size_t k = 0; k < weight_.size(); ++k) weight_[k] *= taper_[k];
  ++weight_version_;
}

const std::vector<double>& GradientPreconditioner::weight() const {
  if (compensates_ && weight_.empty())
    throw std::logic_error("GradientPreconditioner: illumination compensation before set_illumination");
  return compensates_ ? weight_ : taper_;
}

// P g = S (W D) g S: W D is diagonal and non-negative, so P is symmetric positive semi-definite and the L-BFGS
// initial inverse Hessian stays so.
std::vector<double> GradientPreconditioner::apply(std::vector<double> g) const {
  const std::vector<double>& w = weight();
  if (smoother_) smoother_->apply(g);
  if (!w.empty())
    for (std::size_t k = 0; k < g.size(); ++k) g[k] *= w[k];
  if (smoother_) smoother_->apply(g);
  return g;
}

}  // namespace specwave
