#pragma once
// A fast 64-bit checksum of a byte array, for the integrity of restart files (docs/hdf5-schema.md,
// "Checksums"): checkpoints, the inversion state and its evaluation log carry one per array, verified on resume,
// so a flipped bit is an error naming the file and the array, never a silently different result.
//
// Four independent 64-bit lanes over 32-byte blocks (multiply by an odd constant, rotate, multiply: every input
// bit reaches every output bit after the final mix), then the tail and the length; about one multiply per 8
// bytes, well above disk speed. Not cryptographic: it detects corruption, not tampering.
#include <cstddef>
#include <cstdint>
#include <string>

namespace specwave::io {

std::uint64_t checksum64(const void* data, std::size_t bytes, std::uint64_t seed = 0);
// Combines two checksums in order (a checksum of several arrays).
std::uint64_t combine_checksums(std::uint64_t a, std::uint64_t b);
// 16 lower-case hexadecimal digits.
std::string checksum_hex(std::uint64_t checksum);

}  // namespace specwave::io
