// kernels/cpu/flush_denormals.hpp: FTZ/DAZ set on every OpenMP thread inside the scope, restored outside it.
#include <doctest/doctest.h>
#include <omp.h>

#include <cfloat>
#include <vector>

#include "kernels/cpu/flush_denormals.hpp"

namespace {

using specwave::cpu::FlushDenormals;
using specwave::cpu::flushing_denormals;

// Per thread of a team of the default size: whether it flushes, and what a subnormal input times one gives.
struct TeamState {
  std::vector<int> flushing;
  std::vector<float> product;
};

TeamState team_state() {
  TeamState s;
  s.flushing.assign(omp_get_max_threads(), -1);
  s.product.assign(omp_get_max_threads(), -1.0f);
#pragma omp parallel
  {
    const int t = omp_get_thread_num();
    volatile float subnormal = FLT_MIN / 4, one = 1.0f;
    s.flushing[t] = flushing_denormals();
    s.product[t] = subnormal * one;
  }
  return s;
}

}  // namespace

TEST_CASE("FlushDenormals: FTZ/DAZ on every thread inside the scope, each thread's mode restored after") {
  if (!specwave::cpu::flush_denormals_allowed()) {
    MESSAGE("SPECWAVE_FLUSH_DENORMALS=0 in the environment: the scope sets nothing, nothing to check");
    return;
  }
  omp_set_num_threads(2);
  const TeamState before = team_state();
  for (int f : before.flushing) REQUIRE(f == 0);  // the process default (no -ffast-math)
  for (float p : before.product) CHECK(p == FLT_MIN / 4);
  {
    const FlushDenormals flush(true);
    const TeamState inside = team_state();
    for (int f : inside.flushing) CHECK(f == 1);
    for (float p : inside.product) CHECK(p == 0.0f);
    {
      const FlushDenormals nested(true);  // nested: cheap, and leaving it keeps the outer scope's mode
    }
    for (int f : team_state().flushing) CHECK(f == 1);
  }
  const TeamState after = team_state();
  for (int f : after.flushing) CHECK(f == 0);
  for (float p : after.product) CHECK(p == FLT_MIN / 4);
  {
    const FlushDenormals off(false);
    for (int f : team_state().flushing) CHECK(f == 0);
  }
}
