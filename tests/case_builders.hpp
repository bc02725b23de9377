#pragma once
// Small cases built in code for the tests.
#include <filesystem>

#include "solver/case.hpp"

namespace specwave::testing {

inline Case small_case(int n, double h, double v, int order, int pml_width, double f_peak, double duration) {
  Case c;
  c.name = "test";
  c.grid.shape = {n, n, n};
  c.grid.spacing = {h, h, h};
  c.model.kind = ModelSpec::Kind::homogeneous;
  c.model.velocity = v;
  c.time.duration = duration;
  c.scheme.order = order;
  c.scheme.min_points_per_wavelength = 1.0;  // tests choose their sampling deliberately
  c.boundary.pml_width = pml_width;
  SourceSpec s;
  s.position = {h * (n / 2), h * (n / 2), h * (n / 2)};
  s.wavelet.peak_frequency = f_peak;
  c.shots.push_back({{s}});
  c.run.precision = Precision::fp64;
  c.output.directory = (std::filesystem::temp_directory_path() / "specwave_tests_out").string();
  c.output.plots = false;
  return c;
}

}  // namespace specwave::testing
