#pragma once
// CPU (OpenMP) launcher of the adjoint FDTD step (docs/numerics.md, "Adjoint and gradient").
// Explicitly instantiated for float and double in fdtd_adjoint_cpu.cpp.
#include "kernels/fdtd_step.hpp"

namespace specwave::cpu {

// One adjoint step in omega = (v dt)^2 mu: omega_next <- 2 omega - omega_next + (v dt)^2 Ltilde^T omega, the exact
// transpose of fdtd_step (CPML and free-surface mirror included) scaled by (v dt)^2, updating the adjoint CPML memory
// and, when asked, the imaging condition and the illumination (FdtdScaledAdjointStep). The receivers' adjoint
// sources ((v dt)^2 R^T g) and the free-surface projection Z (zero_top_plane) are the caller's, afterwards.
template <class T>
void fdtd_adjoint_step(const FdtdScaledAdjointStep<T>& step);

}  // namespace specwave::cpu
