// The elastic scheme's CUDA entry points in a build without the CUDA backend (CMake compiles this file instead of
// elastic_cuda_propagator.cpp and elastic_cuda_gradient.cpp). Unreachable through the plan, which never resolves a
// backend to cuda in such a build; a direct call is refused with the reason.
#include "kernels/cuda/device.hpp"
#include "solver/case/errors.hpp"
#include "solver/propagators/elastic/elastic_cuda_propagator.hpp"
#include "solver/propagators/gradient_propagator.hpp"

namespace specwave {

std::unique_ptr<Propagator> make_elastic_cuda_propagator(const Case&, const Plan&, const Comm*) {
  throw Error(
      ExitCode::backend_unavailable,
      std::string("no propagator for the elastic scheme on backend cuda in this build: ") + cuda::no_cuda_backend);
}

std::unique_ptr<GradientPropagator> make_elastic_cuda_gradient(const Case&, const Plan&, const HistoryChoice&) {
  throw Error(
      ExitCode::backend_unavailable,
      std::string("no gradient for the elastic scheme on backend cuda in this build: ") + cuda::no_cuda_backend);
}

}  // namespace specwave
