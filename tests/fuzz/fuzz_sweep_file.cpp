// libFuzzer target: the sweep-file parser (solver/batch/sweep.cpp) on arbitrary text. Seeds:
// tests/fuzz/corpus/sweep_file.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.hpp"
#include "solver/batch/sweep.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  specwave::fuzz::refusal_allowed([&] { specwave::parse_sweep_text(text, "/nonexistent-fuzz-dir/sweep.toml"); });
  return 0;
}
