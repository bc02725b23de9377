// The late-growth watch of the forward loops (solver/forward/forward.hpp, LateGrowth): a shot's field that grows
// run.late_growth_factor-fold (1000) once its sources are silent is an instability (docs/validation.md, "Late
// growth").
#include <doctest/doctest.h>

#include "solver/case/errors.hpp"
#include "solver/forward/forward.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/propagator.hpp"

using namespace specwave;

namespace {
FieldStats stats(double v) {
  FieldStats s;
  s.max_abs = v;
  s.argmax = 21;  // (z, y, x) = (1, 1, 1) on a 4^3 grid
  return s;
}
}  // namespace

TEST_CASE("late growth: the reference holds the whole pulse (the first check after the sources included)") {
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
  watch.check(c, plan, 0, 50, stats(1.0));
  watch.check(c, plan, 0, 150, stats(3.0));
  watch.check(c, plan, 0, 250, stats(7.0));  // the first check after silence joins the reference: 7
  CHECK(watch.reference() == 7.0);
  watch.check(c, plan, 0, 300, stats(6999.0));  // below 1000 times 7
  CHECK_THROWS_WITH_AS(watch.check(c, plan, 0, 350, stats(7001.0)),
                       doctest::Contains("its sources fell silent at step 200 (t = 0.2 s), and since then |u| grew to "
                                         "7e+03 at index (z=1, y=1, x=1)"),
                       Error);
  // Sparse checks: the only check before silence sees the pulse's leading tail (1e-300), the next one the whole
  // pulse after it: that is the reference, not a growth (a review's case: a delayed Ricker, check_every 300).
  LateGrowth sparse(plan, 0);
  sparse.check(c, plan, 0, 100, stats(1e-300));
  sparse.check(c, plan, 0, 400, stats(0.5));
  CHECK(sparse.reference() == 0.5);
  sparse.check(c, plan, 0, 700, stats(400.0));
  // A run resumed with the checkpoint's reference continues with it, joined by its first check (a run resumed
  // before the silence, at a reference of the pulse's start, must not stop on the rest of the pulse); a factor of 0
  // turns the watch off.
  LateGrowth early_resume(plan, 0);
  early_resume.set_reference(1e-7);
  early_resume.check(c, plan, 0, 150, stats(1.0));  // the pulse, before the silence
  early_resume.check(c, plan, 0, 250, stats(0.9));
  early_resume.check(c, plan, 0, 300, stats(999.0));
  LateGrowth resumed(plan, 0);
  resumed.set_reference(0.01);
  resumed.check(c, plan, 0, 600, stats(0.02));
  CHECK(resumed.reference() == 0.02);
  CHECK_THROWS_AS(resumed.check(c, plan, 0, 650, stats(20.01)), Error);
  c.run.late_growth_factor = 0;
  resumed.check(c, plan, 0, 650, stats(1e6));
  c.run.late_growth_factor = 1000;
  // A source that speaks to the end: its checks only ever build the reference.
  plan.wavelets = {{std::vector<double>(1000, 1.0)}};
  LateGrowth always(plan, 0);
  CHECK(always.quiet_step() == 1000);
  always.check(c, plan, 0, 50, stats(1.0));
  always.check(c, plan, 0, 1000, stats(1e6));
}
