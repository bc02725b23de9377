#pragma once
// ParaView views of specwave's grid outputs (docs/hdf5-schema.md, "ParaView"): small VTKHDF 1.0 ImageData files
// (ParaView 5.10 and later open them with their default reader, VTK's vtkHDFReader) whose point arrays are HDF5
// links into the output file beside them, so no field is stored twice: a 3-D dataset through an external link, one
// slice of a 4-D dataset (a snapshot, an inversion iteration) through a virtual dataset. The links name the output
// file without a folder, so the output folder can be moved or copied whole.
#include <string>
#include <vector>

#include "solver/case/case.hpp"

namespace specwave::io {

// One point array of a view: `dataset` (an absolute path inside the output file), 3-D (nz, ny, nx), or, with
// index >= 0, slice `index` of a 4-D dataset along its first axis.
struct ViewArray {
  std::string name, dataset;
  long long index = -1;
};

// Writes `view_path` (atomically: a temporary renamed) with the arrays of `h5_path`, which must exist, be
// complete and lie in the same folder, on `grid`. VTK's axes are x, y, z: the extent is nx, ny, nz points with
// the grid's spacing and origin in that order (z is depth, pointing down in the model, up on ParaView's screen).
// Error(output_error) naming the file when it cannot be written.
void write_vtkhdf_view(const std::string& view_path, const std::string& h5_path, const GridSpec& grid,
                       const std::vector<ViewArray>& arrays);

// The view files of a wavefield file with these shots, snapshot steps and final field: for each shot s,
// "<stem>_shot<s:04>_step<n:06>.vtkhdf" for the snapshot at step n (ParaView groups them into one time series per
// shot) and "<stem>_shot<s:04>_final.vtkhdf"; the paths are next to `h5_path`.
std::vector<std::string> wavefield_view_paths(const std::string& h5_path, int shots, const std::vector<int>& steps,
                                              bool final_field);

}  // namespace specwave::io
