#include "io/checksum.hpp"

#include <fmt/format.h>

#include <cstring>

namespace specwave::io {
namespace {

constexpr std::uint64_t k1 = 0x9E3779B185EBCA87ull, k2 = 0xC2B2AE3D27D4EB4Full, k3 = 0x165667B19E3779F9ull,
                        k4 = 0x85EBCA77C2B2AE63ull, k5 = 0x27D4EB2F165667C5ull;

inline std::uint64_t rotl(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline std::uint64_t load64(const unsigned char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;  // little-endian machines (x86-64, aarch64): the checksum of the same bytes everywhere
}
inline std::uint64_t lane(std::uint64_t acc, std::uint64_t input) { return rotl(acc + input * k2, 31) * k1; }
inline std::uint64_t merge(std::uint64_t h, std::uint64_t acc) { return (h ^ lane(0, acc)) * k1 + k4; }
inline std::uint64_t avalanche(std::uint64_t h) {
  h ^= h >> 33;
  h *= k2;
  h ^= h >> 29;
  h *= k3;
  return h ^ (h >> 32);
}

}  // namespace

std::uint64_t checksum64(const void* data, std::size_t bytes, std::uint64_t seed) {
  const auto* p = static_cast<const unsigned char*>(data);
  const unsigned char* const end = p + bytes;
  std::uint64_t h;
  if (bytes >= 32) {
    std::uint64_t a = seed + k1 + k2, b = seed + k2, c = seed, d = seed - k1;
    for (; end - p >= 32; p += 32) {  // differences, not p + 32: p is null for an empty array
      a = lane(a, load64(p));
      b = lane(b, load64(p + 8));
      c = lane(c, load64(p + 16));
      d = lane(d, load64(p + 24));
    }
    h = rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18);
    h = merge(merge(merge(merge(h, a), b), c), d);
  } else {
    h = seed + k5;
  }
  h += std::uint64_t(bytes);
  for (; end - p >= 8; p += 8) h = rotl(h ^ lane(0, load64(p)), 27) * k1 + k4;
  for (; p < end; ++p) h = rotl(h ^ (std::uint64_t(*p) * k5), 11) * k1;
  return avalanche(h);
}

std::uint64_t combine_checksums(std::uint64_t a, std::uint64_t b) { return avalanche(rotl(a, 17) ^ (b * k1 + k5)); }

std::string checksum_hex(std::uint64_t checksum) { return fmt::format("{:016x}", checksum); }

}  // namespace specwave::io
