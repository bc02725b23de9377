#pragma once
// The velocity model on the grid: built-in generators or an HDF5 dataset, checked for NaN, Inf and
// non-positive values before any run.
#include <vector>

#include "solver/case.hpp"

namespace specwave {

struct VelocityModel {
  std::vector<float> velocity;  // (nz, ny, nx) C order, m/s
  double v_min = 0, v_max = 0;
};

// Generates or reads the model and validates every value (Error input_error / invalid_case on bad data).
VelocityModel build_velocity_model(const Case& c);

}  // namespace specwave
