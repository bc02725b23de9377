#pragma once
// Operations on a field in host memory shared by the CPU propagators (FDTD: padded layout; spectral: halo 0).
#include <omp.h>

#include <cmath>
#include <span>
#include <vector>

#include "solver/propagators/point_lists.hpp"
#include "solver/propagators/propagator.hpp"

namespace specwave::host {

// max |u| over the interior with its flat (nz, ny, nx) index; the first non-finite value wins.
// Per-thread maxima are reduced in a fixed order, so the result does not depend on the schedule.
template <class T>
FieldStats field_stats(const FieldLayout& L, const T* u) {
  std::vector<FieldStats> per_thread(omp_get_max_threads());
#pragma omp parallel
  {
    FieldStats local;
#pragma omp for collapse(2) schedule(static)
    for (int z = 0; z < L.nz; ++z)
      for (int y = 0; y < L.ny; ++y)
        for (int x = 0; x < L.nx; ++x) {
          const double v = u[L.index(z, y, x)];
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

// traces[r * nt + n] = sum_p w_p u^n_p for every receiver r (fp64 sums, each in its own order: the threads change
// nothing but who sums). Threaded when there is enough to gather (the spectral method's receivers have 13^3 points).
template <class T>
void record(const PointLists<T>& receivers, const T* u, std::vector<double>& traces, int nt, int n) {
  const long count = long(receivers.offsets.size()) - 1;
#pragma omp parallel for schedule(static) if (receivers.index.size() >= (std::size_t(1) << 16))
  for (long r = 0; r < count; ++r) {
    double sum = 0;
    for (std::int32_t p = receivers.offsets[r]; p < receivers.offsets[r + 1]; ++p)
      sum += double(receivers.factor[p]) * double(u[receivers.index[p]]);
    traces[r * nt + n] = sum;
  }
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
