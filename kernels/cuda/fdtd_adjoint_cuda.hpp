#pragma once
// Host launchers of the CUDA kernels of the FDTD gradient (fdtd_adjoint_cuda.cu; docs/numerics.md, "Adjoint and
// gradient"): the adjoint step, deterministic point injection, the imaging condition and the Born source term.
// All pointers are device pointers; every launch is checked and queued in `stream`. Explicitly instantiated for
// float and double.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/fdtd_step.hpp"

namespace specwave::cuda {

// One adjoint step in mu (the 2026-12-04 path, kept as the reference of the one below until that has run on a GPU:
// SPECWAVE_CUDA_ADJOINT=mu): mu_next <- 2 mu - mu_next + Ltilde^T ((v dt)^2 mu), updating the adjoint CPML memory, in
// four kernels: w = (v dt)^2 mu (and its odd mirror above a free surface), betah/gamma on every layer point, alphah on
// every layer point, then lambda on every point. The receivers' adjoint sources and Z are the caller's, afterwards;
// the imaging condition is accumulate_gradient's.
template <class T>
void fdtd_adjoint_step(const FdtdAdjointStep<T>& step, cudaStream_t stream);

// One adjoint step in omega = (v dt)^2 mu, cpu::fdtd_adjoint_step's contract and values (FdtdScaledAdjointStep without
// `reverse`): the odd mirror of omega^{n+1} above a free surface, betah/gamma then alphah on every layer point, then
// omega^n with the imaging condition and the illumination fused (kernels/fdtd_adjoint_kernels.hpp: the bodies, which
// a CPU test checks against the CPU step).
template <class T>
void fdtd_scaled_adjoint_step(const FdtdScaledAdjointStep<T>& step, cudaStream_t stream);

// Point signals grouped by target point, so that injection needs no atomics and adds in a fixed order: target t
// gets, for k = offsets[t] .. offsets[t+1]-1 in this order, u[target[t]] += factor[k] * T(signal[owner[k] * nt + n])
// (the order in which the CPU loops add them, so the sums are deterministic and independent of the launch).
template <class T>
struct PointGather {
  const index_t* target = nullptr;        // n_targets distinct flat indices of the padded field
  const std::int32_t* offsets = nullptr;  // n_targets + 1
  const T* factor = nullptr;              // per contribution
  const std::int32_t* owner = nullptr;    // per contribution: the row of `signal`
  int n_targets = 0;
};

// u += the contributions of step n; the fp64 signal (wavelets, adjoint sources) is converted to T first, as on the CPU.
template <class T>
void add_point_signals(T* u, const PointGather<T>& points, const double* signal, int nt, int n, cudaStream_t stream);

// add_point_signals, and the imaging condition of what it adds (the adjoint in omega's receiver term): target t's
// interior-compact index interior[t]; for each contribution s = factor * T(signal), u += s and image[interior[t]] +=
// double(u_now[interior[t]]) double(s), in the CPU's order.
template <class T>
void add_point_signals_imaged(T* u, const PointGather<T>& points, const double* signal, int nt, int n,
                              const std::int64_t* interior, const T* u_now, double* image, cudaStream_t stream);

// The imaging condition of one step (fp64 accumulation), every interior point (dense index k, padded index i):
//   gradient[k] += mu[i] * a,  a = (u_next[k] - 2 u_now[k] + u_before[k]) / vel2dt2[i]  (a in T, as on the CPU);
//   illumination[k] += u_now[k]^2 when illumination is not null.
// mu and vel2dt2 are padded (layout), the u fields dense (nz, ny, nx).
template <class T>
void accumulate_gradient(const FieldLayout& layout, const T* mu, const T* u_next, const T* u_now, const T* u_before,
                         const T* vel2dt2, double* gradient, double* illumination, cudaStream_t stream);

// The Born source of one step on every interior point: du_next[i] += dm[k] * (u_next - 2 u_now + u_before)[i] /
// vel2dt2[i], with dm dense (nz, ny, nx) and the other fields padded.
template <class T>
void add_born_source(const FieldLayout& layout, T* du_next, const T* dm, const T* u_next, const T* u_now,
                     const T* u_before, const T* vel2dt2, cudaStream_t stream);

}  // namespace specwave::cuda
