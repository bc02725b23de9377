#include "solver/propagators/propagator.hpp"

#include <fmt/format.h>

#include "solver/parallel/comm.hpp"
#include "solver/case/errors.hpp"
#include "solver/propagators/fdtd/fdtd_cpu_propagator.hpp"
#include "solver/propagators/fdtd/fdtd_cuda_propagator.hpp"
#include "solver/propagators/spectral/spectral_cpu_propagator.hpp"
#include "solver/propagators/spectral/spectral_cuda_propagator.hpp"
#include "solver/plan/plan.hpp"

namespace specwave {

std::unique_ptr<Propagator> make_propagator(const Case& c, const Plan& plan, const Comm* domain) {
  if (domain && domain->size() > 1) {
    if (c.scheme.method == Method::fdtd && plan.backend == BackendKind::cpu)
      return make_fdtd_cpu_propagator(c, plan, domain);
    if (c.scheme.method == Method::spectral && plan.backend == BackendKind::cpu)
      return make_spectral_cpu_propagator(c, plan, domain);
#if defined(SPECWAVE_HAVE_CUDA)
    if (c.scheme.method == Method::fdtd && plan.backend == BackendKind::cuda)
      return make_fdtd_cuda_propagator(c, plan, domain);
#endif
    throw Error(ExitCode::usage, fmt::format("a {} run on backend {} cannot be split over {} ranks in this version "
                                             "(domain decomposition: FDTD on CPU and GPU, spectral on the CPU); run it on one rank per shot "
                                             "group (run.shot_groups)",
                                             to_string(c.scheme.method), to_string(plan.backend), domain->size()));
  }
  if (c.scheme.method == Method::fdtd && plan.backend == BackendKind::cpu) return make_fdtd_cpu_propagator(c, plan);
  if (c.scheme.method == Method::spectral && plan.backend == BackendKind::cpu) return make_spectral_cpu_propagator(c, plan);
#if defined(SPECWAVE_HAVE_CUDA)
  if (c.scheme.method == Method::fdtd && plan.backend == BackendKind::cuda) return make_fdtd_cuda_propagator(c, plan);
  if (c.scheme.method == Method::spectral && plan.backend == BackendKind::cuda) return make_spectral_cuda_propagator(c, plan);
#endif
  throw Error(ExitCode::backend_unavailable, std::string("no propagator for method ") + to_string(c.scheme.method) +
                                                 " on backend " + to_string(plan.backend) + " in this build");
}

}  // namespace specwave
