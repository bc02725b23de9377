#include "solver/parallel/distributed_fft.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <new>
#include <stdexcept>
#include <vector>

#include "kernels/fft/fftw_batched.hpp"

namespace specwave {
namespace {

using fft::Axis;
using fft::BatchedFft;
using fft::Direction;

// Block i of n points over p ranks (decomposition.hpp's rule).
struct Range {
  int begin = 0;
  int count = 0;
};
Range block(int n, int p, int i) { return {i * (n / p) + std::min(i, n % p), n / p + (i < n % p ? 1 : 0)}; }

// A block of rows, each `row` contiguous elements, at offset + o * outer_stride + i * inner_stride for
// o < outer, i < inner; packed it is [outer][inner][row], contiguous.
struct RowBlock {
  long long offset = 0;
  int outer = 0;
  long long outer_stride = 0;
  int inner = 0;
  long long inner_stride = 0;
  int row = 0;
  long long size() const { return 1LL * outer * inner * row; }
};

template <class C>
void pack(const C* scattered, const RowBlock& b, C* packed, int threads) {
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
  for (int o = 0; o < b.outer; ++o)
    for (int i = 0; i < b.inner; ++i)
      std::copy_n(scattered + b.offset + o * b.outer_stride + i * b.inner_stride, b.row,
                  packed + (1LL * o * b.inner + i) * b.row);
}

template <class C>
void unpack(const C* packed, const RowBlock& b, C* scattered, int threads) {
#pragma omp parallel for num_threads(threads) if (threads > 1) schedule(static)
  for (int o = 0; o < b.outer; ++o)
    for (int i = 0; i < b.inner; ++i)
      std::copy_n(packed + (1LL * o * b.inner + i) * b.row, b.row,
                  scattered + b.offset + o * b.outer_stride + i * b.inner_stride);
}

int checked_count(long long n) {
  if (n > INT_MAX)
    throw std::invalid_argument(
        fmt::format("distributed FFT: a block of {} values exceeds MPI's int count; run on more ranks", n));
  return int(n);
}

// One transpose within a sub-communicator, between a "scattered" array (rows of its block for each peer are
// spread out: the forward source) and a "dense" one (each peer's block is contiguous: the forward
// destination). Forward packs and sends; backward receives and unpacks. The own block is copied directly.
template <class C>
struct Transpose {
  const Comm* comm = nullptr;
  std::vector<RowBlock> scattered;               // per peer
  std::vector<int> dense_offset, dense_count;    // per peer, elements of the dense array
  std::vector<int> packed_offset, packed_count;  // per peer, in the exchange buffer (own block: 0)
  std::vector<int> dense_count_mpi;              // dense_count with the own block 0
  long long packed_size = 0;

  void finish() {
    const int p = comm->size(), self = comm->rank();
    packed_offset.assign(p, 0);
    packed_count.assign(p, 0);
    dense_count_mpi = dense_count;
    dense_count_mpi[self] = 0;
    long long offset = 0;
    for (int q = 0; q < p; ++q) {
      if (scattered[q].size() != dense_count[q] && q == self)
        throw std::logic_error("distributed FFT: own block sizes differ between layouts");
      if (q == self) continue;
      packed_offset[q] = checked_count(offset);
      packed_count[q] = checked_count(scattered[q].size());
      offset += scattered[q].size();
    }
    packed_size = offset;
  }

  void forward(const C* from, C* to, C* exchange, long long exchange_size, long long to_size, int threads) const {
    const int p = comm->size(), self = comm->rank();
    for (int q = 0; q < p; ++q)
      if (q != self) pack(from, scattered[q], exchange + packed_offset[q], threads);
    pack(from, scattered[self], to + dense_offset[self], threads);
    if (p > 1)
      comm->alltoallv<C>({exchange, std::size_t(exchange_size)}, packed_count, packed_offset,
                         {to, std::size_t(to_size)}, dense_count_mpi, dense_offset);
  }

  void backward(C* from, C* to, C* exchange, long long exchange_size, long long from_size, int threads) const {
    const int p = comm->size(), self = comm->rank();
    if (p > 1)
      comm->alltoallv<C>({from, std::size_t(from_size)}, dense_count_mpi, dense_offset,
                         {exchange, std::size_t(exchange_size)}, packed_count, packed_offset);
    unpack(from + dense_offset[self], scattered[self], to, threads);
    for (int q = 0; q < p; ++q)
      if (q != self) unpack(exchange + packed_offset[q], scattered[q], to, threads);
  }
};

template <class U>
struct AlignedArray {
  struct Free {
    void operator()(U* p) const { ::operator delete[](p, std::align_val_t(64)); }
  };
  std::unique_ptr<U, Free> data;
  long long size = 0;
  void allocate(long long n) {
    size = n;
    data.reset(n ? static_cast<U*>(::operator new[](sizeof(U) * n, std::align_val_t(64))) : nullptr);
    std::fill_n(data.get(), n, U{});
  }
  U* get() const { return data.get(); }
};

}  // namespace

void check_fft_grid(const Dims3& shape, const FftProcessGrid& g, int ranks) {
  const int pz = g.ranks_z, py = g.ranks_y, nxh = shape[2] / 2 + 1;
  if (shape[0] < 1 || shape[1] < 1 || shape[2] < 1)
    throw std::invalid_argument(
        fmt::format("distributed FFT: shape ({}, {}, {}) has an empty axis", shape[0], shape[1], shape[2]));
  if (pz < 1 || py < 1 || pz * py != ranks)
    throw std::invalid_argument(
        fmt::format("distributed FFT: process grid {} x {} does not have the {} ranks of the "
                    "communicator",
                    pz, py, ranks));
  const struct {
    int n, p;
    const char* what;
  } splits[] = {{shape[0], pz, "z (real input, over ranks_z)"},
                {shape[1], py, "y (real input, over ranks_y)"},
                {shape[1], pz, "ky (spectrum, over ranks_z)"},
                {nxh, py, "kx (spectrum, nx/2+1 values, over ranks_y)"}};
  for (const auto& s : splits)
    if (s.n < s.p)
      throw std::invalid_argument(
          fmt::format("distributed FFT: {} has {} points for {} ranks: some rank would own "
                      "none; use a grid with at most {} ranks along it",
                      s.what, s.n, s.p, s.n));
}

FftProcessGrid choose_fft_grid(const Dims3& shape, int ranks) {
  const auto fits = [&](FftProcessGrid g) {
    try {
      check_fft_grid(shape, g, ranks);
      return true;
    } catch (const std::invalid_argument&) {
      return false;
    }
  };
  if (fits({ranks, 1})) return {ranks, 1};
  FftProcessGrid best{0, 0};
  for (int pz = 1; pz <= ranks; ++pz)
    if (ranks % pz == 0 && fits({pz, ranks / pz}) &&
        (best.ranks_z == 0 || std::abs(pz - ranks / pz) < std::abs(best.ranks_z - best.ranks_y)))
      best = {pz, ranks / pz};
  if (best.ranks_z == 0)
    throw std::invalid_argument(
        fmt::format("distributed FFT: no process grid of {} ranks fits the shape ({}, {}, {}); "
                    "use fewer ranks",
                    ranks, shape[0], shape[1], shape[2]));
  return best;
}

Subdomain fft_real_block(const Dims3& shape, const FftProcessGrid& g, int rank) {
  return subdomain_of(shape, {g.ranks_z, g.ranks_y, 1}, rank);
}

Subdomain fft_spectrum_block(const Dims3& shape, const FftProcessGrid& g, int rank) {
  return subdomain_of({shape[0], shape[1], shape[2] / 2 + 1}, {1, g.ranks_z, g.ranks_y}, rank);
}

template <class T>
struct DistributedRealFft3d<T>::Impl {
  using C = std::complex<T>;
  Dims3 shape;
  FftProcessGrid grid;
  int threads = 1;
  Subdomain real_block, spectrum_block;
  T* real = nullptr;
  C* spectrum = nullptr;
  Comm row, column;                 // ranks with the same cz (py of them), with the same cy (pz of them)
  AlignedArray<C> x_stage_storage;  // (nz_l, ny_l, nx/2+1) after the x (slab: x and y) transform
  AlignedArray<C> y_stage;          // pencil only: (ny, nz_l, nxh_l) after the row transpose
  AlignedArray<C> exchange;         // packed blocks for the other ranks
  C* x_stage = nullptr;             // x_stage_storage, or the spectrum itself when no transpose is needed
  Transpose<C> row_transpose, column_transpose;
  BatchedFft<T> forward_x, forward_y, forward_z, backward_z, backward_y, backward_x;

  static FftProcessGrid checked(const Dims3& shape, const FftProcessGrid& grid, int ranks) {
    check_fft_grid(shape, grid, ranks);
    return grid;
  }

  Impl(const Comm& comm, const Dims3& shape_, const FftProcessGrid& grid_, T* real_, C* spectrum_, int threads_)
      : shape(shape_),
        grid(checked(shape_, grid_, comm.size())),
        threads(std::max(1, threads_)),
        real(real_),
        spectrum(spectrum_),
        row(comm.split(comm.rank() / grid_.ranks_y, comm.rank() % grid_.ranks_y)),
        column(comm.split(comm.rank() % grid_.ranks_y, comm.rank() / grid_.ranks_y)) {
    const int rank = comm.rank(), pz = grid.ranks_z, py = grid.ranks_y;
    const int cz = rank / py, cy = rank % py;
    const int nz = shape[0], ny = shape[1], nx = shape[2], nxh = nx / 2 + 1;
    real_block = fft_real_block(shape, grid, rank);
    spectrum_block = fft_spectrum_block(shape, grid, rank);
    const int nz_l = real_block.extent[0], ny_l = real_block.extent[1];           // real block
    const int ny_s = spectrum_block.extent[1], nxh_l = spectrum_block.extent[2];  // spectrum block
    const bool slab = py == 1;
    if (row.rank() != cy || column.rank() != cz) throw std::logic_error("distributed FFT: unexpected split order");

    const long long x_stage_size = 1LL * nz_l * ny_l * nxh;
    if (slab && pz == 1) {
      x_stage = spectrum;  // one rank: the 2-D transforms write the spectrum's layout directly
    } else {
      x_stage_storage.allocate(x_stage_size);
      x_stage = x_stage_storage.get();
    }

    // Row transpose (pencil): x_stage (z, y, x) rows of x-block q  <->  y_stage (y, z, x_l), y-block s contiguous.
    if (!slab) {
      y_stage.allocate(1LL * ny * nz_l * nxh_l);
      row_transpose.comm = &row;
      for (int q = 0; q < py; ++q) {
        const Range xq = block(nxh, py, q), ys = block(ny, py, q);
        row_transpose.scattered.push_back(
            RowBlock{xq.begin, ny_l, nxh, nz_l, 1LL * ny_l * nxh, xq.count});  // packed [y][z][x]
        row_transpose.dense_offset.push_back(checked_count(1LL * ys.begin * nz_l * nxh_l));
        row_transpose.dense_count.push_back(checked_count(1LL * ys.count * nz_l * nxh_l));
      }
      row_transpose.finish();
    }
    // Column transpose: the y-complete stage (slab: x_stage (z, y, x); pencil: y_stage (y, z, x_l)) rows of
    // y-block q  <->  spectrum (z, y_s, x_l), z-block s contiguous.
    column_transpose.comm = &column;
    for (int q = 0; q < pz; ++q) {
      const Range yq = block(ny, pz, q), zs = block(nz, pz, q);
      if (slab)
        column_transpose.scattered.push_back(
            RowBlock{1LL * yq.begin * nxh, nz_l, 1LL * ny * nxh, yq.count, nxh, nxh});  // packed [z][y][x]
      else
        column_transpose.scattered.push_back(
            RowBlock{1LL * yq.begin * nz_l * nxh_l, nz_l, nxh_l, yq.count, 1LL * nz_l * nxh_l, nxh_l});
      column_transpose.dense_offset.push_back(checked_count(1LL * zs.begin * ny_s * nxh_l));
      column_transpose.dense_count.push_back(checked_count(1LL * zs.count * ny_s * nxh_l));
    }
    column_transpose.finish();
    exchange.allocate(std::max(row_transpose.packed_size, column_transpose.packed_size));

    // Local transforms (FFTW guru axes: n, input stride, output stride; strides in elements).
    const int t = threads;
    if (slab) {
      forward_x = BatchedFft<T>::r2c({{ny, nx, nxh}, {nx, 1, 1}}, {{nz_l, ny * nx, ny * nxh}}, real, x_stage, t);
      backward_x = BatchedFft<T>::c2r({{ny, nxh, nx}, {nx, 1, 1}}, {{nz_l, ny * nxh, ny * nx}}, x_stage, real, t);
    } else {
      forward_x = BatchedFft<T>::r2c({{nx, 1, 1}}, {{nz_l * ny_l, nx, nxh}}, real, x_stage, t);
      backward_x = BatchedFft<T>::c2r({{nx, 1, 1}}, {{nz_l * ny_l, nxh, nx}}, x_stage, real, t);
      const int s = nz_l * nxh_l;
      forward_y = BatchedFft<T>::c2c({{ny, s, s}}, {{s, 1, 1}}, y_stage.get(), y_stage.get(), Direction::forward, t);
      backward_y = BatchedFft<T>::c2c({{ny, s, s}}, {{s, 1, 1}}, y_stage.get(), y_stage.get(), Direction::backward, t);
    }
    const int s = ny_s * nxh_l;
    forward_z = BatchedFft<T>::c2c({{nz, s, s}}, {{s, 1, 1}}, spectrum, spectrum, Direction::forward, t);
    backward_z = BatchedFft<T>::c2c({{nz, s, s}}, {{s, 1, 1}}, spectrum, spectrum, Direction::backward, t);
  }

  long long spectrum_size() const {
    return 1LL * spectrum_block.extent[0] * spectrum_block.extent[1] * spectrum_block.extent[2];
  }

  void forward() {
    forward_x.execute();  // real -> x_stage: along x (slab: along y and x)
    const C* y_complete = x_stage;
    if (grid.ranks_y > 1) {
      row_transpose.forward(x_stage, y_stage.get(), exchange.get(), exchange.size, y_stage.size, threads);
      forward_y.execute();
      y_complete = y_stage.get();
    }
    if (x_stage != spectrum)
      column_transpose.forward(y_complete, spectrum, exchange.get(), exchange.size, spectrum_size(), threads);
    forward_z.execute();
  }

  void backward() {
    backward_z.execute();
    C* y_complete = grid.ranks_y > 1 ? y_stage.get() : x_stage;
    if (x_stage != spectrum)
      column_transpose.backward(spectrum, y_complete, exchange.get(), exchange.size, spectrum_size(), threads);
    if (grid.ranks_y > 1) {
      backward_y.execute();
      row_transpose.backward(y_stage.get(), x_stage, exchange.get(), exchange.size, y_stage.size, threads);
    }
    backward_x.execute();  // x_stage -> real (destroys x_stage)
  }
};

template <class T>
DistributedRealFft3d<T>::DistributedRealFft3d(const Comm& comm, const Dims3& shape, const FftProcessGrid& grid, T* real,
                                              std::complex<T>* spectrum, int threads)
    : impl_(std::make_unique<Impl>(comm, shape, grid, real, spectrum, threads)) {}

template <class T>
DistributedRealFft3d<T>::~DistributedRealFft3d() = default;

template <class T>
void DistributedRealFft3d<T>::forward() {
  impl_->forward();
}

template <class T>
void DistributedRealFft3d<T>::backward() {
  impl_->backward();
}

template <class T>
const Subdomain& DistributedRealFft3d<T>::real_block() const {
  return impl_->real_block;
}

template <class T>
const Subdomain& DistributedRealFft3d<T>::spectrum_block() const {
  return impl_->spectrum_block;
}

template class DistributedRealFft3d<float>;
template class DistributedRealFft3d<double>;

}  // namespace specwave
