#pragma once
// Flush-to-zero and denormals-are-zero for the CPU kernels (docs/numerics.md, "Subnormal numbers"). A wave
// entering a field of zeros, every adjoint field and the absorbing layers are full of subnormal floats, on which
// x86 cores take microcode assists that cost 10-100 times a normal operation. With FTZ a result that would be
// subnormal is 0; with DAZ a subnormal input reads as 0. Values below 1.2e-38 (fp32) or 2.2e-308 (fp64) change by
// less than that absolute amount.
//
// FlushDenormals sets both on every thread of the OpenMP team (and the calling thread) for its lifetime and
// restores each thread's previous mode after, so a program that embeds the library sees its own floating-point
// mode outside specwave's calls. Nested scopes are cheap (a per-thread depth). The CPU propagators hold one for each
// call that steps (advance, forward, born, adjoint); run.flush_denormals = false (or SPECWAVE_FLUSH_DENORMALS=0 in
// the environment) turns it off. On processors other than x86-64 and AArch64 it does nothing.
namespace specwave::cpu {

class FlushDenormals {
 public:
  explicit FlushDenormals(bool enable);
  ~FlushDenormals();
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;

 private:
  int threads_ = 0;  // the team the modes were set on (0: not enabled)
};

// Whether the calling thread flushes now (both FTZ and DAZ set), for tests and the plan line.
bool flushing_denormals();
// False when the environment has SPECWAVE_FLUSH_DENORMALS=0 (or "false", "off"): the override of the case key.
bool flush_denormals_allowed();

}  // namespace specwave::cpu
