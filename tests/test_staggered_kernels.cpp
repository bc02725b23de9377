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

// The largest difference between two sets of arrays, the largest magnitude of the first, and the values compared.
struct Difference {
  double worst = 0, scale = 0;
  std::size_t values = 0;
};
template <class A, class B>
Difference compare(const std::vector<A*>& from, const std::vector<B*>& to) {
  REQUIRE(from.size() == to.size());
  Difference d;
  for (std::size_t k = 0; k < from.size(); ++k) {
    REQUIRE(from[k]->size() == to[k]->size());
    for (std::size_t i = 0; i < from[k]->size(); ++i) {
      d.worst = std::max(d.worst, double(std::abs((*from[k])[i] - (*to[k])[i])));
      d.scale = std::max(d.scale, double(std::abs((*from[k])[i])));
      ++d.values;
    }
  }
  return d;
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
  StaggeredStep<double> a = cpu.step(setup), b = gpu.step(setup);
  // The gradient's outputs too: each node's divergence and each half node's increment.
  const std::size_t points = std::size_t(L.interior_points());
  std::vector<double> divergence[2] = {std::vector<double>(points), std::vector<double>(points)};
  std::vector<double> increment[2][3];
  for (int k = 0; k < 2; ++k)
    for (auto& v : increment[k]) v.assign(L.size(), 0.0);
  a.divergence_out = divergence[0].data(), b.divergence_out = divergence[1].data();
  for (int axis = 0; axis < 3; ++axis)
    a.increment_out[axis] = increment[0][axis].data(), b.increment_out[axis] = increment[1][axis].data();
  std::vector<std::vector<double>*> outputs[2] = {{&divergence[0]}, {&divergence[1]}};
  for (int k = 0; k < 2; ++k)
    for (auto& v : increment[k]) outputs[k].push_back(&v);
  for (int step = 0; step < 3; ++step) {
    cpu::staggered_velocity_step(a);
    cpu::staggered_pressure_step(a);
    kernel_step<R>(b);
  }
  const Difference fields = compare(from, to), gradient_outputs = compare(outputs[0], outputs[1]);
  const double worst = std::max(fields.worst, gradient_outputs.worst), scale = fields.scale;
  const std::size_t values = fields.values + gradient_outputs.values;
  CHECK(gradient_outputs.scale > 0);
  const std::string what =
      std::string(c.boundary.free_surface ? "free surface" : "CPML") + (c.attenuation.present ? ", Q" : "");
  MESSAGE("order " << 2 * R << ", " << c.grid.shape[0] << " x " << c.grid.shape[1] << " x " << c.grid.shape[2] << ", "
                   << what << ": " << values << " values, largest difference " << worst << " of " << scale);
  CHECK(scale > 0);
  CHECK(worst <= 1e-14 * scale);
}

// The adjoint kernels' step on the CPU, pass by pass (kernels/staggered_kernels.hpp, "The adjoint step").
template <int R>
void kernel_adjoint_step(const StaggeredAdjointStep<double>& s) {
  const FieldLayout& L = s.layout;
  const auto over = [](const launch::Box& b, auto&& point) {
    for (int z = b.lo.z; z < b.lo.z + b.extent.z; ++z)
      for (int y = b.lo.y; y < b.lo.y + b.extent.y; ++y)
        for (int x = b.lo.x; x < b.lo.x + b.extent.x; ++x) point(z, y, x);
  };
  const launch::Box nodes = staggered_kernels::pressure_box(L), half = staggered_kernels::velocity_box(L, R);
  over(nodes, [&](int z, int y, int x) { staggered_kernels::transpose_pressure_point<R>(s, z, y, x); });
  over(half, [&](int z, int y, int x) { staggered_kernels::transpose_divergence_point<R>(s, z, y, x); });
  if (s.free_surface)
    for (int k = 1; k <= R; ++k)
      for (index_t p = 0; p < L.stride_z(); ++p) staggered_kernels::fold_velocity_mirror(L, s.w[0], p, k);
  if (s.buoyancy_image[0])
    for (index_t i = 0; i < L.size(); ++i) staggered_kernels::buoyancy_point(s, i);
  over(half, [&](int z, int y, int x) { staggered_kernels::transpose_velocity_point<R>(s, z, y, x); });
  over(nodes, [&](int z, int y, int x) { staggered_kernels::transpose_velocity_u_point<R>(s, z, y, x); });
  if (s.free_surface)
    over(staggered_kernels::pressure_fold_box(L, R),
         [&](int k, int y, int x) { staggered_kernels::fold_pressure_mirror_point<R>(s, k, y, x); });
}

// One backend's adjoint state: the fields' adjoints (u-bar, w-bar, phi-bar, chi-bar, r-bar), the scratch q and e, and
// the images.
struct AdjointState {
  StaggeredFields<double> fields;
  std::vector<double> q[3], e[3], image, buoyancy[3];
  explicit AdjointState(const StaggeredSetup<double>& setup) : fields(setup) {
    const FieldLayout& L = setup.layout;
    for (int a = 0; a < 3; ++a) {
      q[a].assign(L.size(), 0.0), e[a].assign(L.size(), 0.0), buoyancy[a].assign(L.size(), 0.0);
    }
    image.assign(std::size_t(L.interior_points()), 0.0);
  }
  StaggeredAdjointStep<double> view(const StaggeredSetup<double>& setup, const std::vector<double>& divergence,
                                    const std::vector<double> (&increment)[3]) {
    const StaggeredStep<double> f = fields.step(setup);
    double* const q_[3] = {q[0].data(), q[1].data(), q[2].data()};
    double* const e_[3] = {e[0].data(), e[1].data(), e[2].data()};
    StaggeredAdjointStep<double> s = adjoint_view(f, q_, e_);
    for (int a = 0; a < 3; ++a) s.velocity_increment[a] = increment[a].data(), s.buoyancy_image[a] = buoyancy[a].data();
    s.divergence = divergence.data();
    s.image = image.data();
    return s;
  }
  std::vector<std::vector<double>*> arrays() {
    std::vector<std::vector<double>*> out = fields.arrays();
    for (int a = 0; a < 3; ++a) out.insert(out.end(), {&q[a], &e[a], &buoyancy[a]});
    out.push_back(&image);
    return out;
  }
};

template <int R>
void check_adjoint_kernels(Case c) {
  const Plan plan = make_plan(c);
  const StaggeredSetup<double> setup = make_staggered_setup<double>(c, plan);
  const FieldLayout& L = setup.layout;
  AdjointState cpu(setup), gpu(setup);
  // A random state: u-bar on the nodes, w-bar and the memory everywhere; the forward's divergence and increments.
  std::mt19937_64 rng(11 + R);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (int z = 0; z < L.nz; ++z)
    for (int y = 0; y < L.ny; ++y)
      for (int x = 0; x < L.nx; ++x) cpu.fields.u[std::size_t(L.index(z, y, x))] = uniform(rng);
  for (auto& w : cpu.fields.w) std::generate(w.begin(), w.end(), [&] { return uniform(rng); });
  for (auto& s : cpu.fields.slabs) std::generate(s.begin(), s.end(), [&] { return uniform(rng); });
  for (auto& r : cpu.fields.memory) std::generate(r.begin(), r.end(), [&] { return uniform(rng); });
  std::vector<double> divergence(std::size_t(L.interior_points())), increment[3];
  std::generate(divergence.begin(), divergence.end(), [&] { return uniform(rng); });
  for (auto& v : increment) {
    v.resize(L.size());
    std::generate(v.begin(), v.end(), [&] { return uniform(rng); });
  }
  const auto from = cpu.arrays(), to = gpu.arrays();
  for (std::size_t k = 0; k < from.size(); ++k) *to[k] = *from[k];
  const StaggeredAdjointStep<double> a = cpu.view(setup, divergence, increment),
                                     b = gpu.view(setup, divergence, increment);
  for (int step = 0; step < 3; ++step) {
    cpu::staggered_adjoint_step(a);
    kernel_adjoint_step<R>(b);
  }
  const Difference d = compare(from, to);
  const std::string what =
      std::string(c.boundary.free_surface ? "free surface" : "CPML") + (c.attenuation.present ? ", Q" : "");
  MESSAGE("adjoint, order " << 2 * R << ", " << c.grid.shape[0] << " x " << c.grid.shape[1] << " x " << c.grid.shape[2]
                            << ", " << what << ": " << d.values << " values, largest difference " << d.worst << " of "
                            << d.scale);
  CHECK(d.scale > 0);
  CHECK(d.worst <= 1e-14 * d.scale);
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

TEST_CASE("staggered: the CUDA adjoint kernels' bodies over their boxes give the CPU adjoint step (no GPU needed)") {
  check_adjoint_kernels<4>(kernels_case(8, false, false, {23, 26, 29}));
  check_adjoint_kernels<4>(kernels_case(8, true, true, {23, 26, 29}));
  check_adjoint_kernels<1>(kernels_case(2, true, false, {17, 19, 21}));
  check_adjoint_kernels<2>(kernels_case(4, false, true, {21, 18, 25}));
  check_adjoint_kernels<8>(kernels_case(16, true, false, {30, 31, 33}));
  check_adjoint_kernels<4>(kernels_case(8, true, true, {23, 1, 29}));  // 2-D
}
