#pragma once
// A Case is everything one case file describes, independent of backend and of how many ranks run it.
// It is filled by io/case_file.cpp (TOML, docs/case-file.md) or built in code (tests, demo).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace specwave {

using Vec3 = std::array<double, 3>;  // (z, y, x), metres

enum class Precision { fp32, fp64 };
enum class BackendKind { cpu, cuda, auto_select };
enum class Method { fdtd, spectral };
// FDTD's discretisation (docs/numerics.md): the second-order pressure equation (constant density), the staggered
// first-order velocity-pressure system (variable density, "Variable density: the staggered velocity-pressure scheme"),
// or the isotropic elastic velocity-stress system ("Isotropic elastic waves").
enum class Formulation { second_order, staggered, elastic };

// The smallest grid spacing accepted (m): 1 nm, far below any acoustic or seismic grid, far above the subnormal
// numbers a misread value gives (a spacing of 1e-320 would make dt 0).
inline constexpr double min_spacing = 1e-9;

// The densities accepted (kg/m^3), from a thin gas to far beyond any rock: outside, a value is in other units or
// misread, and a velocity point's 1 / rho would overflow or vanish in fp32.
inline constexpr double min_density = 1e-3, max_density = 1e6;

struct GridSpec {
  std::array<int, 3> shape{0, 0, 0};  // nz, ny, nx (points, PML included)
  Vec3 spacing{0, 0, 0};              // dz, dy, dx (m)
  Vec3 origin{0, 0, 0};               // position of point (0,0,0) (m)
  long long points() const { return 1LL * shape[0] * shape[1] * shape[2]; }
  // A 2-D run (x-z): one point along y (docs/numerics.md, "2-D runs"). Its y axis is inactive: no derivative, no
  // absorbing layer, no stencil along it, and a point source is a 2-D one (per unit area of the x-z plane).
  bool two_d() const { return shape[1] == 1; }
  bool active(int axis) const { return !(axis == 1 && two_d()); }
  // The volume a grid point stands for (m^3; in 2-D dz dx, m^2): a point source injects its amplitude over it.
  double cell_volume() const { return spacing[0] * (two_d() ? 1.0 : spacing[1]) * spacing[2]; }
  // The largest and the smallest spacing of the active axes (m).
  double largest_spacing() const { return std::max({spacing[0], two_d() ? 0.0 : spacing[1], spacing[2]}); }
  double smallest_spacing() const {
    return two_d() ? std::min(spacing[0], spacing[2]) : std::min({spacing[0], spacing[1], spacing[2]});
  }
  Vec3 position(int iz, int iy, int ix) const {
    return {origin[0] + iz * spacing[0], origin[1] + iy * spacing[1], origin[2] + ix * spacing[2]};
  }
};

// The box of the gradient smoother's FFTs (solver/inversion/preconditioner.cpp): the grid padded by ceil(3 sigma / h)
// points on each side of every active axis (the case-file check bounds it; the device estimate counts it).
inline std::array<long long, 3> smoothing_box(const GridSpec& g, double sigma_m) {
  std::array<long long, 3> box{};
  for (int a = 0; a < 3; ++a)
    box[std::size_t(a)] = g.shape[a] + (g.active(a) ? 2 * (long long)std::ceil(3 * sigma_m / g.spacing[a]) : 0);
  return box;
}

struct ModelSpec {
  // array: values given in code (the Python module's numpy model), nz * ny * nx in (z, y, x) C order, m/s
  enum class Kind { homogeneous, layered, gaussian, file, array };
  Kind kind = Kind::homogeneous;
  double velocity = 0;             // homogeneous: v (m/s); gaussian: background v
  std::vector<double> interfaces;  // layered: depths z (m) of the interfaces, increasing
  std::vector<double> velocities;  // layered: one more than interfaces, top to bottom (m/s)
  double anomaly = 0;              // gaussian: peak velocity perturbation (m/s, may be negative)
  Vec3 center{0, 0, 0};            // gaussian: centre (m)
  double radius = 0;               // gaussian: standard deviation (m)
  std::string file;                // file: its path (absolute, or resolved against the case file's folder)
  // file: the file's format (model.format): HDF5 (a dataset, its grid in attributes), raw binary (the layout in the
  // case file) or a SEG-Y velocity cube (x, y from the CDP coordinates; z from sample_spacing and sample_origin).
  enum class Format { hdf5, raw, segy };
  Format format = Format::hdf5;
  std::string dataset = "/velocity";  // hdf5: dataset name
  // hdf5: the model's index along the first axis of a 4-D dataset (k, nz, ny, nx), e.g. an iteration of inversion.h5's
  // /velocity; none: the dataset is 3-D
  std::optional<int> index;
  // raw: the file's grid shape (nz, ny, nx), storage (value type, byte order, axes from slowest to fastest: 0 z,
  // 1 y, 2 x); raw and segy: its spacing and origin (m, z-y-x), optional when it is the case's grid.
  std::array<std::int64_t, 3> file_shape{};
  bool file_float64 = false, file_big_endian = false;
  std::array<int, 3> file_axis_order{0, 1, 2};
  std::optional<Vec3> file_spacing, file_origin;
  double sample_spacing = 0, sample_origin = 0;       // segy: the depth step of a sample and the first sample's z (m)
  std::shared_ptr<const std::vector<double>> values;  // array: the velocities (shared: a Case copy is cheap)
  // model.density (kg/m^3): the constant density of the medium. It changes no pressure (the equation is written so
  // that a constant density drops out); particle-velocity receivers need it (v = -(1 / rho) int grad p dt). None: not
  // given.
  std::optional<double> density;
  // A density model (kg/m^3), which runs FDTD's staggered scheme: layered, one density a layer (model.densities);
  // file (HDF5), a dataset of the model file on the velocity's grid (model.density_dataset); file (raw, SEG-Y), a file
  // of the velocity file's format and layout (model.density_file; resolved as `file`). Empty: none.
  std::vector<double> densities;
  std::string density_dataset, density_file;
  bool has_density_model() const { return !densities.empty() || !density_dataset.empty() || !density_file.empty(); }
  // The shear velocity (m/s) of an elastic medium (scheme.formulation = "elastic"; 0 is a fluid): a constant
  // (model.shear_velocity, any model type), one a layer (model.shear_velocities), or a dataset of the HDF5 model file
  // on the velocity's grid (model.shear_dataset), or a raw or SEG-Y file of the velocity file's format and layout
  // (model.shear_file). None: an acoustic model.
  std::optional<double> shear_velocity;
  std::vector<double> shear_velocities;
  std::string shear_dataset, shear_file;
  // gaussian with a shear_velocity: a Gaussian anomaly of vs too (m/s, may be negative; 0: none) of the same radius at
  // shear_center (m; the velocity anomaly's centre when not given).
  double shear_anomaly = 0;
  std::optional<Vec3> shear_center;
  bool has_shear_velocity() const {
    return shear_velocity || !shear_velocities.empty() || !shear_dataset.empty() || !shear_file.empty();
  }
  // The case-file key that gives the shear velocity, the density model (errors name the one the case wrote).
  const char* shear_key() const {
    return shear_velocity              ? "shear_velocity"
           : !shear_velocities.empty() ? "shear_velocities"
           : !shear_dataset.empty()    ? "shear_dataset"
                                       : "shear_file";
  }
  const char* density_model_key() const {
    return !densities.empty() ? "densities" : !density_dataset.empty() ? "density_dataset" : "density_file";
  }
};

struct WaveletSpec {
  enum class Kind { ricker, file };
  Kind kind = Kind::ricker;
  double peak_frequency = 0;         // ricker: Hz
  std::optional<double> delay;       // ricker: s, default 1.5 / peak_frequency
  double amplitude = 1;              // scales the wavelet (both kinds)
  std::string file;                  // file: HDF5 path
  std::string dataset = "/wavelet";  // file: 1-D dataset with a `dt` attribute (s)
};

// A source's kind (docs/numerics.md, "Force sources and particle-velocity receivers"): pressure, a point of volume
// injection (f = s(t) delta(x - x_s) in m u_tt - lap u = f); force, a point force s(t) d delta(x - x_s) along the unit
// vector d (f = -div(d delta) s(t): a dipole).
// moment (the elastic scheme only): a moment tensor m_ij s(t), s the moment rate's time function (docs/numerics.md,
// "Isotropic elastic waves").
enum class SourceKind { pressure, force, moment };

struct SourceSpec {
  Vec3 position{0, 0, 0};
  WaveletSpec wavelet;
  SourceKind kind = SourceKind::pressure;
  Vec3 direction{1, 0, 0};  // force: the unit vector d (z, y, x), default vertical (z down)
  // moment: the tensor's m_zz, m_yy, m_xx, m_zy, m_zx, m_yx (N m; the wavelet's amplitude scales them)
  std::array<double, 6> moment{0, 0, 0, 0, 0, 0};
};

// What a receiver records: pressure, or one particle-velocity component (v = -(1 / rho) int grad p dt); with the
// elastic scheme also the divergence of the particle velocity (the P waves' part, 1/s) and a component of its curl (the
// S waves', 1/s).
enum class ReceiverComponent : std::uint8_t {
  pressure = 0,
  vz = 1,
  vy = 2,
  vx = 3,
  divergence = 4,
  curl_z = 5,
  curl_y = 6,
  curl_x = 7
};
// The divergence and the curl: the elastic scheme's only.
inline bool velocity_derivative(ReceiverComponent r) { return std::uint8_t(r) >= 4; }

struct ShotSpec {
  std::vector<SourceSpec> sources;  // fired together
  // This shot's own receivers (a [shots.receivers] table, or a spread that moves with the shot: docs/case-file.md),
  // in trace order; empty: the case's shared `receivers`.
  std::vector<Vec3> receivers{};
  // Their components, one a receiver (empty: every receiver records pressure).
  std::vector<ReceiverComponent> receiver_components{};
};

// [attenuation] (docs/numerics.md, "Attenuation"): a visco-acoustic medium of L standard linear solids fitted to a
// constant Q over a band; runs FDTD's staggered scheme.
struct AttenuationSpec {
  bool present = false;
  std::optional<double> q;                    // a constant Q
  std::vector<double> q_layers;               // or one Q a layer of a layered model
  std::string q_dataset;                      // or a dataset of the (HDF5) model file
  std::optional<std::array<double, 2>> band;  // f_1, f_2 (Hz); default [f_max / 10, f_max] of the wavelets
  int mechanisms = 3;                         // L, 1..8
  std::optional<double> reference_frequency;  // Hz, where v is the phase velocity; default sqrt(f_1 f_2)
};

struct TimeSpec {
  double duration = 0;       // s (simulated time; nt = round(duration / dt) + 1 samples)
  std::optional<double> dt;  // s; default cfl_safety * dt_max
  double cfl_safety = 0.8;
};

// Limits the case file and the preflight enforce, each with an error naming the key (docs/case-file.md): time
// steps of a run (a 10 s record at 0.1 ms is 1e5) and OpenMP threads (run.threads, --threads; the OpenMP runtime
// fails far below 100000).
inline constexpr long long max_time_steps = 100'000'000;
inline constexpr int max_threads = 1024;

struct SchemeSpec {
  Method method = Method::fdtd;
  // scheme.formulation: the staggered scheme when the model has a density model, unless the case file says otherwise
  Formulation formulation = Formulation::second_order;
  int order = 8;                                    // even, 2..16
  std::optional<double> min_points_per_wavelength;  // overrides the scheme's floor
};

// The absorbing boundary of the spectral method (docs/numerics.md); FDTD always uses its CPML.
enum class SpectralAbsorber { pml, damping };

struct BoundarySpec {
  int pml_width = 20;         // points per absorbing face
  bool free_surface = false;  // top face (z = origin) is pressure-release
  // Profile exponent p and target reflection R0; unset: the defaults of the method and absorber
  // (pml_profile_defaults): FDTD CPML p = 2, R0 = 1e-3; spectral PML p = 4, R0 = 1e-7; damping p = 4, R0 = 1e-2.
  std::optional<double> pml_power;
  std::optional<double> pml_reflection;
  std::optional<double> pml_frequency;  // Hz, alpha_max = pi f; default the largest Ricker peak frequency
  // The elastic scheme's multi-axial PML (M-PML): each layer also damps the other axes' derivatives, with its damping
  // profile times this ratio (0: none); unset: default_pml_multiaxial. docs/numerics.md, "The elastic CPML".
  std::optional<double> pml_multiaxial;
  SpectralAbsorber spectral_absorber = SpectralAbsorber::pml;  // spectral method only
};

// The elastic scheme's M-PML ratio p when the case leaves boundary.pml_multiaxial out, the largest it may take, and
// the exponent e of its profile: a layer damps the other axes' derivatives with p d(xi) xi^e (xi > 1/2), d the CPML's
// damping (docs/numerics.md, "The elastic CPML"; the choice measured in docs/validation.md, "Late growth").
inline constexpr double default_pml_multiaxial = 0.03;
inline constexpr double max_pml_multiaxial = 1;
inline constexpr double pml_multiaxial_exponent = 8;
// The M-PML's profile is 0 where xi <= this (the layer's inner half, where p d xi^8 < 1e-3 p d0): no work there.
inline constexpr double pml_multiaxial_reach = 0.5;
// The points nearest a face that the M-PML's profile reaches in a layer of `width` points: xi > 1/2 is s < W / 2 from
// the face, on nodes and half nodes (its work and its memory slabs' extent along the axis, less the stencil radius).
constexpr int elastic_multiaxial_points(int width) { return width < width / 2 + 1 ? width : width / 2 + 1; }

// The defaults of pml_power and pml_reflection for a method and spectral absorber (docs/case-file.md).
struct PmlProfileDefaults {
  double power, reflection;
};
inline PmlProfileDefaults pml_profile_defaults(bool spectral, SpectralAbsorber absorber) {
  if (!spectral) return {2, 1e-3};
  return absorber == SpectralAbsorber::pml ? PmlProfileDefaults{4, 1e-7} : PmlProfileDefaults{4, 1e-2};
}

struct RunSpec {
  Precision precision = Precision::fp32;
  BackendKind backend = BackendKind::cpu;
  int threads = 0;                      // 0: OpenMP default
  int check_every = 50;                 // steps between blow-up checks (and stop-signal polls)
  int checkpoint_every = 0;             // steps between checkpoints (0: none; a stop signal still writes one)
  double checkpoint_minutes = 0;        // minutes between checkpoints (0: none)
  double progress_seconds = 5;          // seconds between progress lines
  double max_amplitude = 1e20;          // |u| above this is a blow-up
  double late_growth_factor = 1000;     // a field this many times its earlier largest once the sources are silent
                                        // is a blow-up too (LateGrowth; 0: no such check)
  int device = 0;                       // CUDA device index
  double device_memory_fraction = 0.7;  // the run may use at most this fraction of the GPU memory free at start
  // MPI (docs/architecture.md): the ranks form shot_groups groups that run different shots side by side, each
  // group's grid decomposed over its ranks along process_grid (pz, py, px). 0 / unset: chosen by the plan.
  int shot_groups = 0;
  std::optional<std::array<int, 3>> process_grid;
  bool share_devices = false;  // CUDA under MPI: more ranks than GPUs on a node share them round-robin
  // Flush-to-zero and denormals-are-zero on the CPU kernels' threads (kernels/cpu/flush_denormals.hpp)
  bool flush_denormals = true;
};

struct OutputSpec {
  std::string directory = "out";  // resolved against the case file's folder unless absolute
  bool traces = true;
  int snapshot_every = 0;  // steps between wavefield snapshots (0: none)
  bool final_field = true;
  bool plots = true;  // PNG: shot gathers, wavefield slice, model slice
  // The shots whose gather is plotted (ascending); empty: every shot, or 50 spread evenly over more (plotted_shots).
  std::vector<int> plot_shots;
  // traces.h5 at this sample interval (s) instead of the simulation's dt: band-limited resampling (the simulation
  // then runs beyond time.duration by the interpolator's window, so that every sample up to time.duration is exact).
  std::optional<double> trace_dt;
};

// The model parameter an inversion updates and its gradient is taken with respect to (docs/numerics.md).
enum class Parameterisation { velocity, slowness2 };
// Where the adjoint pass gets the forward wavefields (solver/propagators/history/wavefield_history.hpp).
enum class WavefieldStorage { auto_select, memory, checkpoints, binomial, disk, boundary };

// [inversion]: the data to fit and how the gradient is computed. The case's [model] is the starting model.
struct InversionSpec {
  bool present = false;                   // the case file has an [inversion] table
  std::optional<ModelSpec> true_model;    // synthesises the observed data (a test of the method: same engine)
  std::string observed_file;              // or: a traces.h5 of this acquisition (docs/hdf5-schema.md)
  bool observed_geometry_checked = true;  // its coordinates against the case's (observed_geometry = "checked")
  std::string observed_dataset = "/traces";
  Parameterisation parameterisation = Parameterisation::velocity;
  // inversion.parameters: what the gradient is taken with respect to and what `invert` updates: the velocity (always)
  // and, with a density model (the staggered scheme), the density too ("density"; its gradient at fixed velocity).
  bool density_parameter = false;
  // The elastic scheme's shear velocity too ("shear_velocity"; its gradient at fixed vp and density). Fluid points
  // (vs = 0 in the starting model) stay fluid.
  bool shear_parameter = false;
  // Or the Lame parameters ("lambda" and "mu", with "density" optional; the elastic scheme): the optimiser's blocks are
  // lambda and mu (Pa) and the density, each gradient at fixed other two (docs/numerics.md, "Lame parameters");
  // shear_parameter is then false, and `invert` still records vp, vs and the density and their gradients.
  bool lame = false;
  // The shear velocity changes in an inversion (and is recorded): inverted itself, or through the Lame parameters.
  bool shear_velocity_changes() const { return shear_parameter || lame; }
  std::string misfit = "least_squares";
  // Bounds on the velocity (m/s). velocity_max, when above the starting model's largest velocity, also sets
  // dt and the CPML damping, so that neither changes while the model does.
  std::optional<double> velocity_min, velocity_max;
  // Bounds on the density (kg/m^3) when `invert` updates it (inversion.parameters names "density").
  std::optional<double> density_min, density_max;
  // Bounds on the shear velocity (m/s) when `invert` updates it (inversion.parameters names "shear_velocity").
  std::optional<double> shear_velocity_min, shear_velocity_max;
  // Bounds on lambda and mu (Pa) when `invert` updates them (inversion.parameters names "lambda", "mu").
  std::optional<double> lambda_min, lambda_max, mu_min, mu_max;
  WavefieldStorage wavefield_storage = WavefieldStorage::auto_select;
  std::optional<double> wavefield_memory_gib;  // budget for the forward wavefields; default half of MemAvailable
  std::string scratch_directory;  // wavefield_storage = "disk": its folder ("" : unset, the output directory)
  // `specwave invert` (solver/inversion/inversion.hpp): a fixed number of iterations of one optimiser.
  int iterations = 10;
  std::string optimizer = "lbfgs";         // "lbfgs", "nlcg" or "steepest"
  int lbfgs_memory = 5;                    // curvature pairs kept by L-BFGS
  double initial_step_fraction = 0.01;     // first model update, as a fraction of |model|
  double smoothing_m = 0;                  // gradient preconditioning: Gaussian sigma (m), 0: none
  double source_mask_m = 0;                // gradient taper radius around each source (m), 0: none
  bool illumination_compensation = false;  // gradient preconditioning: divide by the source illumination
  double illumination_epsilon = 0.01;      // its water level, a fraction of the largest illumination
  std::vector<double> bands_hz;            // multiscale: low-pass cutoffs (Hz), increasing; `iterations` each
  // Data windows inside the misfit, the same for synthetic and observed data (docs/numerics.md, "Misfit"): a top mute
  // (zero before distance(source, receiver) / mute_velocity + mute_time, a cos^2 ramp over mute_taper) and the
  // traces whose horizontal offset is in [offset_min, offset_max].
  std::optional<double> mute_velocity;  // m/s; none: no mute
  double mute_time = 0;                 // s
  double mute_taper = 0.02;             // s
  double offset_min = 0;                // m
  std::optional<double> offset_max;     // m; none: no upper limit
  bool windowed() const { return mute_velocity || offset_min > 0 || offset_max; }
  // Per-trace weights of the misfit (docs/case-file.md): an HDF5 dataset (n_shots, n_receivers) of finite weights
  // >= 0, each trace's misfit multiplied by its weight (0: the trace is left out). "": every weight 1.
  std::string trace_weights_file;
  std::string trace_weights_dataset = "/weights";
  // A model term added to the misfit (solver/inversion/regularisation.hpp): "none", "tikhonov" or "total_variation"
  std::string regularisation = "none";
  double regularisation_weight = 0;
  // Source estimation (solver/inversion/source_estimation.hpp): "none" (the case's wavelets are right), "per_shot"
  // (a Wiener filter per shot) or "shared" (one for every shot), estimated at the start of each band; its damping
  // relative to the largest synthetic power.
  std::string source_estimation = "none";
  double source_estimation_damping = 1e-3;
};

// [migration]: how `specwave migrate` (solver/inversion/imaging.hpp) images [inversion]'s observed data in the
// case's [model] (docs/case-file.md). Without the table, these defaults.
struct MigrationSpec {
  bool present = false;
  // "residual": the observed data less the data modelled in [model] (with a smooth model and the data's wavelet,
  // that removes the direct wave and the diving waves, leaving the reflections); "observed": the data as given
  // (already muted or processed).
  std::string data = "residual";
  bool illumination_compensation = true;  // divide the image by the source illumination
  double illumination_epsilon = 0.01;     // its water level, a fraction of the largest illumination
  bool laplacian_filter = true;           // -Laplacian of the image: removes the low-wavenumber backscatter artefacts
};

// [validation]: this case as a regression case (docs/validation.md, "Regression cases"): its tier, its stored
// reference traces and the tolerances `specwave validate --cases` checks them against.
struct RegressionSpec {
  bool present = false;
  std::string tier = "full";       // "smoke" (CI) or "full"
  std::string reference;           // stored reference traces (traces.h5 schema); default <case stem>.reference.h5
  double rel_l2 = 1e-5;            // relative L2 of all traces
  double max_error = 1e-5;         // max |difference| / max |reference|
  double min_correlation = 0.999;  // per trace (traces with energy)
  int max_time_shift = 0;          // samples, per trace (the lag of the cross-correlation's peak)
  bool eigen_reference = false;    // also run `validate` against the independent Eigen reference
};

struct Case {
  std::string name = "case";
  std::string source_path;  // the case file ("" when built in code)
  // What messages name the case by: its file, else (a case built in code) its name.
  const std::string& label() const { return source_path.empty() ? name : source_path; }
  std::string source_text;  // its text, stored in output provenance
  GridSpec grid;
  ModelSpec model;
  AttenuationSpec attenuation;
  TimeSpec time;
  std::vector<ShotSpec> shots;
  std::vector<Vec3> receivers;  // shared by every shot without its own (explicit points, lines and planes expanded)
  // Their components, one a receiver (empty: every receiver records pressure). A table with several components has a
  // receiver per component at each of its positions, consecutive.
  std::vector<ReceiverComponent> receiver_components;
  SchemeSpec scheme;
  BoundarySpec boundary;
  RunSpec run;
  OutputSpec output;
  InversionSpec inversion;
  MigrationSpec migration;
  RegressionSpec regression;
};

const char* to_string(Precision p);
const char* to_string(BackendKind b);
const char* to_string(Method m);
const char* to_string(Formulation f);
const char* to_string(ModelSpec::Kind k);
const char* to_string(Parameterisation p);
const char* to_string(WavefieldStorage s);
const char* to_string(SourceKind k);
// "p", "vz", "vy", "vx", "div", "curl_z", "curl_y", "curl_x": the names of the case file and traces.h5
const char* to_string(ReceiverComponent r);

// The most sources of any shot (the propagators size their source buffers for it).
std::size_t max_shot_sources(const Case& c);

// The receivers of shot s, in trace order: its own, or the shared ones.
const std::vector<Vec3>& shot_receivers(const Case& c, std::size_t shot);
// True when every shot records the shared receivers (traces.h5 then has its (shots, receivers, samples) layout).
bool shared_receivers(const Case& c);
// The most receivers of any shot, and the traces of all shots (the sum of their receiver counts).
std::size_t max_shot_receivers(const Case& c);
std::size_t total_traces(const Case& c);
// Refuses (Error invalid_case, naming the case file and `what`) a case whose shots have receivers of their own: for
// what still assumes one receiver set (`validate`, regression cases, the Python module).
void require_shared_receivers(const Case& c, const std::string& what);

// Receiver r of shot s records this component.
ReceiverComponent shot_receiver_component(const Case& c, std::size_t shot, std::size_t receiver);
// True when some receiver of some shot records particle velocity.
bool has_velocity_receivers(const Case& c);
// The unit vector a particle-velocity component samples (z, y, x); pressure: none (zeros).
Vec3 component_direction(ReceiverComponent r);
// Refuses (Error invalid_case, naming the case file and `what`) a case with particle-velocity receivers: for what
// compares with the Eigen reference (`validate`, regression cases), which records pressure only.
void require_pressure_receivers(const Case& c, const std::string& what);

}  // namespace specwave
