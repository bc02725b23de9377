// The domain-decomposed propagators against the single-rank ones. FDTD, bitwise: traces, the final field and
// the field statistics of every process grid of the rank count, fp32 and fp64, with and without a free
// surface, with sources and receivers whose stencils straddle block boundaries (with the free surface also a force
// source and particle-velocity receivers), and a grid that does not divide evenly; the same for the staggered scheme
// (a 3-D density and Q from a model file, with attenuation). Spectral (distributed FFT, slab and
// pencil): relative L2 differences <= 1e-12 in fp64 (<= 1e-5 fp32) for both absorbers. Its own executable: CTest runs
// it under mpiexec at 1, 2 and 4 ranks (label mpi). Every rank also runs the single-rank propagator on the whole
// (small) grid, and mismatches are summed over the ranks, so every rank checks the same numbers.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <fmt/format.h>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "io/hdf5.hpp"
#include "io/outputs.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/parallel/decomposition.hpp"
#include "solver/parallel/distributed_fft.hpp"
#include "solver/plan/model.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/propagator.hpp"
#include "tests/case_builders.hpp"

using namespace specwave;

namespace {

// With a force source and particle-velocity receivers (derivative stencils) too.
void add_force_and_velocity_receivers(Case& c) {
  c.shots[0].sources[1].kind = SourceKind::force;
  c.shots[0].sources[1].direction = {0.6, 0.0, 0.8};
  for (std::size_t r = 0; r < c.receivers.size(); ++r)
    c.receiver_components.push_back(r % 3 == 0   ? ReceiverComponent::pressure
                                    : r % 3 == 1 ? ReceiverComponent::vz
                                                 : ReceiverComponent::vx);
}

template <class T>
void check_bitwise_case(const Case& c) {
  const Comm world = Comm::world();
  const Precision precision = c.run.precision;
  const bool free_surface = c.boundary.free_surface;
  Plan plan = make_plan(c, {1, world.rank()});  // the single-rank plan; only its process grid changes below
  auto serial = make_propagator(c, plan);
  serial->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
  serial->advance(0, plan.nt);
  const std::vector<double> serial_traces(serial->traces().begin(), serial->traces().end());
  std::vector<T> serial_field(std::size_t(c.grid.points()));
  serial->copy_field(std::span<T>(serial_field));
  const FieldStats serial_stats = serial->field_stats();

  const auto grids = testing::process_grids(c.grid.shape, world.size(), c.scheme.order / 2, c.boundary.pml_width);
  REQUIRE(!grids.empty());
  for (const Dims3& p : grids) {
    CAPTURE(fmt::format("{} ranks, process grid {}x{}x{}, {}, free surface {}", world.size(), p[0], p[1], p[2],
                        to_string(precision), free_surface));
    plan.process_grid = p;
    auto split = make_propagator(c, plan, &world);
    split->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
    // In two calls, to cross an advance() boundary as the forward driver does.
    split->advance(0, plan.nt / 3);
    split->advance(plan.nt / 3, plan.nt);
    const auto traces = split->traces();
    REQUIRE(traces.size() == serial_traces.size());
    long long trace_mismatch = 0, field_mismatch = 0;
    for (std::size_t i = 0; i < traces.size(); ++i) trace_mismatch += !testing::same_bits(traces[i], serial_traces[i]);

    const Block b = split->block().value_or(whole_grid(c.grid.shape));
    std::vector<T> block_field(std::size_t(b.points()));
    split->copy_field(std::span<T>(block_field));
    const auto& e = b.sub.extent;
    for (int z = 0; z < e[0]; ++z)
      for (int y = 0; y < e[1]; ++y)
        for (int x = 0; x < e[2]; ++x) {
          const std::size_t global =
              (std::size_t(z + b.sub.begin[0]) * c.grid.shape[1] + y + b.sub.begin[1]) * c.grid.shape[2] + x +
              b.sub.begin[2];
          field_mismatch +=
              !testing::same_bits(block_field[(std::size_t(z) * e[1] + y) * e[2] + x], serial_field[global]);
        }
    trace_mismatch = world.allreduce(trace_mismatch, ReduceOp::sum);
    field_mismatch = world.allreduce(field_mismatch, ReduceOp::sum);
    CHECK(trace_mismatch == 0);
    CHECK(field_mismatch == 0);
    const FieldStats stats = split->field_stats();
    CHECK(testing::same_bits(stats.max_abs, serial_stats.max_abs));
    CHECK(stats.argmax == serial_stats.argmax);
    // The traces are not trivially equal: the wave reached the receivers.
    double peak = 0;
    for (double v : serial_traces) peak = std::max(peak, std::abs(v));
    CHECK(peak > 0);
  }
}

template <class T>
void check_bitwise(Precision precision, bool free_surface) {
  Case c = testing::decomposition_case(precision, free_surface);
  if (free_surface) {
    c.model.density = 1000;
    add_force_and_velocity_receivers(c);
  }
  check_bitwise_case<T>(c);
}

// The staggered scheme (variable density) on a model file of the decomposition case's grid: its Gaussian velocity, a
// density that varies along every axis (so that the buoyancy of the half nodes at every block face takes the next
// block's density) and, with `attenuation`, a Q of three values. Written by rank 0 as `path`.
// The decomposition case in the x-z plane (a 2-D run: grid.shape[1] = 1, every point at y = 0).
Case plane(Case c) {
  c.grid.shape[1] = 1;
  for (auto& s : c.shots[0].sources) s.position[1] = 0;
  for (auto& r : c.receivers) r[1] = 0;
  c.model.center[1] = 0;
  return c;
}

Case staggered_decomposition_case(Precision precision, bool free_surface, bool attenuation, const std::string& path,
                                  bool two_d = false) {
  const Comm world = Comm::world();
  Case c = testing::decomposition_case(precision, free_surface);
  if (two_d) c = plane(c);
  if (world.rank() == 0) {
    const VelocityModel gaussian = build_velocity_model(c);
    io::write_model_file(path, {"specwave.model", "fp64", "cpu", "", "host CPU", 1, 1}, c.grid, gaussian.velocity);
    const Dims3 n = c.grid.shape;
    std::vector<float> density(gaussian.velocity.size()), q(density.size());
    for (int z = 0; z < n[0]; ++z)
      for (int y = 0; y < n[1]; ++y)
        for (int x = 0; x < n[2]; ++x) {
          const std::size_t k = (std::size_t(z) * n[1] + y) * n[2] + x;
          density[k] = float(1800 + 500 * std::sin(0.31 * z + 0.17) * std::cos(0.23 * y) + 300 * std::sin(0.19 * x));
          q[k] = float(40 + 30 * ((z / 7 + y / 9 + x / 11) % 3));
        }
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(file >= 0);
    const std::vector<hsize_t> dims{hsize_t(n[0]), hsize_t(n[1]), hsize_t(n[2])};
    io::h5::write_dataset<float>(file, "density", dims, density.data(), "kg/m^3");
    io::h5::write_dataset<float>(file, "q", dims, q.data(), "1");
    H5Fclose(file);
  }
  world.barrier();
  c.model.kind = ModelSpec::Kind::file;
  c.model.file = path;
  c.model.density_dataset = "/density";
  c.scheme.formulation = Formulation::staggered;
  if (attenuation) {
    c.attenuation.present = true;
    c.attenuation.q_dataset = "/q";
  }
  if (free_surface) add_force_and_velocity_receivers(c);
  return c;
}

template <class T>
void check_staggered_bitwise(Precision precision, bool free_surface, bool attenuation, bool two_d = false) {
  const Comm world = Comm::world();
  const std::string path =
      (std::filesystem::temp_directory_path() / fmt::format("specwave-mpi-staggered-{}.h5", world.size())).string();
  const Case c = staggered_decomposition_case(precision, free_surface, attenuation, path, two_d);
  check_bitwise_case<T>(c);
  world.barrier();
  if (world.rank() == 0) std::filesystem::remove(path);
}

// The elastic scheme on the staggered case's model file (its velocity as vp, its density varying along every axis), a
// shear velocity of 700 m/s, a moment tensor (every component) straddling the blocks, the second source a force, and
// pressure, v_z, v_y and v_x receivers across blocks; with or without a free surface.
template <class T>
void check_elastic_bitwise(Precision precision, bool free_surface, bool two_d = false) {
  const Comm world = Comm::world();
  const std::string path =
      (std::filesystem::temp_directory_path() / fmt::format("specwave-mpi-elastic-{}.h5", world.size())).string();
  Case c = staggered_decomposition_case(precision, free_surface, false, path, two_d);
  c.scheme.formulation = Formulation::elastic;
  c.model.shear_velocity = 700.0;
  if (!free_surface) add_force_and_velocity_receivers(c);
  c.shots[0].sources[0].kind = SourceKind::moment;
  c.shots[0].sources[0].moment = {0.3, -0.2, 0.5, 0.4, -0.6, 0.7};
  c.receivers.push_back({121.3, two_d ? 0.0 : 140.2, 200.3});
  c.receiver_components.push_back(ReceiverComponent::vy);
  if (free_surface) {  // a force and v_z, v_x on the surface (v_z's images add v_x and v_y points there), across blocks
    SourceSpec force = c.shots[0].sources[0];
    force.kind = SourceKind::force;
    force.direction = {0.8, 0.0, 0.6};
    force.position = {0.0, 168.9, 176.4};
    c.shots[0].sources.push_back(force);
    for (ReceiverComponent k : {ReceiverComponent::vz, ReceiverComponent::vx}) {
      c.receivers.push_back({0.0, 165.3, 181.7});
      c.receiver_components.push_back(k);
    }
  }
  check_bitwise_case<T>(c);
  world.barrier();
  if (world.rank() == 0) std::filesystem::remove(path);
}

// The spectral case: uneven FFT-friendly extents, a Gaussian anomaly, two sources, receivers across blocks.
Case spectral_case(Precision precision, SpectralAbsorber absorber) {
  Case c = testing::decomposition_case(precision, false);
  c.scheme.method = Method::spectral;
  c.grid.shape = {30, 27, 32};
  c.boundary.pml_width = 6;
  c.boundary.spectral_absorber = absorber;
  c.model.center = {150.0, 135.0, 160.0};
  c.receivers.clear();
  for (int k = 0; k < 7; ++k) c.receivers.push_back({70.0 + 25.0 * k, 131.3, 70.0 + 27.1 * k});
  c.shots[0].sources[0].position = {148.3, 128.9, 156.4};
  return c;
}

template <class T>
void check_spectral(Precision precision, SpectralAbsorber absorber, double tolerance, bool attenuation = false) {
  const Comm world = Comm::world();
  Case c = spectral_case(precision, absorber);
  if (attenuation) {  // Q of 30 (3 mechanisms): the memory variables are per point, so each rank's are its block's
    c.attenuation.present = true;
    c.attenuation.q = 30;
  }
  Plan plan = make_plan(c, {1, world.rank()});
  auto serial = make_propagator(c, plan);
  serial->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
  serial->advance(0, plan.nt);
  const std::vector<double> serial_traces(serial->traces().begin(), serial->traces().end());
  std::vector<T> serial_field(std::size_t(c.grid.points()));
  serial->copy_field(std::span<T>(serial_field));

  std::vector<FftProcessGrid> grids;
  for (int pz = 1; pz <= world.size(); ++pz) {
    if (world.size() % pz) continue;
    try {
      check_fft_grid(c.grid.shape, {pz, world.size() / pz}, world.size());
      grids.push_back({pz, world.size() / pz});
    } catch (const std::exception&) {
    }
  }
  REQUIRE(!grids.empty());
  for (const FftProcessGrid& g : grids) {
    CAPTURE(fmt::format("{} ranks, FFT grid {}x{}, {}, {}", world.size(), g.ranks_z, g.ranks_y, to_string(precision),
                        absorber == SpectralAbsorber::pml ? "pml" : "damping"));
    plan.process_grid = {g.ranks_z, g.ranks_y, 1};
    auto split = make_propagator(c, plan, &world);
    split->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
    split->advance(0, plan.nt / 2);
    split->advance(plan.nt / 2, plan.nt);
    const auto traces = split->traces();
    REQUIRE(traces.size() == serial_traces.size());
    double diff = 0, norm = 0;
    for (std::size_t i = 0; i < traces.size(); ++i) {
      diff += (traces[i] - serial_traces[i]) * (traces[i] - serial_traces[i]);
      norm += serial_traces[i] * serial_traces[i];
    }
    const double trace_error = std::sqrt(diff / norm);
    const Block b = split->block().value_or(whole_grid(c.grid.shape));
    std::vector<T> block_field(std::size_t(b.points()));
    split->copy_field(std::span<T>(block_field));
    double fdiff = 0, fnorm = 0;
    const auto& e = b.sub.extent;
    for (int z = 0; z < e[0]; ++z)
      for (int y = 0; y < e[1]; ++y)
        for (int x = 0; x < e[2]; ++x) {
          const double ref =
              serial_field[(std::size_t(z + b.sub.begin[0]) * c.grid.shape[1] + y + b.sub.begin[1]) * c.grid.shape[2] +
                           x + b.sub.begin[2]];
          const double v = block_field[(std::size_t(z) * e[1] + y) * e[2] + x];
          fdiff += (v - ref) * (v - ref);
          fnorm += ref * ref;
        }
    fdiff = world.allreduce(fdiff, ReduceOp::sum);
    fnorm = world.allreduce(fnorm, ReduceOp::sum);
    const double field_error = std::sqrt(fdiff / fnorm);
    MESSAGE(fmt::format("spectral {} {}{} on {} ranks ({}x{}): traces {:.2e}, final field {:.2e}", to_string(precision),
                        absorber == SpectralAbsorber::pml ? "pml" : "damping", attenuation ? " with Q" : "",
                        world.size(), g.ranks_z, g.ranks_y, trace_error, field_error));
    CHECK(norm > 0);
    CHECK(trace_error <= tolerance);
    CHECK(field_error <= tolerance);
  }
}

}  // namespace

TEST_CASE("mpi spectral: the distributed run agrees with the single-rank run (fp64 <= 1e-12)") {
  check_spectral<double>(Precision::fp64, SpectralAbsorber::pml, 1e-12);
  check_spectral<double>(Precision::fp64, SpectralAbsorber::damping, 1e-12);
  check_spectral<double>(Precision::fp64, SpectralAbsorber::pml, 1e-12, true);
}
TEST_CASE("mpi spectral: the distributed run agrees with the single-rank run (fp32 <= 1e-5)") {
  check_spectral<float>(Precision::fp32, SpectralAbsorber::pml, 1e-5);
  check_spectral<float>(Precision::fp32, SpectralAbsorber::damping, 1e-5);
  check_spectral<float>(Precision::fp32, SpectralAbsorber::pml, 1e-5, true);
}

TEST_CASE("mpi fdtd: the decomposed run is bitwise the single-rank run (fp64, CPML on every face)") {
  check_bitwise<double>(Precision::fp64, false);
}
TEST_CASE("mpi fdtd: the decomposed run is bitwise the single-rank run (fp64, free surface)") {
  check_bitwise<double>(Precision::fp64, true);
}
TEST_CASE("mpi fdtd: the decomposed run is bitwise the single-rank run (fp32, CPML on every face)") {
  check_bitwise<float>(Precision::fp32, false);
}
TEST_CASE("mpi fdtd: the decomposed run is bitwise the single-rank run (fp32, free surface)") {
  check_bitwise<float>(Precision::fp32, true);
}

TEST_CASE("mpi staggered: the decomposed run is bitwise the single-rank run (fp64, density, attenuation, CPML)") {
  check_staggered_bitwise<double>(Precision::fp64, false, true);
}
TEST_CASE("mpi staggered: the decomposed run is bitwise the single-rank run (fp32, density, free surface, force, vz)") {
  check_staggered_bitwise<float>(Precision::fp32, true, false);
}

TEST_CASE("mpi elastic: the decomposed run is bitwise the single-rank run (fp64, moment tensor, force, CPML)") {
  check_elastic_bitwise<double>(Precision::fp64, false);
}
TEST_CASE("mpi elastic: the decomposed run is bitwise the single-rank run (fp32, free surface; and in 2-D)") {
  check_elastic_bitwise<float>(Precision::fp32, true);
  check_elastic_bitwise<double>(Precision::fp64, false, true);
}

TEST_CASE("mpi 2-D: the decomposed fdtd and staggered runs are bitwise the single-rank run (x-z grid)") {
  // With the force source and the vz / vx receivers of the 3-D free-surface case: a vx receiver split between two
  // blocks of the 1 x 1 x 4 grid differed at rounding (3.69874e-07 at sample 26) while the one-block sum was fused into
  // FMAs (solver/propagators/CMakeLists.txt, point_lists.cpp).
  check_bitwise_case<double>(plane(testing::decomposition_case(Precision::fp64, true)));
  Case c = plane(testing::decomposition_case(Precision::fp64, true));
  c.model.density = 1000;
  add_force_and_velocity_receivers(c);
  check_bitwise_case<double>(c);
  check_staggered_bitwise<float>(Precision::fp32, false, true, true);
}

TEST_CASE("mpi model: each rank reads its block of an HDF5 model collectively, equal to the whole model there") {
  const Comm world = Comm::world();
  Case c = testing::decomposition_case(Precision::fp64, false);
  const VelocityModel whole = build_velocity_model(c);  // the Gaussian model, generated on every rank
  const std::string path =
      (std::filesystem::temp_directory_path() / fmt::format("specwave-mpi-model-{}.h5", world.size())).string();
  if (world.rank() == 0)
    io::write_model_file(path, {"specwave.model", "fp64", "cpu", "", "host CPU", 1, 1}, c.grid, whole.velocity);
  world.barrier();
  c.model.kind = ModelSpec::Kind::file;
  c.model.file = path;
  for (const Dims3& p : testing::process_grids(c.grid.shape, world.size(), 4, c.boundary.pml_width)) {
    CAPTURE(fmt::format("process grid {}x{}x{}", p[0], p[1], p[2]));
    const Subdomain block = block_of(c.grid.shape, p, world.rank()).sub;
    const VelocityModel mine = build_velocity_model(c, &block, &world);
    long long mismatch = 0;
    for (int z = 0; z < block.extent[0]; ++z)
      for (int y = 0; y < block.extent[1]; ++y)
        for (int x = 0; x < block.extent[2]; ++x) {
          const int gz = z + block.begin[0], gy = y + block.begin[1], gx = x + block.begin[2];
          mismatch += mine.at(gz, gy, gx) != whole.at(gz, gy, gx);
        }
    CHECK(mine.velocity.size() == std::size_t(block.extent[0]) * block.extent[1] * block.extent[2]);
    CHECK(world.allreduce(mismatch, ReduceOp::sum) == 0);
    CHECK(mine.v_min == whole.v_min);
    CHECK(mine.v_max == whole.v_max);
  }
  world.barrier();
  if (world.rank() == 0) std::filesystem::remove(path);
}

TEST_CASE("mpi fdtd: the plan refuses blocks thinner than the absorbing layer, naming the limit") {
  // 36 points along x with a 13-point layer: 2 blocks of 18 hold it, 4 blocks of 9 do not. (The unit tests of
  // check_decomposition cover the other limits without MPI.)
  const Comm world = Comm::world();
  Case c = testing::decomposition_case(Precision::fp64, false);
  c.run.process_grid = std::array<int, 3>{1, 1, world.size()};
  c.run.shot_groups = 1;
  c.grid.shape = {40, 40, 36};
  c.boundary.pml_width = 13;
  c.receivers = {{200.0, 200.0, 175.0}};
  c.shots[0].sources.resize(1);
  c.shots[0].sources[0].position = {200.0, 200.0, 180.0};
  if (world.size() < 3) {
    CHECK_NOTHROW(make_plan(c, {world.size(), world.rank()}));
  } else {
    try {
      make_plan(c, {world.size(), world.rank()});
      FAIL("expected the decomposition to be refused");
    } catch (const std::exception& e) {
      CHECK(std::string(e.what()).find("absorbing layer") != std::string::npos);
    }
  }
}

int main(int argc, char** argv) {
  MpiSession mpi(argc, argv);
  doctest::Context context(argc, argv);
  // Every rank runs every test (the collectives need them all); rank 0 reports, the others print failures only.
  if (Comm::world().rank() != 0) context.setOption("minimal", true);
  return context.run();
}
