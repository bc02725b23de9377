#include "solver/propagators/propagator.hpp"

#include <fmt/format.h>

#include "solver/case/errors.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/capabilities.hpp"

namespace specwave {

std::unique_ptr<Propagator> make_propagator(const Case& c, const Plan& plan, const Comm* domain) {
  const Capability& row = capability(c.scheme.method, plan.backend);
  if (!domain || domain->size() == 1) return row.make_propagator(c, plan, nullptr);
  if (!row.decomposed)
    throw Error(ExitCode::usage, fmt::format("a {} run on backend {} cannot be split over {} ranks in this version "
                                             "(domain decomposition: {}); run it on one rank per shot group "
                                             "(run.shot_groups)",
                                             to_string(c.scheme.method), to_string(plan.backend), domain->size(),
                                             decomposed_combinations()));
  return row.make_propagator(c, plan, domain);
}

}  // namespace specwave
