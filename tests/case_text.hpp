#pragma once
// Case-file text for the parser's tests of one table (tests/test_staggered.cpp, tests/test_attenuation.cpp): a small
// case without [model], the table's text appended to it, and the check that a text is refused naming a key.
#include <doctest/doctest.h>

#include <string>

#include "io/case_file.hpp"
#include "solver/case/errors.hpp"

namespace specwave::testing {

// A 40^3 case of 10 m with one shot and one receiver, and no [model]: the test appends it (and any other table).
inline const std::string case_without_model = R"(
[grid]
shape = [40, 40, 40]
spacing = 10.0
[time]
duration = 0.1
[[shots]]
[[shots.sources]]
position = [200.0, 200.0, 200.0]
peak_frequency = 10.0
[receivers]
points = [[150.0, 200.0, 200.0]]
)";

// A two-layer [model] (an interface at 200 m, 1500 and 2000 m/s), to which a test adds its keys.
inline const std::string two_layers =
    "[model]\ntype = \"layered\"\ninterfaces = [200.0]\nvelocities = [1500.0, 2000.0]\n";

inline Case parse_case_tables(const std::string& tables) {
  return io::parse_case_text(case_without_model + tables, "case.toml", ".");
}

// The case with `tables` is refused (Error invalid_case) with a message that contains `needle` (the key).
inline void check_refused(const std::string& tables, const std::string& needle) {
  try {
    parse_case_tables(tables);
  } catch (const Error& e) {
    const std::string what = e.what();
    CAPTURE(what);
    CHECK(e.code() == ExitCode::invalid_case);
    CHECK(what.find(needle) != std::string::npos);
    return;
  }
  FAIL("not refused: " << tables);
}

}  // namespace specwave::testing
