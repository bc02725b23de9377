#pragma once
// CPU (OpenMP) launcher of the adjoint FDTD step (docs/numerics.md, "Adjoint and gradient").
// Explicitly instantiated for float and double in fdtd_adjoint_cpu.cpp.
#include "kernels/fdtd_step.hpp"

namespace specwave::cpu {

// One adjoint step: mu_next <- 2 mu - mu_next + Ltilde^T ((v dt)^2 mu), the exact transpose of fdtd_step
// (CPML and free-surface mirror included), updating the adjoint CPML memory. The receivers' adjoint sources
// and the free-surface projection Z (zero_top_plane) are the caller's, afterwards.
template <class T>
void fdtd_adjoint_step(const FdtdAdjointStep<T>& step);

}  // namespace specwave::cpu
