#pragma once
// What runs where, decided in one place: one row per method and backend, with what that combination supports
// (domain decomposition over the ranks of a shot group, a gradient, the optimiser's vectors on the device), its
// factories, and the memory a propagator of the row holds. Each method's folder supplies its rows
// (propagators/fdtd/fdtd_capabilities.cpp, propagators/spectral/spectral_capabilities.cpp); make_plan,
// make_propagator, make_gradient_propagator and invert read them. A new method is one folder and its rows here.
// The CUDA rows exist in every build: without the CUDA backend their factories throw (the stub files), and the plan
// never resolves a backend to cuda.
#include <array>
#include <memory>
#include <span>
#include <string>

#include "solver/case/case.hpp"

namespace specwave {

struct Plan;
class Comm;
class Propagator;
class GradientPropagator;
struct HistoryChoice;

struct Capability {
  Method method = Method::fdtd;
  BackendKind backend = BackendKind::cpu;  // cpu or cuda, never auto
  // The forward propagator: the whole grid on one rank (domain null, or of size 1), or this rank's block of
  // plan.process_grid when `decomposed`.
  std::unique_ptr<Propagator> (*make_propagator)(const Case& c, const Plan& plan, const Comm* domain) = nullptr;
  bool decomposed = false;
  // The gradient's operators (invert, check-gradient). Null: `no_gradient` says why, and run.backend = "auto" that
  // resolved to this backend runs the gradient on the method's CPU row instead.
  std::unique_ptr<GradientPropagator> (*make_gradient)(const Case& c, const Plan& plan,
                                                       const HistoryChoice& history) = nullptr;
  const char* no_gradient = "";
  bool optimiser_on_device = false;  // invert keeps the optimiser's vectors on this backend (cuBLAS)
  // Bytes a propagator of this row holds for a block of `shape` (nz, ny, nx) points over nt steps: host memory
  // (fields, CPML slabs or spectra, the model, source patterns) on a CPU row, without the driver's traces and
  // output fields; device memory per shot in flight on a CUDA row, everything included.
  double (*memory_bytes)(const Case& c, int nt, const std::array<int, 3>& shape) = nullptr;
  // What keeps this row from running the case at all, besides decomposition (empty: nothing; null: never).
  std::string (*cannot_run)(const Case& c) = nullptr;
};

// Every row, methods in the order of Method, each method's CPU row first.
std::span<const Capability> capabilities();
// The row of `method` on a resolved backend (cpu or cuda).
const Capability& capability(Method method, BackendKind backend);
// "fdtd on cpu and cuda, spectral on cpu": the combinations that can be domain-decomposed, for messages.
std::string decomposed_combinations();

// The rows each method's folder supplies (backend: cpu or cuda).
Capability fdtd_capability(BackendKind backend);
Capability spectral_capability(BackendKind backend);

}  // namespace specwave
