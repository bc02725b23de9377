#pragma once
// What the ranks of a decomposed grid combine into one answer: the traces of receivers spread over blocks, and
// the largest |u| over the grid. Shared by the decomposed propagators (FDTD and spectral).
#include <span>
#include <vector>

#include "solver/parallel/comm.hpp"
#include "solver/propagators/point_lists.hpp"
#include "solver/propagators/propagator.hpp"

namespace specwave {

// Every receiver's trace on every rank of `domain` (collective), from each rank's record_block() samples:
// each trace sample and each slot of a split receiver is written by exactly one rank (the others hold zero),
// so the sums over ranks are exact; split receivers are then summed in the single-rank point order. So the
// traces are bitwise those of one rank whenever the field values are.
template <class T>
std::vector<double> gather_block_traces(const Comm& domain, const BlockReceivers<T>& receivers,
                                        std::span<const double> local, std::span<const double> parts, int nt);

// The grid's max |u| (any non-finite value first; ties to the lowest index) from each rank's statistics of
// its block (argmax in the block's flat index): collective, the same on every rank.
FieldStats reduce_field_stats(const Comm& domain, const Block& block, FieldStats local);

}  // namespace specwave
