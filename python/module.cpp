// specwave._core: the Python module's C++ layer (docs/python.md). Thin: a case is parsed by io/case_file.cpp (a dict is
// written as TOML text first), planned by make_plan, run by simulate_shots (the forward driver without files) and by
// the GradientPropagator (gradient, Born, adjoint) through the Objective, exactly the code paths of the CLI. This
// file only converts arrays, releases the GIL, routes progress lines and turns errors and Ctrl-C into Python's.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>
#include <toml++/toml.h>
#include <cmath>
#include <csignal>
#include <cstring>
#include <memory>
#include <mutex>
#include <sstream>

#include "io/case_file.hpp"
#include "io/toml_edit.hpp"
#include "solver/case/errors.hpp"
#include "solver/forward/checkpoint.hpp"
#include "solver/forward/forward.hpp"
#include "solver/forward/progress.hpp"
#include "solver/inversion/misfit.hpp"
#include "solver/inversion/objective.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/plan/model.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/gradient_propagator.hpp"

namespace py = pybind11;
using namespace specwave;

namespace {

const char* category(ExitCode c) {
  switch (c) {
    case ExitCode::ok: return "ok";
    case ExitCode::internal: return "internal";
    case ExitCode::usage: return "usage";
    case ExitCode::invalid_case: return "invalid_case";
    case ExitCode::input_error: return "input_error";
    case ExitCode::output_error: return "output_error";
    case ExitCode::resources: return "resources";
    case ExitCode::blow_up: return "blow_up";
    case ExitCode::validation_failed: return "validation_failed";
    case ExitCode::backend_unavailable: return "backend_unavailable";
    case ExitCode::interrupted: return "interrupted";
    case ExitCode::optimisation_failed: return "optimisation_failed";
    case ExitCode::sweep_incomplete: return "sweep_incomplete";
    case ExitCode::submit_failed: return "submit_failed";
  }
  return "?";
}

// ---- arrays ----

// "(24, 24, 24)", as numpy writes a shape or an index.
template <class T>
std::string shape_text(const std::vector<T>& dims) {
  std::string s = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

// A numpy array of float32 or float64, C-contiguous, of `shape`, every value finite: else ValueError naming `what`.
// Returned as fp64 values (a copy: the engine keeps its own arrays).
std::vector<double> checked_values(const py::handle& obj, const std::vector<py::ssize_t>& shape,
                                   const std::string& what, bool positive = false) {
  if (!py::isinstance<py::array>(obj))
    throw py::type_error(fmt::format("{}: expected a numpy array of shape {}, got {}", what, shape_text(shape),
                                     py::str(py::type::of(obj).attr("__name__")).cast<std::string>()));
  auto a = py::reinterpret_borrow<py::array>(obj);
  // Floats in the other byte order (big-endian data from SEG-Y or np.fromfile(..., ">f4")): their values, in ours
  // (the engine copies its inputs anyway).
  if (a.dtype().kind() == 'f' && (a.itemsize() == 4 || a.itemsize() == 8) &&
      a.dtype().attr("isnative").cast<bool>() == false)
    a = a.attr("astype")(a.itemsize() == 8 ? "float64" : "float32");
  const auto dtype = a.dtype();
  const bool f32 = dtype.is(py::dtype::of<float>()), f64 = dtype.is(py::dtype::of<double>());
  std::vector<py::ssize_t> got(a.shape(), a.shape() + a.ndim());
  if (got != shape)
    throw py::value_error(
        fmt::format("{}: shape {} differs from the expected {}", what, shape_text(got), shape_text(shape)));
  if (!f32 && !f64)
    throw py::type_error(fmt::format("{}: dtype {} is not float32 or float64; convert it with .astype(np.float64)",
                                     what, dtype.attr("name").cast<std::string>()));
  if (!(a.flags() & py::array::c_style))
    throw py::value_error(
        fmt::format("{}: the array is not C-contiguous (a slice or a transpose); pass "
                    "np.ascontiguousarray(...)",
                    what));
  std::vector<double> v(std::size_t(a.size()));
  if (f32) {
    const float* p = static_cast<const float*>(a.data());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = p[i];
  } else {
    const double* p = static_cast<const double*>(a.data());
    std::copy(p, p + v.size(), v.begin());
  }
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]) || (positive && v[i] <= 0)) {
      std::string index;
      std::size_t rest = i;
      std::vector<std::size_t> idx(shape.size());
      for (std::size_t d = shape.size(); d-- > 0;) idx[d] = rest % std::size_t(shape[d]), rest /= std::size_t(shape[d]);
      throw py::value_error(fmt::format("{}: value {} at index {}; every value must be finite{}", what, v[i],
                                        shape_text(idx), positive ? " and > 0" : ""));
    }
  return v;
}

// A numpy array that owns `v` (no copy), of `shape`.
template <class T>
py::array_t<T> owned_array(std::vector<T>&& v, const std::vector<py::ssize_t>& shape) {
  auto* held = new std::vector<T>(std::move(v));
  py::capsule owner(held, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return py::array_t<T>(shape, held->data(), owner);
}

// (n, 3) positions, (z, y, x) m.
py::array_t<double> vec3_array(const std::vector<Vec3>& points) {
  std::vector<double> v;
  for (const auto& p : points) v.insert(v.end(), p.begin(), p.end());
  return owned_array(std::move(v), {py::ssize_t(points.size()), 3});
}

std::vector<py::ssize_t> grid_shape(const Case& c) { return {c.grid.shape[0], c.grid.shape[1], c.grid.shape[2]}; }

// Each shot's receiver count (its own receivers, or the shared ones).
std::vector<int> shot_receiver_counts(const Case& c) {
  std::vector<int> out;
  for (std::size_t s = 0; s < c.shots.size(); ++s) out.push_back(int(shot_receivers(c, s).size()));
  return out;
}

// Per-shot traces: a list of (the shot's receivers, nt) arrays, or one (n_shots, n_receivers, nt) array when every
// shot has as many receivers.
std::vector<std::vector<double>> checked_shot_traces(const py::handle& obj, const std::vector<int>& counts, int nt,
                                                     const std::string& what) {
  const int n_shots = int(counts.size());
  const bool same = std::all_of(counts.begin(), counts.end(), [&](int n) { return n == counts.front(); });
  std::vector<std::vector<double>> out;
  if (py::isinstance<py::array>(obj)) {
    if (!same)
      throw py::value_error(
          fmt::format("{}: the shots have receivers of their own, not all as many: pass a list of "
                      "{} arrays (the shot's receivers, nt), one a shot",
                      what, n_shots));
    const auto all = checked_values(obj, {n_shots, counts.front(), nt}, what);
    const std::size_t per = std::size_t(counts.front()) * nt;
    for (int s = 0; s < n_shots; ++s)
      out.emplace_back(all.begin() + std::ptrdiff_t(s * per), all.begin() + std::ptrdiff_t((s + 1) * per));
    return out;
  }
  if (!py::isinstance<py::sequence>(obj) || py::isinstance<py::str>(obj))
    throw py::type_error(
        same ? fmt::format("{}: expected a list of {} arrays (n_receivers, nt) = ({}, {}), one a shot, or "
                           "one array ({}, {}, {})",
                           what, n_shots, counts.front(), nt, n_shots, counts.front(), nt)
             : fmt::format("{}: expected a list of {} arrays (the shot's receivers, nt), one a shot", what, n_shots));
  const auto seq = py::reinterpret_borrow<py::sequence>(obj);
  if (int(seq.size()) != n_shots)
    throw py::value_error(fmt::format("{}: {} arrays for a case of {} shot(s)", what, seq.size(), n_shots));
  for (int s = 0; s < n_shots; ++s)
    out.push_back(checked_values(seq[std::size_t(s)], {counts[std::size_t(s)], nt}, fmt::format("{}[{}]", what, s)));
  return out;
}

// ---- a dict as case text ----

toml::array to_toml_array(const py::handle& seq, const std::string& key, int depth);
toml::table to_toml_table(const py::handle& dict, const std::string& key, int depth);

// Nesting deeper than this is refused (a case is 4 deep; a dict that holds itself would recurse until the stack
// overflowed).
constexpr int max_dict_depth = 64;

// Appends a Python value to `out` (a toml::array) or inserts it under `name` (a toml::table); `depth` counts the
// dicts and lists around it.
template <class Out>
void add_value(Out& out, const std::string& name, const py::handle& v, const std::string& key, int depth) {
  if (depth > max_dict_depth)
    throw Error(ExitCode::invalid_case,
                fmt::format("case dict: {}: nested more than {} deep (a dict or list that holds itself?); a case is "
                            "a few tables of values",
                            key, max_dict_depth));
  const auto put = [&](auto&& value) {
    if constexpr (std::is_same_v<Out, toml::array>)
      out.push_back(std::forward<decltype(value)>(value));
    else
      out.insert_or_assign(name, std::forward<decltype(value)>(value));
  };
  if (py::isinstance<py::bool_>(v) || py::isinstance(v, py::module_::import("numpy").attr("bool_")))
    put(v.cast<bool>());
  else if (py::isinstance<py::int_>(v) || py::isinstance(v, py::module_::import("numpy").attr("integer"))) {
    long long i = 0;
    try {
      i = v.cast<long long>();
    } catch (const py::cast_error&) {
      throw Error(ExitCode::invalid_case,
                  fmt::format("case dict: {}: the integer {} does not fit in 64 bits (TOML's integers); give a "
                              "smaller value, or a float",
                              key, py::str(v).cast<std::string>()));
    }
    put(i);
  } else if (py::isinstance<py::float_>(v) || py::isinstance(v, py::module_::import("numpy").attr("floating")))
    put(v.cast<double>());
  else if (py::isinstance<py::str>(v))
    put(v.cast<std::string>());
  else if (py::isinstance<py::dict>(v))
    put(to_toml_table(v, key, depth + 1));
  else if (py::isinstance<py::array>(v))
    put(to_toml_array(v.attr("tolist")(), key, depth + 1));
  else if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v))
    put(to_toml_array(v, key, depth + 1));
  else
    throw Error(ExitCode::invalid_case,
                fmt::format("case dict: {}: a value of type {} has no TOML form; use a number, a string, a bool, a "
                            "list or a dict",
                            key, py::str(py::type::of(v).attr("__name__")).cast<std::string>()));
}

toml::array to_toml_array(const py::handle& seq, const std::string& key, int depth) {
  toml::array a;
  std::size_t i = 0;
  for (const auto& v : seq) add_value(a, "", v, fmt::format("{}[{}]", key, i++), depth);
  return a;
}

toml::table to_toml_table(const py::handle& dict, const std::string& key, int depth) {
  toml::table t;
  for (const auto& [k, v] : py::reinterpret_borrow<py::dict>(dict)) {
    if (!py::isinstance<py::str>(k))
      throw Error(ExitCode::invalid_case,
                  fmt::format("case dict: {}: keys must be strings", key.empty() ? "top" : key));
    const std::string name = k.cast<std::string>();
    add_value(t, name, v, key.empty() ? name : key + "." + name, depth);
  }
  return t;
}

// Written by the project's writer, whose strings are quoted and escaped: toml++'s printer writes a string as a
// multi-line literal without escaping, so a value holding three single quotes could end it and add keys.
std::string dict_to_toml(const py::dict& d) {
  std::string out;
  io::write_toml(out, to_toml_table(d, "", 1), "");
  return out;
}

// The module's plans: one rank, and no output folder (its results are arrays; output.directory is the CLI's).
const RankPlacement in_memory{1, 0, 1, 0, nullptr, false};

// ---- running: the GIL released, progress lines, Ctrl-C ----

extern "C" void on_interrupt(int) { request_stop(SIGINT); }

bool in_main_thread() {
  const auto threading = py::module_::import("threading");
  const py::object main_ident = threading.attr("main_thread")().attr("ident"), ident = threading.attr("get_ident")();
  return main_ident.equal(ident);
}

// Runs `job` without the GIL. SIGINT (Ctrl-C) during it asks the run to stop at its next check (between chunks of
// run.check_every steps in forward, between shots in a gradient), which then raises KeyboardInterrupt. Progress lines
// go to `progress` (a callable taking one line) when given, else nowhere.
template <class Job>
auto run_released(const py::object& progress, Job&& job) {
  const bool main = in_main_thread();
  struct sigaction previous {};
  if (main) {
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous);
  }
  if (main) clear_stop();  // (the stop flag is the process's: Ctrl-C reaches the main thread's calls only)
  if (!progress.is_none())
    set_progress_sink([progress](const std::string& line) {
      py::gil_scoped_acquire gil;
      progress(line.substr(0, line.find_last_not_of('\n') + 1));
    });
  struct Restore {
    bool main;
    struct sigaction previous;
    ~Restore() {
      set_progress_sink({});
      if (main) sigaction(SIGINT, &previous, nullptr);
    }
  } restore{main, previous};
  try {
    auto result = [&] {
      py::gil_scoped_release release;
      return job();
    }();
    // Ctrl-C that came after the run's last check (a one-shot gradient checks between shots only): the call ran to
    // its end, but the user asked to stop, so KeyboardInterrupt all the same (the result is dropped).
    if (main && stop_signal() == SIGINT) {
      clear_stop();
      PyErr_SetString(PyExc_KeyboardInterrupt, "interrupted (Ctrl-C) during the call, after its last check");
      throw py::error_already_set();
    }
    return result;
  } catch (const Error& e) {
    if (e.code() == ExitCode::interrupted && stop_signal() == SIGINT) {
      clear_stop();
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
      throw py::error_already_set();
    }
    throw;
  }
}

// The model: the case's own, or `model` (an array of the grid's shape) in its place. The velocity only: the case's
// density (constant, a layer each or a dataset of its model file), shear velocity and [attenuation]'s Q stay, with what
// they need of the case's [model] (its interfaces and file).
Case with_model(const Case& c, const py::object& model) {
  if (model.is_none()) return c;
  Case m = c;
  m.model = ModelSpec{};
  m.model.kind = ModelSpec::Kind::array;
  m.model.values = std::make_shared<const std::vector<double>>(checked_values(model, grid_shape(c), "model", true));
  m.model.density = c.model.density;
  m.model.densities = c.model.densities;
  m.model.density_dataset = c.model.density_dataset;
  m.model.shear_velocity = c.model.shear_velocity;  // (the elastic scheme's vs stays the case's)
  m.model.shear_velocities = c.model.shear_velocities;
  m.model.shear_dataset = c.model.shear_dataset;
  m.model.interfaces = c.model.interfaces;
  m.model.file = c.model.file;
  m.model.format = c.model.format;
  // (The density and shear velocity files of a raw or SEG-Y model, and the layout they share with its file.)
  m.model.density_file = c.model.density_file;
  m.model.shear_file = c.model.shear_file;
  m.model.file_shape = c.model.file_shape;
  m.model.file_float64 = c.model.file_float64;
  m.model.file_big_endian = c.model.file_big_endian;
  m.model.file_axis_order = c.model.file_axis_order;
  m.model.file_spacing = c.model.file_spacing;
  m.model.file_origin = c.model.file_origin;
  m.model.sample_spacing = c.model.sample_spacing;
  m.model.sample_origin = c.model.sample_origin;
  return m;
}

std::vector<int> checked_shots(const Case& c, const py::object& shots) {
  std::vector<int> out;
  const int n = int(c.shots.size());
  if (shots.is_none()) {
    for (int s = 0; s < n; ++s) out.push_back(s);
    return out;
  }
  const auto type_name = [](const py::handle& h) {
    return py::str(py::type::of(h).attr("__name__")).cast<std::string>();
  };
  if (!py::isinstance<py::iterable>(shots) || py::isinstance<py::str>(shots))
    throw py::type_error(fmt::format("shots: expected a list of shot indices such as [0, 2], found {} ({})",
                                     py::repr(shots).cast<std::string>(), type_name(shots)));
  for (const auto& s : shots) {
    long long k = 0;
    try {
      k = py::module_::import("operator").attr("index")(s).cast<long long>();  // ints and numpy integers only
    } catch (const py::error_already_set&) {
      throw py::type_error(fmt::format("shots: shot indices must be integers, found {} ({})",
                                       py::repr(s).cast<std::string>(), type_name(s)));
    }
    if (k < 0 || k >= n)
      throw py::index_error(fmt::format("shots: shot {} of a case with {} shot(s) (0..{})", k, n, n - 1));
    out.push_back(int(k));
  }
  return out;
}

py::dict forward(const Case& case_, const py::object& model, bool final_field, int snapshot_every,
                 const py::object& shots, const py::object& progress) {
  if (snapshot_every < 0) throw py::value_error(fmt::format("snapshot_every = {}: must be >= 0", snapshot_every));
  const Case c = with_model(case_, model);
  const std::vector<int> which = checked_shots(c, shots);
  SimulateOptions options;
  options.final_field = final_field;
  options.snapshot_every = snapshot_every;
  options.progress = !progress.is_none();
  Plan plan;
  // Under mpiexec (MPI initialised, e.g. by mpi4py), as `specwave forward` runs: shot groups, each decomposing its
  // grid (run.shot_groups, run.process_grid or the plan's choice).
  const Comm world = Comm::world();
  const bool parallel = world.size() > 1;
  options.stop_on_signal = !parallel;  // one rank's stop would leave the others waiting
  std::vector<ShotOutput> outputs = run_released(progress, [&] {
    apply_threads(c);
    if (parallel) {
      const Comm node = world.split_node();
      plan = make_plan(c, {world.size(), world.rank(), node.size(), node.rank(), &world, false});
    } else {
      plan = make_plan(c, in_memory);
    }
    // What this call holds in memory beside the run: every shot's snapshots and final field, fp64 (the plan counts
    // one field for a file's writer). Refused before the run when it would not fit.
    const double kept =
        double(which.size()) *
        ((snapshot_every > 0 ? double(plan.nt / snapshot_every + 1) : 0.0) + (final_field ? 1.0 : 0.0)) *
        double(c.grid.points()) * 8.0;
    if (plan.memory_available && kept + double(plan.memory_bytes) > double(plan.memory_available))
      throw Error(
          ExitCode::resources,
          fmt::format("forward: the {} shot(s)' snapshots (every {} of {} steps) and final fields would hold "
                      "about {:.3g} GB in memory beside the run's {:.3g} GB, but {:.3g} GB are available; raise "
                      "snapshot_every, run fewer shots a call, or write them to a file with `specwave forward`",
                      which.size(), snapshot_every, plan.nt, kept / 1e9, double(plan.memory_bytes) / 1e9,
                      double(plan.memory_available) / 1e9));
    return simulate_shots(c, plan, which, options, parallel ? &world : nullptr);
  });
  const bool fp32 = c.run.precision == Precision::fp32;
  py::list traces, finals, snapshots, steps, sources;
  for (std::size_t k = 0; k < which.size(); ++k) {
    auto& o = outputs[k];
    const py::ssize_t n_rec = py::ssize_t(shot_receivers(c, std::size_t(which[k])).size());
    if (fp32)  // the run's own precision, as traces.h5 holds them
      traces.append(owned_array(std::vector<float>(o.traces.begin(), o.traces.end()), {n_rec, plan.nt}));
    else
      traces.append(owned_array(std::move(o.traces), {n_rec, plan.nt}));
    std::vector<double> pos;
    for (const auto& s : c.shots[std::size_t(which[k])].sources)
      pos.insert(pos.end(), s.position.begin(), s.position.end());
    const py::ssize_t n_src = py::ssize_t(c.shots[std::size_t(which[k])].sources.size());
    sources.append(owned_array(std::move(pos), {n_src, 3}));
    // A shot's fields are kept by the first rank of the group that ran it (None on the others).
    if (final_field)
      finals.append(o.final_field.empty() ? py::object(py::none())
                                          : py::object(owned_array(std::move(o.final_field), grid_shape(c))));
    if (snapshot_every > 0) {
      if (o.snapshots.empty() && parallel) {
        snapshots.append(py::none()), steps.append(py::none());
        continue;
      }
      py::list shot_snaps;
      for (auto& f : o.snapshots) shot_snaps.append(owned_array(std::move(f), grid_shape(c)));
      snapshots.append(shot_snaps);
      steps.append(py::cast(o.snapshot_steps));
    }
  }
  py::dict out;
  out["traces"] = traces;
  // The receivers: one (n, 3) array when the shots share them, else a list of the run shots' own.
  if (shared_receivers(c)) {
    out["receivers"] = vec3_array(c.receivers);
  } else {
    py::list per_shot;
    for (int s : which) per_shot.append(vec3_array(shot_receivers(c, std::size_t(s))));
    out["receivers"] = per_shot;
  }
  out["sources"] = sources;
  out["shots"] = py::cast(which);
  out["dt"] = plan.dt;
  out["nt"] = plan.nt;
  out["final_fields"] = final_field ? py::object(finals) : py::object(py::none());
  out["snapshots"] = snapshot_every > 0 ? py::object(snapshots) : py::object(py::none());
  out["snapshot_steps"] = snapshot_every > 0 ? py::object(steps) : py::object(py::none());
  return out;
}

// The gradient machinery of one case at a fixed discretisation (dt, nt, absorbing profiles and acquisition from the
// plan made at construction): forward, gradient, Born and adjoint at any model, in the case's parameterisation.
class Operator {
 public:
  Operator(const Case& c, std::optional<double> velocity_max) : case_(c), world_(Comm::world()) {
    if (velocity_max) {
      if (!std::isfinite(*velocity_max) || *velocity_max <= 0)
        throw py::value_error(fmt::format("velocity_max = {}: must be finite and > 0 (m/s)", *velocity_max));
      case_.inversion.velocity_max = *velocity_max;  // the plan's reference velocity (dt, CPML damping)
    }
    // One parameter: the velocity (or slowness squared). The density's, the shear velocity's and the Lame parameters'
    // gradients are the command line's (gradient, invert), which hold their blocks; here they would be dropped
    // silently.
    const InversionSpec& inv = case_.inversion;
    if (inv.density_parameter || inv.shear_parameter || inv.lame)
      throw Error(ExitCode::invalid_case,
                  fmt::format("{}: inversion.parameters names {}: the Python Operator's model is the velocity alone "
                              "(the case's density and shear velocity stay fixed), so its gradient would be dJ/dvp; "
                              "remove inversion.parameters (or leave [\"velocity\"]) here, and take the gradients of "
                              "several parameters with `specwave gradient` or `specwave invert`",
                              case_.source_path.empty() ? case_.name : case_.source_path,
                              inv.lame                                       ? "the Lame parameters"
                              : inv.shear_parameter && inv.density_parameter ? "\"shear_velocity\" and \"density\""
                              : inv.shear_parameter                          ? "\"shear_velocity\""
                                                                             : "\"density\""));
    py::gil_scoped_release release;
    apply_threads(case_);
    plan_ = make_plan(case_, in_memory);
    propagator_ = make_gradient_propagator(case_, plan_, history_for(case_, plan_));
  }
  const Plan& plan() const { return plan_; }
  // The seconds between progress lines inside a shot: the case's run.progress_seconds with a `progress`, else none.
  double interval(const py::object& progress) const { return progress.is_none() ? 0.0 : case_.run.progress_seconds; }
  int n_shots() const { return int(case_.shots.size()); }
  // Every shot's receiver count; n_receivers() the common one (a ValueError when the shots' counts differ).
  std::vector<int> receiver_counts() const { return shot_receiver_counts(case_); }
  int n_receivers() const {
    const auto n = receiver_counts();
    if (!std::all_of(n.begin(), n.end(), [&](int k) { return k == n.front(); }))
      throw py::value_error("n_receivers: the shots have receivers of their own, not all as many; see receiver_counts");
    return n.front();
  }
  int shot_receiver_count(int s) const { return int(shot_receivers(case_, std::size_t(s)).size()); }
  std::vector<std::size_t> trace_values(const std::vector<int>& shots) const {
    std::vector<std::size_t> out;
    for (int s : shots) out.push_back(std::size_t(shot_receiver_count(s)) * std::size_t(plan_.nt));
    return out;
  }

 private:
  // run_released, one call of this Operator at a time: calls from several Python threads wait their turn (one
  // propagator, one state); an Operator a thread runs them at once.
  template <class Job>
  auto run_one(const py::object& progress, Job&& job) {
    return run_released(progress, [&] {
      const std::lock_guard<std::mutex> one_call(busy_);
      return job();
    });
  }
  // Between shots: Ctrl-C (run_released's handler) ends the run. On one rank only: under mpiexec one rank stopping
  // alone would leave the others waiting in the next collective (Ctrl-C there is mpiexec's).
  void stop_if_interrupted() const {
    const int signal = world_.size() == 1 ? stop_signal() : 0;
    if (signal) throw Error(ExitCode::interrupted, fmt::format("stopped by signal {} ({})", signal, strsignal(signal)));
  }

 public:
  Parameterisation parameterisation() const { return case_.inversion.parameterisation; }

  std::vector<double> model_values(const py::object& model) const {
    return checked_values(model, grid_shape(case_), "model", true);
  }

  py::list forward(const py::object& model, const py::object& shots, const py::object& progress) {
    const auto velocity = velocity_from_parameter(parameterisation(), model_values(model));
    const std::vector<int> which = checked_shots(case_, shots);
    auto traces = run_one(progress, [&] {
      propagator_->set_velocity(velocity);
      std::vector<std::vector<double>> out;
      for (int s : shots_of_rank(world_, which)) {
        stop_if_interrupted();
        const ShotProgress shot(s, n_shots(), interval(progress), {&case_, &plan_});  // lines and blow-up checks
        out.push_back(propagator_->forward(s, false));
      }
      return share_shot_traces(world_, which, std::move(out), trace_values(which));
    });
    py::list out;
    for (std::size_t k = 0; k < traces.size(); ++k)
      out.append(owned_array(std::move(traces[k]), {shot_receiver_count(which[k]), plan_.nt}));
    return out;
  }

  py::dict gradient(const py::object& model, const py::object& observed, bool illumination,
                    const py::object& progress) {
    const auto m = model_values(model);
    auto data = checked_shot_traces(observed, receiver_counts(), plan_.nt, "observed");
    LeastSquaresMisfit misfit;
    auto result = run_one(progress, [&] {
      // Under mpiexec (MPI initialised by mpi4py), the ranks share the shots and sum the gradient, as `invert` does.
      Objective objective(*propagator_, misfit, std::move(data), parameterisation(), plan_.dt,
                          world_.size() > 1 ? &world_ : nullptr);
      objective.report_progress(interval(progress));
      objective.check_fields({&case_, &plan_});
      return objective.evaluate(m, true, illumination);
    });
    py::dict out;
    out["misfit"] = result.misfit;
    out["misfit_per_shot"] = owned_array(std::move(result.misfit_per_shot), {n_shots()});
    out["gradient"] = owned_array(std::move(result.gradient), grid_shape(case_));
    out["illumination"] = illumination ? py::object(owned_array(std::move(result.illumination), grid_shape(case_)))
                                       : py::object(py::none());
    return out;
  }

  py::list born(const py::object& model, const py::object& perturbation, const py::object& progress) {
    const auto m = model_values(model);
    const auto dm = checked_values(perturbation, grid_shape(case_), "perturbation");
    const std::vector<int> all = checked_shots(case_, py::none());
    auto traces = run_one(progress, [&] {
      const auto velocity = velocity_from_parameter(parameterisation(), m);
      propagator_->set_velocity(velocity);
      // d(v dt)^2 = J dm, J = d(v dt)^2 / d(parameter) (chain_rule's factor, so that adjoint is born's transpose)
      std::vector<double> jacobian(m.size(), 1.0);
      chain_rule(parameterisation(), velocity, plan_.dt, jacobian);
      std::vector<double> d(m.size());
      for (std::size_t k = 0; k < d.size(); ++k) d[k] = jacobian[k] * dm[k];
      std::vector<std::vector<double>> out;
      for (int s : shots_of_rank(world_, all)) {
        stop_if_interrupted();
        const ShotProgress shot(s, n_shots(), interval(progress), {&case_, &plan_});  // lines and blow-up checks
        out.push_back(propagator_->born(s, d));
      }
      return share_shot_traces(world_, all, std::move(out), trace_values(all));
    });
    py::list out;
    for (std::size_t k = 0; k < traces.size(); ++k)
      out.append(owned_array(std::move(traces[k]), {shot_receiver_count(all[k]), plan_.nt}));
    return out;
  }

  py::array_t<double> adjoint(const py::object& model, const py::object& residual, const py::object& progress) {
    const auto m = model_values(model);
    const auto r = checked_shot_traces(residual, receiver_counts(), plan_.nt, "residual");
    const std::vector<int> all = checked_shots(case_, py::none());
    auto image = run_one(progress, [&] {
      const auto velocity = velocity_from_parameter(parameterisation(), m);
      propagator_->set_velocity(velocity);
      std::vector<double> g(m.size(), 0.0);
      for (int s : shots_of_rank(world_, all)) {
        stop_if_interrupted();
        const ShotProgress shot(s, n_shots(), interval(progress), {&case_, &plan_});  // lines and blow-up checks
        propagator_->forward(s, true);
        propagator_->adjoint(r[std::size_t(s)], g);
      }
      if (world_.size() > 1) {  // summed over the ranks' shots; the same bits on every rank (as the Objective)
        world_.allreduce_in_place(std::span<double>(g), ReduceOp::sum);
        world_.broadcast(std::span<double>(g), 0);
      }
      chain_rule(parameterisation(), velocity, plan_.dt, g);
      return g;
    });
    return owned_array(std::move(image), grid_shape(case_));
  }

 private:
  Case case_;
  Comm world_;
  Plan plan_;
  std::unique_ptr<GradientPropagator> propagator_;
  std::mutex busy_;  // (run_one)
};

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "specwave's C++ engine (use the package `specwave`, docs/python.md)";
  static py::exception<Error> error_type(m, "Error", PyExc_RuntimeError);
  error_type.attr("__module__") = "specwave";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      py::object exc = py::handle(error_type.ptr())(e.what());
      exc.attr("code") = int(e.code());
      exc.attr("category") = category(e.code());
      PyErr_SetObject(error_type.ptr(), exc.ptr());
    }
  });

  py::class_<Plan>(m, "Plan")
      .def_readonly("dt", &Plan::dt)
      .def_readonly("dt_max", &Plan::dt_max)
      .def_readonly("cfl", &Plan::cfl)
      .def_readonly("nt", &Plan::nt)
      .def_readonly("f_max", &Plan::f_max)
      .def_readonly("points_per_wavelength", &Plan::points_per_wavelength)
      .def_readonly("points_per_wavelength_floor", &Plan::points_per_wavelength_floor)
      .def_readonly("memory_bytes", &Plan::memory_bytes)
      .def_readonly("memory_available", &Plan::memory_available)
      .def_readonly("threads", &Plan::threads)
      .def_readonly("notes", &Plan::notes)
      .def_property_readonly("backend", [](const Plan& p) { return std::string(to_string(p.backend)); })
      .def_readonly("backend_note", &Plan::backend_note)
      .def_property_readonly("v_min", [](const Plan& p) { return p.model.v_min; })
      .def_property_readonly("v_max", [](const Plan& p) { return p.model.v_max; });

  py::class_<Case>(m, "Case")
      .def_static(
          "from_file", [](const std::string& path) { return io::read_case_file(path); }, py::arg("path"))
      .def_static(
          "from_toml",
          [](const std::string& text, const std::string& name, const std::string& base_dir) {
            return io::parse_case_text(text, name, base_dir);
          },
          py::arg("text"), py::arg("name") = "<string>", py::arg("base_dir") = "")
      .def_static(
          "from_dict",
          [](const py::dict& d, const std::string& base_dir) {
            return io::parse_case_text(dict_to_toml(d), "<dict>", base_dir);
          },
          py::arg("case"), py::arg("base_dir") = "")
      .def_static("dict_to_toml", &dict_to_toml, py::arg("case"))
      .def("copy", [](const Case& c) { return Case(c); })
      .def_property(
          "name", [](const Case& c) { return c.name; },
          [](Case& c, const std::string& name) {
            if (name.empty() || name.find_first_of("/\\") != std::string::npos)
              throw py::value_error(
                  fmt::format("Case.name = '{}': a case name is not empty and holds no / or \\ (it "
                              "names files); give e.g. 'my_case'",
                              name));
            c.name = name;
          })
      .def_property_readonly("text", [](const Case& c) { return c.source_text; })
      .def_property_readonly("path", [](const Case& c) { return c.source_path; })
      .def_property_readonly(
          "shape", [](const Case& c) { return py::make_tuple(c.grid.shape[0], c.grid.shape[1], c.grid.shape[2]); })
      .def_property_readonly(
          "spacing",
          [](const Case& c) { return py::make_tuple(c.grid.spacing[0], c.grid.spacing[1], c.grid.spacing[2]); })
      .def_property_readonly(
          "origin", [](const Case& c) { return py::make_tuple(c.grid.origin[0], c.grid.origin[1], c.grid.origin[2]); })
      .def_property_readonly("n_shots", [](const Case& c) { return c.shots.size(); })
      .def_property_readonly("receivers", [](const Case& c) { return vec3_array(c.receivers); })
      .def(
          "shot_receivers",
          [](const Case& c, int shot) {
            if (shot < 0 || shot >= int(c.shots.size()))
              throw py::index_error(
                  fmt::format("shot_receivers: shot {} of a case with {} shot(s)", shot, c.shots.size()));
            return vec3_array(shot_receivers(c, std::size_t(shot)));
          },
          py::arg("shot"))
      .def(
          "receiver_components",
          [](const Case& c, int shot) {
            if (shot < 0 || shot >= int(c.shots.size()))
              throw py::index_error(
                  fmt::format("receiver_components: shot {} of a case with {} shot(s)", shot, c.shots.size()));
            std::vector<std::string> names;
            for (std::size_t r = 0; r < shot_receivers(c, std::size_t(shot)).size(); ++r)
              names.emplace_back(to_string(shot_receiver_component(c, std::size_t(shot), r)));
            return names;
          },
          py::arg("shot") = 0,
          "What each receiver of the shot records, in trace order: \"p\" (pressure) or \"vz\", \"vy\", \"vx\" "
          "(particle velocity, m/s; receivers.components in the case file)")
      .def(
          "sources",
          [](const Case& c, int shot) {
            if (shot < 0 || shot >= int(c.shots.size()))
              throw py::index_error(fmt::format("sources: shot {} of a case with {} shot(s)", shot, c.shots.size()));
            std::vector<Vec3> p;
            for (const auto& s : c.shots[std::size_t(shot)].sources) p.push_back(s.position);
            return vec3_array(p);
          },
          py::arg("shot"))
      .def_property_readonly("method", [](const Case& c) { return std::string(to_string(c.scheme.method)); })
      .def_property_readonly("order", [](const Case& c) { return c.scheme.order; })
      .def_property_readonly("parameterisation",
                             [](const Case& c) { return std::string(to_string(c.inversion.parameterisation)); })
      .def_property(
          "precision", [](const Case& c) { return std::string(to_string(c.run.precision)); },
          [](Case& c, const std::string& p) {
            if (p != "fp32" && p != "fp64")
              throw py::value_error(fmt::format("precision = '{}': use 'fp32' or 'fp64'", p));
            c.run.precision = p == "fp64" ? Precision::fp64 : Precision::fp32;
          })
      .def_property(
          "backend", [](const Case& c) { return std::string(to_string(c.run.backend)); },
          [](Case& c, const std::string& b) {
            if (b == "cpu")
              c.run.backend = BackendKind::cpu;
            else if (b == "cuda")
              c.run.backend = BackendKind::cuda;
            else if (b == "auto")
              c.run.backend = BackendKind::auto_select;
            else
              throw py::value_error(fmt::format("backend = '{}': use 'cpu', 'cuda' or 'auto'", b));
          })
      .def_property(
          "threads", [](const Case& c) { return c.run.threads; },
          [](Case& c, int t) {
            if (t < 0 || t > max_threads)
              throw py::value_error(fmt::format("threads = {}: must be 0 (all) to {}", t, max_threads));
            c.run.threads = t;
          })
      .def_property(
          "model",
          [](const Case& c) {
            // The model on the grid and the returned copy (float32): refused before building when they would not fit.
            const double bytes = 12.0 * double(c.grid.points()), available = double(available_memory_bytes());
            if (available > 0 && bytes > available)
              throw Error(
                  ExitCode::resources,
                  fmt::format("case.model: the {} x {} x {} model needs about {:.3g} GB to build and return, "
                              "but {:.3g} GB are available; read it from its file in parts, or on a larger node",
                              c.grid.shape[0], c.grid.shape[1], c.grid.shape[2], bytes / 1e9, available / 1e9));
            const VelocityModel vm = build_velocity_model(c);
            return owned_array(std::vector<float>(vm.velocity), grid_shape(c));
          },
          [](Case& c, const py::object& model) {
            if (model.is_none())
              throw py::type_error(
                  "case.model = None: give an array (nz, ny, nx) of velocities in m/s (the case's own model stays "
                  "while none is set; Case.copy() keeps one to go back to)");
            c = with_model(c, model);
          })
      .def_property_readonly("true_model",
                             [](const Case& c) -> py::object {
                               if (!c.inversion.true_model) return py::none();
                               return owned_array(velocity_of(c, *c.inversion.true_model), grid_shape(c));
                             })
      .def_property_readonly("velocity_bounds",
                             [](const Case& c) -> py::object {
                               if (!c.inversion.velocity_min || !c.inversion.velocity_max) return py::none();
                               return py::make_tuple(*c.inversion.velocity_min, *c.inversion.velocity_max);
                             })
      .def("plan",
           [](const Case& c) {
             py::gil_scoped_release release;
             return make_plan(c, in_memory);
           })
      .def("describe", [](const Case& c) {
        py::gil_scoped_release release;
        return describe_plan(c, make_plan(c, in_memory));
      });

  m.def("_forward", &forward, py::arg("case"), py::arg("model"), py::arg("final_field"), py::arg("snapshot_every"),
        py::arg("shots"), py::arg("progress"));

  py::class_<Operator>(m, "_Operator")
      .def(py::init<const Case&, std::optional<double>>(), py::arg("case"), py::arg("velocity_max"))
      .def_property_readonly("plan", &Operator::plan)
      .def_property_readonly("n_shots", &Operator::n_shots)
      .def_property_readonly("n_receivers", &Operator::n_receivers)
      .def_property_readonly("receiver_counts", &Operator::receiver_counts)
      .def("forward", &Operator::forward, py::arg("model"), py::arg("shots"), py::arg("progress"))
      .def("gradient", &Operator::gradient, py::arg("model"), py::arg("observed"), py::arg("illumination"),
           py::arg("progress"))
      .def("born", &Operator::born, py::arg("model"), py::arg("perturbation"), py::arg("progress"))
      .def("adjoint", &Operator::adjoint, py::arg("model"), py::arg("residual"), py::arg("progress"));
}
