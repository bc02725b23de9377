#pragma once
// Everything one FDTD step needs, as plain pointers and values: the same view drives the CPU loops
// (host pointers) and the CUDA kernels (device pointers, passed by value as a kernel parameter).
#include "kernels/cpml_axis.hpp"
#include "kernels/fdtd_point.hpp"

namespace specwave {

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

}  // namespace specwave
