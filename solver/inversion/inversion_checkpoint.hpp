#pragma once
// The restart state of `specwave invert` (docs/hdf5-schema.md, "inversion_state.h5"): the optimiser's state in
// fp64 (model, misfit and gradient, L-BFGS pairs, NLCG direction, last step) and the per-iteration records,
// written atomically after every completed iteration. `invert --resume` reads it, with inversion.h5 for the
// earlier models, and continues with bitwise the same iterates as a run that never stopped.
#include <string>
#include <vector>

#include "solver/case/case.hpp"
#include "solver/inversion/inversion.hpp"
#include "solver/optim/optimizer.hpp"

namespace specwave {

struct InversionCheckpoint {
  optim::OptimizerState state;
  std::vector<InversionIteration> history;  // iteration 0 .. state.iteration
  std::string optimizer;
  std::string case_text;  // the case the run started with
  // What a resumed run must share with the one that wrote the state: the case text and the checksums of the
  // inputs it names by file (starting and true models, observed data), nt and dt (inversion_fingerprint).
  std::string fingerprint;
  // Multiscale: the band the state belongs to, the iterations of the earlier bands, and the band's misfit at its
  // start (the reference of relative_misfit).
  int band = 0, offset = 0;
  double band_misfit0 = 0;
  // inversion.illumination_compensation: the band's illumination (the preconditioner's D), empty otherwise.
  std::vector<double> illumination;
  // inversion.source_estimation: the band's source filters (SourceFilters::flat), empty otherwise.
  std::vector<double> source_filters;
};

// Every array is written with its checksum (io/checksum.hpp) and verified when read.
void write_inversion_checkpoint(const std::string& path, const InversionCheckpoint& checkpoint);
// Error(input_error) naming the file when it is missing, does not match n parameters, or an array fails its
// checksum.
// n: the optimiser's vector length; points: the grid's (the illumination's length; 0: n).
InversionCheckpoint read_inversion_checkpoint(const std::string& path, std::size_t n, std::size_t points = 0);

}  // namespace specwave
