#pragma once
#include "solver/propagator.hpp"

namespace specwave {
std::unique_ptr<Propagator> make_spectral_cpu_propagator(const Case& c, const Plan& plan);
}
