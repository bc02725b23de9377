#include "solver/propagators/point_lists.hpp"

namespace specwave {

template <class T>
PointLists<T> make_point_lists(const FieldLayout& layout, const std::vector<PointStencil>& stencils, double scale,
                               const std::vector<T>* vel2dt2, const Block* block) {
  PointLists<T> out;
  out.offsets.push_back(0);
  const Dims3 b = block ? block->sub.begin : Dims3{0, 0, 0};
  for (std::size_t s = 0; s < stencils.size(); ++s) {
    for (const auto& p : stencils[s].points) {
      if (block && !block->owns(p.iz, p.iy, p.ix)) continue;
      const index_t i = layout.index(p.iz - b[0], p.iy - b[1], p.ix - b[2]);
      out.index.push_back(i);
      out.factor.push_back(T(p.weight * scale * (vel2dt2 ? double((*vel2dt2)[i]) : 1.0)));
      out.owner.push_back(std::int32_t(s));
    }
    out.offsets.push_back(std::int32_t(out.index.size()));
  }
  return out;
}

template <class T>
BlockReceivers<T> make_block_receivers(const FieldLayout& layout, const std::vector<PointStencil>& receivers,
                                       const Block& block) {
  BlockReceivers<T> out;
  out.whole.offsets.push_back(0);
  out.parts.offsets.push_back(0);
  out.split_slots.push_back(0);
  const Dims3 b = block.sub.begin;
  for (std::size_t r = 0; r < receivers.size(); ++r) {
    const auto& points = receivers[r].points;
    bool one_block = true;
    for (const auto& p : points)
      one_block = one_block && owner_of(block.shape, block.process_grid, p.iz, p.iy, p.ix) ==
                                   owner_of(block.shape, block.process_grid, points[0].iz, points[0].iy, points[0].ix);
    if (one_block) {
      if (points.empty() || !block.owns(points[0].iz, points[0].iy, points[0].ix)) continue;
      for (const auto& p : points) {
        out.whole.index.push_back(layout.index(p.iz - b[0], p.iy - b[1], p.ix - b[2]) +
                                  index_t(p.field) * layout.size());
        out.whole.factor.push_back(T(p.weight));
        out.whole.owner.push_back(std::int32_t(out.whole_id.size()));
      }
      out.whole.offsets.push_back(std::int32_t(out.whole.index.size()));
      out.whole_id.push_back(int(r));
      continue;
    }
    int slot = out.split_slots.back();
    for (const auto& p : points) {
      if (block.owns(p.iz, p.iy, p.ix)) {
        out.parts.index.push_back(layout.index(p.iz - b[0], p.iy - b[1], p.ix - b[2]) +
                                  index_t(p.field) * layout.size());
        out.parts.factor.push_back(T(p.weight));
        out.parts.owner.push_back(slot);
      }
      ++slot;
    }
    out.split_id.push_back(int(r));
    out.split_slots.push_back(slot);
  }
  return out;
}

namespace {
// sum_p w_p u_p over receiver k's points, in order (no FMA: this file is compiled without contraction).
template <class T>
inline double receiver_sum(const PointLists<T>& receivers, const T* u, long k) {
  double sum = 0;
  for (std::int32_t p = receivers.offsets[k]; p < receivers.offsets[k + 1]; ++p)
    sum += double(receivers.factor[p]) * double(u[receivers.index[p]]);
  return sum;
}
}  // namespace

template <class T>
void record_points(const PointLists<T>& receivers, const T* u, std::vector<double>& traces, int nt, int n) {
  const long count = long(receivers.offsets.size()) - 1;
#pragma omp parallel for schedule(static) if (receivers.index.size() >= (std::size_t(1) << 16))
  for (long r = 0; r < count; ++r) traces[std::size_t(r) * nt + n] = receiver_sum(receivers, u, r);
}

template <class T>
void record_block(const BlockReceivers<T>& r, const T* u, std::vector<double>& traces, std::vector<double>& parts,
                  int nt, int n) {
  // Threaded when there is enough to gather (the spectral method's receivers have 13^3 points); each receiver's sum
  // keeps its order.
  const long whole = long(r.whole_id.size());
#pragma omp parallel for schedule(static) if (r.whole.index.size() >= (std::size_t(1) << 16))
  for (long k = 0; k < whole; ++k) traces[std::size_t(r.whole_id[k]) * nt + n] = receiver_sum(r.whole, u, k);
  for (std::size_t p = 0; p < r.parts.index.size(); ++p)
    parts[std::size_t(r.parts.owner[p]) * nt + n] = double(r.parts.factor[p]) * double(u[r.parts.index[p]]);
}

template PointLists<float> make_point_lists<float>(const FieldLayout&, const std::vector<PointStencil>&, double,
                                                   const std::vector<float>*, const Block*);
template PointLists<double> make_point_lists<double>(const FieldLayout&, const std::vector<PointStencil>&, double,
                                                     const std::vector<double>*, const Block*);
template BlockReceivers<float> make_block_receivers<float>(const FieldLayout&, const std::vector<PointStencil>&,
                                                           const Block&);
template BlockReceivers<double> make_block_receivers<double>(const FieldLayout&, const std::vector<PointStencil>&,
                                                             const Block&);
template void record_points<float>(const PointLists<float>&, const float*, std::vector<double>&, int, int);
template void record_points<double>(const PointLists<double>&, const double*, std::vector<double>&, int, int);
template void record_block<float>(const BlockReceivers<float>&, const float*, std::vector<double>&,
                                  std::vector<double>&, int, int);
template void record_block<double>(const BlockReceivers<double>&, const double*, std::vector<double>&,
                                   std::vector<double>&, int, int);

}  // namespace specwave
