#pragma once
// Distributed 3-D real-to-complex / complex-to-real FFT over a 2-D process grid (pencils; a slab when
// ranks_y = 1): batched lower-dimensional FFTW transforms planned once with FFTW_MEASURE, and MPI_Alltoallv
// transposes (solver/parallel/comm.hpp). Unnormalised like kernels/fft/fftw3d.hpp: a round trip multiplies by nz ny nx.
// Explicitly instantiated for float and double. docs/architecture.md ("Distributed FFT") has the same layouts
// with a picture.
//
// Data layout, for a global real array of shape (nz, ny, nx) and the process grid (pz, py), pz py = ranks;
// rank r sits at (cz, cy) = (r / py, r % py):
//
//   real input/output   the block subdomain_of({nz, ny, nx}, {pz, py, 1}, r) of solver/parallel/decomposition.hpp:
//                       z split over pz (block cz), y split over py (block cy), x whole;
//                       stored C order (z, y, x), x fastest, no padding.
//   spectrum            the block subdomain_of({nz, ny, nx/2+1}, {1, pz, py}, r) of the half spectrum
//                       S(kz, ky, kx), kx = 0 .. nx/2 (FFTW's r2c convention; kz, ky = 0 .. n-1 in FFT order,
//                       negative frequencies in the upper half): kz whole, ky split over pz (block cz),
//                       kx split over py (block cy); stored C order (kz, ky, kx), kx fastest.
//
// Block distribution as in decomposition.hpp: along an axis of n points over p ranks, block i has n/p points,
// plus one for i < n % p. Every rank must own at least one point of each block (check_fft_grid).
//
// Algorithm (forward; backward runs it in reverse):
//   slab (py = 1):   2-D r2c FFT of each local z plane (y, x) -> transpose over the pz ranks (y split, z whole)
//                    -> 1-D FFTs along z.
//   pencil (py > 1): 1-D r2c along x -> transpose within each row of py ranks (x split, y whole) -> 1-D FFTs
//                    along y -> transpose within each column of pz ranks (y split, z whole) -> 1-D FFTs along z.
// Each transpose packs rows of contiguous x values for the other ranks, exchanges them with one
// MPI_Alltoallv, and receives them directly into the next stage's layout; a rank's own share is copied
// without MPI.
#include <complex>
#include <memory>

#include "solver/parallel/comm.hpp"
#include "solver/parallel/decomposition.hpp"

namespace specwave {

struct FftProcessGrid {
  int ranks_z = 1;  // pz: the real input is split along z over pz ranks
  int ranks_y = 1;  // py: ... and along y over py ranks (1: slab)
  bool operator==(const FftProcessGrid&) const = default;
};

// The grid for `ranks` ranks: the slab (ranks, 1) when every rank still owns a block of each layout, else the
// feasible pencil grid (pz, py) closest to square. Throws std::invalid_argument when no grid fits.
FftProcessGrid choose_fft_grid(const Dims3& shape, int ranks);

// Throws std::invalid_argument, naming the axis, when some rank of `grid` would own an empty block or when
// the grid does not have `ranks` ranks.
void check_fft_grid(const Dims3& shape, const FftProcessGrid& grid, int ranks);

// The blocks rank `rank` owns (see above): begin and extent per axis in global indices, (z, y, x).
Subdomain fft_real_block(const Dims3& shape, const FftProcessGrid& grid, int rank);
Subdomain fft_spectrum_block(const Dims3& shape, const FftProcessGrid& grid, int rank);

template <class T>
class DistributedRealFft3d {
 public:
  // Collective over `comm` (comm.size() == pz py). `real` and `spectrum` hold this rank's blocks
  // (fft_real_block / fft_spectrum_block: extent[0] extent[1] extent[2] values each), are owned by the caller
  // and must stay alive; planning with FFTW_MEASURE overwrites both: plan before filling them. `threads`:
  // FFTW and packing threads per rank.
  DistributedRealFft3d(const Comm& comm, const Dims3& shape, const FftProcessGrid& grid, T* real,
                       std::complex<T>* spectrum, int threads = 1);
  ~DistributedRealFft3d();
  DistributedRealFft3d(const DistributedRealFft3d&) = delete;
  DistributedRealFft3d& operator=(const DistributedRealFft3d&) = delete;

  void forward();   // collective: real -> spectrum (unnormalised); real is preserved
  void backward();  // collective: spectrum -> real (unnormalised: a round trip multiplies by nz ny nx); spectrum is
                    // destroyed

  const Subdomain& real_block() const;
  const Subdomain& spectrum_block() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace specwave
