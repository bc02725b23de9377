// TOML case-file parser (schema and rules: docs/case-file.md).
#include "io/case_file.hpp"
#include "io/file_kind.hpp"
#include "io/segy.hpp"
#include "io/suggest.hpp"
#include "io/toml_edit.hpp"

#include "solver/case/errors.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

namespace specwave::io {
namespace {

namespace fs = std::filesystem;
using Names = std::vector<std::string_view>;
constexpr long long kMaxReceivers = 10'000'000;

// ---- small text helpers -------------------------------------------------------------------------

std::string render(const toml::node& n, std::size_t depth = 0) {
  std::string s;
  if (auto v = n.as_string()) {
    s = "\"";
    for (char ch : v->get()) s += (ch == '\n' || ch == '\r') ? std::string("\\n") : std::string(1, ch);
    s += "\"";
  } else if (auto i = n.as_integer()) {
    s = fmt::format("{}", i->get());
  } else if (auto f = n.as_floating_point()) {
    // The shortest text that reads back as the same double (toml++'s own printing gives 17 digits), spelt as TOML
    // does: "10.0" stays distinguishable from the integer 10.
    s = fmt::format("{}", f->get());
    if (s.find_first_of(".eEni") == std::string::npos) s += ".0";
  } else if (auto b = n.as_boolean()) {
    s = b->get() ? "true" : "false";
  } else if (auto a = n.as_array()) {
    s = "[";
    std::size_t k = 0;
    for (; k < a->size() && s.size() < 60; ++k) s += (k ? ", " : "") + render(*a->get(k), depth + 1);
    s += k < a->size() ? ", ...]" : "]";
  } else if (n.is_table()) {
    s = "{...}";
  } else {
    std::ostringstream os;
    n.visit([&](auto&& x) { os << x; });
    s = os.str();
  }
  if (depth == 0 && s.size() > 100) s = s.substr(0, 96) + " ...";
  return s;
}

std::string join(const Names& names, std::string_view quote = "", std::string_view sep = ", ") {
  std::string s;
  for (auto n : names) s += fmt::format("{}{}{}{}", s.empty() ? "" : sep, quote, n, quote);
  return s;
}

int line_of(const toml::node& n, int fallback = 1) {
  const int l = static_cast<int>(n.source().begin.line);
  return l > 0 ? l : fallback;
}

// ---- node conversion with errors ----------------------------------------------------------------

struct Parser {
  std::string file;  // for messages
  std::string base;  // folder for relative paths

  [[noreturn]] void fail(int line, std::string_view path, std::string_view what, std::string_view found,
                         std::string_view fix) const {
    throw Error(ExitCode::invalid_case, fmt::format("{}:{}: {}: {} ({}); {}", file, line, path, what, found, fix));
  }
  [[noreturn]] void bad(const toml::node& n, std::string_view path, std::string_view what, std::string_view fix) const {
    fail(line_of(n), path, what, "found " + render(n), fix);
  }
  [[noreturn]] void wrong_type(const toml::node& n, std::string_view path, std::string_view expected,
                               std::string_view example) const {
    fail(line_of(n), path, fmt::format("must be {}", expected), fmt::format("found {} {}", type_name(n), render(n)),
         fmt::format("write it like {}", example));
  }

  double num(const toml::node& n, const std::string& path, std::string_view ex) const {
    double v = 0;
    if (auto i = n.as_integer())
      v = static_cast<double>(i->get());
    else if (auto f = n.as_floating_point())
      v = f->get();
    else
      wrong_type(n, path, "a number", ex);
    if (!std::isfinite(v)) bad(n, path, "must be a finite number", fmt::format("write it like {}", ex));
    return v;
  }
  int integer(const toml::node& n, const std::string& path, std::string_view ex) const {
    auto i = n.as_integer();
    if (!i) wrong_type(n, path, "an integer", ex);
    if (i->get() < INT_MIN || i->get() > INT_MAX) bad(n, path, "is too large for an integer", "use a smaller value");
    return static_cast<int>(i->get());
  }
  bool boolean(const toml::node& n, const std::string& path, std::string_view ex) const {
    auto b = n.as_boolean();
    if (!b) wrong_type(n, path, "true or false", ex);
    return b->get();
  }
  std::string str(const toml::node& n, const std::string& path, std::string_view ex) const {
    auto s = n.as_string();
    if (!s) wrong_type(n, path, "a string", ex);
    return s->get();
  }
  const toml::array& arr(const toml::node& n, const std::string& path, std::string_view expected, std::string_view ex,
                         std::size_t len = SIZE_MAX) const {
    auto a = n.as_array();
    if (!a) wrong_type(n, path, expected, ex);
    if (len != SIZE_MAX && a->size() != len)
      fail(line_of(n), path, fmt::format("must have {} elements", len),
           fmt::format("found {}: {}", a->size(), render(n)), fmt::format("write it like {}", ex));
    return *a;
  }
  Vec3 vec3(const toml::node& n, const std::string& path, std::string_view ex) const {
    const auto& a = arr(n, path, "an array of 3 numbers [z, y, x]", ex, 3);
    Vec3 v{};
    for (std::size_t k = 0; k < 3; ++k) v[k] = num(*a.get(k), fmt::format("{}[{}]", path, k), ex);
    return v;
  }
  std::vector<double> nums(const toml::node& n, const std::string& path, std::string_view ex) const {
    const auto& a = arr(n, path, "an array of numbers", ex);
    std::vector<double> v;
    for (std::size_t k = 0; k < a.size(); ++k) v.push_back(num(*a.get(k), fmt::format("{}[{}]", path, k), ex));
    return v;
  }
  std::string resolve(const std::string& p) const {
    const fs::path q(p);
    if (q.is_absolute() || base.empty()) return p;
    return (fs::path(base) / q).lexically_normal().string();
  }
};

// One TOML table plus its key path; typed getters (r* = required, o* = optional, others take a default).
struct Tab {
  const Parser& p;
  const toml::table& t;
  std::string path;  // "" for the root

  std::string key(std::string_view k) const { return path.empty() ? std::string(k) : fmt::format("{}.{}", path, k); }
  int line() const { return line_of(t); }
  const toml::node* find(std::string_view k) const { return t.get(k); }

  [[noreturn]] void missing(std::string_view k, std::string_view ex) const {
    p.fail(line(), key(k), "missing required key",
           path.empty() ? "not found in the file" : fmt::format("not found in table '{}'", path),
           fmt::format("add {}", ex));
  }
  const toml::node& need(std::string_view k, std::string_view ex) const {
    if (auto n = find(k)) return *n;
    missing(k, ex);
  }
  // Range/consistency check on a present key: reports its line and value.
  void check(bool ok, std::string_view k, std::string_view what, std::string_view fix) const {
    if (ok) return;
    if (auto n = find(k)) p.bad(*n, key(k), what, fix);
    p.fail(line(), key(k), what, "default value", fix);
  }

  // Unknown keys are errors; the first one in file order is reported, with the closest allowed key.
  void allow(const Names& keys) const {
    const toml::key* worst = nullptr;
    for (auto&& [k, n] : t)
      if (std::find(keys.begin(), keys.end(), k.str()) == keys.end())
        if (!worst || k.source().begin.line < worst->source().begin.line) worst = &k;
    if (!worst) return;
    const int l =
        worst->source().begin.line > 0 ? static_cast<int>(worst->source().begin.line) : line_of(*t.get(worst->str()));
    p.fail(l, key(worst->str()), "unknown key", "allowed here: " + join(keys),
           suggest(worst->str(), keys, "remove it (see docs/case-file.md for the keys)"));
  }

  std::optional<double> onum(std::string_view k, std::string_view ex) const {
    if (auto n = find(k)) return p.num(*n, key(k), ex);
    return std::nullopt;
  }
  double num(std::string_view k, std::string_view ex, double def) const { return onum(k, ex).value_or(def); }
  double rnum(std::string_view k, std::string_view ex) const { return p.num(need(k, ex), key(k), ex); }
  int integer(std::string_view k, std::string_view ex, int def) const {
    auto n = find(k);
    return n ? p.integer(*n, key(k), ex) : def;
  }
  int rinteger(std::string_view k, std::string_view ex) const { return p.integer(need(k, ex), key(k), ex); }
  bool boolean(std::string_view k, std::string_view ex, bool def) const {
    auto n = find(k);
    return n ? p.boolean(*n, key(k), ex) : def;
  }
  std::string str(std::string_view k, std::string_view ex, std::string def) const {
    auto n = find(k);
    return n ? p.str(*n, key(k), ex) : def;
  }
  std::string rstr(std::string_view k, std::string_view ex) const { return p.str(need(k, ex), key(k), ex); }
  Vec3 vec3(std::string_view k, std::string_view ex, Vec3 def) const {
    auto n = find(k);
    return n ? p.vec3(*n, key(k), ex) : def;
  }
  Vec3 rvec3(std::string_view k, std::string_view ex) const { return p.vec3(need(k, ex), key(k), ex); }
  // A path string: non-empty, resolved against the case file's folder.
  std::string rpath(std::string_view k, std::string_view ex) const {
    const std::string s = rstr(k, ex);
    check(!s.empty(), k, "must not be empty", fmt::format("write it like {}", ex));
    return p.resolve(s);
  }

  // An input file's path (rpath); when it exists it must be a regular file (a FIFO would make every reader wait
  // forever, a directory or device read as garbage): else ExitCode::input_error naming the file, line and key.
  std::string rinput(std::string_view k, std::string_view ex) const {
    const std::string s = rpath(k, ex);
    if (const auto kind = io::not_a_regular_file(s))
      throw Error(ExitCode::input_error,
                  fmt::format("{}:{}: {}: names {}, which is {}, not a regular file; name a regular file, written "
                              "e.g. by h5py or specwave",
                              p.file, line_of(need(k, ex)), key(k), s, *kind));
    return s;
  }

  // One of a set of strings.
  template <class E>
  E choice(std::string_view k, std::initializer_list<std::pair<std::string_view, E>> opts, std::optional<E> def,
           std::string_view ex) const {
    const toml::node* n = find(k);
    if (!n) {
      if (def) return *def;
      missing(k, ex);
    }
    const std::string s = p.str(*n, key(k), ex);
    Names names;
    for (auto& [name, e] : opts) {
      if (s == name) return e;
      names.push_back(name);
    }
    p.bad(*n, key(k), "must be one of " + join(names, "\""), suggest(s, names, "use one of these values"));
  }

  std::optional<Tab> sub(std::string_view k, bool required, std::string_view ex) const {
    const toml::node* n = find(k);
    if (!n) {
      if (required) missing(k, ex);
      return std::nullopt;
    }
    auto tt = n->as_table();
    if (!tt) p.wrong_type(*n, key(k), "a table", ex);
    return Tab{p, *tt, key(k)};
  }
  // An array of tables ([[k]] or k = [{...}]); absent -> empty.
  std::vector<Tab> tables(std::string_view k, std::string_view ex) const {
    std::vector<Tab> out;
    const toml::node* n = find(k);
    if (!n) return out;
    const auto& a = p.arr(*n, key(k), "an array of tables", ex);
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string ip = fmt::format("{}[{}]", key(k), i);
      auto tt = a.get(i)->as_table();
      if (!tt) p.wrong_type(*a.get(i), ip, "a table", ex);
      out.push_back(Tab{p, *tt, ip});
    }
    return out;
  }
  // Keys that only make sense for some `type` values: error when present for another type.
  void only_for(const std::vector<std::pair<std::string_view, Names>>& key_types, std::string_view type_key,
                std::string_view type) const {
    for (auto& [k, types] : key_types) {
      if (!find(k) || std::find(types.begin(), types.end(), type) != types.end()) continue;
      p.bad(*find(k), key(k), fmt::format("is not used with {} = \"{}\"", type_key, type),
            fmt::format("remove it, or use {} = {}", type_key, join(types, "\"", " or ")));
    }
  }
};

// ---- the schema ---------------------------------------------------------------------------------

void read_grid(const Tab& r, Case& c) {
  const Tab g = *r.sub("grid", true, "a [grid] table with shape = [nz, ny, nx] and spacing = 10.0");
  g.allow({"shape", "spacing", "origin"});
  constexpr std::string_view shape_ex = "shape = [200, 100, 100]";
  const auto& sa =
      g.p.arr(g.need("shape", shape_ex), g.key("shape"), "an array of 3 integers [nz, ny, nx]", shape_ex, 3);
  for (std::size_t k = 0; k < 3; ++k)
    c.grid.shape[k] = g.p.integer(*sa.get(k), fmt::format("{}[{}]", g.key("shape"), k), shape_ex);
  g.check(std::all_of(c.grid.shape.begin(), c.grid.shape.end(), [](int s) { return s >= 1; }), "shape",
          "every entry must be >= 1", "give at least one grid point per axis");
  constexpr std::string_view sp_ex = "spacing = 10.0 or spacing = [10.0, 10.0, 10.0]";
  const toml::node& sp = g.need("spacing", sp_ex);
  if (sp.is_array())
    c.grid.spacing = g.p.vec3(sp, g.key("spacing"), sp_ex);
  else
    c.grid.spacing.fill(g.p.num(sp, g.key("spacing"), sp_ex));
  g.check(std::all_of(c.grid.spacing.begin(), c.grid.spacing.end(), [](double d) { return d >= min_spacing; }),
          "spacing", "must be at least 1e-9 m (every entry)", "give the grid spacing in metres, e.g. 10.0");
  c.grid.origin = g.vec3("origin", "origin = [0.0, 0.0, 0.0]", {0, 0, 0});
}

// The keys of a model file (type = "file"): its format and, for raw binary and SEG-Y, the layout and grid that the
// file itself does not say.
void read_model_file_keys(const Tab& m, ModelSpec& md) {
  using F = ModelSpec::Format;
  md.file = m.rinput("file", "file = \"model.h5\"");
  md.format =
      m.choice<F>("format", {{"hdf5", F::hdf5}, {"raw", F::raw}, {"segy", F::segy}}, F::hdf5, "format = \"hdf5\"");
  const char* format = md.format == F::hdf5 ? "hdf5" : md.format == F::raw ? "raw" : "segy";
  m.only_for({{"dataset", {"hdf5"}},
              {"index", {"hdf5"}},
              {"density_dataset", {"hdf5"}},
              {"shear_dataset", {"hdf5"}},
              {"density_file", {"raw", "segy"}},
              {"shear_file", {"raw", "segy"}},
              {"shape", {"raw"}},
              {"spacing", {"raw"}},
              {"origin", {"raw"}},
              {"dtype", {"raw"}},
              {"byte_order", {"raw"}},
              {"axis_order", {"raw"}},
              {"sample_spacing", {"segy"}},
              {"sample_origin", {"segy"}}},
             "format", format);
  // Raw and SEG-Y: the density and the shear velocity from files of the velocity file's format and layout.
  if (m.find("density_file")) {
    md.density_file = m.rinput("density_file", "density_file = \"density.sgy\"");
    m.check(!md.density, "density_file", "cannot be combined with density",
            "keep density_file (a density model) or density (constant), not both");
  }
  if (m.find("shear_file")) {
    md.shear_file = m.rinput("shear_file", "shear_file = \"vs.sgy\"");
    m.check(!md.shear_velocity, "shear_file", "cannot be combined with shear_velocity",
            "keep shear_file (a model) or shear_velocity (constant), not both");
  }
  switch (md.format) {
    case F::hdf5:
      md.dataset = m.str("dataset", "dataset = \"/velocity\"", "/velocity");
      if (m.find("density_dataset")) {
        md.density_dataset = m.str("density_dataset", "density_dataset = \"/density\"", "");
        m.check(!md.density_dataset.empty(), "density_dataset", "must not be empty",
                "name the HDF5 dataset of the density (kg/m^3), e.g. \"/density\"");
        m.check(!md.density, "density_dataset", "cannot be combined with density",
                "keep density_dataset (a density model) or density (constant), not both");
        m.check(!m.find("index"), "density_dataset", "cannot be combined with index",
                "give a 3-D velocity dataset with a density model (4-D models are inversion iterates, velocity only)");
      }
      if (m.find("shear_dataset")) {
        md.shear_dataset = m.str("shear_dataset", "shear_dataset = \"/shear_velocity\"", "");
        m.check(!md.shear_dataset.empty(), "shear_dataset", "must not be empty",
                "name the HDF5 dataset of the shear velocity (m/s), e.g. \"/shear_velocity\"");
        m.check(!md.shear_velocity, "shear_dataset", "cannot be combined with shear_velocity",
                "keep shear_dataset (a model) or shear_velocity (constant), not both");
        m.check(!m.find("index"), "shear_dataset", "cannot be combined with index",
                "give a 3-D velocity dataset with a shear velocity model");
      }
      m.check(!md.dataset.empty(), "dataset", "must not be empty", "name the HDF5 dataset, e.g. \"/velocity\"");
      if (m.find("index")) {
        md.index = m.rinteger("index", "index = 12");
        m.check(*md.index >= 0, "index", "must be >= 0",
                "give the model's index along the first axis of a 4-D dataset, e.g. an iteration of inversion.h5");
      }
      break;
    case F::raw: {
      constexpr std::string_view shape_ex = "shape = [200, 100, 100]";
      const auto& sa =
          m.p.arr(m.need("shape", shape_ex), m.key("shape"), "an array of 3 integers [nz, ny, nx]", shape_ex, 3);
      for (std::size_t k = 0; k < 3; ++k)
        md.file_shape[k] = m.p.integer(*sa.get(k), fmt::format("{}[{}]", m.key("shape"), k), shape_ex);
      m.check(std::all_of(md.file_shape.begin(), md.file_shape.end(), [](std::int64_t n) { return n >= 1; }), "shape",
              "every entry must be >= 1", "give the file's grid points per axis, [nz, ny, nx]");
      if (m.find("spacing")) {
        constexpr std::string_view sp_ex = "spacing = 10.0 or spacing = [10.0, 10.0, 10.0]";
        const toml::node& sp = *m.find("spacing");
        if (sp.is_array())
          md.file_spacing = m.p.vec3(sp, m.key("spacing"), sp_ex);
        else
          md.file_spacing = Vec3{}, md.file_spacing->fill(m.p.num(sp, m.key("spacing"), sp_ex));
        m.check(
            std::all_of(md.file_spacing->begin(), md.file_spacing->end(), [](double d) { return d >= min_spacing; }),
            "spacing", "every entry must be at least 1e-9 m", "give the file's grid spacing [dz, dy, dx] in metres");
      }
      if (m.find("origin")) md.file_origin = m.rvec3("origin", "origin = [0.0, 0.0, 0.0]");
      md.file_float64 = m.choice<bool>("dtype", {{"float32", false}, {"float64", true}}, false, "dtype = \"float32\"");
      md.file_big_endian =
          m.choice<bool>("byte_order", {{"little", false}, {"big", true}}, false, "byte_order = \"little\"");
      using O = std::array<int, 3>;
      md.file_axis_order = m.choice<O>("axis_order",
                                       {{"zyx", O{0, 1, 2}},
                                        {"zxy", O{0, 2, 1}},
                                        {"yzx", O{1, 0, 2}},
                                        {"yxz", O{1, 2, 0}},
                                        {"xzy", O{2, 0, 1}},
                                        {"xyz", O{2, 1, 0}}},
                                       O{0, 1, 2}, "axis_order = \"zyx\"");
      break;
    }
    case F::segy:
      md.sample_spacing = m.rnum("sample_spacing", "sample_spacing = 10.0");
      m.check(md.sample_spacing >= min_spacing, "sample_spacing", "must be at least 1e-9 m",
              "give the depth step between a trace's samples in metres (SEG-Y's sample interval is a time)");
      md.sample_origin = m.num("sample_origin", "sample_origin = 0.0", 0.0);
      break;
  }
}

// A model table: [model], or [inversion.true_model] with the same keys.
ModelSpec read_model_spec(const Tab& m) {
  using K = ModelSpec::Kind;
  ModelSpec md;
  m.allow({"type",          "velocity",      "interfaces",   "velocities",      "anomaly",        "center",
           "radius",        "file",          "format",       "dataset",         "index",          "shape",
           "spacing",       "origin",        "dtype",        "byte_order",      "axis_order",     "sample_spacing",
           "sample_origin", "density",       "densities",    "density_dataset", "shear_velocity", "shear_velocities",
           "shear_dataset", "shear_anomaly", "shear_center", "density_file",    "shear_file"});
  md.density = m.onum("density", "density = 1000.0");
  m.check(!md.density || (*md.density >= min_density && *md.density <= max_density), "density",
          "must be a number in [1e-3, 1e6] kg/m^3", "give the medium's density in kg/m^3, e.g. 1000.0 for water");
  md.kind = m.choice<K>(
      "type", {{"homogeneous", K::homogeneous}, {"layered", K::layered}, {"gaussian", K::gaussian}, {"file", K::file}},
      std::nullopt, "type = \"homogeneous\"");
  m.only_for({{"velocity", {"homogeneous", "gaussian"}},
              {"interfaces", {"layered"}},
              {"velocities", {"layered"}},
              {"anomaly", {"gaussian"}},
              {"center", {"gaussian"}},
              {"radius", {"gaussian"}},
              {"shear_anomaly", {"gaussian"}},
              {"shear_center", {"gaussian"}},
              {"file", {"file"}},
              {"format", {"file"}},
              {"dataset", {"file"}},
              {"index", {"file"}},
              {"shape", {"file"}},
              {"spacing", {"file"}},
              {"origin", {"file"}},
              {"dtype", {"file"}},
              {"byte_order", {"file"}},
              {"axis_order", {"file"}},
              {"sample_spacing", {"file"}},
              {"sample_origin", {"file"}},
              {"densities", {"layered"}},
              {"density_dataset", {"file"}},
              {"density_file", {"file"}},
              {"shear_velocities", {"layered"}},
              {"shear_dataset", {"file"}},
              {"shear_file", {"file"}}},
             "type", to_string(md.kind));
  md.shear_velocity = m.onum("shear_velocity", "shear_velocity = 1200.0");
  m.check(!md.shear_velocity || (*md.shear_velocity >= 0 && std::isfinite(*md.shear_velocity)), "shear_velocity",
          "must be a number >= 0", "give the shear velocity in m/s (0 for a fluid), e.g. 1200.0");
  const auto positive_velocity = [&](std::string_view k, double v) {
    m.check(v > 0, k, "must be > 0", "use a positive velocity in m/s");
  };
  switch (md.kind) {
    case K::homogeneous:
      md.velocity = m.rnum("velocity", "velocity = 2000.0");
      positive_velocity("velocity", md.velocity);
      break;
    case K::layered: {
      md.interfaces = m.p.nums(m.need("interfaces", "interfaces = [500.0, 1200.0]"), m.key("interfaces"),
                               "interfaces = [500.0, 1200.0]");
      md.velocities = m.p.nums(m.need("velocities", "velocities = [1500.0, 2500.0, 3500.0]"), m.key("velocities"),
                               "velocities = [1500.0, 2500.0, 3500.0]");
      m.check(
          std::adjacent_find(md.interfaces.begin(), md.interfaces.end(), std::greater_equal<>()) == md.interfaces.end(),
          "interfaces", "must be strictly increasing", "list the interface depths from top to bottom without repeats");
      if (md.velocities.size() != md.interfaces.size() + 1)
        m.p.fail(line_of(*m.find("velocities")), m.key("velocities"),
                 fmt::format("must have one entry more than interfaces ({})", md.interfaces.size() + 1),
                 fmt::format("found {}: {}", md.velocities.size(), render(*m.find("velocities"))),
                 "give one velocity per layer, top to bottom");
      m.check(std::all_of(md.velocities.begin(), md.velocities.end(), [](double v) { return v > 0; }), "velocities",
              "every entry must be > 0", "use positive velocities in m/s");
      if (m.find("densities")) {
        constexpr std::string_view ex = "densities = [1000.0, 2000.0, 2300.0]";
        md.densities = m.p.nums(*m.find("densities"), m.key("densities"), ex);
        if (md.densities.size() != md.velocities.size())
          m.p.fail(line_of(*m.find("densities")), m.key("densities"),
                   fmt::format("must have one entry per layer, as velocities ({})", md.velocities.size()),
                   fmt::format("found {}: {}", md.densities.size(), render(*m.find("densities"))),
                   "give one density per layer in kg/m^3, top to bottom");
        m.check(std::all_of(md.densities.begin(), md.densities.end(),
                            [](double v) { return v >= min_density && v <= max_density; }),
                "densities", "every entry must be in [1e-3, 1e6] kg/m^3",
                "give the layers' densities in kg/m^3, e.g. 1000.0 for water");
        m.check(!md.density, "densities", "cannot be combined with density",
                "keep densities (one per layer) or density (constant), not both");
      }
      if (m.find("shear_velocities")) {
        constexpr std::string_view ex = "shear_velocities = [0.0, 1200.0, 2000.0]";
        md.shear_velocities = m.p.nums(*m.find("shear_velocities"), m.key("shear_velocities"), ex);
        if (md.shear_velocities.size() != md.velocities.size())
          m.p.fail(line_of(*m.find("shear_velocities")), m.key("shear_velocities"),
                   fmt::format("must have one entry per layer, as velocities ({})", md.velocities.size()),
                   fmt::format("found {}: {}", md.shear_velocities.size(), render(*m.find("shear_velocities"))),
                   "give one shear velocity per layer in m/s (0 for a fluid), top to bottom");
        m.check(std::all_of(md.shear_velocities.begin(), md.shear_velocities.end(),
                            [](double v) { return v >= 0 && std::isfinite(v); }),
                "shear_velocities", "every entry must be >= 0", "use shear velocities in m/s, 0 for a fluid layer");
        m.check(!md.shear_velocity, "shear_velocities", "cannot be combined with shear_velocity",
                "keep shear_velocities (one per layer) or shear_velocity (constant), not both");
      }
      break;
    }
    case K::gaussian:
      md.velocity = m.rnum("velocity", "velocity = 2000.0");
      positive_velocity("velocity", md.velocity);
      md.anomaly = m.rnum("anomaly", "anomaly = -300.0");
      m.check(md.velocity + md.anomaly > 0 && md.velocity + md.anomaly <= 1e6, "anomaly",
              "velocity + anomaly must be in (0, 1e6] m/s", "give the anomaly's peak change of velocity in m/s");
      md.center = m.rvec3("center", "center = [500.0, 500.0, 500.0]");
      m.check(std::all_of(md.center.begin(), md.center.end(), [](double v) { return std::abs(v) <= 1e12; }), "center",
              "must lie within 1e12 m of the origin", "give the anomaly's centre in metres, in the grid's frame");
      md.radius = m.rnum("radius", "radius = 100.0");
      m.check(md.radius >= min_spacing && md.radius <= 1e12, "radius", "must be in [1e-9, 1e12] m",
              "use a positive radius in metres");
      md.shear_anomaly = m.num("shear_anomaly", "shear_anomaly = -100.0", 0.0);
      if (m.find("shear_center")) md.shear_center = m.rvec3("shear_center", "shear_center = [500.0, 500.0, 500.0]");
      for (const char* key : {"shear_anomaly", "shear_center"})
        m.check(!m.find(key) || md.shear_velocity, key,
                "is a Gaussian anomaly of the shear velocity, which the "
                "model lacks",
                "add shear_velocity = 1200.0 (its background, m/s), or remove the key");
      m.check(!md.shear_velocity || *md.shear_velocity + std::min(md.shear_anomaly, 0.0) >= 0, "shear_anomaly",
              "shear_velocity + shear_anomaly must be >= 0", "use a smaller negative anomaly");
      break;
    case K::file: read_model_file_keys(m, md); break;
  }
  return md;
}

void read_model(const Tab& r, Case& c) {
  c.model = read_model_spec(*r.sub("model", true, "a [model] table with type = \"homogeneous\" and velocity = 2000.0"));
}

// [attenuation] (docs/case-file.md): Q (constant, a layer each, or a dataset of the model file) and its fit.
void read_attenuation(const Tab& r, Case& c) {
  const auto t = r.sub("attenuation", false, "[attenuation]");
  if (!t) return;
  auto& a = c.attenuation;
  a.present = true;
  t->allow({"q", "q_dataset", "band", "mechanisms", "reference_frequency"});
  constexpr double q_max = 1e30;  // Q is held as float (std::vector<float>); far above any lossless value
  const bool layered = c.model.kind == ModelSpec::Kind::layered;
  const bool hdf5_file = c.model.kind == ModelSpec::Kind::file && c.model.format == ModelSpec::Format::hdf5;
  if (const toml::node* q = t->find("q")) {
    constexpr std::string_view ex = "q = 100.0 (or one per layer: q = [10000.0, 80.0, 150.0])";
    if (q->is_array()) {
      a.q_layers = t->p.nums(*q, t->key("q"), ex);
      t->check(layered, "q", "an array (one Q a layer) needs model.type = \"layered\"",
               "give one number (a constant Q), or q_dataset with a model file");
      if (a.q_layers.size() != c.model.velocities.size())
        t->p.fail(line_of(*q), t->key("q"),
                  fmt::format("must have one entry per layer ({})", c.model.velocities.size()),
                  fmt::format("found {}: {}", a.q_layers.size(), render(*q)), "give one Q per layer, top to bottom");
      t->check(std::all_of(a.q_layers.begin(), a.q_layers.end(), [](double v) { return v >= 1 && v <= q_max; }), "q",
               fmt::format("every entry must be >= 1 and <= {:g} (Q is kept in single precision)", q_max),
               "give quality factors >= 1 (water: e.g. 10000.0; 1e6 is as good as lossless)");
    } else {
      a.q = t->p.num(*q, t->key("q"), ex);
      t->check(*a.q >= 1, "q", "must be >= 1", "give a quality factor >= 1, e.g. 100.0");
      t->check(*a.q <= q_max, "q", fmt::format("must be <= {:g} (Q is kept in single precision)", q_max),
               "give a finite quality factor: 1e6 is as good as lossless, or remove [attenuation]");
    }
  }
  if (t->find("q_dataset")) {
    a.q_dataset = t->str("q_dataset", "q_dataset = \"/q\"", "");
    t->check(!a.q_dataset.empty(), "q_dataset", "must not be empty", "name the HDF5 dataset of Q, e.g. \"/q\"");
    t->check(hdf5_file, "q_dataset", "needs model.type = \"file\" with an HDF5 model file",
             "give q (a number, or one per layer of a layered model)");
    t->check(!t->find("q"), "q_dataset", "cannot be combined with q", "keep one of q and q_dataset");
    t->check(!c.model.index, "q_dataset", "cannot be combined with model.index",
             "give a 3-D velocity dataset with a Q dataset (4-D models are inversion iterates, velocity only)");
  }
  if (!a.q && a.q_layers.empty() && a.q_dataset.empty())
    t->p.fail(t->line(), "attenuation", "has no Q", "neither q nor q_dataset found",
              "add q = 100.0 (constant), q = [..] (one a layer) or q_dataset = \"/q\" (a dataset of the model file)");
  if (const toml::node* b = t->find("band")) {
    constexpr std::string_view ex = "band = [2.0, 40.0]";
    t->p.arr(*b, t->key("band"), "an array of 2 numbers [f_1, f_2]", ex, 2);
    const auto v = t->p.nums(*b, t->key("band"), ex);
    t->check(v[0] > 0 && v[1] > v[0], "band", "must be [f_1, f_2] with 0 < f_1 < f_2",
             "give the band (Hz) over which Q is constant, e.g. [2.0, 40.0]");
    a.band = std::array<double, 2>{v[0], v[1]};
  }
  a.mechanisms = t->integer("mechanisms", "mechanisms = 3", 3);
  t->check(a.mechanisms >= 1 && a.mechanisms <= 8, "mechanisms", "must be in 1..8",
           "use e.g. 3 standard linear solids (docs/validation.md gives the fit's error for each)");
  a.reference_frequency = t->onum("reference_frequency", "reference_frequency = 10.0");
  t->check(!a.reference_frequency || *a.reference_frequency > 0, "reference_frequency", "must be > 0",
           "give the frequency (Hz) at which the model's velocity is the phase velocity, or leave it out");
}

void read_time(const Tab& r, Case& c) {
  const Tab t = *r.sub("time", true, "a [time] table with duration = 1.0");
  t.allow({"duration", "dt", "cfl_safety"});
  c.time.duration = t.rnum("duration", "duration = 1.0");
  t.check(c.time.duration > 0, "duration", "must be > 0", "give the simulated time in seconds");
  c.time.dt = t.onum("dt", "dt = 0.001");
  t.check(!c.time.dt || *c.time.dt > 0, "dt", "must be > 0",
          "give the time step in seconds, or leave it out for the CFL default");
  c.time.cfl_safety = t.num("cfl_safety", "cfl_safety = 0.8", 0.8);
  t.check(c.time.cfl_safety > 0 && c.time.cfl_safety <= 1, "cfl_safety", "must be in (0, 1]", "use e.g. 0.8");
}

SourceSpec read_source(const Tab& s) {
  using K = WaveletSpec::Kind;
  s.allow({"position", "wavelet", "peak_frequency", "delay", "amplitude", "file", "dataset", "kind", "direction",
           "moment"});
  SourceSpec src;
  auto& w = src.wavelet;
  src.position = s.rvec3("position", "position = [10.0, 500.0, 500.0]");
  src.kind = s.choice<SourceKind>(
      "kind", {{"pressure", SourceKind::pressure}, {"force", SourceKind::force}, {"moment", SourceKind::moment}},
      SourceKind::pressure, "kind = \"pressure\"");
  s.only_for({{"direction", {"force"}}, {"moment", {"moment"}}}, "kind", to_string(src.kind));
  if (src.kind == SourceKind::moment) {
    constexpr std::string_view ex = "moment = [0.0, 0.0, 0.0, 0.0, 1.0, 0.0]";
    const auto& a = s.p.arr(s.need("moment", ex), s.key("moment"),
                            "an array of 6 numbers [m_zz, m_yy, m_xx, m_zy, m_zx, m_yx] (N m)", ex, 6);
    for (std::size_t k = 0; k < 6; ++k)
      src.moment[k] = s.p.num(*a.get(k), fmt::format("{}[{}]", s.key("moment"), k), ex);
    s.check(std::any_of(src.moment.begin(), src.moment.end(), [](double m) { return m != 0; }), "moment",
            "must not be all zero",
            "give the moment tensor's six components, e.g. a double couple in the x-z plane "
            "[0.0, 0.0, 0.0, 0.0, 1.0, 0.0]");
  }
  if (src.kind == SourceKind::force) {
    const Vec3 d = s.vec3("direction", "direction = [1.0, 0.0, 0.0]", {1, 0, 0});
    const double norm = std::hypot(d[0], d[1], d[2]);
    s.check(norm > 0 && std::isfinite(norm), "direction", "must not be zero",
            "give the force's direction (z, y, x), e.g. [1.0, 0.0, 0.0] for vertical (z down)");
    src.direction = {d[0] / norm, d[1] / norm, d[2] / norm};
  }
  w.kind = s.choice<K>("wavelet", {{"ricker", K::ricker}, {"file", K::file}}, K::ricker, "wavelet = \"ricker\"");
  const char* kind = w.kind == K::ricker ? "ricker" : "file";
  s.only_for({{"peak_frequency", {"ricker"}}, {"delay", {"ricker"}}, {"file", {"file"}}, {"dataset", {"file"}}},
             "wavelet", kind);
  if (w.kind == K::ricker) {
    w.peak_frequency = s.rnum("peak_frequency", "peak_frequency = 15.0");
    s.check(w.peak_frequency > 0, "peak_frequency", "must be > 0", "give the Ricker peak frequency in Hz");
    w.delay = s.onum("delay", "delay = 0.1");
    s.check(!w.delay || *w.delay >= 0, "delay", "must be >= 0",
            "give the delay in seconds, or leave it out for 1.5 / peak_frequency");
  } else {
    w.file = s.rinput("file", "file = \"wavelet.h5\"");
    w.dataset = s.str("dataset", "dataset = \"/wavelet\"", "/wavelet");
    s.check(!w.dataset.empty(), "dataset", "must not be empty", "name the HDF5 dataset, e.g. \"/wavelet\"");
  }
  w.amplitude = s.num("amplitude", "amplitude = 1.0", 1.0);
  return src;
}

void read_shots(const Tab& r, Case& c) {
  constexpr std::string_view ex = "[[shots]] followed by [[shots.sources]] with position and peak_frequency";
  if (!r.find("shots")) r.missing("shots", ex);
  const auto shots = r.tables("shots", ex);
  if (shots.empty()) r.p.bad(*r.find("shots"), "shots", "must contain at least one shot", fmt::format("add {}", ex));
  for (const Tab& shot : shots) {
    shot.allow({"sources", "receivers"});
    constexpr std::string_view sex = "[[shots.sources]] with position = [z, y, x] and peak_frequency = 15.0";
    if (!shot.find("sources")) shot.missing("sources", sex);
    const auto sources = shot.tables("sources", sex);
    if (sources.empty())
      shot.p.bad(*shot.find("sources"), shot.key("sources"), "must contain at least one source",
                 fmt::format("add {}", sex));
    ShotSpec spec;
    for (const Tab& s : sources) spec.sources.push_back(read_source(s));
    c.shots.push_back(std::move(spec));
  }
}

// One receiver table ([receivers] or a shot's [shots.receivers]): fixed points, lines and planes, and optionally a
// spread that moves with the shot (`streamer`), placed per shot by shot_positions.
struct ReceiverTable {
  std::vector<Vec3> fixed;
  int streamer_count = 0;  // 0: no moving spread
  double first_offset = 0, spacing = 0;
  double direction[2] = {0, 1};  // (y, x), unit length
  std::optional<double> depth;   // none: the source's depth
  std::string where;             // the table's key, for messages
  // `components`: each position records these, one receiver (trace) each, consecutive; {pressure} by default
  std::vector<ReceiverComponent> components{ReceiverComponent::pressure};
  std::string file;             // `file`: every shot's receivers from a survey's traces.h5 or SEG-Y
  io::ShotGathers acquisition;  // its geometry

  // Positions expanded to one receiver per component, and their components (empty when only pressure). A file that
  // names each trace's component (acquisition.components) gives the rows from `first_row` on their own, unexpanded.
  void expand(std::vector<Vec3>& positions, std::vector<ReceiverComponent>& out, std::size_t first_row = 0) const {
    out.clear();
    if (!acquisition.components.empty()) {
      for (std::size_t r = 0; r < positions.size(); ++r)
        out.push_back(ReceiverComponent(acquisition.components[first_row + r]));
      return;
    }
    if (components.size() == 1 && components[0] == ReceiverComponent::pressure) return;
    std::vector<Vec3> expanded;
    expanded.reserve(positions.size() * components.size());
    for (const Vec3& p : positions)
      for (ReceiverComponent k : components) expanded.push_back(p), out.push_back(k);
    positions = std::move(expanded);
  }
  // The receivers of shot `shot` whose first source is at `source`: the fixed ones, then the spread's (or the file's).
  std::vector<Vec3> shot_positions(std::size_t shot, const Vec3& source) const {
    if (!file.empty())
      return {acquisition.receivers.begin() + acquisition.first_trace[shot],
              acquisition.receivers.begin() + acquisition.first_trace[shot + 1]};
    std::vector<Vec3> out = fixed;
    for (int k = 0; k < streamer_count; ++k) {
      const double offset = first_offset + k * spacing;
      out.push_back({depth.value_or(source[0]), source[1] + offset * direction[0], source[2] + offset * direction[1]});
    }
    return out;
  }
};

ReceiverTable read_receiver_table(const Tab& rc, bool shared) {
  rc.allow({"points", "lines", "planes", "streamer", "file", "components"});
  ReceiverTable table;
  table.where = rc.path;
  if (const auto* node = rc.find("components")) {
    constexpr std::string_view cex = "components = [\"p\", \"vz\"]";
    const auto& a =
        rc.p.arr(*node, rc.key("components"),
                 "an array of \"p\", \"vz\", \"vy\", \"vx\", \"div\", \"curl_z\", \"curl_y\", \"curl_x\"", cex);
    rc.check(a.size() >= 1 && a.size() <= 8, "components", fmt::format("must hold 1 to 8 names, found {}", a.size()),
             "list what each position records, e.g. [\"p\", \"vz\", \"vy\", \"vx\"] for a four-component node");
    table.components.clear();
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string key = fmt::format("{}[{}]", rc.key("components"), i);
      const std::string name = rc.p.str(*a.get(i), key, cex);
      ReceiverComponent k = ReceiverComponent::pressure;
      bool known = false;
      for (std::uint8_t c = 0; c < 8; ++c)
        if (name == to_string(ReceiverComponent(c))) k = ReceiverComponent(c), known = true;
      if (!known)
        rc.p.bad(*a.get(i), key,
                 "must be one of \"p\", \"vz\", \"vy\", \"vx\", \"div\", \"curl_z\", \"curl_y\", \"curl_x\"",
                 suggest(name, {"p", "vz", "vy", "vx", "div", "curl_z", "curl_y", "curl_x"},
                         "name pressure \"p\", a particle-velocity component \"vz\", \"vy\" or \"vx\", or (elastic "
                         "scheme) the velocity's divergence \"div\" or a component of its curl \"curl_z\", "
                         "\"curl_y\", \"curl_x\""));
      if (std::find(table.components.begin(), table.components.end(), k) != table.components.end())
        rc.p.bad(*a.get(i), key, fmt::format("repeats \"{}\"", name), "list each component once");
      table.components.push_back(k);
    }
  }
  if (rc.find("file")) {
    if (!shared)
      rc.p.bad(*rc.find("file"), rc.key("file"), "is read in the shared [receivers] table only",
               "give the survey's geometry file there: it holds every shot's receivers");
    for (const char* other : {"points", "lines", "planes", "streamer"})
      if (rc.find(other))
        rc.p.bad(*rc.find(other), rc.key(other), "cannot be combined with file (which gives every receiver)",
                 "remove it, or remove file");
    table.file = rc.rinput("file", "file = \"survey.sgy\"");
    table.acquisition = io::read_acquisition(table.file);
    if (!table.acquisition.components.empty() && rc.find("components"))
      rc.p.bad(*rc.find("components"), rc.key("components"),
               fmt::format("cannot be combined with {}, which names each trace's component", table.file),
               "remove it: the file's components are used");
    return table;
  }
  auto& out = table.fixed;
  long long total = 0;
  const auto reserve = [&](const Tab& t, std::string_view k, long long n) {
    total += n;
    t.check(total <= kMaxReceivers, k, fmt::format("makes more than {} receivers in a shot", kMaxReceivers),
            "use fewer receivers");
  };
  if (auto n = rc.find("points")) {
    constexpr std::string_view pex = "points = [[0.0, 100.0, 100.0], [0.0, 100.0, 200.0]]";
    const auto& a = rc.p.arr(*n, rc.key("points"), "an array of [z, y, x] positions", pex);
    reserve(rc, "points", static_cast<long long>(a.size()));
    for (std::size_t i = 0; i < a.size(); ++i)
      out.push_back(rc.p.vec3(*a.get(i), fmt::format("{}[{}]", rc.key("points"), i), pex));
  }
  for (const Tab& l : rc.tables("lines", "[[receivers.lines]] with start, end and count")) {
    l.allow({"start", "end", "count"});
    const Vec3 a = l.rvec3("start", "start = [0.0, 0.0, 0.0]"), b = l.rvec3("end", "end = [0.0, 0.0, 1000.0]");
    const int n = l.rinteger("count", "count = 101");
    l.check(n >= 1, "count", "must be >= 1", "give the number of receivers on the line");
    reserve(l, "count", n);
    for (int k = 0; k < n; ++k) {
      const double f = n == 1 ? 0.0 : static_cast<double>(k) / (n - 1);
      out.push_back({a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1]), a[2] + f * (b[2] - a[2])});
    }
  }
  for (const Tab& pl : rc.tables("planes", "[[receivers.planes]] with origin, u, v and count")) {
    pl.allow({"origin", "u", "v", "count"});
    const Vec3 o = pl.rvec3("origin", "origin = [0.0, 0.0, 0.0]");
    const Vec3 u = pl.rvec3("u", "u = [0.0, 10.0, 0.0]"), v = pl.rvec3("v", "v = [0.0, 0.0, 10.0]");
    constexpr std::string_view cex = "count = [10, 20]";
    const auto& ca = pl.p.arr(pl.need("count", cex), pl.key("count"), "an array of 2 integers [nu, nv]", cex, 2);
    const int nu = pl.p.integer(*ca.get(0), pl.key("count") + "[0]", cex),
              nv = pl.p.integer(*ca.get(1), pl.key("count") + "[1]", cex);
    pl.check(nu >= 1 && nv >= 1, "count", "every entry must be >= 1", "give the number of receivers along u and v");
    reserve(pl, "count", 1LL * nu * nv);
    for (int i = 0; i < nu; ++i)
      for (int j = 0; j < nv; ++j)
        out.push_back({o[0] + i * u[0] + j * v[0], o[1] + i * u[1] + j * v[1], o[2] + i * u[2] + j * v[2]});
  }
  if (auto st = rc.sub("streamer", false, "[receivers.streamer] with count, first_offset and spacing")) {
    st->allow({"count", "first_offset", "spacing", "direction", "depth"});
    table.streamer_count = st->rinteger("count", "count = 96");
    st->check(table.streamer_count >= 1, "count", "must be >= 1", "give the number of receivers of the spread");
    reserve(*st, "count", table.streamer_count);
    table.first_offset = st->rnum("first_offset", "first_offset = 100.0");
    table.spacing = st->num("spacing", "spacing = 12.5", 0.0);
    st->check(table.streamer_count == 1 || table.spacing > 0, "spacing", "must be > 0 with count > 1",
              "give the distance between neighbouring receivers in metres (a negative first_offset puts receivers "
              "behind the source)");
    if (auto d = st->find("direction")) {
      constexpr std::string_view dex = "direction = [0.0, 1.0]";
      const auto v = st->p.nums(*d, st->key("direction"), dex);
      st->check(v.size() == 2, "direction", fmt::format("must hold 2 numbers (y, x), found {}", v.size()),
                "give the horizontal direction of the spread, e.g. [0.0, 1.0] for +x");
      const double norm = std::hypot(v[0], v[1]);
      st->check(norm > 0 && std::isfinite(norm), "direction", "must not be zero", "use e.g. [0.0, 1.0] for +x");
      table.direction[0] = v[0] / norm, table.direction[1] = v[1] / norm;
    }
    table.depth = st->onum("depth", "depth = 10.0");
  }
  if (out.empty() && table.streamer_count == 0)
    rc.p.fail(rc.line(), rc.path, "must define at least one receiver", "found none",
              "add points = [[z, y, x]], a [[receivers.lines]] / [[receivers.planes]] entry or a [receivers.streamer]");
  return table;
}

// [receivers] (shared by the shots) and each shot's [shots.receivers] (its own, replacing the shared table). A shot
// records the fixed receivers of its table, then the table's moving spread placed at its first source. Without a
// spread or a shot's own table, every shot records c.receivers (and ShotSpec::receivers stays empty).
void read_receivers(const Tab& r, Case& c) {
  constexpr std::string_view ex = "a [receivers] table with points = [[z, y, x], ...]";
  std::optional<ReceiverTable> shared;
  if (auto rc = r.sub("receivers", false, ex)) shared = read_receiver_table(*rc, true);
  const auto shots = r.tables("shots", "[[shots]]");
  std::vector<std::optional<ReceiverTable>> own(c.shots.size());
  if (shared && !shared->file.empty()) {
    // A survey's geometry: as many shots as the case, each first source where the file has it (to 1 mm).
    const io::ShotGathers& g = shared->acquisition;
    const Tab rc = *r.sub("receivers", false, ex);
    if (std::size_t(g.n_shots) != c.shots.size())
      rc.p.fail(rc.line(), rc.key("file"), fmt::format("{} holds {} shot(s)", shared->file, g.n_shots),
                fmt::format("the case has {} [[shots]]", c.shots.size()),
                "give the case one [[shots]] entry per shot of the file, in its order");
    for (std::size_t s = 0; s < c.shots.size(); ++s) {
      const Vec3& a = g.sources[s];
      const Vec3& b = c.shots[s].sources.front().position;
      if (std::abs(a[0] - b[0]) + std::abs(a[1] - b[1]) + std::abs(a[2] - b[2]) > 1e-3)
        rc.p.fail(rc.line(), rc.key("file"),
                  fmt::format("shot {}'s source in {} is at ({}, {}, {}) m", s, shared->file, a[0], a[1], a[2]),
                  fmt::format("shots[{}].sources[0] is at ({}, {}, {}) m", s, b[0], b[1], b[2]),
                  "give the shots in the file's order, at the file's source positions (z down from the grid "
                  "origin, as specwave segy import reads them)");
    }
    if (g.shared_receivers()) {  // every shot the same receivers: the shared layout, as given by points
      shared->fixed.assign(g.receivers.begin(), g.receivers.begin() + g.first_trace[1]);
      shared->file.clear();
    }
  }
  bool per_shot = shared && (shared->streamer_count > 0 || !shared->file.empty());
  for (std::size_t s = 0; s < shots.size() && s < own.size(); ++s)
    if (auto t = shots[s].sub("receivers", false, "[shots.receivers] with points, lines, planes or a streamer")) {
      own[s] = read_receiver_table(*t, false);
      per_shot = true;
    }
  for (std::size_t s = 0; s < own.size(); ++s)
    if (!own[s] && !shared) {
      if (s == 0 && std::none_of(own.begin(), own.end(), [](const auto& t) { return t.has_value(); }))
        r.missing("receivers", ex);
      shots[s].p.fail(shots[s].line(), shots[s].path, "has no receivers",
                      "no [shots.receivers] table and no shared [receivers] table",
                      "add a [receivers] table for the shots without their own, or a [shots.receivers] table here");
    }
  if (shared) {
    c.receivers = shared->fixed;
    shared->expand(c.receivers, c.receiver_components);
  }
  if (!per_shot) return;
  for (std::size_t s = 0; s < c.shots.size(); ++s) {
    const ReceiverTable& t = own[s] ? *own[s] : *shared;
    c.shots[s].receivers = t.shot_positions(s, c.shots[s].sources.front().position);
    t.expand(c.shots[s].receivers, c.shots[s].receiver_components,
             t.file.empty() ? 0 : std::size_t(t.acquisition.first_trace[s]));
  }
}

void read_options(const Tab& r, Case& c) {
  const bool elastic = c.model.has_shear_velocity();
  const bool needs_staggered = c.model.has_density_model() || c.attenuation.present;
  c.scheme.formulation = elastic           ? Formulation::elastic
                         : needs_staggered ? Formulation::staggered
                                           : Formulation::second_order;
  if (auto s = r.sub("scheme", false, "[scheme]")) {
    s->allow({"method", "order", "min_points_per_wavelength", "formulation"});
    c.scheme.method = s->choice<Method>("method", {{"fdtd", Method::fdtd}, {"spectral", Method::spectral}},
                                        Method::fdtd, "method = \"fdtd\"");
    // FDTD's formulation: the staggered scheme by default with a density model (docs/numerics.md, "Variable density").
    // (The spectral method takes a density in its own first-order form: docs/numerics.md.)
    const Formulation automatic = c.scheme.method != Method::fdtd ? Formulation::second_order
                                  : elastic                       ? Formulation::elastic
                                  : needs_staggered               ? Formulation::staggered
                                                                  : Formulation::second_order;
    c.scheme.formulation = s->choice<Formulation>("formulation",
                                                  {{"second_order", Formulation::second_order},
                                                   {"staggered", Formulation::staggered},
                                                   {"elastic", Formulation::elastic}},
                                                  automatic, "formulation = \"staggered\"");
    if (s->find("formulation")) {
      s->check(c.scheme.formulation == Formulation::elastic || !elastic, "formulation",
               "only \"elastic\" uses the model's shear velocity",
               "use formulation = \"elastic\" (the default with "
               "a shear velocity), or remove model.shear_velocity / shear_velocities / shear_dataset / shear_file");
      s->check(
          c.scheme.formulation != Formulation::elastic || elastic, "formulation",
          "\"elastic\" needs a shear velocity, and [model] gives none",
          "give model.shear_velocity (constant; 0 is a fluid), shear_velocities (layered), shear_dataset (HDF5) or "
          "shear_file (raw, SEG-Y)");
      s->check(c.scheme.method == Method::fdtd, "formulation", "applies to method = \"fdtd\" only",
               "remove formulation (the spectral method has one formulation)");
      s->check(c.scheme.formulation != Formulation::second_order || !c.model.has_density_model(), "formulation",
               "\"second_order\" is the constant-density scheme, and [model] gives a density model",
               "use formulation = \"staggered\" (the default with a density model), or remove the model's densities");
      s->check(c.scheme.formulation != Formulation::second_order || !c.attenuation.present, "formulation",
               "\"second_order\" is lossless, and the case has an [attenuation] table",
               "use formulation = \"staggered\" (the default with [attenuation]), or remove [attenuation]");
    }
    c.scheme.order = s->integer("order", "order = 8", 8);
    s->check(c.scheme.order >= 2 && c.scheme.order <= 16 && c.scheme.order % 2 == 0, "order",
             "must be even and in 2..16", "use e.g. order = 8");
    c.scheme.min_points_per_wavelength = s->onum("min_points_per_wavelength", "min_points_per_wavelength = 4.0");
    s->check(!c.scheme.min_points_per_wavelength || *c.scheme.min_points_per_wavelength > 0,
             "min_points_per_wavelength", "must be > 0", "use e.g. 4.0, or leave it out for the scheme's default");
  }
  if (auto b = r.sub("boundary", false, "[boundary]")) {
    auto& bd = c.boundary;
    b->allow({"pml_width", "free_surface", "pml_power", "pml_reflection", "pml_frequency", "pml_multiaxial",
              "spectral_absorber"});
    bd.pml_width = b->integer("pml_width", "pml_width = 20", 20);
    b->check(bd.pml_width >= 0, "pml_width", "must be >= 0", "give the absorbing layer width in grid points");
    bd.free_surface = b->boolean("free_surface", "free_surface = false", false);
    bd.pml_power = b->onum("pml_power", "pml_power = 2.0");
    b->check(!bd.pml_power || *bd.pml_power > 0, "pml_power", "must be > 0",
             "use e.g. 2.0, or leave it out for the method's default");
    bd.pml_reflection = b->onum("pml_reflection", "pml_reflection = 1e-3");
    b->check(!bd.pml_reflection || (*bd.pml_reflection > 0 && *bd.pml_reflection < 1), "pml_reflection",
             "must be in (0, 1)", "use e.g. 1e-3, or leave it out for the method's default");
    bd.pml_frequency = b->onum("pml_frequency", "pml_frequency = 15.0");
    b->check(!bd.pml_frequency || *bd.pml_frequency > 0, "pml_frequency", "must be > 0",
             "give a frequency in Hz, or leave it out for the largest Ricker peak frequency");
    bd.pml_multiaxial = b->onum("pml_multiaxial", "pml_multiaxial = 0.03");
    b->check(!bd.pml_multiaxial || (*bd.pml_multiaxial >= 0 && *bd.pml_multiaxial <= max_pml_multiaxial),
             "pml_multiaxial", fmt::format("must be in [0, {}]", max_pml_multiaxial),
             fmt::format("use e.g. {} (the default; 0 turns the M-PML off, and the elastic CPML may then grow at late "
                         "times: docs/validation.md, \"Late growth\")",
                         default_pml_multiaxial));
    b->check(!bd.pml_multiaxial || c.scheme.formulation == Formulation::elastic, "pml_multiaxial",
             "applies to scheme.formulation = \"elastic\" only (the acoustic schemes' CPML needs none)",
             "remove the key");
    bd.spectral_absorber = b->choice<SpectralAbsorber>(
        "spectral_absorber", {{"pml", SpectralAbsorber::pml}, {"damping", SpectralAbsorber::damping}},
        SpectralAbsorber::pml, "spectral_absorber = \"pml\"");
    b->check(bd.spectral_absorber == SpectralAbsorber::pml || c.scheme.method == Method::spectral, "spectral_absorber",
             "applies to scheme.method = \"spectral\" only (FDTD always uses its CPML)", "remove the key");
  }
  if (auto u = r.sub("run", false, "[run]")) {
    auto& rs = c.run;
    u->allow({"precision", "backend", "threads", "check_every", "progress_seconds", "max_amplitude",
              "late_growth_factor", "device", "device_memory_fraction", "process_grid", "shot_groups", "share_devices",
              "flush_denormals", "checkpoint_every", "checkpoint_minutes"});
    rs.precision = u->choice<Precision>("precision", {{"fp32", Precision::fp32}, {"fp64", Precision::fp64}},
                                        Precision::fp32, "precision = \"fp32\"");
    rs.backend = u->choice<BackendKind>(
        "backend", {{"cpu", BackendKind::cpu}, {"cuda", BackendKind::cuda}, {"auto", BackendKind::auto_select}},
        BackendKind::cpu, "backend = \"cpu\"");
    rs.threads = u->integer("threads", "threads = 0", 0);
    u->check(rs.threads >= 0 && rs.threads <= max_threads, "threads", fmt::format("must be in [0, {}]", max_threads),
             "use 0 for the OpenMP default (one thread per logical CPU)");
    rs.check_every = u->integer("check_every", "check_every = 50", 50);
    u->check(rs.check_every >= 1, "check_every", "must be >= 1", "use e.g. 50");
    rs.checkpoint_every = u->integer("checkpoint_every", "checkpoint_every = 1000", 0);
    u->check(rs.checkpoint_every >= 0, "checkpoint_every", "must be >= 0",
             "give steps between checkpoints, or 0 for none");
    rs.checkpoint_minutes = u->num("checkpoint_minutes", "checkpoint_minutes = 30", 0.0);
    u->check(rs.checkpoint_minutes >= 0, "checkpoint_minutes", "must be >= 0",
             "give minutes between checkpoints, or 0 for none");
    rs.progress_seconds = u->num("progress_seconds", "progress_seconds = 5.0", 5.0);
    u->check(rs.progress_seconds > 0, "progress_seconds", "must be > 0", "use e.g. 5.0");
    rs.max_amplitude = u->num("max_amplitude", "max_amplitude = 1e20", 1e20);
    u->check(rs.max_amplitude > 0, "max_amplitude", "must be > 0", "use e.g. 1e20");
    rs.late_growth_factor = u->num("late_growth_factor", "late_growth_factor = 1000.0", rs.late_growth_factor);
    u->check(rs.late_growth_factor == 0 || (rs.late_growth_factor >= 10 && rs.late_growth_factor <= 1e15),
             "late_growth_factor", "must be 0 (off) or in [10, 1e15]",
             "give how many times its earlier largest value a field may grow once its sources are silent, e.g. 1000");
    rs.device = u->integer("device", "device = 0", 0);
    u->check(rs.device >= 0, "device", "must be >= 0", "use the CUDA device index, e.g. 0");
    rs.device_memory_fraction = u->num("device_memory_fraction", "device_memory_fraction = 0.7", 0.7);
    u->check(rs.device_memory_fraction > 0 && rs.device_memory_fraction <= 1, "device_memory_fraction",
             "must be in (0, 1]", "use e.g. 0.7");
    constexpr std::string_view grid_ex = "process_grid = [2, 1, 1]";
    if (const auto* node = u->find("process_grid")) {
      const auto& pa = u->p.arr(*node, u->key("process_grid"), "an array of 3 integers [pz, py, px]", grid_ex, 3);
      std::array<int, 3> pg{};
      for (std::size_t k = 0; k < 3; ++k)
        pg[k] = u->p.integer(*pa.get(k), fmt::format("{}[{}]", u->key("process_grid"), k), grid_ex);
      u->check(pg[0] >= 1 && pg[1] >= 1 && pg[2] >= 1, "process_grid", "must hold positive counts",
               "give ranks along z, y, x, e.g. [2, 1, 1], or remove it to let specwave choose");
      rs.process_grid = pg;
    }
    rs.share_devices = u->boolean("share_devices", "share_devices = false", false);
    rs.flush_denormals = u->boolean("flush_denormals", "flush_denormals = true", true);
    rs.shot_groups = u->integer("shot_groups", "shot_groups = 2", 0);
    u->check(rs.shot_groups >= 0, "shot_groups", "must be >= 0",
             "use 0 to let specwave choose, or the number of rank groups that run shots side by side");
  }
  auto& o = c.output;
  if (auto t = r.sub("output", false, "[output]")) {
    t->allow({"directory", "traces", "snapshot_every", "final_field", "plots", "plot_shots", "trace_dt"});
    o.directory = t->str("directory", "directory = \"out\"", o.directory);
    t->check(!o.directory.empty(), "directory", "must not be empty", "use e.g. directory = \"out\"");
    o.traces = t->boolean("traces", "traces = true", true);
    o.snapshot_every = t->integer("snapshot_every", "snapshot_every = 100", 0);
    t->check(o.snapshot_every >= 0, "snapshot_every", "must be >= 0", "use 0 for no snapshots");
    o.final_field = t->boolean("final_field", "final_field = true", true);
    o.plots = t->boolean("plots", "plots = true", true);
    o.trace_dt = t->onum("trace_dt", "trace_dt = 0.004");
    t->check(!o.trace_dt || (*o.trace_dt > 0 && *o.trace_dt <= c.time.duration), "trace_dt",
             fmt::format("must be in (0, time.duration = {}] s", c.time.duration),
             "give the sample interval of traces.h5 in s, e.g. 0.004, or remove it for the simulation's dt");
    constexpr std::string_view shots_ex = "plot_shots = [0, 10, 20]";
    if (const auto* node = t->find("plot_shots")) {
      const auto& a = t->p.arr(*node, t->key("plot_shots"), "an array of shot numbers", shots_ex);
      const int n_shots = int(c.shots.size());
      for (std::size_t k = 0; k < a.size(); ++k) {
        const std::string key = fmt::format("{}[{}]", t->key("plot_shots"), k);
        const long long shot = t->p.integer(*a.get(k), key, shots_ex);
        if (shot < 0 || shot >= n_shots)
          t->p.bad(*a.get(k), key, fmt::format("is not a shot of this case (shots are numbered 0 to {})", n_shots - 1),
                   fmt::format("give shot numbers from 0 to {}", n_shots - 1));
        o.plot_shots.push_back(int(shot));
      }
      std::sort(o.plot_shots.begin(), o.plot_shots.end());
    }
  }
  o.directory = r.p.resolve(o.directory);
}

void read_regression(const Tab& r, Case& c) {
  const auto t = r.sub("validation", false, "[validation]");
  if (!t) return;
  auto& v = c.regression;
  v.present = true;
  t->allow({"tier", "reference", "rel_l2", "max_error", "min_correlation", "max_time_shift", "eigen_reference"});
  v.tier = t->str("tier", "tier = \"smoke\"", "full");
  t->check(v.tier == "smoke" || v.tier == "full", "tier", "must be \"smoke\" or \"full\"",
           "use tier = \"smoke\" for CI cases");
  const std::string stem = c.source_path.empty() ? c.name : std::filesystem::path(c.source_path).stem().string();
  v.reference = t->p.resolve(t->str("reference", "reference = \"small.reference.h5\"", stem + ".reference.h5"));
  v.rel_l2 = t->num("rel_l2", "rel_l2 = 1e-5", 1e-5);
  t->check(v.rel_l2 > 0, "rel_l2", "must be > 0", "use e.g. 1e-5");
  v.max_error = t->num("max_error", "max_error = 1e-5", 1e-5);
  t->check(v.max_error > 0, "max_error", "must be > 0", "use e.g. 1e-5");
  v.min_correlation = t->num("min_correlation", "min_correlation = 0.999", 0.999);
  t->check(v.min_correlation > 0 && v.min_correlation <= 1, "min_correlation", "must be in (0, 1]", "use e.g. 0.999");
  v.max_time_shift = t->integer("max_time_shift", "max_time_shift = 0", 0);
  t->check(v.max_time_shift >= 0, "max_time_shift", "must be >= 0", "give samples, e.g. 0");
  v.eigen_reference = t->boolean("eigen_reference", "eigen_reference = true", false);
}

void read_inversion(const Tab& r, Case& c) {
  const auto t = r.sub("inversion", false, "[inversion]");
  if (!t) return;
  auto& inv = c.inversion;
  inv.present = true;
  t->allow({"true_model",
            "observed",
            "observed_dataset",
            "observed_geometry",
            "parameterisation",
            "parameters",
            "misfit",
            "velocity_min",
            "velocity_max",
            "density_min",
            "density_max",
            "shear_velocity_min",
            "shear_velocity_max",
            "lambda_min",
            "lambda_max",
            "mu_min",
            "mu_max",
            "wavefield_storage",
            "wavefield_memory_gib",
            "scratch_directory",
            "iterations",
            "optimizer",
            "lbfgs_memory",
            "initial_step_fraction",
            "smoothing_m",
            "source_mask_m",
            "illumination_compensation",
            "illumination_epsilon",
            "bands_hz",
            "mute_velocity",
            "mute_time",
            "mute_taper",
            "offset_min",
            "offset_max",
            "trace_weights",
            "trace_weights_dataset",
            "regularisation",
            "regularisation_weight",
            "source_estimation",
            "source_estimation_damping"});
  if (auto m = t->sub("true_model", false, "[inversion.true_model] with type = \"gaussian\", ...")) {
    inv.true_model = read_model_spec(*m);
    m->check(!inv.true_model->has_shear_velocity() || c.model.has_shear_velocity(), inv.true_model->shear_key(),
             "a true shear velocity needs the elastic scheme (a shear velocity in [model]), which the model lacks",
             "give [model] a starting shear velocity, or remove the true model's");
    // The elastic scheme synthesises the data with the true model's vp, vs and density: each must be given (the
    // density as in [model]: constant or a model).
    m->check(!c.model.has_shear_velocity() || inv.true_model->has_shear_velocity(), "type",
             "is the true model of an elastic case ([model] has a shear velocity), but gives none",
             "add shear_velocity (or shear_velocities, shear_dataset, shear_file) to [inversion.true_model], e.g. "
             "[model]'s");
    m->check(!c.model.has_shear_velocity() || inv.true_model->density || inv.true_model->has_density_model(), "type",
             "is the true model of an elastic case, but gives no density",
             "add density (or densities, density_dataset, density_file) to [inversion.true_model], e.g. [model]'s");
    m->check(!inv.true_model->has_density_model() || c.model.has_density_model() || c.model.has_shear_velocity(),
             inv.true_model->density_model_key(),
             "a true density model needs a density model in [model] (the staggered scheme), which has none",
             "give [model] a starting density model (densities, density_dataset or density_file), or remove the true "
             "model's "
             "density (a constant density changes no pressure)");
  }
  if (t->find("observed")) inv.observed_file = t->rinput("observed", "observed = \"observed/traces.h5\"");
  if (inv.true_model && !inv.observed_file.empty())
    t->p.bad(*t->find("observed"), t->key("observed"), "cannot be combined with [inversion.true_model]",
             "keep one source of observed data: the traces file or the true model that synthesises them");
  if (!inv.true_model && inv.observed_file.empty())
    t->p.fail(t->line(), "inversion", "has no observed data", "neither observed nor true_model found",
              "add observed = \"traces.h5\" (a specwave traces file of this acquisition) or an [inversion.true_model] "
              "table (the same keys as [model])");
  inv.observed_dataset = t->str("observed_dataset", "observed_dataset = \"/traces\"", "/traces");
  inv.observed_geometry_checked = t->choice<bool>("observed_geometry", {{"checked", true}, {"ignored", false}}, true,
                                                  "observed_geometry = \"ignored\"");
  t->check(!inv.observed_dataset.empty(), "observed_dataset", "must not be empty",
           "name the HDF5 dataset, e.g. \"/traces\"");
  t->check(!t->find("observed_dataset") || !inv.observed_file.empty(), "observed_dataset", "is used with observed only",
           "remove it, or set observed = \"traces.h5\"");
  inv.parameterisation = t->choice<Parameterisation>(
      "parameterisation", {{"velocity", Parameterisation::velocity}, {"slowness2", Parameterisation::slowness2}},
      Parameterisation::velocity, "parameterisation = \"velocity\"");
  if (const auto* node = t->find("parameters")) {
    constexpr std::string_view pex = "parameters = [\"velocity\", \"density\"]";
    const auto& a = t->p.arr(*node, t->key("parameters"),
                             "an array of \"velocity\", \"density\" and \"shear_velocity\" (or \"lambda\", \"mu\" "
                             "and \"density\")",
                             pex);
    bool velocity = false, lambda = false, mu = false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const std::string key = fmt::format("{}[{}]", t->key("parameters"), i);
      const std::string name = t->p.str(*a.get(i), key, pex);
      if (name != "velocity" && name != "density" && name != "shear_velocity" && name != "lambda" && name != "mu")
        t->p.bad(*a.get(i), key, "must be \"velocity\", \"density\", \"shear_velocity\", \"lambda\" or \"mu\"",
                 io::suggest(name, {"velocity", "density", "shear_velocity", "lambda", "mu"},
                             "list the parameters the gradient is taken with respect to, e.g. [\"velocity\", "
                             "\"density\"] or [\"lambda\", \"mu\", \"density\"]"));
      for (std::size_t j = 0; j < i; ++j)
        if (t->p.str(*a.get(j), key, pex) == name)
          t->p.bad(*a.get(i), key, fmt::format("repeats \"{}\"", name), "list each parameter once");
      (name == "velocity"  ? velocity
       : name == "density" ? inv.density_parameter
       : name == "lambda"  ? lambda
       : name == "mu"      ? mu
                           : inv.shear_parameter) = true;
    }
    inv.lame = lambda || mu;
    t->check(!inv.lame || (!velocity && !inv.shear_parameter), "parameters",
             "mixes the velocities (\"velocity\", \"shear_velocity\") with the Lame parameters (\"lambda\", \"mu\")",
             "choose one set: [\"velocity\", \"shear_velocity\", \"density\"] or [\"lambda\", \"mu\", \"density\"]");
    t->check(!inv.lame || c.model.has_shear_velocity(), "parameters",
             "names the Lame parameters, but the model has no shear velocity (they are the elastic scheme's)",
             "give model.shear_velocity, shear_velocities, shear_dataset or shear_file, or invert [\"velocity\"]");
    t->check(!inv.lame || (lambda && mu), "parameters",
             fmt::format("names \"{}\" without \"{}\" (the Lame parameters are inverted together)",
                         lambda ? "lambda" : "mu", lambda ? "mu" : "lambda"),
             "write parameters = [\"lambda\", \"mu\"] or [\"lambda\", \"mu\", \"density\"]");
    t->check(!inv.shear_parameter || c.model.has_shear_velocity(), "parameters",
             "names \"shear_velocity\", but the model has no shear velocity (the elastic scheme)",
             "give model.shear_velocity, shear_velocities, shear_dataset or shear_file, or remove \"shear_velocity\"");
    t->check(velocity || inv.lame, "parameters",
             inv.shear_parameter
                 ? "must include \"velocity\" (the shear velocity alone is not inverted in this version)"
                 : "must include \"velocity\" (the density alone is not inverted in this version)",
             inv.shear_parameter ? "write parameters = [\"velocity\", \"shear_velocity\"] (and \"density\" if it too "
                                   "is inverted)"
                                 : "write parameters = [\"velocity\"] or [\"velocity\", \"density\"]");
    t->check(
        !inv.density_parameter || c.model.has_density_model() || c.model.has_shear_velocity(), "parameters",
        "names \"density\", but the model has no density model",
        "give model.densities (layered), model.density_dataset (HDF5) or model.density_file (raw, SEG-Y), or remove "
        "\"density\"");
    t->check(!inv.lame || inv.parameterisation == Parameterisation::velocity, "parameterisation",
             "must be \"velocity\" with the Lame parameters (inversion.parameters names \"lambda\")",
             "remove parameterisation, or invert the velocities");
  }
  inv.misfit = t->choice<std::string>("misfit",
                                      {{"least_squares", std::string("least_squares")},
                                       {"trace_normalised", std::string("trace_normalised")},
                                       {"global_correlation", std::string("global_correlation")}},
                                      std::string("least_squares"), "misfit = \"least_squares\"");
  // A pair of bounds `<what>_min`, `<what>_max` (> 0, min < max), either optional.
  const auto bounds = [&](const std::string& what, const char* units, double lo, double hi) {
    const std::string min = what + "_min", max = what + "_max";
    std::pair<std::optional<double>, std::optional<double>> b{t->onum(min, fmt::format("{} = {:.1f}", min, lo)),
                                                              t->onum(max, fmt::format("{} = {:.1f}", max, hi))};
    t->check(!b.first || *b.first > 0, min, "must be > 0", fmt::format("give the smallest {} in {}", what, units));
    t->check(!b.second || *b.second > 0, max, "must be > 0", fmt::format("give the largest {} in {}", what, units));
    t->check(!b.first || !b.second || *b.first < *b.second, max,
             fmt::format("must be above {} ({})", min, b.first.value_or(0)), "swap or correct the bounds");
    return b;
  };
  std::tie(inv.velocity_min, inv.velocity_max) = bounds("velocity", "m/s", 1400.0, 4500.0);
  t->check(!t->find("velocity_min") || !inv.lame, "velocity_min",
           "bounds vp, which an inversion of the Lame parameters does not invert (it is held in lambda_min/max and "
           "mu_min/max; velocity_max still sets dt)",
           "remove velocity_min, and bound lambda and mu");
  std::tie(inv.density_min, inv.density_max) = bounds("density", "kg/m^3", 1000.0, 3000.0);
  for (const char* key : {"density_min", "density_max"})
    t->check(!t->find(key) || inv.density_parameter, key, "bounds the density, which is not inverted",
             "add \"density\" to inversion.parameters, or remove the key");
  std::tie(inv.shear_velocity_min, inv.shear_velocity_max) = bounds("shear_velocity", "m/s", 500.0, 2500.0);
  for (const char* key : {"shear_velocity_min", "shear_velocity_max"})
    t->check(!t->find(key) || inv.shear_parameter, key, "bounds the shear velocity, which is not inverted",
             "add \"shear_velocity\" to inversion.parameters, or remove the key");
  std::tie(inv.lambda_min, inv.lambda_max) = bounds("lambda", "Pa", 2.0e9, 2.0e10);
  for (const char* key : {"lambda_min", "lambda_max"})
    t->check(!t->find(key) || inv.lame, key, "bounds lambda, which is not inverted",
             "add \"lambda\" to inversion.parameters, or remove the key");
  std::tie(inv.mu_min, inv.mu_max) = bounds("mu", "Pa", 5.0e8, 1.5e10);
  for (const char* key : {"mu_min", "mu_max"})
    t->check(!t->find(key) || inv.lame, key, "bounds mu, which is not inverted",
             "add \"mu\" to inversion.parameters, or remove the key");
  inv.wavefield_storage = t->choice<WavefieldStorage>("wavefield_storage",
                                                      {{"auto", WavefieldStorage::auto_select},
                                                       {"memory", WavefieldStorage::memory},
                                                       {"checkpoints", WavefieldStorage::checkpoints},
                                                       {"binomial", WavefieldStorage::binomial},
                                                       {"disk", WavefieldStorage::disk},
                                                       {"boundary", WavefieldStorage::boundary}},
                                                      WavefieldStorage::auto_select, "wavefield_storage = \"auto\"");
  t->check(
      inv.wavefield_storage != WavefieldStorage::boundary || c.scheme.method == Method::fdtd, "wavefield_storage",
      "\"boundary\" needs a scheme that can run backwards; scheme.method = \"spectral\" cannot (its k-space operator "
      "is global)",
      "use \"memory\", \"checkpoints\" or \"auto\", or scheme.method = \"fdtd\"");
  inv.wavefield_memory_gib = t->onum("wavefield_memory_gib", "wavefield_memory_gib = 8.0");
  t->check(!inv.wavefield_memory_gib || *inv.wavefield_memory_gib > 0, "wavefield_memory_gib", "must be > 0",
           "give the memory for the forward wavefields in GiB, or leave it out for half of the available memory");
  if (t->find("scratch_directory"))
    inv.scratch_directory = t->rpath("scratch_directory", "scratch_directory = \"/scratch/me\"");
  inv.iterations = int(t->integer("iterations", "iterations = 20", inv.iterations));
  t->check(inv.iterations >= 1 && inv.iterations <= 100000, "iterations", "must be in [1, 100000]",
           "give the number of optimiser iterations, e.g. 20");
  inv.optimizer = t->choice<std::string>(
      "optimizer",
      {{"lbfgs", std::string("lbfgs")}, {"nlcg", std::string("nlcg")}, {"steepest", std::string("steepest")}},
      inv.optimizer, "optimizer = \"lbfgs\"");
  inv.lbfgs_memory = int(t->integer("lbfgs_memory", "lbfgs_memory = 5", inv.lbfgs_memory));
  t->check(inv.lbfgs_memory >= 1 && inv.lbfgs_memory <= 100, "lbfgs_memory", "must be in [1, 100]",
           "keep 3 to 20 curvature pairs, e.g. 5");
  t->check(!t->find("lbfgs_memory") || inv.optimizer == "lbfgs", "lbfgs_memory",
           "is used with optimizer = \"lbfgs\" only", "remove it, or set optimizer = \"lbfgs\"");
  inv.initial_step_fraction =
      t->num("initial_step_fraction", "initial_step_fraction = 0.01", inv.initial_step_fraction);
  t->check(inv.initial_step_fraction > 0 && inv.initial_step_fraction <= 0.5, "initial_step_fraction",
           "must be in (0, 0.5]", "give the first model update as a fraction of the model norm, e.g. 0.01 (1%)");
  inv.smoothing_m = t->num("smoothing_m", "smoothing_m = 20.0", 0.0);
  t->check(inv.smoothing_m >= 0 && inv.smoothing_m <= 1e5, "smoothing_m", "must be in [0, 1e5]",
           "give the standard deviation of the Gaussian gradient smoothing in metres (0: none), e.g. one grid spacing");
  // The smoother pads each active axis by 3 sigma (its FFT's box): a box more than 27 times the grid (3 times along
  // each axis of a cube) outgrows the memory the run was planned with, and such a sigma smooths the gradient to about
  // its mean anyway.
  const std::array<long long, 3> padded = smoothing_box(c.grid, inv.smoothing_m);
  const double box = double(padded[0]) * double(padded[1]) * double(padded[2]) / double(c.grid.points());
  if (box > 27)
    t->check(false, "smoothing_m",
             fmt::format("pads the grid by 3 sigma on each side to a box of ({}, {}, {}) points, {:.3g} times the "
                         "grid (at most 27)",
                         padded[0], padded[1], padded[2], box),
             "give a smoothing of a few wavelengths at most, well inside the grid");
  inv.source_mask_m = t->num("source_mask_m", "source_mask_m = 30.0", 0.0);
  t->check(inv.source_mask_m >= 0 && inv.source_mask_m <= 1e5, "source_mask_m", "must be in [0, 1e5]",
           "give the radius in metres around each source where the gradient is tapered to 0 (0: none)");
  inv.illumination_compensation = t->boolean("illumination_compensation", "illumination_compensation = true", false);
  inv.illumination_epsilon = t->num("illumination_epsilon", "illumination_epsilon = 0.01", inv.illumination_epsilon);
  t->check(
      inv.illumination_epsilon > 0 && inv.illumination_epsilon <= 1, "illumination_epsilon", "must be in (0, 1]",
      "give the water level of the illumination compensation as a fraction of the largest illumination, e.g. 0.01");
  inv.mute_velocity = t->onum("mute_velocity", "mute_velocity = 1500.0");
  t->check(!inv.mute_velocity || (*inv.mute_velocity > 0 && std::isfinite(*inv.mute_velocity)), "mute_velocity",
           "must be > 0", "give the velocity of the first arrivals in m/s (the data before them are muted)");
  inv.mute_time = t->num("mute_time", "mute_time = 0.05", 0.0);
  t->check(std::isfinite(inv.mute_time) && std::abs(inv.mute_time) <= 1e4, "mute_time", "must be in [-1e4, 1e4]",
           "give the time (s) added to distance / mute_velocity, e.g. the wavelet's delay");
  inv.mute_taper = t->num("mute_taper", "mute_taper = 0.02", inv.mute_taper);
  t->check(inv.mute_taper > 0 && inv.mute_taper <= 1e4, "mute_taper", "must be in (0, 1e4]",
           "give the length (s) of the ramp after the mute line, e.g. 0.02");
  t->check(!(t->find("mute_time") || t->find("mute_taper")) || inv.mute_velocity, "mute_velocity",
           "is needed with mute_time or mute_taper", "add mute_velocity = <first-arrival velocity in m/s>");
  inv.offset_min = t->num("offset_min", "offset_min = 100.0", 0.0);
  t->check(inv.offset_min >= 0 && std::isfinite(inv.offset_min), "offset_min", "must be >= 0",
           "give the smallest horizontal source-receiver offset (m) whose traces are fitted");
  inv.offset_max = t->onum("offset_max", "offset_max = 3000.0");
  t->check(!inv.offset_max || *inv.offset_max > inv.offset_min, "offset_max",
           fmt::format("must be above offset_min ({})", inv.offset_min),
           "give the largest horizontal source-receiver offset (m) whose traces are fitted");
  if (t->find("trace_weights")) inv.trace_weights_file = t->rinput("trace_weights", "trace_weights = \"weights.h5\"");
  inv.trace_weights_dataset = t->str("trace_weights_dataset", "trace_weights_dataset = \"/weights\"", "/weights");
  t->check(!inv.trace_weights_dataset.empty(), "trace_weights_dataset", "must not be empty",
           "name the HDF5 dataset of the weights, e.g. \"/weights\"");
  t->check(!t->find("trace_weights_dataset") || !inv.trace_weights_file.empty(), "trace_weights_dataset",
           "is used with trace_weights only", "remove it, or set trace_weights = \"weights.h5\"");
  inv.regularisation = t->choice<std::string>("regularisation",
                                              {{"none", std::string("none")},
                                               {"tikhonov", std::string("tikhonov")},
                                               {"total_variation", std::string("total_variation")}},
                                              inv.regularisation, "regularisation = \"tikhonov\"");
  inv.regularisation_weight = t->num("regularisation_weight", "regularisation_weight = 1e-6", 0.0);
  t->check(inv.regularisation_weight >= 0 && std::isfinite(inv.regularisation_weight), "regularisation_weight",
           "must be a finite number >= 0", "give the weight of the regularisation term, e.g. 1e-6 (0: none)");
  t->check(!t->find("regularisation_weight") || inv.regularisation != "none", "regularisation_weight",
           "is used with regularisation = \"tikhonov\" or \"total_variation\" only",
           "set regularisation, or remove the weight");
  t->check(!inv.lame || inv.regularisation == "none", "regularisation",
           fmt::format("\"{}\" regularises the velocity; with the Lame parameters (inversion.parameters names "
                       "\"lambda\") it is not available in this version",
                       inv.regularisation),
           "remove regularisation, or invert [\"velocity\", \"shear_velocity\"]");
  inv.source_estimation = t->choice<std::string>(
      "source_estimation",
      {{"none", std::string("none")}, {"per_shot", std::string("per_shot")}, {"shared", std::string("shared")}},
      inv.source_estimation, "source_estimation = \"per_shot\"");
  inv.source_estimation_damping = t->num("source_estimation_damping", "source_estimation_damping = 1e-3", 1e-3);
  // (At 1 the filter is at least halved at every frequency; far above, it is zero and so is the misfit.)
  t->check(inv.source_estimation_damping > 0 && inv.source_estimation_damping <= 1, "source_estimation_damping",
           "must be in (0, 1]", "give the damping relative to the largest synthetic power, e.g. 1e-3");
  t->check(!t->find("source_estimation_damping") || inv.source_estimation != "none", "source_estimation_damping",
           "is used with source_estimation = \"per_shot\" or \"shared\" only", "set source_estimation, or remove it");
  if (const auto* b = t->find("bands_hz")) {
    inv.bands_hz = t->p.nums(*b, t->key("bands_hz"), "bands_hz = [6.0, 10.0]");
    if (inv.bands_hz.empty())
      t->p.bad(*b, t->key("bands_hz"), "must not be empty",
               "give the low-pass cutoffs in Hz, e.g. [6.0, 10.0], or remove it");
    for (std::size_t k = 0; k < inv.bands_hz.size(); ++k)
      if (!(inv.bands_hz[k] > 0) || (k > 0 && !(inv.bands_hz[k] > inv.bands_hz[k - 1])))
        t->p.bad(*b, t->key("bands_hz"), "must be positive and increasing",
                 "give the low-pass cutoffs in Hz from low to high, e.g. [6.0, 10.0]");
  }
}

// What the elastic scheme (docs/numerics.md, "Isotropic elastic waves") does not run yet, refused at the key that asks
// for it; and what it needs (a density).
void check_elastic(const Tab& r, const Case& c) {
  const bool shear = c.model.has_shear_velocity();
  if (!shear && c.scheme.formulation != Formulation::elastic) return;
  const auto model = r.sub("model", true, "[model]");
  const char* shear_key = c.model.shear_key();
  if (c.scheme.method != Method::fdtd)
    r.sub("scheme", true, "[scheme]")
        ->check(false, "method",
                "is acoustic (the k-space method has no elastic form), and [model] gives a shear velocity",
                "use method = \"fdtd\" for elastic waves, or remove the model's shear velocity");
  if (c.scheme.order > 8)
    r.sub("scheme", true, "[scheme]")
        ->check(false, "order", "must be 2, 4, 6 or 8 with the elastic scheme", "use order = 8 (or lower)");
  model->check(c.model.density || c.model.has_density_model(), shear_key,
               "needs a density (the elastic moduli are rho vp^2 and rho vs^2), and [model] gives none",
               "add density = 2000.0 (constant, kg/m^3), or densities (layered) / density_dataset (HDF5) / "
               "density_file (raw, SEG-Y)");
  if (c.attenuation.present)
    r.sub("attenuation", true, "[attenuation]")
        ->check(false, "q", "attenuation is acoustic only: the elastic scheme is lossless in this version",
                "remove [attenuation], or use an acoustic model (no shear velocity)");
}

void read_migration(const Tab& r, Case& c) {
  const auto t = r.sub("migration", false, "[migration]");
  if (!t) return;
  auto& m = c.migration;
  m.present = true;
  t->allow({"data", "illumination_compensation", "illumination_epsilon", "laplacian_filter"});
  m.data =
      t->choice<std::string>("data", {{"residual", std::string("residual")}, {"observed", std::string("observed")}},
                             m.data, "data = \"residual\"");
  m.illumination_compensation =
      t->boolean("illumination_compensation", "illumination_compensation = true", m.illumination_compensation);
  m.illumination_epsilon = t->num("illumination_epsilon", "illumination_epsilon = 0.01", m.illumination_epsilon);
  t->check(
      m.illumination_epsilon > 0 && m.illumination_epsilon <= 1, "illumination_epsilon", "must be in (0, 1]",
      "give the water level of the illumination compensation as a fraction of the largest illumination, e.g. 0.01");
  m.laplacian_filter = t->boolean("laplacian_filter", "laplacian_filter = true", m.laplacian_filter);
}

}  // namespace

Case parse_case_text(const std::string& text, const std::string& path_for_messages, const std::string& base_dir) {
  toml::table root;
  try {
    root = toml::parse(std::string_view(text), std::string_view(path_for_messages));
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw Error(ExitCode::invalid_case,
                fmt::format("{}:{}:{}: invalid TOML: {} (at line {}, column {}); fix the TOML syntax there",
                            path_for_messages, b.line, b.column, e.description(), b.line, b.column));
  }
  const Parser p{path_for_messages, base_dir};
  const Tab r{p, root, ""};
  r.allow({"name", "grid", "model", "attenuation", "time", "shots", "receivers", "scheme", "boundary", "run", "output",
           "inversion", "migration", "validation"});

  Case c;
  c.source_path = path_for_messages;
  c.source_text = text;
  const std::string stem = fs::path(path_for_messages).stem().string();
  c.name = r.str("name", "name = \"my_case\"", stem.empty() ? c.name : stem);
  r.check(!c.name.empty() && c.name.find_first_of("/\\") == std::string::npos, "name",
          "must be non-empty and contain no '/' or '\\'", "use a plain name such as \"layered_2d\"");
  read_grid(r, c);
  read_model(r, c);
  read_attenuation(r, c);
  read_time(r, c);
  read_shots(r, c);
  read_receivers(r, c);
  read_options(r, c);
  read_inversion(r, c);
  read_migration(r, c);
  read_regression(r, c);
  check_elastic(r, c);
  return c;
}

Case read_case_file(const std::string& path) {
  if (const auto kind = io::not_a_regular_file(path))
    throw Error(ExitCode::input_error,
                fmt::format("{}: cannot read case file (it is {}, not a regular file); check the path", path, *kind));
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(ExitCode::input_error,
                fmt::format("{}: cannot read case file ({}); check the path", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    throw Error(ExitCode::input_error, fmt::format("{}: cannot read case file (read error); check the path", path));
  return parse_case_text(text.str(), path, fs::path(path).parent_path().string());
}

}  // namespace specwave::io
