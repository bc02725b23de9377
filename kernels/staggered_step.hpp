#pragma once
// The views one staggered step and one step of its adjoint take (docs/numerics.md, "Variable density"): plain pointers
// and values, host or device memory, shared by the CPU loops (kernels/cpu/staggered_cpu.hpp) and the CUDA kernels
// (kernels/cuda/staggered_cuda.hpp).
#include <stdexcept>
#include <type_traits>

#include "kernels/staggered_point.hpp"

namespace specwave {

// fn(std::integral_constant<int, R>{}) for the stencil radius R = 1..8 of a step (the CPU loops' and the CUDA
// launchers' dispatch); std::logic_error for another.
template <class Fn>
void with_radius(int radius, Fn&& fn) {
  switch (radius) {
    case 1: return fn(std::integral_constant<int, 1>{});
    case 2: return fn(std::integral_constant<int, 2>{});
    case 3: return fn(std::integral_constant<int, 3>{});
    case 4: return fn(std::integral_constant<int, 4>{});
    case 5: return fn(std::integral_constant<int, 5>{});
    case 6: return fn(std::integral_constant<int, 6>{});
    case 7: return fn(std::integral_constant<int, 7>{});
    case 8: return fn(std::integral_constant<int, 8>{});
    default: throw std::logic_error("staggered step: stencil radius 1 to 8");
  }
}

// The halo of the staggered fields: D+ on the half nodes outside the grid (-R .. -1 and n - 1 .. n + R - 2) reads the
// nodes -2R + 1 .. n + 2R - 2, which must be the field's own zeros (not another row's or plane's halo, which a
// decomposed run's exchange fills).
inline int staggered_halo(int radius) { return 2 * radius - 1; }

// Everything one staggered step needs, as plain pointers and values (the same view could drive CUDA kernels).
// Fields use one FieldLayout with halo staggered_halo(R): u on the nodes, w[a] on the half nodes of axis a (index i:
// i + 1/2). On a block of a decomposed grid the nodes and half nodes 0 .. n - 1 of each axis are the block's own; the R
// planes beyond a face shared with a neighbour arrive by the halo exchange (u before the velocity step, w_a along
// axis a before the pressure step).
template <class T>
struct StaggeredStep {
  FieldLayout layout;
  T* u = nullptr;                                 // u^n in, u^{n+1} out (without sources) after pressure_step
  T* w[3] = {nullptr, nullptr, nullptr};          // w_a^{n-1/2} in, w_a^{n+1/2} out after velocity_step
  const T* kdt = nullptr;                         // dt rho v^2 on the nodes (layout indexing)
  const T* bdt[3] = {nullptr, nullptr, nullptr};  // dt beta_a on the half nodes of axis a, halo included
  StaggeredCoefficients<T> coef;
  StaggeredCpmlAxis<T> pml[3];
  bool free_surface = false;
  // Whether the half nodes outside the grid beyond face [axis][low, high] are computed here (the grid's own faces);
  // false where a neighbouring block's w arrive there instead.
  bool ghost_band[3][2] = {{true, true}, {true, true}, {true, true}};
  // Attenuation (docs/numerics.md, "Attenuation"): `mechanisms` memory variables r_l (interior-compact arrays,
  // (nz, ny, nx)), their per-point drive g_l = b_l K_R y_l (same layout) and the decays a_l; kdt is then
  // dt K_R (1 + sum y_l) and the step adds (dt / 2) sum_l (r_l^{n+1} + r_l^n). 0 mechanisms: lossless.
  int mechanisms = 0;
  T* r[8] = {};
  const T* g[8] = {};
  T decay[8] = {};
  T half_dt = 0;
  // When set, the pressure step also writes each node's divergence D (CPML included, what u -= dt K D used) here
  // (compact (nz, ny, nx)): the gradient's imaging condition and the Born source need it.
  T* divergence_out = nullptr;
  // When set, the velocity step also writes each half node's increment w^{n+1/2} - w^{n-1/2} = -dt beta (D+ u + phi)
  // here (padded like w_a; the half nodes it updates, as two products in a CPML layer): the density gradient needs it.
  T* increment_out[3] = {nullptr, nullptr, nullptr};
};

// One step of the staggered scheme's exact adjoint (docs/numerics.md, "The staggered scheme's adjoint"), run
// backwards in time: from the adjoints of the state after forward step n (u-bar, w-bar_a, the CPML's phi-bar and
// chi-bar, the memory variables' r-bar_l) to those before it. The profiles, coefficients, dt K, dt beta, drives and
// decays are the forward step's; the CPML memory pointers (pml[a].phi, .chi) point at the adjoint slabs.
template <class T>
struct StaggeredAdjointStep {
  FieldLayout layout;
  T* u = nullptr;                         // u-bar on the nodes (padded)
  T* w[3] = {nullptr, nullptr, nullptr};  // w-bar_a on the half nodes of axis a (padded)
  // Scratch, padded like u and zero on the first call: q[a] (nodes) the adjoint of D-_a w_a, written on the grid's
  // nodes only (its halo stays zero, as D+ needs); e[a] (half nodes) the adjoint of D+_a u, written on the half nodes
  // the velocity step updates, the same every call (zero elsewhere, as D- needs). One rank: no ghost_band flags.
  T* q[3] = {nullptr, nullptr, nullptr};
  T* e[3] = {nullptr, nullptr, nullptr};
  const T* kdt = nullptr;
  const T* bdt[3] = {nullptr, nullptr, nullptr};
  StaggeredCoefficients<T> coef;
  StaggeredCpmlAxis<T> pml[3];
  bool free_surface = false;
  int mechanisms = 0;
  T* r[8] = {};  // r-bar_l (compact)
  const T* g[8] = {};
  T decay[8] = {};
  T half_dt = 0;
  // The imaging condition: image += D-bar D^n at every node, D^n the forward step's divergence (compact) and D-bar the
  // adjoint of D (compact, fp64); skipped when image is null.
  const T* divergence = nullptr;
  double* image = nullptr;
  // The buoyancy's imaging condition (the density gradient): buoyancy_image[a] += w-bar_a dw_a at every point of the
  // padded field, dw_a = w_a^{n+1/2} - w_a^{n-1/2} of the forward step (velocity_increment[a], padded), w-bar_a the
  // adjoint of w_a^{n+1/2} (the transposed pressure step's output); skipped when buoyancy_image[0] is null.
  const T* velocity_increment[3] = {nullptr, nullptr, nullptr};
  double* buoyancy_image[3] = {nullptr, nullptr, nullptr};
};

// The adjoint step's view of a forward view `f` on the adjoint's fields (u-bar, w-bar, phi-bar and chi-bar in the CPML
// slabs, r-bar in the memory variables; the model, profiles and coefficients the forward's), with the scratch q and e;
// the imaging outputs left unset.
template <class T>
StaggeredAdjointStep<T> adjoint_view(const StaggeredStep<T>& f, T* const (&q)[3], T* const (&e)[3]) {
  StaggeredAdjointStep<T> s;
  s.layout = f.layout;
  s.u = f.u;
  for (int k = 0; k < 3; ++k) s.w[k] = f.w[k], s.bdt[k] = f.bdt[k], s.pml[k] = f.pml[k], s.q[k] = q[k], s.e[k] = e[k];
  s.kdt = f.kdt;
  s.coef = f.coef;
  s.free_surface = f.free_surface;
  s.mechanisms = f.mechanisms;
  for (int l = 0; l < f.mechanisms; ++l) s.r[l] = f.r[l], s.g[l] = f.g[l], s.decay[l] = f.decay[l];
  s.half_dt = f.half_dt;
  return s;
}

// The scattering of one Born step at the nodes (the staggered gradient's born(); kernels/staggered_kernels.hpp's
// born_scatter_point): with s = relative D^n (relative = dm / m, or drho / rho, compact), dr_l += g_l s and du +=
// (dt/2 sum_l g_l - dt K) s.
template <class T>
struct StaggeredBornScatter {
  FieldLayout layout;
  T* du = nullptr;  // the perturbation's u (padded)
  const T* kdt = nullptr;
  const T* relative = nullptr;    // compact
  const T* divergence = nullptr;  // the background's D^n (compact)
  int mechanisms = 0;
  T* memory[8] = {};  // the perturbation's r_l (compact)
  const T* g[8] = {};
  T half_dt = 0;
};

}  // namespace specwave
