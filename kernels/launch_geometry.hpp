#pragma once
// Launch geometry of every CUDA kernel: the launch configuration (grid and block) a launcher chooses for a box of
// points, and the mapping from (block index, thread index) to the point a thread owns. Host and device functions
// (SPECWAVE_HD) without CUDA types, so that the CUDA kernels call exactly these functions and a CPU test
// (tests/test_launch_geometry.cpp) runs every mapping over awkward sizes (primes, 1, one past a tile) and checks
// that each point of its box is owned exactly once and nothing outside it is touched. Launch limits (65535 blocks
// along y and z, 2^31 - 1 along x) are checked by check_launch() before a launch.
//
// Coordinates here are (x, y, z) with x the fastest thread index, as CUDA's dim3, so a warp reads consecutive
// addresses; boxes are in interior coordinates of a FieldLayout.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "kernels/common.hpp"

namespace specwave::launch {

struct Int3 {
  int x = 0, y = 0, z = 0;
};

// A grid or block size as CUDA's dim3 (x fastest).
struct Dim {
  unsigned x = 1, y = 1, z = 1;
  SPECWAVE_HD std::int64_t count() const { return std::int64_t(x) * y * z; }
};

struct Launch {
  Dim grid, block;
};

SPECWAVE_HD inline unsigned blocks_for(std::int64_t n, int threads) { return unsigned((n + threads - 1) / threads); }

// CUDA's limits on a launch (compute capability >= 3.0): throws std::invalid_argument naming the kernel.
inline void check_launch(const Launch& l, const char* what) {
  const bool ok = l.grid.x >= 1 && l.grid.y >= 1 && l.grid.z >= 1 && l.grid.x <= 2147483647u && l.grid.y <= 65535u &&
                  l.grid.z <= 65535u && l.block.count() >= 1 && l.block.count() <= 1024 && l.block.z <= 64;
  if (!ok)
    throw std::invalid_argument(std::string(what) + ": launch grid (" + std::to_string(l.grid.x) + ", " +
                                std::to_string(l.grid.y) + ", " + std::to_string(l.grid.z) + ") of blocks (" +
                                std::to_string(l.block.x) + ", " + std::to_string(l.block.y) + ", " +
                                std::to_string(l.block.z) +
                                ") exceeds CUDA's limits (2^31 - 1 blocks along x, 65535 along y and z, 1024 threads "
                                "a block); split the domain over more ranks or use a smaller grid");
}

// ---- A box, one point per thread: x in blocks of `threads_x`, y in blocks of `threads_y`, one z per block row.
SPECWAVE_HD inline Launch box_launch(Int3 extent, int threads_x, int threads_y = 1) {
  Launch l;
  l.block = {unsigned(threads_x), unsigned(threads_y), 1};
  l.grid = {blocks_for(extent.x, threads_x), blocks_for(extent.y, threads_y), unsigned(extent.z)};
  return l;
}

// The point of the box [lo, lo + extent) that thread `t` of block `b` owns; false when it owns none.
SPECWAVE_HD inline bool box_point(Int3 lo, Int3 extent, Dim block_dim, Int3 b, Int3 t, Int3& p) {
  const int dx = b.x * int(block_dim.x) + t.x, dy = b.y * int(block_dim.y) + t.y, dz = b.z;
  if (dx >= extent.x || dy >= extent.y || dz >= extent.z) return false;
  p = {lo.x + dx, lo.y + dy, lo.z + dz};
  return true;
}

// Where the point (x, y, z) of the box's local coordinates goes in a dense buffer of the box (halo pack/unpack).
SPECWAVE_HD inline index_t box_buffer_index(Int3 extent, Int3 local) {
  return (index_t(local.z) * extent.y + local.y) * extent.x + local.x;
}

// ---- The boxes of a decomposed step: the shell (the points within width[axis][side] of each face, updated before
// the halo exchange) as six disjoint boxes (z slabs whole, y slabs between them, x slabs between those) and the
// interior box last; clamped so that a block thinner than two shells is all shell. Empty boxes have a zero extent.
struct Box {
  Int3 lo, extent;
};

inline void shell_boxes(Int3 n, const int (&width)[3][2], Box (&boxes)[7]) {
  const int z0 = width[0][0] < n.z ? width[0][0] : n.z, z1 = n.z - width[0][1] > z0 ? n.z - width[0][1] : z0;
  const int y0 = width[1][0] < n.y ? width[1][0] : n.y, y1 = n.y - width[1][1] > y0 ? n.y - width[1][1] : y0;
  const int x0 = width[2][0] < n.x ? width[2][0] : n.x, x1 = n.x - width[2][1] > x0 ? n.x - width[2][1] : x0;
  auto box = [](int xa, int xb, int ya, int yb, int za, int zb) {
    return Box{{xa, ya, za}, {xb - xa, yb - ya, zb - za}};
  };
  boxes[0] = box(0, n.x, 0, n.y, 0, z0);    // z low
  boxes[1] = box(0, n.x, 0, n.y, z1, n.z);  // z high
  boxes[2] = box(0, n.x, 0, y0, z0, z1);    // y low
  boxes[3] = box(0, n.x, y1, n.y, z0, z1);  // y high
  boxes[4] = box(0, x0, y0, y1, z0, z1);    // x low
  boxes[5] = box(x1, n.x, y0, y1, z0, z1);  // x high
  boxes[6] = box(x0, x1, y0, y1, z0, z1);   // interior
}

// The box b split by a region `inner` into b's part inside `inner` (boxes[6], possibly empty) and the rest of b as
// six disjoint boxes (shell_boxes of b, its widths the distances from b's faces to inner's, clamped to b): the
// tiled kernel takes the part of a box outside every CPML layer and the generic kernel the rest.
inline void split_box(const Box& b, const Box& inner, Box (&boxes)[7]) {
  const int lo[3] = {b.lo.z, b.lo.y, b.lo.x}, ext[3] = {b.extent.z, b.extent.y, b.extent.x};
  const int ilo[3] = {inner.lo.z, inner.lo.y, inner.lo.x}, iext[3] = {inner.extent.z, inner.extent.y, inner.extent.x};
  int width[3][2];
  for (int a = 0; a < 3; ++a) {
    auto clamp = [&](int w) { return w < 0 ? 0 : (w > ext[a] ? ext[a] : w); };
    width[a][0] = clamp(ilo[a] - lo[a]);
    width[a][1] = clamp((lo[a] + ext[a]) - (ilo[a] + iext[a]));
    if (iext[a] <= 0) width[a][0] = ext[a];  // an empty region: all of b is outside it
  }
  shell_boxes(b.extent, width, boxes);
  for (Box& x : boxes) {
    x.lo.x += b.lo.x;
    x.lo.y += b.lo.y;
    x.lo.z += b.lo.z;
  }
}

// ---- The 2.5D tiled update: a (BX, BY) tile of threads owns one (x, y) column and marches it along z over
// [z_begin, z_end) (z_per_block planes per block along z).
struct TileColumn {
  int x = 0, y = 0, z_begin = 0, z_end = 0;
  bool active = false;    // (x, y) is an interior column: the thread updates its points
  bool loadable = false;  // (x, y) is inside the padded array: the thread loads its column into the tile
};

// The tiled kernel's shape: threads along x and y (the block, at most max_tile_threads), planes per block along z,
// and rows per thread (p, 1 or 2: each thread updates the columns ty and ty + y of a tile p y rows high, twice the
// independent work between barriers), all chosen at run time (SPECWAVE_CUDA_TILE=32x8x8 or 32x8x8x2) so that one GPU
// run can sweep them without a rebuild; every shape gives the same arithmetic at every point. tile_shapes are the
// (x, y) that specwave-gpu-bench sweeps; any shape that check_tile_shape accepts runs.
struct TileShape {
  int x = 32, y = 8, z = 8, p = 1;  // the fp32 default (default_tile_shape)
  bool operator==(const TileShape& o) const { return x == o.x && y == o.y && z == o.z && p == o.p; }
};
inline constexpr int max_tile_threads = 512;  // the kernel's launch bounds
inline constexpr int max_tile_rows_per_thread = 2;
inline constexpr std::size_t max_tile_shared_bytes = 48 * 1024;
inline constexpr TileShape tile_shapes[] = {{32, 16, 32}, {32, 8, 32},  {64, 8, 32},
                                            {64, 4, 32},  {128, 4, 32}, {16, 16, 32}};

// The default shape of each precision (SPECWAVE_CUDA_TILE overrides it): the fastest of specwave-gpu-bench's sweep at
// 512^3, order 8, on an H200 (docs/gpu.md, 2026-12-04): fp32 32x8x8 (1.17 ms a step, 0.43 of the copy bandwidth);
// fp64 32x8x32 with two rows per thread (1.75 ms, 0.58), whose one-row shapes hold too many registers to keep the
// device busy.
inline TileShape default_tile_shape(std::size_t value_bytes) {
  return value_bytes == 8 ? TileShape{32, 8, 32, 2} : TileShape{32, 8, 8, 1};
}

inline std::string to_string(const TileShape& t) {
  return std::to_string(t.x) + "x" + std::to_string(t.y) + "x" + std::to_string(t.z) +
         (t.p != 1 ? "x" + std::to_string(t.p) : "");
}

// The tile's shared memory: two planes (double-buffered: one barrier a plane) of (p y + 2R) rows of x + 2R values.
inline std::size_t tile_shared_bytes(const TileShape& t, int radius, std::size_t value_bytes) {
  return 2 * std::size_t(t.p * t.y + 2 * radius) * std::size_t(t.x + 2 * radius) * value_bytes;
}

inline bool tile_shape_ok(const TileShape& t) {
  return t.x >= 1 && t.y >= 1 && t.x * t.y <= max_tile_threads && t.z >= 1 && t.z <= 4096 && t.p >= 1 &&
         t.p <= max_tile_rows_per_thread &&
         tile_shared_bytes(t, 8, 8) <= max_tile_shared_bytes;  // room for the widest stencil in fp64
}

inline std::string tile_shape_rule() {
  return "x and y >= 1 with x * y <= " + std::to_string(max_tile_threads) +
         " threads and 2 (p y + 16) (x + 16) 8 bytes <= 48 KiB of shared memory, z from 1 to 4096 planes per block, "
         "p (rows per thread) 1 or 2 (e.g. 32x8x8, the default, or 32x16x32x2)";
}

// Throws std::invalid_argument naming `what` and the shape when check_tile_shape's rule is broken.
inline void check_tile_shape(const TileShape& t, const std::string& what) {
  if (!tile_shape_ok(t))
    throw std::invalid_argument(what + ": tile shape " + to_string(t) + " is outside the rule: " + tile_shape_rule());
}

// "XxY", "XxYxZ" or "XxYxZxP" (z and p at their defaults when left out). Throws std::invalid_argument naming `what`
// (the setting), the text and the rule.
inline TileShape parse_tile_shape(const std::string& text, const std::string& what) {
  TileShape t;
  int x = 0, y = 0, z = t.z, p = t.p;
  // The whole text must be one of the three forms (%n: the characters read; unset if the form did not match).
  const int length = int(text.size());
  int used2 = -1, used3 = -1, used4 = -1;
  std::sscanf(text.c_str(), "%dx%d%n", &x, &y, &used2);
  std::sscanf(text.c_str(), "%*dx%*dx%d%n", &z, &used3);
  std::sscanf(text.c_str(), "%*dx%*dx%*dx%d%n", &p, &used4);
  const bool form = used2 == length || (used3 == length && used2 >= 0) || (used4 == length && used3 >= 0);
  if (used4 != length) p = t.p;
  if (used3 != length && used4 != length) z = t.z;
  if (!form || !tile_shape_ok({x, y, z, p}))
    throw std::invalid_argument(what + " = '" + text + "': give XxY, XxYxZ or XxYxZxP with " + tile_shape_rule());
  return {x, y, z, p};
}

// The tiled kernel's launch over a box of `extent` points: one block per (bx, by) tile of columns and z_per_block
// planes.
// With `rows` rows per thread a block's tile is rows * by columns high (tile_column with by * rows and the thread's
// row ty + r by, r < rows).
SPECWAVE_HD inline Launch tile_launch(Int3 extent, int bx, int by, int z_per_block, int rows = 1) {
  Launch l;
  l.block = {unsigned(bx), unsigned(by), 1};
  l.grid = {blocks_for(extent.x, bx), blocks_for(extent.y, by * rows), blocks_for(extent.z, z_per_block)};
  return l;
}

// The column of the box [lo, lo + extent) (interior coordinates of a grid of n points with `halo` ghost points
// a side) that thread t of block b owns, and its planes. `active`: inside the box (the thread updates it);
// `loadable`: inside the padded array (the thread loads its value into the tile, which its neighbours read).
SPECWAVE_HD inline TileColumn tile_column(Int3 lo, Int3 extent, Int3 n, int halo, int bx, int by, int z_per_block,
                                          Int3 b, Int3 t) {
  TileColumn c;
  const int dx = b.x * bx + t.x, dy = b.y * by + t.y, dz = b.z * z_per_block;
  c.x = lo.x + dx;
  c.y = lo.y + dy;
  c.z_begin = lo.z + dz;
  c.z_end = dz + z_per_block < extent.z ? c.z_begin + z_per_block : lo.z + extent.z;
  c.active = dx < extent.x && dy < extent.y;
  c.loadable = c.x < n.x + halo && c.y < n.y + halo;
  return c;
}

// The tile's halo in shared memory: a (by + 2R) x (bx + 2R) plane whose centre (rows and columns R .. R + b - 1)
// holds the block's own columns; the star stencil also reads the R rows above and below the centre (columns of the
// centre only) and the R columns left and right of it (rows of the centre only), 2R (bx + by) values, the corners
// never. Halo value h (0 <= h < tile_halo_count) goes to (row, column): the rows first, bx consecutive values at a
// time (coalesced loads), then the columns, 2R values of one row at a time. The threads of a block take h = t,
// t + threads, ... (t = their linear index).
SPECWAVE_HD inline int tile_halo_count(int bx, int by, int radius) { return 2 * radius * (bx + by); }

SPECWAVE_HD inline void tile_halo_slot(int bx, int by, int radius, int h, int& row, int& column) {
  const int rows = 2 * radius * bx;
  if (h < rows) {
    const int r = h / bx;
    row = r < radius ? r : r + by;
    column = radius + (h - r * bx);
  } else {
    const int k = h - rows, r = k / (2 * radius), c = k - r * (2 * radius);
    row = radius + r;
    column = c < radius ? c : c + bx;
  }
}

// ---- Face boxes flattened into one 1D launch (the CPML faces of a step): face f is the box
// [lo[f], lo[f] + extent[f]) and owns the blocks first_block[f] .. first_block[f + 1] - 1, each `threads`
// consecutive points of the face in x-fastest order. Index arithmetic inside a face is 32-bit: make_face_set()
// refuses a face of 2^31 points or more.
struct FaceSet {
  static constexpr int max_faces = 6;
  int count = 0, threads = 128;
  int axis[max_faces] = {}, side[max_faces] = {};
  Int3 lo[max_faces], extent[max_faces];
  std::int64_t first_block[max_faces + 1] = {};
  SPECWAVE_HD std::int64_t blocks() const { return first_block[count]; }
};

// Adds the face box [lo, lo + extent) of (axis, side); an empty box adds nothing.
inline void add_face(FaceSet& f, int axis, int side, Int3 lo, Int3 extent) {
  const std::int64_t points = std::int64_t(extent.x) * extent.y * extent.z;
  if (points == 0) return;
  if (f.count == FaceSet::max_faces) throw std::logic_error("launch::add_face: more than six faces");
  if (points >= (std::int64_t(1) << 31))
    throw std::invalid_argument("CPML face of " + std::to_string(points) +
                                " points: more than 2^31 - 1 points in one face; split the domain over more ranks");
  const int k = f.count++;
  f.axis[k] = axis;
  f.side[k] = side;
  f.lo[k] = lo;
  f.extent[k] = extent;
  f.first_block[k + 1] = f.first_block[k] + blocks_for(points, f.threads);
}

inline Launch face_launch(const FaceSet& f) {
  Launch l;
  l.block = {unsigned(f.threads), 1, 1};
  l.grid = {unsigned(f.blocks() > 0 ? f.blocks() : 1), 1, 1};
  return l;
}

// The face and the point that thread `thread` of block `block` owns; false when it owns none.
SPECWAVE_HD inline bool face_point(const FaceSet& f, std::int64_t block, int thread, int& face, Int3& p) {
  if (block >= f.blocks()) return false;
  int k = 0;
  while (k + 1 < f.count && block >= f.first_block[k + 1]) ++k;
  const Int3 e = f.extent[k];
  const unsigned local = unsigned(block - f.first_block[k]) * unsigned(f.threads) + unsigned(thread);
  const unsigned row = unsigned(e.x), plane = row * unsigned(e.y);
  if (local >= plane * unsigned(e.z)) return false;
  const unsigned z = local / plane, rest = local - z * plane, y = rest / row;
  face = k;
  p = {f.lo[k].x + int(rest - y * row), f.lo[k].y + int(y), f.lo[k].z + int(z)};
  return true;
}

// ---- The ghost planes above a free surface: value p of a padded z plane (plane values) and ghost plane k
// (1 .. halo), one launch of (ceil(plane / threads), halo) blocks.
SPECWAVE_HD inline Launch mirror_launch(index_t plane, int halo, int threads) {
  Launch l;
  l.block = {unsigned(threads), 1, 1};
  l.grid = {blocks_for(plane, threads), unsigned(halo), 1};
  return l;
}

SPECWAVE_HD inline bool mirror_point(index_t plane, Dim block_dim, Int3 b, Int3 t, index_t& p, int& k) {
  p = index_t(b.x) * block_dim.x + t.x;
  k = b.y + 1;
  return p < plane;
}

// ---- One thread per item (sources' target points, receivers' samples): item = global thread index.
SPECWAVE_HD inline Launch items_launch(index_t n, int threads) {
  Launch l;
  l.block = {unsigned(threads), 1, 1};
  l.grid = {blocks_for(n > 0 ? n : 1, threads), 1, 1};
  return l;
}

SPECWAVE_HD inline bool item_index(index_t n, Dim block_dim, Int3 b, Int3 t, index_t& item) {
  item = index_t(b.x) * block_dim.x + t.x;
  return item < n;
}

// ---- A grid-stride loop over [0, n): thread (b, t) takes start, start + step, ...; at least one block (n = 0
// launches one block that does nothing) and at most max_blocks.
SPECWAVE_HD inline Launch stride_launch(index_t n, int threads, unsigned max_blocks = 65535) {
  Launch l;
  const unsigned blocks = n > 0 ? blocks_for(n, threads) : 1;
  l.block = {unsigned(threads), 1, 1};
  l.grid = {blocks < max_blocks ? blocks : max_blocks, 1, 1};
  return l;
}
SPECWAVE_HD inline index_t stride_start(Dim block_dim, Int3 b, Int3 t) { return index_t(b.x) * block_dim.x + t.x; }
SPECWAVE_HD inline index_t stride_step(Dim grid, Dim block_dim) { return index_t(grid.x) * block_dim.x; }

// ---- The spectral kernels: `plane` values per z plane (ny * width, width = nx for real fields, nx/2 + 1 for half
// spectra) and nz planes; a (ceil(plane / threads), nz) grid, one value per thread.
struct PlanePoint {
  int x = 0, y = 0, z = 0;
  index_t k = 0;  // the value's index in the packed (nz, ny, width) array
};

SPECWAVE_HD inline Launch plane_launch(index_t plane, int nz, int threads) {
  Launch l;
  l.block = {unsigned(threads), 1, 1};
  l.grid = {blocks_for(plane, threads), unsigned(nz), 1};
  return l;
}

SPECWAVE_HD inline bool plane_point(int width, int plane, Dim block_dim, Int3 b, Int3 t, PlanePoint& q) {
  const int p = b.x * int(block_dim.x) + t.x;
  if (p >= plane) return false;
  q.z = b.y;
  q.y = p / width;
  q.x = p - q.y * width;
  q.k = index_t(q.z) * plane + p;
  return true;
}

}  // namespace specwave::launch
