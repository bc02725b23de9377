#pragma once
#include "validation/reference.hpp"
namespace specwave::validation {
// The spectral scheme of docs/numerics.md in fp64 with Eigen's FFT. Uses the fields of ReferenceProblem
// (order and free_surface are ignored; free_surface must be false). c_ref = max velocity.
ReferenceResult run_spectral_reference(const ReferenceProblem& problem);
}
