// The spectral method's rows of the capability table (solver/propagators/capabilities.hpp): forward on the CPU
// (also decomposed, over the distributed FFT) and the GPU (one rank a shot); the gradient on the CPU.
#include <cmath>

#include "solver/plan/acquisition.hpp"
#include "solver/propagators/capabilities.hpp"
#include "solver/propagators/gpu/gpu_memory.hpp"
#include "solver/propagators/gradient_propagator.hpp"
#include "solver/propagators/spectral/spectral_cpu_propagator.hpp"
#include "solver/propagators/spectral/spectral_cuda_propagator.hpp"

namespace specwave {
namespace {

double value_bytes(const Case& c) { return c.run.precision == Precision::fp64 ? 8 : 4; }

// solver/propagators/spectral/spectral_cpu_propagator.cpp. PML: p, p_z, p_y, p_x, w_z, w_y, w_x, work, dt v^2,
// two half spectra (complex), kappa (half): ~11.5 fields; damping: u, u_prev, work, (v dt)^2, eta dt, symbol
// (half), spectrum (half, complex): ~7 fields. Both: the fp64 source factor, v^2 during setup, and one dense
// pattern per source; the receivers' point lists.
double host_bytes(const Case& c, int, const std::array<int, 3>& shape) {
  const double points = double(shape[0]) * shape[1] * shape[2];
  const bool pml = c.boundary.spectral_absorber == SpectralAbsorber::pml;
  // The receivers' point lists: (2 r + 1)^3 points each, an index_t, a weight and an int32 owner; and the gradient's
  // copy of them grouped by grid point (host::PointScatter: a double and an int32 each; counted for a forward run
  // too, which is the conservative side).
  const double lists = double(max_shot_receivers(c)) * std::pow(2.0 * spectral_point_radius + 1, 3) *
                       (8.0 + value_bytes(c) + 4.0 + 12.0);
  // A density model: beta_a (three fields) and the setup's copy of the density (fp64, the whole grid).
  const double density = c.model.has_density_model() ? 3.0 * value_bytes(c) * points + 8.0 * points : 0.0;
  // Attenuation: per mechanism a memory variable for each active component and the drive, and the float copy of Q.
  const double components = c.grid.two_d() ? 2.0 : 3.0;
  const double attenuation = c.attenuation.present
                                 ? (components + 1) * c.attenuation.mechanisms * value_bytes(c) * points + 4.0 * points
                                 : 0.0;
  return ((pml ? 11.5 : 7.0) + double(max_shot_sources(c))) * points * value_bytes(c) + 16.0 * points + lists +
         density + attenuation;
}

// solver/propagators/spectral/spectral_cuda_propagator.cpp. A half spectrum (nz, ny, nx/2+1) of complex values
// holds about one field's worth of values, each real symbol on it half of one; the cuFFT work area is counted as
// one spectrum.
double device_bytes(const Case& c, int nt, const std::array<int, 3>& shape) {
  const double points = double(shape[0]) * shape[1] * shape[2];
  const double value = value_bytes(c);
  const double sources = double(max_shot_sources(c));
  const double spectrum = 2.0 * double(shape[0]) * shape[1] * (shape[2] / 2 + 1);
  double values = 0;
  if (c.boundary.spectral_absorber == SpectralAbsorber::pml) {
    // p_a, w_a, scratch_a (a = z, y, x), p, dt v^2; three spectra, kappa (counted as a spectrum), the work area; a
    // density model's beta_a; attenuation's drives and memory variables (L each, 3 L of them; 2 L in 2-D)
    values = 11 * points + 3 * spectrum + spectrum + spectrum;
    if (c.model.has_density_model()) values += 3 * points;
    if (c.attenuation.present) values += (c.grid.two_d() ? 3.0 : 4.0) * c.attenuation.mechanisms * points;
  } else {
    // u^n, u^{n-1}, the Laplacian, (v dt)^2; one spectrum, the Laplacian's symbol (counted as a spectrum), the work
    // area
    values = 4 * points + spectrum + spectrum + spectrum;
  }
  values += sources * (points + nt);                  // dense source patterns p_j and their amplitudes
  if (c.output.snapshot_every > 0) values += points;  // the dense copy of a snapshot on its way to pinned memory
  return values * value + device_acquisition_bytes(c, nt, value) + 64.0 * (1 << 20);  // + plans, reductions
}

std::unique_ptr<Propagator> make_cuda_propagator(const Case& c, const Plan& plan, const Comm*) {
  return make_spectral_cuda_propagator(c, plan);
}

// The damping absorber with a density model or [attenuation] is refused by the plan on every backend; the split-field
// PML runs both on the GPU (kernels/cuda/spectral_cuda.cu).
std::string cuda_refusal(const Case&) { return {}; }

}  // namespace

Capability spectral_capability(BackendKind backend) {
  Capability row;
  row.method = Method::spectral;
  row.backend = backend;
  if (backend == BackendKind::cuda) {
    row.make_propagator = make_cuda_propagator;
    row.cannot_run = cuda_refusal;
    row.no_gradient =
        "the spectral method's gradient (invert, check-gradient) runs on the CPU backend only for now; "
        "set run.backend = \"cpu\" (or \"auto\"), or use scheme.method = \"fdtd\" for the CUDA gradient";
    row.memory_bytes = device_bytes;
  } else {
    row.make_propagator = make_spectral_cpu_propagator;
    row.decomposed = true;
    row.make_gradient = make_spectral_cpu_gradient;
    row.memory_bytes = host_bytes;
  }
  return row;
}

}  // namespace specwave
