#pragma once
// Particle-velocity receivers (docs/numerics.md, "Force sources and particle-velocity receivers"): the propagators
// sample d . grad p with the receiver's derivative stencil (solver/plan/acquisition.hpp); what leaves the engine is
// the particle velocity v_d = -(1 / rho) int_0^t d . grad p dt (rho v_t = -grad p away from force sources).
#include <span>

#include "solver/case/case.hpp"

namespace specwave {

// In place, samples g^n = g(n dt) (n = 0 .. nt-1, the field at rest before t = 0) become I^n = int_0^{n dt} g dt:
// the trapezoidal rule with the Euler-Maclaurin end correction -(dt^2 / 12) (g'(t_n) - g'(0)), g' by centred
// differences (one-sided at the last sample, g^{-1} = 0 before the first): fourth order, error about
// (omega dt)^4 / 720 of a sine (the trapezoidal rule alone: (omega dt)^2 / 12). Fewer than 3 samples: trapezoidal.
void integrate_in_time(std::span<double> samples, double dt);

// The transpose of integrate_in_time (the adjoint for the gradient: <I g, y> = <g, I^T y>), in place.
void integrate_in_time_transpose(std::span<double> samples, double dt);

// traces: shot `shot`'s (n_receivers, nt) samples at steps 0, dt, ...; the rows of its particle-velocity receivers
// become v(t_n) = -(1 / rho) int_0^{t_n} (sampled gradient) dt (integrate_in_time), with rho = model.density, or
// receiver_density[r] when given (one a receiver: the staggered scheme's density model, velocity_receiver_densities);
// pressure rows are left as they are; the elastic scheme's traces (which record particle velocity themselves) too.
// Throws std::invalid_argument when the traces are not n_receivers x nt.
void particle_velocity_traces(const Case& c, std::size_t shot, double dt, std::span<double> traces,
                              std::span<const double> receiver_density = {});
// Its transpose: the derivative of a function of the velocity traces with respect to the sampled gradients, from
// its derivative with respect to the traces (the adjoint source of a velocity receiver), in place; receiver_density
// as above.
void particle_velocity_adjoint(const Case& c, std::size_t shot, double dt, std::span<double> adjoint_source,
                               std::span<const double> receiver_density = {});

}  // namespace specwave
