#pragma once
// Independent fp64 reference of the isotropic elastic velocity-stress scheme of docs/numerics.md (section "Isotropic
// elastic waves: the velocity-stress scheme"): written from the specification only, with plain loops, no engine code
// (nothing from kernels/ or solver/); validation/elastic_reference.cpp.
#include "validation/reference.hpp"

#include <Eigen/Dense>

#include <array>
#include <vector>

namespace specwave::validation {

struct ElasticRefSource {
  RefPoint position;                         // metres (z, y, x)
  bool force = false;                        // false: pressure (explosive) source; true: force along `direction`
  std::array<double, 3> direction{1, 0, 0};  // unit vector (z, y, x), force only
  std::vector<double> wavelet;               // nt samples s(t_n) (N for a force)
};

struct ElasticRefReceiver {
  RefPoint position;  // metres (z, y, x)
  int component = 0;  // 0: pressure -(s_zz + s_yy + s_xx) / 3; 1: v_z; 2: v_y; 3: v_x (m/s)
};

struct ElasticReferenceProblem {
  // shape, spacing, origin, dt, nt, order (2, 4, 6 or 8), pml_width, pml_power, pml_reflection, pml_frequency and
  // interpolation_radius as in ReferenceProblem; velocity = vp (m/s) and density = rho (kg/m^3, required), nz*ny*nx
  // C order. base.sources, base.receivers and base.source_wavelets are unused; base.free_surface must be false.
  ReferenceProblem base;
  std::vector<double> shear_velocity;  // vs (m/s), nz*ny*nx C order, >= 0 (0: fluid)
  // The multi-axial PML's ratio p: each layer also filters the other axes' derivatives, with d times p xi^8 (0:
  // none).
  double pml_multiaxial = 0;
  std::vector<ElasticRefSource> sources;
  std::vector<ElasticRefReceiver> receivers;
};

struct ElasticReferenceResult {
  // (n_receivers, nt): pressure sample n = p^n recorded before step n; velocity sample n =
  // (v^{n-1/2} + v^{n+1/2}) / 2 with v^{-1/2} = 0.
  Eigen::MatrixXd traces;
  // The nine fields after nt steps (s^{nt}, v^{nt-1/2}) on the array indices 0 .. n - 1 of each axis (nz*ny*nx C order;
  // index i is the point i along an axis where the field lies on nodes, i + 1/2 where it lies half way), in the order
  // s_zz, s_yy, s_xx, s_zy, s_zx, s_yx, v_z, v_y, v_x.
  std::array<std::vector<double>, 9> final_fields;
};

// Runs nt steps of the scheme with its first-order CPML (no free surface). A 2-D grid (ny = 1) has no y derivative,
// no y layer and every field at iy = 0; a point source injects over dz dx there, and v_y receivers and forces with a
// y component are refused. Throws std::invalid_argument (message starting "elastic reference:") on inconsistent
// input: sizes, vs < 0 or not finite, a density missing or not positive, free_surface, an order outside 2..8, and
// whatever check_reference_problem rejects; on a point whose node stencil leaves the grid or whose shifted stencil
// leaves the half-node arrays' computed range -R .. n - 2 + R.
ElasticReferenceResult run_elastic_reference(const ElasticReferenceProblem& problem);

}  // namespace specwave::validation
