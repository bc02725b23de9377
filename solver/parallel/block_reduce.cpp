#include "solver/parallel/block_reduce.hpp"

#include <cmath>
#include <limits>

namespace specwave {

template <class T>
std::vector<double> gather_block_traces(const Comm& domain, const BlockReceivers<T>& r, std::span<const double> local,
                                        std::span<const double> parts_in, int nt) {
  std::vector<double> traces(local.begin(), local.end()), parts(parts_in.begin(), parts_in.end());
  domain.allreduce_in_place(std::span<double>(traces), ReduceOp::sum);
  domain.allreduce_in_place(std::span<double>(parts), ReduceOp::sum);
  for (std::size_t k = 0; k < r.split_id.size(); ++k)
    for (int n = 0; n < nt; ++n) {
      double sum = 0;
      for (int slot = r.split_slots[k]; slot < r.split_slots[k + 1]; ++slot) sum += parts[std::size_t(slot) * nt + n];
      traces[std::size_t(r.split_id[k]) * nt + n] = sum;
    }
  return traces;
}

FieldStats reduce_field_stats(const Comm& domain, const Block& block, FieldStats local) {
  const Dims3 b = block.sub.begin, e = block.sub.extent, g = block.shape;
  const std::int64_t lx = local.argmax % e[2], ly = local.argmax / e[2] % e[1],
                     lz = local.argmax / (std::int64_t(e[2]) * e[1]);
  local.argmax = ((lz + b[0]) * g[1] + ly + b[1]) * g[2] + lx + b[2];
  const double score = local.finite ? local.max_abs : std::numeric_limits<double>::infinity();
  const double best = domain.allreduce(score, ReduceOp::max);
  const long long where =
      domain.allreduce(score == best ? (long long)local.argmax : std::numeric_limits<long long>::max(), ReduceOp::min);
  return {best, where, std::isfinite(best)};
}

template std::vector<double> gather_block_traces<float>(const Comm&, const BlockReceivers<float>&,
                                                        std::span<const double>, std::span<const double>, int);
template std::vector<double> gather_block_traces<double>(const Comm&, const BlockReceivers<double>&,
                                                         std::span<const double>, std::span<const double>, int);

}  // namespace specwave
