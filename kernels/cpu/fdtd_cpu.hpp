#pragma once
// CPU (OpenMP) launchers of the FDTD step. Explicitly instantiated for float and double in fdtd_cpu.cpp.
#include "kernels/fdtd_step.hpp"

namespace specwave::cpu {

// Which points one call updates. A domain-decomposed step runs in two calls so that the halo exchange overlaps
// computation: `shell` (the points within `shell.width` of a face that has a neighbouring rank, after the
// free-surface mirror and the CPML memory psi that every point needs) and then `interior` (the rest).
// Every point is computed by the same arithmetic in either split, so the result is bitwise that of `all`.
enum class StepPart { all, shell, interior };
struct Shell {
  int width[3][2] = {};  // [axis][low/high] points of the shell next to that face (0: no neighbour there)
};

// One leapfrog step without sources: u_prev <- 2u - u_prev + (v dt)^2 Ltilde u, updating the CPML memory.
template <class T>
void fdtd_step(const FdtdStep<T>& step, StepPart part = StepPart::all, const Shell& shell = {});

// Free surface: u = 0 on the plane iz = 0 (applied after sources are injected).
template <class T>
void zero_top_plane(const FieldLayout& layout, T* u);

}  // namespace specwave::cpu
