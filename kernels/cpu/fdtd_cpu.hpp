#pragma once
// CPU (OpenMP) launchers of the FDTD step. Explicitly instantiated for float and double in fdtd_cpu.cpp.
#include "kernels/cpml_axis.hpp"
#include "kernels/fdtd_point.hpp"

namespace specwave::cpu {

template <class T>
struct FdtdStep {
  FieldLayout layout;          // halo must equal coef.radius
  T* u = nullptr;              // u^n; its top ghost planes are rewritten when free_surface is set
  T* u_prev = nullptr;         // in: u^{n-1}; out: u^{n+1} (in place)
  const T* vel2dt2 = nullptr;  // (v dt)^2, same layout
  FdtdCoefficients<T> coef;
  CpmlAxis<T> pml[3];
  bool free_surface = false;
};

// One leapfrog step without sources: u_prev <- 2u - u_prev + (v dt)^2 Ltilde u, updating the CPML memory.
template <class T>
void fdtd_step(const FdtdStep<T>& step);

// Free surface: u = 0 on the plane iz = 0 (applied after sources are injected).
template <class T>
void zero_top_plane(const FieldLayout& layout, T* u);

}  // namespace specwave::cpu
