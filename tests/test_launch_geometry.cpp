// The launch geometry of every CUDA kernel (kernels/launch_geometry.hpp), run on the CPU: each launch is emulated
// block by block and thread by thread over awkward sizes (1, primes, one below, at and one past a tile), and every
// point of the kernel's box must be owned by exactly one thread, with nothing outside the box touched. These are
// the functions the kernels call, so an index error shows here before a GPU run spends its minutes on it.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cuda/cublas_library.hpp"
#include "kernels/cuda/device.hpp"
#include "kernels/launch_geometry.hpp"
#include "solver/parallel/decomposition.hpp"
#include "solver/propagators/fdtd/fdtd_halo.hpp"

using namespace specwave;
using launch::Dim;
using launch::Int3;
using launch::Launch;

namespace {

// Calls f(block, thread) for every thread of the launch, as the device would (in some order).
template <class F>
void for_each_thread(const Launch& l, F&& f) {
  for (unsigned bz = 0; bz < l.grid.z; ++bz)
    for (unsigned by = 0; by < l.grid.y; ++by)
      for (unsigned bx = 0; bx < l.grid.x; ++bx)
        for (unsigned tz = 0; tz < l.block.z; ++tz)
          for (unsigned ty = 0; ty < l.block.y; ++ty)
            for (unsigned tx = 0; tx < l.block.x; ++tx)
              f(Int3{int(bx), int(by), int(bz)}, Int3{int(tx), int(ty), int(tz)});
}

// Counts how often each point of a box is owned; points outside are counted apart.
struct Coverage {
  Int3 lo, extent;
  std::vector<int> count;
  long outside = 0;
  Coverage(Int3 lo_, Int3 extent_) : lo(lo_), extent(extent_), count(std::size_t(extent_.x) * extent_.y * extent_.z) {}
  void own(Int3 p) {
    const Int3 d{p.x - lo.x, p.y - lo.y, p.z - lo.z};
    if (d.x < 0 || d.y < 0 || d.z < 0 || d.x >= extent.x || d.y >= extent.y || d.z >= extent.z) {
      ++outside;
      return;
    }
    ++count[(std::size_t(d.z) * extent.y + d.y) * extent.x + d.x];
  }
  // Every point exactly once and none outside.
  bool exact() const {
    if (outside != 0) return false;
    for (int c : count)
      if (c != 1) return false;
    return true;
  }
};

const int awkward[] = {1, 2, 3, 7, 31, 32, 33, 63, 64, 65, 127, 129};

}  // namespace

TEST_CASE("launch geometry: a box, one point per thread (update, adjoint, gradient, unpad, pack/unpack)") {
  for (const auto& threads : {std::pair{64, 4}, std::pair{128, 1}, std::pair{32, 8}})
    for (int nx : awkward)
      for (int ny : {1, 3, 5, 17})
        for (int nz : {1, 2, 7})
          for (const Int3 lo : {Int3{0, 0, 0}, Int3{3, -2, 5}}) {
            const int tx = threads.first, ty = threads.second;  // plain variables: clang 14 cannot capture bindings
            CAPTURE(tx);
            CAPTURE(nx);
            CAPTURE(ny);
            CAPTURE(nz);
            const Int3 extent{nx, ny, nz};
            const Launch l = launch::box_launch(extent, tx, ty);
            REQUIRE_NOTHROW(launch::check_launch(l, "box"));
            Coverage cover(lo, extent);
            std::vector<int> buffer(std::size_t(nx) * ny * nz);
            long bad_buffer = 0;
            for_each_thread(l, [&](Int3 b, Int3 t) {
              Int3 p;
              if (!launch::box_point(lo, extent, l.block, b, t, p)) return;
              cover.own(p);
              const index_t j = launch::box_buffer_index(extent, {p.x - lo.x, p.y - lo.y, p.z - lo.z});
              if (j < 0 || j >= index_t(buffer.size()))
                ++bad_buffer;
              else
                ++buffer[std::size_t(j)];
            });
            CHECK(cover.exact());
            CHECK(bad_buffer == 0);
            CHECK(std::count(buffer.begin(), buffer.end(), 1) == long(buffer.size()));
          }
}

TEST_CASE("launch geometry: the shell boxes and the interior box partition a decomposed block") {
  for (int n : {1, 2, 5, 9, 17})
    for (int w : {0, 1, 4})
      for (int mask = 0; mask < 64; mask += 7) {  // which of the six faces have a neighbour
        CAPTURE(n);
        CAPTURE(w);
        CAPTURE(mask);
        int width[3][2];
        for (int a = 0; a < 3; ++a)
          for (int s = 0; s < 2; ++s) width[a][s] = (mask >> (2 * a + s)) & 1 ? w : 0;
        const Int3 size{n + 2, n, n + 1};
        launch::Box boxes[7];
        launch::shell_boxes(size, width, boxes);
        Coverage all({0, 0, 0}, size);
        long shell_miss = 0;
        for (int b = 0; b < 7; ++b) {
          const launch::Box& box = boxes[b];
          if (box.extent.x <= 0 || box.extent.y <= 0 || box.extent.z <= 0) continue;
          const Launch l = launch::box_launch(box.extent, 64, 4);
          for_each_thread(l, [&](Int3 bi, Int3 t) {
            Int3 p;
            if (!launch::box_point(box.lo, box.extent, l.block, bi, t, p)) return;
            all.own(p);
            // A point of the six shell boxes is within a shell; an interior point is not.
            const bool in_shell = p.z < width[0][0] || p.z >= size.z - width[0][1] || p.y < width[1][0] ||
                                  p.y >= size.y - width[1][1] || p.x < width[2][0] || p.x >= size.x - width[2][1];
            if (in_shell != (b < 6)) ++shell_miss;
          });
        }
        CHECK(all.exact());
        CHECK(shell_miss == 0);
      }
}

TEST_CASE("launch geometry: split_box: a box's part inside a region (tiled) and the rest (six boxes) partition it") {
  // Boxes and regions of awkward sizes and offsets, the region inside, overlapping, touching, outside or empty.
  const int sizes[] = {1, 2, 5, 9};
  long cases = 0;
  for (int n : sizes)
    for (int off : {0, 1, 3})
      for (int rlo : {-2, 0, 1, 4, 12})
        for (int rext : {0, 1, 3, 20}) {
          CAPTURE(n);
          CAPTURE(off);
          CAPTURE(rlo);
          CAPTURE(rext);
          const launch::Box b{{off, off + 1, off + 2}, {n + 1, n, n + 2}};
          const launch::Box region{{rlo, rlo + 1, rlo}, {rext, rext + 2, rext + 1}};
          launch::Box parts[7];
          launch::split_box(b, region, parts);
          Coverage cover(b.lo, b.extent);
          long misplaced = 0;
          for (int k = 0; k < 7; ++k) {
            const launch::Box& part = parts[k];
            if (part.extent.x <= 0 || part.extent.y <= 0 || part.extent.z <= 0) continue;
            for (int z = part.lo.z; z < part.lo.z + part.extent.z; ++z)
              for (int y = part.lo.y; y < part.lo.y + part.extent.y; ++y)
                for (int x = part.lo.x; x < part.lo.x + part.extent.x; ++x) {
                  cover.own({x, y, z});
                  const bool inside = x >= region.lo.x && x < region.lo.x + region.extent.x && y >= region.lo.y &&
                                      y < region.lo.y + region.extent.y && z >= region.lo.z &&
                                      z < region.lo.z + region.extent.z;
                  if (inside != (k == 6)) ++misplaced;  // parts[6] is exactly the points inside the region
                }
          }
          CHECK(cover.exact());
          CHECK(misplaced == 0);
          ++cases;
        }
  CHECK(cases == 4 * 3 * 5 * 4);
}

TEST_CASE("launch geometry: the tile's halo slots fill the star halo once, never the centre or the corners") {
  for (int R : {1, 2, 4, 8})
    for (const auto& shape :
         {std::pair{32, 16}, std::pair{64, 4}, std::pair{4, 64}, std::pair{48, 10}, std::pair{1, 1}, std::pair{3, 7}}) {
      // Plain names, not structured bindings: clang 14 cannot capture those in CAPTURE's lambda.
      const int bx = shape.first, by = shape.second;
      CAPTURE(R);
      CAPTURE(bx);
      CAPTURE(by);
      const int pitch = bx + 2 * R, rows = by + 2 * R;
      std::vector<int> count(std::size_t(pitch) * rows, 0);
      long outside = 0;
      for (int h = 0; h < launch::tile_halo_count(bx, by, R); ++h) {
        int row = -1, col = -1;
        launch::tile_halo_slot(bx, by, R, h, row, col);
        if (row < 0 || row >= rows || col < 0 || col >= pitch)
          ++outside;
        else
          ++count[std::size_t(row) * pitch + col];
      }
      CHECK(outside == 0);
      long wrong = 0;
      for (int row = 0; row < rows; ++row)
        for (int col = 0; col < pitch; ++col) {
          const bool centre_rows = row >= R && row < R + by, centre_cols = col >= R && col < R + bx;
          const bool star_halo = centre_rows != centre_cols;  // above/below the centre, or left/right of it
          if (count[std::size_t(row) * pitch + col] != (star_halo ? 1 : 0)) ++wrong;
        }
      CHECK(wrong == 0);
    }
}

TEST_CASE("launch geometry: the tiled kernel over a box owns each of its points once; loads stay in the array") {
  // A box inside a grid (the layer-free part of a CPML grid, or of a decomposed block's interior), awkward sizes.
  for (const auto& shape : {std::array{32, 16, 32, 1}, std::array{8, 4, 5, 1}, std::array{48, 10, 7, 1},
                            std::array{32, 8, 8, 2}, std::array{8, 3, 5, 2}}) {
    const int bx = shape[0], by = shape[1], zpb = shape[2], rows = shape[3];  // no structured bindings (see above)
    for (int R : {1, 4, 8})
      for (const Int3 n : {Int3{33, 17, 9}, Int3{7, 5, 40}, Int3{65, 3, 4}})
        for (const Int3 lo : {Int3{0, 0, 0}, Int3{3, 1, 2}, Int3{5, 2, 1}}) {
          const Int3 extent{n.x - lo.x - 1 > 0 ? n.x - lo.x - 1 : 1, n.y - lo.y, n.z - lo.z - (n.z > 4 ? 2 : 0)};
          CAPTURE(bx);
          CAPTURE(R);
          CAPTURE(n.x);
          CAPTURE(lo.x);
          CAPTURE(rows);
          const Launch l = launch::tile_launch(extent, bx, by, zpb, rows);
          REQUIRE_NOTHROW(launch::check_launch(l, "tile"));
          Coverage cover(lo, extent);
          long bad = 0;
          // Each thread owns `rows` columns, ty + r by of a tile rows * by high (the kernel's rows per thread).
          for_each_thread(l, [&](Int3 b, Int3 thread) {
            for (int r = 0; r < rows; ++r) {
              const Int3 t{thread.x, thread.y + r * by, 0};
              const launch::TileColumn c = launch::tile_column(lo, extent, n, R, bx, by * rows, zpb, b, t);
              if (c.z_begin >= c.z_end) ++bad;
              if (c.active && !c.loadable) ++bad;
              if (c.loadable && (c.x >= n.x + R || c.y >= n.y + R)) ++bad;
              // The tile's origin and every halo load lie in the padded array (x, y >= -R) when guarded as the kernel
              // guards them (x < nx + R, y < ny + R).
              if (c.x - t.x - R < -R || c.y - t.y - R < -R) ++bad;
              if (c.z_begin - R < -R || c.z_end - 1 + R > n.z - 1 + R) ++bad;
              if (!c.active) continue;
              for (int z = c.z_begin; z < c.z_end; ++z) cover.own({c.x, c.y, z});
            }
          });
          CHECK(cover.exact());
          CHECK(bad == 0);
        }
  }
}

TEST_CASE("launch geometry: the halo faces' pack and unpack boxes (decomposed runs)") {
  // Decomposed blocks are never thinner than the halo radius (check_decomposition refuses them).
  for (int n : {1, 3, 4, 8, 13})
    for (int R : {1, 4}) {
      if (n < R) continue;
      CAPTURE(n);
      CAPTURE(R);
      const FieldLayout L{n + 1, n, n + 2, R};
      Block block;
      for (int a = 0; a < 3; ++a) block.neighbour[a][0] = block.neighbour[a][1] = 1;
      const std::vector<HaloFace> faces = halo_faces(block, L);
      REQUIRE(faces.size() == 6);
      // Every ghost point next to a face (not edges or corners: the stencil is a cross) is received exactly once;
      // every sent point is an owned point.
      std::map<std::tuple<int, int, int>, int> received;
      long sent_outside = 0, received_inside = 0;
      for (const HaloFace& f : faces)
        for (int dir = 0; dir < 2; ++dir) {
          const FieldBox& fb = dir == 0 ? f.send : f.receive;
          const Int3 lo{fb.lo[2], fb.lo[1], fb.lo[0]}, extent{fb.extent[2], fb.extent[1], fb.extent[0]};
          const Launch l = launch::box_launch(extent, 128);
          REQUIRE_NOTHROW(launch::check_launch(l, "halo"));
          Coverage cover(lo, extent);
          for_each_thread(l, [&](Int3 b, Int3 t) {
            Int3 q;
            if (!launch::box_point(Int3{}, extent, l.block, b, t, q)) return;
            const Int3 p{lo.x + q.x, lo.y + q.y, lo.z + q.z};
            cover.own(p);
            const bool inside = p.x >= 0 && p.x < L.nx && p.y >= 0 && p.y < L.ny && p.z >= 0 && p.z < L.nz;
            if (dir == 0 && !inside) ++sent_outside;
            if (dir == 1) {
              if (inside) ++received_inside;
              ++received[{p.z, p.y, p.x}];
            }
          });
          CHECK(cover.exact());
        }
      CHECK(sent_outside == 0);
      CHECK(received_inside == 0);
      const long face_ghosts = 2L * R * (long(L.ny) * L.nx + long(L.nz) * L.nx + long(L.nz) * L.ny);
      CHECK(long(received.size()) == face_ghosts);
      for (const auto& [point, count] : received) CHECK(count == 1);
    }
}

TEST_CASE("launch geometry: the 2.5D tile columns own each interior point once; loads stay in the padded array") {
  std::vector<std::tuple<int, int, int>> shapes = {{8, 4, 5}, {4, 2, 1}};  // and every compiled shape, at two depths
  for (const launch::TileShape& t : launch::tile_shapes) {
    shapes.emplace_back(t.x, t.y, t.z);
    shapes.emplace_back(t.x, t.y, 7);
  }
  for (const auto& shape : shapes)
    for (int R : {1, 4, 8})
      for (int nx : {1, 7, 31, 33, 65})
        for (int ny : {1, 5, 16, 17})
          for (int nz : {1, 4, 33}) {
            const int bx = std::get<0>(shape), by = std::get<1>(shape), zpb = std::get<2>(shape);  // clang 14: no
            // lambda captures of structured bindings
            CAPTURE(bx);
            CAPTURE(R);
            CAPTURE(nx);
            CAPTURE(ny);
            CAPTURE(nz);
            const Int3 n{nx, ny, nz};
            const Launch l = launch::tile_launch(n, bx, by, zpb);
            REQUIRE_NOTHROW(launch::check_launch(l, "tile"));
            Coverage cover({0, 0, 0}, n);
            long bad = 0;
            for_each_thread(l, [&](Int3 b, Int3 t) {
              const launch::TileColumn c =
                  launch::tile_column({0, 0, 0}, n, n, R, bx, by, zpb, b, t);  // the whole grid
              if (c.z_begin >= c.z_end) ++bad;                                 // a block along z with no plane
              if (c.active && !c.loadable) ++bad;                              // updates what it did not load
              if (c.loadable && (c.x >= nx + R || c.y >= ny + R)) ++bad;       // loads outside the padded array
              if (!c.active) return;
              for (int z = c.z_begin; z < c.z_end; ++z) cover.own({c.x, c.y, z});
            });
            CHECK(cover.exact());
            CHECK(bad == 0);
          }
}

TEST_CASE("launch geometry: the CPML faces flattened into one launch own each face point once") {
  for (int threads : {128, 32})
    for (int n : {1, 3, 7, 31, 33})
      for (int W : {1, 3, 10}) {
        CAPTURE(threads);
        CAPTURE(n);
        CAPTURE(W);
        const Int3 size{n + 2, n, n + 5};
        const int ext_zyx[3] = {size.z, size.y, size.x};
        launch::FaceSet faces;
        faces.threads = threads;
        std::vector<Coverage> cover;
        for (int axis = 0; axis < 3; ++axis)
          for (int side = 0; side < 2; ++side) {
            const int w = std::min(W, ext_zyx[axis]);
            int lo[3] = {0, 0, 0}, ext[3] = {size.z, size.y, size.x};
            lo[axis] = side == 0 ? 0 : ext_zyx[axis] - w;
            ext[axis] = w;
            const Int3 lo3{lo[2], lo[1], lo[0]}, ext3{ext[2], ext[1], ext[0]};
            launch::add_face(faces, axis, side, lo3, ext3);
            cover.emplace_back(lo3, ext3);
          }
        REQUIRE(faces.count == 6);
        const Launch l = launch::face_launch(faces);
        REQUIRE_NOTHROW(launch::check_launch(l, "faces"));
        for_each_thread(l, [&](Int3 b, Int3 t) {
          int f;
          Int3 p;
          if (launch::face_point(faces, b.x, t.x, f, p)) cover[std::size_t(f)].own(p);
        });
        for (int f = 0; f < 6; ++f) {
          CAPTURE(f);
          CHECK(faces.axis[f] == f / 2);
          CHECK(faces.side[f] == f % 2);
          CHECK(cover[std::size_t(f)].exact());
        }
      }
  // An empty face adds nothing; a face of 2^31 points or more is refused (32-bit arithmetic inside a face).
  launch::FaceSet faces;
  launch::add_face(faces, 0, 0, {0, 0, 0}, {5, 0, 3});
  CHECK(faces.count == 0);
  CHECK(faces.blocks() == 0);
  CHECK_THROWS_AS(launch::add_face(faces, 0, 0, {0, 0, 0}, {2048, 2048, 512}), std::invalid_argument);
  CHECK_NOTHROW(launch::add_face(faces, 0, 0, {0, 0, 0}, {2048, 2048, 511}));
}

TEST_CASE("launch geometry: the free-surface ghost planes, the point gathers and the grid-stride loops") {
  for (index_t plane : {1, 255, 256, 257, 1000})
    for (int halo : {1, 4, 8}) {
      const Launch l = launch::mirror_launch(plane, halo, 256);
      REQUIRE_NOTHROW(launch::check_launch(l, "mirror"));
      Coverage cover({0, 1, 0}, {int(plane), halo, 1});
      for_each_thread(l, [&](Int3 b, Int3 t) {
        index_t p;
        int k;
        if (launch::mirror_point(plane, l.block, b, t, p, k)) cover.own({int(p), k, 0});
      });
      CHECK(cover.exact());
    }
  // Sources' target points and receivers' samples: one item per thread.
  for (index_t n : {1, 127, 128, 129, 1000}) {
    const Launch l = launch::items_launch(n, 128);
    Coverage cover({0, 0, 0}, {int(n), 1, 1});
    for_each_thread(l, [&](Int3 b, Int3 t) {
      index_t item;
      if (launch::item_index(n, l.block, b, t, item)) cover.own({int(item), 0, 0});
    });
    CHECK(cover.exact());
  }
  // Grid-stride loops (vector operations, smoothing, field statistics), with the block count capped.
  for (index_t n : {0, 1, 31, 32, 33, 1000, 4099})
    for (unsigned cap : {1u, 7u, 65535u}) {
      CAPTURE(n);
      CAPTURE(cap);
      const Launch l = launch::stride_launch(n, 32, cap);
      REQUIRE_NOTHROW(launch::check_launch(l, "stride"));
      CHECK(l.grid.x <= cap);
      std::vector<int> count(static_cast<std::size_t>(n));
      for_each_thread(l, [&](Int3 b, Int3 t) {
        const index_t step = launch::stride_step(l.grid, l.block);
        for (index_t i = launch::stride_start(l.block, b, t); i < n; i += step) ++count[std::size_t(i)];
      });
      CHECK(std::count(count.begin(), count.end(), 1) == long(n));
    }
}

TEST_CASE("launch geometry: the spectral kernels' real planes and half spectra") {
  for (int nx : {1, 2, 7, 16, 33})
    for (int ny : {1, 3, 8})
      for (int nz : {1, 5})
        for (bool half : {false, true}) {
          CAPTURE(nx);
          CAPTURE(ny);
          CAPTURE(nz);
          CAPTURE(half);
          const int width = half ? nx / 2 + 1 : nx;
          const int plane = ny * width;
          const Launch l = launch::plane_launch(plane, nz, 256);
          REQUIRE_NOTHROW(launch::check_launch(l, "plane"));
          Coverage cover({0, 0, 0}, {width, ny, nz});
          long bad_index = 0;
          for_each_thread(l, [&](Int3 b, Int3 t) {
            launch::PlanePoint q;
            if (!launch::plane_point(width, plane, l.block, b, t, q)) return;
            cover.own({q.x, q.y, q.z});
            if (q.k != (index_t(q.z) * ny + q.y) * width + q.x) ++bad_index;
          });
          CHECK(cover.exact());
          CHECK(bad_index == 0);
        }
}

TEST_CASE("launch geometry: launches beyond CUDA's limits are refused with the kernel's name") {
  CHECK_NOTHROW(launch::check_launch(launch::box_launch({512, 512, 512}, 64, 4), "update"));
  CHECK_THROWS_WITH_AS(launch::check_launch(launch::box_launch({64, 64, 65536}, 64, 4), "cuda::fdtd_step (update)"),
                       doctest::Contains("cuda::fdtd_step (update)"), std::invalid_argument);
  CHECK_THROWS_AS(launch::check_launch(launch::box_launch({64, 65536 * 4, 1}, 64, 4), "y"), std::invalid_argument);
  CHECK_THROWS_AS(launch::check_launch(launch::box_launch({64, 1, 1}, 2048, 1), "threads"), std::invalid_argument);
  CHECK_THROWS_AS(launch::check_launch(launch::box_launch({0, 1, 1}, 64, 1), "empty"), std::invalid_argument);
}

TEST_CASE("launch geometry: SPECWAVE_CUDA_TILE's shapes are parsed, and a wrong one refused with the rule") {
  for (const launch::TileShape& t : launch::tile_shapes) CHECK(launch::tile_shape_ok(t));
  CHECK(launch::tile_shared_bytes({32, 16, 32}, 4, 4) == std::size_t(2 * 24 * 40 * 4));  // two planes
  CHECK_THROWS_WITH_AS(launch::check_tile_shape({64, 16, 32}, "cuda::fdtd_step"),
                       doctest::Contains("cuda::fdtd_step: tile shape 64x16x32 is outside the rule"),
                       std::invalid_argument);
  CHECK(launch::parse_tile_shape("32x16x32", "T") == launch::TileShape{32, 16, 32});
  CHECK(launch::parse_tile_shape("64x4", "T") == launch::TileShape{64, 4, launch::TileShape{}.z});
  CHECK(launch::parse_tile_shape("128x4x1", "T") == launch::TileShape{128, 4, 1});
  for (const launch::TileShape& t : launch::tile_shapes)
    CHECK(launch::parse_tile_shape(launch::to_string(t), "T") == t);
  CHECK(launch::parse_tile_shape("48x10x3", "T") == launch::TileShape{48, 10, 3});     // any shape within the rule
  CHECK(launch::parse_tile_shape("32x8x8x2", "T") == launch::TileShape{32, 8, 8, 2});  // two rows per thread
  CHECK(launch::to_string(launch::TileShape{32, 8, 8, 2}) == "32x8x8x2");
  CHECK(launch::to_string(launch::TileShape{32, 8, 8, 1}) == "32x8x8");
  CHECK(launch::tile_shared_bytes({32, 8, 8, 2}, 4, 4) == std::size_t(2 * 24 * 40 * 4));
  CHECK(launch::tile_shape_ok(launch::default_tile_shape(4)));
  CHECK(launch::tile_shape_ok(launch::default_tile_shape(8)));
  CHECK(launch::default_tile_shape(8) == launch::TileShape{32, 8, 32, 2});
  for (const char* bad : {"", "32", "0x16", "32x32", "1024x1", "32x16x0", "32x16x5000", "32x16x8x", "32x16x8q", "axb",
                          "500x1", "32x8x8x3", "32x8x8x0", "32x8x8x2x1"}) {
    CAPTURE(bad);
    const std::string expected =
        "SPECWAVE_CUDA_TILE = '" + std::string(bad) + "': give XxY, XxYxZ or XxYxZxP with x and y";
    CHECK_THROWS_WITH_AS(launch::parse_tile_shape(bad, "SPECWAVE_CUDA_TILE"), doctest::Contains(expected.c_str()),
                         std::invalid_argument);
  }
}

// cuBLAS is opened when first used, not linked (kernels/cuda/cublas_library.hpp): linking it cost every process
// about 0.3 s of start-up. No device is needed to open it and resolve its functions.
TEST_CASE("cuBLAS is opened at run time, not at start-up, with every function the optimiser calls") {
  const auto cublas_mapped = [] {
    std::ifstream maps("/proc/self/maps");
    const std::string text((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
    return text.find("libcublas") != std::string::npos;
  };
  CHECK_FALSE(cublas_mapped());  // not loaded with the program
#if SPECWAVE_HAVE_CUDA
  CHECK(cuda::cublas_library_problem() == "");
  CHECK(cuda::cublas_library_name().find("libcublas.so.") != std::string::npos);
  CHECK(cublas_mapped());
#else
  CHECK(cuda::cublas_library_problem() == cuda::no_cuda_backend);
  CHECK(cuda::cublas_library_name().empty());
  CHECK_FALSE(cublas_mapped());
#endif
}
