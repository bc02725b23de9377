#include "solver/inversion/objective.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <stdexcept>

#include "io/hdf5.hpp"
#include "io/outputs.hpp"
#include "kernels/cpu/staggered_cpu.hpp"
#include "solver/case/errors.hpp"
#include "solver/forward/checkpoint.hpp"
#include "solver/forward/progress.hpp"
#include "solver/inversion/lame.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/plan/model.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/elastic/elastic_setup.hpp"
#include "solver/propagators/history/boundary_history.hpp"

namespace specwave {

std::vector<double> parameter_from_velocity(Parameterisation p, std::span<const double> velocity) {
  std::vector<double> out(velocity.begin(), velocity.end());
  if (p == Parameterisation::slowness2)
    for (double& v : out) v = 1 / (v * v);
  return out;
}

std::vector<double> velocity_from_parameter(Parameterisation p, std::span<const double> parameter) {
  std::vector<double> out(parameter.begin(), parameter.end());
  if (p == Parameterisation::slowness2)
    for (double& m : out) m = m > 0 ? 1 / std::sqrt(m) : NAN;  // a non-positive m is refused by set_velocity
  return out;
}

void chain_rule(Parameterisation p, std::span<const double> velocity, double dt, std::span<double> gradient) {
  const double dt2 = dt * dt;
  for (std::size_t k = 0; k < gradient.size(); ++k) {
    const double v = velocity[k];
    gradient[k] *= p == Parameterisation::velocity ? 2 * v * dt2 : -dt2 * v * v * v * v;
  }
}

HistoryChoice history_for(const Case& c, const Plan& plan) {
  const double field_bytes = (c.run.precision == Precision::fp64 ? 8.0 : 4.0) * double(c.grid.points());
  HistoryRequest q;
  q.nt = plan.nt;
  q.budget_bytes = c.inversion.wavefield_memory_gib
                       ? *c.inversion.wavefield_memory_gib * double(1ull << 30)
                       : 0.5 * double(plan.memory_available ? plan.memory_available : 1ull << 32);
  const bool first_order = c.scheme.formulation != Formulation::second_order;
  if (c.scheme.method == Method::fdtd && first_order && c.inversion.wavefield_storage == WavefieldStorage::boundary)
    throw Error(ExitCode::invalid_case,
                fmt::format("{}: inversion.wavefield_storage = \"boundary\" is the second-order scheme's; the {} "
                            "does not run backwards in this version; use \"memory\", \"checkpoints\", "
                            "\"binomial\", \"disk\" or \"auto\"",
                            c.label(),
                            c.scheme.formulation == Formulation::elastic
                                ? "elastic scheme"
                                : "staggered scheme (a density model or [attenuation])"));
  if (c.scheme.method == Method::spectral) {
    if (c.inversion.wavefield_storage == WavefieldStorage::boundary)
      throw Error(
          ExitCode::invalid_case,
          fmt::format("{}: inversion.wavefield_storage = \"boundary\" needs a scheme that runs backwards, and the "
                      "spectral method does not (its k-space operator is global: every point's update involves the "
                      "absorbing layer); use \"memory\", \"checkpoints\" or \"auto\", or scheme.method = \"fdtd\"",
                      c.label()));
    // What the spectral gradient propagator keeps (solver/propagators/spectral/spectral_cpu_gradient.cpp): damping
    // layer, the field u and the state (u, u_prev); split-field PML, the field (p_z, p_y, p_x) and the state (p_a,
    // w_a); with attenuation, the field (p, D_z, D_y, D_x) and the state also the 3L memory variables and D_a.
    const bool pml = c.boundary.spectral_absorber == SpectralAbsorber::pml;
    const int mechanisms = pml && c.attenuation.present ? c.attenuation.mechanisms : 0;
    q.field_bytes = (pml ? (mechanisms > 0 ? 4 : 3) : 1) * field_bytes;
    q.state_bytes = (pml ? 6 + (mechanisms > 0 ? 3 * mechanisms + 3 : 0) : 2) * field_bytes;
  } else if (c.scheme.formulation == Formulation::elastic) {
    // What the elastic gradient propagator keeps (solver/propagators/elastic/elastic_cpu_gradient.cpp): a field is
    // the nine increments of a step on each field's computed range (packed); a checkpoint the nine fields (padded),
    // the CPML slabs and a field beside them (ForwardStepper::field_beside_state).
    const double value = field_bytes / double(c.grid.points());
    q.field_bytes = value * double(elastic_increment_points(c));
    q.state_bytes = value * double(elastic_state_values(c)) + q.field_bytes;
    // On the GPU (elastic_cuda_gradient.cpp) besides the history: the forward state with its increments (nine padded
    // fields) and packed field, the Born perturbation's state and its eight perturbed coefficients, the adjoint's
    // state, scratch and field, the model (eight padded fields), the pressure the checks take (forward_step), and the
    // eight fp64 images (16 padded fields' worth in fp32, 8 in fp64) and the fp64 illumination.
    if (plan.backend == BackendKind::cuda) {
      const int H = staggered_halo(c.scheme.order / 2);
      const auto& n = c.grid.shape;
      const double padded = value * (n[0] + 2.0 * H) * (n[1] + 2.0 * H) * (n[2] + 2.0 * H);
      const double own = 3 * q.state_bytes + (9 + 8 + 1 + 8 + 1) * padded + q.field_bytes + 8 * 8.0 * padded / value +
                         8.0 * double(c.grid.points());
      return device_history_within(c, plan, q.budget_bytes, q.field_bytes, q.state_bytes, own);
    }
  } else if (c.scheme.formulation == Formulation::staggered) {
    // What the staggered gradient propagators keep (solver/propagators/staggered/staggered_{cpu,cuda}_gradient.cpp): a
    // field is the step's divergence D and, with a density parameter, the three velocity increments (padded); a state
    // u and w_z, w_y, w_x (padded), the CPML slabs (about 20% more), the memory variables and the field.
    const int H = staggered_halo(c.scheme.order / 2);
    const auto& n = c.grid.shape;
    const double padded =
        field_bytes / double(c.grid.points()) * (n[0] + 2.0 * H) * (n[1] + 2.0 * H) * (n[2] + 2.0 * H);
    const int mechanisms = c.attenuation.present ? c.attenuation.mechanisms : 0;
    q.field_bytes = field_bytes + (c.inversion.density_parameter ? 3 * padded : 0);
    q.state_bytes = 4 * padded * 1.2 + mechanisms * field_bytes + q.field_bytes;
    // On the GPU besides the history: the forward state, the Born perturbation's and the adjoint's (three states), q_a
    // and e_a (six padded fields), the model (dt K, dt beta: four; the drives), the field being transposed and the
    // Born's relative perturbations (about two fields), and the fp64 image and illumination: 16 B a point, and 24 B a
    // padded point with a density parameter.
    if (plan.backend == BackendKind::cuda) {
      const double value = field_bytes / double(c.grid.points());
      const double own = 3 * q.state_bytes + 10 * padded + (2 + mechanisms) * q.field_bytes +
                         16.0 * double(c.grid.points()) + (c.inversion.density_parameter ? 24.0 * padded / value : 0.0);
      return device_history_within(c, plan, q.budget_bytes, q.field_bytes, q.state_bytes, own);
    }
  } else {
    q.field_bytes = field_bytes;
    q.state_bytes = 2 * field_bytes * 1.3;  // u, u_prev padded + CPML slabs, roughly
  }
  // The CUDA FDTD gradient keeps its history on the device or in pinned host memory
  // (solver/propagators/history/device_history.hpp).
  if (c.scheme.method == Method::fdtd && plan.backend == BackendKind::cuda)
    return cuda_history_for(c, plan, q.budget_bytes);
  // Boundary saving (CPU FDTD): the values of the points whose update has a CPML term, every step, and two fields.
  if (c.scheme.method == Method::fdtd && c.scheme.formulation == Formulation::second_order)
    q.boundary_bytes = boundary_history_bytes(
        plan.nt, field_bytes,
        (field_bytes / double(c.grid.points())) *
            double(cpml_update_points(c.grid.shape, c.boundary.pml_width, c.boundary.free_surface)));
  // The disk: inversion.scratch_directory, else the output directory.
  q.scratch_directory_set = !c.inversion.scratch_directory.empty();
  q.scratch_directory = q.scratch_directory_set ? c.inversion.scratch_directory : c.output.directory;
  if (q.scratch_directory_set) {  // a folder, or one to be made under a folder: not a file on the way
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path p = fs::absolute(q.scratch_directory, ec);
    while (!p.empty() && !fs::exists(p, ec) && p != p.parent_path()) p = p.parent_path();
    if (fs::exists(p, ec) && !fs::is_directory(p, ec))
      throw Error(ExitCode::output_error,
                  fmt::format("{}: inversion.scratch_directory = \"{}\": {} is a file, not a folder; give a folder "
                              "(made when missing) on a file system with room for the forward wavefields",
                              c.label(), c.inversion.scratch_directory, p.string()));
  }
  if (q.scratch_directory_set || c.inversion.wavefield_storage == WavefieldStorage::disk)
    q.disk_free_bytes = free_disk_bytes(q.scratch_directory);
  return choose_history(c.inversion.wavefield_storage, q);
}

HistoryChoice device_history_within(const Case& c, const Plan& plan, double host_budget, double field_bytes,
                                    double state_bytes, double own_bytes) {
  double device_budget = 0;
  // run.device_memory_fraction of the memory free now, less what the propagator holds besides the history (own_bytes)
  // and what `invert` keeps on the device besides: the optimiser's fp64 vectors (x, gradient, bounds, direction,
  // projected and preconditioned gradients, the previous ones, a line search's trial points, the 2 m L-BFGS
  // pairs: about 2 m + 14 vectors) and the cuFFT smoother's padded grid and spectrum (about 4 fp64 values a point).
  // The cap is that of the forward preflight: the fraction of the memory free when the plan was made, shared
  // by the ranks that drive the same device (none without the CUDA backend: device_free_bytes stays 0).
  if (plan.device_free_bytes > 0) {
    // (one block of the grid's points a parameter inverted: velocity or lambda, the density, the shear velocity or mu)
    const double blocks =
        1.0 + (c.inversion.density_parameter ? 1 : 0) + (c.inversion.shear_parameter || c.inversion.lame ? 1 : 0);
    // (the smoother's box: the grid padded by 3 sigma on each side of every active axis)
    double smoother = 0;
    if (c.inversion.smoothing_m > 0) {
      const auto box = smoothing_box(c.grid, c.inversion.smoothing_m);
      smoother = 4 * double(box[0]) * double(box[1]) * double(box[2]) / double(c.grid.points());
    }
    const double optimiser = c.inversion.present ? (2.0 * c.inversion.lbfgs_memory + 14 + smoother) * 8.0 : 0.0;
    const double own = own_bytes + blocks * optimiser * double(c.grid.points());
    const double cap = c.run.device_memory_fraction * double(plan.device_free_bytes) / plan.ranks_on_device;
    if (own > cap)
      throw Error(ExitCode::resources,
                  fmt::format("{}: the gradient needs about {} on the GPU besides its wavefield history, above the cap "
                              "of {} ({:.0f}% of the {} free); reduce grid.shape, use precision = \"fp32\", raise "
                              "run.device_memory_fraction, or use a larger GPU",
                              c.label(), human_bytes(own), human_bytes(cap), 100 * c.run.device_memory_fraction,
                              human_bytes(double(plan.device_free_bytes))));
    device_budget = cap - own;
  }
  return choose_device_history(c.inversion.wavefield_storage, plan.nt, field_bytes, state_bytes, device_budget,
                               host_budget);
}

HistoryChoice cuda_history_for(const Case& c, const Plan& plan, double host_budget) {
  // What solver/propagators/fdtd/fdtd_cuda_gradient.cpp keeps: a field is the interior in the run precision; a state u,
  // u_prev (padded by the stencil radius R) and the CPML slabs (psi, zeta: W + 2R points along their axis per face).
  const double value = c.run.precision == Precision::fp64 ? 8 : 4;
  const int R = c.scheme.order / 2, W = c.boundary.pml_width;
  const auto& n = c.grid.shape;
  const double field_bytes = value * double(c.grid.points());
  double state_values = 2.0 * (n[0] + 2.0 * R) * (n[1] + 2.0 * R) * (n[2] + 2.0 * R);
  for (int a = 0; a < 3; ++a) {
    const int faces = !c.grid.active(a) ? 0 : a == 0 && c.boundary.free_surface ? 1 : 2;  // (2-D: no y layer)
    state_values += W > 0 ? 2.0 * faces * (W + 2.0 * R) * double(c.grid.points()) / n[a] : 0.0;
  }
  const double state_bytes = value * state_values;
  // Besides the history: the forward state, the Born perturbation's state, the adjoint's (mu, mu_next, w and about
  // 1.5 states of adjoint CPML memory), three fields and the fp64 gradient and illumination, roughly 5 states + 4
  // fields + 16 B a point.
  return device_history_within(c, plan, host_budget, field_bytes, state_bytes,
                               5 * state_bytes + 4 * field_bytes + 16.0 * double(c.grid.points()));
}

std::string describe_wavefields(const Plan& plan, const HistoryChoice& history) {
  std::string out = fmt::format("wavefields  {}\n", describe(history));
  if (plan.backend == BackendKind::cpu)
    out += fmt::format("memory      about {} with the wavefield history ({} available)\n",
                       human_bytes(double(plan.memory_bytes) + history.memory_bytes),
                       plan.memory_available ? human_bytes(double(plan.memory_available)) : std::string("unknown"));
  return out;
}

ObservedData synthesise_observed(GradientPropagator& propagator, std::span<const double> velocity, int n_shots,
                                 const Comm* shots, double progress_seconds, ShotChecks checks) {
  propagator.set_velocity(velocity);
  const int ranks = shots ? shots->size() : 1, rank = shots ? shots->rank() : 0;
  ObservedData out(static_cast<std::size_t>(n_shots));
  for (int s = rank; s < n_shots; s += ranks) {
    const ShotProgress shot_progress(s, n_shots, progress_seconds, checks);  // a whole forward run: lines inside it
    out[std::size_t(s)] = propagator.forward(s, false);
  }
  return out;
}

std::unique_ptr<Misfit> case_misfit(const Case& c, const Plan& plan, double band_hz, const TraceWeights* given,
                                    std::shared_ptr<const SourceFilters> filters) {
  const DataSampling d = observed_sampling(c, plan);
  const auto& inv = c.inversion;
  std::unique_ptr<Misfit> m = make_misfit(inv.misfit, d.nt);
  TraceWeights weights = given ? *given : read_trace_weights(c);
  const bool weighted = !weights.empty();
  if (weighted) m = std::make_unique<TraceWeightedMisfit>(std::move(m), std::move(weights), d.nt);
  if (inv.windowed()) {  // after the low-pass below: the data are filtered, then windowed
    std::vector<std::vector<WindowedMisfit::Trace>> shots(c.shots.size());
    for (std::size_t s = 0; s < shots.size(); ++s) {
      const Vec3 src = c.shots[s].sources.at(0).position;
      for (const Vec3& r : shot_receivers(c, s)) {
        const double dz = r[0] - src[0], dy = r[1] - src[1], dx = r[2] - src[2];
        const double offset = std::sqrt(dy * dy + dx * dx);
        WindowedMisfit::Trace t;
        t.weight = offset >= inv.offset_min && (!inv.offset_max || offset <= *inv.offset_max) ? 1.0 : 0.0;
        t.mute_start = inv.mute_velocity ? std::sqrt(dz * dz + dy * dy + dx * dx) / *inv.mute_velocity + inv.mute_time
                                         : -std::numeric_limits<double>::infinity();
        shots[s].push_back(t);
      }
    }
    m = std::make_unique<WindowedMisfit>(std::move(m), std::move(shots), d.nt, d.dt, inv.mute_taper);
  }
  // Least squares alone: the low-passed residual (one filter a trace); else the misfit of the low-passed data.
  if (band_hz > 0)
    m = std::make_unique<LowPassMisfit>(
        d.nt, d.dt, band_hz, inv.misfit == "least_squares" && !inv.windowed() && !weighted ? nullptr : std::move(m));
  if (filters) m = std::make_unique<ConvolvedMisfit>(std::move(m), std::move(filters));
  return on_data_sampling(c, plan, std::move(m));
}

SourceFilters estimate_source_filters(const Case& c, const Plan& plan, GradientPropagator& propagator,
                                      const ObservedData& observed, std::span<const double> velocity,
                                      const TraceWeights& weights, const Comm* shots) {
  const DataSampling d = observed_sampling(c, plan);
  const int n_shots = int(c.shots.size());
  SourceEstimator estimator(d.nt, n_shots, c.inversion.source_estimation == "shared");
  std::optional<TraceResampler> resampler;
  if (d.nt != plan.nt || std::abs(d.dt - plan.dt) > 1e-9 * plan.dt) resampler.emplace(plan.nt, plan.dt, d.nt, d.dt);
  propagator.set_velocity(velocity);
  const int ranks = shots ? shots->size() : 1, rank = shots ? shots->rank() : 0;
  for (int s = rank; s < n_shots; s += ranks) {
    const ShotProgress checks(s, n_shots, 0.0, {&c, &plan});  // forward's blow-up and late-growth checks
    std::vector<double> synthetic = propagator.forward(s, false);
    if (resampler) {
      const std::size_t traces = synthetic.size() / std::size_t(plan.nt);
      std::vector<double> out(traces * std::size_t(d.nt));
      for (std::size_t r = 0; r < traces; ++r)
        resampler->apply(std::span<const double>(synthetic).subspan(r * std::size_t(plan.nt), std::size_t(plan.nt)),
                         std::span<double>(out).subspan(r * std::size_t(d.nt), std::size_t(d.nt)));
      synthetic = std::move(out);
    }
    estimator.add_shot(s, synthetic, observed.at(std::size_t(s)),
                       weights.empty() ? std::span<const double>() : std::span<const double>(weights[std::size_t(s)]));
  }
  if (shots && ranks > 1) shots->allreduce_in_place(estimator.sums(), ReduceOp::sum);
  return estimator.finish(c.inversion.source_estimation_damping);
}

std::vector<std::vector<double>> estimated_wavelets(const Case& c, const Plan& plan, const SourceFilters& filters) {
  const DataSampling d = observed_sampling(c, plan);
  std::vector<std::vector<double>> out;
  for (int f = 0; f < filters.count(); ++f) {
    const std::vector<double>& w0 = plan.wavelets.at(std::size_t(f)).at(0);
    std::vector<double> w(std::size_t(d.nt));
    if (d.nt != plan.nt || std::abs(d.dt - plan.dt) > 1e-9 * plan.dt)
      TraceResampler(plan.nt, plan.dt, d.nt, d.dt).apply(std::span<const double>(w0).first(std::size_t(plan.nt)), w);
    else
      std::copy_n(w0.begin(), d.nt, w.begin());
    filters.apply(f, w);
    out.push_back(std::move(w));
  }
  return out;
}

ModelArrays model_arrays(const Case& c, const ModelSpec& model) {
  Case t = c;
  t.model = model;
  const VelocityModel m = build_velocity_model(t);
  ModelArrays out{std::vector<double>(m.velocity.begin(), m.velocity.end()), {}, {}};
  if (model.has_density_model() || !m.shear.empty()) out.density.assign(m.density.begin(), m.density.end());
  out.shear.assign(m.shear.begin(), m.shear.end());
  return out;
}

std::vector<double> velocity_of(const Case& c, const ModelSpec& model) {
  return std::move(model_arrays(c, model).velocity);
}

ObservedData observed_data(const Case& c, const Plan& plan, GradientPropagator& propagator, const Comm* shots,
                           double progress_seconds) {
  if (c.inversion.true_model) {
    const auto [true_velocity, true_density, true_shear] = model_arrays(c, *c.inversion.true_model);
    const std::vector<double> start = propagator.density();
    if (!true_shear.empty()) {  // the elastic scheme: the true vp, vs and density, then back to the starting model
      const std::vector<double> start_shear = propagator.shear_velocity();
      propagator.set_elastic_model(true_velocity, true_density.empty() ? start : true_density, true_shear);
      ObservedData out =
          synthesise_observed(propagator, true_velocity, int(c.shots.size()), shots, progress_seconds, {&c, &plan});
      propagator.set_elastic_model(std::vector<double>(plan.model.velocity.begin(), plan.model.velocity.end()), start,
                                   start_shear);
      return out;
    }
    if (true_density.empty() || true_density == start)
      return synthesise_observed(propagator, true_velocity, int(c.shots.size()), shots, progress_seconds, {&c, &plan});
    // The data of the true model, velocity and density set together (velocity receivers take the density too); the
    // propagator then goes back to the starting model (the case's).
    propagator.set_model(true_velocity, true_density);
    ObservedData out =
        synthesise_observed(propagator, true_velocity, int(c.shots.size()), shots, progress_seconds, {&c, &plan});
    propagator.set_model(std::vector<double>(plan.model.velocity.begin(), plan.model.velocity.end()), start);
    return out;
  }
  if (!c.inversion.observed_file.empty()) return read_observed(c, plan);
  throw Error(
      ExitCode::invalid_case,
      fmt::format("{}: no observed data: set inversion.observed = \"traces.h5\" or an [inversion.true_model] table",
                  c.label()));
}

Objective::Objective(GradientPropagator& propagator, const Misfit& misfit, ObservedData observed, Parameterisation p,
                     double dt, const Comm* shots)
    : propagator_(propagator),
      misfit_(misfit),
      observed_(std::move(observed)),
      parameterisation_(p),
      dt_(dt),
      shots_(shots) {}

MisfitGradient Objective::evaluate(std::span<const double> model, bool with_gradient, bool illumination,
                                   std::span<const double> density, std::span<const double> shear) {
  // The Lame parameters: model = lambda and shear = mu, into vp and vs (the propagator's).
  ElasticVelocities lame;
  if (lame_) {
    if (parameterisation_ != Parameterisation::velocity || density.size() != model.size() ||
        shear.size() != model.size())
      throw std::logic_error("Objective::evaluate: the Lame parameters need lambda, the density and mu");
    lame = velocities_of(model, shear, density);
  }
  const std::vector<double> velocity = lame_ ? lame.vp : velocity_from_parameter(parameterisation_, model);
  if (lame_)
    propagator_.set_elastic_model(velocity, density, lame.vs);
  else if (shear.empty())
    propagator_.set_model(velocity, density);
  else
    propagator_.set_elastic_model(velocity, density, shear);
  MisfitGradient out;
  if (with_gradient) out.gradient.assign(model.size(), 0.0);
  if (with_gradient && illumination) out.illumination.assign(model.size(), 0.0);
  if (with_gradient && density_) out.density_gradient.assign(model.size(), 0.0);
  // (The density's gradient at fixed lambda and mu needs the shear sums too.)
  if (with_gradient && (shear_ || (lame_ && density_))) out.shear_gradient.assign(model.size(), 0.0);
  const int ranks = shots_ ? shots_->size() : 1, rank = shots_ ? shots_->rank() : 0;
  // A stop signal (solver/forward/checkpoint.hpp) ends the evaluation, between shots on one rank, at its start on
  // several (where every rank meets); the caller resumes from its last state.
  const auto stop_if_signalled = [&](bool collective) {
    int signal = stop_signal();
    if (collective) shots_->allreduce_in_place(std::span<int>(&signal, 1), ReduceOp::max);
    if (signal) throw Error(ExitCode::interrupted, fmt::format("stopped by signal {} ({})", signal, strsignal(signal)));
  };
  if (ranks > 1) stop_if_signalled(true);
  out.misfit_per_shot.assign(observed_.size(), 0.0);
  using clock = std::chrono::steady_clock;
  const auto started = clock::now();
  auto last_line = started;
  std::size_t mine = (observed_.size() + std::size_t(ranks - 1 - rank)) / std::size_t(ranks);
  std::size_t done = 0;
  // A resumed pass: this rank's sums of the shots it did before it stopped, then the others in the same order.
  std::vector<int> finished;
  if (checkpoint_)
    if (const auto state = checkpoint_->load()) {
      for (auto* v :
           {&out.misfit_per_shot, &out.gradient, &out.illumination, &out.density_gradient, &out.shear_gradient}) {
        if (v->empty()) continue;
        const char* name = v == &out.misfit_per_shot  ? "misfit_per_shot"
                           : v == &out.gradient       ? "gradient"
                           : v == &out.illumination   ? "illumination"
                           : v == &out.shear_gradient ? "shear_gradient"
                                                      : "density_gradient";
        const auto it = state->arrays.find(name);
        if (it == state->arrays.end() || it->second.size() != v->size())
          throw Error(ExitCode::input_error, fmt::format("{}: holds no {} of {} values; remove it to start over",
                                                         checkpoint_->path(), name, v->size()));
        *v = it->second;
      }
      finished = state->done;
      mine -= std::min(mine, finished.size());
    }
  for (std::size_t s = std::size_t(rank); s < observed_.size(); s += std::size_t(ranks)) {
    if (std::find(finished.begin(), finished.end(), int(s)) != finished.end()) continue;
    if (ranks == 1) stop_if_signalled(false);
    const ShotProgress shot_progress(int(s), int(observed_.size()), progress_interval_, checks_);  // lines inside it
    const std::vector<double> synthetic = propagator_.forward(int(s), with_gradient);
    std::vector<double> adjoint_source(synthetic.size());
    out.misfit_per_shot[s] = misfit_.evaluate_shot(int(s), synthetic, observed_[s], dt_, adjoint_source);
    if (with_gradient) propagator_.adjoint(adjoint_source, out.gradient, out.illumination);
    if (!out.density_gradient.empty()) propagator_.add_density_gradient(out.density_gradient);
    if (!out.shear_gradient.empty()) propagator_.add_shear_gradient(out.shear_gradient);
    ++done;
    if (checkpoint_) {
      finished.push_back(int(s));
      checkpoint_->after_shot(int(finished.size()), [&] {
        ShotState state{finished, {{"misfit_per_shot", out.misfit_per_shot}}};
        if (!out.gradient.empty()) state.arrays["gradient"] = out.gradient;
        if (!out.illumination.empty()) state.arrays["illumination"] = out.illumination;
        if (!out.density_gradient.empty()) state.arrays["density_gradient"] = out.density_gradient;
        if (!out.shear_gradient.empty()) state.arrays["shear_gradient"] = out.shear_gradient;
        return state;
      });
    }
    const auto now = clock::now();
    if (progress_interval_ > 0 && done < mine &&
        std::chrono::duration<double>(now - last_line).count() >= progress_interval_) {
      last_line = now;
      const double elapsed = std::chrono::duration<double>(now - started).count();
      progress_line(fmt::format("  shot {} (of {}) done  misfit {:.6e}  elapsed {}  ETA {}  {}\n", s, observed_.size(),
                                out.misfit_per_shot[s], format_duration(elapsed),
                                format_duration(elapsed / double(done) * double(mine - done)), utc_timestamp()));
    }
  }
  if (ranks > 1) {
    for (auto* v :
         {&out.misfit_per_shot, &out.gradient, &out.illumination, &out.density_gradient, &out.shear_gradient}) {
      if (v->empty()) continue;
      shots_->allreduce_in_place(std::span<double>(*v), ReduceOp::sum);
      shots_->broadcast(std::span<double>(*v), 0);  // the same bits on every rank, whatever the reduction's order
    }
  }
  for (const double j : out.misfit_per_shot) out.misfit += j;
  if (with_gradient && lame_) {  // dJ/d lambda, dJ/d mu, dJ/d rho at fixed lambda and mu from the sums
    lame_gradients(dt_, velocity, lame.vs, density, out.gradient, out.shear_gradient, out.density_gradient);
    if (!shear_) out.shear_gradient.clear();
  } else {
    if (with_gradient) chain_rule(parameterisation_, velocity, dt_, out.gradient);
    if (!out.shear_gradient.empty())  // dJ/dvs = 2 vs dt^2 dJ/d(vs dt)^2
      chain_rule(Parameterisation::velocity, propagator_.shear_velocity(), dt_, out.shear_gradient);
  }
  out.regularisation = add_regularisation(regularisation_, grid_, model,
                                          with_gradient ? std::span<double>(out.gradient) : std::span<double>());
  out.misfit += out.regularisation;
  return out;
}

Regularisation regularisation_of(const Case& c, const Plan& plan) {
  const double v = plan.v_reference > 0 ? plan.v_reference : plan.model.v_max;
  const double p = c.inversion.parameterisation == Parameterisation::velocity ? v : 1 / (v * v);
  const double h = c.grid.smallest_spacing();
  return {c.inversion.regularisation, c.inversion.regularisation_weight, 1e-3 * p / h};
}

std::vector<int> shots_of_rank(const Comm& world, const std::vector<int>& shots) {
  std::vector<int> mine;
  for (std::size_t k = 0; k < shots.size(); ++k)
    if (int(k % std::size_t(world.size())) == world.rank()) mine.push_back(shots[k]);
  return mine;
}

std::vector<std::vector<double>> share_shot_traces(const Comm& world, const std::vector<int>& shots,
                                                   std::vector<std::vector<double>> mine,
                                                   const std::vector<std::size_t>& values) {
  std::vector<std::vector<double>> all(shots.size());
  std::size_t next = 0;
  for (std::size_t k = 0; k < shots.size(); ++k) {
    const bool own = int(k % std::size_t(world.size())) == world.rank();
    all[k] = own ? std::move(mine[next++]) : std::vector<double>(values.at(k), 0.0);
    if (world.size() > 1) world.allreduce_in_place(std::span<double>(all[k]), ReduceOp::sum);
  }
  return all;
}

}  // namespace specwave
