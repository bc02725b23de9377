#pragma once
// CPU (OpenMP) loops of the isotropic elastic velocity-stress step (docs/numerics.md, "Isotropic elastic waves") on
// the view of kernels/elastic_step.hpp. Explicitly instantiated for float and double in elastic_cpu.cpp.
#include "kernels/elastic_step.hpp"

namespace specwave::cpu {

// Step 1: v^{n+1/2} from v^{n-1/2} and the stresses s^n on every point of each velocity field's computed range,
// updating the velocity terms' CPML memory. The caller then adds the force sources.
template <class T>
void elastic_velocity_step(const ElasticStep<T>& s);

// Step 2: s^{n+1} from s^n and v^{n+1/2}, updating the stress terms' CPML memory. The caller then adds the pressure
// sources.
template <class T>
void elastic_stress_step(const ElasticStep<T>& s);

// The transposes of the two steps (kernels/cpu/elastic_adjoint_cpu.cpp) on the adjoint's fields and CPML memory (s.f,
// s.psi; the coefficients the forward's): elastic_stress_adjoint adds the stress step's transpose to the velocities'
// adjoints (the stresses' own stay: s^{n+1} = s^n + ...), elastic_velocity_adjoint the velocity step's to the
// stresses'. `scratch` holds one padded field. The gradient's images (what a coefficient multiplies) are the caller's.
template <class T>
void elastic_stress_adjoint(const ElasticStep<T>& s, T* scratch);
template <class T>
void elastic_velocity_adjoint(const ElasticStep<T>& s, T* scratch);

}  // namespace specwave::cpu
