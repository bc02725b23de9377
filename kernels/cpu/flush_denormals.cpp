#include "kernels/cpu/flush_denormals.hpp"

#include <omp.h>

#include <cstdlib>
#include <string_view>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace specwave::cpu {
namespace {

// The mode bits: x86 MXCSR FTZ (bit 15) and DAZ (bit 6); AArch64 FPCR FZ (bit 24, both directions).
#if defined(__x86_64__) || defined(__i386__)
using Mode = unsigned;
constexpr Mode kFlush = 0x8040;
Mode read_mode() { return _mm_getcsr(); }
void write_mode(Mode m) { _mm_setcsr(m); }
#elif defined(__aarch64__)
using Mode = unsigned long;
constexpr Mode kFlush = 1ul << 24;
Mode read_mode() {
  Mode m;
  asm volatile("mrs %0, fpcr" : "=r"(m));
  return m;
}
void write_mode(Mode m) { asm volatile("msr fpcr, %0" : : "r"(m)); }
#else
using Mode = unsigned;
constexpr Mode kFlush = 0;
Mode read_mode() { return 0; }
void write_mode(Mode) {}
#endif

thread_local int depth = 0;
thread_local Mode saved = 0;

void enter() {
  if (depth++ == 0) {
    saved = read_mode();
    write_mode(saved | kFlush);
  }
}

void leave() {
  if (depth > 0 && --depth == 0) write_mode(saved);
}

}  // namespace

FlushDenormals::FlushDenormals(bool enable) {
  if (!enable || kFlush == 0 || !flush_denormals_allowed()) return;
  // The team of the kernels' parallel regions: the runtime keeps its threads between regions of the same size, so
  // the mode set here holds in them. The calling thread is the team's thread 0.
  // The calling thread first, outside the team's region: LLVM's OpenMP runtime (clang) copies the caller's MXCSR
  // to the workers at each fork and puts back the caller's fork-time value at the join, so a mode the caller set
  // inside a region would be undone at its end (and nothing would flush). GCC's runtime copies nothing; the
  // workers set their own below.
  threads_ = omp_in_parallel() ? 1 : omp_get_max_threads();
  enter();
  if (threads_ == 1) return;
#pragma omp parallel num_threads(threads_)
  if (omp_get_thread_num() != 0) enter();
}

FlushDenormals::~FlushDenormals() {
  if (threads_ == 0) return;
  if (threads_ > 1) {
#pragma omp parallel num_threads(threads_)
    if (omp_get_thread_num() != 0) leave();
  }
  leave();  // the calling thread last (see the constructor)
}

bool flushing_denormals() { return kFlush != 0 && (read_mode() & kFlush) == kFlush; }

bool flush_denormals_allowed() {
  static const bool allowed = [] {
    const char* v = std::getenv("SPECWAVE_FLUSH_DENORMALS");
    if (!v) return true;
    const std::string_view s(v);
    return !(s == "0" || s == "false" || s == "off" || s == "no");
  }();
  return allowed;
}

}  // namespace specwave::cpu
