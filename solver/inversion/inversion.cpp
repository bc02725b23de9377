#include "solver/inversion/inversion.hpp"
#include "solver/forward/progress.hpp"

#include "io/checksum.hpp"
#include "io/folder_lock.hpp"
#include "io/toml_edit.hpp"

#include <omp.h>

#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>

#include "solver/case/errors.hpp"
#include "solver/forward/checkpoint.hpp"
#include "solver/inversion/device_preconditioner.hpp"
#include "solver/inversion/evaluation_log.hpp"
#include "solver/inversion/inversion_checkpoint.hpp"
#include "solver/inversion/inversion_outputs.hpp"
#include "solver/inversion/lame.hpp"
#include "solver/inversion/model_vector.hpp"
#include "solver/inversion/objective.hpp"
#include "solver/inversion/preconditioner.hpp"
#include "solver/optim/optimizer.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/capabilities.hpp"

namespace specwave {
std::string state_case_text(const Case& c) {
  if (c.source_text.empty()) return {};
  // (the wavefield storage strategies give bitwise the same gradient)
  return io::canonical_toml(
      c.source_text, {"output", "inversion.iterations", "inversion.wavefield_storage", "inversion.wavefield_memory_gib",
                      "inversion.scratch_directory", "run.threads", "run.progress_seconds", "run.checkpoint_every",
                      "run.checkpoint_minutes"});
}

namespace {

using optim::OpsVector, optim::Vector;

// Where the optimiser keeps its vectors (x, gradient, direction, line-search points, L-BFGS pairs): on the device,
// operated on by cuBLAS, when the gradient runs there (the capability row's optimiser_on_device: FDTD on the CUDA
// backend); in host memory with Eigen otherwise. Both run the same Optimizer (solver/optim/optimizer.hpp).
std::unique_ptr<VectorOps> optimiser_vector_ops(const Case& c, const Plan& plan) {
  if (capability(c.scheme.method, plan.backend).optimiser_on_device) return make_cublas_vector_ops();
  return make_cpu_vector_ops();
}

// The Lame parameters' box (inversion.lambda_min/max, mu_min/max, density_min/max) over the solid points (fluid
// points, mu = 0, stay fluid and keep their lambda: the water's velocity is not inverted): the starting lambda and mu
// inside it, and no model in it with a vp above inversion.velocity_max, which set dt and the CPML damping:
// vp^2 = (lambda + 2 mu) / rho is largest at lambda_max, mu_max and the smallest density.
void check_lame_box(const Case& c, const LameModel& start, std::span<const double> rho) {
  const InversionSpec& inv = c.inversion;
  const auto range = [&](const std::vector<double>& v) {
    std::pair<double, double> r{INFINITY, -INFINITY};
    for (std::size_t k = 0; k < v.size(); ++k)
      if (start.mu[k] != 0) r = {std::min(r.first, v[k]), std::max(r.second, v[k])};
    return r;
  };
  const auto [l0, l1] = range(start.lambda);
  if (l1 >= l0 && (l0 < *inv.lambda_min || l1 > *inv.lambda_max))
    throw Error(
        ExitCode::invalid_case,
        fmt::format("{}: the starting lambda = rho (vp^2 - 2 vs^2) ([model], fluid points aside) spans [{:.6g}, "
                    "{:.6g}] Pa, outside inversion.lambda_min/max = [{:.6g}, {:.6g}] Pa; widen the bounds or "
                    "change the starting model",
                    c.label(), l0, l1, *inv.lambda_min, *inv.lambda_max));
  const auto [m0, m1] = range(start.mu);
  if (m1 >= m0 && (m0 < *inv.mu_min || m1 > *inv.mu_max))
    throw Error(ExitCode::invalid_case,
                fmt::format("{}: the starting mu = rho vs^2 ([model], fluid points aside) spans [{:.6g}, {:.6g}] Pa, "
                            "outside inversion.mu_min/max = [{:.6g}, {:.6g}] Pa; widen the bounds or change the "
                            "starting model",
                            c.label(), m0, m1, *inv.mu_min, *inv.mu_max));
  double vp2 = 0;
  std::size_t worst = 0;
  for (std::size_t k = 0; k < rho.size(); ++k) {
    // (A fluid point's vp changes only with its density: sqrt(lambda / rho).)
    if (start.mu[k] == 0 && !inv.density_parameter) continue;
    const double modulus = start.mu[k] == 0 ? start.lambda[k] : *inv.lambda_max + 2 * *inv.mu_max;
    const double v2 = modulus / (inv.density_parameter ? *inv.density_min : rho[k]);
    if (v2 > vp2) vp2 = v2, worst = k;
  }
  const auto& n = c.grid.shape;
  if (std::sqrt(vp2) > *inv.velocity_max)
    throw Error(
        ExitCode::invalid_case,
        fmt::format("{}: the bounds allow vp = sqrt({} / rho) = {:.6g} m/s (rho = {:.6g} kg/m^3{} at index (z={}, "
                    "y={}, x={})), above inversion.velocity_max = {} m/s, which sets "
                    "dt (a model in the box would be unstable); raise velocity_max to {:.6g} or lower "
                    "lambda_max or mu_max{}",
                    c.label(), start.mu[worst] == 0 ? "lambda (a fluid point)" : "(lambda_max + 2 mu_max)",
                    std::sqrt(vp2), inv.density_parameter ? *inv.density_min : rho[worst],
                    inv.density_parameter ? ", density_min" : "", worst / (std::size_t(n[1]) * n[2]),
                    worst / std::size_t(n[2]) % std::size_t(n[1]), worst % std::size_t(n[2]), *inv.velocity_max,
                    std::ceil(std::sqrt(vp2)), inv.density_parameter ? " (or raise density_min)" : ""));
}

optim::Method method_of(const std::string& name) {
  if (name == "nlcg") return optim::Method::nlcg;
  if (name == "steepest") return optim::Method::steepest;
  return optim::Method::lbfgs;
}

// |v - v_true| / |v_true| over every grid point.
double model_error(std::span<const double> v, std::span<const double> v_true) {
  double num = 0, den = 0;
  for (std::size_t k = 0; k < v.size(); ++k)
    num += (v[k] - v_true[k]) * (v[k] - v_true[k]), den += v_true[k] * v_true[k];
  return std::sqrt(num / den);
}

void progress(const InversionIteration& it, bool quiet) {
  if (quiet) return;
  std::string line = fmt::format(
      "iteration {:4d}  misfit {:.6e}  relative {:.4e}  step {:.3e}  evaluations {:2d}{}  "
      "|g| {:.3e}  time {:.1f} s",
      it.iteration, it.misfit, it.relative_misfit, it.step, it.evaluations, it.wolfe ? "" : " (Armijo)",
      it.gradient_norm, it.seconds);
  if (it.model_error) line += fmt::format("  model error {:.4e}", *it.model_error);
  if (it.density_error) line += fmt::format("  density error {:.4e}", *it.density_error);
  if (it.shear_error) line += fmt::format("  shear error {:.4e}", *it.shear_error);
  line += "  " + utc_timestamp();
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

}  // namespace

double InversionSummary::misfit_reduction() const {
  if (history.empty()) return 0;
  return 1 - history.back().relative_misfit;
}

std::optional<double> InversionSummary::model_error_reduction(std::optional<double> InversionIteration::*error) const {
  if (history.empty() || !(history.front().*error) || *(history.front().*error) == 0 || !(history.back().*error))
    return std::nullopt;
  return 1 - *(history.back().*error) / *(history.front().*error);
}

void check_invert_case(const Case& c) {
  const auto& inv = c.inversion;
  if (!inv.present)
    throw Error(ExitCode::invalid_case,
                fmt::format("{}: invert needs an [inversion] table with true_model or observed data "
                            "(docs/case-file.md)",
                            c.label()));
  if (inv.lame && !inv.velocity_max)
    throw Error(ExitCode::invalid_case,
                fmt::format("{}: invert needs inversion.velocity_max (it fixes dt: every vp the bounds on lambda, mu "
                            "and the density allow must be below it); add e.g. velocity_max = 4000.0 to [inversion]",
                            c.label()));
  if (inv.lame && (!inv.lambda_min || !inv.lambda_max || !inv.mu_min || !inv.mu_max))
    throw Error(ExitCode::invalid_case,
                fmt::format("{}: inversion.parameters names \"lambda\" and \"mu\": invert needs inversion.lambda_min, "
                            "lambda_max, mu_min and mu_max (the bounds in Pa the optimiser projects them onto); add "
                            "e.g. lambda_min = 2.0e9, lambda_max = 2.0e10, mu_min = 5.0e8 and mu_max = 1.5e10 to "
                            "[inversion]",
                            c.label()));
  if (!inv.lame && (!inv.velocity_min || !inv.velocity_max))
    throw Error(
        ExitCode::invalid_case,
        fmt::format("{}: invert needs inversion.velocity_min and inversion.velocity_max (the bounds the optimiser "
                    "projects the model onto; velocity_max also fixes dt); add e.g. velocity_min = 1500.0 and "
                    "velocity_max = 4000.0 to [inversion]",
                    c.label()));
  if (inv.density_parameter && (!inv.density_min || !inv.density_max))
    throw Error(ExitCode::invalid_case,
                fmt::format("{}: inversion.parameters names \"density\": invert needs inversion.density_min and "
                            "inversion.density_max (the bounds the optimiser projects the density onto); add e.g. "
                            "density_min = 1000.0 and density_max = 3000.0 to [inversion]",
                            c.label()));
  if (inv.shear_parameter && (!inv.shear_velocity_min || !inv.shear_velocity_max))
    throw Error(ExitCode::invalid_case,
                fmt::format("{}: inversion.parameters names \"shear_velocity\": invert needs "
                            "inversion.shear_velocity_min and inversion.shear_velocity_max (the bounds the optimiser "
                            "projects the shear velocity onto); add e.g. shear_velocity_min = 500.0 and "
                            "shear_velocity_max = 2500.0 to [inversion]",
                            c.label()));
  // Every model in the box keeps the bulk modulus positive (vs < vp sqrt(3)/2), which the elastic scheme needs.
  if (inv.shear_parameter && *inv.shear_velocity_max >= *inv.velocity_min * std::sqrt(0.75))
    throw Error(ExitCode::invalid_case,
                fmt::format("{}: inversion.shear_velocity_max = {} m/s is not below velocity_min sqrt(3)/2 = {:.6g} "
                            "m/s: a model in the box could have a non-positive bulk modulus (vs >= vp sqrt(3)/2); "
                            "lower shear_velocity_max or raise velocity_min",
                            c.label(), *inv.shear_velocity_max, *inv.velocity_min * std::sqrt(0.75)));
}

LameStart check_invert_start(const Case& c, const Plan& plan) {
  const auto& inv = c.inversion;
  if ((!inv.lame && plan.model.v_min < *inv.velocity_min) || plan.model.v_max > *inv.velocity_max)
    throw Error(
        ExitCode::invalid_case,
        fmt::format("{}: the starting model ([model]) spans [{:.6g}, {:.6g}] m/s, outside inversion.velocity_min/max "
                    "= [{}, {}] m/s; widen the bounds or change the starting model",
                    c.label(), plan.model.v_min, plan.model.v_max, inv.velocity_min.value_or(0), *inv.velocity_max));
  if (inv.density_parameter && (plan.model.rho_min < *inv.density_min || plan.model.rho_max > *inv.density_max))
    throw Error(
        ExitCode::invalid_case,
        fmt::format("{}: the starting density ([model]) spans [{:.6g}, {:.6g}] kg/m^3, outside "
                    "inversion.density_min/max = [{}, {}] kg/m^3; widen the bounds or change the starting model",
                    c.label(), plan.model.rho_min, plan.model.rho_max, *inv.density_min, *inv.density_max));
  // The elastic scheme with vs fixed: every vp in the box keeps the bulk modulus positive at the model's vs.
  if (c.scheme.formulation == Formulation::elastic && !inv.shear_parameter && !inv.lame &&
      plan.model.vs_max >= *inv.velocity_min * std::sqrt(0.75))
    throw Error(ExitCode::invalid_case,
                fmt::format("{}: the model's shear velocity reaches {:.6g} m/s, not below inversion.velocity_min "
                            "sqrt(3)/2 = {:.6g} m/s: a vp in the box could make the bulk modulus non-positive (vs >= "
                            "vp sqrt(3)/2); raise velocity_min above {:.6g} m/s",
                            c.label(), plan.model.vs_max, *inv.velocity_min * std::sqrt(0.75),
                            plan.model.vs_max / std::sqrt(0.75)));
  if (inv.shear_parameter &&
      (plan.model.vs_min < *inv.shear_velocity_min || plan.model.vs_max > *inv.shear_velocity_max))
    throw Error(
        ExitCode::invalid_case,
        fmt::format("{}: the starting shear velocity ([model], fluid points aside) spans [{:.6g}, {:.6g}] m/s, "
                    "outside inversion.shear_velocity_min/max = [{}, {}] m/s; widen the bounds or change the "
                    "starting model",
                    c.label(), plan.model.vs_min, plan.model.vs_max, *inv.shear_velocity_min, *inv.shear_velocity_max));
  // The Lame parameters: the starting lambda and mu (the propagator's vp, vs and density are the plan's), inside their
  // bounds, and a box whose every model keeps vp below the velocity that set dt.
  LameStart start;
  if (inv.lame) {
    const auto doubles = [](const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); };
    start.density = doubles(plan.model.density);
    start.model = lame_of(doubles(plan.model.velocity), doubles(plan.model.shear), start.density);
    check_lame_box(c, start.model, start.density);
  }
  return start;
}

InversionSummary run_inversion(const Case& c, const InversionOptions& options) {
  const auto& inv = c.inversion;
  check_invert_case(c);
  apply_threads(c);
  check_inputs_not_overwritten(c, invert_output_names);
  // inversion.trace_weights' shape and values, checked before anything is written; read once, here.
  const TraceWeights trace_weights = read_trace_weights(c);
  // Under MPI the ranks share the shots (Objective); every rank runs the same optimiser on the same reduced
  // gradients, and rank 0 alone prints and writes.
  const Comm world = Comm::world();
  const bool root = world.rank() == 0;
  const Comm* shots = world.size() > 1 ? &world : nullptr;
  const bool quiet = options.quiet || !root;
  // Under MPI every rank is a shot group of one (invert shares the shots, never the grid), placed on its node:
  // each rank then drives its own GPU, as in `forward`.
  Case planned = c;
  if (shots) planned.run.shot_groups = world.size();
  const Comm node = world.split_node();
  const Plan plan =
      make_plan(planned, {world.size(), world.rank(), node.size(), node.rank(), shots ? &world : nullptr});
  const LameStart start = check_invert_start(c, plan);
  const LameModel& start_lame = start.model;
  const std::vector<double>& start_rho = start.density;
  const HistoryChoice history = history_for(c, plan);
  check_observed(c, plan);  // the data file's shape, interval, geometry and values; the bands; the offset window
  // One run per output folder (io/folder_lock.hpp), taken once the plan, the starting model and the history have
  // passed their checks: a refused case makes no folder.
  std::optional<io::FolderLock> lock;
  if (root) lock.emplace(c.output.directory, "invert");
  if (!quiet) std::fputs((describe_plan(c, plan) + describe_wavefields(plan, history)).c_str(), stdout);

  auto propagator = make_gradient_propagator(c, plan, history);
  const ObservedData observed = observed_data(c, plan, *propagator, shots, quiet ? 0.0 : c.run.progress_seconds);
  const double shot_lines = quiet ? 0.0 : c.run.progress_seconds;  // the objective's lines between shots
  // The objective of a band: its residuals low-passed at the band's cutoff (solver/inversion/misfit.hpp; 0: none), the
  // synthetic data filtered by the band's estimated source filters (inversion.source_estimation).
  std::shared_ptr<const SourceFilters> filters;
  std::unique_ptr<Misfit> band_misfit;
  std::unique_ptr<Objective> band_objective;
  Objective* active = nullptr;
  auto enter_band = [&](std::size_t b) {
    band_misfit = case_misfit(c, plan, inv.bands_hz.empty() ? 0.0 : inv.bands_hz[b], &trace_weights, filters);
    band_objective =
        std::make_unique<Objective>(*propagator, *band_misfit, observed, inv.parameterisation, plan.dt, shots);
    band_objective->report_progress(shot_lines);
    band_objective->check_fields({&c, &plan});
    band_objective->regularise(regularisation_of(c, plan), c.grid);
    band_objective->with_density_gradient(inv.density_parameter);
    band_objective->with_shear_gradient(inv.shear_velocity_changes());
    band_objective->with_lame(inv.lame);
    active = band_objective.get();
  };
  const std::size_t n_bands = std::max<std::size_t>(1, inv.bands_hz.size());
  ModelArrays truth = inv.true_model ? model_arrays(c, *inv.true_model) : ModelArrays{};
  // Inverting the density: the true model's density when it has one (without, the data were made with the starting
  // density, which is then the true one); otherwise none is recorded.
  if (!inv.density_parameter)
    truth.density.clear();
  else if (inv.true_model && truth.density.empty())
    truth.density = propagator->density();
  if (!inv.shear_velocity_changes())
    truth.shear.clear();
  else if (inv.true_model && truth.shear.empty())
    truth.shear = propagator->shear_velocity();
  const std::vector<double>& true_velocity = truth.velocity;
  const std::vector<double>& true_density = truth.density;
  const std::vector<double>& true_shear = truth.shear;
  // What a resumed run must share with the one that wrote the state (as forward's checkpoint fingerprint): the case
  // text and the inputs it names by file, by their checksums, so a changed model or data file is refused.
  const std::string fingerprint = [&] {
    const auto sum = [](const auto& v) { return io::checksum_hex(io::checksum64(v.data(), v.size() * sizeof(v[0]))); };
    // Observed data from a file: every rank reads all of it. Synthesised from the true model (each rank its own
    // shots), they are a function of the true model and the case, which the fingerprint holds.
    std::uint64_t data = 0;
    for (const auto& shot : observed) data = io::combine_checksums(data, io::checksum64(shot.data(), shot.size() * 8));
    std::uint64_t weights = 0;  // inversion.trace_weights (0: none)
    for (const auto& shot : trace_weights)
      weights = io::combine_checksums(weights, io::checksum64(shot.data(), shot.size() * 8));
    return fmt::format(
        "case {:016x}, {} on {}, starting model {}{}{}, true model {}, observed data {}, trace weights {}, "
        "nt {}, dt {:.17g}",
        std::hash<std::string>{}(state_case_text(c)), to_string(c.run.precision),
        plan.backend == BackendKind::cuda ? "cuda" : "cpu", sum(plan.model.velocity),
        inv.density_parameter ? " density " + sum(plan.model.density) +
                                    (true_density.empty() ? std::string() : ", true density " + sum(true_density))
                              : std::string(),
        !plan.model.shear.empty() ? " shear " + sum(plan.model.shear) +
                                        (true_shear.empty() ? std::string() : ", true shear " + sum(true_shear))
                                  : std::string(),
        true_velocity.empty() ? std::string("none") : sum(true_velocity),
        true_velocity.empty() ? io::checksum_hex(data) : std::string("synthesised"),
        weights ? io::checksum_hex(weights) : std::string("none"), plan.nt, plan.dt);
  }();

  InversionSummary summary;
  summary.propagator = propagator->name();
  summary.wavefield_history = propagator->history_name();
  summary.optimizer = inv.optimizer;
  InversionRecorder recorder(c, plan.threads, inv.optimizer, true_velocity, true_density, true_shear);

  // The optimiser works on the parameter (velocity or slowness squared) and, inverting the density, the scaled density
  // (solver/inversion/model_vector.hpp); the bounds are the velocity bounds mapped to the parameter (slowness squared
  // decreases with velocity) and the density bounds.
  const std::size_t points = c.grid.points();
  // (The Lame parameters: lambda, the density and mu.)
  const std::vector<double> start_parameter =
      inv.lame ? start_lame.lambda
               : parameter_from_velocity(inv.parameterisation,
                                         std::vector<double>(plan.model.velocity.begin(), plan.model.velocity.end()));
  const std::vector<double> start_density = inv.density_parameter ? propagator->density() : std::vector<double>{};
  const std::vector<double> start_shear = inv.shear_parameter ? propagator->shear_velocity()
                                          : inv.lame          ? start_lame.mu
                                                              : std::vector<double>{};
  const ModelVector layout(start_parameter, start_density, start_shear);
  const std::size_t n = layout.size();
  const std::unique_ptr<VectorOps> ops = optimiser_vector_ops(c, plan);
  summary.vector_ops = ops->name();
  if (!quiet)
    std::fputs(fmt::format("optimiser   {}, vectors {} ({})\n", inv.optimizer,
                           ops->on_device() ? "on the device" : "in host memory", ops->name())
                   .c_str(),
               stdout);
  const bool velocity = inv.parameterisation == Parameterisation::velocity;
  const double lower = inv.lame   ? *inv.lambda_min
                       : velocity ? *inv.velocity_min
                                  : 1 / (*inv.velocity_max * *inv.velocity_max);
  const double upper = inv.lame   ? *inv.lambda_max
                       : velocity ? *inv.velocity_max
                                  : 1 / (*inv.velocity_min * *inv.velocity_min);
  optim::Bounds host_bounds =
      inv.lame ? layout.bounds(lower, upper, inv.density_min.value_or(0), inv.density_max.value_or(0), *inv.mu_min,
                               *inv.mu_max)
               : layout.bounds(lower, upper, inv.density_min.value_or(0), inv.density_max.value_or(0),
                               inv.shear_velocity_min.value_or(0), inv.shear_velocity_max.value_or(0));
  if (inv.lame)  // fluid points keep their lambda (as their mu = 0)
    for (std::size_t k = 0; k < points; ++k)
      if (start_lame.mu[k] == 0)
        host_bounds.lower[Eigen::Index(k)] = host_bounds.upper[Eigen::Index(k)] = start_lame.lambda[k];
  // The model x as the propagator takes it: vp, the density (empty: not inverted) and vs (empty: unchanged). With the
  // Lame parameters, vp and vs from lambda, mu and the density (inverted or the starting one).
  struct Physical {
    std::vector<double> vp, rho, vs;
  };
  auto physical = [&](const Vector& x) {
    if (!inv.lame)
      return Physical{velocity_from_parameter(inv.parameterisation, layout.parameter(x)), layout.density(x),
                      layout.shear(x)};
    std::vector<double> rho = layout.density() ? layout.density(x) : start_rho;
    ElasticVelocities v = velocities_of(layout.parameter(x), layout.shear(x), rho);
    return Physical{std::move(v.vp), layout.density() ? std::move(rho) : std::vector<double>{}, std::move(v.vs)};
  };
  auto bounds = [&] {
    return optim::OpsBounds{OpsVector::from_host(*ops, host_bounds.lower),
                            OpsVector::from_host(*ops, host_bounds.upper)};
  };
  // Every evaluation after the last saved state goes to evaluations.h5, so --resume replays the finished ones of
  // an interrupted iteration (solver/inversion/evaluation_log.hpp). With inversion.illumination_compensation, the first
  // evaluation of a band also gives the illumination that the preconditioner keeps for the band.
  GradientPreconditioner preconditioner(c, plan.threads);
  EvaluationLog log((std::filesystem::path(c.output.directory) / "evaluations.h5").string(), root);
  // A test aid (docs/cli.md): SPECWAVE_STOP_AFTER_EVALUATIONS=N raises SIGUSR1 after the N-th computed evaluation,
  // so a test can stop a run at a chosen point inside a line search.
  const char* stop_after_env = std::getenv("SPECWAVE_STOP_AFTER_EVALUATIONS");
  const long stop_after = stop_after_env ? std::atol(stop_after_env) : 0;
  long computed = 0;
  // The per-shot misfits of the evaluations since the last recorded iteration, in order: an iteration records its
  // accepted trial's (IterationRecord::accepted).
  std::vector<std::vector<double>> shot_misfits;
  const std::size_t n_shots = c.shots.size();
  // illumination: a band's first evaluation with compensation, which is computed even when logged (the log keeps
  // misfits and gradients only) and gives the illumination the preconditioner keeps for the band.
  auto evaluate = [&](const Vector& x, bool illumination) {
    const auto logged = log.replay(x);
    if (logged && !quiet)
      std::fputs(
          (illumination ? fmt::format("recomputed  evaluation {} after the saved state (logged in {}): its "
                                      "illumination is not logged\n",
                                      log.replayed(), log.path())
                        : fmt::format("replayed    evaluation {} after the saved state from {} (misfit {:.6e})\n",
                                      log.replayed(), log.path(), logged->at.value))
              .c_str(),
          stdout);
    if (logged && !illumination && logged->misfit_per_shot.size() == n_shots) {
      shot_misfits.push_back(logged->misfit_per_shot);
      return logged->at;
    }
    const auto started = std::chrono::steady_clock::now();
    MisfitGradient mg = active->evaluate(
        layout.parameter(x), true, illumination,
        inv.lame && !layout.density() ? std::vector<double>(start_rho) : layout.density(x), layout.shear(x));
    optim::Evaluation e{mg.misfit, layout.gradient(mg.gradient, mg.density_gradient, mg.shear_gradient)};
    if (illumination) preconditioner.set_illumination(mg.illumination);
    if (!logged) log.append(x, {e, mg.misfit_per_shot});
    shot_misfits.push_back(mg.misfit_per_shot);
    ++computed;
    // One line per evaluation (every shot's forward, adjoint and gradient), so that a long iteration's line search
    // is not silent: the count in this run, the misfit, the time it took and the wall clock.
    if (!quiet) {
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      std::fputs(fmt::format("evaluation {:4d}  misfit {:.6e}  shots {}  time {:.1f} s  {}\n", computed, mg.misfit,
                             n_shots, seconds, utc_timestamp())
                     .c_str(),
                 stdout);
      std::fflush(stdout);
    }
    if (computed == stop_after) std::raise(SIGUSR1);
    return e;
  };
  // The optimiser's f: the model comes to the host (the log hashes it, the propagators take host models), the
  // gradient goes back into the optimiser's memory: one copy of n doubles each way per evaluation.
  // A line-search trial whose regularisation term alone is not below f(0), the value where the search started, cannot
  // meet sufficient decrease, f(a) <= f(0) + c1 a phi'(0) < f(0), since every misfit is >= 0: it is rejected without
  // modelling a shot (its value and slope are the term's, a lower bound, which the search uses only to pick a
  // shorter step). One pass over the model instead of every shot's forward and adjoint: a weight far too large for
  // the model's scale fails in a second, not after 20 evaluations, with a message that names it.
  const Regularisation regularisation = regularisation_of(c, plan);
  double search_f0 = std::numeric_limits<double>::infinity();  // f(0) of the running line search
  std::vector<double> screened;                                // its trials' terms, when screened
  const optim::OpsFunction f = [&](const OpsVector& x, OpsVector& g) {
    const Vector host = x.to_host();
    if (regularisation.kind != "none" && regularisation.weight > 0) {
      const double r = add_regularisation(regularisation, c.grid, layout.parameter(host), {});
      if (r >= search_f0) {
        screened.push_back(r);
        Vector gx = Vector::Zero(Eigen::Index(n));  // the term's gradient on the parameter's block
        add_regularisation(regularisation, c.grid, layout.parameter(host), std::span<double>(gx.data(), points));
        ops->upload(n, gx.data(), g.data());
        shot_misfits.push_back(std::vector<double>(n_shots, std::numeric_limits<double>::quiet_NaN()));
        if (!quiet)
          std::fputs(fmt::format("screened    trial: the regularisation term {:.6e} alone is not below f(0) = {:.6e}; "
                                 "rejected without modelling\n",
                                 r, search_f0)
                         .c_str(),
                     stdout);
        return r;
      }
    }
    const optim::Evaluation e = evaluate(host, false);
    ops->upload(n, e.gradient.data(), g.data());
    return e.value;
  };
  auto evaluate_band_start = [&](const Vector& x) { return evaluate(x, preconditioner.compensates()); };
  // inversion.source_estimation at a band's start: the filters at the model x, source_estimate.h5 and a line.
  auto estimate_source = [&](const Vector& x, std::size_t b) {
    if (inv.source_estimation == "none") return;
    const auto started = std::chrono::steady_clock::now();
    const Physical m = physical(x);
    if (!m.rho.empty() || !m.vs.empty())  // the model x's density and shear velocity
      propagator->set_elastic_model(m.vp, m.rho, m.vs);
    filters = std::make_shared<const SourceFilters>(
        estimate_source_filters(c, plan, *propagator, observed, m.vp, trace_weights, shots));
    const double band_hz = inv.bands_hz.empty() ? 0.0 : inv.bands_hz[b];
    if (root) {
      const auto wavelets = estimated_wavelets(c, plan, *filters);
      const auto case_wavelet = estimated_wavelets(c, plan, SourceFilters(filters->nt(), 1, true)).front();
      write_source_estimate(c, wavelets, case_wavelet, observed_sampling(c, plan).dt, band_hz, plan.threads);
    }
    if (!quiet)
      std::fputs(fmt::format("source      {} estimated{} in {:.1f} s (Wiener filter, damping {:g}): {}\n",
                             filters->shared() ? "one shared wavelet" : "a wavelet per shot",
                             band_hz > 0 ? fmt::format(" for the {:.4g} Hz band", band_hz) : std::string(),
                             std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(),
                             inv.source_estimation_damping,
                             (std::filesystem::path(c.output.directory) / "source_estimate.h5").string())
                     .c_str(),
                 stdout);
  };
  auto record = [&](InversionIteration it, const Vector& x, const Vector& g) {
    const auto [v, rho, vs] = physical(x);
    if (!true_velocity.empty()) it.model_error = model_error(v, true_velocity);
    if (!true_density.empty()) it.density_error = model_error(rho, true_density);
    if (!true_shear.empty()) it.shear_error = model_error(vs, true_shear);
    summary.history.push_back(it);
    if (root && inv.lame) {  // the Lame gradients as vp's, vs' and the density's (each at fixed other two)
      std::vector<double> g_vp(layout.parameter(g).begin(), layout.parameter(g).end()),
          g_vs = layout.shear_gradient(g), g_rho = layout.density_gradient(g);
      velocity_gradients(v, vs, rho.empty() ? start_rho : rho, g_vp, g_vs, g_rho);
      recorder.record(it, v, g_vp, rho, g_rho, vs, g_vs);
    } else if (root) {
      recorder.record(it, v, layout.parameter(g), rho, layout.density_gradient(g), vs, layout.shear_gradient(g));
    }
    progress(it, quiet);
  };

  using clock = std::chrono::steady_clock;
  auto t0 = clock::now();
  const std::string state_path = (std::filesystem::path(c.output.directory) / "inversion_state.h5").string();
  InversionCheckpoint checkpoint;
  Vector x0;
  optim::Evaluation f0;
  // --resume continues from the state of the last completed iteration, or starts when there is none yet (a batch
  // script passes it always: the first run of a job starts, a requeued one continues).
  const bool resume = options.resume && std::filesystem::exists(state_path);
  if (options.resume && !resume && !quiet)
    std::fputs(fmt::format("resume      no inversion state in {}: starting from the beginning\n", state_path).c_str(),
               stdout);
  std::size_t band = 0;  // the band being fitted
  int offset = 0;        // iterations of the earlier bands
  double misfit0 = 0;    // the band's misfit at its start
  if (resume) {
    checkpoint = read_inversion_checkpoint(state_path, n, points);  // n: both blocks when the density is inverted
    if (checkpoint.fingerprint != fingerprint)
      throw Error(ExitCode::invalid_case,
                  fmt::format("{}: the inversion state belongs to another run (a case or an input file changed since "
                              "it was written):\n  state:    {}\n  this run: {}\nresume with the same case file and "
                              "inputs, or remove {} and evaluations.h5 to start over",
                              state_path, checkpoint.fingerprint, fingerprint, state_path));
    band = std::size_t(checkpoint.band);
    offset = checkpoint.offset;
    if (band >= n_bands)
      throw Error(ExitCode::invalid_case,
                  fmt::format("{}: was written in band {} of inversion.bands_hz, the case has {} "
                              "band(s); resume with the case of the interrupted run",
                              state_path, band + 1, n_bands));
    if (checkpoint.optimizer != inv.optimizer)
      throw Error(ExitCode::invalid_case,
                  fmt::format("{}: was written by optimizer \"{}\", the case asks for \"{}\"; resume "
                              "with the same inversion.optimizer",
                              state_path, checkpoint.optimizer, inv.optimizer));
    if (root) recorder.restore(checkpoint.history);
    summary.history = checkpoint.history;
    if (preconditioner.compensates()) {
      if (checkpoint.illumination.size() != points)
        throw Error(ExitCode::input_error,
                    fmt::format("{}: has no illumination (dataset /illumination), but the case sets "
                                "inversion.illumination_compensation; resume with the case of the "
                                "interrupted run",
                                state_path));
      preconditioner.set_illumination(checkpoint.illumination);
    }
    log.load(summary.history.size(), n);
    x0 = checkpoint.state.x;
    f0 = checkpoint.state.current;
    misfit0 = checkpoint.band_misfit0;
    if (!quiet)
      std::fputs(fmt::format("resume      from iteration {}{} ({})\n", offset + checkpoint.state.iteration,
                             inv.bands_hz.empty() ? std::string() : fmt::format(", band {} of {}", band + 1, n_bands),
                             state_path)
                     .c_str(),
                 stdout);
    if (!quiet && log.loaded() > 0)
      std::fputs(fmt::format("resume      {} evaluation(s) of the interrupted iteration logged in {}: replayed, not "
                             "recomputed\n",
                             log.loaded(), log.path())
                     .c_str(),
                 stdout);
  } else {
    x0 = optim::project(host_bounds, layout.x(start_parameter, start_density, start_shear));
    estimate_source(x0, 0);
    enter_band(0);
    log.reset(0);
    try {
      f0 = evaluate_band_start(x0);
    } catch (const Error& e) {
      if (e.code() != ExitCode::interrupted) throw;
      throw Error(ExitCode::interrupted,
                  fmt::format("{} in the starting model's evaluation, before the first state was saved; run the same "
                              "command with --resume (it starts from the beginning)",
                              e.what()));
    }
    InversionIteration start;
    start.misfit = f0.value;
    start.misfit_per_shot = shot_misfits.back();
    start.evaluations = 1;
    if (!inv.bands_hz.empty()) start.band_hz = inv.bands_hz[0];
    start.gradient_norm = optim::projected_gradient(host_bounds, x0, f0.gradient).norm();
    start.seconds = std::chrono::duration<double>(clock::now() - t0).count();
    record(start, x0, f0.gradient);
    misfit0 = f0.value;
  }
  if (resume) {
    if (inv.source_estimation != "none") {
      auto kept = std::make_shared<SourceFilters>(observed_sampling(c, plan).nt, int(n_shots),
                                                  inv.source_estimation == "shared");
      if (checkpoint.source_filters.size() != kept->flat().size())
        throw Error(ExitCode::input_error,
                    fmt::format("{}: has no source filters of this case (dataset /source_filters), but the case sets "
                                "inversion.source_estimation = \"{}\"; resume with the case of the interrupted run",
                                state_path, inv.source_estimation));
      kept->set_flat(checkpoint.source_filters);
      filters = std::move(kept);
    }
    enter_band(band);
  }

  optim::OptimizerOptions oo;
  oo.method = method_of(inv.optimizer);
  oo.lbfgs_memory = inv.lbfgs_memory;
  oo.initial_step_fraction = inv.initial_step_fraction;
  // P in the optimiser's memory: on the host, FFTW smoothing and the weights; on the device, cuFFT smoothing and
  // the weights (DevicePreconditioner, in the default stream like the cuBLAS operations), which are uploaded again
  // when set_illumination changes them (once a band): v stays on the device.
  optim::OpsPreconditioner precondition;
  std::unique_ptr<DevicePreconditioner> device_preconditioner;
  // Each parameter's block of the vector separately (the velocity's, then the density's).
  if (!preconditioner.identity() && ops->on_device()) {
    device_preconditioner = std::make_unique<DevicePreconditioner>(preconditioner);
    precondition = [&](double* v) {
      for (std::size_t b = 0; b < n; b += points) device_preconditioner->apply(v + b);
    };
  }
  if (!preconditioner.identity() && !precondition)  // host memory (download and upload are copies there)
    precondition = [&](double* v) {
      std::vector<double> host(points);
      for (std::size_t b = 0; b < n; b += points) {
        ops->download(points, v + b, host.data());
        host = preconditioner.apply(std::move(host));
        ops->upload(points, host.data(), v + b);
      }
    };
  auto make_optimizer = [&](const Vector& x, const optim::Evaluation& e) {
    return std::make_unique<optim::Optimizer>(*ops, f, bounds(), oo, OpsVector::from_host(*ops, x), e.value,
                                              OpsVector::from_host(*ops, e.gradient), precondition);
  };
  auto optimizer = make_optimizer(x0, f0);
  if (resume) optimizer->restore(checkpoint.state);
  // The restart state after every completed iteration (and of the start), atomically (docs/hdf5-schema.md).
  std::size_t b = band;
  auto save_state = [&] {
    if (root)
      write_inversion_checkpoint(
          state_path, {optimizer->state(), summary.history, inv.optimizer, c.source_text, fingerprint, int(b), offset,
                       misfit0, preconditioner.illumination(), filters ? filters->flat() : std::vector<double>()});
    log.reset(summary.history.size());
  };
  // A stop signal (solver/forward/checkpoint.hpp) between iterations, or inside one (Objective::evaluate between
  // shots): the state of the last completed iteration is on disk, and --resume repeats the interrupted one exactly.
  auto stopped = [&](const std::string& why) {
    const std::string inside =
        log.size() > 0 ? fmt::format(" ({} evaluation(s) of the next one are in {})", log.size(), log.path()) : "";
    return Error(
        ExitCode::interrupted,
        fmt::format("{} after iteration {}{}; its state is in {}; run the same command with --resume to continue", why,
                    summary.history.back().iteration, inside, state_path));
  };
  if (!resume) save_state();
  for (; b < n_bands && summary.failure.empty(); ++b) {
    if (b > band) {
      // a new band: its misfit at the current model, a fresh optimiser (the curvature pairs were another J's)
      offset += optimizer->iteration();
      const Vector x = optimizer->x().to_host();
      estimate_source(x, b);
      enter_band(b);
      const optim::Evaluation fb = evaluate_band_start(x);
      shot_misfits.clear();
      misfit0 = fb.value;
      optimizer = make_optimizer(x, fb);
      if (!quiet)
        std::fputs(fmt::format("band        {:.4g} Hz: misfit {:.6e} at the start\n", inv.bands_hz[b], misfit0).c_str(),
                   stdout);
    }
    while (optimizer->iteration() < inv.iterations) {
      t0 = clock::now();
      optim::IterationRecord r;
      shot_misfits.clear();
      search_f0 = optimizer->value();
      screened.clear();
      try {
        r = optimizer->iterate();
      } catch (const Error& e) {
        if (e.code() == ExitCode::interrupted) throw stopped(e.what());
        throw;
      } catch (const optim::LineSearchFailure& e) {
        summary.failure =
            fmt::format("iteration {}: the line search failed: {}", offset + optimizer->iteration() + 1, e.what());
        if (!screened.empty() && screened.size() == e.trials().size())
          summary.failure += fmt::format(
              "\nEvery step tried was rejected on the regularisation term alone, without modelling (their f above is "
              "that term, a lower bound; down to {:.3e}, against f(0) = {:.3e}): inversion.regularisation_weight = {} "
              "in {} outweighs the data misfit at any step the search reaches. Lower it by more than a factor of "
              "{:.1e}; a weight that makes the term at most comparable to the misfit is usual",
              *std::min_element(screened.begin(), screened.end()), search_f0, inv.regularisation_weight, c.label(),
              *std::min_element(screened.begin(), screened.end()) / std::max(search_f0, 1e-300));
        break;
      }
      InversionIteration it;
      it.iteration = offset + r.iteration;
      if (!inv.bands_hz.empty()) it.band_hz = inv.bands_hz[b];
      it.misfit = r.value;
      it.misfit_per_shot = shot_misfits.at(std::size_t(r.accepted));
      it.relative_misfit = misfit0 > 0 ? r.value / misfit0 : 0;
      it.step = r.step;
      it.evaluations = r.evaluations;
      it.wolfe = r.wolfe;
      it.gradient_norm = r.projected_gradient_norm;
      it.seconds = std::chrono::duration<double>(clock::now() - t0).count();
      record(it, optimizer->x().to_host(), optimizer->gradient().to_host());
      save_state();
      int signal = stop_signal();  // agreed by every rank
      if (shots) shots->allreduce_in_place(std::span<int>(&signal, 1), ReduceOp::max);
      if (signal) throw stopped(fmt::format("stopped by signal {} ({})", signal, strsignal(signal)));
    }
  }
  if (root) recorder.write_plots();
  summary.outputs = recorder.outputs();
  summary.outputs.push_back(state_path);
  return summary;
}

}  // namespace specwave
