#pragma once
// Shared by the libFuzzer targets (scripts/fuzz, docs/validation.md "Fuzzing"): what a bad input may do is throw
// specwave::Error (the clear, categorised refusal every command prints); anything else (another exception, a crash,
// a sanitizer report, a hang) is a finding.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "solver/case/errors.hpp"

namespace specwave::fuzz {

// A per-process scratch file for inputs that the readers take by path.
inline std::string scratch_path(const char* suffix) {
  const char* dir = std::getenv("TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/specwave-fuzz-" + std::to_string(::getpid()) + suffix;
}

inline bool write_file(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool ok = std::fwrite(data, 1, size, f) == size;
  return std::fclose(f) == 0 && ok;
}

// Runs `f`; a specwave::Error is the expected refusal, everything else propagates to libFuzzer.
template <class F>
void refusal_allowed(F&& f) {
  try {
    f();
  } catch (const Error&) {
  }
}

}  // namespace specwave::fuzz
