// The late-growth watch of the forward loops (solver/forward/forward.hpp, LateGrowth): a shot's field that grows
// 100-fold once its sources are silent is an instability (docs/validation.md, "Late growth").
#include <doctest/doctest.h>

#include "solver/case/errors.hpp"
#include "solver/forward/forward.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/propagator.hpp"

using namespace specwave;

TEST_CASE(
    "late growth: the reference is the field's largest value while the sources speak; 100-fold after is refused") {
  Case c;
  c.grid.shape = {4, 4, 4};
  c.grid.spacing = {10, 10, 10};
  Plan plan;
  plan.dt = 1e-3;
  plan.nt = 1000;
  // Two sources: the later one speaks until sample 199 (1e-7 of its peak after that counts as silent).
  std::vector<double> early(1000, 0.0), late(1000, 0.0);
  early[10] = 1;
  for (int n = 100; n < 200; ++n) late[std::size_t(n)] = 2;
  late[500] = 1e-7;  // below 1e-6 of the peak: silent
  plan.wavelets = {{early, late}};
  LateGrowth watch(plan, 0);
  CHECK(watch.quiet_step() == 200);
  const auto stats = [](double v) {
    FieldStats s;
    s.max_abs = v;
    s.argmax = 21;
    return s;
  };
  watch.check(c, plan, 0, 50, stats(1.0));
  watch.check(c, plan, 0, 150, stats(3.0));    // the reference: 3
  watch.check(c, plan, 0, 200, stats(500.0));  // still a source step: no growth after silence yet
  watch.check(c, plan, 0, 250, stats(0.5));
  watch.check(c, plan, 0, 300, stats(499.0));  // below 100 times 500
  CHECK_THROWS_WITH_AS(watch.check(c, plan, 0, 350, stats(50001.0)),
                       doctest::Contains("its sources fell silent at step 200 (t = 0.2 s), and since then |u| grew to "
                                         "5e+04 at index (z=1, y=1, x=1)"),
                       Error);
  // A run resumed after the sources: the first check is the reference.
  LateGrowth resumed(plan, 0);
  resumed.check(c, plan, 0, 600, stats(0.01));
  resumed.check(c, plan, 0, 650, stats(0.9));
  CHECK_THROWS_AS(resumed.check(c, plan, 0, 700, stats(1.01)), Error);
  // A source that speaks to the end: never checked.
  plan.wavelets = {{std::vector<double>(1000, 1.0)}};
  LateGrowth always(plan, 0);
  CHECK(always.quiet_step() == 1000);
  always.check(c, plan, 0, 50, stats(1.0));
  always.check(c, plan, 0, 1000, stats(1e6));
}
