#pragma once
// Misfit and gradient of a case, summed over shots (docs/numerics.md, "Adjoint and gradient").
// The discretisation is frozen by the plan (dt, nt, CPML profiles from Plan::v_reference, the acquisition);
// only the model changes between evaluations.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "solver/case/case.hpp"
#include "solver/forward/progress.hpp"
#include "solver/inversion/misfit.hpp"
#include "solver/inversion/regularisation.hpp"
#include "solver/inversion/shot_checkpoint.hpp"
#include "solver/inversion/source_estimation.hpp"
#include "solver/propagators/gradient_propagator.hpp"

namespace specwave {

struct Plan;
class Comm;

// The model in a parameterisation, (nz, ny, nx): velocity v (m/s) or slowness squared m = 1 / v^2 (s^2/m^2).
std::vector<double> parameter_from_velocity(Parameterisation p, std::span<const double> velocity);
std::vector<double> velocity_from_parameter(Parameterisation p, std::span<const double> parameter);
// Chain rule, in place: dJ/d(v dt)^2 at each point -> dJ/dv = 2 v dt^2 dJ/d(v dt)^2, or
// dJ/dm = -dt^2 v^4 dJ/d(v dt)^2 (since (v dt)^2 = dt^2 / m).
void chain_rule(Parameterisation p, std::span<const double> velocity, double dt, std::span<double> gradient);

// The wavefield history strategy of inversion.wavefield_storage within inversion.wavefield_memory_gib (default:
// half of the available memory), fields of the case's precision; the disk in inversion.scratch_directory (default:
// the output directory), whose free space is checked when it may be used.
// On the CUDA backend (FDTD): choose_device_history with the device's share (run.device_memory_fraction of its free
// memory, less the propagator's own) and `host_budget` for pinned host memory.
HistoryChoice history_for(const Case& c, const Plan& plan);
// The plan's lines for a command that keeps them: "wavefields  <describe(history)>" and, on the CPU backend, the plan's
// "memory" line (the forward's fields) and the history's (host) memory together; the adjoint's own state and the
// optimiser's vectors come on top (a few fields).
std::string describe_wavefields(const Plan& plan, const HistoryChoice& history);
HistoryChoice cuda_history_for(const Case& c, const Plan& plan, double host_budget);
// choose_device_history for a propagator that keeps `own_bytes` on the device besides its history (fields of
// `field_bytes`, states of `state_bytes`): Error(resources) with the fix when that alone passes the device's share.
HistoryChoice device_history_within(const Case& c, const Plan& plan, double host_budget, double field_bytes,
                                    double state_bytes, double own_bytes);

// Shots shared by MPI ranks (the Objective's rule, also Born and forward runs of a shot list): the k-th shot of
// `shots` is rank k % size's. Returns this rank's.
std::vector<int> shots_of_rank(const Comm& world, const std::vector<int>& shots);
// Every rank's traces of its shots (in the order of shots_of_rank) -> every shot's on every rank, in the order of
// `shots`: each array is summed over the ranks, zero on those that did not run it (an exact sum).
std::vector<std::vector<double>> share_shot_traces(const Comm& world, const std::vector<int>& shots,
                                                   std::vector<std::vector<double>> mine,
                                                   const std::vector<std::size_t>& values);

// Observed traces, one (n_receivers, nt) array per shot.
using ObservedData = std::vector<std::vector<double>>;
// Synthesised with the propagator at `velocity` (every shot), or read from inversion.observed_file
// (Error input_error when its shape or dt does not match the case).
// With `shots` (MPI ranks sharing the shots: shot s is rank s % size's), a rank makes only its own shots' data
// and leaves the others empty. Each shot's forward run reports [progress] lines every `progress_seconds` (0: none).
// With `checks`, each shot's forward pass runs `forward`'s blow-up and late-growth checks (ShotChecks,
// solver/forward/progress.hpp).
ObservedData synthesise_observed(GradientPropagator& propagator, std::span<const double> velocity, int n_shots,
                                 const Comm* shots = nullptr, double progress_seconds = 0, ShotChecks checks = {});
ObservedData read_observed(const Case& c, const Plan& plan);
// The observed data's sampling: samples and interval (s), from t = 0. Synthesised data have the plan's; a file's
// come from its dataset's shape and `dt` attribute (without one, the plan's dt, and then nt must be the plan's).
// Error input_error when the data outlast the simulation (naming the file and the time.duration that would do).
struct DataSampling {
  int nt = 0;
  double dt = 0;
};
DataSampling observed_sampling(const Case& c, const Plan& plan);
// Every check of the observed data before anything is written (input_error or invalid_case): observed_sampling's, the
// file's receiver and source coordinates (when it has them) against the case's, its samples finite, the bands of
// inversion.bands_hz not below the data's lowest frequency (check_band), and an offset window that leaves a trace.
void check_observed(const Case& c, const Plan& plan);
// A low-pass cutoff `band_hz` (> 0; `what` names its key or option) of at least 1 / (3 nt dt) of the data, below which
// the low-pass passes only each trace's mean (invalid_case otherwise).
void check_band(const Case& c, const Plan& plan, double band_hz, const std::string& what);
// `inner` on the observed data's sampling: as it is when that is the simulation's, else wrapped in a ResampledMisfit
// (a band-limited resampling to the data's times and its exact transpose). A misfit that filters (LowPassMisfit)
// must be made for observed_sampling's nt and dt.
std::unique_ptr<Misfit> on_data_sampling(const Case& c, const Plan& plan, std::unique_ptr<Misfit> inner);
// inversion.trace_weights, [shot][receiver], checked (Error input_error naming the file, dataset, shot and receiver:
// a shape other than (shots, receivers), a weight that is negative or not finite, every weight 0); empty without.
using TraceWeights = std::vector<std::vector<double>>;
TraceWeights read_trace_weights(const Case& c);
// The case's misfit (inversion.misfit) on the observed data's sampling, with the data low-passed at band_hz when it
// is > 0 (a band of inversion.bands_hz, `gradient --band`), each trace's misfit weighted by inversion.trace_weights:
// what invert, gradient and check-gradient evaluate. `weights`: those read_trace_weights returned (a caller that has
// read them passes them, so that the file is read once); null: read here. With `filters` (inversion.source_estimation:
// estimate_source_filters), the synthetic data on the data's sampling are filtered first (ConvolvedMisfit).
std::unique_ptr<Misfit> case_misfit(const Case& c, const Plan& plan, double band_hz = 0,
                                    const TraceWeights* weights = nullptr,
                                    std::shared_ptr<const SourceFilters> filters = nullptr);
// inversion.source_estimation at `velocity`: every shot's synthetic data (this rank's shots under MPI, the sums added
// over `shots`) matched to the observed data by the Wiener filter (solver/inversion/source_estimation.hpp), on the
// data's sampling, each trace weighted by inversion.trace_weights. The same filters on every rank.
SourceFilters estimate_source_filters(const Case& c, const Plan& plan, GradientPropagator& propagator,
                                      const ObservedData& observed, std::span<const double> velocity,
                                      const TraceWeights& weights, const Comm* shots = nullptr);
// The estimated wavelets f * w0 on the data's sampling ((filters, nt_data); w0: the first source's wavelet of the
// filter's shot, or of shot 0 when shared), for output.
std::vector<std::vector<double>> estimated_wavelets(const Case& c, const Plan& plan, const SourceFilters& filters);
// The case's observed data: from inversion.true_model (built on the case's grid; each shot's forward run reports
// [progress] lines every `progress_seconds`, 0: none) or inversion.observed_file.
ObservedData observed_data(const Case& c, const Plan& plan, GradientPropagator& propagator, const Comm* shots = nullptr,
                           double progress_seconds = 0);
// The velocity of a model spec on the case's grid (checked like the case's own model).
std::vector<double> velocity_of(const Case& c, const ModelSpec& model);
// Both from one build: the velocity, and the density (kg/m^3) when the spec has a density model (empty otherwise).
struct ModelArrays {
  std::vector<double> velocity, density, shear;  // density: a density model's (or the elastic scheme's); shear: elastic
};
ModelArrays model_arrays(const Case& c, const ModelSpec& model);

struct MisfitGradient {
  double misfit = 0;  // sum over shots
  std::vector<double> misfit_per_shot;
  std::vector<double> gradient;      // dJ/d(parameter) at every grid point, (nz, ny, nx); empty without gradient
  std::vector<double> illumination;  // sum over shots and steps of (u^n)^2, (nz, ny, nx); when asked for only
  // dJ/d rho at fixed velocity (per kg/m^3), (nz, ny, nx): with with_density_gradient and a gradient only (no
  // regularisation term: it regularises the velocity)
  std::vector<double> density_gradient;
  // dJ/d vs at fixed vp and density (per m/s), (nz, ny, nx): with with_shear_gradient (the elastic scheme), likewise
  std::vector<double> shear_gradient;
  double regularisation = 0;  // the model term included in misfit
};

// The case's inversion.regularisation and inversion.regularisation_weight; total variation's epsilon is 1e-3 of the
// parameter at the plan's reference velocity per smallest grid spacing (fixed for the run).
Regularisation regularisation_of(const Case& c, const Plan& plan);

// J(model) and its gradient, summed over shots in fp64. With `shots` (MPI), each rank runs its own shots (s % size
// == rank) and the per-shot misfits and the gradient are summed over the ranks (MPI_Allreduce), then broadcast
// from rank 0 so that every rank holds the same bits and its optimiser takes the same steps. The per-shot
// misfits are exact; the gradient sums in another order than on one rank (equal to rounding).
class Objective {
 public:
  Objective(GradientPropagator& propagator, const Misfit& misfit, ObservedData observed, Parameterisation p, double dt,
            const Comm* shots = nullptr);
  // With `illumination` (and with_gradient), also the source illumination of the forward wavefields. With a
  // `density` (kg/m^3, (nz, ny, nx); an inversion of velocity and density), the propagator takes it with the model.
  // With a `shear` velocity (m/s; the elastic scheme), the propagator takes it too.
  MisfitGradient evaluate(std::span<const double> model, bool with_gradient, bool illumination = false,
                          std::span<const double> density = {}, std::span<const double> shear = {});
  Parameterisation parameterisation() const { return parameterisation_; }
  // Inside an evaluation, after a shot, a line on stdout at most every `interval_seconds` (0: none; the caller sets it
  // on the rank that prints), so that an evaluation of many shots is never silent:
  //   "  shot 12 (of 40) done  misfit 1.234e-03  elapsed 3m10s  ETA 6m20s  2026-12-03T09:00:00Z"
  // (with several shot ranks, the ETA is that rank's share).
  void report_progress(double interval_seconds) { progress_interval_ = interval_seconds; }
  // `forward`'s blow-up and late-growth checks on every shot's forward pass (solver/forward/progress.hpp; exit 7 when
  // one fails): the case and plan must outlive the objective.
  void check_fields(ShotChecks checks) { checks_ = checks; }
  // A model term added to every evaluation's misfit and gradient (after the data's;
  // solver/inversion/regularisation.hpp). The per-shot misfits stay the data's: with a regularisation they sum to
  // misfit - regularisation.
  void regularise(const Regularisation& r, const GridSpec& grid) { regularisation_ = r, grid_ = grid; }
  // A pass that can be resumed shot by shot (`gradient`, `migrate`; solver/inversion/shot_checkpoint.hpp): evaluate()
  // starts from the state it holds (the sums of the shots done) and hands it its state after every shot.
  void checkpoint(ShotCheckpoint* c) { checkpoint_ = c; }
  // The density gradient too (inversion.parameters naming "density"; the propagator must have been made for it).
  void with_density_gradient(bool on) { density_ = on; }
  // The shear velocity's gradient too (inversion.parameters naming "shear_velocity": the elastic scheme).
  void with_shear_gradient(bool on) { shear_ = on; }
  // The Lame parameters (inversion.parameters naming "lambda"; solver/inversion/lame.hpp): evaluate() then takes
  // model = lambda, shear = mu (Pa) and the density, all three always; gradient is dJ/d lambda, shear_gradient dJ/d
  // mu (with_shear_gradient), density_gradient dJ/d rho at fixed lambda and mu (with_density_gradient). The
  // parameterisation must be "velocity".
  void with_lame(bool on) { lame_ = on; }
  bool lame() const { return lame_; }

 private:
  GradientPropagator& propagator_;
  const Misfit& misfit_;
  ObservedData observed_;
  Parameterisation parameterisation_;
  double dt_;
  const Comm* shots_;
  double progress_interval_ = 0;
  ShotChecks checks_;
  Regularisation regularisation_;
  GridSpec grid_;
  ShotCheckpoint* checkpoint_ = nullptr;
  bool density_ = false, shear_ = false, lame_ = false;
};

}  // namespace specwave
