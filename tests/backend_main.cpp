// The main of the backend tests (tests/test_backend.hpp): chooses the backend from SPECWAVE_TEST_BACKEND before
// doctest runs; a CUDA run without a usable device (or without the CUDA backend in the build) is skipped, exit 77.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "io/hdf5.hpp"
#include "test_backend.hpp"

#if defined(SPECWAVE_HAVE_CUDA)
#include "kernels/cuda/device.hpp"
#endif

namespace specwave::testing {
namespace {

BackendKind tested = BackendKind::cpu;  // set once by main, before any test runs

// SPECWAVE_TEST_BACKEND: unset, empty or "cpu": the CPU; "cuda": the CUDA backend; anything else: none.
std::optional<BackendKind> requested_backend() {
  const char* value = std::getenv("SPECWAVE_TEST_BACKEND");
  const std::string name = value ? value : "";
  if (name.empty() || name == "cpu") return BackendKind::cpu;
  if (name == "cuda") return BackendKind::cuda;
  return std::nullopt;
}

}  // namespace

BackendKind test_backend() { return tested; }

bool cpu_only(std::string_view why) {
  if (tested == BackendKind::cpu) return false;
  const std::string message = std::string("not run on the ") + to_string(tested) + " backend: " + std::string(why);
  MESSAGE(message);
  return true;
}

bool not_on_cpu(std::string_view why) {
  if (tested != BackendKind::cpu) return false;
  const std::string message = "not run on the cpu backend: " + std::string(why);
  MESSAGE(message);
  return true;
}

}  // namespace specwave::testing

int main(int argc, char** argv) {
  using namespace specwave;
  io::h5::silence_library_errors();
  const std::optional<BackendKind> backend = testing::requested_backend();
  if (!backend) {
    std::fprintf(stderr, "SPECWAVE_TEST_BACKEND=\"%s\": expected \"cpu\" or \"cuda\"\n",
                 std::getenv("SPECWAVE_TEST_BACKEND"));
    return 2;
  }
  if (*backend == BackendKind::cuda) {
#if defined(SPECWAVE_HAVE_CUDA)
    const auto status = cuda::query_devices();
    if (!status.usable) {
      std::printf("SKIPPED: CUDA backend: %s\n", status.reason.c_str());
      return 77;
    }
    std::fprintf(stderr, "backend tests on cuda (GPU 0: %s)\n", status.devices.front().name.c_str());
#else
    std::printf("SKIPPED: CUDA backend: this build has no CUDA backend (SPECWAVE_CUDA=OFF or no toolkit)\n");
    return 77;
#endif
  } else {
    std::fprintf(stderr, "backend tests on cpu\n");  // stderr: stdout is doctest's reporter's
  }
  testing::tested = *backend;
  doctest::Context context(argc, argv);
  return context.run();
}
