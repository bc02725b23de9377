#pragma once
// Device memory pieces every CUDA propagator holds, for the memory estimates of the capability rows.
#include "solver/case/case.hpp"

namespace specwave {

// The receivers and sources of a GPU propagator: the receivers' ring of two halves (fp64,
// solver/propagators/gpu/device_trace_ring.hpp, not the whole traces) and the interpolation points, up to
// (2 interpolation_radius)^3 a receiver or source ((2 spectral_point_radius + 1)^3 for the spectral method), each an
// index_t, a weight of `value_bytes` and an int32 owner or slot (a receiver plane of 300 x 300 holds ~0.5 GB of them).
double device_acquisition_bytes(const Case& c, int nt, double value_bytes);

}  // namespace specwave
