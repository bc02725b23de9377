#include "io/raw_volume.hpp"

#include <fmt/format.h>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "io/file_kind.hpp"
#include "solver/case/errors.hpp"

namespace specwave::io {

std::vector<float> read_raw_volume(const std::string& path, const RawLayout& layout) {
  const auto bad = [&](const std::string& what) { throw Error(ExitCode::input_error, path + ": " + what); };
  if (const auto kind = not_a_regular_file(path)) bad("is " + *kind + ", not a regular file; give a raw binary file");
  const std::int64_t bytes_per_value = layout.float64 ? 8 : 4;
  std::int64_t count = 1;
  for (const std::int64_t n : layout.shape) {
    if (n < 1 || count > std::numeric_limits<std::int64_t>::max() / bytes_per_value / n)
      bad(fmt::format("shape ({}, {}, {}) is not a valid size", layout.shape[0], layout.shape[1], layout.shape[2]));
    count *= n;
  }
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) bad("cannot read its size (" + ec.message() + "); check the path");
  const std::int64_t need = count * bytes_per_value;
  if (std::int64_t(size) != need)
    bad(
        fmt::format("holds {} bytes, the layout {} x {} x {} {} needs {} ({}); check model.shape and model.dtype "
                    "(a file with a header is not raw: strip it, or convert the file to HDF5)",
                    size, layout.shape[0], layout.shape[1], layout.shape[2], layout.float64 ? "float64" : "float32",
                    need, std::int64_t(size) > need ? "the file is longer" : "the file is shorter"));
  std::ifstream in(path, std::ios::binary);
  std::vector<unsigned char> raw(std::size_t(need), 0);
  if (!in || !in.read(reinterpret_cast<char*>(raw.data()), std::streamsize(need)))
    bad("cannot be read (permissions, or it changed while read)");
  const bool swap = layout.big_endian != (std::endian::native == std::endian::big);
  const auto value_at = [&](std::size_t i) -> float {
    unsigned char b[8];
    std::memcpy(b, raw.data() + i * std::size_t(bytes_per_value), std::size_t(bytes_per_value));
    if (swap)
      for (std::int64_t k = 0; k < bytes_per_value / 2; ++k) std::swap(b[k], b[bytes_per_value - 1 - k]);
    if (layout.float64) {
      double d;
      std::memcpy(&d, b, 8);
      return float(d);
    }
    float f;
    std::memcpy(&f, b, 4);
    return f;
  };
  // The file's index of grid point (z, y, x): the sum of each coordinate times its axis' stride in the file.
  std::array<std::size_t, 3> stride{};
  std::size_t step = 1;
  for (int k = 2; k >= 0; --k) {
    stride[std::size_t(layout.order[std::size_t(k)])] = step;
    step *= std::size_t(layout.shape[std::size_t(layout.order[std::size_t(k)])]);
  }
  const std::size_t nz = std::size_t(layout.shape[0]), ny = std::size_t(layout.shape[1]),
                    nx = std::size_t(layout.shape[2]);
  std::vector<float> out(static_cast<std::size_t>(count));
  for (std::size_t z = 0; z < nz; ++z)
    for (std::size_t y = 0; y < ny; ++y)
      for (std::size_t x = 0; x < nx; ++x)
        out[(z * ny + y) * nx + x] = value_at(z * stride[0] + y * stride[1] + x * stride[2]);
  return out;
}

}  // namespace specwave::io
