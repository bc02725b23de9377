#pragma once
// Host launchers of the CUDA kernels of the elastic velocity-stress step (elastic_cuda.cu; docs/numerics.md,
// "Isotropic elastic waves"), callable from plain C++. The view is kernels/elastic_step.hpp's ElasticStep with device
// pointers; every launch is checked and queued in `stream`. One rank (every ghost band is the grid's own). Explicitly
// instantiated for float and double.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

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

// ---- The elastic gradient's pointwise kernels (solver/propagators/elastic/elastic_cuda_gradient.cpp), the CPU
// gradient's loops a point (kernels/elastic_adjoint_kernels.hpp's helpers). `packed`: the history's field
// (elastic_adjoint_kernels::packed_index); `increments`: the nine fields' increments, padded, one after another.

// packed = the increments on every field's computed range.
template <class T>
void elastic_pack_increments(const ElasticStep<T>& s, const T* increments, T* packed, cudaStream_t stream);
// out += double(a) double(packed field f) on field f's computed range (the images of dt b and dt mu).
template <class T>
void elastic_add_packed_product(const ElasticStep<T>& s, int f, double* out, const T* a, const T* packed,
                                cudaStream_t stream);
// The normal stresses' images at every node (elastic_adjoint_kernels::normal_stress_images); s is the adjoint's view.
template <class T>
void elastic_normal_images(const ElasticStep<T>& s, const T* packed, double* lam_image, double* mu2_image,
                           cudaStream_t stream);
// A Born run's scattering into the normal stresses of du at every node (scatter_normal_stress), from the
// background's increments and the perturbed coefficients dlam, dmu2 (padded).
template <class T>
void elastic_scatter_normal(const ElasticStep<T>& du, const T* dlam, const T* dmu2, const T* increments,
                            cudaStream_t stream);
// out[k] += p^2 at every node (k compact), p = (s_zz + s_yy + s_xx) / 3 in fp64: the forward's illumination.
template <class T>
void elastic_add_pressure_squares(const ElasticStep<T>& s, double* out, cudaStream_t stream);
// The sources' images of adjoint step n, point by point in the CPU's order (one thread): for each point p whose kind
// belongs to the half (velocity: kind `sample`, the forces; else the others but `midpoint`, the moment rates), image[p]
// += double(all[field[p] size + index[p]]) double(factor[p]) table[(3 source[p] + kind[p]) nt + n].
template <class T>
void elastic_source_images(const T* all, std::size_t size, const std::uint8_t* field, const index_t* index,
                           const T* factor, const std::uint8_t* kind, const std::int32_t* source, int n_points,
                           const double* table, int nt, int n, bool velocity, std::uint8_t sample,
                           std::uint8_t midpoint, double* image, cudaStream_t stream);

// The pressure -(s_zz + s_yy + s_xx) / 3 on every node into `out` (padded like the fields; its halo untouched).
template <class T>
void elastic_pressure(const ElasticStep<T>& s, T* out, cudaStream_t stream);

}  // namespace specwave::cuda
