#pragma once
#include "validation/reference.hpp"
namespace specwave::validation {
// The spectral scheme of docs/numerics.md in fp64 with Eigen's FFT. Uses the fields of ReferenceProblem
// (order, pml_frequency and free_surface are ignored; free_surface must be false). c_ref = max velocity.
// problem.spectral_absorber selects the absorbing boundary: "pml" (split-field PML in first-order form;
// traces sample p = p_z + p_y + p_x, final_field and energy are of p) or "damping" (the damping layer in
// second-order form; of u). Any other string: std::invalid_argument. pml_width = 0 (no layer: periodic) is
// allowed for both.
// Sources and receivers use the spectral method's point weights (reference_spectral_point_weights on each axis,
// problem.spectral_point_radius, courant c_ref dt / h_a) for injection and sampling alike; the source carries no
// other k-space factor.
ReferenceResult run_spectral_reference(const ReferenceProblem& problem);

// The spectral method's 1-D point weights (docs/numerics.md, "Sources and receivers of the spectral method") at the
// nodes round(q) - radius .. round(q) + radius: the least-squares fit over 0..band rad per sample of
// exp(-(courant k)^2 / 24) subject to H(0) = 1 and H(pi) = 0.
RefWeights1D reference_spectral_point_weights(double q, double courant, double band, int radius);
}  // namespace specwave::validation
