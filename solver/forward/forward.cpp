#include "solver/forward/forward.hpp"
#include "solver/forward/particle_velocity.hpp"
#include "solver/plan/resample.hpp"
#include "solver/plan/shot_receivers.hpp"

#include <omp.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>

#include "io/checksum.hpp"
#include "io/folder_lock.hpp"
#include "io/outputs.hpp"
#include "io/png_plot.hpp"
#include "io/toml_edit.hpp"
#include "io/vtkhdf.hpp"
#include "solver/case/errors.hpp"
#include "solver/forward/checkpoint.hpp"
#include "solver/forward/progress.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/propagators/propagator.hpp"

namespace specwave {
namespace {

std::vector<int> snapshot_steps(int every, int nt) {
  std::vector<int> steps;
  if (every > 0)
    for (int n = every; n <= nt; n += every) steps.push_back(n);
  return steps;
}

// The point of flat (nz, ny, nx) index `i` as the blow-up messages name it: "index (z=.., y=.., x=..), (.., .., ..) m".
std::string field_point(const GridSpec& g, std::int64_t i) {
  const int ix = int(i % g.shape[2]), iy = int(i / g.shape[2] % g.shape[1]),
            iz = int(i / (std::int64_t(g.shape[2]) * g.shape[1]));
  const Vec3 p = g.position(iz, iy, ix);
  return fmt::format("index (z={}, y={}, x={}), ({:.6g}, {:.6g}, {:.6g}) m", iz, iy, ix, p[0], p[1], p[2]);
}

}  // namespace

void blow_up(const Case& c, const Plan& plan, int shot, int step, const FieldStats& s) {
  // A finite field above a run.max_amplitude set below its default may be the threshold's doing: say so first.
  const bool threshold = s.finite && c.run.max_amplitude < RunSpec{}.max_amplitude;
  throw Error(
      ExitCode::blow_up,
      fmt::format(
          "the simulation became unstable at shot {} step {} (t = {:.6g} s): |u| = {:.3g} at {}, above "
          "run.max_amplitude = {:.3g}; {}reduce time.dt or time.cfl_safety (CFL number {:.3f}), check the velocity "
          "model there, and check the source amplitude",
          shot, step, step * plan.dt, s.max_abs, field_point(c.grid, s.argmax), c.run.max_amplitude,
          threshold
              ? fmt::format("if that threshold (default {:.0e}) is below the run's true amplitudes, raise it; else ",
                            RunSpec{}.max_amplitude)
              : "",
          plan.cfl));
}

LateGrowth::LateGrowth(const Plan& plan, int shot) {
  double peak = 0;
  for (const auto& w : plan.wavelets.at(std::size_t(shot)))
    for (double v : w) peak = std::max(peak, std::abs(v));
  for (const auto& w : plan.wavelets.at(std::size_t(shot)))
    for (std::size_t n = 0; n < w.size(); ++n)
      if (std::abs(w[n]) > 1e-6 * peak) quiet_ = std::max(quiet_, int(n) + 1);
}

void LateGrowth::check(const Case& c, const Plan& plan, int shot, int step, const FieldStats& s) {
  const double factor = c.run.late_growth_factor;
  if (factor <= 0) return;
  if (!armed_) {
    reference_ = std::max(reference_, s.max_abs);
    armed_ = step > quiet_ && reference_ > 0;
    return;
  }
  if (!(s.max_abs > factor * reference_)) return;
  throw Error(
      ExitCode::blow_up,
      fmt::format(
          "the simulation became unstable at shot {} step {} (t = {:.6g} s): its sources fell silent at step {} (t = "
          "{:.6g} s), and since then |u| grew to {:.3g} at {}, {:.0f} times the largest value before ({:.3g}; "
          "run.late_growth_factor = {:g}); with no source a field does "
          "not grow so (a focusing array can, by its gain: raise the factor, or 0 turns the watch off). {}",
          shot, step, step * plan.dt, quiet_, quiet_ * plan.dt, s.max_abs, field_point(c.grid, s.argmax),
          s.max_abs / reference_, reference_, factor,
          c.scheme.formulation == Formulation::elastic
              ? fmt::format("In the elastic scheme a CPML that an interface or the free surface reaches can grow "
                            "at late times unless its multi-axial part damps it (docs/validation.md, \"Late "
                            "growth\"; boundary.pml_multiaxial = {:g} here): raise boundary.pml_multiaxial (0.03 by "
                            "default, 0.1 damps harder and reflects more), or shorten time.duration",
                            c.boundary.pml_width > 0 ? c.boundary.pml_multiaxial.value_or(default_pml_multiaxial) : 0.0)
              : fmt::format("Reduce time.dt or time.cfl_safety (CFL number {:.3f}) and check the model there",
                            plan.cfl)));
}

namespace {

// Nearest grid index to a coordinate, clamped to the grid.
int nearest_index(const GridSpec& g, int axis, double coordinate) {
  const int i = int(std::lround((coordinate - g.origin[axis]) / g.spacing[axis]));
  return std::clamp(i, 0, g.shape[axis] - 1);
}

// The (z, x) plane at y index iy of a (nz, ny, nx) field.
template <class T>
std::vector<float> xz_slice(const GridSpec& g, const std::vector<T>& field, int iy) {
  std::vector<float> out(std::size_t(g.shape[0]) * g.shape[2]);
  for (int z = 0; z < g.shape[0]; ++z)
    for (int x = 0; x < g.shape[2]; ++x)
      out[std::size_t(z) * g.shape[2] + x] = float(field[(std::size_t(z) * g.shape[1] + iy) * g.shape[2] + x]);
  return out;
}

// The (z, x) plane at global y index iy of a field of which this rank holds `block` (C order over its extent),
// on every rank of `domain`: each rank fills its part, the others add zeros (an exact sum).
template <class T>
std::vector<float> gather_xz_slice(const Comm& domain, const GridSpec& g, const Subdomain& block,
                                   const std::vector<T>& field, int iy) {
  std::vector<double> out(std::size_t(g.shape[0]) * g.shape[2], 0.0);
  const Dims3 b = block.begin, e = block.extent;
  if (iy >= b[1] && iy < b[1] + e[1])
    for (int z = 0; z < e[0]; ++z)
      for (int x = 0; x < e[2]; ++x)
        out[std::size_t(z + b[0]) * g.shape[2] + x + b[2]] =
            double(field[(std::size_t(z) * e[1] + iy - b[1]) * e[2] + x]);
  domain.allreduce_in_place(std::span<double>(out), ReduceOp::sum);
  return std::vector<float>(out.begin(), out.end());
}

// What a resumed run must share with the run that wrote the checkpoint: the case text (without its comments and layout,
// and without what only says how to report and schedule: run.threads, progress_seconds, check_every and the
// checkpoints' period), the run's layout, and the inputs the case names only by file (the sampled wavelets and the
// placed acquisition here; the model in model_fingerprint).
std::string run_fingerprint(const Case& c, const Plan& plan, int per_group) {
  const auto& p = plan.process_grid;
  std::uint64_t inputs = 0;  // the sampled wavelets, then the placed acquisition
  for (const auto& shot : plan.wavelets)
    for (const auto& w : shot) inputs = io::combine_checksums(inputs, io::checksum64(w.data(), w.size() * 8));
  // The acquisition as placed (a [receivers] file names its geometry by path only): every shot's sources and
  // receivers, positions and components.
  for (std::size_t s = 0; s < c.shots.size(); ++s) {
    const auto& receivers = shot_receivers(c, s);
    std::vector<std::uint8_t> components(receivers.size());
    for (std::size_t r = 0; r < receivers.size(); ++r) components[r] = std::uint8_t(shot_receiver_component(c, s, r));
    inputs = io::combine_checksums(inputs, io::checksum64(receivers.data(), receivers.size() * sizeof(Vec3)));
    inputs = io::combine_checksums(inputs, io::checksum64(components.data(), components.size()));
    for (const auto& source : c.shots[s].sources)
      inputs = io::combine_checksums(inputs, io::checksum64(source.position.data(), sizeof(Vec3)));
  }
  return fmt::format(
      "case text {:016x}, {} {} {} on {}, {} rank(s) in {} shot group(s), process grid {}x{}x{}, {} shot(s) "
      "in flight, nt {}, dt {:.17g}, wavelets and acquisition {}",
      std::hash<std::string>{}(
          io::canonical_toml(c.source_text, {"run.threads", "run.progress_seconds", "run.check_every",
                                             "run.checkpoint_every", "run.checkpoint_minutes"})),
      to_string(c.scheme.method), to_string(c.run.precision), plan.backend == BackendKind::cuda ? "cuda" : "cpu",
      plan.backend == BackendKind::cuda ? plan.backend_note : "host", plan.ranks, plan.shot_groups, p[0], p[1], p[2],
      per_group, plan.nt, plan.dt, io::checksum_hex(inputs));
}

// The checksum of this rank's block of the velocity model: its checkpoint file records it (a changed model.file is
// refused), and whole_model_fingerprint starts from it.
std::uint64_t velocity_checksum(const Plan& plan) {
  const auto& v = plan.model.velocity;
  return io::checksum64(v.data(), v.size() * sizeof(float));
}
std::string model_fingerprint(std::uint64_t velocity) { return "model checksum " + io::checksum_hex(velocity); }

// The whole model's checksum (velocity, density, Q and shear velocity of every rank's block), the same on every rank:
// with run_fingerprint, what a completed run's run.json records so that a resubmitted `forward --resume` can tell
// the same run (completed_earlier).
std::string whole_model_fingerprint(const Plan& plan, std::uint64_t velocity, const Comm& world) {
  const auto& m = plan.model;
  std::uint64_t h = io::combine_checksums(std::uint64_t(world.rank()) + 1, velocity);
  for (const std::vector<float>* f : {&m.density, &m.q, &m.shear})
    h = io::combine_checksums(h, io::checksum64(f->data(), f->size() * sizeof(float)));
  // Summed over the ranks in two 32-bit halves (no overflow below 2^31 ranks), then mixed.
  std::array<long long, 2> parts = {static_cast<long long>(h & 0xffffffffu), static_cast<long long>(h >> 32)};
  world.allreduce_in_place(std::span<long long>(parts), ReduceOp::sum);
  return "model " + io::checksum_hex(io::combine_checksums(std::uint64_t(parts[0]), std::uint64_t(parts[1])));
}

// run.json: the run's figures for scripts and `specwave collect` (docs/batch.md), written atomically by rank 0.
void write_run_json(const std::filesystem::path& dir, const Case& c, const Plan& plan, const ForwardSummary& s,
                    int resumed_from_step, const std::string& fingerprint) {
  const nlohmann::ordered_json run = {{"command", "forward"},
                                      {"case", c.source_path},
                                      {"status", "completed"},
                                      {"fingerprint", fingerprint},
                                      {"propagator", s.propagator},
                                      {"shots", c.shots.size()},
                                      {"nt", plan.nt},
                                      {"dt", plan.dt},
                                      {"points", c.grid.points()},
                                      {"seconds", s.seconds},
                                      {"cells_per_second", s.cells_per_second},
                                      {"ranks", plan.ranks},
                                      {"checkpoints", s.checkpoints},
                                      {"resumed", resumed_from_step >= 0},
                                      {"outputs", s.outputs}};
  // Not finite numbers are written null; bytes that are not UTF-8 (in a path) become U+FFFD.
  const std::string text = run.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  const auto tmp = dir / "run.json.tmp";
  {
    std::ofstream out(tmp);
    out << text;
    if (!out.good()) throw Error(ExitCode::output_error, "cannot write " + tmp.string());
  }
  std::filesystem::rename(tmp, dir / "run.json");
}

// The summary of the run that run.json in `dir` records when it says that this very run (`fingerprint`: the case, the
// model, the wavelets and the layout) completed there and its listed outputs are all still there; else nothing.
// Read by rank 0 only.
std::optional<ForwardSummary> completed_earlier(const std::filesystem::path& dir, const std::string& fingerprint) {
  try {
    std::ifstream in(dir / "run.json");
    if (!in) return std::nullopt;
    const auto run = nlohmann::json::parse(in);
    if (run.value("command", "") != "forward" || run.value("status", "") != "completed" ||
        run.value("fingerprint", "") != fingerprint)
      return std::nullopt;
    ForwardSummary s;
    s.outputs = run.at("outputs").get<std::vector<std::string>>();
    for (const std::string& f : s.outputs)
      if (f.find('*') == std::string::npos && !std::filesystem::exists(f)) return std::nullopt;
    s.seconds = run.at("seconds").is_number() ? run.at("seconds").get<double>() : 0;
    s.cells_per_second = run.at("cells_per_second").is_number() ? run.at("cells_per_second").get<double>() : 0;
    s.propagator = run.value("propagator", "");
    s.completed_earlier = true;
    return s;
  } catch (const std::exception&) {  // damaged or from another version: run again
    return std::nullopt;
  }
}

// What an earlier run left in `dir` that this completed run did not write: wavefield views of other shots or steps
// (wavefield_shotSSSS_stepNNNNNN.vtkhdf, ..._final.vtkhdf: ParaView reads a folder's views as one series), gathers of
// shots this run did not plot (shot_gather_shotSSSS*.png), wavefield.h5 and wavefield.xdmf when this run wrote no
// wavefield, and traces.h5 when it wrote no traces (collect would take it for this run's). Removed, so that the folder
// holds one run; their names, sorted, for the log. `views`: the views this run wrote; `plotted`: the shots whose gather
// it plotted.
std::vector<std::string> remove_earlier_outputs(const std::filesystem::path& dir, const std::vector<std::string>& views,
                                                const std::vector<bool>& plotted, bool wavefield_written,
                                                bool traces_written) {
  namespace fs = std::filesystem;
  static const std::regex view(R"(wavefield_shot\d{4}_(step\d{6}|final)\.vtkhdf)");
  static const std::regex gather(R"(shot_gather_shot(\d{4})(_\w+)?\.png)");
  std::set<std::string> written;
  for (const std::string& v : views) written.insert(fs::path(v).filename().string());
  std::vector<std::string> stale;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    std::smatch m;
    if (std::regex_match(name, view)) {
      if (!written.count(name)) stale.push_back(name);
    } else if (std::regex_match(name, m, gather)) {
      const std::size_t shot = std::stoul(m[1].str());
      if (shot >= plotted.size() || !plotted[shot]) stale.push_back(name);
    } else if ((!wavefield_written && (name == "wavefield.h5" || name == "wavefield.xdmf")) ||
               (!traces_written && name == "traces.h5")) {
      stale.push_back(name);
    }
  }
  std::vector<std::string> removed;
  for (const std::string& name : stale)
    if (fs::remove(dir / name, ec)) removed.push_back(name);
  std::sort(removed.begin(), removed.end());
  return removed;
}

// The shots whose gather is plotted: output.plot_shots, else every shot, or 50 spread evenly over more (the first
// and the last among them).
std::vector<bool> plotted_shots(const Case& c) {
  const int n = int(c.shots.size());
  std::vector<bool> plotted(n, false);
  if (!c.output.plots) return plotted;
  constexpr int most = 50;
  if (!c.output.plot_shots.empty())
    for (int s : c.output.plot_shots) plotted.at(s) = true;
  else if (n <= most)
    plotted.assign(n, true);
  else
    for (int k = 0; k < most; ++k) plotted[std::size_t(std::lround(double(k) * (n - 1) / (most - 1)))] = true;
  return plotted;
}

// shot_gather_shotSSSS.png: one shot's traces (receiver-major, nt each), time down and the receivers across. With
// particle-velocity receivers, one plot per component (shot_gather_shotSSSS_vz.png, ...: pressure and velocity
// differ by rho c in scale), each of that component's receivers.
void write_gather_plot(const Case& c, const Plan& plan, const std::filesystem::path& dir, int shot,
                       std::span<const double> traces) {
  const auto& g = c.grid;
  const auto& all = shot_receivers(c, std::size_t(shot));
  const int nt = plan.trace_nt;
  std::vector<ReceiverComponent> kinds;
  for (std::size_t r = 0; r < all.size(); ++r)
    if (const auto k = shot_receiver_component(c, std::size_t(shot), r);
        std::find(kinds.begin(), kinds.end(), k) == kinds.end())
      kinds.push_back(k);
  for (const ReceiverComponent kind : kinds) {
    std::vector<Vec3> rec;
    std::vector<std::size_t> rows;
    for (std::size_t r = 0; r < all.size(); ++r)
      if (shot_receiver_component(c, std::size_t(shot), r) == kind) rec.push_back(all[r]), rows.push_back(r);
    const int n_rec = int(rec.size());
    std::vector<float> gather(std::size_t(nt) * n_rec);
    for (int r = 0; r < n_rec; ++r)
      for (int t = 0; t < nt; ++t) gather[std::size_t(t) * n_rec + r] = float(traces[rows[std::size_t(r)] * nt + t]);
    const bool several = kinds.size() > 1 || kind != ReceiverComponent::pressure;
    io::ImagePlot gp;
    gp.title = several ? fmt::format("{}: shot {} gather, {}", c.name, shot, to_string(kind))
                       : fmt::format("{}: shot {} gather", c.name, shot);
    // The horizontal axis in metres when the receivers are evenly spaced, ascending, along one axis (a line: its
    // columns are then evenly spaced positions), else the receiver's number.
    gp.x_label = "receiver";
    gp.x_min = 0, gp.x_max = n_rec - 1;
    if (n_rec >= 2)
      for (int a : {2, 1, 0}) {
        const double step = (rec.back()[a] - rec.front()[a]) / (n_rec - 1);
        bool line = step > 1e-9 * g.spacing[a];  // ascending (the image runs left to right)
        for (int r = 0; line && r < n_rec; ++r)
          for (int b = 0; b < 3; ++b) {
            const double expected = b == a ? rec.front()[a] + r * step : rec.front()[b];
            if (std::abs(rec[r][b] - expected) > 1e-6 * g.spacing[b]) line = false;
          }
        if (!line) continue;
        gp.x_label = fmt::format("receiver {} (m)", "zyx"[a]);
        gp.x_min = rec.front()[a], gp.x_max = rec.back()[a];
        break;
      }
    gp.y_label = "time (s)";
    gp.y_min = 0, gp.y_max = (nt - 1) * plan.trace_dt;
    gp.colormap = io::Colormap::gray_seismic;
    gp.colorbar_label = kind == ReceiverComponent::pressure ? "u"
                        : velocity_derivative(kind)         ? fmt::format("{} (1/s)", to_string(kind))
                                                            : fmt::format("{} (m/s)", to_string(kind));
    const std::string suffix = kind == ReceiverComponent::pressure ? "" : fmt::format("_{}", to_string(kind));
    io::write_image_png((dir / fmt::format("shot_gather_shot{:04d}{}.png", shot, suffix)).string(), gather, nt, n_rec,
                        gp);
  }
}

// A plot is a view of what the run writes, not a result: one that cannot be drawn or written costs a warning on
// stderr, never the run's data files.
template <class Fn>
void plot_or_warn(const std::string& what, Fn&& draw) {
  try {
    draw();
  } catch (const std::exception& e) {
    std::fputs(fmt::format("specwave: warning: {} not written ({}); the run goes on, its data files are unaffected\n",
                           what, e.what())
                   .c_str(),
               stderr);
  }
}

template <class T>
ForwardSummary run_typed(const Case& c, const Plan& plan, const ForwardOptions& options) {
  namespace fs = std::filesystem;
  const auto& g = c.grid;
  const int n_shots = int(c.shots.size());
  const fs::path dir(c.output.directory);
  const bool fp64 = std::is_same_v<T, double>;
  const std::vector<bool> plot_gather = plotted_shots(c);

  // MPI: the ranks form plan.shot_groups groups of consecutive ranks; group k runs shots k, k + G, k + 2G, ...
  // with its grid decomposed over its ranks. Every rank takes part in every collective file write, so all
  // ranks step through the same schedule (a group without a shot in the last round only writes nothing).
  const Comm world = Comm::world();
  if (world.size() != plan.ranks)
    throw std::logic_error(
        fmt::format("run_forward: the plan is for {} ranks, the run has {}", plan.ranks, world.size()));
  const int groups = plan.shot_groups, group_size = world.size() / groups, group = world.rank() / group_size;
  const Comm domain = world.split(group, world.rank());
  const bool parallel = world.size() > 1;
  const bool root = world.rank() == 0;
  io::h5::Parallel par;
  if (parallel) {
    long long token = ::getpid();
    world.broadcast(std::span<long long>(&token, 1), 0);
    par = {world.native_handle(), world.rank(), token};
  }

  // One run per output folder, for the whole run (io/folder_lock.hpp): a second one is refused before it touches
  // anything of this one's.
  std::optional<io::FolderLock> lock;
  if (root) lock.emplace(dir.string(), "forward");
  std::error_code made;
  fs::create_directories(dir, made);
  if (!fs::is_directory(dir))
    throw Error(ExitCode::output_error,
                fmt::format("cannot create the output folder {}{}; check output.directory and that "
                            "nothing else (a file) has that name",
                            dir.string(), made ? ": " + made.message() : std::string()));
  // Several shots in flight when one does not fill the device (plan.shots_in_flight; 1 on the CPU and under
  // MPI): their propagators advance in lockstep chunks, and on the GPU each queues its work in its own stream.
  const int per_group = parallel ? 1 : std::min(plan.shots_in_flight, n_shots);
  const std::string run_print = run_fingerprint(c, plan, per_group);
  const std::uint64_t velocity_sum = velocity_checksum(plan);
  CheckpointStore store((dir / "checkpoint").string(), world, run_print, model_fingerprint(velocity_sum));
  // A resubmitted job (`forward --resume` as a batch script always passes it) whose run completed already: no
  // checkpoint, and run.json records this very run with its outputs in place. Nothing to do (docs/batch.md).
  const std::string fingerprint = run_print + ", " + whole_model_fingerprint(plan, velocity_sum, world);
  if (options.resume && !store.exists()) {
    std::optional<ForwardSummary> earlier;
    if (root) earlier = completed_earlier(dir, fingerprint);
    int done = earlier ? 1 : 0;
    world.broadcast(std::span<int>(&done, 1), 0);
    if (done) {
      if (root)
        std::fputs(fmt::format("resume      {}: this run completed already (the same case, inputs and layout; its "
                               "outputs are in place): nothing to do; run without --resume to run it again\n",
                               (dir / "run.json").string())
                       .c_str(),
                   stdout);
      ForwardSummary nothing;
      nothing.completed_earlier = true;
      return earlier.value_or(nothing);
    }
  }
  std::vector<std::unique_ptr<Propagator>> propagators;
  for (int k = 0; k < per_group; ++k) propagators.push_back(make_propagator(c, plan, parallel ? &domain : nullptr));
  const Block block = propagators.front()->block().value_or(whole_grid(g.shape));
  io::h5::Provenance prov{"", to_string(c.run.precision), "cpu", c.source_text, "host CPU", plan.threads, world.size()};
  prov.backend = plan.backend == BackendKind::cuda ? "cuda" : "cpu";
  if (plan.backend == BackendKind::cuda) prov.device = plan.backend_note;

  std::vector<std::vector<Vec3>> source_positions;
  for (const auto& shot : c.shots) {
    auto& ps = source_positions.emplace_back();
    for (const auto& s : shot.sources) ps.push_back(s.position);
  }
  // Checkpoints (docs/batch.md): a stop signal or the period writes one at a step boundary; --resume continues
  // from it. The outputs are written as "<name>.partial" until complete, and reopened by a resumed run.
  const bool resuming = options.resume && store.exists();
  if (options.resume && !resuming && root)
    std::fputs(fmt::format("resume      no checkpoint in {}: starting from the beginning{}\n", store.directory(),
                           fs::exists(dir / "run.json")
                               ? " (run.json records a completed run of another case, model or layout, or its "
                                 "outputs are gone: it runs again)"
                               : "")
                   .c_str(),
               stdout);
  if (!resuming && store.exists()) {  // a fresh run: an old checkpoint would not match its outputs
    if (root)
      std::fputs(
          fmt::format("note        removed the checkpoint an interrupted run left in {} (this run starts afresh; "
                      "pass --resume to continue such a run instead)\n",
                      store.directory())
              .c_str(),
          stdout);
    store.remove();
  }
  // A fresh run's folder no longer holds a completed run: the last run's record goes now (its outputs stay until this
  // run's replace them), so that a script never reads "completed" beside a run that then fails.
  if (!resuming && root) {
    std::error_code ec;
    fs::remove(dir / "run.json", ec);
  }
  const io::h5::Resumable resumable{true, resuming};
  bool checkpointed = resuming;  // a checkpoint of this run exists: keep the partial outputs when it ends early
  struct PartialOutputs {        // otherwise remove them (no half-written files after an error)
    std::vector<fs::path> files;
    const bool& keep;
    bool root;
    ~PartialOutputs() {
      std::error_code ec;
      if (!keep && root)
        for (const auto& f : files) fs::remove(f.string() + ".partial", ec);
    }
  } partial_outputs{{dir / "traces.h5", dir / "wavefield.h5"}, checkpointed, root};

  std::unique_ptr<io::TraceFile> traces;
  if (c.output.traces) {
    prov.file_type = "specwave.traces";
    if (shared_receivers(c)) {
      traces = std::make_unique<io::TraceFile>((dir / "traces.h5").string(), prov, fp64, n_shots, c.receivers,
                                               source_positions, plan.trace_nt, plan.trace_dt, par, resumable);
    } else {
      std::vector<std::vector<Vec3>> receivers;
      for (int s = 0; s < n_shots; ++s) receivers.push_back(shot_receivers(c, std::size_t(s)));
      traces = std::make_unique<io::TraceFile>((dir / "traces.h5").string(), prov, fp64, receivers, source_positions,
                                               plan.trace_nt, plan.trace_dt, par, resumable);
    }
    if (has_velocity_receivers(c)) {  // one entry a row of /receiver_coordinates
      std::vector<ReceiverComponent> components;
      for (int s = 0; s < (shared_receivers(c) ? 1 : n_shots); ++s)
        for (std::size_t r = 0; r < shot_receivers(c, std::size_t(s)).size(); ++r)
          components.push_back(shot_receiver_component(c, std::size_t(s), r));
      traces->write_components(components);
    }
  }
  const std::vector<int> steps = snapshot_steps(c.output.snapshot_every, plan.nt);
  std::unique_ptr<io::WavefieldFile> wavefield;
  if (!steps.empty() || c.output.final_field) {
    prov.file_type = "specwave.wavefield";
    wavefield = std::make_unique<io::WavefieldFile>((dir / "wavefield.h5").string(), prov, fp64, g, n_shots, steps,
                                                    plan.dt, c.output.final_field, plan.nt, par, resumable);
  }
  // Writes this rank's block of the field of each shot of the round (collective: all groups' shots in turn).
  const auto write_blocks = [&](int round_first, const std::vector<T>& field, bool final_field, int snapshot) {
    for (int k = 0; k < groups * per_group; ++k) {
      const int shot = round_first + k;
      if (shot >= n_shots) break;
      const bool mine = k / per_group == group;
      const io::WavefieldFile::Box zero{0, 0, 0};
      const auto& begin = block.sub.begin;
      const auto& extent = mine ? block.sub.extent : zero;
      if (final_field)
        wavefield->write_final_block(shot, begin, extent, mine ? field.data() : nullptr);
      else
        wavefield->write_snapshot_block(shot, snapshot, begin, extent, mine ? field.data() : nullptr);
    }
  };

  std::vector<T> field(std::size_t(block.points()));
  std::vector<float> field_slice;
  const int slice_y = nearest_index(g, 1, c.shots[0].sources[0].position[1]);
  int slice_step = -plan.nt;  // no slice yet
  long long done = 0;
  int resume_first = 0, resume_step = -1;  // the round and step a resumed run continues at
  std::optional<CheckpointMeta> resumed;
  if (resuming) {
    // The driver's state; the propagators' follows once their shots have begun.
    resumed = store.load_meta();
    resume_first = int(resumed->integer("round_first"));
    resume_step = int(resumed->integer("step"));
    done = resumed->integer("steps_done");
    slice_step = int(resumed->integer("slice_step"));
    const auto& slice = resumed->array("field_slice");
    field_slice.assign(slice.begin(), slice.end());
    if (root)
      std::fputs(fmt::format("resume      from {}: shot {} step {} of {} ({} of {} steps done)\n", store.directory(),
                             resume_first, resume_step, plan.nt, done, static_cast<long long>(plan.nt) * n_shots)
                     .c_str(),
                 stdout);
  }
  Progress progress(static_cast<long long>(plan.nt) * n_shots, double(g.points()), c.run.progress_seconds,
                    !options.quiet && root, done);
  CheckpointSchedule schedule(world, c.run.checkpoint_every, c.run.checkpoint_minutes, done);
  // A test aid (docs/cli.md): SPECWAVE_STOP_AFTER_STEPS=N stops the run as SIGUSR1 would once N steps are done
  // (over all shots), with a checkpoint.
  const char* stop_env = std::getenv("SPECWAVE_STOP_AFTER_STEPS");
  const long long stop_at_steps = stop_env ? std::atoll(stop_env) : 0;
  int checkpoints = 0;
  std::span<const double> my_traces;  // this group's shot of the round (under MPI)
  // traces.h5 at output.trace_dt: each shot's traces resampled from the simulation's steps as they are written.
  std::optional<TraceResampler> resampler;
  if (plan.trace_nt != plan.nt || plan.trace_dt != plan.dt)
    resampler.emplace(plan.nt, plan.dt, plan.trace_nt, plan.trace_dt);
  std::vector<double> resampled, velocity;
  const bool velocity_receivers = has_velocity_receivers(c);
  const auto output_traces = [&](int shot, std::span<const double> t) -> std::span<const double> {
    if (velocity_receivers && !t.empty()) {  // particle velocity from the sampled gradient
      velocity.assign(t.begin(), t.end());
      particle_velocity_traces(c, std::size_t(shot), plan.dt, velocity,
                               velocity_receiver_densities(c, plan, std::size_t(shot)));
      t = velocity;
    }
    if (!resampler || t.empty()) return t;
    const std::size_t nt = std::size_t(plan.nt), out = std::size_t(plan.trace_nt), n_rec = t.size() / nt;
    resampled.resize(n_rec * out);
    for (std::size_t r = 0; r < n_rec; ++r)
      resampler->apply(t.subspan(r * nt, nt), std::span<double>(resampled).subspan(r * out, out));
    return resampled;
  };
  ShotReceivers shot_stencils(c, plan);
  for (int first = resume_first; first < n_shots; first += groups * per_group) {
    const int mine_first = first + group * per_group;
    const int count = std::clamp(n_shots - mine_first, 0, per_group);  // this group's shots
    const int round = std::min(groups * per_group, n_shots - first);   // all groups' shots
    std::vector<Propagator*> running;
    std::vector<LateGrowth> growth;
    for (int k = 0; k < count; ++k) {
      const int shot = mine_first + k;
      propagators[k]->begin_shot(plan.sources[shot], plan.wavelets[shot], shot_stencils.of(shot, plan.receivers));
      running.push_back(propagators[k].get());
      growth.emplace_back(plan, shot);
    }
    std::size_t next_snapshot = 0;
    int n = 0;
    if (first == resume_first && resume_step >= 0) {
      store.load_state(running);
      // (Rank 0 writes the meta: its group's references. With several shot groups, or from a checkpoint written
      // before 2026-12-07, which has none, the first checks make them again.)
      if (const auto it = resumed->arrays.find("late_growth_reference"); groups == 1 && it != resumed->arrays.end())
        for (std::size_t k = 0; k < growth.size() && k < it->second.size(); ++k) growth[k].set_reference(it->second[k]);
      n = resume_step;
      while (next_snapshot < steps.size() && steps[next_snapshot] <= n) ++next_snapshot;
    }
    // A snapshot's copies are started when its step is reached, and finished and written once the next chunk of
    // steps of every shot is queued, so that on the GPU they overlap those steps (each field is read once: the
    // written snapshot and the plotted slice share it).
    struct PendingSnapshot {
      int index, step;
    };
    std::optional<PendingSnapshot> pending;
    const auto finish_snapshot = [&] {
      const PendingSnapshot s = *pending;
      pending.reset();
      for (int k = 0; k < count; ++k) {
        const int shot = mine_first + k;
        propagators[k]->finish_copy_field(std::span<T>(field));
        if (!parallel) wavefield->write_snapshot(shot, s.index, field.data());
        // The plotted slice: shot 0's snapshot nearest the middle of the run.
        if (shot == 0 && std::abs(s.step - plan.nt / 2) <= std::abs(slice_step - plan.nt / 2))
          field_slice = gather_xz_slice(domain, g, block.sub, field, slice_y), slice_step = s.step;
      }
      // Under MPI one shot a group (count <= 1): `field` holds it.
      if (parallel) write_blocks(first, field, false, s.index);
    };
    // The steps between two checks run in chunks of about a quarter of run.progress_seconds (from the last chunk's
    // rate), each followed by a progress update, so that a line comes every progress_seconds however long
    // run.check_every steps take (the same steps and values whatever the chunks: a step's state is whole between any
    // two).
    int chunk = 1;
    while (n < plan.nt) {
      int end = std::min(plan.nt, (n / c.run.check_every + 1) * c.run.check_every);
      if (next_snapshot < steps.size()) end = std::min(end, steps[next_snapshot]);
      // run.checkpoint_every below check_every: the ranks meet where a checkpoint is due too.
      if (const long long due = schedule.steps_until_due(done); due > 0)
        end = int(std::min<long long>(end, n + (due + round - 1) / round));
      // (A rank's chunks follow its own clock: nothing collective happens between them but the steps' own halo
      // exchanges, in step order on every rank; the pending snapshot, collective, is finished at `end`.)
      while (n < end) {
        const int stop = std::min(end, n + chunk);
        const auto started = std::chrono::steady_clock::now();
        for (int k = 0; k < count; ++k) propagators[k]->advance(n, stop);
        const double per_step =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() / (stop - n);
        chunk =
            int(std::clamp(0.25 * c.run.progress_seconds / std::max(per_step, 1e-9), 1.0, double(c.run.check_every)));
        done += static_cast<long long>(stop - n) * round;
        n = stop;
        if (n < end) progress.update(first, first + round - 1, n_shots, n, plan.nt, plan.dt, done);
      }
      if (pending) finish_snapshot();
      const bool at_snapshot = next_snapshot < steps.size() && n == steps[next_snapshot];
      for (int k = 0; k < count; ++k) {
        const int shot = mine_first + k;
        Propagator& propagator = *propagators[k];
        if (n % c.run.check_every == 0 || n == plan.nt) {
          const FieldStats stats = propagator.field_stats();
          if (!stats.finite || stats.max_abs > c.run.max_amplitude) blow_up(c, plan, shot, n, stats);
          growth[std::size_t(k)].check(c, plan, shot, n, stats);
        }
        if (at_snapshot) propagator.start_copy_field();
      }
      if (at_snapshot) pending = PendingSnapshot{int(next_snapshot++), n};
      progress.update(first, first + round - 1, n_shots, n, plan.nt, plan.dt, done);
      if (stop_at_steps > 0 && done >= stop_at_steps && !stop_signal()) request_stop(SIGUSR1);
      const auto action = schedule.poll(done);
      if (action == CheckpointSchedule::Action::none) continue;
      // Everything written so far is on disk before the checkpoint that counts on it.
      if (pending) finish_snapshot();
      if (traces) traces->flush();
      if (wavefield) wavefield->flush();
      CheckpointMeta meta;
      meta.integers = {{"round_first", first}, {"step", n}, {"steps_done", done}, {"slice_step", slice_step}};
      meta.arrays["field_slice"].assign(field_slice.begin(), field_slice.end());
      auto& references = meta.arrays["late_growth_reference"];
      references.clear();
      for (const LateGrowth& w : growth) references.push_back(w.reference());
      store.save(meta, running);
      checkpointed = true;
      ++checkpoints;
      if (root)
        std::fputs(fmt::format("[checkpoint] shot {} step {}/{}: {} written in {:.2f} s ({:.3g} MB on rank 0)\n", first,
                               n, plan.nt, store.directory(), store.last_save_seconds(), store.last_save_bytes() / 1e6)
                       .c_str(),
                   stdout);
      if (action == CheckpointSchedule::Action::save_and_stop)
        throw Error(
            ExitCode::interrupted,
            fmt::format("stopped by signal {} ({}) at shot {} step {} after writing a checkpoint in {}; run the same "
                        "command with --resume to continue",
                        schedule.signal(), strsignal(schedule.signal()), first, n, store.directory()));
    }
    if (pending) finish_snapshot();  // the last snapshot of the shots (no steps left to overlap)
    for (int k = 0; k < count; ++k) {
      const int shot = mine_first + k;
      Propagator& propagator = *propagators[k];
      const auto t = output_traces(shot, propagator.traces());  // collective over the group
      my_traces = t;
      if (traces && !parallel) traces->write_shot(shot, t);
      // Each shot's gather is plotted as soon as it is done, by its group's first rank.
      if (plot_gather[shot] && domain.rank() == 0)
        plot_or_warn(fmt::format("the gather plot of shot {}", shot),
                     [&] { write_gather_plot(c, plan, dir, shot, t); });
      if (c.output.final_field || (shot == 0 && field_slice.empty())) {
        propagator.copy_field(std::span<T>(field));
        if (c.output.final_field && !parallel) wavefield->write_final(shot, field.data());
        if (shot == 0 && field_slice.empty())
          field_slice = gather_xz_slice(domain, g, block.sub, field, slice_y), slice_step = plan.nt;
      }
    }
    if (parallel) {
      // One collective write per file for the round: each group's first rank writes its shot's traces.
      if (traces) {
        const bool writer = count > 0 && domain.rank() == 0;
        traces->write_shot(writer ? mine_first : -1, writer ? my_traces : std::span<const double>());
      }
      if (c.output.final_field) write_blocks(first, field, true, 0);
    }
  }

  ForwardSummary summary;
  summary.propagator = propagators.front()->name();
  if (per_group > 1) summary.propagator += fmt::format(" x {} shots in flight", per_group);
  if (groups > 1) summary.propagator += fmt::format(", {} shot groups", groups);
  summary.seconds = progress.elapsed_seconds();
  summary.cells_per_second = progress.cells_per_second();
  summary.checkpoints = checkpoints;
  if (traces) {
    traces->commit();
    summary.outputs.push_back((dir / "traces.h5").string());
  }
  if (wavefield) {
    wavefield->commit();
    summary.outputs.push_back((dir / "wavefield.h5").string());
    summary.outputs.push_back((dir / "wavefield.xdmf").string());
    summary.outputs.push_back((dir / "wavefield_shot*.vtkhdf").string());
  }
  prov.file_type = "specwave.model";
  // Each rank of group 0 writes its block of the model (the other groups hold the same blocks).
  const Subdomain& mb = plan.model.block;
  io::write_model_file((dir / "model.h5").string(), prov, g, plan.model.velocity, mb.begin,
                       group == 0 ? mb.extent : Dims3{0, 0, 0}, par);
  // The model slice of the plot, gathered over group 0 (collective there).
  std::vector<float> model_slice;
  if (c.output.plots && group == 0) model_slice = gather_xz_slice(domain, g, mb, plan.model.velocity, slice_y);
  summary.outputs.push_back((dir / "model.h5").string());
  summary.outputs.push_back((dir / "model.vtkhdf").string());

  if (c.output.plots && root) {
    const double x0 = g.origin[2], x1 = g.origin[2] + (g.shape[2] - 1) * g.spacing[2];
    const double z0 = g.origin[0], z1 = g.origin[0] + (g.shape[0] - 1) * g.spacing[0];
    io::ImagePlot wp;
    wp.title = fmt::format("shot 0 wavefield, y = {:.0f} m, t = {:.3f} s", g.origin[1] + slice_y * g.spacing[1],
                           slice_step * plan.dt);
    wp.x_label = "x (m)";
    wp.y_label = "z (m)";
    wp.x_min = x0, wp.x_max = x1, wp.y_min = z0, wp.y_max = z1;
    wp.aspect = g.spacing[0] / g.spacing[2];  // true to scale in metres
    wp.colormap = io::Colormap::seismic;
    wp.colorbar_label = "u";
    plot_or_warn("wavefield_slice.png", [&] {
      io::write_image_png((dir / "wavefield_slice.png").string(), field_slice, g.shape[0], g.shape[2], wp);
    });
    io::ImagePlot mp = wp;
    mp.title = fmt::format("velocity, y = {:.0f} m", g.origin[1] + slice_y * g.spacing[1]);
    mp.colormap = io::Colormap::viridis;
    mp.colorbar_label = "m/s";
    plot_or_warn("model_slice.png", [&] {
      io::write_image_png((dir / "model_slice.png").string(), model_slice, g.shape[0], g.shape[2], mp);
    });
    for (const char* f : {"shot_gather_shot*.png", "wavefield_slice.png", "model_slice.png"})
      summary.outputs.push_back((dir / f).string());
  }
  // Complete: the checkpoint has served.
  if (checkpointed) store.remove();
  if (root) {
    const std::vector<std::string> views =
        wavefield ? io::wavefield_view_paths((dir / "wavefield.h5").string(), n_shots, steps, c.output.final_field)
                  : std::vector<std::string>{};
    const std::vector<std::string> removed =
        remove_earlier_outputs(dir, views, plot_gather, bool(wavefield), bool(traces));
    if (!removed.empty()) {
      std::string names;
      for (std::size_t k = 0; k < removed.size() && k < 6; ++k) names += (k ? ", " : "") + removed[k];
      if (removed.size() > 6) names += fmt::format(", ... ({} more)", removed.size() - 6);
      std::fputs(fmt::format("output      removed {} file(s) an earlier run left in {}: {}\n", removed.size(),
                             dir.string(), names)
                     .c_str(),
                 stdout);
    }
    write_run_json(dir, c, plan, summary, resuming ? resume_step : -1, fingerprint);
  }
  return summary;
}

}  // namespace

ForwardSummary run_forward(const Case& c, const Plan& plan, const ForwardOptions& options) {
  apply_threads(c);
  check_inputs_not_overwritten(c, forward_output_names);
  return c.run.precision == Precision::fp64 ? run_typed<double>(c, plan, options) : run_typed<float>(c, plan, options);
}

}  // namespace specwave
