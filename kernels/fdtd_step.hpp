#pragma once
// Everything one FDTD step needs, as plain pointers and values: the same view drives the CPU loops
// (host pointers) and the CUDA kernels (device pointers, passed by value as a kernel parameter).
#include "kernels/cpml_axis.hpp"
#include "kernels/fdtd_point.hpp"

namespace specwave {

// Which points one step call updates. A domain-decomposed step runs in two calls so that the halo exchange
// overlaps computation: `shell` (the points within `shell.width` of a face that has a neighbouring rank, after
// the free-surface mirror and the CPML memory psi that every point needs) and then `interior` (the rest).
// Every point is computed by the same arithmetic in either split, so the result is bitwise that of `all`.
enum class StepPart { all, shell, interior };
struct Shell {
  int width[3][2] = {};  // [axis][low/high] points of the shell next to that face (0: no neighbour there)
};

template <class T>
struct FdtdStep {
  FieldLayout layout;          // halo must equal coef.radius
  T* u = nullptr;              // u^n; its top ghost planes are rewritten when free_surface is set
  T* u_prev = nullptr;         // in: u^{n-1}; out: u^{n+1} (in place)
  const T* vel2dt2 = nullptr;  // (v dt)^2, same layout
  FdtdCoefficients<T> coef;
  CpmlAxis<T> pml[3];
  bool free_surface = false;
  // Optional (CPU, StepPart::all): u^n's interior copied here, interior-compact (nz, ny, nx), each row as the sweep's
  // stencil has just read it: a wavefield history's copy without a pass of its own.
  T* u_copy = nullptr;
};

// Boundary saving's reverse step fused into the adjoint sweep (docs/numerics.md, "Boundary saving"): on the rows and
// x ranges outside `shell` (the absorbing layers, whose values of u^n the caller has put in place), u_prev <-
// leapfrog(u, u_prev, V, L u), i.e. u^n from u^{n+1} = u and u^{n+2} = u_prev, the forward step's arithmetic
// without CPML terms; then f^n as the forward step injected it, factor * amplitude (the same expression, so the same
// rounding), at the sources' padded `index`es (sorted, stable: a point's sources in the forward's order) that fall on
// those points; on a free surface, zero on the plane z = 0. u = nullptr: none.
template <class T>
struct FdtdReverseRows {
  T* u = nullptr;  // its top ghost planes are rewritten when free_surface is set
  T* u_prev = nullptr;
  Shell shell;
  const index_t* index = nullptr;
  const T* factor = nullptr;
  const T* amplitude = nullptr;
  int sources = 0;
};

// Everything one adjoint step needs (docs/numerics.md, "Adjoint and gradient"): lambda^n from mu^{n+1} and
// mu^{n+2}, updating the adjoint CPML memory. mu = Z lambda (zero on the free surface plane). The CUDA step's view
// (kernels/cuda/fdtd_adjoint_cuda.cu); the CPU steps omega = V mu instead (FdtdScaledAdjointStep below).
template <class T>
struct FdtdAdjointStep {
  FieldLayout layout;     // halo must equal coef.radius
  const T* mu = nullptr;  // mu^{n+1}
  T* mu_next = nullptr;   // in: mu^{n+2}; out: lambda^n without the receivers' adjoint sources (in place)
  T* w = nullptr;         // scratch, same layout, ghosts zero: gets (v dt)^2 mu^{n+1} (mirrored on a free surface)
  const T* vel2dt2 = nullptr;
  FdtdCoefficients<T> coef;
  CpmlAdjointAxis<T> pml[3];
  bool free_surface = false;
};

// The adjoint step in the scaled variable omega = V mu = (v dt)^2 mu (docs/numerics.md, "The adjoint in omega"):
//   omega^n = Z [2 omega^{n+1} - omega^{n+2} + V (Ltilde^T omega^{n+1} + R^T g^n)],
// the forward step's shape, one pass over the grid (the CPU step, kernels/cpu/fdtd_adjoint_cpu.cpp). The adjoint
// CPML memory (CpmlAdjointAxis) reads w^{n+1} = omega^{n+1} as it is. The imaging condition, summed by parts in time,
// needs u^n alone: image += u^n V Ltilde^T omega^{n+1} here (imaging_term_by_parts), u^n V R^T g^n at the receivers
// (the caller's), and dJ/dV = image / V^2 at the end of the shot.
template <class T>
struct FdtdScaledAdjointStep {
  FieldLayout layout;       // halo must equal coef.radius
  T* omega = nullptr;       // omega^{n+1}; its top ghosts are rewritten when free_surface is set
  T* omega_next = nullptr;  // in: omega^{n+2}; out: omega^n without the adjoint sources and Z (in place)
  const T* vel2dt2 = nullptr;
  FdtdCoefficients<T> coef;
  CpmlAdjointAxis<T> pml[3];
  bool free_surface = false;
  // Optional, fused into the sweep: image += u^n V Ltilde^T omega^{n+1} and illumination += (u^n)^2, from the forward
  // field u^n. Interior-compact arrays (nz, ny, nx); null: not done. With u_now_padded, u_now has `layout` (the
  // forward stepper's own field, rebuilt in place by boundary saving).
  const T* u_now = nullptr;
  bool u_now_padded = false;
  double* image = nullptr;
  double* illumination = nullptr;
  // With image_partial, the terms are summed there in the run's precision, and added to the fp64 image (and
  // image_partial zeroed) on the steps with flush set: fp64 sums of short fp32 partial sums (FdtdCpuGradient flushes
  // every image_block_steps), 12 bytes a point a step instead of 20 between flushes.
  T* image_partial = nullptr;
  bool flush = true;
  // Optional (CPU, boundary saving): u^n rebuilt in the same sweep (FdtdReverseRows), each row just before its
  // imaging term reads it; u_now must then be reverse.u_prev (padded).
  FdtdReverseRows<T> reverse;
};

// The adjoint step's view with the model and the adjoint CPML state (pml: the three axes'), the fields and the imaging
// outputs left unset.
template <class T>
FdtdScaledAdjointStep<T> scaled_adjoint_view(const FieldLayout& layout, const T* vel2dt2,
                                             const FdtdCoefficients<T>& coef, const CpmlAdjointAxis<T>* pml,
                                             bool free_surface) {
  FdtdScaledAdjointStep<T> s;
  s.layout = layout;
  s.vel2dt2 = vel2dt2;
  s.coef = coef;
  for (int a = 0; a < 3; ++a) s.pml[a] = pml[a];
  s.free_surface = free_surface;
  return s;
}

// How many steps the fp32 CPU adjoint sums the imaging condition in fp32 before adding it to the fp64 image: the
// partial sums' rounding (at most this many terms, about 1e-6 relative) stays below the fp32 fields' own.
inline constexpr int image_block_steps = 16;

// Sum of the CPML corrections at point (z, y, x) (flat index i) over the axes whose layer contains it
// (0 in the interior): the per-point form used by the CUDA kernels.
template <int R, class T>
SPECWAVE_HD inline T cpml_corrections(const FdtdStep<T>& s, index_t i, int z, int y, int x) {
  T sum = 0;
  const int c[3] = {z, y, x};
#pragma unroll
  for (int axis = 0; axis < 3; ++axis) {
    const CpmlAxis<T>& p = s.pml[axis];
    if (!p.in_layer(c[axis])) continue;
    const index_t j = slab_index(p, axis, z, y, x);
    const int side = p.side(c[axis]);
    sum += cpml_correction<R>(s.u, i, s.layout.stride(axis), p.psi[side], p.zeta[side], j, p.slab_stride[axis],
                              s.coef.d2[axis], s.coef.d1[axis], p.a[c[axis]], p.b[c[axis]]);
  }
  return sum;
}

}  // namespace specwave
