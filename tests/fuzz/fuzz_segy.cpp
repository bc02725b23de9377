// libFuzzer target: the SEG-Y readers (io/segy.cpp: shot gathers and velocity cubes) on arbitrary bytes. With
// SPECWAVE_FUZZ_SEEDS=DIR, writes a small valid SEG-Y file (2 shots x 3 receivers x 10 samples) into DIR first, the
// seed the mutations start from.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "io/segy.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("SPECWAVE_FUZZ_SEEDS")) {
    std::vector<float> traces;
    for (int k = 0; k < 60; ++k) traces.push_back(float(k % 7) - 3.0f);
    const auto g = specwave::io::shared_gathers(2, {{10, 20, 30}, {10, 20, 40}, {10, 20, 50}}, 10, 0.002, traces,
                                                {{5, 20, 0}, {5, 20, 100}});
    specwave::io::write_segy(std::string(dir) + "/seed.sgy", g, "specwave fuzz seed");
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = specwave::fuzz::scratch_path(".sgy");
  if (!specwave::fuzz::write_file(path, data, size)) return 0;
  specwave::fuzz::refusal_allowed([&] { specwave::io::read_segy(path); });
  specwave::fuzz::refusal_allowed([&] { specwave::io::read_segy_volume(path); });
  return 0;
}
