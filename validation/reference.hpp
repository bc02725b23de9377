#pragma once
// Independent fp64 reference implementation of the discrete scheme in docs/numerics.md.
// Written from the specification only, with plain loops; clarity over speed.
#include <Eigen/Dense>
#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace specwave::validation {

struct RefPoint {
  double z, y, x;
};  // metres

struct ReferenceProblem {
  std::array<int, 3> shape;                                         // nz, ny, nx
  std::array<double, 3> spacing;                                    // dz, dy, dx (m)
  std::array<double, 3> origin{0, 0, 0};                            // oz, oy, ox (m)
  std::vector<double> velocity;                                     // nz*ny*nx, C order, x fastest (m/s)
  double dt = 0;                                                    // s
  int nt = 0;                                                       // number of steps; traces have nt samples
  int order = 8;                                                    // 2R, R = 1..8
  int pml_width = 0;                                                // W points on each absorbing face (0 = no PML)
  double pml_power = 2, pml_reflection = 1e-3, pml_frequency = 10;  // p, R0, f_peak (Hz)
  bool free_surface = false;
  // Spectral reference only: the absorbing boundary, "pml" (split-field, first order) or "damping".
  std::string spectral_absorber = "pml";
  int interpolation_radius = 4;
  // Spectral reference only: the radius of its point weights and the band they fit per axis (rad per sample).
  int spectral_point_radius = 6;
  std::array<double, 3> spectral_point_band{1.5707963267948966, 1.5707963267948966, 1.5707963267948966};
  std::vector<RefPoint> sources;
  std::vector<std::vector<double>> source_wavelets;  // one per source, nt samples each: s_j(t_n)
  std::vector<RefPoint> receivers;
  // Staggered reference only: the density, nz*ny*nx C order (kg/m^3); empty = 1 everywhere.
  std::vector<double> density;
  // Staggered reference only: visco-acoustic standard linear solids (docs/numerics.md, "Attenuation: standard linear
  // solids"); validation/sls_reference.cpp fits them.
  std::vector<double> q;  // staggered reference: Q per point, nz*ny*nx C order; empty: no attenuation
  std::array<double, 2> attenuation_band{0, 0};  // f_1, f_2 (Hz)
  double attenuation_reference_frequency = 0;    // f_r (Hz); 0: sqrt(f_1 f_2)
  int attenuation_mechanisms = 3;                // L
};

struct ReferenceResult {
  Eigen::MatrixXd traces;           // (n_receivers, nt): traces(r, n) = receiver r sampling u^n
  std::vector<double> final_field;  // u^{nt}, nz*ny*nx C order
  std::vector<double> energy;       // energy[n] = sum over the grid of (u^n)^2, n = 0..nt
};

// Runs the full scheme. Throws std::invalid_argument on inconsistent input or on
// interpolation points outside the grid (stencil points mirrored above a free surface are allowed).
ReferenceResult run_reference(const ReferenceProblem& problem);
// The staggered velocity-pressure scheme of docs/numerics.md (section "Variable density: the staggered
// velocity-pressure scheme"), with its first-order CPML and free surface; validation/staggered_reference.cpp.
// Same outputs as run_reference: traces of u^n recorded before step n, final_field = u^{nt}, energy[n] = sum (u^n)^2.
// Uses problem.density (empty: 1 everywhere); throws std::invalid_argument as run_reference does, and on a density
// of the wrong size, not finite or not positive. With problem.q non-empty the scheme is visco-acoustic (subsection
// "Attenuation: standard linear solids": memory variables r_l on the nodes, K_R from the phase velocity at f_r); it
// then also throws on a q of the wrong size, a Q not finite or below 1, a band not 0 < f_1 < f_2, f_r < 0 or not
// finite, and L outside 1..8.
ReferenceResult run_staggered_reference(const ReferenceProblem& problem);

// The standard-linear-solid fit of that subsection (validation/sls_reference.cpp), exposed for tests.
// The relaxation times tau_l = 1 / (2 pi f_l), f_l log-spaced over [f_1 / c, c f_2] (L = 1: sqrt(f_1 f_2)), and the
// widening c: the first of 1.0, 1.1, .., 2.0 minimising the largest |Q(f) / Q - 1| over 2001 log-spaced frequencies
// of the band for Q = 100. Throws std::invalid_argument unless 0 < f_1 < f_2 (finite) and 1 <= L <= 8.
struct ReferenceSlsFit {
  std::vector<double> tau;
  double widening = 1;
};
ReferenceSlsFit reference_sls_relaxation(double f1, double f2, int L);
// The weights y_l for one Q (finite, >= 1): least squares of sum_l y_l (S_l - C_l / Q) = 1 / Q over 64 log-spaced
// frequencies of the band (ends included), by the normal equations.
std::vector<double> reference_sls_weights(const std::vector<double>& tau, double f1, double f2, double q);
// Q at the frequency f (Hz) of the fit: Re m / Im m, m(omega) = 1 + sum_l y_l i omega tau_l / (1 + i omega tau_l).
double reference_sls_q(const std::vector<double>& tau, const std::vector<double>& y, double f);
// The checks both references make on a problem (sizes, spacing, velocities, dt, wavelets, layer widths); the
// message of the std::invalid_argument starts with `who`.
void check_reference_problem(const ReferenceProblem& problem, const std::string& who);
// The 3-D interpolation stencil of one point (free-surface folding included): sum_p w_p g[idx_p], w_p = w_z w_y w_x.
// Throws std::invalid_argument when the point or its stencil leaves the grid; `what` names it.
struct RefStencil {
  std::vector<std::array<int, 3>> idx;
  std::vector<double> w;
};
RefStencil reference_point_stencil(const ReferenceProblem& problem, const RefPoint& point, const char* what);

// The pieces, exposed for unit tests:
std::vector<double> reference_d2_coefficients(int order);  // c_0..c_R
std::vector<double> reference_d1_coefficients(int order);  // d_0(=0)..d_R
// The staggered first derivative's g_1..g_R at index 1..R (index 0 unused = 0).
std::vector<double> reference_staggered_coefficients(int order);

struct RefWeights1D {
  std::vector<int> index;
  std::vector<double> weight;
};
// Raw 1-D interpolation weights (indices may be negative or >= n; no free-surface folding): exact for constants,
// least squares over 0..pi/2 rad per sample (docs/numerics.md, "Sources and receivers").
RefWeights1D reference_interpolation_weights(double q /*position in grid units*/, int radius);

double reference_ricker(double t, double f_peak, double t0);
double relative_l2(const double* a, const double* b, std::size_t n);  // ||a-b|| / ||b||

}  // namespace specwave::validation
