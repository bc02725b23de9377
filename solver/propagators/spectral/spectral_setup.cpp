#include "solver/propagators/spectral/spectral_setup.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/spectral_point.hpp"
#include "solver/plan/cpml.hpp"
#include "solver/plan/plan.hpp"

namespace specwave {
double spectral_wavenumber(int m, int n, double h) { return 2 * M_PI * (m <= n / 2 ? m : m - n) / (n * h); }

template <class T>
std::vector<T> SpectralSetup<T>::eta_dt_field() const {
  std::vector<T> out(points());
  const Dims3 b = blocks.real.sub.begin;
#pragma omp parallel for collapse(2) schedule(static)
  for (int z = 0; z < layout.nz; ++z)
    for (int y = 0; y < layout.ny; ++y)
      for (int x = 0; x < layout.nx; ++x) out[layout.index(z, y, x)] = eta_dt(z + b[0], y + b[1], x + b[2]);
  return out;
}

template <class T, class V>
void set_spectral_model(SpectralSetup<T>& s, const V* velocity) {
  const bool pml = s.absorber == SpectralAbsorber::pml;
  const std::size_t n = s.points();
  const double dt = s.dt;
  const Dims3 rb = s.blocks.real.sub.begin, re = s.blocks.real.sub.extent;
  // The source factor is computed in T from T values, as the update applies it.
  s.source_factor.resize(n);
  if (pml) {
    s.dt_vel2.resize(n);
    // With a density model, kappa dt = rho v^2 dt / rho_ref (the whole grid's density on one rank: the plan refuses a
    // split grid; rho / rho_ref is exactly 1 at a constant density, so the products are the constant-density ones).
    const double* rho = s.density.empty() ? nullptr : s.density.data();
    const double rho_ref = s.rho_ref;
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) {
      const double v2 = double(velocity[i]) * velocity[i];
      const double ratio = rho ? double(rho[i]) / rho_ref : 1.0;
      s.dt_vel2[i] = T(v2 * dt * ratio);
      s.source_factor[i] = T(v2 * dt * dt * ratio);
    }
    if (!s.sls.empty()) {  // the unrelaxed dt v_R^2 (1 + sum y_l) and the drives b_l v_R^2 y_l (times rho / rho_ref)
      const SlsStep step = sls_step(s.sls, dt);
      const int mechanisms = int(step.a.size());
      s.sls_decay.assign(step.a.begin(), step.a.end());
      s.sls_drive.assign(std::size_t(mechanisms), std::vector<T>(n, T(0)));
      fit_points(
          s.sls, n, [&](std::size_t i) { return s.q[i]; },
          [&](std::size_t i, const SlsPointFit& f) {
            const double ratio = rho ? double(rho[i]) / rho_ref : 1.0;
            const double v2_relaxed = double(velocity[i]) * velocity[i] * f.relaxed * ratio;
            s.dt_vel2[i] = T(dt * v2_relaxed * f.sum);
            for (int l = 0; l < mechanisms; ++l)
              s.sls_drive[std::size_t(l)][i] = T(step.b[std::size_t(l)] * v2_relaxed * f.y[std::size_t(l)]);
          });
    }
  } else {
    s.vel2dt2.resize(n);
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < re[0]; ++z)
      for (int y = 0; y < re[1]; ++y)
        for (int x = 0; x < re[2]; ++x) {
          const index_t i = s.layout.index(z, y, x);
          s.vel2dt2[i] = T(double(velocity[i]) * velocity[i] * dt * dt);
          s.source_factor[i] = s.vel2dt2[i] / (T(1) + s.eta_dt(z + rb[0], y + rb[1], x + rb[2]));
        }
  }
}

template <class T, class D>
void set_spectral_density(SpectralSetup<T>& s, std::span<const D> rho) {
  const Dims3 shape = s.blocks.real.shape;
  if (rho.size() != s.points() || s.blocks.real.sub.extent != shape)
    throw std::logic_error("set_spectral_density: the whole grid's density on one rank");
  s.density.assign(rho.begin(), rho.end());
  for (int a = 0; a < 3; ++a) {
    auto& beta = s.beta[a];
    beta.resize(s.points());
    for_each_staggered_pair(
        shape, a, [&](std::size_t i, std::size_t j) { beta[i] = T(2 * s.rho_ref / (s.density[i] + s.density[j])); });
  }
}

template <class T>
SpectralSetup<T> make_spectral_setup(const Case& c, const Plan& plan, const SpectralBlocks* blocks) {
  SpectralSetup<T> s;
  const auto& g = c.grid;
  s.half_x = g.shape[2] / 2 + 1;
  if (blocks) {
    s.blocks = *blocks;
  } else {
    s.blocks.real = whole_grid(g.shape);
    s.blocks.spectrum = subdomain_of({g.shape[0], g.shape[1], s.half_x}, {1, 1, 1}, 0);
  }
  const Dims3 rb = s.blocks.real.sub.begin, re = s.blocks.real.sub.extent;
  const Dims3 sb = s.blocks.spectrum.begin, se = s.blocks.spectrum.extent;
  s.layout = FieldLayout{re[0], re[1], re[2], 0};
  s.nt = plan.nt;
  s.dt = plan.dt;
  s.c_ref = plan.model.v_max;
  s.cell_volume = g.cell_volume();
  s.active = {g.active(0), g.active(1), g.active(2)};
  s.absorber = c.boundary.spectral_absorber;
  const bool pml = s.absorber == SpectralAbsorber::pml;
  if (!plan.model.density.empty()) {
    if (!pml || plan.model.block.extent != g.shape || s.blocks.real.sub.extent != g.shape)
      throw std::logic_error("make_spectral_setup: a density model needs the split-field PML on one rank (the plan)");
    s.rho_ref = plan.model.rho_max;
    set_spectral_density(s, std::span<const float>(plan.model.density));
  }
  const std::size_t n = s.points();
  const double dt = plan.dt;
  // A field of the model (the points of its block) on the local block, in layout order.
  const Dims3 mb = plan.model.block.begin, me = plan.model.block.extent;
  const auto local = [&](const std::vector<float>& field) {
    std::vector<float> out(n);
    for (int z = 0; z < re[0]; ++z)
      for (int y = 0; y < re[1]; ++y)
        for (int x = 0; x < re[2]; ++x)
          out[s.layout.index(z, y, x)] =
              field[(std::size_t(z + rb[0] - mb[0]) * me[1] + (y + rb[1] - mb[1])) * me[2] + (x + rb[2] - mb[2])];
    return out;
  };
  const bool same_block = mb == rb && me == re;
  const std::vector<float> local_velocity = same_block ? std::vector<float>{} : local(plan.model.velocity);
  const float* velocity = same_block ? plan.model.velocity.data() : local_velocity.data();
  if (!plan.sls.empty()) {  // Q on the local block, for set_spectral_model
    if (!pml) throw std::logic_error("make_spectral_setup: attenuation needs the split-field PML (the plan)");
    s.sls = plan.sls;
    s.q = local(plan.model.q);
  }

  if (!pml) {
    // The damping layer: eta = d_z + d_y + d_x with the CPML profile's d (all six faces absorb).
    BoundarySpec bc = c.boundary;
    bc.free_surface = false;
    const CpmlProfile profile =
        make_cpml_profile(g, bc, plan.pml_power, plan.pml_reflection, plan.model.v_max, plan.pml_frequency, dt);
    s.damping = profile.d;
  }
  set_spectral_model(s, velocity);

  // Symbols on the local block of the half spectrum, times 1 / (nz ny nx).
  const double norm = 1.0 / double(g.points());
  const std::size_t n_spectrum = s.spectrum_points();
  (pml ? s.kappa : s.laplacian_symbol).resize(n_spectrum);
#pragma omp parallel for collapse(2) schedule(static)
  for (int z = 0; z < se[0]; ++z)
    for (int y = 0; y < se[1]; ++y)
      for (int x = 0; x < se[2]; ++x) {
        const double kz = spectral_wavenumber(z + sb[0], g.shape[0], g.spacing[0]);
        const double ky = spectral_wavenumber(y + sb[1], g.shape[1], g.spacing[1]);
        const double kx = spectral_wavenumber(x + sb[2], g.shape[2], g.spacing[2]);
        const double k2 = kz * kz + ky * ky + kx * kx;
        const std::size_t at = (std::size_t(z) * se[1] + y) * se[2] + x;
        if (pml)
          s.kappa[at] = T(kspace_sinc(k2, s.c_ref, dt) * norm);
        else
          s.laplacian_symbol[at] = T(kspace_symbol(k2, s.c_ref, dt) * norm);
      }

  if (pml) {
    const int W = c.boundary.pml_width;
    for (int a = 0; a < 3; ++a) {
      const int n_a = g.shape[a];
      const double h = g.spacing[a];
      // Staggered derivative multipliers; at the Nyquist index i k exp(+-i pi/2) = -+k exactly (cos(pi/2) is not 0
      // in floating point).
      const int length = a == 2 ? s.half_x : n_a;
      s.shift_plus[a].resize(length);
      s.shift_minus[a].resize(length);
      for (int m = 0; m < length; ++m) {
        const double k = spectral_wavenumber(m, n_a, h);
        Complex2 plus = staggered_multiplier(k, h, +1), minus = staggered_multiplier(k, h, -1);
        if (n_a % 2 == 0 && m == n_a / 2) plus.im = minus.im = 0;
        s.shift_plus[a][m] = std::complex<T>(T(plus.re), T(plus.im));
        s.shift_minus[a][m] = std::complex<T>(T(minus.re), T(minus.im));
      }
      // b = exp(-d dt / 2), d(s) = d0 xi(s)^p, d0 = -(p + 1) v_max ln(R0) / (2 W h), at s = i and s = i + 1/2
      // (an inactive axis has no layer: b = 1).
      const double d0 = W > 0 && g.active(a)
                            ? -(plan.pml_power + 1) * plan.model.v_max * std::log(plan.pml_reflection) / (2 * W * h)
                            : 0;
      auto b_at = [&](double at) {
        const double xi = pml_depth(at, n_a, W);
        return T(std::exp(-d0 * std::pow(xi, plan.pml_power) * dt / 2));
      };
      s.pml_b[a].resize(n_a);
      s.pml_bs[a].resize(n_a);
      for (int i = 0; i < n_a; ++i) {
        s.pml_b[a][i] = b_at(i);
        s.pml_bs[a][i] = b_at(i + 0.5);
      }
    }
  }
  s.set_receivers(plan.receivers);
  return s;
}

template <class T>
void make_source_pattern(const SpectralSetup<T>& s, const PointStencil& source, std::vector<T>& pattern) {
  const std::size_t n = s.points();
  // p_j / (dz dy dx): the discrete delta of unit integral, spread by the point's weights (which carry the source's
  // share of the k-space factor, solver/plan/acquisition.hpp); the points of the local block only.
  const PointLists<T> raw =
      make_point_lists<T>(s.layout, std::vector<PointStencil>{source}, 1.0 / s.cell_volume, nullptr, &s.blocks.real);
  pattern.assign(n, T(0));
  for (std::size_t p = 0; p < raw.index.size(); ++p) pattern[raw.index[p]] += raw.factor[p];
  // With a density model, rho_ref / rho_s (rho_s: the source's point_density): the source term is
  // v^2 dt^2 (rho_p / rho_s) p_j / (dz dy dx), as in the FDTD staggered scheme.
  // rho_s - rho_ref as the |w|-weighted mean of rho - rho_ref (point_density's mean, exact at a constant density).
  double scale = 1;
  if (!s.density.empty()) {
    const Dims3 shape = s.blocks.real.shape;
    double sum = 0, deviation = 0;
    for (const auto& p : source.points) {
      const double rho = s.density[(std::size_t(p.iz) * shape[1] + p.iy) * shape[2] + p.ix];
      sum += std::abs(p.weight), deviation += std::abs(p.weight) * (rho - s.rho_ref);
    }
    scale = s.rho_ref / (s.rho_ref + (sum > 0 ? deviation / sum : 0.0));
  }
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) pattern[i] *= s.source_factor[i] * T(scale);
}

std::vector<std::vector<double>> spectral_source_amplitudes(SpectralAbsorber absorber,
                                                            const std::vector<std::vector<double>>& wavelets,
                                                            int components) {
  std::vector<std::vector<double>> out(wavelets.size());
  for (std::size_t j = 0; j < wavelets.size(); ++j) {
    const auto& s = wavelets[j];
    const std::size_t nt = s.size();
    out[j].resize(nt);
    double running = 0;
    for (std::size_t n = 0; n < nt; ++n) {
      // The time-averaged sample (docs/numerics.md): s_n + (s_{n+1} - 2 s_n + s_{n-1}) / 12, zero outside.
      const double before = n > 0 ? s[n - 1] : 0.0, after = n + 1 < nt ? s[n + 1] : 0.0;
      const double averaged = s[n] + (after - 2 * s[n] + before) / 12;
      running += averaged;
      out[j][n] = absorber == SpectralAbsorber::pml ? running / components : averaged;
    }
  }
  return out;
}

template struct SpectralSetup<float>;
template struct SpectralSetup<double>;
template SpectralSetup<float> make_spectral_setup<float>(const Case&, const Plan&, const SpectralBlocks*);
template SpectralSetup<double> make_spectral_setup<double>(const Case&, const Plan&, const SpectralBlocks*);
template void set_spectral_model<float, float>(SpectralSetup<float>&, const float*);
template void set_spectral_model<float, double>(SpectralSetup<float>&, const double*);
template void set_spectral_model<double, float>(SpectralSetup<double>&, const float*);
template void set_spectral_model<double, double>(SpectralSetup<double>&, const double*);
template void set_spectral_density<float, float>(SpectralSetup<float>&, std::span<const float>);
template void set_spectral_density<float, double>(SpectralSetup<float>&, std::span<const double>);
template void set_spectral_density<double, float>(SpectralSetup<double>&, std::span<const float>);
template void set_spectral_density<double, double>(SpectralSetup<double>&, std::span<const double>);
template void make_source_pattern<float>(const SpectralSetup<float>&, const PointStencil&, std::vector<float>&);
template void make_source_pattern<double>(const SpectralSetup<double>&, const PointStencil&, std::vector<double>&);

}  // namespace specwave
