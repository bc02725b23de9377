#pragma once
// The operators a gradient needs from one method on one backend (docs/numerics.md, "Adjoint and gradient"):
// forward modelling, the Born (linearised) operator F and its exact transpose F^T, for a model that changes
// while dt, nt, the absorbing profiles and the acquisition stay those of the plan it was made from.
// The model parameter of the discrete scheme is (v dt)^2 at every grid point; solver/inversion/objective.cpp applies
// the chain rule to the user's parameterisation. FDTD (solver/propagators/fdtd/fdtd_cpu_gradient.cpp) and the spectral
// method (solver/propagators/spectral/spectral_cpu_gradient.cpp, both absorbers) on the CPU; FDTD on the GPU
// (solver/propagators/fdtd/fdtd_cuda_gradient.cpp).
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "solver/case/case.hpp"
#include "solver/propagators/history/wavefield_history.hpp"

namespace specwave {

struct Plan;

class GradientPropagator {
 public:
  virtual ~GradientPropagator() = default;
  virtual std::string name() const = 0;
  // The model, (nz, ny, nx) m/s: (v dt)^2 with the plan's dt. Refuses (Error invalid_case) a velocity that is not
  // positive and finite, or above v_reference / CFL number, where the frozen dt stops being stable.
  virtual void set_velocity(std::span<const double> velocity) = 0;
  // (v dt)^2 of the current model as the scheme holds it (in the run precision), (nz, ny, nx).
  virtual std::vector<double> vel2dt2() const = 0;
  // One shot at the current model: traces (n_receivers, nt). With keep_history, the forward wavefields are kept
  // (by the history strategy) for adjoint().
  virtual std::vector<double> forward(int shot, bool keep_history) = 0;
  // F dm: the Born traces (n_receivers, nt) of one shot for a perturbation dm of (v dt)^2, (nz, ny, nx).
  virtual std::vector<double> born(int shot, std::span<const double> dvel2dt2) = 0;
  // gradient += F^T r for the shot of the last forward(shot, true): r (n_receivers, nt) is the derivative of the
  // misfit with respect to the traces, gradient (nz, ny, nx) the derivative with respect to (v dt)^2.
  // With a non-empty `illumination` (nz, ny, nx), also illumination += sum_{n < nt} (u^n)^2, the source-side
  // illumination of the shot from the forward pressure (the preconditioner's compensation, docs/numerics.md).
  virtual void adjoint(std::span<const double> adjoint_source, std::span<double> gradient,
                       std::span<double> illumination = {}) = 0;
  // The density model (the staggered scheme; kg/m^3, (nz, ny, nx)): set_density refuses (Error invalid_case) a
  // scheme without one or a value that is not positive and finite; density() is empty without one.
  virtual void set_density(std::span<const double> density);
  virtual std::vector<double> density() const { return {}; }
  // Both at once (an inversion of velocity and density): the stability of the pair is checked, not of a mix of the
  // new one and the old other. The default sets the density (when given), then the velocity.
  virtual void set_model(std::span<const double> velocity, std::span<const double> density);
  // dJ/d rho at fixed velocity for the last adjoint(), added to `out` (nz, ny, nx): a propagator made for a case whose
  // inversion.parameters name "density"; Error(invalid_case) otherwise.
  virtual void add_density_gradient(std::span<double> out) const;
  // The Born traces (n_receivers, nt) of one shot for a perturbation drho of the density at fixed velocity (kg/m^3,
  // (nz, ny, nx)): the linearised operator whose transpose add_density_gradient applies (the density's dot-product
  // test). The same propagators as add_density_gradient; Error(invalid_case) otherwise. Like born(), it ends the
  // forward state kept for adjoint(): forward(shot, true) again before the next adjoint().
  virtual std::vector<double> born_density(int shot, std::span<const double> drho);
  // The shear velocity (the elastic scheme; m/s, (nz, ny, nx)): set_shear_velocity refuses (Error invalid_case) a
  // scheme without one or a value outside [0, vp sqrt(3)/2); shear_velocity() is empty without one.
  // add_shear_gradient adds dJ/d(vs dt)^2 at fixed vp and rho for the last adjoint(), born_shear the Born traces of a
  // perturbation of (vs dt)^2 (its dot-product test), as add_density_gradient and born_density.
  virtual void set_shear_velocity(std::span<const double> vs);
  // vp, rho and vs at once (each empty: kept), their checks made on the new triple; without a shear velocity (empty
  // vs), set_model(velocity, density).
  virtual void set_elastic_model(std::span<const double> velocity, std::span<const double> density,
                                 std::span<const double> vs);
  virtual std::vector<double> shear_velocity() const { return {}; }
  virtual void add_shear_gradient(std::span<double> out) const;
  virtual std::vector<double> born_shear(int shot, std::span<const double> dvs2dt2);
  virtual std::string history_name() const = 0;
  virtual std::size_t history_bytes() const = 0;
  // Forward steps the history took for the last forward(shot, true) and adjoint(): nt x its recompute factor.
  virtual long long history_forward_steps() const = 0;
};

// The case's method (FDTD, or spectral with its absorber) on the plan's backend in the case's precision, from the
// capability table (solver/propagators/capabilities.hpp): FDTD on the CPU or the GPU (history.tier says where the
// GPU keeps the history), spectral on the CPU (Error invalid_case when run.backend asks for "cuda"; "auto" that
// picked the GPU runs it on the CPU).
std::unique_ptr<GradientPropagator> make_gradient_propagator(const Case& c, const Plan& plan,
                                                             const HistoryChoice& history);
std::unique_ptr<GradientPropagator> make_fdtd_cpu_gradient(const Case& c, const Plan& plan,
                                                           const HistoryChoice& history);
std::unique_ptr<GradientPropagator> make_spectral_cpu_gradient(const Case& c, const Plan& plan,
                                                               const HistoryChoice& history);
// The staggered scheme (a density model, attenuation) on the CPU: the gradient with respect to (v dt)^2, the density
// and Q fixed (solver/propagators/staggered/staggered_cpu_gradient.cpp).
std::unique_ptr<GradientPropagator> make_staggered_cpu_gradient(const Case& c, const Plan& plan,
                                                                const HistoryChoice& history);
// The same on an NVIDIA GPU, one rank (solver/propagators/staggered/staggered_cuda_gradient.cpp);
// make_gradient_propagator picks it when the plan's backend is cuda.
std::unique_ptr<GradientPropagator> make_staggered_cuda_gradient(const Case& c, const Plan& plan,
                                                                 const HistoryChoice& history);
// The elastic scheme on the CPU, one rank: the gradients with respect to (vp dt)^2, (vs dt)^2 and rho, each at fixed
// others (solver/propagators/elastic/elastic_cpu_gradient.cpp).
std::unique_ptr<GradientPropagator> make_elastic_cpu_gradient(const Case& c, const Plan& plan,
                                                              const HistoryChoice& history);
// The same on an NVIDIA GPU, one rank (solver/propagators/elastic/elastic_cuda_gradient.cpp); make_gradient_propagator
// picks it when the plan's backend is cuda.
std::unique_ptr<GradientPropagator> make_elastic_cuda_gradient(const Case& c, const Plan& plan,
                                                               const HistoryChoice& history);
// On plan.device, one rank (a build without the CUDA backend has a stub that refuses: fdtd/fdtd_no_cuda.cpp).
std::unique_ptr<GradientPropagator> make_fdtd_cuda_gradient(const Case& c, const Plan& plan,
                                                            const HistoryChoice& history);

// For tests of the history strategies: the FDTD CPU forward wavefields u^n (interior, (nz, ny, nx), in fp64) of one
// shot at `velocity`, in the order and form in which `history` hands them to the adjoint pass: n = nt, ..., 0.
using HistoryVisitor = std::function<void(int n, std::span<const double> u)>;
void visit_fdtd_cpu_history(const Case& c, const Plan& plan, const HistoryChoice& history,
                            std::span<const double> velocity, int shot, const HistoryVisitor& visit);

// add_density_gradient of a propagator that keeps the last adjoint()'s density gradient in `kept` (empty before an
// adjoint of the current shot): out += kept; the base's refusal without a density parameter (`with_density` false).
void add_kept_density_gradient(const GradientPropagator& g, bool with_density, std::span<const double> kept,
                               std::span<double> out);

// The argument checks every GradientPropagator makes (std::logic_error / std::invalid_argument, programming errors):
// adjoint() needs a forward(shot, true) first (`has_history`), an adjoint source of `trace_values` values, a
// gradient of `points` values and an illumination that is empty or as long; born() a perturbation of `points`.
void check_adjoint_arguments(bool has_history, std::size_t trace_values, std::size_t points, std::size_t residual,
                             std::size_t gradient, std::size_t illumination);
void check_born_perturbation(std::size_t dm, std::size_t points);

// The frozen dt (s) against the staggered schemes' limit at this model (plan.cpp's staggered_dt_max with velocities up
// to max(velocity) x speedup): a density contrast raises the operator's largest eigenvalue above the constant-density
// bound. Error(invalid_case) naming the ranges otherwise.
void check_staggered_stability(const Case& c, std::span<const double> velocity, std::span<const double> density,
                               double speedup, double dt);

// set_velocity's check: `points` values, each positive, finite and at most v_limit = v_reference / CFL number (m/s),
// where the frozen dt (s) is stable; Error(invalid_case) naming the first offending value otherwise.
void check_model_velocity(std::span<const double> velocity, std::size_t points, double v_limit, double dt);

}  // namespace specwave
