// Slurm job arrays of sweeps: the array spec, the job-script templates and their placeholders, submission with
// sbatch (docs/batch.md, "The job script and its templates").
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <regex>
#include <sstream>

#include "io/text_file.hpp"
#include "solver/batch/sweep.hpp"
#include "solver/case/errors.hpp"
#include "solver/forward/progress.hpp"

namespace specwave {
namespace slurm_templates {
// Generated from scripts/slurm/*.sbatch (solver/CMakeLists.txt, slurm_templates.cpp.in).
extern const char* const cpu;
extern const char* const gpu;
}  // namespace slurm_templates

namespace {

namespace fs = std::filesystem;

// Characters a path in the job script must not hold: it is written unquoted into #SBATCH lines (where % is a
// Slurm pattern) and single-quoted in bash.
void check_script_path(const std::string& path, std::string_view what) {
  if (path.find_first_of(" \t\n'\"$`\\%") != std::string::npos)
    throw Error(ExitCode::usage,
                fmt::format("{} '{}' has a space, a quote or one of $ ` \\ %: it cannot go into the job "
                            "script; choose a path without them",
                            what, path));
}

}  // namespace

// ---- Slurm --------------------------------------------------------------------------------------

std::string slurm_array_spec(const std::vector<int>& indices, int max_parallel) {
  std::vector<int> sorted = indices;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  std::string s;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    s.append(s.empty() ? "" : ",")
        .append(j > i ? fmt::format("{}-{}", sorted[i], sorted[j]) : fmt::format("{}", sorted[i]));
    i = j + 1;
  }
  if (max_parallel > 0) s += fmt::format("%{}", max_parallel);
  return s;
}

std::string builtin_slurm_template(const std::string& name) {
  if (name == "cpu") return slurm_templates::cpu;
  if (name == "gpu") return slurm_templates::gpu;
  throw Error(ExitCode::usage,
              fmt::format("no built-in template '{}'; use cpu, gpu or the path of a template file", name));
}

std::string fill_template(const std::string& text, const std::map<std::string, std::string>& values,
                          const std::string& what) {
  static const std::regex placeholder(R"(\{\{\s*([A-Za-z0-9_]+)\s*\}\})");
  std::string out, unknown;
  std::istringstream lines(text);
  std::string line;
  for (int n = 1; std::getline(lines, line); ++n) {
    std::smatch whole;
    static const std::regex blanks(R"(^\s+|\s+$)");
    const std::string trimmed = std::regex_replace(line, blanks, "");
    if (std::regex_match(trimmed, whole, placeholder)) {
      const auto it = values.find(whole[1].str());
      if (it != values.end() && it->second.empty()) continue;  // an optional line that is not set
    }
    std::string filled;
    auto begin = line.cbegin();
    for (std::sregex_iterator m(line.begin(), line.end(), placeholder), end; m != end; ++m) {
      filled.append(begin, line.cbegin() + m->position());
      const auto it = values.find((*m)[1].str());
      if (it == values.end()) {
        unknown += fmt::format("{}{{{{{}}}}} (line {})", unknown.empty() ? "" : ", ", (*m)[1].str(), n);
        filled += m->str();
      } else {
        filled += it->second;
      }
      begin = line.cbegin() + m->position() + m->length();
    }
    filled.append(begin, line.cend());
    out += filled + "\n";
  }
  if (!unknown.empty()) {
    std::string known;
    for (const auto& [k, v] : values) known += fmt::format("{}{{{{{}}}}}", known.empty() ? "" : " ", k);
    throw Error(
        ExitCode::input_error,
        fmt::format("{}: unknown placeholder {}; the placeholders are {} (docs/batch.md)", what, unknown, known));
  }
  return out;
}

std::string sweep_job_script(const SweepSpec& spec, std::size_t n_variants, const std::vector<int>& indices,
                             bool wants_gpu, const JobScriptOptions& o) {
  const SlurmSettings& m = spec.slurm;
  std::string choice =
      o.template_choice.empty() ? (wants_gpu || m.gpus_per_task > 0 ? "gpu" : "cpu") : o.template_choice;
  std::string text, what;
  if (choice == "cpu" || choice == "gpu") {
    text = builtin_slurm_template(choice);
    what = fmt::format("template {} (scripts/slurm/{}.sbatch)", choice, choice);
  } else {
    const auto t = io::read_text_file(choice);
    if (!t)
      throw Error(ExitCode::input_error,
                  fmt::format("{}: cannot read the template; check the --template path", choice));
    text = *t;
    what = choice;
  }
  check_script_path(spec.directory, "the sweep folder");
  check_script_path(o.specwave, "the specwave program");
  const auto sbatch = [](const std::string& option) { return option.empty() ? std::string() : "#SBATCH " + option; };
  const int max_parallel = o.max_parallel >= 0 ? o.max_parallel : m.max_parallel;
  std::string extra;
  for (const auto& e : m.extra) extra += (extra.empty() ? "" : "\n") + (e.rfind("#SBATCH", 0) == 0 ? e : sbatch(e));
  // The tasks' environment ([slurm] modules and setup), before the script's `set -u` (module scripts often read
  // unset variables).
  // A command that fails is recorded in environment_failed, which the shipped templates check once status.json can
  // say so (the task then fails with exit code 3, not run).
  std::string environment;
  if (!m.modules.empty() || !m.setup.empty()) {
    environment = "# The environment of every task: the sweep file's [slurm] modules and setup.";
    if (!m.modules.empty()) {
      std::string load = "module load";
      for (const std::string& name : m.modules) load += " " + name;
      environment += "\n" + load + " || environment_failed='" + load + "'";
    }
    if (!m.setup.empty()) environment += "\nsource '" + m.setup + "' || environment_failed='source " + m.setup + "'";
  }
  std::string job_name;
  for (char c : spec.name)
    job_name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '_';
  const int gpus = m.gpus_per_task > 0 ? m.gpus_per_task : (choice == "gpu" ? 1 : 0);
  const std::map<std::string, std::string> values = {
      {"job_name", job_name},
      {"sweep_name", spec.name},
      {"array", slurm_array_spec(indices, max_parallel)},
      {"sweep_dir", spec.directory},
      {"specwave", o.specwave},
      {"command", spec.command},
      {"ntasks", std::to_string(m.ntasks)},
      {"index_width", std::to_string(sweep_index_width(n_variants))},
      {"account_line", m.account.empty() ? "" : sbatch("--account=" + m.account)},
      {"partition_line", m.partition.empty() ? "" : sbatch("--partition=" + m.partition)},
      {"time_line", m.time.empty() ? "" : sbatch("--time=" + m.time)},
      {"cpus_line", m.cpus_per_task > 0 ? sbatch(fmt::format("--cpus-per-task={}", m.cpus_per_task)) : ""},
      {"gpus_line", gpus > 0 ? sbatch(fmt::format("--gpus-per-task={}", gpus)) : ""},
      {"extra_lines", extra},
      {"environment_lines", environment},
  };
  return fill_template(text, values, what);
}

namespace {

std::string find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  std::string d;
  while (std::getline(dirs, d, ':')) {
    const fs::path p = fs::path(d.empty() ? "." : d) / program;
    if (::access(p.c_str(), X_OK) == 0 && !fs::is_directory(p)) return p.string();
  }
  return "";
}

}  // namespace

std::string submit_sweep_job(const std::string& directory, const std::string& array, const std::vector<int>& indices) {
  const fs::path dir(directory);
  const std::string sbatch = find_on_path("sbatch");
  if (sbatch.empty())
    throw Error(ExitCode::submit_failed,
                fmt::format("sbatch not found on PATH: --submit needs Slurm; run on a login node of the "
                            "cluster, or submit {} yourself",
                            (dir / "job.sbatch").string()));
  check_script_path(sbatch, "sbatch");
  const fs::path err = dir / fmt::format(".sbatch-stderr-{}", ::getpid());
  const std::string cmd =
      fmt::format("cd '{}' && '{}' --parsable job.sbatch 2>'{}'", dir.string(), sbatch, err.string());
  std::string out;
  FILE* pipe = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf{};
  while (pipe && fgets(buf.data(), buf.size(), pipe)) out += buf.data();
  const int status = pipe ? pclose(pipe) : -1;
  std::string stderr_text = io::read_text_file(err.string()).value_or("");
  std::error_code ec;
  fs::remove(err, ec);
  const auto one_line = [](std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    for (auto& c : s)
      if (c == '\n') c = '|';
    return s.empty() ? std::string("no message") : s;
  };
  const std::string job_id = out.substr(0, out.find_first_of(";\n"));
  if (status != 0 || job_id.empty() || job_id.find_first_not_of("0123456789") != std::string::npos)
    throw Error(
        ExitCode::submit_failed,
        fmt::format(
            "sbatch refused {} (exit status {}): {}; fix the [slurm] table of the sweep file or the template and "
            "run again with --submit",
            (dir / "job.sbatch").string(), WIFEXITED(status) ? WEXITSTATUS(status) : -1, one_line(stderr_text + out)));
  std::string list;
  for (int i : indices) list += (list.empty() ? "" : ", ") + std::to_string(i);
  const std::string record =
      fmt::format("{{\"time\": \"{}\", \"job_id\": \"{}\", \"array\": \"{}\", \"indices\": [{}]}}\n", utc_timestamp(),
                  job_id, array, list);
  FILE* f = std::fopen((dir / "submissions.jsonl").c_str(), "a");
  if (!f || std::fputs(record.c_str(), f) < 0 || std::fclose(f) != 0)
    throw Error(ExitCode::output_error, fmt::format("{}: job {} was submitted but cannot be recorded here; note its id",
                                                    (dir / "submissions.jsonl").string(), job_id));
  return job_id;
}

}  // namespace specwave
