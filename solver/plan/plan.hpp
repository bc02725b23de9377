#pragma once
// Preflight: everything checked and derived before any large allocation. make_plan() throws Error with
// one clear line for every bad input; `specwave check` prints the plan without running.
#include <array>
#include <span>
#include <string>
#include <vector>

#include "solver/case/case.hpp"
#include "solver/plan/acquisition.hpp"
#include "solver/plan/attenuation.hpp"
#include "solver/plan/model.hpp"

namespace specwave {

class Comm;

struct Plan {
  double dt = 0, dt_max = 0, cfl = 0;  // cfl = dt / dt_max
  int nt = 0;                          // samples per trace = time steps per shot
  // traces.h5's sampling: the simulation's (nt, dt), or output.trace_dt's (trace_nt samples up to time.duration)
  int trace_nt = 0;
  double trace_dt = 0;
  double f_max = 0;  // highest significant frequency of the wavelets (Hz)
  double points_per_wavelength = 0, points_per_wavelength_floor = 0;
  double pml_frequency = 0;                     // Hz (alpha_max = pi f)
  double pml_power = 2, pml_reflection = 1e-3;  // the case's values or the method's defaults
  std::size_t memory_bytes = 0, memory_available = 0;
  BackendKind backend = BackendKind::cpu;  // resolved (never auto)
  std::string backend_note;                // why this backend was picked
  int threads = 1;
  int shots_in_flight = 1;  // shots advanced together (GPU: when one shot cannot fill the device)
  // MPI: `ranks` ranks in `shot_groups` groups; each group's grid decomposed over process_grid (pz, py, px).
  int ranks = 1, shot_groups = 1;
  std::array<int, 3> process_grid{1, 1, 1};
  int device = 0;  // the CUDA device this rank drives (run.device on one rank; one per rank on a node under MPI)
  // CUDA: that device's memory when the plan was made, and how many ranks of this node drive it (share_devices)
  std::size_t device_free_bytes = 0, device_total_bytes = 0;
  std::array<unsigned char, 16> device_uuid{};
  int ranks_on_device = 1;  // MPI ranks driving this rank's GPU (the same uuid), 1 without MPI
  VelocityModel model;      // this rank's block of it in a decomposed run (model.block), the whole grid otherwise
  SlsFit sls;               // [attenuation]'s standard-linear-solid fit (empty: none)
  // The velocity that sets dt_max and the FDTD CPML damping d0: the model's v_max, or inversion.velocity_max
  // when that is larger, so that dt and the profiles stay fixed while an inversion changes the model.
  double v_reference = 0;
  // With attenuation, how much faster than v its fastest (unrelaxed) wave is over the grid's Q (1 without).
  double unrelaxed_speedup = 1;
  std::vector<std::vector<PointStencil>> sources;          // [shot][source]
  std::vector<std::vector<std::vector<double>>> wavelets;  // [shot][source][n]
  // The shared receivers' stencils (c.receivers). A shot with its own receivers (ShotSpec::receivers) has its stencils
  // made when it runs (shot_receivers.hpp): a survey's shots x receivers would not fit here.
  std::vector<PointStencil> receivers;
  // The spectral method's point weights (solver/plan/acquisition.hpp): the band they fit, rad per sample of each axis,
  // and c_ref dt / h of each axis.
  std::array<double, 3> spectral_point_band{0, 0, 0}, spectral_point_courant{0, 0, 0};
  // The elastic scheme under a free surface: lambda / (lambda + 2 mu) = 1 - 2 vs^2 / vp^2 of the model on the surface's
  // nodes (ny x nx, C order), which its particle-velocity points use (make_elastic_stencil); else empty. From the
  // plan's model: an inversion keeps its starting model's.
  std::vector<double> surface_ratio;
  std::vector<std::string> notes;  // advice that does not stop the run (printed with the plan)
};

// What `forward` and `invert` write in output.directory (docs/hdf5-schema.md; "checkpoint" a folder).
extern const std::vector<std::string> forward_output_names, invert_output_names;
// Refuses (ExitCode::output_error, naming the key) an input of the case (the case file, model.file, a wavelet file,
// inversion.observed, the true model's file) that is one of `output_names` in output.directory, or inside its
// checkpoint folder, or a ".partial" of one: the run would overwrite its own input (model.file = "out/model.h5").
// Called by each command before it writes anything.
void check_inputs_not_overwritten(const Case& c, const std::vector<std::string>& output_names);

// Writes confined to the output folder (--confine-writes, SPECWAVE_CONFINE_WRITES=1; off by default): refuses
// (ExitCode::output_error, naming the key) an output.directory that the command line did not give and that lies
// outside the current directory, and an inversion.scratch_directory outside the output folder. So a case file
// from someone else cannot make a run write (and replace files) elsewhere.
void check_writes_confined(const Case& c, bool output_from_command_line);

// Refuses run.threads above max_threads (ExitCode::invalid_case naming the key) and sets OpenMP's thread count
// when it is > 0: the one place a run's thread count is applied.
void apply_threads(const Case& c);

// The smallest n' >= n whose prime factors are all <= 7 (FFT lengths that FFTW and cuFFT transform fast).
int fft_friendly_length(int n);

// Points-per-wavelength floor of an FDTD scheme of the given order (docs/numerics.md).
double points_per_wavelength_floor(int order);
// The spectral method's floor: where its error over 20 wavelengths reaches 1e-3 (docs/validation.md, accuracy study).
inline constexpr double points_per_wavelength_floor_spectral = 2.5;
// dt limit of the spectral method: that of the uncorrected pseudo-spectral leapfrog (docs/numerics.md).
double stable_dt_spectral(const GridSpec& grid, double v_max);
// Largest stable dt for the scheme (leapfrog with the order-2R Laplacian).
double stable_dt(const GridSpec& grid, int order, double v_max);
// Largest stable dt of the staggered velocity-pressure scheme (docs/numerics.md, "Variable density").
double stable_dt_staggered(const GridSpec& grid, int order, double v_max);
// The staggered scheme's dt_max for a model holding the whole grid's velocity and density (docs/numerics.md,
// "Stability"): the analytic limit at v_stable (times `speedup`, the attenuation's), or less where a density contrast
// raises the operator's largest eigenvalue. The plan's, and a gradient propagator's check of a new model.
double staggered_dt_max(const Case& c, const VelocityModel& m, double v_stable, double speedup);
// The largest factor by which a density field with values in [rho, ratio rho] raises the staggered operator's
// largest eigenvalue along an axis above the constant density's (order 2R), over periodic two-valued layerings of
// periods up to 4R + 3 (docs/numerics.md, "Stability": the worst fields found by a wider search are of this kind).
double staggered_density_growth(int R, double ratio);
// dt_max of the staggered scheme for every density within inversion.density_min/max when `invert` updates the
// density: stable_dt_staggered at v_stable over sqrt(staggered_density_growth); +infinity otherwise.
double staggered_density_bounds_dt(const Case& c, double v_stable);
// Bytes the run needs on the host (fields, CPML slabs, model, traces, output buffers).
std::size_t estimate_memory_bytes(const Case& c, int nt);
// Bytes a run of this case holds on the GPU per shot in flight (CUDA propagators: fields, spectra, cuFFT work
// area, source patterns, traces).
std::size_t estimate_device_memory_bytes(const Case& c, int nt);
// The same for a block of `shape` points (nz, ny, nx) of a domain-decomposed run.
std::size_t estimate_device_memory_bytes(const Case& c, int nt, const std::array<int, 3>& shape);
// "1.5 GiB": bytes in binary units, for messages.
std::string human_bytes(double bytes);
// MemAvailable from /proc/meminfo (0 if unknown).
std::size_t available_memory_bytes();

// Where this process runs: the MPI ranks of the run (Comm::world()), this rank, and the ranks on this node
// (Comm::node()). The plan splits the ranks into shot groups and decomposes each group's grid, refuses what
// cannot run that way, and gives each rank its GPU. Only rank 0 probes the output directory (the probe
// creates and removes it).
struct RankPlacement {
  int ranks = 1, rank = 0;
  int node_ranks = 1, node_rank = 0;
  const Comm* world = nullptr;  // all `ranks` (needed when ranks > 1: the model is reduced over them)
  bool writes_output = true;    // false: the caller writes no files (the Python module), output.directory unchecked
};
Plan make_plan(const Case& c, const RankPlacement& placement = {});
// The GPU a rank drives among `devices`: run.device on one rank; under MPI, node rank k drives GPU k, and more
// ranks on a node than GPUs is an error (Error backend_unavailable, with the fix) unless run.share_devices
// shares them round-robin.
int device_of_rank(const Case& c, const RankPlacement& where, int devices);
// How many ranks drive the same GPU as `rank`: keys holds 3 values a rank (uses CUDA, the GPU's uuid as two
// 64-bit words), gathered over the ranks.
int ranks_on_device(std::span<const long long> keys, int rank);
// Shot groups for `ranks` ranks: the case's run.shot_groups, or the largest divisor of ranks that is at most
// the number of shots (shots in parallel scale perfectly; decomposition is for grids too large for one rank).
int choose_shot_groups(const Case& c, int ranks);
std::string describe_plan(const Case& c, const Plan& plan);

}  // namespace specwave
