// The domain-decomposed CUDA FDTD propagator against the single-rank CUDA propagator, bitwise (traces, final
// field, field statistics), for every process grid of the rank count, fp32 and fp64, CPML or free surface:
// the halo planes packed on the device, exchanged (staged through pinned host memory, or device to device with
// a CUDA-aware MPI) and unpacked. Labels gpu and mpi: CTest runs it under mpiexec at 2 ranks, all ranks
// sharing the machine's GPUs (run.share_devices); without a usable device every rank prints why and exits 77,
// which CTest reports as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <fmt/format.h>
#include <cstdio>
#include <cstring>
#include <vector>

#include "solver/parallel/comm.hpp"
#include "solver/parallel/decomposition.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/propagator.hpp"
#include "tests/case_builders.hpp"
#if defined(SPECWAVE_HAVE_CUDA)
#include "kernels/cuda/device.hpp"
#endif

using namespace specwave;

namespace {

template <class T>
void check_cuda_bitwise(bool free_surface) {
  const Comm world = Comm::world();
  Case c = testing::decomposition_case(sizeof(T) == 8 ? Precision::fp64 : Precision::fp32, free_surface);
  c.run.backend = BackendKind::cuda;
  c.run.share_devices = true;
  Plan plan = make_plan(c, {1, world.rank()});
  auto serial = make_propagator(c, plan);
  serial->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
  serial->advance(0, plan.nt);
  const std::vector<double> serial_traces(serial->traces().begin(), serial->traces().end());
  std::vector<T> serial_field(std::size_t(c.grid.points()));
  serial->copy_field(std::span<T>(serial_field));

  for (const Dims3& p : testing::process_grids(c.grid.shape, world.size(), 4, c.boundary.pml_width)) {
    CAPTURE(fmt::format("process grid {}x{}x{}, {}, free surface {}", p[0], p[1], p[2], to_string(c.run.precision),
                        free_surface));
    plan.process_grid = p;
    auto split = make_propagator(c, plan, &world);
    split->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
    split->advance(0, plan.nt);
    const auto traces = split->traces();
    long long mismatch = 0;
    for (std::size_t i = 0; i < traces.size(); ++i) mismatch += !testing::same_bits(traces[i], serial_traces[i]);
    const Block b = split->block().value_or(whole_grid(c.grid.shape));
    std::vector<T> block_field(std::size_t(b.points()));
    split->copy_field(std::span<T>(block_field));
    const auto& e = b.sub.extent;
    for (int z = 0; z < e[0]; ++z)
      for (int y = 0; y < e[1]; ++y)
        for (int x = 0; x < e[2]; ++x)
          mismatch += !testing::same_bits(
              block_field[(std::size_t(z) * e[1] + y) * e[2] + x],
              serial_field[(std::size_t(z + b.sub.begin[0]) * c.grid.shape[1] + y + b.sub.begin[1]) * c.grid.shape[2] +
                           x + b.sub.begin[2]]);
    CHECK(world.allreduce(mismatch, ReduceOp::sum) == 0);
  }
}

}  // namespace

TEST_CASE("mpi cuda fdtd: the decomposed GPU run is bitwise the single-rank GPU run") {
  check_cuda_bitwise<double>(false);
  check_cuda_bitwise<double>(true);
  check_cuda_bitwise<float>(false);
  check_cuda_bitwise<float>(true);
}

int main(int argc, char** argv) {
  MpiSession mpi(argc, argv);
#if defined(SPECWAVE_HAVE_CUDA)
  const auto status = cuda::query_devices();
  if (!status.usable) {
    if (Comm::world().rank() == 0)
      std::printf("SKIPPED: the MPI GPU tests need a usable CUDA device: %s\n", status.reason.c_str());
    return 77;
  }
#else
  if (Comm::world().rank() == 0) std::printf("SKIPPED: this build has no CUDA backend\n");
  return 77;
#endif
  doctest::Context context(argc, argv);
  if (Comm::world().rank() != 0) context.setOption("minimal", true);
  return context.run();
}
