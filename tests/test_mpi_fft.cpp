// The MPI wrapper (solver/parallel/comm.hpp) and the distributed FFT (solver/parallel/distributed_fft.hpp) against a
// serial FFT (kernels/fft/fftw3d RealFft3d, fp64) and, on tiny sizes, a naive DFT. Its own executable with its own
// main: CTest runs it under mpiexec at 1, 2 and 4 ranks (label mpi); every process grid of the rank count that fits the
// size is tested. Error norms are reduced over all ranks, so every rank checks the same numbers.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <numbers>
#include <string>
#include <vector>

#include "kernels/fft/fftw3d.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/parallel/distributed_fft.hpp"

using namespace specwave;

namespace {

// A reproducible value in [-1, 1) for each global flat index (the same on every rank).
double sample(long long flat) {
  std::uint64_t h = std::uint64_t(flat) * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return double(h >> 11) / double(1ull << 52) - 1.0;
}

long long volume(const Dims3& e) { return 1LL * e[0] * e[1] * e[2]; }

std::vector<FftProcessGrid> grids_of(const Dims3& shape, int ranks) {
  std::vector<FftProcessGrid> grids;
  for (int pz = 1; pz <= ranks; ++pz) {
    if (ranks % pz) continue;
    try {
      check_fft_grid(shape, {pz, ranks / pz}, ranks);
      grids.push_back({pz, ranks / pz});
    } catch (const std::invalid_argument&) {
    }
  }
  return grids;
}

// The serial reference: the whole (nz, ny, nx/2+1) half spectrum of the whole input, in fp64.
std::vector<std::complex<double>> serial_spectrum(const Dims3& shape) {
  std::vector<double> real(volume(shape));
  std::vector<std::complex<double>> spectrum(1LL * shape[0] * shape[1] * (shape[2] / 2 + 1));
  fft::RealFft3d<double> fft(shape[0], shape[1], shape[2], real.data(), spectrum.data(), 1);
  for (long long i = 0; i < volume(shape); ++i) real[i] = sample(i);
  fft.forward();
  return spectrum;
}

// Naive DFT of the same input at one wavenumber (for tiny shapes).
std::complex<double> naive_dft(const Dims3& s, int kz, int ky, int kx) {
  std::complex<double> sum = 0;
  for (int z = 0; z < s[0]; ++z)
    for (int y = 0; y < s[1]; ++y)
      for (int x = 0; x < s[2]; ++x) {
        const double phase =
            -2 * std::numbers::pi * (double(kz) * z / s[0] + double(ky) * y / s[1] + double(kx) * x / s[2]);
        sum += sample((1LL * z * s[1] + y) * s[2] + x) * std::polar(1.0, phase);
      }
  return sum;
}

struct Errors {
  double forward = 0;     // max |S - S_ref| / max |S_ref|
  double round_trip = 0;  // max |backward(forward(u)) / N - u| / max |u|
  bool input_preserved = true;
};

// Runs forward and backward on `grid` and compares with `reference` (the whole serial spectrum).
template <class T>
Errors distributed_errors(const Comm& comm, const Dims3& shape, const FftProcessGrid& grid,
                          const std::vector<std::complex<double>>& reference, int threads = 1) {
  const Subdomain rb = fft_real_block(shape, grid, comm.rank());
  const Subdomain sb = fft_spectrum_block(shape, grid, comm.rank());
  std::vector<T> real(volume(rb.extent));
  std::vector<std::complex<T>> spectrum(volume(sb.extent));
  DistributedRealFft3d<T> fft(comm, shape, grid, real.data(), spectrum.data(), threads);
  CHECK(fft.real_block().begin == rb.begin);
  CHECK(fft.spectrum_block().extent == sb.extent);

  // Fill after planning (FFTW_MEASURE overwrites the arrays).
  std::vector<T> input(real.size());
  long long i = 0;
  for (int z = 0; z < rb.extent[0]; ++z)
    for (int y = 0; y < rb.extent[1]; ++y)
      for (int x = 0; x < rb.extent[2]; ++x, ++i)
        input[i] = T(sample((1LL * (rb.begin[0] + z) * shape[1] + rb.begin[1] + y) * shape[2] + rb.begin[2] + x));
  real = input;
  fft.forward();

  Errors e;
  e.input_preserved = real == input;
  const int nxh = shape[2] / 2 + 1;
  double max_ref = 0, max_err = 0;
  for (const auto& v : reference) max_ref = std::max(max_ref, std::abs(v));
  i = 0;
  for (int kz = 0; kz < sb.extent[0]; ++kz)
    for (int ky = 0; ky < sb.extent[1]; ++ky)
      for (int kx = 0; kx < sb.extent[2]; ++kx, ++i) {
        const auto& ref = reference[(1LL * (sb.begin[0] + kz) * shape[1] + sb.begin[1] + ky) * nxh + sb.begin[2] + kx];
        max_err = std::max(max_err, std::abs(std::complex<double>(spectrum[i]) - ref));
      }
  e.forward = comm.allreduce(max_err, ReduceOp::max) / max_ref;

  fft.backward();
  const double n = double(volume(shape));
  double err = 0, max_in = 0;
  for (std::size_t j = 0; j < real.size(); ++j) {
    err = std::max(err, std::abs(double(real[j]) / n - double(input[j])));
    max_in = std::max(max_in, std::abs(double(input[j])));
  }
  e.round_trip = comm.allreduce(err, ReduceOp::max) / comm.allreduce(max_in, ReduceOp::max);
  e.input_preserved = comm.allreduce(e.input_preserved ? 0 : 1, ReduceOp::max) == 0;
  return e;
}

}  // namespace

TEST_CASE("comm: rank, size, allreduce, split") {
  const Comm world = Comm::world();
  CHECK(world.rank() >= 0);
  CHECK(world.rank() < world.size());
  const int p = world.size(), r = world.rank();
  CHECK(world.allreduce(1, ReduceOp::sum) == p);
  CHECK(world.allreduce(r, ReduceOp::max) == p - 1);
  CHECK(world.allreduce(double(r) + 0.5, ReduceOp::min) == 0.5);
  std::vector<long long> v{r, 2LL * r, 1};
  world.allreduce_in_place<long long>(v, ReduceOp::sum);
  CHECK(v == std::vector<long long>{1LL * p * (p - 1) / 2, 1LL * p * (p - 1), p});
  // Even and odd ranks, in reverse order.
  const Comm half = world.split(r % 2, -r);
  CHECK(half.size() == (p + 1 - r % 2) / 2);
  CHECK(half.allreduce(r % 2, ReduceOp::max) == r % 2);
  CHECK(half.allreduce(r, ReduceOp::max) - r == 2 * half.rank());
  world.barrier();
}

TEST_CASE("comm: alltoallv with uneven counts, complex values") {
  const Comm world = Comm::world();
  const int p = world.size(), r = world.rank();
  // Rank r sends r + q + 1 values (r, q, k) to rank q.
  std::vector<int> send_counts(p), send_offsets(p), recv_counts(p), recv_offsets(p);
  std::vector<std::complex<double>> send;
  for (int q = 0; q < p; ++q) {
    send_counts[q] = r + q + 1;
    send_offsets[q] = int(send.size());
    for (int k = 0; k < r + q + 1; ++k) send.push_back({double(r * 100 + q), double(k)});
  }
  int total = 0;
  for (int s = 0; s < p; ++s) {
    recv_counts[s] = s + r + 1;
    recv_offsets[s] = total;
    total += recv_counts[s];
  }
  std::vector<std::complex<double>> recv(total);
  world.alltoallv<std::complex<double>>(send, send_counts, send_offsets, recv, recv_counts, recv_offsets);
  bool ok = true;
  for (int s = 0; s < p; ++s)
    for (int k = 0; k < recv_counts[s]; ++k)
      ok = ok && recv[recv_offsets[s] + k] == std::complex<double>(s * 100 + r, k);
  CHECK(ok);
  send_counts[0] += 1000;  // beyond the send buffer: refused before any MPI call (on every rank alike)
  CHECK_THROWS_AS(
      world.alltoallv<std::complex<double>>(send, send_counts, send_offsets, recv, recv_counts, recv_offsets),
      std::invalid_argument);
}

TEST_CASE("fft geometry: blocks, grid choice, refusals") {
  const Dims3 shape{30, 17, 23};
  for (int ranks : {1, 2, 3, 4, 6, 8})
    for (const auto& g : grids_of(shape, ranks)) {
      long long real = 0, spectral = 0;
      for (int r = 0; r < ranks; ++r) {
        real += volume(fft_real_block(shape, g, r).extent);
        spectral += volume(fft_spectrum_block(shape, g, r).extent);
        CHECK(fft_real_block(shape, g, r).extent[2] == 23);
        CHECK(fft_spectrum_block(shape, g, r).extent[0] == 30);
      }
      CHECK(real == volume(shape));
      CHECK(spectral == 30LL * 17 * 12);
    }
  CHECK(choose_fft_grid({64, 64, 64}, 4) == FftProcessGrid{4, 1});        // slab
  CHECK(choose_fft_grid({64, 4, 64}, 16) == FftProcessGrid{4, 4});        // y too short for a 16-rank slab
  CHECK(choose_fft_grid({2, 64, 64}, 8) == FftProcessGrid{2, 4});         // z too short
  CHECK_THROWS_AS(choose_fft_grid({2, 2, 2}, 8), std::invalid_argument);  // nx/2+1 = 2 values of kx
  CHECK_THROWS_AS(check_fft_grid({8, 8, 8}, {2, 2}, 8), std::invalid_argument);
  CHECK_THROWS_WITH_AS(check_fft_grid({8, 3, 8}, {4, 1}, 4), doctest::Contains("ky"), std::invalid_argument);
}

TEST_CASE("distributed FFT: tiny shape against a naive DFT") {
  const Comm world = Comm::world();
  const Dims3 shape{4, 5, 6};
  const auto grid = choose_fft_grid(shape, world.size());
  std::vector<std::complex<double>> naive(4 * 5 * 4);
  for (int kz = 0; kz < 4; ++kz)
    for (int ky = 0; ky < 5; ++ky)
      for (int kx = 0; kx < 4; ++kx) naive[(kz * 5 + ky) * 4 + kx] = naive_dft(shape, kz, ky, kx);
  const Errors e = distributed_errors<double>(world, shape, grid, naive);
  CHECK(e.forward < 1e-13);
  CHECK(e.round_trip < 1e-14);
}

TEST_CASE("distributed FFT against the serial FFT: forward and round trip, fp64 and fp32, every grid") {
  const Comm world = Comm::world();
  for (const Dims3& shape : {Dims3{30, 17, 23}, Dims3{16, 16, 16}, Dims3{9, 10, 11}, Dims3{12, 8, 2}}) {
    const auto reference = serial_spectrum(shape);
    const auto grids = grids_of(shape, world.size());
    CHECK(!grids.empty());
    for (const auto& grid : grids) {
      const std::string what = std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + "x" +
                               std::to_string(shape[2]) + " on grid " + std::to_string(grid.ranks_z) + "x" +
                               std::to_string(grid.ranks_y);
      CAPTURE(what);
      const Errors e64 = distributed_errors<double>(world, shape, grid, reference);
      CHECK(e64.forward < 1e-12);
      CHECK(e64.round_trip < 1e-12);
      CHECK(e64.input_preserved);
      const Errors e32 = distributed_errors<float>(world, shape, grid, reference);
      CHECK(e32.forward < 1e-5);
      CHECK(e32.round_trip < 1e-5);
      CHECK(e32.input_preserved);
      if (world.rank() == 0)
        MESSAGE(what, ": fp64 forward ", e64.forward, " round trip ", e64.round_trip, "; fp32 forward ", e32.forward,
                " round trip ", e32.round_trip);
    }
  }
}

TEST_CASE("distributed FFT with two FFTW and packing threads per rank") {
  const Comm world = Comm::world();
  const Dims3 shape{20, 14, 18};
  const auto reference = serial_spectrum(shape);
  for (const auto& grid : grids_of(shape, world.size())) {
    const Errors e = distributed_errors<double>(world, shape, grid, reference, 2);
    CHECK(e.forward < 1e-12);
    CHECK(e.round_trip < 1e-12);
  }
}

int main(int argc, char** argv) {
  MpiSession mpi(argc, argv);
  doctest::Context context(argc, argv);
  // Every rank runs every test (the collectives need them all); rank 0 reports, the others print failures only.
  if (Comm::world().rank() != 0) context.setOption("minimal", true);
  return context.run();
}
