#pragma once
// What the benchmark programs share (specwave-bench, docs/benchmarks.md): aligned first-touch buffers, the
// machine's description, and the STREAM-like memory bandwidth reference every throughput is compared with.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace specwave::bench {

// Aligned, uninitialised storage: the first write (in a parallel loop) decides where pages live.
struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

template <class T>
using Buffer = std::unique_ptr<T[], FreeDeleter>;

template <class T>
Buffer<T> allocate(std::size_t n) {
  constexpr std::size_t align = 64;
  const std::size_t bytes = ((n * sizeof(T) + align - 1) / align) * align;
  void* p = std::aligned_alloc(align, bytes);
  if (p == nullptr) throw std::bad_alloc();
  return Buffer<T>(static_cast<T*>(p));
}

// Seconds since t0, and the best (least) time of `rounds` calls of f (at least one).
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
template <class F>
double best_of(int rounds, F&& f) {
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < std::max(1, rounds); ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

double median(std::vector<double> v);
double best(const std::vector<double>& v);
std::string trim(const std::string& s);

struct Machine {
  std::string cpu = "unknown";
  int logical = 0;
  int cores = 0;
  int sockets = 0;
  std::string caches;
  std::string hypervisor;
};

Machine describe_machine();
std::string utc_now();

// Memory bandwidth reference (float64, like STREAM): copy, triad and the FDTD update pattern without a stencil on
// arrays of n elements, first-touch parallel initialisation, best and median of `repetitions`.
struct StreamResult {
  const char* name;
  const char* formula;
  int bytes_per_element;  // counted traffic (no write-allocate)
  double best_gbs = 0, median_gbs = 0;
};

struct StreamResults {
  std::size_t elements = 0;
  int repetitions = 0;
  StreamResult copy{"copy", "c[i] = a[i]", 16};
  StreamResult triad{"triad", "a[i] = b[i] + s*c[i]", 24};
  StreamResult update{"update", "a[i] = 2*b[i] - a[i] + c[i]*b[i]", 32};
};

StreamResults run_stream(std::size_t n, int repetitions);

}  // namespace specwave::bench
