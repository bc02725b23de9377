// The elastic step's CUDA kernels checked without a GPU: their bodies (kernels/elastic_kernels.hpp), run on the CPU
// over the boxes their launches cover, against the CPU loops (kernels/cpu/elastic_cpu.cpp) from the same random state
// (the nine fields, every term's CPML memory slab and the step's increments), with a CPML on every face or a free
// surface, orders 2 to 8, a fluid layer and a 2-D grid. What a GPU adds (the launches, the device arithmetic) is the
// GPU kit's (tests/test_gpu.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "case_builders.hpp"
#include "kernels/cpu/elastic_cpu.hpp"
#include "kernels/elastic_adjoint_kernels.hpp"
#include "kernels/elastic_kernels.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/elastic/elastic_setup.hpp"

using namespace specwave;

namespace {

// The kernels' step on the CPU: the stresses' images (free surface), the velocity box, the velocities' images, the
// stress box; every point of a box in any order (here backwards, which the CPU loops never do).
template <int R>
void kernel_step(const ElasticStep<double>& s) {
  const FieldLayout& L = s.layout;
  const auto sweep = [](const launch::Box& b, auto&& point) {
    for (int z = b.lo.z + b.extent.z - 1; z >= b.lo.z; --z)
      for (int y = b.lo.y + b.extent.y - 1; y >= b.lo.y; --y)
        for (int x = b.lo.x + b.extent.x - 1; x >= b.lo.x; --x) point(z, y, x);
  };
  if (s.free_surface)
    for (int k = 1; k <= R; ++k)
      for (index_t p = 0; p < L.stride_z(); ++p) elastic_kernels::velocity_mirror_point(s, p, k);
  sweep(elastic_kernels::velocity_box(s), [&](int z, int y, int x) { elastic_kernels::velocity_point<R>(s, z, y, x); });
  if (s.free_surface)
    for (int k = 1; k <= R; ++k)
      for (index_t p = 0; p < L.stride_z(); ++p) elastic_kernels::stress_mirror_point(s, p, k);
  sweep(elastic_kernels::stress_box(s), [&](int z, int y, int x) { elastic_kernels::stress_point<R>(s, z, y, x); });
}

// The same random state in both, everywhere: fields (halos included: the images and the ghost bands overwrite what
// the step computes, the rest of the halo is read as it is by both) and memory slabs.
void same_random_state(ElasticFields<double>& cpu, ElasticFields<double>& gpu, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::generate(cpu.all.begin(), cpu.all.end(), [&] { return uniform(rng); });
  for (auto& s : cpu.slabs) std::generate(s.begin(), s.end(), [&] { return uniform(rng); });
  gpu.all = cpu.all;
  for (std::size_t k = 0; k < cpu.slabs.size(); ++k) gpu.slabs[k] = cpu.slabs[k];
}

// The largest difference of two sets of arrays, the largest magnitude of the first, and the values compared.
struct Difference {
  double worst = 0, scale = 0;
  std::size_t values = 0;
  void add(const std::vector<double>& x, const std::vector<double>& y) {
    REQUIRE(x.size() == y.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      worst = std::max(worst, std::abs(x[i] - y[i]));
      scale = std::max(scale, std::abs(x[i]));
    }
    values += x.size();
  }
  void add(const ElasticFields<double>& a, const ElasticFields<double>& b) {
    add(a.all, b.all);
    for (std::size_t k = 0; k < a.slabs.size(); ++k) add(a.slabs[k], b.slabs[k]);
  }
};

template <int R>
void check_kernels(const Case& c) {
  const Plan plan = make_plan(c);
  const ElasticSetup<double> setup = make_elastic_setup<double>(c, plan);
  ElasticFields<double> cpu(setup), gpu(setup);
  const std::size_t size = std::size_t(setup.layout.size());
  std::vector<double> increments[2];
  for (auto& v : increments) v.assign(elastic_fields * size, 0.0);
  same_random_state(cpu, gpu, 11 + R);
  ElasticStep<double> a = cpu.step(setup), b = gpu.step(setup);
  for (int f = 0; f < elastic_fields; ++f) {
    a.increment_out[f] = increments[0].data() + f * size;
    b.increment_out[f] = increments[1].data() + f * size;
  }
  for (int step = 0; step < 3; ++step) {
    cpu::elastic_velocity_step(a);
    cpu::elastic_stress_step(a);
    kernel_step<R>(b);
  }
  Difference d;
  d.add(cpu, gpu);
  d.add(increments[0], increments[1]);
  const std::string what = c.boundary.free_surface ? "free surface" : "CPML";
  MESSAGE("order " << 2 * R << ", " << c.grid.shape[0] << " x " << c.grid.shape[1] << " x " << c.grid.shape[2] << ", "
                   << what << ": " << d.values << " values, largest difference " << d.worst << " of " << d.scale);
  CHECK(d.scale > 0);
  CHECK(d.worst <= 1e-14 * d.scale);
}

// The adjoint kernels' halves on the CPU, term by term and pass by pass (kernels/elastic_adjoint_kernels.hpp), each
// box swept backwards (which the CPU loops never do).
template <int R, int First, int Last>
void kernel_adjoint_half(const ElasticStep<double>& s, double* g) {
  const auto sweep = [](const launch::Box& b, auto&& point) {
    for (int z = b.lo.z + b.extent.z - 1; z >= b.lo.z; --z)
      for (int y = b.lo.y + b.extent.y - 1; y >= b.lo.y; --y)
        for (int x = b.lo.x + b.extent.x - 1; x >= b.lo.x; --x) point(z, y, x);
  };
  elastic_adjoint_kernels::for_terms<First, Last>([&](auto term) {
    constexpr int t = decltype(term)::value;
    if (!elastic_adjoint_kernels::term_active<t>(s)) return;
    sweep(elastic_adjoint_kernels::scratch_box<t>(s),
          [&](int z, int y, int x) { elastic_adjoint_kernels::term_scratch_point<t>(s, g, z, y, x); });
    sweep(elastic_adjoint_kernels::gather_box<R, t>(s),
          [&](int z, int y, int x) { elastic_adjoint_kernels::term_gather_point<R, t>(s, g, z, y, x); });
  });
  if (!s.free_surface) return;
  for (int k = 1; k <= R; ++k)
    for (index_t p = 0; p < s.layout.stride_z(); ++p) {
      if (First == 0)
        elastic_adjoint_kernels::velocity_adjoint_fold_point(s, p, k);
      else
        elastic_adjoint_kernels::stress_adjoint_fold_point(s, p, k);
    }
}

template <int R>
void check_adjoint_kernels(const Case& c) {
  const Plan plan = make_plan(c);
  const ElasticSetup<double> setup = make_elastic_setup<double>(c, plan);
  ElasticFields<double> cpu(setup), gpu(setup);
  const std::size_t size = std::size_t(setup.layout.size());
  std::vector<double> scratch[2] = {std::vector<double>(size, 0.0), std::vector<double>(size, 0.0)};
  same_random_state(cpu, gpu, 17 + R);
  const ElasticStep<double> a = cpu.step(setup), b = gpu.step(setup);
  for (int step = 0; step < 3; ++step) {  // the adjoint's order: the stress half's transpose, then the velocity half's
    cpu::elastic_stress_adjoint(a, scratch[0].data());
    cpu::elastic_velocity_adjoint(a, scratch[0].data());
    kernel_adjoint_half<R, 9, 18>(b, scratch[1].data());
    kernel_adjoint_half<R, 0, 9>(b, scratch[1].data());
  }
  Difference d;
  d.add(cpu, gpu);
  const std::string what = c.boundary.free_surface ? "free surface" : "CPML";
  MESSAGE("adjoint, order " << 2 * R << ", " << c.grid.shape[0] << " x " << c.grid.shape[1] << " x " << c.grid.shape[2]
                            << ", " << what << ": " << d.values << " values, largest difference " << d.worst << " of "
                            << d.scale);
  CHECK(d.scale > 0);
  CHECK(d.worst <= 1e-14 * d.scale);
}

// Water over two solids (vs 0, 1100, 1400 m/s; densities 1000, 2100, 2400) on a small grid, a CPML of 5 or a free
// surface with a CPML on the other faces.
Case kernels_case(int order, bool free_surface, std::array<int, 3> shape) {
  Case c = testing::forward_comparison_case(order, 5, free_surface, ModelSpec::Kind::layered);
  c.grid.shape = shape;
  c.scheme.formulation = Formulation::elastic;
  c.model.interfaces = {95.0, 185.0};
  c.model.densities = {1000.0, 2100.0, 2400.0};
  c.model.shear_velocities = {0.0, 1100.0, 1400.0};
  c.shots[0].sources.resize(1);
  const double y = shape[1] == 1 ? 0.0 : 5.0 * shape[1] + 1.4, x = 5.0 * shape[2] - 1.2;  // (h = 10 m)
  c.shots[0].sources[0].position = {free_surface ? 61.0 : 5.0 * shape[0] + 1.3, y, x};
  c.receivers = {{free_surface ? 55.5 : 5.0 * shape[0] - 10.0, y, x + 20.0}};
  return c;
}

}  // namespace

TEST_CASE("elastic: the CUDA kernels' bodies over their boxes give the CPU step's fields (no GPU needed)") {
  check_kernels<4>(kernels_case(8, false, {23, 26, 29}));
  check_kernels<4>(kernels_case(8, true, {23, 26, 29}));
  check_kernels<1>(kernels_case(2, true, {17, 19, 21}));
  check_kernels<2>(kernels_case(4, false, {21, 18, 25}));
  check_kernels<3>(kernels_case(6, true, {19, 20, 22}));
  check_kernels<4>(kernels_case(8, true, {23, 1, 29}));  // 2-D
  check_kernels<4>(kernels_case(8, false, {23, 1, 29}));
}

TEST_CASE("elastic: the CUDA adjoint kernels' bodies over their boxes give the CPU adjoint's fields (no GPU needed)") {
  check_adjoint_kernels<4>(kernels_case(8, false, {23, 26, 29}));
  check_adjoint_kernels<4>(kernels_case(8, true, {23, 26, 29}));
  check_adjoint_kernels<1>(kernels_case(2, true, {17, 19, 21}));
  check_adjoint_kernels<2>(kernels_case(4, false, {21, 18, 25}));
  check_adjoint_kernels<3>(kernels_case(6, true, {19, 20, 22}));
  check_adjoint_kernels<4>(kernels_case(8, true, {23, 1, 29}));  // 2-D
}

TEST_CASE("elastic: the CUDA gradient's packed history field is in the CPU gradient's order (rows of each range)") {
  // The CPU gradient packs each field's computed range row by row ((z, y), x contiguous), field after field
  // (ElasticGradientModel::rows_); the CUDA kernels index it by elastic_adjoint_kernels::packed_index.
  for (const bool free_surface : {false, true})
    for (const std::array<int, 3> shape : {std::array<int, 3>{23, 26, 29}, std::array<int, 3>{23, 1, 29}}) {
      const Case c = kernels_case(8, free_surface, shape);
      const Plan plan = make_plan(c);
      const ElasticSetup<double> setup = make_elastic_setup<double>(c, plan);
      const ElasticStep<double> s = setup.step();
      index_t p = 0, mismatches = 0;
      for (int f = 0; f < elastic_fields; ++f) {
        const index_t offset = elastic_adjoint_kernels::packed_offset(s, f);
        mismatches += offset != p;
        for (int z = s.lo(f, 0); z < s.hi(f, 0); ++z)
          for (int y = s.lo(f, 1); y < s.hi(f, 1); ++y)
            for (int x = s.lo(f, 2); x < s.hi(f, 2); ++x)
              mismatches += elastic_adjoint_kernels::packed_index(s, f, offset, z, y, x) != p++;
      }
      CAPTURE(free_surface);
      CAPTURE(shape[1]);
      CHECK(p == index_t(elastic_increment_points(c)));
      CHECK(mismatches == 0);
    }
}
