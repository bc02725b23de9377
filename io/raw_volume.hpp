#pragma once
// A velocity model as a raw binary file (docs/case-file.md, model.format = "raw"): no header, the case file gives
// the layout. Values are converted to float32 in (z, y, x) C order (x fastest), as specwave holds a model.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace specwave::io {

struct RawLayout {
  std::array<std::int64_t, 3> shape{};  // (nz, ny, nx) of the file's grid
  bool float64 = false;                 // else float32
  bool big_endian = false;              // else little-endian
  // The storage order: the axes (0 z, 1 y, 2 x) from the slowest-varying to the fastest. {0, 1, 2}: C order, x
  // fastest (specwave's own); {2, 1, 0}: z fastest (Fortran order of (z, y, x), e.g. a cube stored trace by trace).
  std::array<int, 3> order{0, 1, 2};
};

// Checks that the file is a regular file of exactly nz ny nx values of the layout's type (errors, exit 4, name the
// file, its size and the size the layout needs), then reads it.
std::vector<float> read_raw_volume(const std::string& path, const RawLayout& layout);

}  // namespace specwave::io
