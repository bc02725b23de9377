#pragma once
// Shared by host C++ and CUDA translation units: per-point physics is written once with SPECWAVE_HD.
#include <cstdint>

// Per-point functions are always inlined: a call inside a vectorised loop would stop vectorisation.
#if defined(__CUDACC__)
#define SPECWAVE_HD __host__ __device__  // nvcc inlines device functions of this size by itself
#elif defined(__GNUC__)
#define SPECWAVE_HD __attribute__((always_inline))
#else
#define SPECWAVE_HD
#endif

namespace specwave {

using index_t = std::int64_t;

enum class Axis : int { z = 0, y = 1, x = 2 };

// A 3-D field stored with `halo` ghost points on every face, C order (z slowest, x fastest).
// Ghost values are zero (Dirichlet) or odd mirrors above a free surface; the halo is also what an MPI
// exchange fills. index(z, y, x) takes interior coordinates (0 .. n-1).
struct FieldLayout {
  int nz = 0, ny = 0, nx = 0, halo = 0;
  SPECWAVE_HD index_t stride_y() const { return index_t(nx) + 2 * halo; }
  SPECWAVE_HD index_t stride_z() const { return stride_y() * (index_t(ny) + 2 * halo); }
  SPECWAVE_HD index_t stride(int axis) const { return axis == 0 ? stride_z() : axis == 1 ? stride_y() : 1; }
  SPECWAVE_HD index_t size() const { return stride_z() * (index_t(nz) + 2 * halo); }
  SPECWAVE_HD index_t index(int z, int y, int x) const {
    return (index_t(z) + halo) * stride_z() + (index_t(y) + halo) * stride_y() + (index_t(x) + halo);
  }
  // The interior coordinates of padded flat index i (the inverse of index).
  SPECWAVE_HD void coordinates(index_t i, int& z, int& y, int& x) const {
    z = int(i / stride_z()) - halo;
    y = int(i % stride_z() / stride_y()) - halo;
    x = int(i % stride_y()) - halo;
  }
  SPECWAVE_HD index_t interior_points() const { return index_t(nz) * ny * nx; }
  SPECWAVE_HD int extent(int axis) const { return axis == 0 ? nz : axis == 1 ? ny : nx; }
};

}  // namespace specwave
