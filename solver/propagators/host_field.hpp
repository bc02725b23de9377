#pragma once
// Operations on a field in host memory shared by the CPU propagators (FDTD: padded layout; spectral: halo 0).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "solver/propagators/point_lists.hpp"
#include "solver/propagators/propagator.hpp"

namespace specwave::host {

// Every value 0, on all threads (first touch of fresh pages in parallel, as the sweeps read them).
template <class V>
void zero(std::span<V> d) {
  const std::ptrdiff_t n = std::ptrdiff_t(d.size());
  V* p = d.data();
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) p[i] = V(0);
}

// max |value(i)| over the interior (i the layout's index of a point) with its flat (nz, ny, nx) index; the first
// non-finite value wins. Per-thread maxima are reduced in a fixed order, so the result does not depend on the schedule.
template <class Value>
FieldStats field_stats_of(const FieldLayout& L, Value&& value) {
  std::vector<FieldStats> per_thread(omp_get_max_threads());
#pragma omp parallel
  {
    FieldStats local;
#pragma omp for collapse(2) schedule(static)
    for (int z = 0; z < L.nz; ++z)
      for (int y = 0; y < L.ny; ++y)
        for (int x = 0; x < L.nx; ++x) {
          const double v = value(L.index(z, y, x));
          const std::int64_t flat = (std::int64_t(z) * L.ny + y) * L.nx + x;
          if (!std::isfinite(v)) {
            if (local.finite) local = {INFINITY, flat, false};
          } else if (local.finite && std::abs(v) > local.max_abs) {
            local.max_abs = std::abs(v);
            local.argmax = flat;
          }
        }
    per_thread[omp_get_thread_num()] = local;
  }
  FieldStats stats;
  for (const auto& t : per_thread) {
    if (!t.finite) return t;
    if (t.max_abs > stats.max_abs) stats = t;
  }
  return stats;
}
// max |u| over the interior: field_stats_of the field's values.
template <class T>
FieldStats field_stats(const FieldLayout& L, const T* u) {
  return field_stats_of(L, [u](index_t i) { return double(u[i]); });
}

// traces[r * nt + n] = sum_p w_p u^n_p for every receiver r: record_block's sums of whole receivers
// (solver/propagators/point_lists.cpp, compiled without FP contraction), so that the gradient propagators' traces are
// bitwise the forward propagators'.
template <class T>
void record(const PointLists<T>& receivers, const T* u, std::vector<double>& traces, int nt, int n) {
  record_points(receivers, u, traces, nt, n);
}

// Receivers' points grouped by grid point, to inject adjoint sources on all threads (the spectral method's receivers
// have 13^3 points each, and neighbours share points): point k is index point[k], with the entries
// offsets[k] .. offsets[k+1]-1: the factors (as double) of receivers receiver[...], in the order a loop over the
// receivers and their points visits them (copied here, so that the injection reads them in order). Each point then
// receives its additions in that loop's order, so the result is bitwise the loop's.
struct PointScatter {
  std::vector<index_t> point;
  std::vector<std::int64_t> offsets;
  std::vector<double> factor;
  std::vector<std::int32_t> receiver;
};

template <class T>
PointScatter make_point_scatter(const PointLists<T>& receivers) {
  const std::size_t n = receivers.index.size();
  std::vector<std::int32_t> order(n), owner(n);
  for (std::size_t r = 0; r + 1 < receivers.offsets.size(); ++r)
    for (std::int32_t p = receivers.offsets[r]; p < receivers.offsets[r + 1]; ++p) owner[std::size_t(p)] = int(r);
  for (std::size_t p = 0; p < n; ++p) order[p] = std::int32_t(p);  // receiver order: entries are stored by receiver
  std::stable_sort(order.begin(), order.end(),
                   [&](std::int32_t a, std::int32_t b) { return receivers.index[a] < receivers.index[b]; });
  PointScatter s;
  s.factor.resize(n);
  s.receiver.resize(n);
  for (std::size_t e = 0; e < n; ++e) {
    s.factor[e] = double(receivers.factor[std::size_t(order[e])]);
    s.receiver[e] = owner[std::size_t(order[e])];
    const index_t i = receivers.index[order[e]];
    if (e == 0 || i != s.point.back()) {
      s.point.push_back(i);
      s.offsets.push_back(std::int64_t(e));
    }
  }
  s.offsets.push_back(std::int64_t(n));
  return s;
}

// f(k, i, factor, r) for every entry of receiver r at grid index i = point[k]: the points on all threads when there are
// many (each point's entries in order, by one thread), else serially.
template <class F>
void for_each_scattered(const PointScatter& s, F&& f) {
  const long count = long(s.point.size());
#pragma omp parallel for schedule(static) if (s.factor.size() >= (std::size_t(1) << 16))
  for (long k = 0; k < count; ++k)
    for (std::int64_t e = s.offsets[std::size_t(k)]; e < s.offsets[std::size_t(k) + 1]; ++e)
      f(std::size_t(k), s.point[std::size_t(k)], s.factor[std::size_t(e)], s.receiver[std::size_t(e)]);
}

// The interior of a field, dense (nz, ny, nx), converted to U.
template <class T, class U>
void copy_interior(const FieldLayout& L, const T* u, std::span<U> out) {
#pragma omp parallel for collapse(2)
  for (int z = 0; z < L.nz; ++z)
    for (int y = 0; y < L.ny; ++y)
      for (int x = 0; x < L.nx; ++x) out[(std::size_t(z) * L.ny + y) * L.nx + x] = U(u[L.index(z, y, x)]);
}

}  // namespace specwave::host
