// The restart files' checksum (io/checksum.hpp): deterministic, sensitive to every bit, to the length and to the
// order of the bytes, at every length around its 32-byte blocks.
#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "io/checksum.hpp"

using namespace specwave;

TEST_CASE("checksum64: every single-bit flip, length and swap of two bytes changes it") {
  std::vector<unsigned char> data(131);
  std::uint32_t state = 12345;
  for (auto& b : data) b = static_cast<unsigned char>((state = state * 1664525u + 1013904223u) >> 24);
  for (std::size_t n : {0, 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 100, 131}) {
    CAPTURE(n);
    const std::uint64_t base = io::checksum64(data.data(), n);
    CHECK(io::checksum64(data.data(), n) == base);  // deterministic
    CHECK(io::checksum_hex(base).size() == 16);
    long unchanged = 0;
    for (std::size_t bit = 0; bit < 8 * n; ++bit) {
      data[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
      unchanged += io::checksum64(data.data(), n) == base;
      data[bit / 8] ^= static_cast<unsigned char>(1u << (bit % 8));
    }
    CHECK(unchanged == 0);
    if (n >= 2 && data[0] != data[n - 1]) {
      std::swap(data[0], data[n - 1]);
      CHECK(io::checksum64(data.data(), n) != base);
      std::swap(data[0], data[n - 1]);
    }
  }
  // Zeros of different lengths differ (the length is mixed in); the seed changes it; combining is ordered.
  const std::vector<unsigned char> zeros(64, 0);
  std::set<std::uint64_t> seen;
  for (std::size_t n = 0; n <= 64; ++n) seen.insert(io::checksum64(zeros.data(), n));
  CHECK(seen.size() == 65);
  CHECK(io::checksum64(data.data(), 40, 1) != io::checksum64(data.data(), 40, 0));
  const std::uint64_t a = io::checksum64(data.data(), 10), b = io::checksum64(data.data() + 10, 10);
  CHECK(io::combine_checksums(a, b) != io::combine_checksums(b, a));
}

TEST_CASE("checksum64 of an empty array: null data is an empty range like any other (no pointer arithmetic on null)") {
  // An empty std::vector's data() may be null: a checkpoint of a propagator with an empty state array passes it.
  const std::vector<unsigned char> bytes(40, 7);
  const std::uint64_t empty = specwave::io::checksum64(bytes.data(), 0);
  CHECK(specwave::io::checksum64(nullptr, 0) == empty);
  CHECK(specwave::io::checksum64(nullptr, 0, 5) == specwave::io::checksum64(bytes.data(), 0, 5));
  CHECK(specwave::io::checksum64(bytes.data(), 40) != empty);
}
