#include "solver/plan/plan.hpp"
#include "solver/plan/resample.hpp"
#include "solver/plan/shot_receivers.hpp"

#include "solver/parallel/comm.hpp"
#include "solver/parallel/decomposition.hpp"
#include "solver/parallel/distributed_fft.hpp"

#include <fcntl.h>
#include <omp.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <span>
#include <thread>

#include "kernels/stencil.hpp"
#include "solver/case/errors.hpp"
#include "solver/plan/attenuation.hpp"
#include "solver/plan/wavelet.hpp"

#include "kernels/cuda/device.hpp"
#include "solver/propagators/capabilities.hpp"

namespace specwave {

std::string human_bytes(double b) {
  // Byte counts are summed in 64 bits, saturating: 2^64 B or more is a count that overflowed.
  if (b >= 0x1p64) return "16 EiB or more";
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (b >= 1024 && u < 6) b /= 1024, ++u;
  return fmt::format("{:.1f} {}", b, unit[u]);
}

namespace {

[[noreturn]] void invalid(const Case& c, const std::string& message) {
  throw Error(ExitCode::invalid_case, c.label() + ": " + message);
}

// f(), whose refusal of a point (a stencil maker names the point, not the file) gets the case file's prefix.
template <class F>
decltype(auto) naming_case(const Case& c, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    if (e.code() != ExitCode::invalid_case) throw;
    invalid(c, e.what());
  }
}

void check_threads(const Case& c) {
  if (c.run.threads > max_threads)
    invalid(c, fmt::format("run.threads (or --threads) = {} is more than the limit of {} OpenMP threads; use 0 for "
                           "the OpenMP default (one per logical CPU, {} here) or at most {}",
                           c.run.threads, max_threads, std::thread::hardware_concurrency(), max_threads));
}

// The threads OpenMP would use before any case set them (OMP_NUM_THREADS, or every core): run.threads = 0 means
// these, also after a case that asked for fewer (the Python module runs many cases in one process).
const int default_threads = omp_get_max_threads();  // (at load, before any case)

}  // namespace

void apply_threads(const Case& c) {
  check_threads(c);
  omp_set_num_threads(c.run.threads > 0 ? c.run.threads : default_threads);
}

namespace {

void check_geometry(const Case& c) {
  const int R = c.scheme.order / 2;
  const int W = c.boundary.pml_width;
  for (int a = 0; a < 3; ++a) {
    if (!c.grid.active(a)) continue;  // 2-D: one point along y
    const int faces = (a == 0 && c.boundary.free_surface) ? 1 : 2;
    const long long needed = 1LL * faces * W + 2 * R + 1;  // 64-bit: any pml_width gives a grid error, no overflow
    if (c.grid.shape[a] < needed)
      invalid(c,
              fmt::format(
                  "grid.shape[{}] ({}) = {} is smaller than {} x boundary.pml_width ({}) + stencil width {} + 1 = {}; "
                  "enlarge the grid or reduce the PML width or scheme order",
                  a, "zyx"[a], c.grid.shape[a], faces, W, 2 * R, needed));
  }
}

void check_inside(const Case& c, const Vec3& p, const std::string& what) {
  const int W = c.boundary.pml_width;
  for (int a = 0; a < 3; ++a) {
    const double lo_edge = c.grid.origin[a];
    const double hi_edge = c.grid.origin[a] + (c.grid.shape[a] - 1) * c.grid.spacing[a];
    if (p[a] < lo_edge || p[a] > hi_edge)
      invalid(c, fmt::format("{} at ({}, {}, {}) m is outside the grid: {} must lie in [{}, {}] m; move it inside",
                             what, p[0], p[1], p[2], "zyx"[a], lo_edge, hi_edge));
    if (!c.grid.active(a)) continue;  // 2-D: y is the grid's (above: the origin)
    const bool low_absorbs = W > 0 && !(a == 0 && c.boundary.free_surface);
    const double lo = lo_edge + (low_absorbs ? W : 0) * c.grid.spacing[a];
    const double hi = hi_edge - W * c.grid.spacing[a];
    if (p[a] < lo || p[a] > hi)
      invalid(c, fmt::format("{} at ({}, {}, {}) m lies inside the absorbing layer: {} must lie in [{}, {}] m "
                             "(boundary.pml_width = {} points); move it inward or thin the PML",
                             what, p[0], p[1], p[2], "zyx"[a], lo, hi, W));
  }
}

// A source or receiver outside the absorbing layer whose interpolation stencil (interpolation_radius points
// each side; the spectral method's spectral_point_radius) still reaches into it: reciprocity and amplitudes there hold
// to about 4e-4 rather than to rounding (docs/validation.md, "Reciprocity"). A note with the margin that avoids it, not
// a refusal: the run is valid.
void note_stencils_in_layer(const Case& c, Plan& plan) {
  const int W = c.boundary.pml_width;
  const bool spectral = c.scheme.method == Method::spectral;
  // At most `shown` notes by name; the rest counted in one line, so that a receiver plane does not flood the log.
  constexpr std::size_t shown = 5;
  std::size_t noted = 0;
  const auto note = [&](const PointStencil& st, const std::string& what) {
    if (W <= 0) return;
    int lo[3] = {INT_MAX, INT_MAX, INT_MAX}, hi[3] = {-1, -1, -1};
    for (const auto& q : st.points) {
      if (q.weight == 0) continue;
      const int i[3] = {q.iz, q.iy, q.ix};
      for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], i[a]), hi[a] = std::max(hi[a], i[a]);
    }
    for (int a = 0; a < 3; ++a) {
      if (hi[a] < 0 || !c.grid.active(a)) continue;
      const bool low_absorbs = !(a == 0 && c.boundary.free_surface);
      const int n = c.grid.shape[a];
      const int into = std::max(low_absorbs ? W - lo[a] : 0, hi[a] - (n - W - 1));
      if (into <= 0) continue;
      if (++noted > shown) return;
      const double h = c.grid.spacing[a], o = c.grid.origin[a];
      // FDTD: 2r nodes floor(q) - r + 1 .. floor(q) + r, or the node itself; spectral: round(q) - r .. round(q) + r.
      // Under an elastic free surface a velocity point's images add one node more on either side (the differences
      // along the surface, make_elastic_stencil).
      const bool surface_images = c.scheme.formulation == Formulation::elastic && c.boundary.free_surface;
      const int r = spectral ? spectral_point_radius : interpolation_radius + (surface_images ? 1 : 0);
      const double from = low_absorbs ? o + (W + r - (spectral ? 0 : 1)) * h : o, to = o + (n - W - 1 - r) * h;
      plan.notes.push_back(fmt::format(
          "{} at ({}, {}, {}) m: its interpolation stencil reaches {} point(s) into the absorbing layer along {}; "
          "reciprocity and amplitudes there hold to about 4e-4, not to rounding: place it within [{:.6g}, {:.6g}] m "
          "along {} ({}){}",
          what, st.position[0], st.position[1], st.position[2], into, "zyx"[a], from, to, "zyx"[a],
          spectral ? fmt::format("pml_width + {} points from either face", r)
                   : fmt::format("pml_width + {} - 1 points from the low face, one more from the high face", r),
          spectral ? "" : " or on a grid point"));
      return;  // one note per point
    }
  };
  for (std::size_t s = 0; s < plan.sources.size(); ++s)
    for (std::size_t j = 0; j < plan.sources[s].size(); ++j)
      note(plan.sources[s][j], fmt::format("shots[{}].sources[{}]", s, j));
  for (std::size_t r = 0; r < plan.receivers.size(); ++r) note(plan.receivers[r], fmt::format("receiver {}", r));
  // A shot's own receivers: their stencils are made here (which checks that they lie on the grid) and dropped; the
  // shot makes them again when it runs (ShotReceivers).
  for (std::size_t s = 0; s < c.shots.size(); ++s)
    for (std::size_t r = 0; r < c.shots[s].receivers.size(); ++r) {
      const std::string what = fmt::format("shots[{}] receiver {}", s, r);
      note(naming_case(c,
                       [&] {
                         return make_receiver_stencil(c, plan, c.shots[s].receivers[r],
                                                      shot_receiver_component(c, s, r), what);
                       }),
           what);
    }
  if (noted > shown)
    plan.notes.push_back(
        fmt::format("and {} more source(s) or receiver(s) whose interpolation stencil reaches into the "
                    "absorbing layer (the same margins apply)",
                    noted - shown));
}

// The spectral method's receivers near a source at coarse sampling: the 13-point stencils of source and receiver
// overlap, and the band-limited points leave a precursor before the direct wave of up to 7.6e-3 of its peak at 8 cells
// and 3 points per wavelength (below 1e-3 from 10 cells on, and at any distance from 6 cells at 4 points per
// wavelength or more: docs/numerics.md, tests/test_physics.cpp "no acausal precursor"). One note for the case.
void note_spectral_near_source(const Case& c, Plan& plan) {
  constexpr double cells = 10, ppw = 4;
  if (c.scheme.method != Method::spectral || !(plan.points_per_wavelength < ppw)) return;
  const double h = c.grid.largest_spacing();
  std::size_t near = 0;
  double nearest = INFINITY;
  std::string which;
  for (std::size_t s = 0; s < c.shots.size(); ++s)
    for (std::size_t j = 0; j < c.shots[s].sources.size(); ++j) {
      const Vec3& p = c.shots[s].sources[j].position;
      const auto& receivers = shot_receivers(c, s);
      for (std::size_t r = 0; r < receivers.size(); ++r) {
        const Vec3& q = receivers[r];
        const double d =
            std::sqrt((p[0] - q[0]) * (p[0] - q[0]) + (p[1] - q[1]) * (p[1] - q[1]) + (p[2] - q[2]) * (p[2] - q[2])) /
            h;
        if (d >= cells) continue;
        ++near;
        if (d < nearest)
          nearest = d, which = fmt::format("{}receiver {} and shots[{}].sources[{}]",
                                           c.shots[s].receivers.empty() ? "" : fmt::format("shots[{}] ", s), r, s, j);
      }
    }
  if (near == 0) return;
  plan.notes.push_back(fmt::format(
      "{} source-receiver pair(s) less than {} cells apart (the nearest: {}, {:.3g} cells) at {:.3g} points per "
      "wavelength: the spectral method's band-limited points can leave such a receiver a precursor before the direct "
      "wave of up to 8e-3 of its peak below {} points per wavelength (docs/numerics.md); keep receivers {} cells or "
      "more from the sources, or sample finer",
      near, cells, which, nearest, plan.points_per_wavelength, ppw, cells));
}

// The spectral method's particle-velocity receivers and force sources near a source, on a grid line through it: the
// band-limited pair's exact answer differs from a point pair's by 2.2e-2 to 3.5e-2 at 10 cells along the line, 3e-3
// at 16, 6e-4 at 24, at any sampling (its content just above the weights' fitted band, which the separable weights
// concentrate on the grid lines and which a derivative weighs by k; a numpy model of the scheme reproduces the
// engine's traces to 2e-5; docs/validation.md, "Velocity points near a source"). 1.2e-3 two cells off the line. One
// note for the case.
void note_spectral_velocity_near_source(const Case& c, Plan& plan) {
  constexpr double along_cells = 16, off_cells = 2;
  if (c.scheme.method != Method::spectral) return;
  const auto& h = c.grid.spacing;
  std::size_t near = 0;
  double nearest = INFINITY;
  std::string which;
  for (std::size_t s = 0; s < c.shots.size(); ++s)
    for (std::size_t j = 0; j < c.shots[s].sources.size(); ++j) {
      const SourceSpec& source = c.shots[s].sources[j];
      const auto& receivers = shot_receivers(c, s);
      for (std::size_t r = 0; r < receivers.size(); ++r) {
        if (source.kind != SourceKind::force && shot_receiver_component(c, s, r) == ReceiverComponent::pressure)
          continue;
        std::array<double, 3> d{};
        for (int a = 0; a < 3; ++a) d[std::size_t(a)] = std::abs(source.position[a] - receivers[r][a]) / h[a];
        std::sort(d.begin(), d.end());  // the two smallest: off the line; the largest: along it
        if (!(d[2] < along_cells && d[1] < off_cells)) continue;
        ++near;
        if (d[2] < nearest)
          nearest = d[2], which = fmt::format("{}receiver {} ({}) and shots[{}].sources[{}] ({})",
                                              c.shots[s].receivers.empty() ? "" : fmt::format("shots[{}] ", s), r,
                                              to_string(shot_receiver_component(c, s, r)), s, j,
                                              source.kind == SourceKind::force ? "force" : "pressure");
      }
    }
  if (near == 0) return;
  plan.notes.push_back(fmt::format(
      "{} source-receiver pair(s) of the spectral method with a particle-velocity receiver or a force source lie on "
      "a grid line through the source (within {} cells of it) less than {} cells apart (the nearest: {}, {:.3g} "
      "cells): such a pair's traces differ from a point pair's by up to 3.5e-2 at 10 cells, 3e-3 at 16 and 6e-4 at "
      "24, at any sampling (docs/validation.md, \"Velocity points near a source\"); move the receiver {} cells or "
      "more off the line or {} cells or more away, or use the FDTD method",
      near, off_cells, along_cells, which, nearest, off_cells, along_cells));
}

// A 2-D elastic run's x-z plane carries P-SV waves (v_z, v_x, s_zz, s_xx, s_zx) and SH waves (v_y, s_zy, s_yx)
// apart: a shot whose sources radiate only one kind, recorded only by receivers of the other, records nothing. Not an
// error (the physics is right), but one note (for the case: the first such shot and their count) so that a case that
// meant otherwise is not run for zeros.
void note_2d_elastic_wave_types(const Case& c, Plan& plan) {
  if (c.scheme.formulation != Formulation::elastic || c.grid.active(1)) return;
  const auto describe = [](bool psv, bool sh) { return psv && sh ? "P-SV and SH" : psv ? "P-SV" : sh ? "SH" : "no"; };
  std::vector<std::size_t> silent;
  std::string kinds;
  for (std::size_t s = 0; s < c.shots.size(); ++s) {
    bool src_psv = false, src_sh = false, rec_psv = false, rec_sh = false;
    for (const SourceSpec& source : c.shots[s].sources) {
      if (source.kind == SourceKind::pressure) src_psv = true;
      if (source.kind == SourceKind::force)
        src_psv |= source.direction[0] != 0 || source.direction[2] != 0, src_sh |= source.direction[1] != 0;
      if (source.kind == SourceKind::moment) {  // [m_zz, m_yy, m_xx, m_zy, m_zx, m_yx]; m_yy alone drives nothing
        const auto& m = source.moment;
        src_psv |= m[0] != 0 || m[2] != 0 || m[4] != 0, src_sh |= m[3] != 0 || m[5] != 0;
      }
    }
    for (std::size_t r = 0; r < shot_receivers(c, s).size(); ++r) {
      const ReceiverComponent k = shot_receiver_component(c, s, r);
      const bool sh = k == ReceiverComponent::vy || k == ReceiverComponent::curl_x || k == ReceiverComponent::curl_z;
      (sh ? rec_sh : rec_psv) = true;
    }
    if ((src_psv && rec_psv) || (src_sh && rec_sh)) continue;
    if (silent.empty())
      kinds = fmt::format("its sources radiate {} waves and its receivers record {}", describe(src_psv, src_sh),
                          describe(rec_psv, rec_sh));
    silent.push_back(s);
  }
  if (silent.empty()) return;
  std::string which = fmt::format("shot {}", silent.front());
  if (silent.size() > 1) which = fmt::format("{} shots (the first: shot {})", silent.size(), silent.front());
  plan.notes.push_back(fmt::format(
      "{}: in a 2-D elastic run the x-z plane's P-SV waves (v_z, v_x, \"p\", \"div\", \"curl_y\") and SH waves (v_y, "
      "\"curl_x\", \"curl_z\") do not meet; {}, so every trace will be zero (docs/numerics.md, \"2-D runs\"); record "
      "the other components, or turn the source",
      which, kinds));
}

// The output directory must be creatable and writable. Probed by creating what is missing and writing a file,
// then removing both again: `check` and `validate` leave no trace; `forward` creates it when it starts writing.
}  // namespace

const std::vector<std::string> forward_output_names = {
    "traces.h5",           "wavefield.h5",    "model.h5",  "run.json", "shot_gather_shot*.png",
    "wavefield_slice.png", "model_slice.png", "checkpoint"};
const std::vector<std::string> invert_output_names = {"inversion.h5",       "inversion_state.h5", "evaluations.h5",
                                                      "iterations.jsonl",   "misfit.png",         "model_slices.png",
                                                      "model_final.h5",     "model_final.xdmf",   "model_final.vtkhdf",
                                                      "source_estimate.h5", "source_estimate.png"};

void check_writes_confined(const Case& c, bool output_from_command_line) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto inside = [&](const fs::path& p, const fs::path& folder) {
    const fs::path a = fs::weakly_canonical(fs::absolute(p), ec), b = fs::weakly_canonical(fs::absolute(folder), ec);
    const auto rel = a.lexically_relative(b);
    return !rel.empty() && *rel.begin() != "..";
  };
  const fs::path cwd = fs::current_path(ec);
  if (!output_from_command_line && !inside(c.output.directory, cwd))
    throw Error(ExitCode::output_error,
                fmt::format("output.directory = {} lies outside the current directory {}, and writes are confined "
                            "(--confine-writes or SPECWAVE_CONFINE_WRITES=1); give --output-dir, or run from a folder "
                            "that holds it",
                            c.output.directory, cwd.string()));
  if (c.inversion.present && !c.inversion.scratch_directory.empty() &&
      !inside(c.inversion.scratch_directory, c.output.directory))
    throw Error(ExitCode::output_error,
                fmt::format("inversion.scratch_directory = {} lies outside the output folder {}, and writes are "
                            "confined (--confine-writes or SPECWAVE_CONFINE_WRITES=1); remove the key (the scratch "
                            "file then goes into the output folder) or run without confinement",
                            c.inversion.scratch_directory, c.output.directory));
}

void check_inputs_not_overwritten(const Case& c, const std::vector<std::string>& output_names) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::absolute(c.output.directory), ec);
  std::vector<std::pair<std::string, std::string>> inputs;  // (key, path)
  if (!c.source_path.empty()) inputs.emplace_back("the case file", c.source_path);
  if (c.model.kind == ModelSpec::Kind::file) inputs.emplace_back("model.file", c.model.file);
  if (!c.model.density_file.empty()) inputs.emplace_back("model.density_file", c.model.density_file);
  if (!c.model.shear_file.empty()) inputs.emplace_back("model.shear_file", c.model.shear_file);
  for (std::size_t s = 0; s < c.shots.size(); ++s)
    for (std::size_t j = 0; j < c.shots[s].sources.size(); ++j)
      if (c.shots[s].sources[j].wavelet.kind == WaveletSpec::Kind::file)
        inputs.emplace_back(fmt::format("shots[{}].sources[{}].file", s, j), c.shots[s].sources[j].wavelet.file);
  if (!c.inversion.observed_file.empty()) inputs.emplace_back("inversion.observed", c.inversion.observed_file);
  if (!c.inversion.trace_weights_file.empty())
    inputs.emplace_back("inversion.trace_weights", c.inversion.trace_weights_file);
  if (c.inversion.true_model && c.inversion.true_model->kind == ModelSpec::Kind::file)
    inputs.emplace_back("inversion.true_model.file", c.inversion.true_model->file);
  for (const auto& [key, path] : inputs) {
    const fs::path p = fs::weakly_canonical(fs::absolute(path), ec);
    for (const std::string& name : output_names) {
      const fs::path out = dir / name;
      // A name with '*' stands for a numbered series (shot_gather_shot*.png).
      const auto star = name.find('*');
      const std::string file = p.filename().string();
      const bool series = star != std::string::npos && p.parent_path() == dir && file.size() >= name.size() - 1 &&
                          file.starts_with(name.substr(0, star)) && file.ends_with(name.substr(star + 1));
      const bool inside = series || p == out || (name == "checkpoint" && p.parent_path() == out) ||
                          p == fs::path(out.string() + ".partial");
      if (inside)
        throw Error(
            ExitCode::output_error,
            fmt::format("{} ({}) is {} in output.directory {}, which the run writes: it would overwrite its own "
                        "input; move the input or choose another output.directory (or --output-dir)",
                        key, path, name, dir.string()));
    }
  }
}

namespace {

void check_output_directory(const Case& c) {
  namespace fs = std::filesystem;
  // One probe at a time in this process (Python threads plan cases at once: one thread's probe must not remove a
  // folder another's is writing into), each with a name of its own.
  static std::mutex probing;
  static std::atomic<long long> probes{0};
  const std::lock_guard<std::mutex> lock(probing);
  const fs::path dir = fs::absolute(c.output.directory);
  // The folders this probe creates, deepest first: only they are removed again, and only when still empty (a
  // `forward` starting there meanwhile keeps its folder). An existing entry (a dangling symlink too) is never
  // created over or removed.
  std::vector<fs::path> created;
  std::error_code ec;
  for (fs::path p = dir; !p.empty() && !fs::exists(fs::symlink_status(p, ec)); p = p.parent_path()) {
    created.push_back(p);
    if (p == p.parent_path()) break;
  }
  fs::create_directories(dir, ec);
  bool ok = !ec && fs::is_directory(dir);
  std::string why = ec ? ec.message() : (ok ? "" : "not a directory");
  if (ok) {
    const fs::path probe = dir / fmt::format(".specwave-write-test-{}-{}", ::getpid(), probes++);
    // Created exclusively, never through a symlink planted at its name.
    const int fd = ::open(probe.c_str(), O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, 0600);
    ok = fd >= 0 && ::write(fd, "x", 1) == 1;
    if (fd >= 0) {
      ok = ::close(fd) == 0 && ok;
      ::unlink(probe.c_str());
    }
    if (!ok) why = fd < 0 ? std::strerror(errno) : "not writable";
  }
  for (const fs::path& p : created) fs::remove(p, ec);  // non-recursive: an emptied folder of ours only
  if (!ok)
    throw Error(ExitCode::output_error, fmt::format("output.directory '{}' cannot be used ({}); choose a writable path "
                                                    "(output.directory or --output-dir)",
                                                    c.output.directory, why));
}

// What keeps the CUDA propagators from running this case at all (empty: nothing): a method not decomposed there
// with more than one rank a shot group, or the row's own limit (the CUDA FDTD kernels' grid).
std::string cuda_cannot_run(const Case& c, const Plan& plan) {
  const Capability& cuda = capability(c.scheme.method, BackendKind::cuda);
  // The staggered and elastic schemes' CUDA kernels run one rank a shot (kernels/cuda/staggered_cuda.hpp,
  // elastic_cuda.hpp).
  const bool staggered = c.scheme.formulation == Formulation::staggered;
  const bool elastic = c.scheme.formulation == Formulation::elastic;
  if ((!cuda.decomposed || staggered || elastic) && plan.ranks / plan.shot_groups > 1)
    return fmt::format(
        "{} is not domain-decomposed on the CUDA backend in this version ({} ranks "
        "per shot group); use run.shot_groups = {} (one GPU per shot) or backend = \"cpu\"",
        staggered ? std::string("the staggered scheme (a density model or [attenuation])")
        : elastic ? std::string("the elastic scheme (a shear velocity in [model])")
                  : fmt::format("the {} method", to_string(c.scheme.method)),
        plan.ranks / plan.shot_groups, plan.ranks);
  return cuda.cannot_run ? cuda.cannot_run(c) : std::string();
}

BackendKind resolve_backend(const Case& c, const RankPlacement& where, Plan& plan) {
  std::string& note = plan.backend_note;
  // Asked for explicitly, what CUDA cannot run is refused on any machine (a login node without a GPU, too).
  if (c.run.backend == BackendKind::cuda)
    if (const std::string cannot = cuda_cannot_run(c, plan); !cannot.empty()) invalid(c, cannot);
  if (c.run.backend == BackendKind::cpu) {
    note = "cpu (requested)";
    return BackendKind::cpu;
  }
  // A build without the CUDA backend answers with usable = false and the reason (kernels/no_cuda.cpp).
  const auto cuda = cuda::query_devices();
  std::string why = cuda.reason;
  if (cuda.usable) why = cuda_cannot_run(c, plan);
  if (cuda.usable && why.empty()) {
    const int devices = int(cuda.devices.size());
    const int device = device_of_rank(c, where, devices);
    const auto& d = cuda.devices[std::size_t(device)];
    why = d.problem;
    if (why.empty()) cuda::device_free_bytes(device, plan.device_free_bytes, plan.device_total_bytes, why);
    if (why.empty()) {
      plan.device = device;
      std::memcpy(plan.device_uuid.data(), d.uuid.data(), d.uuid.size());
      const auto version = [](int v) { return fmt::format("{}.{}", v / 1000, v % 1000 / 10); };
      note = fmt::format(
          "cuda ({}: GPU {}, {}, compute capability {}.{}, {:.1f} GiB, {:.1f} GiB free; driver {}, "
          "runtime {}{})",
          c.run.backend == BackendKind::auto_select ? "auto picked the GPU" : "requested", device, d.name,
          d.compute_major, d.compute_minor, plan.device_total_bytes / double(1ull << 30),
          plan.device_free_bytes / double(1ull << 30), version(cuda.driver_version), version(cuda.runtime_version),
          where.ranks > 1 ? fmt::format("; rank {} of {}, node rank {}", where.rank, where.ranks, where.node_rank)
                          : std::string());
      return BackendKind::cuda;
    }
  }
  if (c.run.backend == BackendKind::auto_select) {
    note = "cpu (auto: " + why + ")";
    return BackendKind::cpu;
  }
  throw Error(ExitCode::backend_unavailable,
              fmt::format("run.backend = \"cuda\": {}; use backend = \"cpu\" or \"auto\"", why));
}

// Under MPI: every rank runs on the same backend (auto falls back to the CPU on all ranks when one has no usable
// GPU), and the ranks that drive one GPU (same uuid) are counted: more than one needs run.share_devices, and they
// split its memory cap. Collective over `world` (the case, hence the condition to call this, is the same on all).
void agree_on_devices(const Case& c, const Comm& world, const RankPlacement& where, Plan& plan) {
  std::vector<long long> keys(3 * std::size_t(plan.ranks), 0);
  const std::size_t k = 3 * std::size_t(where.rank);
  if (plan.backend == BackendKind::cuda) {
    keys[k] = 1;
    std::memcpy(&keys[k + 1], plan.device_uuid.data(), 16);
  }
  world.allreduce_in_place(std::span<long long>(keys), ReduceOp::sum);
  int without = -1;
  for (int r = 0; r < plan.ranks && without < 0; ++r)
    if (!keys[3 * std::size_t(r)]) without = r;
  if (without >= 0) {
    // Only auto gets here with a rank on the CPU (a rank that asked for CUDA and has none has stopped already).
    if (plan.backend == BackendKind::cuda)
      plan.backend_note =
          fmt::format("cpu (auto: rank {} has no usable GPU, and all ranks run on one backend)", without);
    plan.backend = BackendKind::cpu;
    plan.ranks_on_device = 1;
    return;
  }
  plan.ranks_on_device = ranks_on_device(keys, where.rank);
  if (plan.ranks_on_device > 1 && !c.run.share_devices)
    throw Error(ExitCode::backend_unavailable,
                fmt::format("{} MPI ranks drive the same GPU (rank {}: GPU {}): each rank drives one GPU; start at "
                            "most one rank per GPU (srun --gpus-per-task=1, or mpirun --npernode G with G GPUs a "
                            "node), or set run.share_devices = true to let ranks share GPUs",
                            plan.ranks_on_device, where.rank, plan.device));
}

// The memory refusals' advice to halve the fields, for a case that can.
const char* fp32_advice(const Case& c) {
  return c.run.precision == Precision::fp64 ? "use precision = \"fp32\", " : "";
}

// The cap is run.device_memory_fraction of the device memory free when the plan was made, shared by the ranks
// that drive the same device; the estimate is that of this rank's block in a decomposed run.
void check_device_memory(const Case& c, Plan& plan, const RankPlacement& where) {
  if (plan.backend != BackendKind::cuda) return;
  const double free = double(plan.device_free_bytes);
  const double cap = c.run.device_memory_fraction * free / plan.ranks_on_device;
  const int group_size = plan.ranks / plan.shot_groups;
  const std::array<int, 3> shape =
      group_size > 1 ? block_of(c.grid.shape, plan.process_grid, where.rank % group_size).sub.extent : c.grid.shape;
  const double need = double(estimate_device_memory_bytes(c, plan.nt, shape));
  // A grid below ~32 M points leaves most of a large GPU idle: run up to 8 shots at once, within the cap.
  if (c.grid.points() < (1LL << 25) && c.shots.size() > 1)
    plan.shots_in_flight =
        int(std::clamp<double>(std::floor(cap / std::max(need, 1.0)), 1, std::min<double>(8, c.shots.size())));
  if (need > cap)
    throw Error(
        ExitCode::resources,
        fmt::format("{}: the run needs about {} on the GPU{}, above the cap of {} ({:.0f}% of the {} free{}); "
                    "reduce grid.shape, {}raise run.device_memory_fraction, use more GPUs (MPI ranks), or use a "
                    "larger GPU",
                    c.label(), human_bytes(need), group_size > 1 ? " for this rank's block" : "", human_bytes(cap),
                    100 * c.run.device_memory_fraction, human_bytes(free),
                    plan.ranks_on_device > 1 ? fmt::format(", shared by {} ranks", plan.ranks_on_device) : "",
                    fp32_advice(c)));
}

}  // namespace

double points_per_wavelength_floor(int order) {
  switch (order) {
    case 2: return 10;
    case 4: return 6;
    case 6: return 5;
    case 8: return 4;
    default: return 3.5;
  }
}

double stable_dt_spectral(const GridSpec& g, double v_max) {
  double inv_h2 = 0;
  for (int a = 0; a < 3; ++a)
    if (g.active(a)) inv_h2 += 1 / (g.spacing[a] * g.spacing[a]);
  return 2 / (v_max * M_PI * std::sqrt(inv_h2));
}

double stable_dt(const GridSpec& g, int order, double v_max) {
  const double s_max = second_derivative_symbol_max(order / 2);
  double inv_h2 = 0;
  for (int a = 0; a < 3; ++a)
    if (g.active(a)) inv_h2 += 1 / (g.spacing[a] * g.spacing[a]);
  return 2 / (v_max * std::sqrt(s_max * inv_h2));
}

double stable_dt_staggered(const GridSpec& g, int order, double v_max) {
  const double g_max = staggered_derivative_symbol_max(order / 2);
  double sum = 0;
  for (int a = 0; a < 3; ++a)
    if (g.active(a)) sum += (g_max / g.spacing[a]) * (g_max / g.spacing[a]);
  return 2 / (v_max * std::sqrt(sum));
}

namespace {
// The receivers' interpolation stencils of the largest shot: the plan's points (GridPointWeight) and a propagator's
// lists of them (an index and a weight a point), 8 points along each axis of the grid (one along y in 2-D) for FDTD
// and the staggered and elastic schemes, 13 for the spectral method (measured 2026-12-07: 100000 FDTD receivers took
// 1.6 GB).
double receiver_stencil_bytes(const Case& c) {
  const double side = c.scheme.method == Method::spectral ? 13.0 : 8.0;
  double points = 1;
  for (int a = 0; a < 3; ++a) points *= c.grid.shape[a] > 1 ? side : 1.0;  // (2-D: one node along y)
  return double(max_shot_receivers(c)) * points * (sizeof(GridPointWeight) + 16.0);
}
}  // namespace

namespace {
// Error(resources) when plan.memory_bytes exceeds plan.memory_available (when known), naming the receivers' share
// when it is large.
void refuse_host_memory(const Case& c, const Plan& plan) {
  if (!plan.memory_available || plan.memory_bytes <= plan.memory_available) return;
  const double stencils = receiver_stencil_bytes(c);
  const bool receivers = stencils > 0.25 * double(plan.memory_bytes);  // worth naming
  throw Error(
      ExitCode::resources,
      fmt::format("{}: the run needs about {}{} but only {} is available; reduce grid.shape, {}{}or run on "
                  "a larger node",
                  c.label(), human_bytes(plan.memory_bytes),
                  receivers ? fmt::format(" ({} of it the interpolation stencils of {} receivers)",
                                          human_bytes(std::size_t(stencils)), max_shot_receivers(c))
                            : "",
                  human_bytes(plan.memory_available), fp32_advice(c), receivers ? "record fewer receivers, " : ""));
}
}  // namespace

namespace {
// A byte count computed in double as a std::size_t, saturated (converting a double beyond 2^64 is undefined).
std::size_t saturated_bytes(double b) { return b < 0x1p64 ? std::size_t(b) : std::numeric_limits<std::size_t>::max(); }
}  // namespace

std::size_t estimate_memory_bytes(const Case& c, int nt) {
  const std::size_t value = c.run.precision == Precision::fp64 ? 8 : 4;
  // The driver's output field; with snapshots, also the propagator's copy of one (start_copy_field).
  const double output_field = ((c.output.final_field || c.output.snapshot_every > 0) + (c.output.snapshot_every > 0)) *
                              double(value) * c.grid.points();
  const double traces = 8.0 * max_shot_receivers(c) * nt * 2;
  const double propagator = capability(c.scheme.method, BackendKind::cpu).memory_bytes(c, nt, c.grid.shape);
  return saturated_bytes(propagator + output_field + traces + receiver_stencil_bytes(c) + 64.0 * (1 << 20));
}

std::size_t estimate_device_memory_bytes(const Case& c, int nt) {
  return estimate_device_memory_bytes(c, nt, c.grid.shape);
}

std::size_t estimate_device_memory_bytes(const Case& c, int nt, const std::array<int, 3>& shape) {
  return saturated_bytes(capability(c.scheme.method, BackendKind::cuda).memory_bytes(c, nt, shape));
}

std::size_t available_memory_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  std::size_t kb = 0;
  std::string unit;
  while (f >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}

int device_of_rank(const Case& c, const RankPlacement& where, int devices) {
  if (where.ranks == 1) {
    if (c.run.device >= devices)
      throw Error(ExitCode::backend_unavailable,
                  fmt::format("run.device = {}: this machine has {} CUDA device(s); use an index in 0..{}",
                              c.run.device, devices, devices - 1));
    return c.run.device;
  }
  // One visible device: the launcher bound this rank to it (srun --gpus-per-task=1, CUDA_VISIBLE_DEVICES), or
  // the node has one; whether other ranks drive it too is found out across the ranks (ranks_on_device).
  if (devices == 1) return 0;
  if (where.node_ranks > devices && !c.run.share_devices)
    throw Error(
        ExitCode::backend_unavailable,
        fmt::format("{} MPI ranks on this node but {} CUDA device(s): each rank drives one GPU; start at most {} "
                    "rank(s) per node (e.g. mpirun --npernode {}), or set run.share_devices = true to let ranks "
                    "share GPUs round-robin",
                    where.node_ranks, devices, devices, devices));
  return where.node_rank % devices;
}

int ranks_on_device(std::span<const long long> keys, int rank) {
  const std::size_t k = std::size_t(rank);
  int count = 0;
  for (std::size_t r = 0; r < keys.size() / 3; ++r)
    if (keys[3 * r] && keys[3 * r + 1] == keys[3 * k + 1] && keys[3 * r + 2] == keys[3 * k + 2]) ++count;
  return std::max(count, 1);
}

int choose_shot_groups(const Case& c, int ranks) {
  if (c.run.shot_groups > 0) {
    if (ranks % c.run.shot_groups != 0 || c.run.shot_groups > ranks)
      invalid(c, fmt::format("run.shot_groups = {} does not divide the {} MPI rank(s) of this run; use a divisor of {} "
                             "or 0 to let specwave choose",
                             c.run.shot_groups, ranks, ranks));
    return c.run.shot_groups;
  }
  int best = 1;
  for (int g = 1; g <= ranks; ++g)
    if (ranks % g == 0 && g <= int(c.shots.size())) best = g;
  return best;
}

namespace {

// The shot groups and each group's process grid (FDTD: least halo, blocks that hold the halo and the absorbing
// layer; spectral: the distributed FFT's slab or pencil grid), and what cannot run decomposed.
void plan_decomposition(const Case& c, Plan& plan) {
  plan.shot_groups = choose_shot_groups(c, plan.ranks);
  const int domain = plan.ranks / plan.shot_groups;
  const int R = c.scheme.method == Method::spectral ? 0 : c.scheme.order / 2;
  if (c.scheme.method == Method::spectral) {
    // The distributed FFT's grid: z and y split (slab or pencil), x whole.
    if (domain > 1) {
      FftProcessGrid grid{};
      try {
        if (c.run.process_grid) {
          const auto& p = *c.run.process_grid;
          if (p[2] != 1)
            invalid(c, fmt::format("run.process_grid = [{}, {}, {}]: the spectral method splits z and y only (its "
                                   "FFTs keep x whole); use [pz, py, 1]",
                                   p[0], p[1], p[2]));
          grid = {p[0], p[1]};
          check_fft_grid(c.grid.shape, grid, domain);
        } else {
          grid = choose_fft_grid(c.grid.shape, domain);
        }
      } catch (const std::invalid_argument& e) {
        if (c.grid.two_d())  // the distributed FFT splits z and y (pencils) or z then ky (slab): neither fits ny = 1
          invalid(c, fmt::format("{} ranks per shot group cannot share a 2-D grid's FFTs (grid.shape[1] = 1: the "
                                 "distributed FFT splits y or its wavenumbers); give each rank its own shots "
                                 "(run.shot_groups = {} for {} ranks)",
                                 domain, c.run.shot_groups > 0 ? c.run.shot_groups * domain : domain, domain));
        invalid(c, fmt::format("{} ranks per shot group cannot share this grid's FFTs: {}; use fewer ranks per group "
                               "(run.shot_groups) or another run.process_grid",
                               domain, e.what()));
      }
      plan.process_grid = {grid.ranks_z, grid.ranks_y, 1};
    }
  } else {
    plan.process_grid = choose_process_grid(c.grid.shape, domain, std::max(R, 1), c.run.process_grid);
  }
  // The staggered scheme's layer of a high face starts at the half node n - 1 - W, which the block must hold too.
  if (domain > 1 && c.scheme.method == Method::fdtd)
    check_decomposition(c.grid.shape, plan.process_grid, R, c.boundary.pml_width,
                        c.scheme.formulation != Formulation::second_order ? 1 : 0);
}

}  // namespace

// The SLS fit of [attenuation]: its band, or [f / 10, f] with f = 2.5 times the largest Ricker peak frequency (about
// the wavelets' f_max, which needs dt, which needs this fit).
static SlsFit make_sls_fit(const Case& c) {
  const AttenuationSpec& a = c.attenuation;
  std::array<double, 2> band{0, 0};
  if (a.band) {
    band = *a.band;
  } else {
    double f_peak = 0;
    for (const auto& shot : c.shots)
      for (const auto& s : shot.sources)
        if (s.wavelet.kind == WaveletSpec::Kind::ricker) f_peak = std::max(f_peak, s.wavelet.peak_frequency);
    if (!(f_peak > 0))
      invalid(c,
              "[attenuation] has no band and no source has a Ricker wavelet to take it from; add band = [f_1, f_2] "
              "(Hz), the frequencies over which Q is constant");
    band = {2.5 * f_peak / 10, 2.5 * f_peak};
  }
  // A reference a million times outside the band (a value in the wrong unit, say: 1e12 for 1e3) is refused; velocities
  // measured at sonic-log or ultrasonic frequencies (1e4 to 1e6 Hz for a seismic band) are allowed, with a note
  // (make_plan): the phase velocities in the band then differ from them by about ln(ratio) / (pi Q).
  if (const auto f = a.reference_frequency; f && (*f < band[0] / 1e6 || *f > band[1] * 1e6))
    invalid(c, fmt::format("attenuation.reference_frequency = {:.4g} Hz is more than a million times outside the band "
                           "over which Q is fitted, [{:.4g}, {:.4g}] Hz; give the frequency (Hz) at which the model's "
                           "velocities were measured, or leave it out for sqrt(f_1 f_2)",
                           *f, band[0], band[1]));
  return fit_sls(band[0], band[1], a.mechanisms, a.reference_frequency.value_or(0.0));
}

namespace {

// The SLS fit of [attenuation] (plan.sls) must be physical (every weight > 0) and near its target (within 100%) at the
// grid's least and largest Q; a refusal names the mechanism count (1..8, the nearest to the case's) whose fit is
// physical and within 50%.
void check_sls_fit(const Case& c, const Plan& plan) {
  const double reference = c.attenuation.reference_frequency.value_or(0.0);
  const auto worst = [&](const SlsFit& fit, bool& physical) {
    double error = 0;
    physical = true;
    for (const double q : {plan.model.q_min, plan.model.q_max}) {
      const std::vector<double> w = fit.weights(q);
      physical = physical && std::all_of(w.begin(), w.end(), [](double v) { return v > 0; });
      error = std::max(error, fit.largest_error(q));
    }
    return error;
  };
  bool physical = true;
  const double error = worst(plan.sls, physical);
  if (!physical || error > 1) {
    const int n = int(plan.sls.tau.size());
    int better = 0;
    double better_error = 0;
    for (int d = 1; d < 8 && !better; ++d)
      for (const int m : {n - d, n + d}) {
        if (m < 1 || m > 8 || better) continue;
        bool ok = false;
        const double e = worst(fit_sls(plan.sls.f1, plan.sls.f2, m, reference), ok);
        if (ok && e <= 0.5) better = m, better_error = e;
      }
    const std::string fix =
        better ? fmt::format(
                     "set attenuation.mechanisms = {} (its fit is physical and within {:.2g}% over the band), "
                     "or change attenuation.band",
                     better, 100 * better_error)
        : plan.model.q_min < 2
            ? fmt::format(
                  "raise the smallest Q ({:.3g}): no count of mechanisms from 1 to 8 fits a Q this low over "
                  "a band (Q = 1 loses the wave's energy within a cycle), whatever attenuation.band is",
                  plan.model.q_min)
            : std::string(
                  "change attenuation.band (no count of mechanisms from 1 to 8 fits this one): the "
                  "wavelet's band, about one to three decades");
    const double decades = std::log10(plan.sls.f2 / plan.sls.f1);
    invalid(c, fmt::format("attenuation: the fit of Q in [{:.4g}, {:.4g}] with {} mechanism{} over {:.4g}-{:.4g} Hz "
                           "({:.2g} decade{}) {}; {}",
                           plan.model.q_min, plan.model.q_max, n, n == 1 ? "" : "s", plan.sls.f1, plan.sls.f2, decades,
                           decades == 1 ? "" : "s",
                           !physical ? "has a weight <= 0 (not a physical relaxation spectrum)"
                                     : fmt::format("misses the target by up to {:.3g}% over the band (a Q that far "
                                                   "off is not the model asked for)",
                                                   100 * error),
                           fix));
  }
}

// The k-space method with a density model: its derivatives are global, so across a strong density contrast a
// buoyancy meets moduli from the whole line and the stable step shrinks about as 1 / sqrt(contrast). Measured on
// cases/validation/gradient-spectral-density.toml's grid with its middle layer's density lowered (docs/numerics.md,
// "Variable density in the k-space method"): stable at the default CFL number 0.8 up to 1000:1, at 0.6 for 2300:1,
// 0.3 for 1e4:1, 0.1 for 1e5:1; 0.8 sqrt(1000 / contrast) is below each. An inversion's density bounds count too.
void check_spectral_density_step(const Case& c, const Plan& plan, bool spectral) {
  if (!spectral || plan.model.density.empty() || !(plan.model.rho_min > 0)) return;
  double contrast = plan.model.rho_max / plan.model.rho_min;
  const InversionSpec& inv = c.inversion;
  if (inv.density_parameter && inv.density_min && inv.density_max && *inv.density_min > 0)
    contrast = std::max(contrast, *inv.density_max / *inv.density_min);
  const double cfl_limit = 0.8 * std::sqrt(1000 / contrast);
  const double advised = std::floor(cfl_limit * 1000) / 1000;             // printed as it is: passes the check below
  if (contrast > 1000 * (1 + 1e-6) && plan.cfl > cfl_limit * (1 + 1e-6))  // (the model holds float densities)
    invalid(c, fmt::format("the k-space method with a density contrast of {:.3g}:1 ({:.6g} to {:.6g} kg/m^3{}) is "
                           "unstable at the CFL number {:.3f}: its global derivatives let the contrast raise the "
                           "operator's largest eigenvalue (stable up to about 1000:1 at 0.8, measured; the step "
                           "shrinks as 1 / sqrt(contrast)); set time.cfl_safety <= {:.3f}{}, or use scheme.method = "
                           "\"fdtd\" (the staggered scheme's local stencils take such contrasts at its usual step)",
                           contrast, plan.model.rho_min, plan.model.rho_max,
                           contrast > plan.model.rho_max / plan.model.rho_min ? ", inversion.density_min/max" : "",
                           plan.cfl, advised,
                           c.time.dt ? fmt::format(" (time.dt <= {:.6g} s)", advised * plan.dt_max) : ""));
}

}  // namespace

Plan make_plan(const Case& c, const RankPlacement& where) {
  Plan plan;
  plan.ranks = std::max(1, where.ranks);
  plan_decomposition(c, plan);
  const bool spectral = c.scheme.method == Method::spectral;
  if (spectral && c.boundary.free_surface)
    invalid(c,
            "boundary.free_surface = true is not available with scheme.method = \"spectral\" (the periodic FFT has no "
            "odd mirror); use method = \"fdtd\" or remove the free surface");
  if (spectral && c.boundary.pml_width == 0)
    invalid(c,
            "scheme.method = \"spectral\" needs boundary.pml_width > 0: the FFT is periodic and waves would wrap "
            "around the grid; use e.g. pml_width = 20");
  if (spectral && c.model.has_density_model()) {  // docs/numerics.md, "Variable density in the k-space method"
    if (c.boundary.spectral_absorber != SpectralAbsorber::pml)
      invalid(c,
              "scheme.method = \"spectral\" with a density model needs boundary.spectral_absorber = \"pml\" (the "
              "first-order form that takes the density; the damping layer's second-order form is constant-density)");
    if (plan.ranks / plan.shot_groups > 1)
      invalid(c, fmt::format("scheme.method = \"spectral\" with a density model runs one rank a shot in this version "
                             "({} ranks per shot group); set run.shot_groups = {}",
                             plan.ranks / plan.shot_groups, plan.ranks));
  }
  if (spectral && c.attenuation.present && c.boundary.spectral_absorber != SpectralAbsorber::pml)
    invalid(c,  // docs/numerics.md, "Attenuation in the k-space method"
            "scheme.method = \"spectral\" with [attenuation] needs boundary.spectral_absorber = \"pml\" (the "
            "first-order form whose pressure update takes the memory variables; the damping layer's second-order form "
            "is lossless)");
  if (!spectral && (c.scheme.order < 2 || c.scheme.order > 16 || c.scheme.order % 2))
    invalid(c, fmt::format("scheme.order = {}: must be even, 2..16", c.scheme.order));
  if (c.shots.empty()) invalid(c, "no [[shots]]: define at least one shot with one source");
  for (std::size_t s = 0; s < c.shots.size(); ++s)
    if (shot_receivers(c, s).empty())
      invalid(c, fmt::format("shots[{}] has no receivers: add [receivers] points, lines or planes", s));
  check_threads(c);
  check_geometry(c);
  plan.backend = resolve_backend(c, where, plan);
  if (plan.ranks > 1 && where.world && c.run.backend != BackendKind::cpu)
    agree_on_devices(c, *where.world, where, plan);
  plan.threads = c.run.threads > 0 ? c.run.threads : default_threads;

  // Memory, before the model (the largest allocation so far) is built. nt is not known yet: bound traces later.
  plan.memory_available = available_memory_bytes();
  plan.memory_bytes = estimate_memory_bytes(c, 0);
  refuse_host_memory(c, plan);

  // A rank of a decomposed run builds (reads) only its block of the model; v_min, v_max are global. The staggered
  // scheme's ranks hold the whole model: a source's or receiver's density averages its stencil's points, which may lie
  // in other blocks (point_density), and a block's half nodes take the density of the next block's first nodes.
  const int group_size = plan.ranks / plan.shot_groups;
  if (group_size > 1 && where.world && c.scheme.formulation == Formulation::second_order) {
    const int domain_rank = where.rank % group_size;
    const Subdomain block = block_of(c.grid.shape, plan.process_grid, domain_rank).sub;
    plan.model = build_velocity_model(c, &block, where.world);
  } else {
    plan.model = build_velocity_model(c, nullptr, plan.ranks > 1 ? where.world : nullptr);
  }
  if (!plan.model.note.empty()) plan.notes.push_back(plan.model.note);
  for (const std::string& w : plan.model.warnings) plan.notes.push_back(w);
  plan.v_reference = std::max(plan.model.v_max, c.inversion.velocity_max.value_or(0.0));
  // With attenuation the fastest wave is the unrelaxed one (docs/numerics.md, "Attenuation"): dt_max at v_max times
  // the largest v_U / v of the grid's Q (the least Q's: the speed-up grows as Q falls; both ends are evaluated).
  double v_stable = plan.v_reference, speedup = 1;
  if (c.attenuation.present) {
    plan.sls = make_sls_fit(c);
    check_sls_fit(c, plan);
    speedup = std::max(plan.sls.unrelaxed_speedup(plan.sls.weights(plan.model.q_min)),
                       plan.sls.unrelaxed_speedup(plan.sls.weights(plan.model.q_max)));
    v_stable *= speedup;
    plan.unrelaxed_speedup = speedup;
    plan.notes.push_back(fmt::format(
        "attenuation: {} standard linear solid(s) fitted to Q in [{:.4g}, {:.4g}] over {:.4g}-{:.4g} Hz (relaxation "
        "frequencies widened by {:.1f}); the fit's Q is within {:.2g}% of the target over the band at Q = {:.4g}; "
        "velocities are phase velocities at {:.4g} Hz, the unrelaxed ones up to {:.4g}% faster",
        plan.sls.tau.size(), plan.model.q_min, plan.model.q_max, plan.sls.f1, plan.sls.f2, plan.sls.widening,
        100 * plan.sls.largest_error(plan.model.q_min), plan.model.q_min, plan.sls.f_ref, 100 * (speedup - 1)));
  }
  // A shot listed twice in output.plot_shots (sorted by the reader) is plotted once.
  if (const auto twice = std::adjacent_find(c.output.plot_shots.begin(), c.output.plot_shots.end());
      twice != c.output.plot_shots.end())
    plan.notes.push_back(
        fmt::format("output.plot_shots lists shot {} more than once; its gather is plotted once", *twice));
  if (const auto f = c.attenuation.reference_frequency;
      c.attenuation.present && f && (*f < plan.sls.f1 / 100 || *f > plan.sls.f2 * 100))
    plan.notes.push_back(fmt::format(
        "attenuation.reference_frequency = {:.4g} Hz lies more than 100 times outside the band, {:.4g}-{:.4g} Hz: the "
        "model's velocities are taken as measured there (a sonic log, an ultrasonic bench), so the run's phase "
        "velocities in the band are up to about {:.2g}% lower or higher (ln(ratio) / (pi Q) at Q = {:.4g})",
        *f, plan.sls.f1, plan.sls.f2,
        100 * std::log(std::max(*f / plan.sls.f1, plan.sls.f2 / *f)) / (M_PI * plan.model.q_min), plan.model.q_min));
  plan.dt_max = spectral ? stable_dt_spectral(c.grid, v_stable)
                : c.scheme.formulation != Formulation::second_order
                    ? staggered_dt_max(c, plan.model, v_stable, speedup)  // (elastic: vp is the fastest wave)
                    : stable_dt(c.grid, c.scheme.order, plan.v_reference);
  // A density contrast that lowers dt well below the constant-density limit (a no-data value, a density in g/cm^3
  // beside kg/m^3) is told: the run takes that many more steps.
  if (!spectral && c.scheme.formulation != Formulation::second_order && plan.model.rho_max > plan.model.rho_min) {
    const double constant = stable_dt_staggered(c.grid, c.scheme.order, v_stable);
    if (plan.dt_max < constant / 1.5)
      plan.notes.push_back(fmt::format(
          "the model's density contrast, {:.3g}:1 ({:.6g} to {:.6g} kg/m^3), lowers dt_max {:.3g}-fold below the "
          "constant-density limit ({:.6g} s instead of {:.6g} s): the run takes that many more steps; check the "
          "density model if that contrast is not intended",
          plan.model.rho_max / plan.model.rho_min, plan.model.rho_min, plan.model.rho_max, constant / plan.dt_max,
          plan.dt_max, constant));
  }
  // [attenuation] with a band of its own: Q is constant over that band only, so a band that misses the sources'
  // peak frequencies attenuates the waves with another Q than the case's (told, not refused: it may be meant).
  if (c.attenuation.present && c.attenuation.band) {
    double outside = 0;  // a source's peak frequency outside the band (0: none)
    for (const auto& shot : c.shots)
      for (const auto& s : shot.sources)
        if (s.wavelet.kind == WaveletSpec::Kind::ricker && outside == 0 &&
            (s.wavelet.peak_frequency < plan.sls.f1 || s.wavelet.peak_frequency > plan.sls.f2))
          outside = s.wavelet.peak_frequency;
    if (outside > 0)
      plan.notes.push_back(fmt::format(
          "attenuation.band = [{:.4g}, {:.4g}] Hz does not hold the peak frequency {:.4g} Hz of a source: Q is the "
          "case's over the band only, and the waves' frequencies outside it see the fit's Q there, not the case's; a "
          "band of about [f_peak / 4, 2.5 f_peak] covers the wavelet",
          plan.sls.f1, plan.sls.f2, outside));
  }
  // An inversion of the density: dt holds for every density its bounds allow, so no trial model stops the run.
  std::string densities;
  if (const double bounded = staggered_density_bounds_dt(c, v_stable); bounded < plan.dt_max) {
    densities = fmt::format(" and every density within inversion.density_min/max = [{:.6g}, {:.6g}] kg/m^3",
                            *c.inversion.density_min, *c.inversion.density_max);
    plan.notes.push_back(fmt::format(
        "dt_max {:.6g} s holds for every density within inversion.density_min/max = [{:.6g}, {:.6g}] kg/m^3 (a "
        "density contrast of {:.3g}:1 may raise the staggered operator's largest eigenvalue {:.3g}-fold; the "
        "starting model alone allows {:.6g} s)",
        bounded, *c.inversion.density_min, *c.inversion.density_max,
        *c.inversion.density_max / *c.inversion.density_min,
        staggered_density_growth(c.scheme.order / 2, *c.inversion.density_max / *c.inversion.density_min),
        plan.dt_max));
    plan.dt_max = bounded;
  }
  plan.dt = c.time.dt.value_or(c.time.cfl_safety * plan.dt_max);
  plan.cfl = plan.dt / plan.dt_max;
  if (plan.dt > plan.dt_max)
    invalid(c,
            fmt::format(
                "time.dt = {:.6g} s violates the CFL condition for {} at v_max = {:.6g} m/s{}: the largest "
                "stable dt is {:.6g} s (CFL number {:.3f} > 1); set time.dt <= {:.6g} or remove it to use the default",
                plan.dt, spectral ? std::string("the spectral method") : fmt::format("order {}", c.scheme.order),
                v_stable, densities, plan.dt_max, plan.cfl, plan.dt_max, c.time.cfl_safety * plan.dt_max));
  check_spectral_density_step(c, plan, spectral);
  // The step count in checked arithmetic (an int past 2^31 would wrap, e.g. to 101 steps, and run the wrong case).
  // With output.trace_dt, the simulation runs on by the resampler's window so that the last output sample is exact.
  const bool resampled = c.output.trace_dt && std::abs(*c.output.trace_dt - plan.dt) > 1e-9 * plan.dt;
  const double steps =
      (c.time.duration + (resampled ? TraceResampler::reach(plan.dt, *c.output.trace_dt) : 0.0)) / plan.dt;
  if (!(steps <= double(max_time_steps - 1))) {
    // A density contrast can lower the staggered schemes' dt_max by orders of magnitude (staggered_dt_max): say so.
    std::string why;
    if (!spectral && c.scheme.formulation != Formulation::second_order && plan.model.rho_min > 0) {
      const double plain = stable_dt_staggered(c.grid, c.scheme.order, v_stable);
      if (plan.dt_max < 0.5 * plain)
        why = !densities.empty()
                  ? fmt::format(
                        "; the density contrast inversion.density_min/max allow ({:.6g} to {:.6g} kg/m^3) "
                        "lowers that limit from {:.6g} s: check those bounds",
                        *c.inversion.density_min, *c.inversion.density_max, plain)
                  : fmt::format(
                        "; the model's density contrast ({:.3g} to {:.3g} kg/m^3) lowers that limit from "
                        "{:.6g} s: check the density model",
                        plan.model.rho_min, plan.model.rho_max, plain);
    }
    invalid(c, fmt::format("time.duration = {:.6g} s at dt = {:.6g} s is {:.4g} time steps, more than the limit of {}; "
                           "shorten time.duration or raise time.dt (within the CFL limit {:.6g} s){}",
                           c.time.duration, plan.dt, steps, max_time_steps, plan.dt_max, why));
  }
  plan.nt = int(std::llround(steps)) + 1;
  if (resampled) {
    const double samples = std::floor(c.time.duration / *c.output.trace_dt + 1e-9) + 1;
    if (!(samples <= double(max_time_steps)))
      invalid(c, fmt::format("output.trace_dt = {:.6g} s over time.duration = {:.6g} s is {:.4g} samples a trace, "
                             "more than the limit of {}; raise output.trace_dt (the simulation's own dt is {:.6g} s)",
                             *c.output.trace_dt, c.time.duration, samples, max_time_steps, plan.dt));
    plan.trace_nt = int(samples);
  } else {
    plan.trace_nt = plan.nt;
  }
  plan.trace_dt = resampled ? *c.output.trace_dt : plan.dt;
  // The traces at the output interval (resampled from the steps' when output.trace_dt is given) come on top, with the
  // resampler's weights (TraceResampler: taps doubles and an index an output sample).
  if (resampled) {
    const double taps = 2 * std::ceil(TraceResampler::reach(plan.dt, plan.trace_dt) / plan.dt) + 2;
    plan.memory_bytes = estimate_memory_bytes(c, plan.nt) +
                        std::size_t((8.0 * max_shot_receivers(c) + 8.0 * taps + 4.0) * plan.trace_nt);
  } else {
    plan.memory_bytes = estimate_memory_bytes(c, plan.nt);
  }
  refuse_host_memory(c, plan);
  check_device_memory(c, plan, where);

  // Wavelets and sampling.
  double f_peak_max = 0;
  for (std::size_t shot_index = 0; shot_index < c.shots.size(); ++shot_index) {
    const auto& shot = c.shots[shot_index];
    auto& waves = plan.wavelets.emplace_back();
    for (std::size_t j = 0; j < shot.sources.size(); ++j) {
      const auto& s = shot.sources[j];
      // The spectrum of the whole wavelet, even when the run stops before it ends (truncation is not bandwidth);
      // its length checked before a file's samples are read (a file's bad dt: sample_wavelet's error).
      const double length = wavelet_length(s.wavelet);
      const double spectrum_steps = length / plan.dt + 1;
      if (std::isfinite(length) && length > 0 && !(spectrum_steps <= std::max(4.0 * plan.nt, 1e6)))
        invalid(c, s.wavelet.kind == WaveletSpec::Kind::file
                       ? fmt::format("{}'s wavelet lasts {:.6g} s, {:.4g} time steps, far longer than the run ({} "
                                     "steps); trim the wavelet file to the source's duration",
                                     s.wavelet.file, length, spectrum_steps, plan.nt)
                       : fmt::format("shots[{}].sources[{}]: the Ricker wavelet (peak_frequency = {:.6g} Hz, delay = "
                                     "{:.6g} s) lasts {:.6g} s, {:.4g} time steps, far longer than the run ({} steps); "
                                     "give a delay of about 1.5 / peak_frequency and a peak_frequency the grid "
                                     "resolves",
                                     shot_index, j, s.wavelet.peak_frequency,
                                     s.wavelet.delay.value_or(1.5 / s.wavelet.peak_frequency), length, spectrum_steps,
                                     plan.nt));
      waves.push_back(sample_wavelet(s.wavelet, plan.dt, plan.nt));
      const int n_spectrum = std::max(plan.nt, int(spectrum_steps));
      const auto spectrum_samples =
          n_spectrum == plan.nt ? waves.back() : sample_wavelet(s.wavelet, plan.dt, n_spectrum);
      plan.f_max = std::max(plan.f_max, highest_significant_frequency(spectrum_samples, plan.dt));
      if (s.wavelet.kind == WaveletSpec::Kind::ricker) f_peak_max = std::max(f_peak_max, s.wavelet.peak_frequency);
    }
  }
  plan.pml_frequency = c.boundary.pml_frequency.value_or(f_peak_max > 0 ? f_peak_max : plan.f_max / 2.5);
  if (spectral)
    for (int a = 0; a < 3; ++a) {
      const int n = c.grid.shape[a], good = fft_friendly_length(n);
      if (good != n)
        plan.notes.push_back(fmt::format(
            "grid.shape[{}] = {} has a prime factor above 7: the spectral method's FFTs along it are several times "
            "slower than for {} (the next length made of factors 2, 3, 5, 7)",
            a, n, good));
    }
  const PmlProfileDefaults profile = pml_profile_defaults(spectral, c.boundary.spectral_absorber);
  plan.pml_power = c.boundary.pml_power.value_or(profile.power);
  plan.pml_reflection = c.boundary.pml_reflection.value_or(profile.reflection);
  const double h_max = c.grid.largest_spacing();
  // The slowest wave: elastic, the shear wave where vs > 0 (vp in a fluid).
  const double v_slowest = c.scheme.formulation == Formulation::elastic ? plan.model.v_slowest : plan.model.v_min;
  plan.points_per_wavelength = plan.f_max > 0 ? v_slowest / (plan.f_max * h_max) : INFINITY;
  plan.points_per_wavelength_floor = c.scheme.min_points_per_wavelength.value_or(
      spectral ? points_per_wavelength_floor_spectral : points_per_wavelength_floor(c.scheme.order));
  if (plan.points_per_wavelength < plan.points_per_wavelength_floor)
    invalid(c,
            fmt::format("{:.2f} points per wavelength (v_min {:.6g} m/s, highest significant frequency {:.4g} Hz, "
                        "spacing {:.6g} m) is below the floor {:.2f} of {}: the result would be dominated by "
                        "numerical dispersion; refine the grid to spacing <= {:.4g} m, lower the peak frequency, raise "
                        "scheme.order, or set scheme.min_points_per_wavelength",
                        plan.points_per_wavelength, v_slowest, plan.f_max, h_max, plan.points_per_wavelength_floor,
                        spectral ? std::string("the spectral method") : fmt::format("FDTD order {}", c.scheme.order),
                        v_slowest / (plan.f_max * plan.points_per_wavelength_floor)));
  if (plan.nt < 2)
    invalid(c, fmt::format("time.duration = {} s is shorter than two time steps (dt = {:.6g} s)", c.time.duration,
                           plan.dt));

  // Geometry of sources and receivers: the spectral method's points carry their share of the k-space source factor
  // (c_ref = v_max, as the propagators' symbols).
  for (int a = 0; a < 3; ++a) {
    plan.spectral_point_courant[a] = plan.model.v_max * plan.dt / c.grid.spacing[a];
    if (spectral) plan.spectral_point_band[a] = spectral_point_band(plan.f_max, plan.model.v_min, c.grid.spacing[a]);
  }
  if (c.scheme.formulation == Formulation::elastic && c.boundary.free_surface) {
    const std::size_t plane = std::size_t(c.grid.shape[1]) * std::size_t(c.grid.shape[2]);
    plan.surface_ratio.resize(plane);
    for (std::size_t k = 0; k < plane; ++k) {  // (the elastic scheme's plan holds the whole model)
      const double vp = plan.model.velocity[k], vs = plan.model.shear[k];
      plan.surface_ratio[k] = 1 - 2 * vs * vs / (vp * vp);
    }
  }
  if (c.scheme.formulation != Formulation::elastic)
    for (std::size_t s = 0; s < c.shots.size(); ++s)
      for (std::size_t r = 0; r < shot_receivers(c, s).size(); ++r)
        if (const ReceiverComponent k = shot_receiver_component(c, s, r); velocity_derivative(k))
          invalid(c, fmt::format("receivers.components \"{}\" (the particle velocity's {}) needs the elastic scheme "
                                 "(a shear velocity in [model]); record \"p\", \"vz\", \"vy\" or \"vx\" in an "
                                 "acoustic model",
                                 to_string(k), k == ReceiverComponent::divergence ? "divergence" : "curl"));
  if (has_velocity_receivers(c) && !c.model.density && !c.model.has_density_model())
    invalid(c,
            "receivers.components asks for particle velocity, which needs the medium's density (v = -(1 / rho) "
            "int grad p dt) and [model] gives none; add density = 1000.0 (kg/m^3, constant: the scheme is "
            "constant-density) to [model]");
  for (std::size_t s = 0; s < c.shots.size(); ++s) {
    auto& stencils = plan.sources.emplace_back();
    for (std::size_t j = 0; j < c.shots[s].sources.size(); ++j) {
      const std::string what = fmt::format("shots[{}].sources[{}]", s, j);
      check_inside(c, c.shots[s].sources[j].position, what);
      if (c.shots[s].sources[j].kind == SourceKind::moment && c.scheme.formulation != Formulation::elastic)
        invalid(c, fmt::format("{}: kind = \"moment\" (a moment tensor) needs the elastic scheme (a shear velocity in "
                               "[model]); use kind = \"pressure\" (an explosion) or \"force\" in an acoustic model",
                               what));
      stencils.push_back(naming_case(c, [&] { return make_source_stencil(c, plan, c.shots[s].sources[j], what); }));
    }
  }
  for (std::size_t r = 0; r < c.receivers.size(); ++r) {
    const std::string what = fmt::format("receiver {}", r);
    check_inside(c, c.receivers[r], what);
    plan.receivers.push_back(naming_case(c, [&] {
      return make_receiver_stencil(
          c, plan, c.receivers[r],
          r < c.receiver_components.size() ? c.receiver_components[r] : ReceiverComponent::pressure, what);
    }));
  }
  // A shot's own receivers: checked as the shared ones are (inside the grid here, their stencils on it in
  // note_stencils_in_layer), their stencils made again when the shot runs (ShotReceivers).
  for (std::size_t s = 0; s < c.shots.size(); ++s)
    for (std::size_t r = 0; r < c.shots[s].receivers.size(); ++r) {
      const std::string what = fmt::format("shots[{}] receiver {}", s, r);
      check_inside(c, c.shots[s].receivers[r], what);
    }
  note_stencils_in_layer(c, plan);
  note_spectral_near_source(c, plan);
  note_spectral_velocity_near_source(c, plan);
  note_2d_elastic_wave_types(c, plan);
  if (where.rank == 0 && where.writes_output) check_output_directory(c);
  return plan;
}

int fft_friendly_length(int n) {
  for (int m = std::max(n, 1);; ++m) {
    int r = m;
    for (int p : {2, 3, 5, 7})
      while (r % p == 0) r /= p;
    if (r == 1) return m;
  }
}

std::string describe_plan(const Case& c, const Plan& p) {
  const auto& g = c.grid;
  std::string out;
  out += fmt::format("case        {}{}\n", c.name, c.source_path.empty() ? "" : " (" + c.source_path + ")");
  out += fmt::format("grid        {} x {} x {} (nz, ny, nx) = {:.3g} points, spacing {} x {} x {} m\n", g.shape[0],
                     g.shape[1], g.shape[2], double(g.points()), g.spacing[0], g.spacing[1], g.spacing[2]);
  out +=
      fmt::format("model       {}: v in [{:.6g}, {:.6g}] m/s\n", to_string(c.model.kind), p.model.v_min, p.model.v_max);
  out += fmt::format(
      "scheme      {}, {} boundary width {}{}\n",
      c.scheme.method == Method::spectral ? fmt::format("spectral k-space (c_ref = v_max = {:.6g} m/s)", p.model.v_max)
      : c.scheme.formulation == Formulation::staggered
          ? fmt::format("fdtd order {}, staggered velocity-pressure (density in [{:.6g}, {:.6g}] kg/m^3)",
                        c.scheme.order, p.model.rho_min, p.model.rho_max)
      : c.scheme.formulation == Formulation::elastic
          ? fmt::format("fdtd order {}, elastic velocity-stress (vs in [{:.6g}, {:.6g}] m/s, slowest wave {:.6g} m/s; "
                        "density in [{:.6g}, {:.6g}] kg/m^3)",
                        c.scheme.order, p.model.vs_min, p.model.vs_max, p.model.v_slowest, p.model.rho_min,
                        p.model.rho_max)
          : fmt::format("fdtd order {}", c.scheme.order),
      c.boundary.pml_width == 0                               ? "no absorbing"
      : c.scheme.method != Method::spectral                   ? "CPML"
      : c.boundary.spectral_absorber == SpectralAbsorber::pml ? "split-field PML"
                                                              : "damping-layer",
      c.boundary.pml_width, c.boundary.free_surface ? ", free surface on top" : "");
  out += fmt::format("time        dt = {:.6g} s (stable limit {:.6g} s, CFL number {:.3f}), {} steps, {:.6g} s\n", p.dt,
                     p.dt_max, p.cfl, p.nt, (p.nt - 1) * p.dt);
  if (p.trace_dt != p.dt)
    out += fmt::format(
        "traces      {} samples of {:.6g} s to {:.6g} s (output.trace_dt; resampled from dt, the simulation "
        "running {:.6g} s beyond for the interpolator)\n",
        p.trace_nt, p.trace_dt, (p.trace_nt - 1) * p.trace_dt, (p.nt - 1) * p.dt - c.time.duration);
  out += fmt::format("sampling    {:.2f} points per wavelength at f_max = {:.4g} Hz (floor {:.2f})\n",
                     p.points_per_wavelength, p.f_max, p.points_per_wavelength_floor);
  std::size_t sources = 0;
  for (const auto& s : p.sources) sources += s.size();
  std::size_t min_receivers = SIZE_MAX;
  for (std::size_t s = 0; s < c.shots.size(); ++s) min_receivers = std::min(min_receivers, shot_receivers(c, s).size());
  if (shared_receivers(c))
    out += fmt::format("acquisition {} shot(s), {} source(s), {} receiver(s)\n", c.shots.size(), sources,
                       c.receivers.size());
  else
    out += fmt::format("acquisition {} shot(s), {} source(s), receivers per shot: {} traces in all, {} to {} a shot\n",
                       c.shots.size(), sources, total_traces(c), min_receivers, max_shot_receivers(c));
  {  // force sources and particle-velocity receivers, when there are any
    std::size_t forces = 0, velocity = 0, moments = 0;
    for (const auto& shot : c.shots)
      for (const auto& s : shot.sources) forces += s.kind == SourceKind::force, moments += s.kind == SourceKind::moment;
    if (moments > 0) out += fmt::format("moments     {} moment-tensor source(s)\n", moments);
    for (std::size_t s = 0; s < c.shots.size(); ++s)
      for (std::size_t r = 0; r < shot_receivers(c, s).size(); ++r)
        velocity += shot_receiver_component(c, s, r) != ReceiverComponent::pressure;
    if (forces + velocity > 0)
      out += fmt::format("components  {} force source(s), {} particle-velocity trace(s){}\n", forces, velocity,
                         c.model.density ? fmt::format(" (density {} kg/m^3)", *c.model.density) : std::string());
  }
  out += fmt::format("backend     {}, {} precision, {} thread(s){}\n", p.backend_note, to_string(c.run.precision),
                     p.threads,
                     p.shots_in_flight > 1 ? fmt::format(", {} shots in flight", p.shots_in_flight) : std::string());
  if (p.ranks > 1)
    out += fmt::format("mpi         {} ranks: {} shot group(s) of {} rank(s), process grid {} x {} x {} (z, y, x)\n",
                       p.ranks, p.shot_groups, p.ranks / p.shot_groups, p.process_grid[0], p.process_grid[1],
                       p.process_grid[2]);
  out += fmt::format("memory      about {} needed, {} available\n", human_bytes(p.memory_bytes),
                     p.memory_available ? human_bytes(p.memory_available) : std::string("unknown"));
  out += fmt::format("work        {:.3g} cell updates\n", double(g.points()) * p.nt * c.shots.size());
  out += fmt::format("output      {}\n", c.output.directory);
  for (const auto& note : p.notes) out += fmt::format("note        {}\n", note);
  return out;
}

}  // namespace specwave
