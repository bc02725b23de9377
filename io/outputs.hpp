#pragma once
// specwave's output files (docs/hdf5-schema.md): traces.h5, wavefield.h5 (+ .xdmf for ParaView), model.h5.
// Each is written atomically (temporary name, close, rename) and carries the root provenance attributes.
#include <array>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "io/hdf5.hpp"
#include "solver/case/case.hpp"

namespace specwave::io {

// Every file below may be parallel (h5::Parallel): then each rank constructs it with the same arguments, and
// every write and commit() is a collective call in which a rank passes what it holds (possibly nothing).
// Resumable (h5::Resumable, a checkpointed run): written as "<path>.partial"; with reopen, the partial file of
// the interrupted run is opened again and its datasets are written on, not made anew.

// Shots that share their receivers: /traces (n_shots, n_receivers, n_samples), /receiver_coordinates (n_receivers, 3).
// Shots with their own receivers (ragged, schema 1.2): /traces (n_traces, n_samples) with shot s's traces in rows
// /shot_first_trace[s] .. /shot_first_trace[s + 1] - 1 (n_shots + 1 entries), /receiver_coordinates (n_traces, 3).
// Both: /source_coordinates (n_sources, 3) with /source_shot (n_sources): the shot of each source.
class TraceFile {
 public:
  TraceFile(const std::string& path, const h5::Provenance& provenance, bool fp64, int n_shots,
            const std::vector<Vec3>& receivers, const std::vector<std::vector<Vec3>>& sources, int nt, double dt,
            const h5::Parallel& parallel = {}, const h5::Resumable& resumable = {});
  // The ragged layout: shot_receivers[s] are shot s's receivers.
  TraceFile(const std::string& path, const h5::Provenance& provenance, bool fp64,
            const std::vector<std::vector<Vec3>>& shot_receivers, const std::vector<std::vector<Vec3>>& sources, int nt,
            double dt, const h5::Parallel& parallel = {}, const h5::Resumable& resumable = {});
  // /receiver_component: what each row of /receiver_coordinates records (0 pressure, 1 vz, 2 vy, 3 vx; an int32 each,
  // its attribute `names` = "p,vz,vy,vx"), written only when some receiver records particle velocity (absent: every
  // trace is pressure). Parallel: collective. A reopened (resumed) file has it already.
  void write_components(const std::vector<ReceiverComponent>& components);
  // (shot's receivers, nt). Parallel: collective; a rank with no shot to write passes shot = -1.
  void write_shot(int shot, std::span<const double> traces);
  void flush() { file_.flush(); }
  void commit() {
    traces_.close();
    file_.commit();
  }

 private:
  void create_traces(const std::vector<hsize_t>& dims, double dt, const std::string& axis_order);
  void write_sources(const std::vector<std::vector<Vec3>>& sources);

  h5::AtomicWriter file_;
  h5::Handle traces_;
  bool fp64_;
  std::size_t per_shot_;
  std::vector<std::int64_t> first_trace_;  // the ragged layout's row offsets (n_shots + 1); empty: shared receivers
  int nt_ = 0;
};

// The row offsets of a ragged traces.h5 (its /shot_first_trace: n_shots + 1 non-decreasing entries from 0); empty
// when the file has no such dataset. Errors (ExitCode::input_error) name the file and what is wrong.
std::vector<std::int64_t> read_shot_first_trace(const h5::Reader& reader);

// /shot_NNNN/snapshots (n_snapshots, nz, ny, nx) with attribute steps and times, /shot_NNNN/final (nz, ny, nx).
class WavefieldFile {
 public:
  WavefieldFile(const std::string& path, const h5::Provenance& provenance, bool fp64, const GridSpec& grid, int n_shots,
                const std::vector<int>& snapshot_steps, double dt, bool final_field, int nt,
                const h5::Parallel& parallel = {}, const h5::Resumable& resumable = {});
  // The whole grid (nz, ny, nx) of one shot.
  template <class T>
  void write_snapshot(int shot, int index, const T* field);
  template <class T>
  void write_final(int shot, const T* field);
  // A block [begin, begin + extent) of the grid, C order: the part of a field one rank holds. Parallel:
  // collective for `shot` (ranks holding nothing of it pass a zero extent).
  using Box = std::array<int, 3>;
  template <class T>
  void write_snapshot_block(int shot, int index, const Box& begin, const Box& extent, const T* field);
  template <class T>
  void write_final_block(int shot, const Box& begin, const Box& extent, const T* field);
  void flush() { file_.flush(); }
  void commit();  // also writes the XDMF sidecar next to the file

 private:
  h5::AtomicWriter file_;
  std::vector<h5::Handle> snapshots_, finals_;
  GridSpec grid_;
  std::vector<int> steps_;
  double dt_;
  bool fp64_;
  int nt_;
};

// /velocity (nz, ny, nx) float32, m/s, with spacing/origin; plus an XDMF sidecar. `velocity` holds the box
// [begin, begin + extent) of the grid (all of it on one rank). Parallel: collective, each rank writing its box
// (a zero extent: nothing). With a `density` (the whole grid, one rank), /density (kg/m^3) too, which
// model.density_dataset = "/density" reads back; with a `shear` velocity (the elastic scheme, the whole grid) likewise
// /shear_velocity (m/s), which model.shear_dataset = "/shear_velocity" reads back.
void write_model_file(const std::string& path, const h5::Provenance& provenance, const GridSpec& grid,
                      std::span<const float> velocity, const std::array<int, 3>& begin = {0, 0, 0},
                      const std::array<int, 3>& extent = {-1, -1, -1}, const h5::Parallel& parallel = {},
                      std::span<const float> density = {}, std::span<const float> shear = {});

// Arrays of a run's result on the case's grid (the gradient of `specwave gradient`, the image of `specwave migrate`):
// each (nz, ny, nx) float64 with its units and the grid attributes, plus 1-D float64 datasets (per-shot values)
// and root attributes (scalars), written atomically by one rank; an XDMF sidecar and a VTKHDF view of the grid
// arrays beside it.
struct GridArray {
  std::string name, units;
  std::span<const double> values;
};
struct NamedValues {
  std::string name, units;
  std::vector<double> values;
};
void write_grid_arrays_file(const std::string& path, const h5::Provenance& provenance, const GridSpec& grid,
                            const std::vector<GridArray>& arrays, const std::vector<NamedValues>& vectors,
                            const std::vector<std::pair<std::string, double>>& attributes,
                            const std::vector<std::pair<std::string, std::string>>& text_attributes = {});

// Grid attributes on a dataset: spacing, origin (m, z-y-x order), units.
void write_grid_attributes(hid_t dataset, const GridSpec& grid);

}  // namespace specwave::io
