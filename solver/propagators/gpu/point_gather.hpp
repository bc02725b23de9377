#pragma once
// Point contributions grouped by target point, so that a GPU adds them without atomics and in the CPU's order
// (kernels/cuda/fdtd_adjoint_cuda.hpp, PointGather): the sources of the CUDA forward and gradient propagators and
// the adjoint sources. Plain C++ (unit-tested on the CPU); the device copy is solver/propagators/gpu/device_gather.hpp.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "kernels/common.hpp"

namespace specwave {

// Target t = target[t] gets contributions k = offsets[t] .. offsets[t+1]-1, in this order.
template <class T>
struct HostGather {
  std::vector<index_t> target;
  std::vector<std::int32_t> offsets{0};
  std::vector<T> factor;
  std::vector<std::int32_t> owner;
};

// Contributions (index[p], factor[p], owner[p]) grouped by target index, each group in increasing p: the order in
// which the CPU loops (u[index[p]] += factor[p] * s_owner[p], p = 0, 1, ...) add them.
template <class T>
HostGather<T> gather_by_target(const std::vector<index_t>& index, const std::vector<T>& factor,
                               const std::vector<std::int32_t>& owner) {
  std::vector<std::size_t> order(index.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return index[a] < index[b]; });
  HostGather<T> g;
  for (std::size_t k : order) {
    if (!g.target.empty() && g.target.back() != index[k]) g.offsets.push_back(std::int32_t(g.factor.size()));
    if (g.target.empty() || g.target.back() != index[k]) g.target.push_back(index[k]);
    g.factor.push_back(factor[k]);
    g.owner.push_back(owner[k]);
  }
  if (!g.target.empty()) g.offsets.push_back(std::int32_t(g.factor.size()));
  return g;
}

}  // namespace specwave
