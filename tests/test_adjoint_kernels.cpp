// The CUDA adjoint step in omega checked without a GPU: its bodies (kernels/fdtd_adjoint_kernels.hpp), run on the CPU
// over the boxes their launches cover (kernels/cuda/fdtd_adjoint_cuda.cu, cuda::fdtd_scaled_adjoint_step), against the
// CPU step (kernels/cpu/fdtd_adjoint_cpu.cpp) from the same random state: omega^n, every adjoint CPML slab, the image
// (fp64, or fp32 partial sums flushed every few steps) and the illumination, with a CPML on every face or a free
// surface, orders 2 to 16. What a GPU adds (the launches, the device arithmetic) is the GPU kit's (test_gradient_cuda).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "case_builders.hpp"
#include "kernels/cpu/fdtd_adjoint_cpu.hpp"
#include "kernels/cpu/fdtd_cpu.hpp"
#include "kernels/fdtd_adjoint_kernels.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/fdtd/fdtd_setup.hpp"

using namespace specwave;

namespace {

// One side's arrays: omega^{n+1}, omega^{n+2}, the adjoint CPML slabs, the image, its partial sums, the illumination.
template <class T>
struct ScaledState {
  std::vector<T> omega, omega_next, partial;
  std::vector<std::vector<T>> slabs;
  std::vector<double> image, illumination;
  FdtdScaledAdjointStep<T> step;

  ScaledState(const FdtdSetup<T>& setup, bool partial_sums) {
    const FieldLayout& L = setup.layout;
    const std::size_t points = std::size_t(L.interior_points());
    omega.assign(L.size(), T(0)), omega_next.assign(L.size(), T(0));
    image.assign(points, 0.0), illumination.assign(points, 0.0);
    slabs.reserve(9 * 2);
    step = FdtdScaledAdjointStep<T>{L,          omega.data(), omega_next.data(), setup.vel2dt2.data(),
                                    setup.coef, {},           setup.free_surface};
    for (int a = 0; a < 3; ++a)
      make_cpml_adjoint_axis(step.pml[a], setup.pml[a], a, L.nz, L.ny, L.nx, setup.pml_a[a].data(),
                             setup.pml_b[a].data(),
                             [&](std::size_t values) { return slabs.emplace_back(values, T(0)).data(); });
    step.image = image.data();
    step.illumination = illumination.data();
    if (partial_sums) {
      partial.assign(points, T(0));
      step.image_partial = partial.data();
    }
  }
  // The state a step leaves: the fields, the memory alphah and betah (gamma is the step's scratch: the CPU keeps the x
  // faces' in a row buffer), the partial sums.
  std::vector<std::vector<T>*> fields() {
    std::vector<std::vector<T>*> out{&omega, &omega_next};
    for (auto& s : slabs) {
      bool scratch = false;
      for (const auto& p : step.pml) scratch = scratch || s.data() == p.gamma[0] || s.data() == p.gamma[1];
      if (!scratch) out.push_back(&s);
    }
    if (!partial.empty()) out.push_back(&partial);
    return out;
  }
};

// The bodies' step on the CPU, pass by pass (the launches of cuda::fdtd_scaled_adjoint_step).
template <int R, class T>
void kernel_step(const FdtdScaledAdjointStep<T>& s) {
  const FieldLayout& L = s.layout;
  if (s.free_surface) cpu::mirror_top_ghosts(L, s.omega);
  const auto over = [](const launch::Box& b, auto&& point) {
    for (int z = b.lo.z; z < b.lo.z + b.extent.z; ++z)
      for (int y = b.lo.y; y < b.lo.y + b.extent.y; ++y)
        for (int x = b.lo.x; x < b.lo.x + b.extent.x; ++x) point(z, y, x);
  };
  for (int phase = 0; phase < 2; ++phase)
    for (int axis = 0; axis < 3; ++axis)
      for (int side = 0; side < 2; ++side) {
        if (!s.pml[axis].face[side]) continue;
        over(fdtd_adjoint_kernels::layer_box(L, s.pml[axis], axis, side), [&](int z, int y, int x) {
          if (phase == 0)
            fdtd_adjoint_kernels::scaled_beta_point(s, axis, side, z, y, x);
          else
            fdtd_adjoint_kernels::scaled_alpha_point<R>(s, axis, side, z, y, x);
        });
      }
  over(fdtd_adjoint_kernels::grid_box(L),
       [&](int z, int y, int x) { fdtd_adjoint_kernels::scaled_update_point<R>(s, z, y, x); });
}

template <class T>
double largest(const std::vector<T>& a) {
  double m = 0;
  for (const T v : a) m = std::max(m, double(std::abs(v)));
  return m;
}
template <class T>
double difference(const std::vector<T>& a, const std::vector<T>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, double(std::abs(a[i] - b[i])));
  return m;
}

template <int R, class T>
void check_scaled_adjoint(int order, bool free_surface, std::array<int, 3> shape, double tolerance) {
  Case c = testing::gradient_test_case(free_surface, sizeof(T) == 4 ? Precision::fp32 : Precision::fp64, order);
  c.grid.shape = shape;
  c.shots.resize(1);
  c.shots[0].sources[0].position = {free_surface ? 12.0 : 5.0 * shape[0] + 1.3, 5.0 * shape[1], 5.0 * shape[2]};
  c.receivers = {{free_surface ? 8.0 : 5.0 * shape[0], 5.0 * shape[1] + 3.0, 5.0 * shape[2] + 7.0}};
  const Plan plan = make_plan(c);
  const FdtdSetup<T> setup = make_fdtd_setup<T>(c, plan);
  const FieldLayout& L = setup.layout;
  const bool partial_sums = sizeof(T) == 4;
  ScaledState<T> cpu(setup, partial_sums), gpu(setup, partial_sums);
  // A random state: omega^{n+1} and omega^{n+2} on the interior (the ghosts zero, or mirrored above a free surface),
  // u^n (compact).
  std::mt19937_64 rng(23 + order);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (int z = 0; z < L.nz; ++z)
    for (int y = 0; y < L.ny; ++y)
      for (int x = 0; x < L.nx; ++x) {
        const std::size_t i = std::size_t(L.index(z, y, x));
        cpu.omega[i] = T(uniform(rng)), cpu.omega_next[i] = T(uniform(rng));
      }
  if (free_surface)  // (omega is zero on the surface plane, as Z leaves it)
    for (int y = 0; y < L.ny; ++y)
      for (int x = 0; x < L.nx; ++x) cpu.omega[std::size_t(L.index(0, y, x))] = cpu.omega_next[L.index(0, y, x)] = 0;
  gpu.omega = cpu.omega, gpu.omega_next = cpu.omega_next;
  std::vector<T> u_now(std::size_t(L.interior_points()));
  std::generate(u_now.begin(), u_now.end(), [&] { return T(uniform(rng)); });
  cpu.step.u_now = gpu.step.u_now = u_now.data();
  for (int n = 4; n >= 0; --n) {  // flushes at n = 4 and 0 when the image sums in fp32 (every 4 steps here)
    cpu.step.flush = gpu.step.flush = n % 4 == 0;
    cpu::fdtd_adjoint_step(cpu.step);
    kernel_step<R>(gpu.step);
  }
  const auto a = cpu.fields(), b = gpu.fields();
  double worst = 0, scale = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    worst = std::max(worst, difference(*a[k], *b[k]));
    scale = std::max(scale, largest(*a[k]));
  }
  const double image = difference(cpu.image, gpu.image), image_scale = largest(cpu.image);
  const double illumination = difference(cpu.illumination, gpu.illumination);
  const std::string what = std::string(free_surface ? "free surface" : "CPML") + (partial_sums ? ", fp32" : ", fp64");
  MESSAGE("order " << order << ", " << what << ": " << a.size() << " arrays, largest difference " << worst << " of "
                   << scale << ", image " << image << " of " << image_scale << ", illumination " << illumination);
  CHECK(scale > 0);
  CHECK(image_scale > 0);
  CHECK(worst <= tolerance * scale);
  CHECK(image <= tolerance * image_scale);
  CHECK(illumination <= tolerance * largest(cpu.illumination));
}

}  // namespace

TEST_CASE("the CUDA adjoint in omega: its bodies over their boxes give the CPU step's values (no GPU needed)") {
  check_scaled_adjoint<4, double>(8, false, {23, 26, 29}, 1e-14);
  check_scaled_adjoint<4, double>(8, true, {23, 26, 29}, 1e-14);
  check_scaled_adjoint<1, double>(2, true, {17, 19, 21}, 1e-14);
  check_scaled_adjoint<8, double>(16, false, {30, 31, 33}, 1e-14);
  check_scaled_adjoint<4, float>(8, true, {23, 26, 29}, 1e-6);
}
