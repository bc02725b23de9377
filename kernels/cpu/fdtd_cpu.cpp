#include "kernels/cpu/fdtd_cpu.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace specwave::cpu {
namespace {

// Step 1 of the CPML: psi_a^n = b psi_a^{n-1} + a D1_a u^n on the layer points x0 <= x < x1 of row (z, y) of one
// face. Rows along x are contiguous in both the field and the slab, so the loop vectorises.
template <int R, class T>
inline void update_psi_row(const FdtdStep<T>& s, int axis, int side, int z, int y, int x0, int x1) {
  const CpmlAxis<T>& p = s.pml[axis];
  const FieldLayout& L = s.layout;
  const T* c1 = s.coef.d1[axis];
  T* __restrict psi = p.psi[side];
  const T* __restrict u = s.u;
  const index_t i0 = L.index(z, y, x0);
  const index_t j0 = slab_index(p, axis, z, y, x0);
  if (axis < 2) {  // a, b fixed along the row
    const int c = axis == 0 ? z : y;
    const T a = p.a[c], b = p.b[c];
    const index_t stride_u = L.stride(axis);
#pragma omp simd
    for (int x = 0; x < x1 - x0; ++x)
      psi[j0 + x] = cpml_memory(b, a, psi[j0 + x], first_derivative<R>(u, i0 + x, stride_u, c1));
  } else {
#pragma omp simd
    for (int x = 0; x < x1 - x0; ++x)
      psi[j0 + x] = cpml_memory(p.b[x0 + x], p.a[x0 + x], psi[j0 + x], first_derivative<R>(u, i0 + x, 1, c1));
  }
}

// Step 1 on every layer point of one face, in its own sweep.
template <int R, class T>
void update_psi(const FdtdStep<T>& s, int axis, int side) {
  const CpmlAxis<T>& p = s.pml[axis];
  const FieldLayout& L = s.layout;
  int lo[3] = {0, 0, 0}, hi[3] = {L.nz, L.ny, L.nx};
  lo[axis] = side == 0 ? 0 : p.n - p.width;
  hi[axis] = side == 0 ? p.width : p.n;
#pragma omp parallel for collapse(2) schedule(static)
  for (int z = lo[0]; z < hi[0]; ++z)
    for (int y = lo[1]; y < hi[1]; ++y) update_psi_row<R>(s, axis, side, z, y, lo[2], hi[2]);
}

// x-layer corrections of the layer points k0 <= k < k1 (of the W) of one face of row (z, y) into corr[k]:
// field, slab and the coefficients a(x), b(x) are all contiguous along x, so the loop vectorises.
template <int R, class T>
inline void x_layer_corrections(const FdtdStep<T>& s, int z, int y, int side, int k0, int k1, T* __restrict corr) {
  const CpmlAxis<T>& px = s.pml[2];
  const int x0 = side == 0 ? 0 : s.layout.nx - px.width;
  const index_t i0 = s.layout.index(z, y, x0);
  const index_t j0 = slab_index(px, 2, z, y, x0);
  const T* psi = px.psi[side];
  T* zeta = px.zeta[side];
  const T* a = px.a + x0;
  const T* b = px.b + x0;
#pragma omp simd
  for (int k = k0; k < k1; ++k)
    corr[k] = cpml_correction<R>(s.u, i0 + k, 1, psi, zeta, j0 + k, 1, s.coef.d2[2], s.coef.d1[2], a[k], b[k]);
}

// Steps 2 + 3 at the x-layer points k0 <= k < k1 (of the W) of one face of row (z, y), a row in no z or y layer:
// the Laplacian, the x correction and the leapfrog in one loop (the same operations as x_layer_corrections and the
// update, so bitwise the same values).
template <int R, class T>
inline void x_layer_update(const FdtdStep<T>& s, int z, int y, int side, int k0, int k1) {
  const FieldLayout& L = s.layout;
  const CpmlAxis<T>& px = s.pml[2];
  const int x0 = side == 0 ? 0 : L.nx - px.width;
  const index_t i0 = L.index(z, y, x0);
  const index_t j0 = slab_index(px, 2, z, y, x0);
  const index_t sy = L.stride_y(), sz = L.stride_z();
  const T* __restrict u = s.u;
  T* __restrict out = s.u_prev;
  const T* __restrict vel = s.vel2dt2;
  const T* psi = px.psi[side];
  T* zeta = px.zeta[side];
  const T* a = px.a + x0;
  const T* b = px.b + x0;
  const FdtdCoefficients<T> coef = s.coef;
#pragma omp simd
  for (int k = k0; k < k1; ++k) {
    const index_t i = i0 + k;
    const T corr = cpml_correction<R>(u, i, 1, psi, zeta, j0 + k, 1, coef.d2[2], coef.d1[2], a[k], b[k]);
    out[i] = leapfrog(u[i], out[i], vel[i], laplacian<R>(u, i, sy, sz, coef) + corr);
  }
}

// Steps 2 + 3 for the points x0 <= x < x1 of row (z, y).
// Rows in no z or y layer (most of the grid): one fused loop, Laplacian + leapfrog, over the interior x range,
// and the x-layer ends in a loop each with their correction (x_layer_update). Rows inside a z or y layer: the Laplacian
// of the row into `lap`, the corrections of those axes added row-wise (vectorised), then the x ends and the leapfrog
// update. The path depends on the row only, never on [x0, x1), so a row updated in pieces is bitwise the row updated
// whole. With `x_psi` (a whole row, x0 = 0 and x1 = nx), step 1 of the x faces' CPML is done here first for this row's
// layer points: its corrections are the only reader of the row's psi_x, and the row of u is in cache (in a sweep of
// its own, 10 or 20 points a row, every row came from memory).
template <int R, class T>
void update_row(const FdtdStep<T>& s, int z, int y, int x0, int x1, T* __restrict lap, T* __restrict corr,
                bool x_psi = false) {
  if (x0 >= x1) return;
  if (x_psi) {
    const CpmlAxis<T>& px = s.pml[2];
    if (px.face[0]) update_psi_row<R>(s, 2, 0, z, y, 0, px.width);
    if (px.face[1]) update_psi_row<R>(s, 2, 1, z, y, px.n - px.width, px.n);
  }
  const FieldLayout& L = s.layout;
  const index_t sy = L.stride_y(), sz = L.stride_z();
  const index_t row = L.index(z, y, 0);
  const T* __restrict u = s.u;
  T* __restrict out = s.u_prev;
  const T* __restrict vel = s.vel2dt2;
  const FdtdCoefficients<T> coef = s.coef;
  const CpmlAxis<T>& px = s.pml[2];
  const int x_begin = px.face[0] ? px.width : 0;
  const int x_end = px.face[1] ? L.nx - px.width : L.nx;
  // The low and high x-layer points of [x0, x1): x in [x0, lo_end) and [hi_begin, x1).
  const int lo_end = std::min(x1, x_begin), hi_begin = std::max(x0, x_end);
  const int c[3] = {z, y, 0};

  if (!s.pml[0].in_layer(z) && !s.pml[1].in_layer(y)) {
    if (x0 < lo_end) x_layer_update<R>(s, z, y, 0, x0, lo_end);
    const int mid_end = std::min(x1, x_end);
#pragma omp simd
    for (int x = std::max(x0, x_begin); x < mid_end; ++x) {
      const index_t i = row + x;
      out[i] = leapfrog(u[i], out[i], vel[i], laplacian<R>(u, i, sy, sz, coef));
    }
    if (hi_begin < x1) x_layer_update<R>(s, z, y, 1, hi_begin - x_end, x1 - x_end);
    return;
  }

#pragma omp simd
  for (int x = x0; x < x1; ++x) lap[x] = laplacian<R>(u, row + x, sy, sz, coef);
  for (int axis = 0; axis < 2; ++axis) {
    const CpmlAxis<T>& p = s.pml[axis];
    if (!p.in_layer(c[axis])) continue;
    const int side = p.side(c[axis]);
    const T* psi = p.psi[side];
    T* zeta = p.zeta[side];
    const index_t j0 = slab_index(p, axis, z, y, 0);
    const T a = p.a[c[axis]], b = p.b[c[axis]];
    const index_t stride_u = L.stride(axis), stride_s = p.slab_stride[axis];
#pragma omp simd
    for (int x = x0; x < x1; ++x)
      lap[x] +=
          cpml_correction<R>(u, row + x, stride_u, psi, zeta, j0 + x, stride_s, coef.d2[axis], coef.d1[axis], a, b);
  }
  if (x0 < lo_end) {
    x_layer_corrections<R>(s, z, y, 0, x0, lo_end, corr);
    for (int x = x0; x < lo_end; ++x) lap[x] += corr[x];
  }
  if (hi_begin < x1) {
    x_layer_corrections<R>(s, z, y, 1, hi_begin - x_end, x1 - x_end, corr);
    for (int x = hi_begin; x < x1; ++x) lap[x] += corr[x - x_end];
  }
#pragma omp simd
  for (int x = x0; x < x1; ++x) out[row + x] = leapfrog(u[row + x], out[row + x], vel[row + x], lap[x]);
}

// Row (z, y) of u^n into the interior-compact u_copy (the row is in cache: update_row's stencil has just read it).
template <class T>
inline void copy_row(const FdtdStep<T>& s, int z, int y) {
  const FieldLayout& L = s.layout;
  const T* __restrict in = s.u + L.index(z, y, 0);
  T* __restrict out = s.u_copy + (std::size_t(z) * std::size_t(L.ny) + std::size_t(y)) * std::size_t(L.nx);
#pragma omp simd
  for (int x = 0; x < L.nx; ++x) out[x] = in[x];
}

template <int R, class T>
void step_radius(const FdtdStep<T>& s, StepPart part, const Shell& shell) {
  const FieldLayout& L = s.layout;
  if (L.halo != R) throw std::logic_error("fdtd_step: field halo must equal the stencil radius");
  if (s.u_copy && part != StepPart::all) throw std::logic_error("fdtd_step: u_copy needs StepPart::all");
  if (part != StepPart::interior) {
    if (s.free_surface) mirror_top_ghosts(L, s.u);
    // A whole step updates psi inside its sweep (below).
    if (part != StepPart::all)
      for (int axis = 0; axis < 3; ++axis)
        for (int side = 0; side < 2; ++side)
          if (s.pml[axis].face[side]) update_psi<R>(s, axis, side);
  }
  if (part == StepPart::all) {
    // Rows in blocks of `by` along y, each thread sweeping whole blocks through z: the 2R + 1 planes' rows the z
    // stencil reads stay in the L2 cache from one z to the next (row_block_height; as many blocks as a multiple of
    // the threads). Step 1 of the CPML runs inside the sweep, on rows in cache: the z faces' psi of a block's rows
    // just before the first plane that reads them (psi_z of plane z' is read by the layer planes within R of z'),
    // the y faces' psi of a plane's layer rows before that plane's rows (they read psi_y of their own plane), the
    // x faces' psi by update_row. A y face whose layer spans two blocks keeps its own sweep. Every value is the
    // same whatever the order, so the result is bitwise that of separate sweeps.
    const int threads = omp_get_max_threads();
    const int by = row_block_height(L, R, sizeof(T), threads);
    const int blocks = (L.ny + by - 1) / by;
    const CpmlAxis<T>& pz = s.pml[0];
    const CpmlAxis<T>& py = s.pml[1];
    const bool y_low = py.face[0] && py.width <= by, y_high = py.face[1] && py.width <= L.ny - (blocks - 1) * by;
    for (int side = 0; side < 2; ++side)
      if (py.face[side] && !(side == 0 ? y_low : y_high)) update_psi<R>(s, 1, side);
    const auto psi_planes = [&](int side, int y0, int y1) {
      const int z0 = side == 0 ? 0 : pz.n - pz.width, z1 = side == 0 ? pz.width : pz.n;
      for (int z = z0; z < z1; ++z)
        for (int y = y0; y < y1; ++y) update_psi_row<R>(s, 0, side, z, y, 0, L.nx);
    };
#pragma omp parallel
    {
      std::vector<T> lap(L.nx), corr(std::max(1, s.pml[2].width));
#pragma omp for schedule(static)
      for (int b = 0; b < blocks; ++b) {
        const int y0 = b * by, y1 = std::min(L.ny, y0 + by);
        if (pz.face[0]) psi_planes(0, y0, y1);
        for (int z = 0; z < L.nz; ++z) {
          if (pz.face[1] && z == pz.n - pz.width) psi_planes(1, y0, y1);
          if (y_low)
            for (int y = y0; y < std::min(y1, py.width); ++y) update_psi_row<R>(s, 1, 0, z, y, 0, L.nx);
          if (y_high)
            for (int y = std::max(y0, py.n - py.width); y < y1; ++y) update_psi_row<R>(s, 1, 1, z, y, 0, L.nx);
          for (int y = y0; y < y1; ++y) {
            update_row<R>(s, z, y, 0, L.nx, lap.data(), corr.data(), true);
            if (s.u_copy) copy_row(s, z, y);
          }
        }
      }
    }
    return;
  }
  // Rows within the z or y shell belong to the shell whole; the other rows have the x shell at their ends.
  const auto& w = shell.width;
  const int xs0 = std::min(w[2][0], L.nx), xs1 = std::max(xs0, L.nx - w[2][1]);
  if (part == StepPart::interior) {
    // The rows inside the shell, swept as the whole step sweeps (blocks of rows along y through z, static shares):
    // the z stencil's planes stay in cache from one z to the next.
    const int z0 = std::min(w[0][0], L.nz), z1 = std::max(z0, L.nz - w[0][1]);
    const int y0 = std::min(w[1][0], L.ny), y1 = std::max(y0, L.ny - w[1][1]);
    if (z0 >= z1 || y0 >= y1 || xs0 >= xs1) return;
    FieldLayout inner = L;
    inner.ny = y1 - y0;
    const int by = row_block_height(inner, R, sizeof(T), omp_get_max_threads());
    const int blocks = (inner.ny + by - 1) / by;
#pragma omp parallel
    {
      std::vector<T> lap(L.nx), corr(std::max(1, s.pml[2].width));
#pragma omp for schedule(static)
      for (int b = 0; b < blocks; ++b)
        for (int z = z0; z < z1; ++z)
          for (int y = y0 + b * by; y < std::min(y1, y0 + (b + 1) * by); ++y)
            update_row<R>(s, z, y, xs0, xs1, lap.data(), corr.data());
    }
    return;
  }
#pragma omp parallel
  {
    std::vector<T> lap(L.nx), corr(std::max(1, s.pml[2].width));
#pragma omp for collapse(2) schedule(dynamic, 16)
    for (int z = 0; z < L.nz; ++z)
      for (int y = 0; y < L.ny; ++y) {
        const bool shell_row = z < w[0][0] || z >= L.nz - w[0][1] || y < w[1][0] || y >= L.ny - w[1][1];
        if (shell_row) {
          update_row<R>(s, z, y, 0, L.nx, lap.data(), corr.data());
        } else {
          update_row<R>(s, z, y, 0, xs0, lap.data(), corr.data());
          update_row<R>(s, z, y, xs1, L.nx, lap.data(), corr.data());
        }
      }
  }
}

}  // namespace

// The height (rows along y) of the blocks of rows swept through z: their 2R + 1 z-neighbour rows fill at most about
// half of one core's L2 cache (sysconf; 1 MiB when it does not say), and the blocks are of equal height (within a
// row), so that the threads' static shares of (block, z) hold the same number of rows.
int row_block_height(const FieldLayout& L, int R, std::size_t value_bytes, int parts) {
  static const long l2 = [] {
    const long v = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return v > 0 ? v : 1l << 20;
  }();
  const double row_bytes = double(L.stride_y()) * double(value_bytes) * (2 * R + 1);
  const int most = std::max(8, int(0.5 * double(l2) / row_bytes));
  int blocks = (L.ny + most - 1) / most;
  if (parts > 1) blocks = std::min(L.ny, (blocks + parts - 1) / parts * parts);
  return (L.ny + blocks - 1) / blocks;
}

template <class T>
void fdtd_step(const FdtdStep<T>& s, StepPart part, const Shell& shell) {
  switch (s.coef.radius) {
    case 1: return step_radius<1>(s, part, shell);
    case 2: return step_radius<2>(s, part, shell);
    case 3: return step_radius<3>(s, part, shell);
    case 4: return step_radius<4>(s, part, shell);
    case 5: return step_radius<5>(s, part, shell);
    case 6: return step_radius<6>(s, part, shell);
    case 7: return step_radius<7>(s, part, shell);
    case 8: return step_radius<8>(s, part, shell);
    default: throw std::invalid_argument("fdtd_step: stencil radius must be 1..8");
  }
}

template <class T>
void mirror_top_ghosts(const FieldLayout& layout, T* u) {
  const index_t plane = layout.stride_z();
  const index_t surface = index_t(layout.halo) * plane;
  for (int k = 1; k <= layout.halo; ++k) {
    T* ghost = u + surface - k * plane;
    const T* image = u + surface + k * plane;
#pragma omp parallel for simd schedule(static)
    for (index_t p = 0; p < plane; ++p) ghost[p] = -image[p];
  }
}

template <class T>
void zero_top_plane(const FieldLayout& L, T* u) {
#pragma omp parallel for schedule(static)
  for (int y = 0; y < L.ny; ++y)
    for (int x = 0; x < L.nx; ++x) u[L.index(0, y, x)] = T(0);
}

template void fdtd_step<float>(const FdtdStep<float>&, StepPart, const Shell&);
template void fdtd_step<double>(const FdtdStep<double>&, StepPart, const Shell&);
template void mirror_top_ghosts<float>(const FieldLayout&, float*);
template void mirror_top_ghosts<double>(const FieldLayout&, double*);
template void zero_top_plane<float>(const FieldLayout&, float*);
template void zero_top_plane<double>(const FieldLayout&, double*);

}  // namespace specwave::cpu
