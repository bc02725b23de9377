#pragma once
// CPU (OpenMP) loops of the staggered velocity-pressure step (docs/numerics.md, "Variable density"). Explicitly
// instantiated for float and double in staggered_cpu.cpp.
#include "kernels/staggered_point.hpp"

namespace specwave {

// Everything one staggered step needs, as plain pointers and values (the same view could drive CUDA kernels).
// Fields use one FieldLayout with halo R: u on the nodes, w[a] on the half nodes of axis a (index i: i + 1/2).
template <class T>
struct StaggeredStep {
  FieldLayout layout;
  // u^n in, u^{n+1} out (without sources) after pressure_step. The array holds R more zero planes before and after
  // the layout's (z halo included): D+ on the half nodes outside the grid reads them (staggered_u_padding).
  T* u = nullptr;
  T* w[3] = {nullptr, nullptr, nullptr};          // w_a^{n-1/2} in, w_a^{n+1/2} out after velocity_step
  const T* kdt = nullptr;                         // dt rho v^2 on the nodes (layout indexing)
  const T* bdt[3] = {nullptr, nullptr, nullptr};  // dt beta_a on the half nodes of axis a, halo included
  StaggeredCoefficients<T> coef;
  StaggeredCpmlAxis<T> pml[3];
  bool free_surface = false;
  // Attenuation (docs/numerics.md, "Attenuation"): `mechanisms` memory variables r_l (interior-compact arrays,
  // (nz, ny, nx)), their per-point drive g_l = b_l K_R y_l (same layout) and the decays a_l; kdt is then
  // dt K_R (1 + sum y_l) and the step adds (dt / 2) sum_l (r_l^{n+1} + r_l^n). 0 mechanisms: lossless.
  int mechanisms = 0;
  T* r[8] = {};
  const T* g[8] = {};
  T decay[8] = {};
  T half_dt = 0;
};

// The values u's array holds before index 0 of its layout (and after its end): R planes of zeros.
inline index_t staggered_u_padding(const FieldLayout& L) { return index_t(L.halo) * L.stride_z(); }

namespace cpu {

// Step 1: w^{n+1/2} from w^{n-1/2} and u^n on every half node -R .. n - 2 + R of each axis (the free surface's
// ghosts of u and w_z mirrored first), updating phi.
template <class T>
void staggered_velocity_step(const StaggeredStep<T>& s);

// Step 2: u^{n+1} = u^n - dt K sum_a (D-_a w_a + chi_a) on the nodes, updating chi. The caller then adds the sources
// and, with a free surface, zeroes the top plane (zero_top_plane, kernels/cpu/fdtd_cpu.hpp).
template <class T>
void staggered_pressure_step(const StaggeredStep<T>& s);

}  // namespace cpu
}  // namespace specwave
