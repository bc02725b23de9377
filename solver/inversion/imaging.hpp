#pragma once
// `specwave gradient`, `specwave born` and `specwave migrate` (docs/cli.md): the inversion's operators as commands,
// each one pass over the shots with its result in output.directory, so that an external optimiser (scipy, a user's
// own loop) can drive specwave and a new survey can be imaged. They share `invert`'s machinery: the plan (dt from
// inversion.velocity_max when given), the wavefield history, the Objective (per-shot progress lines, a stop signal
// between shots), MPI ranks sharing the shots, and every method and backend the gradient runs on. Each pass can be
// resumed shot by shot (ShotCheckpoint, solver/inversion/shot_checkpoint.hpp; --resume).
#include <span>
#include <string>
#include <vector>

#include "solver/case/case.hpp"

namespace specwave {

struct ImagingOptions {
  bool quiet = false;
  // The model instead of the case's [model]: an HDF5 dataset of the grid's shape in m/s (as model.file reads).
  std::string model_file, model_dataset = "/velocity";
  // born: the perturbation, an HDF5 dataset of the grid's shape in the units of inversion.parameterisation (m/s for
  // velocity, s^2/m^2 for slowness2).
  std::string perturbation_file, perturbation_dataset = "/perturbation";
  // gradient: > 0: the misfit of the data low-passed at this cutoff (Hz), as `invert` in a band of inversion.bands_hz.
  double band_hz = 0;
  // Continue an interrupted pass from its shot checkpoint (solver/inversion/shot_checkpoint.hpp), or start when there
  // is none; without it an old state is removed.
  bool resume = false;
};

struct ImagingSummary {
  std::string result;                // one line: what was computed ("misfit 1.2e-3 over 4 shots")
  std::vector<std::string> outputs;  // the files written
};

// What each command writes in output.directory (check_inputs_not_overwritten refuses an input among them).
extern const std::vector<std::string> gradient_output_names, born_output_names, migrate_output_names;

// The misfit of inversion.misfit at the model and its gradient with respect to inversion.parameterisation, with the
// source illumination: gradient.h5 (/gradient, /illumination, /velocity, /misfit_per_shot; root attribute misfit).
// Needs [inversion]'s observed data.
ImagingSummary run_gradient(const Case& c, const ImagingOptions& options);

// The Born (linearised) data of the perturbation at the model: born_traces.h5 in the traces.h5 schema (so that
// `specwave segy export` and inversion.observed read it).
ImagingSummary run_born(const Case& c, const ImagingOptions& options);

// Reverse-time migration of [inversion]'s observed data in the model ([migration] says how): the zero-lag
// cross-correlation image, the adjoint of Born applied to the data (= minus the least-squares gradient with
// respect to velocity), filtered by -Laplacian and divided by the source illumination. image.h5 (/image,
// /raw_image, /illumination) with XDMF and VTKHDF views, and image_slice.png (xz through the grid's middle y).
ImagingSummary run_migration(const Case& c, const ImagingOptions& options);

// -Laplacian of a (nz, ny, nx) array by second differences with the grid spacings, over the axes longer than one
// point; an edge point takes its missing neighbour as itself (zero normal derivative).
std::vector<double> negative_laplacian(const GridSpec& grid, std::span<const double> values);

}  // namespace specwave
