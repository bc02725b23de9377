#include "solver/inversion/imaging.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>

#include "io/checksum.hpp"
#include "io/file_kind.hpp"
#include "io/folder_lock.hpp"
#include "io/hdf5.hpp"
#include "io/outputs.hpp"
#include "io/png_plot.hpp"
#include "solver/case/errors.hpp"
#include "solver/forward/checkpoint.hpp"
#include "solver/forward/progress.hpp"
#include "solver/inversion/inversion.hpp"
#include "solver/inversion/inversion_outputs.hpp"
#include "solver/inversion/lame.hpp"
#include "solver/inversion/misfit.hpp"
#include "solver/inversion/objective.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/plan/plan.hpp"

namespace specwave {
namespace fs = std::filesystem;

const std::vector<std::string> gradient_output_names = {"gradient.h5",        "gradient.xdmf",       "gradient.vtkhdf",
                                                        "source_estimate.h5", "source_estimate.png", "checkpoint"};
const std::vector<std::string> born_output_names = {"born_traces.h5", "checkpoint"};
const std::vector<std::string> migrate_output_names = {"image.h5", "image.xdmf", "image.vtkhdf", "image_slice.png",
                                                       "checkpoint"};

namespace {

// The adjoint of Born applied to the observed data as they are: with J = -sum dt d_syn . d_obs the adjoint source
// is -dt d_obs, so the Objective's gradient is -F^T d_obs whatever the synthetic data (migration of "observed").
class ObservedDataMisfit final : public Misfit {
 public:
  std::string name() const override { return "observed_data"; }
  double evaluate(std::span<const double> synthetic, std::span<const double> observed, double dt,
                  std::span<double> adjoint_source) const override {
    double j = 0;
    for (std::size_t k = 0; k < observed.size(); ++k) {
      j -= dt * synthetic[k] * observed[k];
      adjoint_source[k] = -dt * observed[k];
    }
    return j;
  }
};

// A file named on the command line: it must exist and be a regular file (Error input_error naming the option).
void require_input(const std::string& path, const std::string& option, const std::string& fix) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw Error(ExitCode::input_error, fmt::format("{}: {}: file not found (relative paths are resolved against the "
                                                   "current directory); {}",
                                                   path, option, fix));
  io::require_regular_file(path, option, fix);
}

// The set-up every command shares with `invert`: the model (the case's or --model), the checks before anything is
// written, the lock on the output folder, the plan (shot groups of one rank under MPI) and the gradient propagator.
// `runs_adjoint`: the command (gradient, migrate) needs the observed data and the forward wavefields; born neither.
struct Session {
  Case c;
  Comm world = Comm::world();
  const Comm* shots = nullptr;  // MPI: the ranks share the shots
  bool root = true, quiet = false;
  std::optional<io::FolderLock> lock;
  Plan plan;
  std::unique_ptr<GradientPropagator> propagator;
  TraceWeights trace_weights;  // inversion.trace_weights, read once (empty without)

  Session(const Case& input, const ImagingOptions& o, const std::string& command,
          const std::vector<std::string>& output_names, bool runs_adjoint)
      : c(input) {
    if (!o.model_file.empty()) {
      c.model = ModelSpec{};
      c.model.kind = ModelSpec::Kind::file;
      c.model.file = fs::absolute(o.model_file).string();
      c.model.dataset = o.model_dataset;
      require_input(c.model.file, "--model", "give the HDF5 file of the model (m/s, the grid's shape)");
    }
    if (runs_adjoint && !c.inversion.present)
      throw Error(ExitCode::invalid_case,
                  fmt::format("{}: {} needs the observed data of an [inversion] table: observed = \"traces.h5\" (a "
                              "traces file of this acquisition) or an [inversion.true_model] table (docs/case-file.md)",
                              c.label(), command));
    apply_threads(c);
    check_inputs_not_overwritten(c, output_names);
    const fs::path dir(c.output.directory);
    if (!o.perturbation_file.empty()) {
      for (const auto& name : output_names)
        if (name != "checkpoint")  // a folder of the pass's own state
          io::check_output_file((dir / name).string(), {o.perturbation_file},
                                "give another --output-dir, or move the perturbation file");
    }
    root = world.rank() == 0;
    quiet = o.quiet || !root;
    if (world.size() > 1) shots = &world;
    Case planned = c;
    if (shots) planned.run.shot_groups = world.size();
    const Comm node = world.split_node();
    plan = make_plan(planned, {world.size(), world.rank(), node.size(), node.rank(), shots});
    // A command without an adjoint (born) keeps no forward wavefields: inversion.wavefield_storage and its budget
    // are not its concern.
    const HistoryChoice history = runs_adjoint ? history_for(c, plan) : HistoryChoice{};
    if (runs_adjoint) check_observed(c, plan);  // a data file's shape, interval, geometry and values
    if (runs_adjoint) check_band(c, plan, o.band_hz, "--band");
    if (runs_adjoint) trace_weights = read_trace_weights(c);  // inversion.trace_weights: shape and values
    if (root) lock.emplace(c.output.directory, command);      // the first thing written: after every check
    if (!quiet)
      std::fputs((describe_plan(c, plan) +
                  (runs_adjoint ? describe_wavefields(plan, history) : "wavefields  none (a Born run keeps none)\n"))
                     .c_str(),
                 stdout);
    propagator = make_gradient_propagator(c, plan, history);
  }

  std::vector<double> velocity() const { return {plan.model.velocity.begin(), plan.model.velocity.end()}; }
  std::string path(const std::string& name) const { return (fs::path(c.output.directory) / name).string(); }
  io::h5::Provenance provenance(const std::string& file_type) const {
    io::h5::Provenance p{file_type,   to_string(c.run.precision), "cpu", c.source_text, "host CPU", plan.threads,
                         world.size()};
    if (plan.backend == BackendKind::cuda) p.backend = "cuda", p.device = plan.backend_note;
    return p;
  }
  double progress_seconds() const { return quiet ? 0.0 : c.run.progress_seconds; }

  // The pass's shot checkpoint (solver/inversion/shot_checkpoint.hpp): its fingerprint holds the command, the case as
  // it determines the result, precision and backend, and the checksums of the model and of `inputs` (the data, a
  // perturbation, the band). Without --resume an old state is removed: a fresh pass.
  std::unique_ptr<ShotCheckpoint> checkpoint(const std::string& command, const ImagingOptions& o,
                                             const std::vector<std::span<const double>>& inputs) const {
    std::uint64_t sum = 0;
    const auto add = [&](std::span<const double> v) {
      sum = io::combine_checksums(sum, io::checksum64(v.data(), v.size() * 8));
    };
    const std::vector<double> v = velocity();
    add(v);
    // (The density and the elastic scheme's shear velocity too, when the model has them.)
    for (const auto* m : {&plan.model.density, &plan.model.shear})
      if (!m->empty()) {
        const std::vector<double> values(m->begin(), m->end());
        add(values);
      }
    for (const auto& input : inputs) add(input);
    auto out = std::make_unique<ShotCheckpoint>(
        c.output.directory, world.rank(), world.size(),
        fmt::format("{}, case {:016x}, {} on {}, inputs {}, band {:.17g}", command,
                    std::hash<std::string>{}(state_case_text(c)), to_string(c.run.precision),
                    plan.backend == BackendKind::cuda ? "cuda" : "cpu", io::checksum_hex(sum), o.band_hz),
        c.run.checkpoint_minutes);
    if (!o.resume) {
      out->remove();
    } else if (!quiet) {
      std::fputs((fs::exists(out->path())
                      ? fmt::format("resume      from {}\n", out->path())
                      : fmt::format("resume      no state in {}: starting from the first shot\n", out->path()))
                     .c_str(),
                 stdout);
    }
    return out;
  }
};

// Every shot's traces of observed data, as one list of arrays for a checksum.
std::vector<std::span<const double>> spans_of(const ObservedData& data) {
  std::vector<std::span<const double>> out;
  for (const auto& shot : data) out.emplace_back(shot);
  return out;
}

const char* parameter_units(Parameterisation p) {
  return p == Parameterisation::velocity ? "misfit per m/s" : "misfit per s^2/m^2";
}

}  // namespace

std::vector<double> negative_laplacian(const GridSpec& g, std::span<const double> v) {
  const int nz = g.shape[0], ny = g.shape[1], nx = g.shape[2];
  std::vector<double> out(v.size(), 0.0);
  const double wz = nz > 1 ? 1 / (g.spacing[0] * g.spacing[0]) : 0, wy = ny > 1 ? 1 / (g.spacing[1] * g.spacing[1]) : 0,
               wx = nx > 1 ? 1 / (g.spacing[2] * g.spacing[2]) : 0;
  const auto at = [&](int z, int y, int x) {
    return v[(std::size_t(std::clamp(z, 0, nz - 1)) * ny + std::clamp(y, 0, ny - 1)) * nx + std::clamp(x, 0, nx - 1)];
  };
#pragma omp parallel for collapse(2)
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        const double c = at(z, y, x);
        out[(std::size_t(z) * ny + y) * nx + x] =
            -(wz * (at(z - 1, y, x) - 2 * c + at(z + 1, y, x)) + wy * (at(z, y - 1, x) - 2 * c + at(z, y + 1, x)) +
              wx * (at(z, y, x - 1) - 2 * c + at(z, y, x + 1)));
      }
  return out;
}

ImagingSummary run_gradient(const Case& input, const ImagingOptions& o) {
  Session s(input, o, "gradient", gradient_output_names, true);
  const Case& c = s.c;
  const ObservedData observed = observed_data(c, s.plan, *s.propagator, s.shots, s.progress_seconds());
  const std::vector<double> velocity = s.velocity();
  // inversion.source_estimation: the filters at this model, as invert estimates them at a band's start; the gradient
  // is then the gradient of the misfit at that wavelet.
  std::shared_ptr<const SourceFilters> filters;
  if (c.inversion.source_estimation != "none")
    filters = std::make_shared<const SourceFilters>(
        estimate_source_filters(c, s.plan, *s.propagator, observed, velocity, s.trace_weights, s.shots));
  const std::unique_ptr<Misfit> misfit = case_misfit(c, s.plan, o.band_hz, &s.trace_weights, filters);
  const Parameterisation p = c.inversion.parameterisation;
  Objective objective(*s.propagator, *misfit, observed, p, s.plan.dt, s.shots);
  objective.report_progress(s.progress_seconds());
  objective.check_fields({&c, &s.plan});
  objective.regularise(regularisation_of(c, s.plan), c.grid);
  const InversionSpec& inv = c.inversion;
  objective.with_density_gradient(inv.density_parameter);
  objective.with_shear_gradient(inv.shear_parameter || inv.lame);
  objective.with_lame(inv.lame);
  const auto checkpoint = s.checkpoint("gradient", o, spans_of(observed));
  objective.checkpoint(checkpoint.get());
  // The Lame parameters (inversion.parameters names "lambda"): the gradient at lambda, mu and the density.
  // (The density the gradient is taken at, with "density" or the Lame parameters.)
  const std::vector<double> density =
      inv.lame || inv.density_parameter ? s.propagator->density() : std::vector<double>{};
  const LameModel lame = inv.lame ? lame_of(velocity, s.propagator->shear_velocity(), density) : LameModel{};
  const auto started = std::chrono::steady_clock::now();
  MisfitGradient r = inv.lame ? objective.evaluate(lame.lambda, true, true, density, lame.mu)
                              : objective.evaluate(parameter_from_velocity(p, velocity), true, true);
  checkpoint->remove();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ImagingSummary out;
  const std::string term = r.regularisation != 0
                               ? fmt::format(", {} {:.6e} included", c.inversion.regularisation, r.regularisation)
                               : std::string();
  out.result = fmt::format("misfit {:.6e} ({}{}{}) over {} shot(s) in {:.1f} s; gradient with respect to {}", r.misfit,
                           misfit->name(), o.band_hz > 0 ? fmt::format(", {} Hz", o.band_hz) : "", term, c.shots.size(),
                           seconds, inv.lame ? "lambda" : to_string(p)) +
               (inv.lame ? " and to mu (mu_gradient)" : "") +
               (inv.density_parameter ? inv.lame ? " and to the density at fixed lambda and mu (density_gradient)"
                                                 : " and to the density (density_gradient)"
                                      : "") +
               (inv.shear_parameter ? " and to the shear velocity (shear_gradient)" : "");
  out.outputs = {s.path("gradient.h5"), s.path("gradient.xdmf"), s.path("gradient.vtkhdf")};
  if (filters) out.outputs.push_back(s.path("source_estimate.h5"));
  if (!s.root) return out;
  if (filters)
    write_source_estimate(c, estimated_wavelets(c, s.plan, *filters),
                          estimated_wavelets(c, s.plan, SourceFilters(filters->nt(), 1, true)).front(),
                          observed_sampling(c, s.plan).dt, o.band_hz, s.plan.threads);
  std::vector<io::GridArray> arrays = {{"gradient", inv.lame ? "misfit per Pa" : parameter_units(p), r.gradient},
                                       {"illumination", "field^2", r.illumination},
                                       {"velocity", "m/s", velocity}};
  // The Lame parameters: lambda (the gradient's), mu and its gradient.
  if (inv.lame) {
    arrays.push_back({"lambda", "Pa", lame.lambda});
    arrays.push_back({"mu_gradient", "misfit per Pa", r.shear_gradient});
    arrays.push_back({"mu", "Pa", lame.mu});
  }
  // inversion.parameters with "density": dJ/d rho at fixed velocity, and the density it was taken at.
  if (c.inversion.density_parameter) {
    arrays.push_back({"density_gradient", "misfit per kg/m^3", r.density_gradient});
    arrays.push_back({"density", "kg/m^3", density});
  }
  // "shear_velocity" (the elastic scheme): dJ/d vs at fixed vp and density, and the shear velocity.
  const std::vector<double> shear =
      c.inversion.shear_parameter ? s.propagator->shear_velocity() : std::vector<double>{};
  if (c.inversion.shear_parameter) {
    arrays.push_back({"shear_gradient", "misfit per m/s", r.shear_gradient});
    arrays.push_back({"shear_velocity", "m/s", shear});
  }
  io::write_grid_arrays_file(s.path("gradient.h5"), s.provenance("specwave.gradient"), c.grid, arrays,
                             {{"misfit_per_shot", "misfit", r.misfit_per_shot}},
                             {{"misfit", r.misfit},
                              {"regularisation", r.regularisation},
                              {"dt", s.plan.dt},
                              {"nt", double(s.plan.nt)},
                              {"band_hz", o.band_hz}},
                             {{"parameterisation", inv.lame ? "lame" : to_string(p)}, {"misfit_name", misfit->name()}});
  return out;
}

ImagingSummary run_born(const Case& input, const ImagingOptions& o) {
  if (o.perturbation_file.empty())
    throw Error(ExitCode::usage, "born needs --perturbation FILE (an HDF5 dataset of the grid's shape)");
  // The perturbation is read and checked first: a bad one stops the command before anything is planned or written.
  const GridSpec& g = input.grid;
  require_input(o.perturbation_file, "--perturbation",
                "give the HDF5 file of the model perturbation (the grid's shape)");
  const std::vector<hsize_t> dims = {hsize_t(g.shape[0]), hsize_t(g.shape[1]), hsize_t(g.shape[2])};
  const std::vector<double> dm =
      io::h5::Reader(o.perturbation_file).read_floating<double>(o.perturbation_dataset, dims);
  for (std::size_t k = 0; k < dm.size(); ++k)
    if (!std::isfinite(dm[k]))
      throw Error(
          ExitCode::input_error,
          fmt::format("{}: dataset '{}': value {} at index (z={}, y={}, x={}); a perturbation must be finite",
                      o.perturbation_file, o.perturbation_dataset, dm[k], k / (std::size_t(g.shape[1]) * g.shape[2]),
                      k / std::size_t(g.shape[2]) % g.shape[1], k % std::size_t(g.shape[2])));
  Session s(input, o, "born", born_output_names, false);
  const Case& c = s.c;
  const Parameterisation p = c.inversion.parameterisation;
  const std::vector<double> velocity = s.velocity();
  // d(v dt)^2 = J dm with J = d(v dt)^2 / d(parameter): chain_rule's factor, so that Born is the gradient's transpose
  std::vector<double> d(dm.size(), 1.0);
  chain_rule(p, velocity, s.plan.dt, d);
  for (std::size_t k = 0; k < d.size(); ++k) d[k] *= dm[k];
  s.propagator->set_velocity(velocity);
  std::vector<int> all(c.shots.size());
  for (std::size_t k = 0; k < all.size(); ++k) all[k] = int(k);
  const std::vector<int> mine = shots_of_rank(s.world, all);
  std::vector<std::vector<double>> traces;
  const auto started = std::chrono::steady_clock::now();
  double last_line = 0;
  // A resumed pass: the Born traces of this rank's shots done before it stopped, one array each.
  const auto checkpoint = s.checkpoint("born", o, {std::span<const double>(dm)});
  std::vector<int> finished;
  if (const auto state = checkpoint->load()) {
    finished = state->done;
    for (std::size_t k = 0; k < finished.size(); ++k) {
      const auto it = state->arrays.find(fmt::format("shot{}", finished[k]));
      if (it == state->arrays.end())
        throw Error(ExitCode::input_error, fmt::format("{}: holds no traces of shot {}; remove it to start over",
                                                       checkpoint->path(), finished[k]));
      traces.push_back(it->second);
    }
  }
  for (int shot : mine) {
    if (std::find(finished.begin(), finished.end(), shot) != finished.end()) continue;
    if (const int signal = s.shots ? 0 : stop_signal())
      throw Error(ExitCode::interrupted, fmt::format("stopped by signal {} ({}) before shot {}; nothing was written",
                                                     signal, strsignal(signal), shot));
    const ShotProgress shot_progress(shot, int(all.size()), s.progress_seconds(), {&c, &s.plan});  // lines inside it
    traces.push_back(s.propagator->born(shot, d));
    finished.push_back(shot);
    checkpoint->after_shot(int(finished.size()), [&] {
      ShotState state{finished, {}};
      for (std::size_t k = 0; k < finished.size(); ++k) state.arrays[fmt::format("shot{}", finished[k])] = traces[k];
      return state;
    });
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (s.progress_seconds() > 0 && (elapsed - last_line >= s.progress_seconds() || traces.size() == mine.size())) {
      last_line = elapsed;
      const double eta = elapsed / double(traces.size()) * double(mine.size() - traces.size());
      progress_line(fmt::format("  shot {} (of {}) done  elapsed {}  ETA {}  {}\n", shot, all.size(),
                                format_duration(elapsed), format_duration(eta), utc_timestamp()));
    }
  }
  checkpoint->remove();
  std::vector<std::size_t> values;
  for (int shot : all) values.push_back(shot_receivers(c, std::size_t(shot)).size() * std::size_t(s.plan.nt));
  traces = share_shot_traces(s.world, all, std::move(traces), values);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ImagingSummary out;
  out.result = shared_receivers(c) ? fmt::format("Born data of {} shot(s) x {} receivers x {} samples in {:.1f} s",
                                                 all.size(), c.receivers.size(), s.plan.nt, seconds)
                                   : fmt::format("Born data of {} shot(s), {} traces x {} samples in {:.1f} s",
                                                 all.size(), total_traces(c), s.plan.nt, seconds);
  out.outputs = {s.path("born_traces.h5")};
  if (!s.root) return out;
  std::vector<std::vector<Vec3>> sources;
  for (const auto& shot : c.shots) {
    auto& ps = sources.emplace_back();
    for (const auto& src : shot.sources) ps.push_back(src.position);
  }
  const bool fp64 = c.run.precision == Precision::fp64;
  std::unique_ptr<io::TraceFile> file;
  if (shared_receivers(c)) {
    file = std::make_unique<io::TraceFile>(s.path("born_traces.h5"), s.provenance("specwave.traces"), fp64,
                                           int(all.size()), c.receivers, sources, s.plan.nt, s.plan.dt);
  } else {
    std::vector<std::vector<Vec3>> receivers;
    for (int shot : all) receivers.push_back(shot_receivers(c, std::size_t(shot)));
    file = std::make_unique<io::TraceFile>(s.path("born_traces.h5"), s.provenance("specwave.traces"), fp64, receivers,
                                           sources, s.plan.nt, s.plan.dt);
  }
  for (int shot : all) file->write_shot(shot, traces[std::size_t(shot)]);
  file->commit();
  return out;
}

ImagingSummary run_migration(const Case& input, const ImagingOptions& o) {
  Session s(input, o, "migrate", migrate_output_names, true);
  const Case& c = s.c;
  const MigrationSpec& m = c.migration;
  const ObservedData observed = observed_data(c, s.plan, *s.propagator, s.shots, s.progress_seconds());
  std::unique_ptr<Misfit> misfit;
  if (m.data == "residual")
    misfit = std::make_unique<LeastSquaresMisfit>();
  else
    misfit = std::make_unique<ObservedDataMisfit>();
  misfit = on_data_sampling(c, s.plan, std::move(misfit));
  // With respect to velocity whatever inversion.parameterisation says: the image is dv-like, positive where the
  // data ask for a faster model.
  Objective objective(*s.propagator, *misfit, observed, Parameterisation::velocity, s.plan.dt, s.shots);
  objective.report_progress(s.progress_seconds());
  objective.check_fields({&c, &s.plan});
  const std::vector<double> velocity = s.velocity();
  const auto checkpoint = s.checkpoint("migrate", o, spans_of(observed));
  objective.checkpoint(checkpoint.get());
  const auto started = std::chrono::steady_clock::now();
  MisfitGradient r = objective.evaluate(velocity, true, true);
  checkpoint->remove();
  std::vector<double> raw(r.gradient.size());
  for (std::size_t k = 0; k < raw.size(); ++k) raw[k] = -r.gradient[k];
  std::vector<double> image = m.laplacian_filter ? negative_laplacian(c.grid, raw) : raw;
  if (m.illumination_compensation) {
    const double peak = *std::max_element(r.illumination.begin(), r.illumination.end());
    const double floor = m.illumination_epsilon * peak;
    for (std::size_t k = 0; k < image.size(); ++k) image[k] /= r.illumination[k] + floor;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ImagingSummary out;
  out.result = fmt::format("image of {} shot(s) ({} data{}{}) in {:.1f} s", c.shots.size(), m.data,
                           m.laplacian_filter ? ", -Laplacian filter" : "",
                           m.illumination_compensation ? ", illumination compensated" : "", seconds);
  out.outputs = {s.path("image.h5"), s.path("image.xdmf"), s.path("image.vtkhdf")};
  if (c.output.plots) out.outputs.push_back(s.path("image_slice.png"));
  if (!s.root) return out;
  io::write_grid_arrays_file(s.path("image.h5"), s.provenance("specwave.image"), c.grid,
                             {{"image", "1", image},
                              {"raw_image", "misfit per m/s", raw},
                              {"illumination", "field^2", r.illumination},
                              {"velocity", "m/s", velocity}},
                             {}, {{"dt", s.plan.dt}, {"nt", double(s.plan.nt)}},
                             {{"data", m.data},
                              {"laplacian_filter", m.laplacian_filter ? "true" : "false"},
                              {"illumination_compensation", m.illumination_compensation ? "true" : "false"}});
  if (c.output.plots) {
    const GridSpec& g = c.grid;
    const int nz = g.shape[0], ny = g.shape[1], nx = g.shape[2], y = ny / 2;
    std::vector<float> slice(std::size_t(nz) * nx);
    for (int z = 0; z < nz; ++z)
      for (int x = 0; x < nx; ++x) slice[std::size_t(z) * nx + x] = float(image[(std::size_t(z) * ny + y) * nx + x]);
    io::ImagePlot plot;
    plot.title = fmt::format("{}: migrated image at y = {:.0f} m", c.name, g.origin[1] + y * g.spacing[1]);
    plot.x_label = "x (m)", plot.y_label = "z (m)";
    plot.x_min = g.origin[2], plot.x_max = g.origin[2] + (nx - 1) * g.spacing[2];
    plot.y_min = g.origin[0], plot.y_max = g.origin[0] + (nz - 1) * g.spacing[0];
    plot.aspect = g.spacing[0] / g.spacing[2];
    plot.colormap = io::Colormap::seismic;
    plot.colorbar_label = "image";
    io::write_image_png(s.path("image_slice.png"), slice, nz, nx, plot);
  }
  return out;
}

}  // namespace specwave
