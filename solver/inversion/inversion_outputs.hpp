#pragma once
// The files of `specwave invert` in output.directory (docs/hdf5-schema.md, "inversion.h5"): inversion.h5 (the model
// and gradient of every iteration, the misfit history), iterations.jsonl (one JSON object per iteration), both
// rewritten atomically after every iteration; and at the end misfit.png and model_slices.png.
#include <array>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "solver/case/case.hpp"
#include "solver/inversion/inversion.hpp"

namespace specwave {

class InversionRecorder {
 public:
  // true_velocity: (nz, ny, nx) m/s when the case names the true model, else empty. With inversion.parameters naming
  // "density" or "shear_velocity", that parameter is recorded too; true_density, true_shear: the true model's (kg/m^3,
  // m/s) when known.
  InversionRecorder(const Case& c, int threads, std::string optimizer, std::vector<double> true_velocity,
                    std::vector<double> true_density = {}, std::vector<double> true_shear = {});
  // Adds an iteration (velocity in m/s and the gradient of the parameter, both (nz, ny, nx); inverting the density
  // also the density (kg/m^3) and dJ/d rho, the shear velocity its values (m/s) and dJ/d vs) and rewrites inversion.h5
  // and iterations.jsonl.
  void record(const InversionIteration& it, std::span<const double> velocity, std::span<const double> gradient,
              std::span<const double> density = {}, std::span<const double> density_gradient = {},
              std::span<const double> shear = {}, std::span<const double> shear_gradient = {});
  // misfit.png (relative misfit and model errors against iteration) and model_slices.png (xz slices through the
  // grid centre: start, final and, when known, true model on one colour scale, and the update), density_slices.png
  // and shear_slices.png the same for the density and the shear velocity when they are inverted.
  void write_plots() const;
  // Resume: the records so far, and the models and gradients of those iterations read back from inversion.h5.
  void restore(const std::vector<InversionIteration>& history);
  std::vector<std::string> outputs() const;

 private:
  void write_h5() const;
  void write_jsonl() const;

  // A parameter recorded besides the velocity: the density, the shear velocity.
  struct Extra {
    const char* name;   // its datasets: name, name_gradient, true_name, error
    const char* units;  // kg/m^3, m/s
    const char* error;  // density_error, shear_error
    const char* plot;   // density_slices.png, shear_slices.png
    std::optional<double> InversionIteration::*error_of;
    bool on = false;  // inversion.parameters names it
    std::vector<double> truth;
    std::vector<float> values, gradients;  // (iterations + 1, nz, ny, nx)
  };

  const Case& case_;
  int threads_;
  std::string optimizer_, directory_;
  std::vector<double> true_velocity_;
  std::vector<InversionIteration> history_;
  std::vector<float> velocities_, gradients_;  // (iterations + 1, nz, ny, nx)
  std::array<Extra, 2> extra_;                 // the density, the shear velocity
};

// inversion.source_estimation's result at a band's start (docs/hdf5-schema.md, "source_estimate.h5"): the estimated
// wavelets (filters, nt) on the data's sampling dt (per shot, or one shared), written atomically over the last one,
// and source_estimate.png (the first few against the case's wavelet `case_wavelet`, on the same sampling).
void write_source_estimate(const Case& c, const std::vector<std::vector<double>>& wavelets,
                           const std::vector<double>& case_wavelet, double dt, double band_hz, int threads);

// One JSON object (no newline) for iterations.jsonl.
std::string json_line(const InversionIteration& it);

}  // namespace specwave
