#pragma once
// The CPU time steps of the k-space pseudo-spectral method (docs/numerics.md, "Pseudo-spectral k-space
// propagator"), shared by the forward propagator (solver/propagators/spectral/spectral_cpu_propagator.cpp) and the
// gradient propagator (solver/propagators/spectral/spectral_cpu_gradient.cpp): the r2c/c2r transforms (FFTW on one
// rank, the distributed FFT over a domain), the damping-layer step, the split-field PML step and its transpose
// (docs/numerics.md, "Adjoint of the spectral scheme"). The per-point physics is kernels/spectral_point.hpp; the tables
// are solver/propagators/spectral/spectral_setup.hpp.
#include <omp.h>

#include <algorithm>
#include <array>
#include <complex>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/fft/fftw3d.hpp"
#include "kernels/spectral_point.hpp"
#include "kernels/staggered_point.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/parallel/distributed_fft.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/spectral/spectral_setup.hpp"

namespace specwave {

// The r2c/c2r pair on the local real block and spectrum block, on any arrays of those shapes (64-byte aligned):
// FFTW on one rank (planned on the caller's work arrays `real`, `spectrum`); the distributed FFT over the
// domain's ranks, planned on arrays of its own through which it copies (so that, as with FFTW, a transform
// touches only its input and output).
template <class T>
class SpectralTransforms {
 public:
  SpectralTransforms(const SpectralSetup<T>& s, const Comm* domain, const Plan& plan, T* real,
                     std::complex<T>* spectrum)
      : points_(s.points()), spectrum_points_(s.spectrum_points()) {
    if (domain) {
      real_.resize(points_);
      spectrum_.resize(spectrum_points_);
      distributed_ = std::make_unique<DistributedRealFft3d<T>>(
          *domain, Dims3{s.blocks.real.shape}, FftProcessGrid{plan.process_grid[0], plan.process_grid[1]}, real_.data(),
          spectrum_.data(), plan.threads);
    } else {
      serial_ =
          std::make_unique<fft::RealFft3d<T>>(s.layout.nz, s.layout.ny, s.layout.nx, real, spectrum, plan.threads);
    }
  }
  void forward(const T* in, std::complex<T>* out) {
    if (serial_) return serial_->forward(in, out);
    std::copy_n(in, points_, real_.data());
    distributed_->forward();
    std::copy_n(spectrum_.data(), spectrum_points_, out);
  }
  void backward(std::complex<T>* in, T* out) {  // destroys in
    if (serial_) return serial_->backward(in, out);
    std::copy_n(in, spectrum_points_, spectrum_.data());
    distributed_->backward();
    std::copy_n(real_.data(), points_, out);
  }

 private:
  std::size_t points_, spectrum_points_;
  std::unique_ptr<fft::RealFft3d<T>> serial_;
  std::unique_ptr<DistributedRealFft3d<T>> distributed_;
  fft::Buffer<T> real_;
  fft::Buffer<std::complex<T>> spectrum_;
};

// One source's share of a step, fused into the update that writes the field: field[i] += pattern[i] * amplitude,
// after the update's own value (the same operations as a separate pass, in the same order). No pattern: none.
template <class T>
struct SourceTerm {
  const T* pattern = nullptr;
  T amplitude = 0;
};

// The fields of the split-field PML: p = p_z + p_y + p_x and p_a at the grid points, w_a at the staggered points; with
// attenuation the memory variables r_{l,a} of each component at the grid points, memory[a * mechanisms + l] (empty
// for an inactive axis, whose component has no derivative). `divergence`, when allocated (keep_divergence), is where a
// step leaves each component's D_a^- w_a^{n+1/2} (the gradient's history with attenuation); else nowhere.
template <class T>
struct SpectralPmlFields {
  fft::Buffer<T> p;
  std::array<fft::Buffer<T>, 3> p_split, w, divergence;
  std::vector<fft::Buffer<T>> memory;

  explicit SpectralPmlFields(std::size_t points, int mechanisms = 0, std::array<bool, 3> active = {true, true, true})
      : p(points, T(0)) {
    for (int a = 0; a < 3; ++a) {
      p_split[a].assign(points, T(0));
      w[a].assign(points, T(0));
    }
    for (int a = 0; a < 3; ++a)
      for (int l = 0; l < mechanisms; ++l) memory.emplace_back(active[a] ? points : 0, T(0));
  }
  void reset() {
    std::fill(p.begin(), p.end(), T(0));
    for (int a = 0; a < 3; ++a) {
      std::fill(p_split[a].begin(), p_split[a].end(), T(0));
      std::fill(w[a].begin(), w[a].end(), T(0));
    }
    for (auto& r : memory) std::fill(r.begin(), r.end(), T(0));
    for (auto& d : divergence) std::fill(d.begin(), d.end(), T(0));
  }
  void keep_divergence() {
    for (auto& d : divergence) d.assign(p.size(), T(0));
  }
};

// A hook of SpectralCpuSteps::pml_step that does nothing.
struct NoStepHook {
  void operator()(int) const {}
};

// The steps of one setup, with the transforms planned once and the work arrays they run on. The setup is held by
// reference (the gradient propagator changes its per-point factors between shots) and must outlive this.
template <class T>
class SpectralCpuSteps {
 public:
  SpectralCpuSteps(const SpectralSetup<T>& setup, const Comm* domain, const Plan& plan)
      : setup_(setup),
        work_(setup.points()),
        spectrum_(setup.spectrum_points()),
        fft_(setup, domain, plan, work_.data(), spectrum_.data()) {
    if (setup.absorber == SpectralAbsorber::pml) scratch_.resize(spectrum_.size());
    // The fused pressure pass puts D_y^- w_y in the spectrum's memory, which on a rank of a split grid can hold fewer
    // reals than the real block (the spectrum block splits other axes): an array of its own there.
    if (setup.absorber == SpectralAbsorber::pml && 2 * spectrum_.size() < setup.points())
      divergence_y_.resize(setup.points());
  }
  SpectralCpuSteps(const SpectralCpuSteps&) = delete;
  SpectralCpuSteps& operator=(const SpectralCpuSteps&) = delete;

  // out = IFFT(symbol * FFT(in)) for a real symbol on the half spectrum (the setup's, 1/N folded in): the
  // Laplacian Lk (laplacian_symbol). out may be in.
  void apply_real_symbol(const T* in, const std::vector<T>& symbol, T* out) {
    fft_.forward(in, spectrum_.data());
    T* spec = reinterpret_cast<T*>(spectrum_.data());
    const T* sym = symbol.data();
    const std::size_t n_spec = spectrum_.size();
#pragma omp parallel for simd schedule(static)
    for (std::size_t k = 0; k < n_spec; ++k) {
      spec[2 * k] *= sym[k];
      spec[2 * k + 1] *= sym[k];
    }
    fft_.backward(spectrum_.data(), out);
  }

  // The damping layer: u_prev <- damped_leapfrog(u, u_prev, vel2dt2, Lk u, eta dt) at every point (u^{n+1} from u^n,
  // u^{n-1}), plus `source` in the same pass; the caller adds any other source and swaps. Its transpose is the same
  // step on nu = (v dt)^2 mu (docs/numerics.md).
  void damped_step(const T* u, T* u_prev, const T* vel2dt2, const T* eta_dt, SourceTerm<T> source = {}) {
    apply_real_symbol(u, setup_.laplacian_symbol, work_.data());
    const T* lap = work_.data();
    const std::size_t n = setup_.points();
    with_source(source, [&](auto add) {
#pragma omp parallel for simd schedule(static)
      for (std::size_t i = 0; i < n; ++i)
        u_prev[i] = add(damped_leapfrog(u[i], u_prev[i], vel2dt2[i], lap[i], eta_dt[i]), i);
    });
  }

  // One split-field PML step, ten transforms:
  //   w_a <- pml_velocity_update(w_a, bs_a, dt, D_a^+ p)   for a = z, y, x   (D_a^+ of the sum p)
  //   p_a <- pml_pressure_update(p_a, b_a, dt v^2, D_a^- w_a) + `source`, then after_component(a)
  //   p <- p_z + p_y + p_x
  // `source` (a third of the source term in each component) is added in the update's pass. When after_component
  // does nothing (`after_does_nothing`), the three updates and the sum are one pass (update_pressures). With
  // attenuation (the setup's drives; docs/numerics.md, "Attenuation in the k-space method") each component has memory
  // variables of its own, driven by its own D_a^- w_a, in its update's pass (update_pressure_memory). after_velocity(a)
  // follows w_a's update (the Born operator of the density; component_derivative() is D_a^+ p^n then).
  template <class After, class AfterVelocity = NoStepHook>
  void pml_step(SpectralPmlFields<T>& f, const T* dt_v2, SourceTerm<T> source, bool after_does_nothing,
                After&& after_component, AfterVelocity&& after_velocity = {}) {
    const bool attenuation = !setup_.sls_drive.empty();
    fft_.forward(f.p.data(), spectrum_.data());  // FFT(p^n), kept for the three gradients
    for (int a = 0; a < 3; ++a) {
      multiply<false>(spectrum_.data(), scratch_.data(), a, setup_.shift_plus[a]);
      fft_.backward(scratch_.data(), work_.data());  // D_a^+ p^n
      update_velocity(f.w[a].data(), a);
      after_velocity(a);
    }
    // Without attenuation and with nothing after the components, the three D_a^- w_a go to three arrays free in this
    // phase (work_, spectrum_'s memory or divergence_y_, and p, which the sum overwrites) and one pass updates the
    // three components and their sum (update_pressures): the values of update_pressure for each, one read of dt v^2.
    const bool fused = after_does_nothing && !attenuation;
    T* const divergence[3] = {work_.data(),
                              divergence_y_.empty() ? reinterpret_cast<T*>(spectrum_.data()) : divergence_y_.data(),
                              f.p.data()};
    for (int a = 0; a < 3; ++a) {
      fft_.forward(f.w[a].data(), scratch_.data());
      multiply<false>(scratch_.data(), scratch_.data(), a, setup_.shift_minus[a]);
      T* const div = fused ? divergence[a] : f.divergence[a].empty() ? work_.data() : f.divergence[a].data();
      fft_.backward(scratch_.data(), div);  // D_a^- w_a^{n+1/2}
      if (fused) {
        if (a < 2) continue;
        update_pressures(f, dt_v2, source, divergence);
        return;
      }
      if (attenuation && setup_.active[a])
        update_pressure_memory(f, a, dt_v2, div, source);
      else
        update_pressure(f.p_split[a].data(), a, dt_v2, div, source);
      if (setup_.active[a]) after_component(a);
    }
    sum_components(f);
  }

  template <class After, class AfterVelocity = NoStepHook>
  void pml_step(SpectralPmlFields<T>& f, const T* dt_v2, After&& after_component, AfterVelocity&& after_velocity = {}) {
    pml_step(f, dt_v2, {}, false, std::forward<After>(after_component), std::forward<AfterVelocity>(after_velocity));
  }

  // The transposed PML step on the scaled adjoint variables P_a (grid points) and Omega_a (staggered points),
  // ten transforms (docs/numerics.md, "Adjoint of the spectral scheme"): the forward's updates with D^+ and D^-
  // wired the other way round,
  //   Omega_a <- pml_velocity_update(Omega_a, bs_a, dt, D_a^+ P_a)          for a = z, y, x   (D_a^+ of each P_a)
  //   P_a <- pml_pressure_update(P_a, b_a, dt v^2, sum_c D_c^- Omega_c)                       (D^- of the sum)
  // The adjoint sources are the caller's, afterwards.
  // With attenuation the velocity adjoint's D_a^+ acts on drive[a] (X_a, pml_adjoint_drive) instead of P_a.
  void pml_adjoint_step(std::array<T*, 3> P, std::array<T*, 3> Omega, const T* dt_v2,
                        std::array<const T*, 3> drive = {}) {
    for (int a = 0; a < 3; ++a) {
      fft_.forward(drive[a] ? drive[a] : P[a], scratch_.data());
      multiply<false>(scratch_.data(), scratch_.data(), a, setup_.shift_plus[a]);
      fft_.backward(scratch_.data(), work_.data());  // D_a^+ P_a
      update_velocity(Omega[a], a);
    }
    for (int c = 0; c < 3; ++c) {  // sum_c D_c^- Omega_c, summed in the spectrum: one inverse transform
      fft_.forward(Omega[c], scratch_.data());
      if (c == 0)
        multiply<false>(scratch_.data(), spectrum_.data(), c, setup_.shift_minus[c]);
      else
        multiply<true>(scratch_.data(), spectrum_.data(), c, setup_.shift_minus[c]);
    }
    fft_.backward(spectrum_.data(), work_.data());
    for (int a = 0; a < 3; ++a) update_pressure(P[a], a, dt_v2, work_.data());
  }

  // out[a] = D_a^+ in for a = z, y, x: one r2c and three c2r (the density gradient's D_a^+ p^n).
  void gradient_plus(const T* in, std::array<T*, 3> out) {
    fft_.forward(in, spectrum_.data());
    for (int a = 0; a < 3; ++a) {
      multiply<false>(spectrum_.data(), scratch_.data(), a, setup_.shift_plus[a]);
      fft_.backward(scratch_.data(), out[a]);
    }
  }

  // D_a^+ p^n in pml_step's after_velocity(a) (the last transform's output).
  const T* component_derivative() const { return work_.data(); }

  // out = D_a^+ in (plus = true) or D_a^- in: the staggered derivatives alone (tests of their transposes).
  void staggered_derivative(int a, bool plus, const T* in, T* out) {
    fft_.forward(in, scratch_.data());
    multiply<false>(scratch_.data(), scratch_.data(), a, plus ? setup_.shift_plus[a] : setup_.shift_minus[a]);
    fft_.backward(scratch_.data(), out);
  }

  void sum_components(SpectralPmlFields<T>& f) {
    const T *pz = f.p_split[0].data(), *py = f.p_split[1].data(), *px = f.p_split[2].data();
    T* p = f.p.data();
    const std::size_t n = setup_.points();
#pragma omp parallel for simd schedule(static)
    for (std::size_t i = 0; i < n; ++i) p[i] = pz[i] + py[i] + px[i];
  }

  // update(i, b) at every point i of the local block, b = factor[global index of i along axis a] (the PML's b or
  // bs, which depend on that index only); row-wise loops.
  template <class Update>
  void for_each_row(int a, const std::vector<T>& factor, Update&& update) const {
    const FieldLayout& L = setup_.layout;
    const int ny = L.ny, nx = L.nx;
    const Dims3 rb = setup_.blocks.real.sub.begin;
    const T* bx = factor.data() + (a == 2 ? rb[2] : 0);
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < L.nz; ++z)
      for (int y = 0; y < ny; ++y) {
        const std::size_t row = (std::size_t(z) * ny + y) * nx;
        if (a == 2) {
#pragma omp simd
          for (int x = 0; x < nx; ++x) update(row + x, bx[x]);
        } else {
          const T br = bx[a == 0 ? z + rb[0] : y + rb[1]];
#pragma omp simd
          for (int x = 0; x < nx; ++x) update(row + x, br);
        }
      }
  }

 private:
  // out (=|+=) in * kappa * m(index along axis a) on the local block of the half spectrum (out may alias in unless
  // accumulating); m is indexed by the global wavenumber index.
  template <bool accumulate>
  void multiply(const std::complex<T>* in, std::complex<T>* out, int a, const std::vector<std::complex<T>>& m) {
    const Dims3 sb = setup_.blocks.spectrum.begin, se = setup_.blocks.spectrum.extent;
    const int ny = se[1], hx = se[2];
    const T* src = reinterpret_cast<const T*>(in);
    T* dst = reinterpret_cast<T*>(out);
    const T* kap = setup_.kappa.data();
    const T* mm = reinterpret_cast<const T*>(m.data()) + (a == 2 ? 2 * sb[2] : 0);
    auto store = [dst](std::size_t k, T re, T im) {
      if constexpr (accumulate) {
        dst[2 * k] += re;
        dst[2 * k + 1] += im;
      } else {
        dst[2 * k] = re;
        dst[2 * k + 1] = im;
      }
    };
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < se[0]; ++z)
      for (int y = 0; y < ny; ++y) {
        const std::size_t row = (std::size_t(z) * ny + y) * hx;
        if (a == 2) {
#pragma omp simd
          for (int x = 0; x < hx; ++x) {
            const std::size_t k = row + x;
            const T re = src[2 * k], im = src[2 * k + 1], s = kap[k], mr = mm[2 * x], mi = mm[2 * x + 1];
            store(k, s * (re * mr - im * mi), s * (re * mi + im * mr));
          }
        } else {
          const int at = a == 0 ? z + sb[0] : y + sb[1];
          const T mr = mm[2 * at], mi = mm[2 * at + 1];
#pragma omp simd
          for (int x = 0; x < hx; ++x) {
            const std::size_t k = row + x;
            const T re = src[2 * k], im = src[2 * k + 1], s = kap[k];
            store(k, s * (re * mr - im * mi), s * (re * mi + im * mr));
          }
        }
      }
  }

  // w <- pml_velocity_update(w, bs_a, dt, work) and p_a <- pml_pressure_update(p_a, b_a, dt v^2, work).
  void update_velocity(T* w, int a) {
    const T dt = T(setup_.dt);
    const T* grad = work_.data();
    if (!setup_.beta[a].empty()) {  // a density model: dt beta_a (SpectralSetup::beta)
      const T* beta = setup_.beta[a].data();
      for_each_row(a, setup_.pml_bs[a],
                   [=](std::size_t i, T bs) { w[i] = pml_velocity_update(w[i], bs, dt * beta[i], grad[i]); });
      return;
    }
    for_each_row(a, setup_.pml_bs[a], [=](std::size_t i, T bs) { w[i] = pml_velocity_update(w[i], bs, dt, grad[i]); });
  }
  // With attenuation, component a's update with its memory variables, D_a = div (its part of the divergence):
  //   r_{l,a} <- staggered_memory(a_l, r_{l,a}, g_l, D_a),   m = sum_l (r_{l,a}^{n+1} + r_{l,a}^n)
  //   p_a <- pml_pressure_memory_update(p_a, b_a, dt v_U^2, D_a, (dt / 2) m) + source
  // row by row (the loop over the mechanisms runs along a row buffer, so that it vectorises).
  void update_pressure_memory(SpectralPmlFields<T>& f, int a, const T* dt_v2, const T* div, SourceTerm<T> source) {
    const FieldLayout& L = setup_.layout;
    const int mechanisms = setup_.mechanisms();
    const T half_dt = T(0.5 * setup_.dt);
    T* pa = f.p_split[a].data();
    const Dims3 rb = setup_.blocks.real.sub.begin;
    const T* bx = setup_.pml_b[2].data() + rb[2];
    with_source(source, [&](auto add) {
#pragma omp parallel
      {
        std::vector<T> m(std::size_t(L.nx));
#pragma omp for collapse(2) schedule(static)
        for (int z = 0; z < L.nz; ++z)
          for (int y = 0; y < L.ny; ++y) {
            const std::size_t row = (std::size_t(z) * L.ny + y) * L.nx;
            T* __restrict mm = m.data();
            std::fill(m.begin(), m.end(), T(0));
            for (int l = 0; l < mechanisms; ++l) {
              T* __restrict r = f.memory[std::size_t(a * mechanisms + l)].data() + row;
              const T* __restrict g = setup_.sls_drive[std::size_t(l)].data() + row;
              const T* __restrict d = div + row;
              const T decay = setup_.sls_decay[std::size_t(l)];
#pragma omp simd
              for (int x = 0; x < L.nx; ++x) {
                const T next = staggered_memory(decay, r[x], g[x], d[x]);
                mm[x] += next + r[x];
                r[x] = next;
              }
            }
            const T b_row = a == 2 ? T(1) : setup_.pml_b[a][std::size_t(a == 0 ? z + rb[0] : y + rb[1])];
#pragma omp simd
            for (int x = 0; x < L.nx; ++x) {
              const std::size_t i = row + std::size_t(x);
              const T b = a == 2 ? bx[x] : b_row;
              pa[i] = add(pml_pressure_memory_update(pa[i], b, dt_v2[i], div[i], half_dt * mm[x]), i);
            }
          }
      }
    });
  }

  // The three components' updates (each update_pressure's values: its source when its axis is active) and p = p_z +
  // p_y + p_x in one pass, D_a^- w_a in divergence[a] (divergence[2] is p's memory: read before p is written).
  void update_pressures(SpectralPmlFields<T>& f, const T* dt_v2, SourceTerm<T> source, T* const (&divergence)[3]) {
    const FieldLayout& L = setup_.layout;
    const int ny = L.ny, nx = L.nx;
    const Dims3 rb = setup_.blocks.real.sub.begin;
    const T *bz = setup_.pml_b[0].data() + rb[0], *by = setup_.pml_b[1].data() + rb[1],
            *bx = setup_.pml_b[2].data() + rb[2];
    const T *dz = divergence[0], *dy = divergence[1], *dx = divergence[2];
    T *pz = f.p_split[0].data(), *py = f.p_split[1].data(), *px = f.p_split[2].data(), *p = f.p.data();
    const bool active_z = setup_.active[0], active_y = setup_.active[1], active_x = setup_.active[2];
    with_source(source, [&](auto add) {
#pragma omp parallel for collapse(2) schedule(static)
      for (int z = 0; z < L.nz; ++z)
        for (int y = 0; y < ny; ++y) {
          const std::size_t row = (std::size_t(z) * ny + y) * nx;
          const T b0 = bz[z], b1 = by[y];
#pragma omp simd
          for (int x = 0; x < nx; ++x) {
            const std::size_t i = row + std::size_t(x);
            const T k = dt_v2[i];
            T vz = pml_pressure_update(pz[i], b0, k, dz[i]);
            T vy = pml_pressure_update(py[i], b1, k, dy[i]);
            T vx = pml_pressure_update(px[i], bx[x], k, dx[i]);
            if (active_z) vz = add(vz, i);
            if (active_y) vy = add(vy, i);
            if (active_x) vx = add(vx, i);
            pz[i] = vz;
            py[i] = vy;
            px[i] = vx;
            p[i] = vz + vy + vx;
          }
        }
    });
  }

  // p_a <- pml_pressure_update(p_a, b_a, dt v^2, div) + source, div = D_a^- w_a (or the adjoint's sum).
  void update_pressure(T* pa, int a, const T* dt_v2, const T* div, SourceTerm<T> source = {}) {
    if (!setup_.active[a]) source = {};  // (SpectralSetup::active)
    with_source(source, [&](auto add) {
      for_each_row(a, setup_.pml_b[a],
                   [=](std::size_t i, T b) { pa[i] = add(pml_pressure_update(pa[i], b, dt_v2[i], div[i]), i); });
    });
  }
  // f(add) with add(v, i) = v + pattern[i] * amplitude, or v when there is no source: the loops are compiled for
  // each case, so the sourceless pass reads no pattern.
  template <class F>
  static void with_source(SourceTerm<T> source, F&& f) {
    if (!source.pattern) return f([](T v, std::size_t) { return v; });
    const T* pattern = source.pattern;
    const T amplitude = source.amplitude;
    f([=](T v, std::size_t i) {
      v += pattern[i] * amplitude;
      return v;
    });
  }

  const SpectralSetup<T>& setup_;
  fft::Buffer<T> work_;                    // real work array of the planned transforms
  fft::Buffer<std::complex<T>> spectrum_;  // spectrum work array of the planned transforms
  SpectralTransforms<T> fft_;
  fft::Buffer<std::complex<T>> scratch_;  // a second spectrum (PML only; c2r destroys its input)
  fft::Buffer<T> divergence_y_;           // (pml_step) where the spectrum's memory is too small for D_y^- w_y
};

// The sources of one shot: the dense patterns source_factor p_j / (dz dy dx) of make_source_pattern and their
// amplitudes per step (spectral_source_amplitudes).
template <class T>
struct SpectralSources {
  std::vector<std::vector<T>> patterns;
  std::vector<std::vector<double>> amplitudes;

  void begin(const SpectralSetup<T>& setup, const std::vector<PointStencil>& sources,
             const std::vector<std::vector<double>>& wavelets) {
    amplitudes = spectral_source_amplitudes(setup.absorber, wavelets, setup.components());
    patterns.assign(sources.size(), {});
    for (std::size_t j = 0; j < sources.size(); ++j) make_source_pattern(setup, sources[j], patterns[j]);
  }

  // Source `j`'s term at step n, for a step to add in its own pass (none when its amplitude is exactly 0 or there is
  // no such source).
  SourceTerm<T> term(std::size_t j, int n) const {
    if (j >= patterns.size()) return {};
    const T amplitude = T(amplitudes[j][n]);
    if (amplitude == T(0)) return {};
    return {patterns[j].data(), amplitude};
  }

  // field += sum_{j >= first} amplitudes_j[n] pattern_j (sources whose amplitude is exactly 0 this step are skipped).
  // With first = 1 after a step that added term(0, n): the same sum, in the same order, as add(field, n).
  void add(T* field, int n, std::size_t first = 0) const {
    for (std::size_t j = first; j < patterns.size(); ++j) {
      const T amplitude = T(amplitudes[j][n]);
      if (amplitude == T(0)) continue;
      const T* pattern = patterns[j].data();
      const std::size_t points = patterns[j].size();
#pragma omp parallel for simd schedule(static)
      for (std::size_t i = 0; i < points; ++i) field[i] += pattern[i] * amplitude;
    }
  }
};

}  // namespace specwave
