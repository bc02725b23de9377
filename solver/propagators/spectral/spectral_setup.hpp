#pragma once
// Host-side preparation shared by the spectral propagators (CPU with FFTW, CUDA with cuFFT), following
// docs/numerics.md, "Pseudo-spectral k-space propagator": per-point factors, the damping and split-field
// PML profiles, the k-space symbols on the half spectrum, receivers as point lists, and the dense source
// patterns. Everything is computed once in fp64 and rounded to T here; the CPU propagator runs on these
// arrays and the CUDA propagator copies them to the device, so the two backends cannot drift apart.
#include <array>
#include <complex>
#include <functional>
#include <span>
#include <vector>

#include "kernels/common.hpp"
#include "solver/case/case.hpp"
#include "solver/plan/acquisition.hpp"
#include "solver/plan/attenuation.hpp"
#include "solver/propagators/point_lists.hpp"

namespace specwave {

struct Plan;

// The part of the grid and of its half spectrum one rank holds (solver/parallel/distributed_fft.hpp's layouts): on one
// rank, all of both.
struct SpectralBlocks {
  Block real;          // block_of(shape, {pz, py, 1}, rank): z and y split, x whole
  Subdomain spectrum;  // (kz, ky, kx) over (nz, ny, nx/2+1): kz whole, ky and kx split
};

template <class T>
struct SpectralSetup {
  FieldLayout layout;     // this rank's real block (all of (nz, ny, nx) on one rank), halo 0: index (z ny + y) nx + x
  int half_x = 0;         // nx / 2 + 1: the half spectrum of the real transforms is (nz, ny, half_x), C order
  SpectralBlocks blocks;  // global indices of the local real block and spectrum block
  int nt = 0;
  double dt = 0, c_ref = 0;  // s, m/s (c_ref = v_max)
  double cell_volume = 1;    // dz dy dx (m^3; 2-D: dz dx)
  SpectralAbsorber absorber = SpectralAbsorber::pml;
  // The axes with more than one point (GridSpec::active; 2-D: not y). The split-field PML gives a point source's term
  // to the components of the active axes only, in equal shares: an inactive axis' component (no derivative along
  // it) would hold the running sum of its share for ever.
  std::array<bool, 3> active{true, true, true};
  int components() const { return int(active[0]) + int(active[1]) + int(active[2]); }

  std::size_t points() const { return std::size_t(layout.interior_points()); }  // of the local real block
  std::size_t spectrum_points() const {                                         // of the local spectrum block
    const auto& e = blocks.spectrum.extent;
    return std::size_t(e[0]) * e[1] * e[2];
  }

  // Per grid point (layout order). Arrays the chosen absorber does not use are left empty.
  std::vector<T> vel2dt2;        // (v dt)^2                                   (damping)
  std::vector<T> dt_vel2;        // dt v^2                                     (pml)
  std::vector<T> source_factor;  // multiplies p_j: damping (v dt)^2 / (1 + eta dt), pml (v dt)^2
  // A density model (the split-field PML only; docs/numerics.md, "Variable density in the k-space method"): dt_vel2
  // and source_factor carry rho / rho_ref, and beta[a] = rho_ref / rho at the staggered points i + 1/2 of axis a
  // (2 rho_ref / (rho_i + rho_{i+1}), periodic like the FFT) multiplies dt in the w_a update. Empty without one;
  // rho_ref is the model's largest density.
  std::array<std::vector<T>, 3> beta;
  double rho_ref = 0;
  std::vector<double> density;  // the model's (global, whole grid), for the sources' densities
  // Attenuation (the split-field PML only; docs/numerics.md, "Attenuation in the k-space method"): the plan's fit and
  // the local block's Q (layout order); per mechanism the decay a_l and the drive g_l = b_l v_R^2 y_l (rho / rho_ref)
  // at every point, v_R^2 = v^2 relaxed_factor; dt_vel2 then holds the unrelaxed dt v_R^2 (1 + sum y_l) (rho /
  // rho_ref) and the source factor stays dt^2 v^2 (rho / rho_ref). Empty without [attenuation].
  SlsFit sls;
  std::vector<float> q;
  std::vector<T> sls_decay;
  std::vector<std::vector<T>> sls_drive;
  int mechanisms() const { return int(sls_decay.size()); }

  // Damping layer: the CPML profile d_a(i) of each axis (all six faces absorb), eta = d_z + d_y + d_x.
  std::array<std::vector<double>, 3> damping;  // per axis, length n_a (1/s), global index
  T eta_dt(int z, int y, int x) const { return T((damping[0][z] + damping[1][y] + damping[2][x]) * dt); }  // global
  std::vector<T> eta_dt_field() const;  // eta dt at every point of the local block (layout order)

  // On the local block of the half spectrum, with the 1 / (nz ny nx) of the unnormalised inverse transform folded in:
  std::vector<T> laplacian_symbol;  // -|k|^2 sinc^2(c_ref |k| dt / 2) / N   (damping)
  std::vector<T> kappa;             // sinc(c_ref |k| dt / 2) / N            (pml)

  // Split-field PML, per axis a. The staggered derivative D_a^+- has the symbol kappa * shift_plus/minus[a][m_a]:
  //   shift_plus[a][m]  = i k_a exp(+i k_a h_a / 2)  (grid points -> staggered points)
  //   shift_minus[a][m] = i k_a exp(-i k_a h_a / 2)  (staggered points -> grid points)
  // indexed by the (global) wavenumber index m of that axis (length n_z, n_y, and half_x for x); exactly real at
  // the Nyquist index (k_a h_a = pi), so that the product spectrum stays Hermitian.
  std::array<std::vector<std::complex<T>>, 3> shift_plus, shift_minus;
  // b = exp(-d_a dt / 2) at the grid points i (pml_b) and the staggered points i + 1/2 (pml_bs), length n_a,
  // global index.
  std::array<std::vector<T>, 3> pml_b, pml_bs;

  PointLists<T> receivers;  // receiver r samples sum_p factor[p] u[index[p]] (interpolation weights); one rank only
  BlockReceivers<T> block_receivers;         // the receivers of the local block (solver/propagators/point_lists.hpp)
  std::vector<std::uint64_t> receiver_keys;  // of the receivers above
  // The receivers above made for `stencils` unless they are those already (set_block_receivers); true when made.
  bool set_receivers(const std::vector<PointStencil>& stencils) {
    if (!set_block_receivers(block_receivers, receiver_keys, layout, stencils, blocks.real)) return false;
    receivers = block_receivers.whole;
    return true;
  }
};

// Without `blocks`: the whole grid on one rank.
template <class T>
SpectralSetup<T> make_spectral_setup(const Case& c, const Plan& plan, const SpectralBlocks* blocks = nullptr);

// The per-point factors of a velocity model (m/s, the local block in layout order) in T: (v dt)^2 and the source
// factor (damping), dt v^2 and the source factor (pml). make_spectral_setup sets them for the plan's model; the
// gradient propagator again whenever the model changes (dt, c_ref and the absorber profiles stay the plan's).
template <class T, class V>
void set_spectral_model(SpectralSetup<T>& setup, const V* velocity);

// fn(i, j) for every point i of a whole grid of `shape` (C order) and the next point j along axis a, periodic like the
// FFT's half-cell shift: the staggered point i + 1/2 of axis a lies between them (beta_a and its derivatives).
template <class Fn>
void for_each_staggered_pair(const Dims3& shape, int a, Fn&& fn) {
  for (int z = 0; z < shape[0]; ++z)
    for (int y = 0; y < shape[1]; ++y)
      for (int x = 0; x < shape[2]; ++x) {
        int next[3] = {z, y, x};
        next[a] = (next[a] + 1) % shape[a];
        fn((std::size_t(z) * shape[1] + y) * shape[2] + x,
           (std::size_t(next[0]) * shape[1] + next[1]) * shape[2] + next[2]);
      }
}

// A density model (kg/m^3, the whole grid, one rank; the split-field PML): the density and beta anew, rho_ref kept (the
// plan's: the pressure does not depend on it, so the gradient propagator's trial densities keep it even above it).
// set_spectral_model must follow (dt v^2, the source factor and the drives carry rho / rho_ref).
template <class T, class D>
void set_spectral_density(SpectralSetup<T>& setup, std::span<const D> density);

// The wavenumber of index m on an axis of n points with spacing h: 2 pi m' / (n h), m' = m for m <= n/2, m - n
// otherwise.
double spectral_wavenumber(int m, int n, double h);

// The dense pattern of one source on the local block (docs/numerics.md): pattern = source_factor * p_j / (dz dy dx),
// with p_j the source's weights (make_spectral_point_stencil: they carry the source's share of the k-space source
// factor); `pattern` is resized to setup.points().
template <class T>
void make_source_pattern(const SpectralSetup<T>& setup, const PointStencil& source, std::vector<T>& pattern);

// The factor of source j's pattern at step n, amplitudes[j][n], accumulated in fp64, with the time-averaged
// sample s~_n = s_n + (s_{n+1} - 2 s_n + s_{n-1}) / 12 (docs/numerics.md):
//   damping: s~_j(t_n);   pml: (1/3) F_j^n = (1/3) sum_{m<=n} s~_j(t_m)   (added to each of p_z, p_y, p_x)
// (1/3 in 3-D; in 2-D 1/2, to p_z and p_x: `components`, SpectralSetup::components).
std::vector<std::vector<double>> spectral_source_amplitudes(SpectralAbsorber absorber,
                                                            const std::vector<std::vector<double>>& wavelets,
                                                            int components = 3);

}  // namespace specwave
