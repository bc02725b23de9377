#pragma once
// Boundary saving with back-propagation (docs/numerics.md, "Forward wavefields for the sum"): the FDTD leapfrog
// is time-reversible wherever the update has no CPML term,
//   u^{n+1} = Z [2 u^n - u^{n-1} + V (L u^n + f^n)]   =>   u^{n-1} = Z [2 u^n - u^{n+1} + V (L u^n + f^n)],
// so the forward pass keeps u^n only at the points whose update has a CPML term (the absorbing layer, which
// dissipates and cannot be run backwards) for n = 0 .. nt-2, and the last two fields u^nt, u^{nt-1} whole.
// The adjoint pass then rebuilds u^{n-1} from u^n and u^{n+1}: the reverse step on every point, the saved
// values on the layer points. Memory (nt - 1) B + 2 F values (B layer points, F grid points); one reverse step
// (without CPML terms) per forward step. The rebuilt fields equal the stored ones up to rounding, which the
// neutrally stable leapfrog carries along without amplifying it (docs/numerics.md gives the bound); the
// strategy is therefore not bitwise like the others.
#include <array>
#include <cstddef>
#include <memory>

#include "solver/propagators/history/wavefield_history.hpp"

namespace specwave {

// Needs a stepper with reversible() (the FDTD CPU gradient propagator); run_forward throws Error(invalid_case)
// for one without.
template <class T>
std::unique_ptr<WavefieldHistory<T>> make_boundary_history();

// Points of a grid (nz, ny, nx) whose FDTD update has a CPML term: those within `width` of an absorbing face
// (every face, less the top one under a free surface).
std::size_t cpml_update_points(const std::array<int, 3>& shape, int width, bool free_surface);

// Bytes of the strategy: (nt - 1) steps of the layer values (step_bytes each) and two fields; 0 steps for nt < 2.
inline double boundary_history_bytes(int nt, double field_bytes, double step_bytes) {
  return (nt > 1 ? nt - 1.0 : 0.0) * step_bytes + 2 * field_bytes;
}

}  // namespace specwave
