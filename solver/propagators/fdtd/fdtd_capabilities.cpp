// FDTD's rows of the capability table (solver/propagators/capabilities.hpp): forward, decomposition and gradient
// on the CPU and the GPU, and what each holds in memory.
#include <fmt/format.h>
#include <algorithm>

#include "kernels/cpu/staggered_cpu.hpp"
#include "solver/propagators/capabilities.hpp"
#include "solver/propagators/elastic/elastic_setup.hpp"
#include "solver/propagators/fdtd/fdtd_cpu_propagator.hpp"
#include "solver/propagators/fdtd/fdtd_cuda_propagator.hpp"
#include "solver/propagators/gpu/gpu_memory.hpp"
#include "solver/propagators/gradient_propagator.hpp"

namespace specwave {
namespace {

double fdtd_value_bytes(const Case& c) { return c.run.precision == Precision::fp64 ? 8 : 4; }

// `fields` fields of a block of `shape` points padded by `halo` and, per absorbing face, two CPML memory slabs of
// W + `pad` points along its axis, in values (every face counted: an upper bound for a block of a decomposed grid).
double field_and_slab_values(const Case& c, const std::array<int, 3>& shape, int fields, int pad, int halo) {
  const double points = double(shape[0]) * shape[1] * shape[2];
  const double padded = double(shape[0] + 2 * halo) * (shape[1] + 2 * halo) * (shape[2] + 2 * halo);
  double slabs = 0;
  if (c.boundary.pml_width > 0)
    for (int a = 0; a < 3; ++a)
      if (c.grid.active(a))  // (2-D: no layer along y)
        slabs += points / shape[a] * (c.boundary.pml_width + pad) * 2 * ((a == 0 && c.boundary.free_surface) ? 1 : 2);
  return fields * padded + slabs;
}

// The second-order scheme: u, u_prev, (v dt)^2 and the psi and zeta slabs (W + 2R along their axis).
double state_values(const Case& c, const std::array<int, 3>& shape) {
  return field_and_slab_values(c, shape, 3, c.scheme.order, c.scheme.order / 2);
}

// The staggered scheme (solver/propagators/staggered/): u, w_z, w_y, w_x, dt K and dt beta_a (8 fields padded by
// staggered_halo), the phi and chi slabs (W + R along their axis), and with attenuation 2 L compact arrays (the memory
// variables r_l and their drives).
double staggered_values(const Case& c, const std::array<int, 3>& shape) {
  const double points = double(shape[0]) * shape[1] * shape[2];
  const int mechanisms = c.attenuation.present ? c.attenuation.mechanisms : 0;
  const int R = c.scheme.order / 2;
  return field_and_slab_values(c, shape, 8, R, staggered_halo(R)) + 2.0 * mechanisms * points;
}

// The elastic scheme (solver/propagators/elastic/): nine fields, dt lambda, 2 dt mu, three dt mu, three dt b and the
// pressure scratch (18 fields padded by staggered_halo), and the terms' memory slabs (elastic_slab_values).
double elastic_values(const Case& c, const std::array<int, 3>& shape) {
  const int R = c.scheme.order / 2;
  return field_and_slab_values(c, shape, 18, R, staggered_halo(R)) + double(elastic_slab_values(c, shape));
}

// solver/propagators/fdtd/fdtd_cpu_propagator.cpp: the state and the float32 model.
double fdtd_host_bytes(const Case& c, int, const std::array<int, 3>& shape) {
  const double model = 4.0 * double(shape[0]) * shape[1] * shape[2];
  // The staggered scheme's float32 velocity, density and Q in the plan, and the fp64 whole density and the block's
  // velocity and density in its set-up (every rank holds the whole grid's).
  if (c.scheme.formulation == Formulation::staggered)
    return staggered_values(c, shape) * fdtd_value_bytes(c) + 9 * model;
  // The elastic scheme's float32 vp, vs and density in the plan and its fp64 vp and density.
  if (c.scheme.formulation == Formulation::elastic) return elastic_values(c, shape) * fdtd_value_bytes(c) + 7 * model;
  return state_values(c, shape) * fdtd_value_bytes(c) + model;
}

// solver/propagators/fdtd/fdtd_cuda_propagator.cpp (staggered_cuda_propagator.cpp for the staggered scheme): the state;
// the dense interior copy (snapshots, final field, field statistics); the receivers and sources; the fp64 wavelets;
// plans and reductions.
double fdtd_device_bytes(const Case& c, int nt, const std::array<int, 3>& shape) {
  const double points = double(shape[0]) * shape[1] * shape[2];
  const double value = fdtd_value_bytes(c);
  const double wavelets = 8.0 * double(max_shot_sources(c)) * nt;
  const double state = c.scheme.formulation == Formulation::staggered ? staggered_values(c, shape)
                       : c.scheme.formulation == Formulation::elastic ? elastic_values(c, shape)
                                                                      : state_values(c, shape);
  return (state + points) * value + device_acquisition_bytes(c, nt, value) + wavelets + 64.0 * (1 << 20);
}

// The CUDA FDTD kernels put ny and nz (up to the whole grid) in gridDim.y/z, at most 65535 (the staggered and elastic
// schemes' with 2R - 1 more; the elastic adjoint's gathers with 4R - 2 more).
std::string cuda_grid_limit(const Case& c) {
  const bool staggered = c.scheme.formulation == Formulation::staggered;
  const bool elastic = c.scheme.formulation == Formulation::elastic;
  const int margin = elastic && c.inversion.present ? 2 * c.scheme.order - 2
                     : staggered || elastic         ? c.scheme.order - 1
                                                    : 0;
  if (std::max(c.grid.shape[0], c.grid.shape[1]) + margin <= 65535) return {};
  return fmt::format(
      "grid.shape = [{}, {}, {}]: the CUDA FDTD kernels take at most 65535 points along z and y "
      "(CUDA's grid limit); put the longest axis last (x), or use backend = \"cpu\"",
      c.grid.shape[0], c.grid.shape[1], c.grid.shape[2]);
}

}  // namespace

Capability fdtd_capability(BackendKind backend) {
  Capability row;
  row.method = Method::fdtd;
  row.backend = backend;
  row.decomposed = true;
  if (backend == BackendKind::cuda) {
    row.make_propagator = make_fdtd_cuda_propagator;
    row.make_gradient = make_fdtd_cuda_gradient;
    row.optimiser_on_device = true;
    row.memory_bytes = fdtd_device_bytes;
    row.cannot_run = cuda_grid_limit;
  } else {
    row.make_propagator = make_fdtd_cpu_propagator;
    row.make_gradient = make_fdtd_cpu_gradient;
    row.memory_bytes = fdtd_host_bytes;
  }
  return row;
}

}  // namespace specwave
