#pragma once
#include "validation/reference.hpp"
namespace specwave::validation {
// The spectral scheme of docs/numerics.md in fp64 with Eigen's FFT. Uses the fields of ReferenceProblem
// (order, pml_frequency and free_surface are ignored; free_surface must be false). c_ref = max velocity.
// problem.spectral_absorber selects the absorbing boundary: "pml" (split-field PML in first-order form;
// traces sample p = p_z + p_y + p_x, final_field and energy are of p) or "damping" (the damping layer in
// second-order form; of u). Any other string: std::invalid_argument. pml_width = 0 (no layer: periodic) is
// allowed for both.
ReferenceResult run_spectral_reference(const ReferenceProblem& problem);
}  // namespace specwave::validation
