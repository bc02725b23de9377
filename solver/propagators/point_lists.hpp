#pragma once
// Sources and receivers as flat point lists on a field layout, shared by the methods (FDTD and spectral, CPU and
// CUDA): the interpolation stencils of solver/plan/acquisition.hpp resolved to indices and factors, and the receivers
// of one block of a decomposed grid arranged so that the traces are bitwise those of one rank.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "io/checksum.hpp"
#include "kernels/common.hpp"
#include "solver/parallel/decomposition.hpp"
#include "solver/plan/acquisition.hpp"

namespace specwave {

// Points of several sources or receivers: entry p belongs to owner[p]; for receivers, receiver r owns
// entries offsets[r] .. offsets[r+1]-1. Injection adds factor[p] * s_owner(t_n) at index[p];
// sampling sums factor[p] * u[index[p]].
// The most points and the most sources of any of `shots` (each a list of source stencils): the room a GPU propagator
// makes once so that no shot allocates.
struct ShotSize {
  std::size_t points = 0, sources = 0;
};
inline ShotSize largest_shot(const std::vector<std::vector<PointStencil>>& shots) {
  ShotSize out;
  for (const auto& shot : shots) {
    std::size_t points = 0;
    for (const auto& s : shot) points += s.points.size();
    out.points = std::max(out.points, points);
    out.sources = std::max(out.sources, shot.size());
  }
  return out;
}

template <class T>
struct PointLists {
  std::vector<index_t> index;
  std::vector<T> factor;
  std::vector<std::int32_t> owner, offsets;
};

// The point lists of stencils on `layout`, each factor = weight * scale * (factor_field at the point, if given).
// Only the points of `block` are listed (global stencil indices become the block's local ones); without a
// block, all.
template <class T>
PointLists<T> make_point_lists(const FieldLayout& layout, const std::vector<PointStencil>& stencils, double scale,
                               const std::vector<T>* factor_field, const Block* block = nullptr);

// Receivers on one block of a decomposed grid, arranged so that the traces are bitwise those of one rank
// (docs/architecture.md, "Domain decomposition"): a receiver whose points all lie in one block is summed there
// (`whole`, in the single-rank order); the points of a receiver split between blocks are recorded one by one as
// products factor * u into numbered slots, and summed in the single-rank order once every rank's slots are
// gathered (gather_traces). On one rank every receiver is whole and whole_id[r] = r. A point's index is that of field
// p.field of fields laid out one after another (field k from k * layout.size(): the elastic scheme's nine; else 0).
template <class T>
struct BlockReceivers {
  PointLists<T> whole;           // offsets per whole receiver of this block
  std::vector<int> whole_id;     // their receiver numbers
  PointLists<T> parts;           // this block's points of split receivers; owner[p] = slot
  std::vector<int> split_id;     // every split receiver (the same list on every rank)
  std::vector<int> split_slots;  // receiver split_id[k] has slots split_slots[k] .. split_slots[k+1]-1, in point order
  int slots() const { return split_slots.empty() ? 0 : split_slots.back(); }
};
template <class T>
BlockReceivers<T> make_block_receivers(const FieldLayout& layout, const std::vector<PointStencil>& receivers,
                                       const Block& block);

// What a receiver's stencil is, in one number: io::checksum64 of its position and point count, combined with its
// first, middle and last points (indices, field, weight). A receiver at the same place recording another component
// has other points (a derivative's weights, another field), so another key; sampling three points keeps the key's
// cost, paid every shot, proportional to the receivers rather than to their 8^3 or 13^3 points.
inline std::uint64_t stencil_key(const PointStencil& s) {
  const std::size_t n = s.points.size();
  std::uint64_t h = io::checksum64(s.position.data(), sizeof(double) * s.position.size(), n);
  for (const std::size_t k : {std::size_t(0), n / 2, n - 1}) {
    if (k >= n) break;
    const GridPointWeight& p = s.points[k];
    h = io::combine_checksums(h, (std::uint64_t(std::uint32_t(p.iz)) << 32) | std::uint32_t(p.iy));
    h = io::combine_checksums(h, (std::uint64_t(std::uint32_t(p.ix)) << 8) | p.field);
    h = io::combine_checksums(h, std::bit_cast<std::uint64_t>(p.weight));
  }
  return h;
}

// `out` made anew for `receivers` unless `keys` (the stencil_key of those it was made from) are theirs already, which
// it then becomes: a propagator keeps its receivers from shot to shot while they stay, and remakes them for a shot
// with its own (ShotSpec::receivers, and their components). True when made anew.
template <class T>
bool set_block_receivers(BlockReceivers<T>& out, std::vector<std::uint64_t>& keys, const FieldLayout& layout,
                         const std::vector<PointStencil>& receivers, const Block& block) {
  std::vector<std::uint64_t> now(receivers.size());
  for (std::size_t r = 0; r < receivers.size(); ++r) now[r] = stencil_key(receivers[r]);
  if (now == keys && !out.whole.offsets.empty()) return false;  // made, for these receivers
  out = make_block_receivers<T>(layout, receivers, block);
  keys = std::move(now);
  return true;
}

// traces[r * nt + n] = sum_p w_p u^n_p for every receiver r of `receivers` (fp64 sums, each in its point order;
// threaded when there is enough to gather: the spectral method's receivers have 13^3 points). Compiled without FP
// contraction (solver/propagators/CMakeLists.txt), as record_block's parts are.
template <class T>
void record_points(const PointLists<T>& receivers, const T* u, std::vector<double>& traces, int nt, int n);

// Trace samples n of every receiver of this block: traces[id * nt + n] (whole, as record_points) and parts[slot * nt +
// n].
template <class T>
void record_block(const BlockReceivers<T>& r, const T* u, std::vector<double>& traces, std::vector<double>& parts,
                  int nt, int n);

}  // namespace specwave
