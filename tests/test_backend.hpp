#pragma once
// Backend tests: one test source, compiled once, run on every backend (docs/architecture.md, "Tests and labels").
// The environment variable SPECWAVE_TEST_BACKEND names the backend of the process: "cpu" (also when unset) or
// "cuda". tests/CMakeLists.txt registers each backend test twice, NAME with SPECWAVE_TEST_BACKEND=cpu and NAME_cuda
// (label gpu) with SPECWAVE_TEST_BACKEND=cuda. The main of these executables (tests/backend_main.cpp) reads it
// before any test runs: on "cuda" without a usable device, or in a build without the CUDA backend, it prints
// "SKIPPED: CUDA backend: <why>" and exits 77, which CTest reports as skipped; any other value is refused (exit 2).
#include <string_view>

#include "solver/case/case.hpp"

namespace specwave::testing {

// The backend this process tests. "cuda" is asked for as run.backend = "cuda", never "auto": a case that cannot
// run there fails its test (make_plan throws) instead of running on the CPU unnoticed.
BackendKind test_backend();

// The case, on the tested backend.
inline Case on_test_backend(Case c) {
  c.run.backend = test_backend();
  return c;
}

// For a test that only means something on the CPU backend: on another backend it logs a doctest MESSAGE naming
// `why` and returns true (the test then returns at once); on the CPU it returns false.
bool cpu_only(std::string_view why);

// For a test that compares the tested backend with the CPU backend, and so checks nothing on the CPU itself: on
// the CPU it logs a doctest MESSAGE naming `why` and returns true (the test then returns at once); on another
// backend it returns false.
bool not_on_cpu(std::string_view why);

}  // namespace specwave::testing
