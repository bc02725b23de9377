// Parameter sweeps: the sweep file, expansion into variant cases, their check, the sweep folder, and the command
// that ties them to the job-array script of sweep_slurm.cpp (docs/batch.md, "Parameter sweeps").
#include "solver/batch/sweep.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <toml++/toml.h>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <regex>
#include <sstream>

#include "io/case_file.hpp"
#include "io/json.hpp"
#include "io/text_file.hpp"
#include "io/toml_edit.hpp"
#include "kernels/cuda/device.hpp"
#include "solver/batch/collect.hpp"
#include "solver/case/errors.hpp"
#include "solver/inversion/inversion.hpp"
#include "solver/inversion/objective.hpp"
#include "solver/plan/plan.hpp"

namespace specwave {
namespace {

// A name as one line of the report: quoted and escaped (JSON) when it holds a control character (a newline from a
// string axis value would split the line).
std::string printable(const std::string& name) {
  const bool control = std::any_of(name.begin(), name.end(), [](char ch) { return (unsigned char)ch < 0x20; });
  return control ? io::json_quote(name) : name;
}

namespace fs = std::filesystem;
constexpr std::size_t kMaxVariants = 100000;
using io::spell, io::Spelling, io::type_name;

// ---- values -------------------------------------------------------------------------------------

SweepValue value_of(const toml::node& n) {
  return {spell(n, Spelling::toml), spell(n, Spelling::json), spell(n, Spelling::text)};
}

int line_of(const toml::node& n) { return std::max(1, int(n.source().begin.line)); }

// ---- the sweep file -----------------------------------------------------------------------------

struct SweepFileReader {
  std::string path;

  [[noreturn]] void fail(int line, std::string_view key, std::string_view what, std::string_view found,
                         std::string_view fix) const {
    throw Error(ExitCode::invalid_case, fmt::format("{}:{}: {}: {} ({}); {}", path, line, key, what, found, fix));
  }
  [[noreturn]] void bad(const toml::node& n, std::string_view key, std::string_view what, std::string_view fix) const {
    fail(line_of(n), key, what, fmt::format("found {} {}", type_name(n), spell(n, Spelling::toml)), fix);
  }
  void allow(const toml::table& t, std::string_view table, std::initializer_list<std::string_view> keys) const {
    for (auto&& [k, n] : t)
      if (std::find(keys.begin(), keys.end(), k.str()) == keys.end()) {
        std::string allowed;
        for (auto a : keys) allowed += (allowed.empty() ? "" : ", ") + std::string(a);
        fail(std::max(1, int(k.source().begin.line)),
             table.empty() ? std::string(k.str()) : fmt::format("{}.{}", table, k.str()), "unknown key",
             "allowed here: " + allowed, "remove it (docs/batch.md lists the keys)");
      }
  }
  std::string str(const toml::table& t, std::string_view table, std::string_view k, std::string def,
                  std::string_view ex) const {
    const toml::node* n = t.get(k);
    if (!n) return def;
    if (!n->is_string())
      bad(*n, fmt::format("{}.{}", table, k), "must be a string", fmt::format("write it like {}", ex));
    return n->as_string()->get();
  }
  int integer(const toml::table& t, std::string_view table, std::string_view k, int def, int min,
              std::string_view ex) const {
    const toml::node* n = t.get(k);
    if (!n) return def;
    if (!n->is_integer() || n->as_integer()->get() < min || n->as_integer()->get() > 1'000'000)
      bad(*n, fmt::format("{}.{}", table, k), fmt::format("must be an integer in {}..1000000", min),
          fmt::format("write it like {}", ex));
    return int(n->as_integer()->get());
  }

  static bool is_range(const toml::table& t) {
    return t.contains("start") || t.contains("stop") || t.contains("count") || t.contains("step");
  }

  // { start, stop, count } (inclusive linspace) or { start, stop, step }; integers when start, stop (and step) are.
  std::vector<SweepValue> range(const toml::table& t, const std::string& key) const {
    const std::string where = fmt::format("axes.\"{}\"", key);
    constexpr std::string_view ex = "{ start = 5.0, stop = 15.0, count = 3 } or { start = 4, stop = 8, step = 2 }";
    allow(t, where, {"start", "stop", "count", "step"});
    const auto number = [&](std::string_view k) -> const toml::node& {
      const toml::node* n = t.get(k);
      if (!n)
        fail(line_of(t), where, fmt::format("a range needs '{}'", k), "not found", fmt::format("write it like {}", ex));
      if (!n->is_number())
        bad(*n, fmt::format("{}.{}", where, k), "must be a number", fmt::format("write it like {}", ex));
      return *n;
    };
    // A bound or step as a double: finite, and an integer one within 2^53 (exact as a double; toml++ gives no
    // double for a larger one).
    const auto real = [&](const toml::node& n, std::string_view k) {
      const double v = n.is_integer() ? double(n.as_integer()->get()) : n.as_floating_point()->get();
      if (!std::isfinite(v) || (n.is_integer() && std::abs(v) > 0x1p53))
        bad(n, fmt::format("{}.{}", where, k),
            n.is_integer() ? "must be an integer within +-2^53 (9007199254740992)" : "must be a finite number",
            fmt::format("write it like {}", ex));
      return v;
    };
    const toml::node& start = number("start");
    const toml::node& stop = number("stop");
    if (t.contains("count") == t.contains("step"))
      fail(line_of(t), where, "a range needs exactly one of 'count' and 'step'",
           t.contains("count") ? "found both" : "found neither", fmt::format("write it like {}", ex));
    const double a = real(start, "start"), b = real(stop, "stop");
    if (!std::isfinite(b - a))
      fail(line_of(t), where, "start and stop are too far apart (stop - start overflows)",
           fmt::format("start {}, stop {}", a, b), "give bounds of a sensible size");
    bool integers = start.is_integer() && stop.is_integer();
    std::vector<double> xs;
    if (const toml::node* c = t.get("count")) {
      if (!c->is_integer() || c->as_integer()->get() < 1 || c->as_integer()->get() > long(kMaxVariants))
        bad(*c, where + ".count", fmt::format("must be an integer in 1..{}", kMaxVariants),
            "give the number of values, stop included");
      const long n = long(c->as_integer()->get());
      for (long k = 0; k < n; ++k) xs.push_back(n == 1 ? a : a + (b - a) * double(k) / double(n - 1));
    } else {
      const toml::node& s = number("step");
      const double h = real(s, "step");
      integers = integers && s.is_integer();
      if (h == 0 || (b - a) * h < 0)
        bad(s, where + ".step", "must be non-zero and go from start towards stop",
            fmt::format("use a step of the sign of stop - start ({})", b - a));
      const double steps = std::floor((b - a) / h + 1e-9);
      if (steps + 1 > double(kMaxVariants))
        bad(s, where + ".step", fmt::format("gives more than {} values", kMaxVariants), "use a larger step");
      for (long k = 0; k <= long(steps); ++k) xs.push_back(a + double(k) * h);
    }
    std::vector<SweepValue> out;
    for (std::size_t k = 0; k < xs.size(); ++k) {
      if (integers) {
        if (std::abs(xs[k] - std::round(xs[k])) > 1e-9 * std::max(1.0, std::abs(xs[k])))
          fail(line_of(t), where, "integer start and stop give a value that is not an integer",
               fmt::format("value {} would be {}", k, xs[k]),
               "write start and stop as floats (5.0), or choose a count that divides the range");
        out.push_back(value_of(toml::value<std::int64_t>(std::llround(xs[k]))));
      } else {
        // 12 significant digits: 0.1 + 2 * 0.1 gives 0.3, not 0.30000000000000004.
        out.push_back(value_of(toml::value<double>(std::stod(fmt::format("{:.12g}", xs[k])))));
      }
    }
    return out;
  }

  // Axes in file order; dotted keys (unquoted scheme.order = [...]) are nested tables in TOML and are flattened.
  void axes(const toml::table& t, const std::string& prefix, std::vector<SweepAxis>& out,
            std::vector<std::pair<toml::source_position, std::size_t>>& order) const {
    for (auto&& [k, n] : t) {
      const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
      SweepAxis axis{key, {}, std::max(1, int(k.source().begin.line))};
      if (const toml::table* sub = n.as_table()) {
        if (!is_range(*sub)) {
          axes(*sub, key, out, order);
          continue;
        }
        axis.values = range(*sub, key);
      } else if (const toml::array* a = n.as_array()) {
        if (a->empty()) bad(n, fmt::format("axes.\"{}\"", key), "must not be empty", "give at least one value");
        for (const toml::node& v : *a) {
          if (v.is_table())
            bad(v, fmt::format("axes.\"{}\"", key), "values must not be tables",
                "sweep a key inside the table instead");
          axis.values.push_back(value_of(v));
        }
      } else {
        bad(n, fmt::format("axes.\"{}\"", key), "must be an array of values or a range table",
            "write it like [8, 12] or { start = 5.0, stop = 15.0, count = 3 }");
      }
      order.emplace_back(k.source().begin, out.size());
      out.push_back(std::move(axis));
    }
  }
};

// ---- case-file key paths ------------------------------------------------------------------------

// The axis an error is about: the sweep file, the line and the key.
struct AxisContext {
  const std::string& file;
  const SweepAxis& axis;
  [[noreturn]] void fail(std::string_view what, std::string_view fix) const {
    throw Error(ExitCode::invalid_case,
                fmt::format("{}:{}: axes.\"{}\": {}; {}", file, axis.line, axis.key, what, fix));
  }
  io::KeyPathFailure failure() const {
    return [this](std::string_view what, std::string_view fix) { fail(what, fix); };
  }
};

// Case-file keys that hold paths, resolved against the case file's folder (docs/case-file.md).
const std::array<const char*, 10> kPathKeys = {"model.file",
                                               "model.density_file",
                                               "model.shear_file",
                                               "shots[*].sources[*].file",
                                               "inversion.observed",
                                               "inversion.trace_weights",
                                               "inversion.true_model.file",
                                               "inversion.true_model.density_file",
                                               "inversion.true_model.shear_file",
                                               "validation.reference"};

std::string index_id(int index, int width) { return fmt::format("{:0{}}", index, width); }

// Short axis names for variant names: the last key segment without its index, or the whole key when two axes share it.
std::vector<std::string> short_axis_names(const std::vector<SweepAxis>& axes) {
  std::vector<std::string> names;
  for (const auto& a : axes) {
    const auto dot = a.key.rfind('.');
    std::string n = dot == std::string::npos ? a.key : a.key.substr(dot + 1);
    names.push_back(n.substr(0, n.find('[')));
  }
  for (std::size_t i = 0; i < names.size(); ++i)
    if (std::count(names.begin(), names.end(), names[i]) > 1) {
      const std::string shared = names[i];
      for (std::size_t j = 0; j < names.size(); ++j)
        if (names[j] == shared) names[j] = axes[j].key;
    }
  return names;
}

std::string parameters_text(const SweepSpec& spec, const SweepVariant& v) {
  std::string s;
  for (std::size_t a = 0; a < spec.axes.size(); ++a)
    s += fmt::format("{}{} = {}", a ? ", " : "", spec.axes[a].key, v.values[a].toml);
  return s;
}

bool gpu_usable(std::string& why) {
  const auto status = cuda::query_devices();  // without the CUDA backend: not usable, and why
  why = status.reason;
  return status.usable;
}

// The first line where two texts differ, for messages.
std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ga = bool(std::getline(sa, la)), gb = bool(std::getline(sb, lb));
    if (!ga && !gb) return "no difference";
    if (!ga || !gb || la != lb) {
      const auto cut = [](std::string s) { return s.size() > 100 ? s.substr(0, 97) + "..." : s; };
      return fmt::format("line {}: '{}' here, '{}' in this sweep", line, ga ? cut(la) : "(end)",
                         gb ? cut(lb) : "(end)");
    }
  }
}

}  // namespace

// ---- reading and expanding ----------------------------------------------------------------------

SweepSpec parse_sweep_text(const std::string& text, const std::string& path) {
  toml::table root;
  try {
    root = toml::parse(std::string_view(text), std::string_view(path));
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw Error(ExitCode::invalid_case, fmt::format("{}:{}:{}: invalid TOML: {}; fix the TOML syntax there", path,
                                                    b.line, b.column, e.description()));
  }
  const SweepFileReader r{path};
  r.allow(root, "", {"sweep", "axes", "slurm"});
  const fs::path folder = fs::absolute(fs::path(path)).parent_path();
  SweepSpec s;
  s.file = path;
  s.text = text;

  const toml::table* sw = root["sweep"].as_table();
  if (!sw) {
    if (root.contains("sweep"))
      r.bad(*root.get("sweep"), "sweep", "must be a table", "write a [sweep] table with base = \"case.toml\"");
    r.fail(1, "sweep", "missing required table", "not found in the file",
           "add a [sweep] table with base = \"case.toml\"");
  }
  r.allow(*sw, "sweep", {"base", "name", "directory", "mode", "command"});
  const std::string base = r.str(*sw, "sweep", "base", "", "base = \"case.toml\"");
  if (base.empty())
    r.fail(line_of(*sw), "sweep.base", "missing required key", "not found in table 'sweep'",
           "add base = \"case.toml\" (the case to vary)");
  s.base_case = (folder / base).lexically_normal().string();
  const auto base_text = io::read_text_file(s.base_case);
  if (!base_text || fs::is_directory(s.base_case))
    throw Error(ExitCode::input_error,
                fmt::format("{}:{}: sweep.base: cannot read the base case {}; check the path (relative "
                            "to the sweep file's folder)",
                            path, line_of(*sw->get("base")), s.base_case));
  s.base_text = *base_text;
  s.name = r.str(*sw, "sweep", "name", fs::path(path).stem().string(), "name = \"frequency-order\"");
  if (s.name.empty() || s.name.find_first_of("/\\ \t\n'\"$`%") != std::string::npos)
    r.fail(sw->get("name") ? line_of(*sw->get("name")) : line_of(*sw), "sweep.name",
           "must be non-empty, without spaces, quotes, %, / or \\", fmt::format("found \"{}\"", s.name),
           "use a plain name such as name = \"frequency-order\"");
  s.directory = (folder / r.str(*sw, "sweep", "directory", s.name, "directory = \"sweeps/frequency-order\""))
                    .lexically_normal()
                    .string();
  const std::string mode = r.str(*sw, "sweep", "mode", "product", "mode = \"product\"");
  if (mode != "product" && mode != "zip")
    r.bad(*sw->get("mode"), "sweep.mode", "must be \"product\" or \"zip\"",
          "use mode = \"product\" (every combination) or \"zip\"");
  s.mode = mode == "zip" ? SweepMode::zip : SweepMode::product;
  s.command = r.str(*sw, "sweep", "command", "forward", "command = \"forward\"");
  if (s.command != "forward" && s.command != "invert")
    r.bad(*sw->get("command"), "sweep.command", "must be \"forward\" or \"invert\"",
          "use the specwave command the variants run");

  const toml::table* ax = root["axes"].as_table();
  if (!ax || ax->empty())
    r.fail(ax ? line_of(*ax) : 1, "axes", ax ? "must hold at least one axis" : "missing required table",
           "no axis found", "add [axes] with e.g. \"scheme.order\" = [4, 8]");
  std::vector<std::pair<toml::source_position, std::size_t>> order;
  std::vector<SweepAxis> axes;
  r.axes(*ax, "", axes, order);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.first.line != b.first.line ? a.first.line < b.first.line : a.first.column < b.first.column;
  });
  for (const auto& [pos, i] : order) s.axes.push_back(std::move(axes[i]));
  for (std::size_t i = 0; i < s.axes.size(); ++i) {
    const SweepAxis& a = s.axes[i];
    if (io::parse_key_path(a.key).empty())
      r.fail(a.line, fmt::format("axes.\"{}\"", a.key), "is not a case-file key path", "found " + a.key,
             "write it like \"scheme.order\" or \"shots[*].sources[0].peak_frequency\" (quoted when it has [ ])");
    if (a.key == "output" || a.key.rfind("output.directory", 0) == 0)
      r.fail(a.line, fmt::format("axes.\"{}\"", a.key), "is set by the sweep",
             "each variant writes to variants/<id>/output", "remove this axis");
    for (std::size_t j = 0; j < i; ++j)
      if (s.axes[j].key == a.key)
        r.fail(a.line, fmt::format("axes.\"{}\"", a.key), "is given twice",
               fmt::format("also on line {}", s.axes[j].line), "keep one");
  }

  if (const toml::node* sl = root.get("slurm")) {
    const toml::table* t = sl->as_table();
    if (!t) r.bad(*sl, "slurm", "must be a table", "write a [slurm] table");
    r.allow(*t, "slurm",
            {"account", "partition", "time", "ntasks", "cpus_per_task", "gpus_per_task", "max_parallel", "extra",
             "modules", "setup"});
    SlurmSettings& m = s.slurm;
    m.account = r.str(*t, "slurm", "account", "", "account = \"geo123\"");
    m.partition = r.str(*t, "slurm", "partition", "", "partition = \"gpu\"");
    m.time = r.str(*t, "slurm", "time", "", "time = \"02:00:00\"");
    static const std::regex slurm_time(R"(^([0-9]+-)?[0-9]+(:[0-9]+){0,2}$)");
    if (!m.time.empty() && !std::regex_match(m.time, slurm_time))
      r.bad(*t->get("time"), "slurm.time", "is not a Slurm time",
            "write it like \"02:00:00\", \"90\" (minutes) or \"1-12:00:00\"");
    m.ntasks = r.integer(*t, "slurm", "ntasks", 1, 1, "ntasks = 4");
    m.cpus_per_task = r.integer(*t, "slurm", "cpus_per_task", 0, 1, "cpus_per_task = 8");
    m.gpus_per_task = r.integer(*t, "slurm", "gpus_per_task", 0, 1, "gpus_per_task = 1");
    m.max_parallel = r.integer(*t, "slurm", "max_parallel", 0, 1, "max_parallel = 10");
    for (const auto* k : {"account", "partition"}) {
      const std::string& v = std::string_view(k) == "account" ? m.account : m.partition;
      if (v.find_first_of(" \t\n'\"$`\\") != std::string::npos)
        r.bad(*t->get(k), fmt::format("slurm.{}", k), "must not hold spaces, quotes or shell characters",
              "give the name Slurm knows");
    }
    if (const toml::node* e = t->get("extra")) {
      const toml::array* a = e->as_array();
      if (!a)
        r.bad(*e, "slurm.extra", "must be an array of strings",
              "write it like extra = [\"--mem=16G\", \"--constraint=a100\"]");
      for (const toml::node& line : *a) {
        if (!line.is_string() || line.as_string()->get().find('\n') != std::string::npos)
          r.bad(line, "slurm.extra", "entries must be one-line strings", "write it like extra = [\"--mem=16G\"]");
        // The script sets these itself: a second --array or --output would override the sweep's own.
        static const std::regex own(R"((^|\s)(#SBATCH\s+)?(--array|-a|--output|-o|--error|-e|--job-name|-J)(=|\s|$))");
        if (std::regex_search(line.as_string()->get(), own))
          r.bad(line, "slurm.extra", "sets what the job script sets itself (--array, --output, --error, --job-name)",
                "use slurm.max_parallel for the array's concurrency, and leave the logs and name to the sweep");
        m.extra.push_back(line.as_string()->get());
      }
    }
    // The tasks' environment: module names go into `module load` unquoted, so only the characters module names use.
    if (const toml::node* e = t->get("modules")) {
      const toml::array* a = e->as_array();
      if (!a) r.bad(*e, "slurm.modules", "must be an array of strings", "write it like modules = [\"gcc/12\"]");
      static const std::regex module_name(R"(^[A-Za-z0-9_.+@:/-]+$)");
      for (const toml::node& name : *a) {
        if (!name.is_string() || !std::regex_match(name.as_string()->get(), module_name))
          r.bad(name, "slurm.modules",
                "entries must be module names (letters, digits and _ . + @ : / -, no spaces or shell characters)",
                "write it like modules = [\"gcc/12\", \"openmpi/4.1\"]");
        m.modules.push_back(name.as_string()->get());
      }
    }
    if (const toml::node* e = t->get("setup")) {
      const std::string setup = r.str(*t, "slurm", "setup", "", "setup = \"env.sh\"");
      const fs::path p = (fs::path(setup).is_absolute() ? fs::path(setup) : folder / setup).lexically_normal();
      if (setup.empty() || !fs::is_regular_file(p))
        r.bad(*e, "slurm.setup", fmt::format("names {}, which is not a file", p.string()),
              "give a shell file that every task sources before the run (relative to the sweep file's folder)");
      if (p.string().find_first_of("'\n") != std::string::npos)
        r.bad(*e, "slurm.setup", "must not hold a quote or a newline", "rename the file or its folder");
      m.setup = p.string();
    }
  }
  if (s.mode == SweepMode::zip) {
    for (const auto& a : s.axes)
      if (a.values.size() != s.axes.front().values.size()) {
        std::string lengths;
        for (const auto& b : s.axes)
          lengths += fmt::format("{}{} has {}", lengths.empty() ? "" : ", ", b.key, b.values.size());
        r.fail(a.line, "axes", "mode = \"zip\" needs axes of the same length", lengths,
               "give every axis the same number of values, or use mode = \"product\" for every combination");
      }
  } else {
    double n = 1;
    for (const auto& a : s.axes) n *= double(a.values.size());
    if (n > double(kMaxVariants))
      r.fail(line_of(*ax), "axes", fmt::format("make more than {} variants", kMaxVariants), fmt::format("{:.0f}", n),
             "split the sweep into several sweep files");
    for (const auto& a : s.axes) {  // a repeated value would repeat variants (zip may repeat values)
      std::vector<const std::string*> sorted;
      for (const auto& v : a.values) sorted.push_back(&v.toml);
      std::sort(sorted.begin(), sorted.end(), [](const auto* x, const auto* y) { return *x < *y; });
      const auto twice = std::adjacent_find(sorted.begin(), sorted.end(), [](auto* x, auto* y) { return *x == *y; });
      if (twice != sorted.end())
        r.fail(a.line, fmt::format("axes.\"{}\"", a.key), "has a repeated value", **twice,
               "give each value once (mode = \"product\")");
    }
  }
  return s;
}

SweepSpec read_sweep_file(const std::string& path) {
  const auto text = io::read_text_file(path);
  if (!text || fs::is_directory(path))
    throw Error(ExitCode::input_error, fmt::format("{}: cannot read the sweep file; check the path", path));
  return parse_sweep_text(*text, path);
}

bool is_sweep_file(const std::string& path) {
  try {
    return toml::parse_file(path).contains("sweep");
  } catch (const toml::parse_error&) {
    return false;
  }
}

std::vector<std::vector<int>> expand_sweep(const SweepSpec& spec) {
  std::vector<std::vector<int>> out;
  const std::size_t n_axes = spec.axes.size();
  if (spec.mode == SweepMode::zip) {
    for (std::size_t k = 0; k < spec.axes.front().values.size(); ++k) out.emplace_back(n_axes, int(k));
    return out;
  }
  std::vector<int> at(n_axes, 0);
  while (true) {
    out.push_back(at);
    // Odometer: the last axis turns fastest.
    std::size_t a = n_axes;
    while (a > 0 && ++at[a - 1] == int(spec.axes[a - 1].values.size())) at[--a] = 0;
    if (a == 0) return out;
  }
}

int sweep_index_width(std::size_t n_variants) {
  return std::max<int>(4, int(fmt::format("{}", n_variants > 0 ? n_variants - 1 : 0).size()));
}

std::vector<SweepVariant> make_variants(const SweepSpec& spec) {
  toml::table base;
  try {
    base = toml::parse(std::string_view(spec.base_text), std::string_view(spec.base_case));
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw Error(ExitCode::invalid_case,
                fmt::format("{}:{}:{}: invalid TOML: {}; fix the TOML syntax there (the base case "
                            "of {})",
                            spec.base_case, b.line, b.column, e.description(), spec.file));
  }
  const fs::path base_folder = fs::path(spec.base_case).parent_path();
  const auto combos = expand_sweep(spec);
  const int width = sweep_index_width(combos.size());
  const auto short_names = short_axis_names(spec.axes);
  std::vector<SweepVariant> out;
  for (std::size_t i = 0; i < combos.size(); ++i) {
    SweepVariant v;
    v.index = int(i);
    v.id = index_id(v.index, width);
    v.name = v.id;
    toml::table t = base;
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
      const SweepAxis& axis = spec.axes[a];
      const SweepValue& value = axis.values[combos[i][a]];
      v.values.push_back(value);
      v.name += fmt::format("_{}={}", short_names[a], value.text);
      const toml::table parsed = toml::parse("v = " + value.toml);
      const AxisContext ctx{spec.file, axis};
      io::set_key(t, io::parse_key_path(axis.key), 0, *parsed.get("v"), "", ctx.failure());
    }
    for (const char* key : kPathKeys) {
      std::vector<toml::node*> nodes;
      io::find_nodes(t, io::parse_key_path(key), 0, nodes);
      for (toml::node* n : nodes)
        if (auto* s = n->as_string(); s && !s->get().empty() && fs::path(s->get()).is_relative())
          s->get() = (base_folder / s->get()).lexically_normal().string();
    }
    if (!t.contains("output") || !t.get("output")->is_table()) t.insert_or_assign("output", toml::table{});
    t.get("output")->as_table()->insert_or_assign("directory", "output");
    std::ostringstream text;
    text << fmt::format("# Variant {} of the sweep \"{}\", written by specwave sweep from\n#   {}\n", v.index,
                        spec.name, spec.base_case);
    for (std::size_t a = 0; a < spec.axes.size(); ++a)
      text << fmt::format("#   {} = {}\n", spec.axes[a].key, v.values[a].toml);
    text << "# Relative paths of the base case are absolute here; the outputs go to output/ next to this file.\n\n";
    std::string body;
    io::write_toml(body, t, "");
    v.case_text = text.str() + body;
    out.push_back(std::move(v));
  }
  return out;
}

SweepCheck check_variants(const SweepSpec& spec, const std::vector<SweepVariant>& variants) {
  SweepCheck check;
  std::string gpu_why;
  const bool gpu = gpu_usable(gpu_why);
  int on_cpu_instead = 0, decomposed = 0;
  for (const SweepVariant& v : variants) {
    const fs::path folder = fs::path(spec.directory) / "variants" / v.id;
    try {
      Case c = io::parse_case_text(v.case_text, (folder / "case.toml").string(), folder.string());
      if (c.run.backend == BackendKind::cuda) {
        check.wants_gpu = true;
        if (!gpu) c.run.backend = BackendKind::cpu, ++on_cpu_instead;
      }
      // The job's ranks decide the shot groups and process grid; this check runs on one.
      if (spec.slurm.ntasks > 1 && (c.run.process_grid || c.run.shot_groups > 0)) {
        c.run.process_grid.reset();
        c.run.shot_groups = 0;
        ++decomposed;
      }
      if (spec.command == "invert") check_invert_case(c);  // the bounds of what it inverts
      const Plan plan = make_plan(c, RankPlacement{});
      if (spec.command == "invert") check_invert_start(c, plan);                      // the starting model inside them
      if (spec.command != "forward" && c.inversion.present) check_observed(c, plan);  // the data it fits
    } catch (const Error& e) {
      // The variant's case.toml is not written yet: name it as the variant's, and when the error is about an axis'
      // key (unknown, or a value of the wrong type), point at that axis' line of the sweep file.
      std::string what = e.what();
      const std::string path = (folder / "case.toml").string();
      for (std::size_t at; (at = what.find(path)) != std::string::npos;)
        what.replace(at, path.size(), fmt::format("variant {}'s case", v.id));
      std::string where;
      for (const SweepAxis& a : spec.axes)
        if (what.find(" " + a.key + ":") != std::string::npos || what.find(a.key + " ") != std::string::npos) {
          where = fmt::format("{}:{}: axis \"{}\": ", spec.file, a.line, a.key);
          break;
        }
      throw Error(e.code(), fmt::format("{}sweep variant {} of {} ({}): {}", where, v.id, variants.size(),
                                        parameters_text(spec, v), what));
    }
  }
  if (on_cpu_instead)
    check.notes.push_back(
        fmt::format("{} variant(s) ask for run.backend = \"cuda\" and this machine has no usable GPU ({}): their "
                    "plans were checked with the cpu backend; the jobs will run on GPU nodes",
                    on_cpu_instead, gpu_why));
  if (decomposed)
    check.notes.push_back(
        fmt::format("{} variant(s) set run.process_grid or run.shot_groups: checked on one rank here, their "
                    "decomposition is checked when the job starts on its {} ranks",
                    decomposed, spec.slurm.ntasks));
  return check;
}

// ---- the sweep folder ---------------------------------------------------------------------------

std::string sweep_manifest_json(const SweepSpec& spec, const std::vector<SweepVariant>& variants) {
  std::string s = "{\n";
  s += fmt::format("  \"file_type\": \"specwave.sweep_manifest\",\n  \"name\": {},\n  \"base_case\": {},\n",
                   io::json_quote(spec.name), io::json_quote(spec.base_case));
  s += fmt::format("  \"command\": {},\n  \"mode\": \"{}\",\n  \"axes\": [\n", io::json_quote(spec.command),
                   spec.mode == SweepMode::zip ? "zip" : "product");
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    std::string values;
    for (const auto& v : spec.axes[a].values) values += (values.empty() ? "" : ", ") + v.json;
    s += fmt::format("    {{\"key\": {}, \"values\": [{}]}}{}\n", io::json_quote(spec.axes[a].key), values,
                     a + 1 < spec.axes.size() ? "," : "");
  }
  s += "  ],\n  \"variants\": [\n";
  for (std::size_t i = 0; i < variants.size(); ++i) {
    const SweepVariant& v = variants[i];
    std::string params;
    for (std::size_t a = 0; a < spec.axes.size(); ++a)
      params += fmt::format("{}{}: {}", a ? ", " : "", io::json_quote(spec.axes[a].key), v.values[a].json);
    s += fmt::format(
        "    {{\"index\": {}, \"id\": \"{}\", \"name\": {}, \"parameters\": {{{}}}, \"case\": "
        "\"variants/{}/case.toml\", "
        "\"output\": \"variants/{}/output\", \"status\": \"variants/{}/status.json\", \"log\": \"logs/{}.log\"}}{}\n",
        v.index, v.id, io::json_quote(v.name), params, v.id, v.id, v.id, v.id, i + 1 < variants.size() ? "," : "");
  }
  return s + "  ]\n}\n";
}

std::string sweep_manifest_csv(const SweepSpec& spec, const std::vector<SweepVariant>& variants) {
  std::string s = "index";
  for (const auto& a : spec.axes) s.append(",").append(io::csv_field(a.key));
  s += "\n";
  for (const auto& v : variants) {
    s += fmt::format("{}", v.index);
    for (const auto& value : v.values) s.append(",").append(io::csv_field(value.text));
    s += "\n";
  }
  return s;
}

bool write_sweep_folder(const SweepSpec& spec, const std::vector<SweepVariant>& variants) {
  const fs::path dir(spec.directory);
  const std::string manifest = sweep_manifest_json(spec, variants);
  std::error_code ec;
  if (fs::exists(dir / "manifest.json")) {
    const auto refuse = [&](const std::string& what) {
      throw Error(ExitCode::output_error,
                  fmt::format("{}: holds another sweep ({}); use a new directory (sweep.directory or "
                              "--output) or remove the old one",
                              dir.string(), what));
    };
    const std::string old = io::read_text_file((dir / "manifest.json").string()).value_or("");
    if (old != manifest) refuse("its manifest.json differs from this sweep's, " + first_difference(old, manifest));
    for (const auto& v : variants) {
      const fs::path p = dir / "variants" / v.id / "case.toml";
      const std::string text = io::read_text_file(p.string()).value_or("");
      if (text != v.case_text)
        refuse(fmt::format("variants/{}/case.toml differs from this sweep's (did the base case change?), {}", v.id,
                           first_difference(text, v.case_text)));
    }
    fs::create_directories(dir / "logs", ec);
    if (io::read_text_file((dir / "sweep.toml").string()).value_or("") != spec.text)
      io::write_text_atomically((dir / "sweep.toml").string(), spec.text);
    return false;
  }
  if (fs::exists(dir) && !(fs::is_directory(dir) && fs::is_empty(dir)))
    throw Error(ExitCode::output_error,
                fmt::format("{}: exists and is not a sweep folder (no manifest.json); use a new "
                            "directory (sweep.directory or --output) or remove it",
                            dir.string()));
  // Everything under a temporary name next to the folder, renamed when complete.
  const fs::path tmp = dir.parent_path() / fmt::format(".{}.tmp-{}", dir.filename().string(), ::getpid());
  struct Cleanup {
    fs::path path;
    bool keep = false;
    ~Cleanup() {
      std::error_code e;
      if (!keep) fs::remove_all(path, e);
    }
  } cleanup{tmp};
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp / "logs", ec);
  if (ec)
    throw Error(ExitCode::output_error,
                fmt::format("{}: cannot create the sweep folder ({}); choose a writable sweep.directory "
                            "or --output",
                            dir.string(), ec.message()));
  for (const auto& v : variants) {
    fs::create_directories(tmp / "variants" / v.id, ec);
    io::write_text_atomically((tmp / "variants" / v.id / "case.toml").string(), v.case_text);
  }
  io::write_text_atomically((tmp / "sweep.toml").string(), spec.text);
  io::write_text_atomically((tmp / "manifest.csv").string(), sweep_manifest_csv(spec, variants));
  io::write_text_atomically((tmp / "manifest.json").string(), manifest);
  if (fs::exists(dir)) fs::remove(dir, ec);  // empty
  fs::rename(tmp, dir, ec);
  if (ec)
    throw Error(ExitCode::output_error, fmt::format("{}: cannot rename {} to it ({}); check the folder", dir.string(),
                                                    tmp.string(), ec.message()));
  cleanup.keep = true;
  return true;
}

void run_sweep(const SweepOptions& o, const std::function<void(const std::string&)>& print) {
  SweepSpec spec = read_sweep_file(o.sweep_file);
  if (!o.output.empty()) spec.directory = fs::absolute(o.output).lexically_normal().string();
  if (spec.directory.size() > 1 && spec.directory.back() == '/') spec.directory.pop_back();
  const fs::path dir(spec.directory);
  const std::vector<SweepVariant> variants = make_variants(spec);
  std::string shape;
  for (const auto& a : spec.axes)
    shape += fmt::format("{}{} ({})",
                         shape.empty()                 ? ""
                         : spec.mode == SweepMode::zip ? " | "
                                                       : " x ",
                         a.key, a.values.size());
  print(fmt::format("sweep       {}: {} variant(s), {} of {}; command {}\nbase        {}\n", spec.name, variants.size(),
                    spec.mode == SweepMode::zip ? "zip" : "product", shape, spec.command, spec.base_case));
  if (o.resume && !fs::exists(dir / "manifest.json"))
    throw Error(ExitCode::usage,
                fmt::format("{}: no sweep folder to resume (no manifest.json); run specwave sweep {} without "
                            "--resume first",
                            dir.string(), o.sweep_file));
  // The sweep folder must be writable before its variants' output folders (inside it) are checked, so that a refusal
  // names the sweep's own setting.
  {
    fs::path probe = dir;
    std::error_code ec;
    while (!probe.empty() && !fs::exists(probe, ec)) probe = probe.parent_path();
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
      throw Error(ExitCode::output_error, fmt::format("{}: exists and is not a folder; choose another sweep.directory "
                                                      "or --output for the sweep folder",
                                                      dir.string()));
    if (!probe.empty() && ::access(probe.c_str(), W_OK | X_OK) != 0)
      throw Error(ExitCode::output_error,
                  fmt::format("{}: cannot write the sweep folder there ({} is not writable: {}); choose a writable "
                              "sweep.directory or --output",
                              dir.string(), probe.string(), std::strerror(errno)));
  }
  const SweepCheck check = check_variants(spec, variants);
  for (const auto& n : check.notes) print("note        " + n + "\n");
  print(
      fmt::format("checked     {} variant case(s): each reads and plans as `specwave check` does\n", variants.size()));
  // --submit, --resume, --template and --max-parallel are about the job script: they imply --slurm.
  const bool job_script = o.slurm || o.submit || o.resume || !o.job.template_choice.empty() || o.job.max_parallel >= 0;
  if (job_script && !o.resume) {  // a template that cannot be filled is refused before the folder is written
    std::vector<int> all(variants.size());
    std::iota(all.begin(), all.end(), 0);
    (void)sweep_job_script(spec, variants.size(), all, check.wants_gpu, o.job);
  }
  const bool created = write_sweep_folder(spec, variants);
  print(
      fmt::format("folder      {} ({})\n", dir.string(), created ? "written" : "exists with the same manifest: kept"));
  constexpr std::size_t kListed = 20;
  for (std::size_t i = 0; i < variants.size() && i < kListed; ++i)
    print(fmt::format("variant     {}\n", printable(variants[i].name)));
  if (variants.size() > kListed)
    print(fmt::format("variant     ... and {} more (manifest.csv)\n", variants.size() - kListed));

  std::vector<int> indices;
  if (o.resume) {
    // The states as `collect` judges them, outputs read (a damaged traces.h5 is a failure to run again).
    const SweepResults results = collect_sweep(dir.string(), true);
    std::string which;
    int busy = 0;
    for (const auto& v : results.variants) {
      if (needs_rerun(v.state)) {
        indices.push_back(v.index);
        which += fmt::format("{}{} ({}{})", which.empty() ? "" : ", ", v.id, to_string(v.state),
                             v.exit_code ? fmt::format(", exit {}", *v.exit_code) : "");
      } else if (v.state != VariantState::completed) {
        ++busy;
      }
    }
    if (busy) print(fmt::format("running     {} variant(s) running or requeued: not resubmitted\n", busy));
    if (indices.empty()) {
      print("resume      nothing to resubmit: no variant failed, was interrupted or is missing\n");
      return;
    }
    print(fmt::format("resume      {} variant(s): {}\n", indices.size(), which));
  } else {
    for (const auto& v : variants) indices.push_back(v.index);
  }
  if (!job_script) return;
  const std::string script = sweep_job_script(spec, variants.size(), indices, check.wants_gpu, o.job);
  const std::string job = (dir / "job.sbatch").string();
  io::write_text_atomically(job, script);
  ::chmod(job.c_str(), 0755);
  const int max_parallel = o.job.max_parallel >= 0 ? o.job.max_parallel : spec.slurm.max_parallel;
  const std::string array = slurm_array_spec(indices, max_parallel);
  print(fmt::format("job         {} (array {}, {} task(s))\n", job, array, indices.size()));
  if (!o.submit) {
    print(fmt::format(
        "submit      sbatch {}   (or run one task here: SLURM_ARRAY_TASK_ID={} SPECWAVE_LAUNCHER= bash {})\n", job,
        indices.front(), job));
    return;
  }
  const std::string job_id = submit_sweep_job(dir.string(), array, indices);
  print(fmt::format("submitted   job {} (array {}); recorded in {}\n", job_id, array,
                    (dir / "submissions.jsonl").string()));
}

}  // namespace specwave
