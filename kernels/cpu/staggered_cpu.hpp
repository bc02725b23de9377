#pragma once
// CPU (OpenMP) loops of the staggered velocity-pressure step (docs/numerics.md, "Variable density") on the views of
// kernels/staggered_step.hpp. Explicitly instantiated for float and double in staggered_cpu.cpp.
#include "kernels/staggered_step.hpp"

namespace specwave::cpu {

// Step 1: w^{n+1/2} from w^{n-1/2} and u^n on every half node 0 .. n - 1 of each axis and, beyond the grid's own
// faces (ghost_band), -R .. -1 and n .. n + R - 2 (the free surface's ghosts of u mirrored first), updating phi.
template <class T>
void staggered_velocity_step(const StaggeredStep<T>& s);

// Step 2: u^{n+1} = u^n - dt K sum_a (D-_a w_a + chi_a) on the nodes, updating chi. The caller then adds the sources
// and, with a free surface, zeroes the top plane (zero_top_plane, kernels/cpu/fdtd_cpu.hpp).
template <class T>
void staggered_pressure_step(const StaggeredStep<T>& s);

// The adjoint of staggered_velocity_step followed by staggered_pressure_step (the sources and the free surface's
// zeroed top plane are the caller's: it zeroes the top plane of u-bar before this, and adds the receivers' adjoint
// sources after).
template <class T>
void staggered_adjoint_step(const StaggeredAdjointStep<T>& s);

}  // namespace specwave::cpu
