// libFuzzer target: the case-file parser (io/case_file.cpp) on arbitrary text. Seeds: tests/fuzz/corpus/case_file.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.hpp"
#include "io/case_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  specwave::fuzz::refusal_allowed([&] { specwave::io::parse_case_text(text, "fuzz.toml", "/nonexistent-fuzz-dir"); });
  return 0;
}
