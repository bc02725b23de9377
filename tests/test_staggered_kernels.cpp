// The staggered step's CUDA kernels checked without a GPU: their bodies (kernels/staggered_kernels.hpp), run on the CPU
// over the boxes their launches cover, against the CPU loops (kernels/cpu/staggered_cpu.cpp) from the same random state
// (every field, CPML slab and memory variable), with a CPML on every face or a free surface, attenuation, orders 2 to
// 16 and a 2-D grid. What a GPU adds (the launches, the device arithmetic) is the GPU kit's (tests/test_gpu.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "case_builders.hpp"
#include "kernels/cpu/staggered_cpu.hpp"
#include "kernels/staggered_kernels.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/staggered/staggered_setup.hpp"

using namespace specwave;

namespace {

// The kernels' step on the CPU: the mirror of u (free surface), the velocity box, the mirror of w_z, the nodes.
template <int R>
void kernel_step(const StaggeredStep<double>& s) {
  const FieldLayout& L = s.layout;
  if (s.free_surface)
    for (int k = 1; k <= R; ++k)
      for (index_t p = 0; p < L.stride_z(); ++p) staggered_kernels::mirror_point<true>(L, s.u, p, k);
  const launch::Box v = staggered_kernels::velocity_box(L, R);
  for (int z = v.lo.z; z < v.lo.z + v.extent.z; ++z)
    for (int y = v.lo.y; y < v.lo.y + v.extent.y; ++y)
      for (int x = v.lo.x; x < v.lo.x + v.extent.x; ++x) staggered_kernels::velocity_point<R>(s, z, y, x);
  if (s.free_surface)
    for (int k = 1; k <= R; ++k)
      for (index_t p = 0; p < L.stride_z(); ++p) staggered_kernels::mirror_point<false>(L, s.w[0], p, k);
  const launch::Box n = staggered_kernels::pressure_box(L);
  for (int z = 0; z < n.extent.z; ++z)
    for (int y = 0; y < n.extent.y; ++y)
      for (int x = 0; x < n.extent.x; ++x) staggered_kernels::pressure_point<R>(s, z, y, x);
}

template <int R>
void check_kernels(Case c) {
  const Plan plan = make_plan(c);
  const StaggeredSetup<double> setup = make_staggered_setup<double>(c, plan);
  StaggeredFields<double> cpu(setup), gpu(setup);
  // The same random state in both: u on the nodes (its halo stays zero, as D+ beyond the faces needs), everything
  // else everywhere.
  std::mt19937_64 rng(7 + R);
  std::uniform_real_distribution<double> uniform(-1, 1);
  const FieldLayout& L = setup.layout;
  for (int z = 0; z < L.nz; ++z)
    for (int y = 0; y < L.ny; ++y)
      for (int x = 0; x < L.nx; ++x) cpu.u[std::size_t(L.index(z, y, x))] = uniform(rng);
  for (auto& w : cpu.w) std::generate(w.begin(), w.end(), [&] { return uniform(rng); });
  for (auto& s : cpu.slabs) std::generate(s.begin(), s.end(), [&] { return uniform(rng); });
  for (auto& r : cpu.memory) std::generate(r.begin(), r.end(), [&] { return uniform(rng); });
  const auto from = cpu.arrays();
  const auto to = gpu.arrays();
  for (std::size_t k = 0; k < from.size(); ++k) *to[k] = *from[k];
  const StaggeredStep<double> a = cpu.step(setup), b = gpu.step(setup);
  for (int step = 0; step < 3; ++step) {
    cpu::staggered_velocity_step(a);
    cpu::staggered_pressure_step(a);
    kernel_step<R>(b);
  }
  double worst = 0, scale = 0;
  std::size_t values = 0;
  for (std::size_t k = 0; k < from.size(); ++k)
    for (std::size_t i = 0; i < from[k]->size(); ++i) {
      worst = std::max(worst, std::abs((*from[k])[i] - (*to[k])[i]));
      scale = std::max(scale, std::abs((*from[k])[i]));
      ++values;
    }
  const std::string what =
      std::string(c.boundary.free_surface ? "free surface" : "CPML") + (c.attenuation.present ? ", Q" : "");
  MESSAGE("order " << 2 * R << ", " << c.grid.shape[0] << " x " << c.grid.shape[1] << " x " << c.grid.shape[2] << ", "
                   << what << ": " << values << " values, largest difference " << worst << " of " << scale);
  CHECK(scale > 0);
  CHECK(worst <= 1e-14 * scale);
}

Case kernels_case(int order, bool free_surface, bool attenuation, std::array<int, 3> shape) {
  Case c = testing::forward_comparison_case(order, 5, free_surface, ModelSpec::Kind::layered);
  c.grid.shape = shape;
  c.scheme.formulation = Formulation::staggered;
  c.model.interfaces = {95.0, 185.0};
  c.model.densities = {1100.0, 2000.0, 2300.0};
  c.shots[0].sources.resize(1);
  const double y = shape[1] == 1 ? 0.0 : 5.0 * shape[1] + 1.4, x = 5.0 * shape[2] - 1.2;  // (h = 10 m)
  c.shots[0].sources[0].position = {free_surface ? 21.0 : 5.0 * shape[0] + 1.3, y, x};
  c.receivers = {{free_surface ? 15.5 : 5.0 * shape[0] - 10.0, y, x + 20.0}};
  if (attenuation) {
    c.attenuation.present = true;
    c.attenuation.q_layers = {30.0, 60.0, 120.0};
  }
  return c;
}

}  // namespace

TEST_CASE("staggered: the CUDA kernels' bodies over their boxes give the CPU step's fields (no GPU needed)") {
  check_kernels<4>(kernels_case(8, false, false, {23, 26, 29}));
  check_kernels<4>(kernels_case(8, true, true, {23, 26, 29}));
  check_kernels<1>(kernels_case(2, true, false, {17, 19, 21}));
  check_kernels<2>(kernels_case(4, false, true, {21, 18, 25}));
  check_kernels<8>(kernels_case(16, false, false, {30, 31, 33}));
  check_kernels<4>(kernels_case(8, true, true, {23, 1, 29}));  // 2-D
}
