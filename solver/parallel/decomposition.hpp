#pragma once
// Domain decomposition geometry for MPI runs: a 3-D Cartesian process grid and the block of the
// global grid each rank owns. Pure geometry: no MPI calls, unit-tested without MPI.
#include <array>
#include <optional>

namespace specwave {

using Dims3 = std::array<int, 3>;  // (z, y, x)

struct Subdomain {
  Dims3 coords{0, 0, 0};  // position in the process grid
  Dims3 begin{0, 0, 0};   // first global index owned, per axis
  Dims3 extent{0, 0, 0};  // points owned, per axis
};

// Halo points exchanged per step, summed over all ranks: sum_a (p_a - 1) * 2 * halo * (plane area normal to a).
long long halo_exchange_points(const Dims3& shape, const Dims3& process_grid, int halo);

// The process grid (pz, py, px), pz * py * px = ranks, with the least halo exchange (ties: more ranks along z,
// the slowest axis, so each rank's block stays contiguous in x). `requested` overrides it (checked).
Dims3 choose_process_grid(const Dims3& shape, int ranks, int halo, const std::optional<Dims3>& requested = {});

// Block distribution: along an axis of n points over p ranks, rank i owns n/p points, plus one for i < n % p.
Subdomain subdomain_of(const Dims3& shape, const Dims3& process_grid, int rank);

// Rank of a process-grid position (C order: z slowest); -1 outside the grid.
int rank_of(const Dims3& process_grid, const Dims3& coords);

// Process-grid coordinate of the block holding global index i along an axis of n points over p ranks.
int block_coordinate(int n, int p, int i);

// One rank's place in a decomposition: its block and its face neighbours (the 6 ranks it exchanges halos with).
struct Block {
  Dims3 shape{0, 0, 0};  // the global grid
  Dims3 process_grid{1, 1, 1};
  Subdomain sub;
  int neighbour[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};  // [axis][low/high] rank, -1: the grid's own face

  bool decomposed() const { return process_grid[0] * process_grid[1] * process_grid[2] > 1; }
  bool owns(int z, int y, int x) const {
    return z >= sub.begin[0] && z < sub.begin[0] + sub.extent[0] && y >= sub.begin[1] &&
           y < sub.begin[1] + sub.extent[1] && x >= sub.begin[2] && x < sub.begin[2] + sub.extent[2];
  }
  long long points() const { return 1LL * sub.extent[0] * sub.extent[1] * sub.extent[2]; }
};
Block block_of(const Dims3& shape, const Dims3& process_grid, int rank);
inline Block whole_grid(const Dims3& shape) { return block_of(shape, {1, 1, 1}, 0); }
// The rank owning global point (z, y, x).
int owner_of(const Dims3& shape, const Dims3& process_grid, int z, int y, int x);

// Refuses (Error invalid_case, naming the limit) a decomposition whose subdomains are thinner than the
// stencil halo along a decomposed axis, or whose boundary subdomains cannot hold the absorbing layer and
// `layer_extra` more points (the staggered scheme's: 1).
void check_decomposition(const Dims3& shape, const Dims3& process_grid, int halo, int pml_width, int layer_extra = 0);

}  // namespace specwave
