// `specwave collect`: the state and results of every variant of a sweep folder (docs/batch.md, "Collecting results").
#include "solver/batch/collect.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <sstream>

#include "io/hdf5.hpp"
#include "io/json.hpp"
#include "io/segy.hpp"
#include "io/text_file.hpp"
#include "solver/case/errors.hpp"

namespace specwave {
namespace fs = std::filesystem;

const char* to_string(VariantState s) {
  switch (s) {
    case VariantState::completed: return "completed";
    case VariantState::failed: return "failed";
    case VariantState::interrupted: return "interrupted";
    case VariantState::running: return "running";
    case VariantState::requeued: return "requeued";
    case VariantState::missing: return "missing";
  }
  return "?";
}

int SweepResults::count(VariantState s) const {
  return int(std::count_if(variants.begin(), variants.end(), [s](const VariantResult& v) { return v.state == s; }));
}

namespace {

// A JSON value as a plain text (CSV cells, names): 10, 0.5, fp64, [10,10,10].
std::string plain(const nlohmann::json& v) {
  using T = nlohmann::json::value_t;
  switch (v.type()) {
    case T::boolean: return v.get<bool>() ? "true" : "false";
    case T::number_integer: return fmt::format("{}", v.get<std::int64_t>());
    case T::number_unsigned: return fmt::format("{}", v.get<std::uint64_t>());
    case T::number_float: return fmt::format("{}", v.get<double>());
    case T::string: return v.get<std::string>();
    case T::array: {
      std::string s = "[";
      for (std::size_t k = 0; k < v.size(); ++k) s.append(k ? "," : "").append(plain(v[k]));
      return s + "]";
    }
    case T::object: return "{...}";
    default: return "";  // null, binary, discarded
  }
}

// An integer member that fits an int (a count, a step, an index), else none.
std::optional<int> get_int(const nlohmann::json& j, std::string_view key) {
  if (const auto v = io::get_number(j, key); v && *v == std::round(*v) && std::abs(*v) <= 2147483647.0) return int(*v);
  return std::nullopt;
}

// forward: run.json (when the engine wrote it) and trace metrics of traces.h5. False when no output is there.
bool read_forward_outputs(const fs::path& out, VariantResult& r, bool metrics) {
  const fs::path run = out / "run.json", traces = out / "traces.h5";
  if (!fs::exists(run) && !fs::exists(traces) && !fs::exists(out / "model.h5")) return false;
  if (!metrics) return true;
  if (const auto text = io::read_text_file(run.string())) {
    const nlohmann::json j = io::parse_json(*text, run.string());
    r.seconds = io::get_number(j, "seconds");
    r.cells_per_second = io::get_number(j, "cells_per_second");
    r.propagator = io::get_string(j, "propagator").value_or("");
    r.nt = get_int(j, "nt");
    r.dt = io::get_number(j, "dt");
    r.n_shots = get_int(j, "shots");
  }
  if (fs::exists(traces)) {
    const io::ShotGathers g = io::read_trace_file(traces.string());
    double sum2 = 0, max_abs = 0;
    for (const float u : g.traces) sum2 += double(u) * double(u), max_abs = std::max(max_abs, double(std::abs(u)));
    r.trace_l2 = std::sqrt(sum2);
    r.trace_max_abs = max_abs;
    r.n_shots = g.n_shots;
    int most = 0;  // the most receivers a shot records
    for (int s = 0; s < g.n_shots; ++s) most = std::max(most, g.shot_traces(s));
    r.n_receivers = most;
    r.nt = g.nt;
    r.dt = g.dt;
  }
  return true;
}

// invert: the last line of iterations.jsonl, and the wall time summed over its lines.
bool read_invert_outputs(const fs::path& out, VariantResult& r, bool metrics) {
  const fs::path path = out / "iterations.jsonl";
  const auto text = io::read_text_file(path.string());
  if (!text) return false;
  if (!metrics) return true;
  std::istringstream lines(*text);
  std::string line;
  double seconds = 0;
  std::optional<nlohmann::json> last;
  while (std::getline(lines, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) {
      last = io::parse_json(line, path.string());
      seconds += io::get_number(*last, "seconds").value_or(0);
    }
  if (!last) return false;
  r.iterations = get_int(*last, "iteration");
  r.misfit = io::get_number(*last, "misfit");
  r.relative_misfit = io::get_number(*last, "relative_misfit");
  r.model_error = io::get_number(*last, "model_error");
  r.seconds = seconds;
  return true;
}

void classify(const fs::path& dir, const std::string& command, VariantResult& r, bool metrics) {
  const fs::path variant = dir / "variants" / r.id, out = variant / "output";
  const fs::path status_path = variant / "status.json";
  const auto outputs = [&] {
    return command == "invert" ? read_invert_outputs(out, r, metrics) : read_forward_outputs(out, r, metrics);
  };
  const auto text = io::read_text_file(status_path.string());
  if (!text) {
    r.state = VariantState::missing;
    if (fs::exists(out) && !fs::is_empty(out)) r.note = "outputs but no status.json (run outside the job script?)";
    return;
  }
  const nlohmann::json status = io::parse_json(*text, status_path.string());
  r.exit_code = get_int(status, "exit_code");
  r.restart_count = get_int(status, "restart_count");
  r.host = io::get_string(status, "host").value_or("");
  r.job_id = io::get_string(status, "job_id").value_or("");
  const std::string state = io::get_string(status, "state").value_or("");
  if (state == "running")
    r.state = VariantState::running;
  else if (state == "requeued")
    r.state = VariantState::requeued;
  else if (state == "interrupted")
    r.state = VariantState::interrupted;
  else if (r.exit_code && *r.exit_code != 0)
    r.state = VariantState::failed;
  else if (!r.exit_code)
    r.state = VariantState::failed, r.note = fmt::format("status.json has state \"{}\" and no exit code", state);
  else if (!outputs())
    r.state = VariantState::failed, r.note = fmt::format("exit code 0 but no outputs in {}", out.string());
  else
    r.state = VariantState::completed;
}

// One column of summary.csv and summary.h5.
struct Column {
  enum class Kind { integer, number, text };
  std::string name;
  Kind kind;
  std::string units;
  std::function<std::optional<double>(const VariantResult&)> number;  // integer and number columns
  std::function<std::string(const VariantResult&)> text;              // text columns
};

template <class T>
std::function<std::optional<double>(const VariantResult&)> num(std::optional<T> VariantResult::*member) {
  return [member](const VariantResult& r) -> std::optional<double> {
    if (!(r.*member)) return std::nullopt;
    return double(*(r.*member));
  };
}

std::vector<Column> columns(const SweepResults& s) {
  using K = Column::Kind;
  std::vector<Column> c = {
      {"index", K::integer, "1", [](const VariantResult& r) { return std::optional<double>(r.index); }, {}},
      {"name", K::text, "", {}, [](const VariantResult& r) { return r.name; }},
  };
  for (std::size_t a = 0; a < s.axes.size(); ++a) {
    const K kind = s.axis_types[a] == "integer" ? K::integer : s.axis_types[a] == "number" ? K::number : K::text;
    c.push_back({s.axes[a], kind, "",
                 [a](const VariantResult& r) -> std::optional<double> {
                   if (r.parameters[a].empty()) return std::nullopt;
                   return std::stod(r.parameters[a]);
                 },
                 [a](const VariantResult& r) { return r.parameters[a]; }});
  }
  c.push_back({"state", K::text, "", {}, [](const VariantResult& r) { return std::string(to_string(r.state)); }});
  c.push_back({"exit_code", K::integer, "1", num(&VariantResult::exit_code), {}});
  c.push_back({"restart_count", K::integer, "1", num(&VariantResult::restart_count), {}});
  c.push_back({"seconds", K::number, "s", num(&VariantResult::seconds), {}});
  if (s.command == "invert") {
    c.push_back({"iterations", K::integer, "1", num(&VariantResult::iterations), {}});
    c.push_back({"misfit", K::number, "misfit (least squares)", num(&VariantResult::misfit), {}});
    c.push_back({"relative_misfit", K::number, "1", num(&VariantResult::relative_misfit), {}});
    c.push_back({"model_error", K::number, "1", num(&VariantResult::model_error), {}});
  } else {
    c.push_back({"cells_per_second", K::number, "1/s", num(&VariantResult::cells_per_second), {}});
    c.push_back({"propagator", K::text, "", {}, [](const VariantResult& r) { return r.propagator; }});
    c.push_back({"nt", K::integer, "1", num(&VariantResult::nt), {}});
    c.push_back({"dt", K::number, "s", num(&VariantResult::dt), {}});
    c.push_back({"n_shots", K::integer, "1", num(&VariantResult::n_shots), {}});
    c.push_back({"n_receivers", K::integer, "1", num(&VariantResult::n_receivers), {}});
    c.push_back({"trace_l2", K::number, "source amplitude / m", num(&VariantResult::trace_l2), {}});
    c.push_back({"trace_max_abs", K::number, "source amplitude / m", num(&VariantResult::trace_max_abs), {}});
  }
  c.push_back({"host", K::text, "", {}, [](const VariantResult& r) { return r.host; }});
  c.push_back({"job_id", K::text, "", {}, [](const VariantResult& r) { return r.job_id; }});
  c.push_back({"note", K::text, "", {}, [](const VariantResult& r) { return r.note; }});
  c.push_back({"log", K::text, "", {}, [](const VariantResult& r) { return r.log; }});
  return c;
}

std::string cell(const Column& c, const VariantResult& r) {
  if (c.kind == Column::Kind::text) return c.text(r);
  const auto v = c.number(r);
  if (!v) return "";
  return c.kind == Column::Kind::integer ? fmt::format("{}", std::llround(*v)) : fmt::format("{}", *v);
}

std::string short_number(const std::optional<double>& v) { return v ? fmt::format("{:.3g}", *v) : "-"; }

std::string log_tail(const fs::path& path, int n) {
  const auto text = io::read_text_file(path.string());
  if (!text) return "            | (no log yet)\n";
  std::vector<std::string> lines;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
  std::string out;
  for (std::size_t k = lines.size() > std::size_t(n) ? lines.size() - n : 0; k < lines.size(); ++k)
    out += "            | " + lines[k] + "\n";
  return out.empty() ? "            | (empty log)\n" : out;
}

}  // namespace

SweepResults collect_sweep(const std::string& directory, bool metrics) {
  const fs::path dir(directory);
  const fs::path manifest_path = dir / "manifest.json";
  const auto text = io::read_text_file(manifest_path.string());
  if (!text)
    throw Error(ExitCode::input_error,
                fmt::format("{}: not a sweep folder (no manifest.json); give the folder written by "
                            "specwave sweep",
                            directory));
  const nlohmann::json m = io::parse_json(*text, manifest_path.string());
  SweepResults s;
  s.directory = directory;
  s.name = io::get_string(m, "name").value_or("");
  s.command = io::get_string(m, "command").value_or("forward");
  if (s.command != "forward" && s.command != "invert")
    throw Error(ExitCode::input_error,
                fmt::format("{}: command \"{}\" is not one a sweep runs (forward or invert): the manifest is damaged; "
                            "write the sweep folder again with specwave sweep",
                            manifest_path.string(), s.command));
  const nlohmann::json* axes = io::get_member(m, "axes");
  const nlohmann::json* variants = io::get_member(m, "variants");
  if (!axes || !variants || !axes->is_array() || !variants->is_array())
    throw Error(ExitCode::input_error,
                fmt::format("{}: has no axes or variants arrays; write the sweep folder again with "
                            "specwave sweep",
                            manifest_path.string()));
  for (const nlohmann::json& a : *axes) {
    s.axes.push_back(io::get_string(a, "key").value_or(""));
    bool numbers = true, integers = true;
    if (const nlohmann::json* values = io::get_member(a, "values"); values && values->is_array())
      for (const nlohmann::json& v : *values) {
        numbers = numbers && v.is_number();
        integers = integers && v.is_number_integer();
      }
    s.axis_types.push_back(integers ? "integer" : numbers ? "number" : "string");
  }
  for (const nlohmann::json& v : *variants) {
    VariantResult r;
    r.index = int(s.variants.size());
    if (io::get_member(v, "index")) {
      const auto index = get_int(v, "index");
      if (!index || *index < 0)
        throw Error(ExitCode::input_error,
                    fmt::format("{}: variant {} has index {}, not a variant number: the manifest is damaged; write "
                                "the sweep folder again with specwave sweep",
                                manifest_path.string(), s.variants.size(), io::get_member(v, "index")->dump()));
      r.index = *index;
    }
    r.id = io::get_string(v, "id").value_or(fmt::format("{:04}", r.index));
    r.name = io::get_string(v, "name").value_or(r.id);
    r.log = io::get_string(v, "log").value_or(fmt::format("logs/{}.log", r.id));
    const nlohmann::json* params = io::get_member(v, "parameters");
    for (const auto& key : s.axes) {
      const nlohmann::json* p = params ? io::get_member(*params, key) : nullptr;
      r.parameters.push_back(p ? plain(*p) : "");
    }
    try {
      classify(dir, s.command, r, metrics);
    } catch (const Error& e) {  // a damaged status or output file: the variant failed, the others are still collected
      r.state = VariantState::failed;
      r.note = e.what();
    }
    s.variants.push_back(std::move(r));
  }
  return s;
}

void write_sweep_summary(const SweepResults& s) {
  const std::vector<Column> cols = columns(s);
  std::string csv;
  for (std::size_t k = 0; k < cols.size(); ++k) csv.append(k ? "," : "").append(io::csv_field(cols[k].name));
  csv += "\n";
  for (const auto& r : s.variants) {
    for (std::size_t k = 0; k < cols.size(); ++k) csv.append(k ? "," : "").append(io::csv_field(cell(cols[k], r)));
    csv += "\n";
  }
  io::write_text_atomically((fs::path(s.directory) / "summary.csv").string(), csv);

  // summary.h5: one dataset per column (length n_variants); the axis columns under /parameters, named by their keys.
  io::h5::AtomicWriter file((fs::path(s.directory) / "summary.h5").string());
  io::h5::write_identity_attributes(file.id(), "specwave.sweep_summary");
  io::h5::write_attribute(file.id(), "sweep_name", s.name);
  io::h5::write_attribute(file.id(), "command", s.command);
  std::string header;
  for (std::size_t k = 0; k < cols.size(); ++k) header.append(k ? "," : "").append(cols[k].name);
  io::h5::write_attribute(file.id(), "columns", header);
  io::h5::Handle parameters = io::h5::create_group(file.id(), "parameters");
  const std::vector<hsize_t> dims = {hsize_t(s.variants.size())};
  for (std::size_t k = 0; k < cols.size(); ++k) {
    const Column& c = cols[k];
    const bool axis = k >= 2 && k < 2 + s.axes.size();
    const hid_t parent = axis ? parameters.id() : file.id();
    if (c.kind == Column::Kind::text) {
      std::vector<std::string> values;
      for (const auto& r : s.variants) values.push_back(c.text(r));
      io::h5::write_string_dataset(parent, c.name, values);
    } else if (c.kind == Column::Kind::integer) {
      std::vector<std::int64_t> values;  // -1: not known
      for (const auto& r : s.variants) values.push_back(c.number(r) ? std::llround(*c.number(r)) : -1);
      io::h5::write_dataset<std::int64_t>(parent, c.name, dims, values.data(), c.units);
    } else {
      std::vector<double> values;  // NaN: not known
      for (const auto& r : s.variants) values.push_back(c.number(r).value_or(NAN));
      io::h5::write_dataset<double>(parent, c.name, dims, values.data(), c.units);
    }
  }
  parameters.close();
  file.commit();
}

std::string describe_sweep_results(const SweepResults& s, int log_lines) {
  const fs::path dir(s.directory);
  std::string out = fmt::format(
      "collect     {}: {} variant(s): {} completed, {} failed, {} interrupted, {} running, {} requeued, {} missing\n",
      s.name, s.variants.size(), s.count(VariantState::completed), s.count(VariantState::failed),
      s.count(VariantState::interrupted), s.count(VariantState::running), s.count(VariantState::requeued),
      s.count(VariantState::missing));
  const bool invert = s.command == "invert";
  out += invert ? fmt::format("{:<6} {:<11} {:>4} {:>5} {:>10} {:>10} {:>10}  {}\n", "id", "state", "exit", "iter",
                              "misfit", "relative", "model err", "name")
                : fmt::format("{:<6} {:<11} {:>4} {:>8} {:>9} {:>10} {:>10}  {}\n", "id", "state", "exit", "seconds",
                              "cells/s", "trace L2", "max |u|", "name");
  constexpr std::size_t kAllRows =
      50;  // larger sweeps: only the variants that did not complete (all are in summary.csv)
  for (const auto& r : s.variants) {
    if (s.variants.size() > kAllRows && r.state == VariantState::completed) continue;
    const std::string exit = r.exit_code ? std::to_string(*r.exit_code) : "-";
    out += invert ? fmt::format("{:<6} {:<11} {:>4} {:>5} {:>10} {:>10} {:>10}  {}\n", r.id, to_string(r.state), exit,
                                r.iterations ? std::to_string(*r.iterations) : "-", short_number(r.misfit),
                                short_number(r.relative_misfit), short_number(r.model_error), r.name)
                  : fmt::format("{:<6} {:<11} {:>4} {:>8} {:>9} {:>10} {:>10}  {}\n", r.id, to_string(r.state), exit,
                                short_number(r.seconds), short_number(r.cells_per_second), short_number(r.trace_l2),
                                short_number(r.trace_max_abs), r.name);
  }
  if (s.variants.size() > kAllRows)
    out += fmt::format("(the {} completed variants are in summary.csv)\n", s.count(VariantState::completed));
  for (const auto& r : s.variants) {
    if (!needs_rerun(r.state)) continue;
    std::string what = r.state == VariantState::missing
                           ? "no status.json: never started, or still pending"
                           : fmt::format("exit code {}", r.exit_code ? std::to_string(*r.exit_code) : "?");
    if (!r.host.empty()) what += fmt::format(", host {}", r.host);
    if (!r.job_id.empty()) what += fmt::format(", job {}", r.job_id);
    if (!r.note.empty()) what += "; " + r.note;
    out += fmt::format("{:<11} {} ({}); log {}\n", to_string(r.state), r.id, what, (dir / r.log).string());
    out += log_tail(dir / r.log, log_lines);
  }
  return out;
}

}  // namespace specwave
