#pragma once
// Host launchers of the CUDA kernels of the elastic velocity-stress step (elastic_cuda.cu; docs/numerics.md,
// "Isotropic elastic waves"), callable from plain C++. The view is kernels/elastic_step.hpp's ElasticStep with device
// pointers; every launch is checked and queued in `stream`. One rank (every ghost band is the grid's own). Explicitly
// instantiated for float and double.
#include <cuda_runtime_api.h>

#include "kernels/elastic_step.hpp"

namespace specwave::cuda {

// Step 1 (cpu::elastic_velocity_step's values): with a free surface the stresses' images on the R planes above z = 0,
// then v_z, v_y, v_x on every point of their computed ranges with their terms' CPML memory (and the increments where
// the view asks for them). The caller then adds the forces.
template <class T>
void elastic_velocity_step(const ElasticStep<T>& s, cudaStream_t stream);

// Step 2 (cpu::elastic_stress_step's): with a free surface the velocities' images, then the six stresses. The caller
// adds the pressure and moment sources and zeroes s_zz on the surface.
template <class T>
void elastic_stress_step(const ElasticStep<T>& s, cudaStream_t stream);

// The adjoint's halves (cpu::elastic_stress_adjoint's and cpu::elastic_velocity_adjoint's values on the adjoint's
// fields and CPML memory; kernels/elastic_adjoint_kernels.hpp): each term's scratch pass into `scratch` (padded like
// the fields) and its gather, term after term, then the free surface's images folded back. The caller zeroes s_zz-bar
// on the surface first and adds the adjoint sources.
template <class T>
void elastic_stress_adjoint(const ElasticStep<T>& s, T* scratch, cudaStream_t stream);
template <class T>
void elastic_velocity_adjoint(const ElasticStep<T>& s, T* scratch, cudaStream_t stream);

// The pressure -(s_zz + s_yy + s_xx) / 3 on every node into `out` (padded like the fields; its halo untouched).
template <class T>
void elastic_pressure(const ElasticStep<T>& s, T* out, cudaStream_t stream);

}  // namespace specwave::cuda
