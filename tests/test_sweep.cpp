// Parameter sweeps and result collection (docs/batch.md): expansion of the axes, the variant cases, their check
// before anything is written, the sweep folder and its idempotent rerun, the Slurm job script (placeholders, array
// spec, the signal and requeue logic run by hand with fake launchers), `collect` on a fabricated sweep folder and
// `sweep --resume` with a fake sbatch. The end-to-end test runs the example sweep's 4 variants through job.sbatch
// without Slurm (registered as its own CTest test, sweep_local_end_to_end).
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "cli_helpers.hpp"
#include "io/case_file.hpp"
#include "io/hdf5.hpp"
#include "io/json.hpp"
#include "io/segy.hpp"
#include "solver/batch/collect.hpp"
#include "solver/batch/sweep.hpp"
#include "solver/case/errors.hpp"

namespace fs = std::filesystem;
using namespace specwave;
using testing::Result;
using testing::run_command;
using testing::run_specwave;

namespace {

// One folder per process: other checkouts on the same machine may run these tests at the same time. Removed at exit
// unless SPECWAVE_KEEP_TEST_FILES is set (to look at a failure).
const fs::path work = fs::temp_directory_path() / ("specwave_test_sweep-" + std::to_string(::getpid()));
const struct RemoveAtExit {
  ~RemoveAtExit() {
    std::error_code ec;
    if (!std::getenv("SPECWAVE_KEEP_TEST_FILES")) fs::remove_all(work, ec);
  }
} remove_at_exit;
const fs::path source_dir = SPECWAVE_SOURCE_DIR;
const fs::path example_sweep = source_dir / "cases" / "sweeps" / "frequency-order.toml";

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

void write_executable(const fs::path& p, const std::string& text) {
  write(p, text);
  fs::permissions(p, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                         fs::perms::others_exec);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Two shots: the sweep tests address shots[1] and shots[*].
const std::string base_case = testing::cli_base_case("sweep-test", {"[200.0, 200.0, 200.0]", "[200.0, 200.0, 240.0]"});

// A sweep file in `folder` over base.toml (written there too).
fs::path write_sweep(const fs::path& folder, const std::string& name, const std::string& body,
                     const std::string& base = base_case) {
  write(folder / "base.toml", base);
  const fs::path p = folder / (name + ".toml");
  write(p, "[sweep]\nbase = \"base.toml\"\nname = \"" + name + "\"\n" + body);
  return p;
}

std::vector<std::string> texts(const SweepAxis& a) {
  std::vector<std::string> out;
  for (const auto& v : a.values) out.push_back(v.toml);
  return out;
}

std::string error_of(const std::function<void()>& f, int* code = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (code) *code = int(e.code());
    return e.what();
  }
  return "(no error)";
}

nlohmann::json status_of(const fs::path& variant) {
  return io::parse_json(read(variant / "status.json"), "status.json");
}

// Starts `bash script` with extra environment variables, output appended to `log`; returns the pid.
pid_t spawn_bash(const fs::path& script, const std::vector<std::string>& env, const fs::path& log) {
  std::vector<std::string> strings;
  for (char** e = environ; *e; ++e) strings.emplace_back(*e);
  for (const auto& e : env) strings.push_back(e);
  const pid_t pid = fork();
  if (pid == 0) {
    FILE* f = std::fopen(log.c_str(), "a");
    dup2(fileno(f), 1);
    dup2(fileno(f), 2);
    std::vector<char*> envp, argv = {const_cast<char*>("bash"), const_cast<char*>(script.c_str()), nullptr};
    for (auto& s : strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    execve("/bin/bash", argv.data(), envp.data());
    _exit(127);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool wait_for_file(const fs::path& p, double seconds) {
  for (int k = 0; k < int(seconds * 20); ++k) {
    if (fs::exists(p)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace

TEST_CASE("bookkeeping JSON: a damaged file is an input error naming it; optional members stay optional") {
  int code = 0;
  const std::string e = error_of([] { io::parse_json("{\"state\": ", "out/variants/0001/status.json"); }, &code);
  CHECK(code == int(ExitCode::input_error));
  CHECK(contains(e, "out/variants/0001/status.json: invalid JSON ("));
  CHECK(error_of([] { io::parse_json("{} x", "a.json"); }, &code).rfind("a.json: invalid JSON", 0) == 0);
  const nlohmann::json j = io::parse_json(" {\"n\": 3, \"s\": \"\\u00e9\", \"z\": null} ", "b.json");
  CHECK(io::get_number(j, "n") == 3.0);
  CHECK(io::get_string(j, "s") == "\u00e9");
  CHECK_FALSE(io::get_number(j, "s").has_value());
  CHECK_FALSE(io::get_string(j, "z").has_value());
  CHECK_FALSE(io::get_number(j, "missing").has_value());
  CHECK(io::get_member(j, "missing") == nullptr);
  CHECK(io::get_member(nlohmann::json::array(), "n") == nullptr);
  CHECK(io::json_quote("a\"b\\c\n\x01") == "\"a\\\"b\\\\c\\n\\u0001\"");
}

TEST_CASE("sweep expansion: product order, zip, ranges, errors") {
  const fs::path dir = work / "expansion";
  fs::remove_all(dir);
  SUBCASE("product: first axis slowest, axes in file order (dotted keys too)") {
    const SweepSpec s = read_sweep_file(write_sweep(dir, "p", R"([axes]
"shots[*].sources[*].peak_frequency" = [8.0, 12.0]
scheme.order = [4, 6, 8]
run.precision = ["fp32", "fp64"]
)")
                                            .string());
    REQUIRE(s.axes.size() == 3);
    CHECK(s.axes[0].key == "shots[*].sources[*].peak_frequency");
    CHECK(s.axes[1].key == "scheme.order");
    CHECK(s.axes[2].key == "run.precision");
    CHECK(texts(s.axes[0]) == std::vector<std::string>{"8.0", "12.0"});
    CHECK(texts(s.axes[2]) == std::vector<std::string>{"\"fp32\"", "\"fp64\""});
    const auto combos = expand_sweep(s);
    REQUIRE(combos.size() == 12);
    CHECK(combos[0] == std::vector<int>{0, 0, 0});
    CHECK(combos[1] == std::vector<int>{0, 0, 1});
    CHECK(combos[2] == std::vector<int>{0, 1, 0});
    CHECK(combos[6] == std::vector<int>{1, 0, 0});
    CHECK(combos[11] == std::vector<int>{1, 2, 1});
    const auto variants = make_variants(s);
    CHECK(variants[3].name == "0003_peak_frequency=8_order=6_precision=fp64");
    CHECK(variants[11].id == "0011");
  }
  SUBCASE("zip: the k-th value of every axis; unequal lengths are refused naming the axes") {
    const SweepSpec s = read_sweep_file(write_sweep(dir, "z",
                                                    "mode = \"zip\"\n[axes]\n\"scheme.order\" = [4, 8]\n"
                                                    "\"time.duration\" = [0.2, 0.3]\n")
                                            .string());
    CHECK(expand_sweep(s) == std::vector<std::vector<int>>{{0, 0}, {1, 1}});
    // zip may repeat a value on one axis (product may not: it would repeat variants).
    CHECK(read_sweep_file(
              write_sweep(dir, "z3",
                          "mode = \"zip\"\n[axes]\n\"scheme.order\" = [8, 8]\n\"time.duration\" = [0.2, 0.3]\n")
                  .string())
              .axes[0]
              .values.size() == 2);
    int code = 0;
    const std::string e = error_of(
        [&] {
          read_sweep_file(
              write_sweep(dir, "z2",
                          "mode = \"zip\"\n[axes]\n\"scheme.order\" = [4, 8, 12]\n\"time.duration\" = [0.2, 0.3]\n")
                  .string());
        },
        &code);
    CHECK(code == 3);
    CHECK(contains(e, "z2.toml:"));
    CHECK(contains(e, "scheme.order has 3"));
    CHECK(contains(e, "time.duration has 2"));
    CHECK(contains(e, "mode = \"product\""));
  }
  SUBCASE("ranges: inclusive linspace, steps, integers when start and stop are") {
    const SweepSpec s = read_sweep_file(write_sweep(dir, "r", R"([axes]
"shots[0].sources[0].peak_frequency" = { start = 5.0, stop = 15.0, count = 3 }
"scheme.order" = { start = 2, stop = 8, step = 2 }
"time.duration" = { start = 0.1, stop = 0.3, step = 0.1 }
"boundary.pml_width" = { start = 8, stop = 12, count = 3 }
)")
                                            .string());
    CHECK(texts(s.axes[0]) == std::vector<std::string>{"5.0", "10.0", "15.0"});
    CHECK(texts(s.axes[1]) == std::vector<std::string>{"2", "4", "6", "8"});
    CHECK(texts(s.axes[2]) == std::vector<std::string>{"0.1", "0.2", "0.3"});
    CHECK(texts(s.axes[3]) == std::vector<std::string>{"8", "10", "12"});
    CHECK(expand_sweep(s).size() == 3 * 4 * 3 * 3);
    int code = 0;
    CHECK(contains(
        error_of(
            [&] {
              read_sweep_file(
                  write_sweep(dir, "r2", "[axes]\n\"scheme.order\" = { start = 2, stop = 7, count = 3 }\n").string());
            },
            &code),
        "not an integer"));
    CHECK(code == 3);
    CHECK(contains(error_of([&] {
                     read_sweep_file(
                         write_sweep(dir, "r3", "[axes]\n\"scheme.order\" = { start = 2, stop = 8 }\n").string());
                   }),
                   "exactly one of 'count' and 'step'"));
    CHECK(contains(
        error_of([&] {
          read_sweep_file(
              write_sweep(dir, "r4", "[axes]\n\"scheme.order\" = { start = 8, stop = 2, step = 2 }\n").string());
        }),
        "towards stop"));
    // Bounds that a double cannot hold, or whose span overflows: named (an integer bound beyond 2^53 was an
    // internal error, an infinite span "a repeated value").
    CHECK(contains(error_of([&] {
                     read_sweep_file(write_sweep(dir, "r5",
                                                 "[axes]\n\"scheme.order\" = { start = 2, stop = "
                                                 "9223372036854775807, step = 1 }\n")
                                         .string());
                   }),
                   "axes.\"scheme.order\".stop: must be an integer within +-2^53"));
    CHECK(contains(error_of([&] {
                     read_sweep_file(write_sweep(dir, "r6",
                                                 "[axes]\n\"time.duration\" = { start = 1e308, stop = -1e308, "
                                                 "count = 3 }\n")
                                         .string());
                   }),
                   "stop - start overflows"));
    CHECK(contains(
        error_of([&] {
          read_sweep_file(
              write_sweep(dir, "r7", "[axes]\n\"time.duration\" = { start = nan, stop = 1.0, count = 3 }\n").string());
        }),
        "axes.\"time.duration\".start: must be a finite number"));
  }
  SUBCASE("sweep file errors name the file, line and key") {
    CHECK(
        contains(error_of([&] { read_sweep_file(write_sweep(dir, "e1", "[axes]\n\"scheme.order\" = 8\n").string()); }),
                 "e1.toml:5: axes.\"scheme.order\": must be an array of values or a range table"));
    CHECK(contains(error_of([&] {
                     read_sweep_file(
                         write_sweep(dir, "e2", "comand = \"forward\"\n[axes]\n\"scheme.order\" = [8]\n").string());
                   }),
                   "sweep.comand: unknown key"));
    CHECK(contains(error_of([&] {
                     read_sweep_file(
                         write_sweep(dir, "e3", "[axes]\n\"output.directory\" = [\"a\", \"b\"]\n").string());
                   }),
                   "is set by the sweep"));
    CHECK(contains(
        error_of([&] { read_sweep_file(write_sweep(dir, "e4", "[axes]\n\"scheme.order\" = [4, 4]\n").string()); }),
        "repeated value"));
    CHECK(contains(
        error_of([&] { read_sweep_file(write_sweep(dir, "e5", "[axes]\n\"shots[0]..file\" = [\"a\"]\n").string()); }),
        "is not a case-file key path"));
    int code = 0;
    const std::string e = error_of(
        [&] {
          read_sweep_file(write_sweep(dir, "e6", "[axes]\n\"shots[5].sources[0].peak_frequency\" = [8.0]\n").string());
          make_variants(read_sweep_file((dir / "e6.toml").string()));
        },
        &code);
    CHECK(code == 3);
    CHECK(contains(e, "the base case has 2 'shots' entries"));
    CHECK(contains(e, "[*] for every entry"));
    CHECK(contains(
        error_of([&] {
          read_sweep_file(
              write_sweep(dir, "e7", "[axes]\n\"scheme.order\" = [8]\n[slurm]\ntime = \"two hours\"\n").string());
        }),
        "slurm.time: is not a Slurm time"));
  }
}

TEST_CASE("variant cases carry the values, resolve relative paths, and write to variants/<id>/output") {
  const fs::path dir = work / "variants";
  fs::remove_all(dir);
  // The base case reads its model from a file next to it, by a relative path.
  fs::create_directories(dir / "inputs");
  {
    io::h5::AtomicWriter w((dir / "inputs" / "model.h5").string());
    const std::vector<float> v(40 * 40 * 40, 2000.f);
    io::h5::write_dataset<float>(w.id(), "velocity", {40, 40, 40}, v.data(), "m/s");
    w.commit();
  }
  std::string base = base_case;
  base.replace(base.find("type = \"homogeneous\"\nvelocity = 2000.0"), 38, "type = \"file\"\nfile = \"model.h5\"");
  write(dir / "inputs" / "base.toml", base);
  write(dir / "sweeps" / "s.toml", R"([sweep]
base = "../inputs/base.toml"
name = "paths"
directory = "out/paths"
[axes]
"shots[*].sources[*].peak_frequency" = [8.0, 12.0]
"shots[1].sources[0].position" = [[200.0, 200.0, 250.0], [200.0, 210.0, 250.0]]
"scheme.order" = [4, 8]
)");
  const SweepSpec s = read_sweep_file((dir / "sweeps" / "s.toml").string());
  CHECK(s.directory == (fs::absolute(dir) / "sweeps" / "out" / "paths").lexically_normal().string());
  const auto variants = make_variants(s);
  REQUIRE(variants.size() == 8);
  const SweepVariant& v = variants[5];  // 12 Hz, position [200, 200, 250], order 8
  CHECK(v.name == "0005_peak_frequency=12_position=[200,200,250]_order=8");
  // Read from a third place: the model path must still resolve (it is absolute in the variant).
  const fs::path elsewhere = dir / "elsewhere" / "case.toml";
  write(elsewhere, v.case_text);
  const Case c = io::read_case_file(elsewhere.string());
  CHECK(c.model.file == (fs::absolute(dir) / "inputs" / "model.h5").lexically_normal().string());
  CHECK(c.output.directory == (dir / "elsewhere" / "output").string());
  CHECK(c.scheme.order == 8);
  REQUIRE(c.shots.size() == 2);
  CHECK(c.shots[0].sources[0].wavelet.peak_frequency == 12.0);
  CHECK(c.shots[1].sources[0].wavelet.peak_frequency == 12.0);
  CHECK(c.shots[1].sources[0].position == Vec3{200.0, 200.0, 250.0});
  CHECK(c.shots[0].sources[0].position == Vec3{200.0, 200.0, 200.0});
  CHECK(contains(v.case_text, "#   scheme.order = 8"));
  // A raw model's density and shear velocity files by relative paths: absolute in the variant too.
  {
    std::string raw = base_case;
    raw.replace(raw.find("type = \"homogeneous\"\nvelocity = 2000.0"), 38,
                "type = \"file\"\nfile = \"vp.bin\"\nformat = \"raw\"\nshape = [40, 40, 40]\n"
                "density_file = \"rho.bin\"\nshear_file = \"vs.bin\"");
    for (const char* name : {"vp.bin", "rho.bin", "vs.bin"}) write(dir / "inputs" / name, "");
    write(dir / "inputs" / "raw.toml", raw);
    write(dir / "sweeps" / "raw.toml",
          "[sweep]\nbase = \"../inputs/raw.toml\"\nname = \"raw\"\n[axes]\n\"scheme.order\" = [4, 8]\n");
    const auto raw_variants = make_variants(read_sweep_file((dir / "sweeps" / "raw.toml").string()));
    REQUIRE(raw_variants.size() == 2);
    write(elsewhere, raw_variants[0].case_text);
    const Case r = io::read_case_file(elsewhere.string());
    CHECK(r.model.density_file == (fs::absolute(dir) / "inputs" / "rho.bin").lexically_normal().string());
    CHECK(r.model.shear_file == (fs::absolute(dir) / "inputs" / "vs.bin").lexically_normal().string());
  }
  // Every variant reads and plans (the model file is found).
  const SweepCheck check = check_variants(s, variants);
  CHECK(check.notes.empty());
  CHECK_FALSE(check.wants_gpu);
  CHECK_FALSE(fs::exists(s.directory));  // the check leaves nothing behind
  // The manifest lists axes and variants; the CSV one column per axis.
  const nlohmann::json m = io::parse_json(sweep_manifest_json(s, variants), "manifest");
  CHECK(io::get_string(m, "name") == "paths");
  CHECK(io::get_string(m, "base_case") == (fs::absolute(dir) / "inputs" / "base.toml").lexically_normal().string());
  REQUIRE(m.at("variants").size() == 8);
  const nlohmann::json& v5 = m.at("variants").at(5);
  CHECK(io::get_string(v5, "case") == "variants/0005/case.toml");
  CHECK(io::get_string(v5, "output") == "variants/0005/output");
  CHECK(io::get_number(v5.at("parameters"), "scheme.order") == 8.0);
  CHECK(v5.at("parameters").at("scheme.order").is_number_integer());
  CHECK(sweep_manifest_csv(s, variants)
            .rfind("index,shots[*].sources[*].peak_frequency,shots[1].sources[0].position,scheme.order\n0,8,\"[200,200,"
                   "250]\",4\n"
                   "1,8,\"[200,200,250]\",8\n2,8,\"[200,210,250]\",4\n",
                   0) == 0);
}

TEST_CASE("an invalid variant is refused with its index and values, and nothing is written") {
  const fs::path dir = work / "invalid";
  fs::remove_all(dir);
  SUBCASE("too few points per wavelength") {
    const fs::path sweep =
        write_sweep(dir, "ppw", "directory = \"out\"\n[axes]\n\"shots[*].sources[*].peak_frequency\" = [10.0, 60.0]\n");
    const Result r = run_specwave("sweep " + sweep.string() + " --slurm");
    CAPTURE(r.output);
    CHECK(r.code == 3);
    CHECK(contains(r.output, "specwave: error: sweep variant 0001 of 2 (shots[*].sources[*].peak_frequency = 60.0): "));
    CHECK(contains(r.output, "points per wavelength"));
    CHECK_FALSE(fs::exists(dir / "out"));
    for (const auto& e : fs::directory_iterator(dir))
      CHECK_MESSAGE(e.path().extension() == ".toml", "left behind: " << e.path());
  }
  SUBCASE("an unknown key, a wrong type, a CFL violation") {
    // An axis' own key or value: the error names the sweep file's line of that axis, and the variant's case (not yet
    // written) by the variant's id.
    for (const auto& [axis, expect] : std::vector<std::pair<std::string, std::string>>{
             {"\"scheme.ordr\" = [4, 8]", "bad.toml:6: axis \"scheme.ordr\": sweep variant 0000 of 2"},
             {"\"scheme.ordr\" = [4, 8]", "variant 0000's case:"},
             {"\"scheme.ordr\" = [4, 8]", "did you mean 'order'?"},
             {"\"scheme.order\" = [\"eight\"]", "bad.toml:6: axis \"scheme.order\""},
             {"\"scheme.order\" = [\"eight\"]", "scheme.order: must be an integer"},
             {"\"time.dt\" = [0.001, 0.01]", "CFL"}}) {
      CAPTURE(axis);
      const Result r =
          run_specwave("sweep " + write_sweep(dir, "bad", "directory = \"out\"\n[axes]\n" + axis + "\n").string());
      CAPTURE(r.output);
      CHECK(r.code == 3);
      CHECK(contains(r.output, "sweep variant 000"));
      CHECK(contains(r.output, expect));
      CHECK_FALSE(fs::exists(dir / "out"));
    }
  }
}

TEST_CASE("job script: placeholders filled, array spec, optional lines, unknown placeholders refused") {
  CHECK(slurm_array_spec({0, 1, 2, 3}, 2) == "0-3%2");
  CHECK(slurm_array_spec({3, 7, 12}, 0) == "3,7,12");
  CHECK(slurm_array_spec({9, 0, 1, 2, 5, 7, 8}, 4) == "0-2,5,7-9%4");
  CHECK(sweep_index_width(10) == 4);
  CHECK(sweep_index_width(10001) == 5);

  const fs::path dir = work / "template";
  fs::remove_all(dir);
  SweepSpec s = read_sweep_file(write_sweep(dir, "tpl", R"(directory = "out"
[axes]
"scheme.order" = [4, 8]
"time.duration" = [0.2, 0.3]
[slurm]
account = "geo123"
time = "02:00:00"
ntasks = 4
max_parallel = 2
extra = ["--mem=16G", "#SBATCH --constraint=a100"]
)")
                                    .string());
  JobScriptOptions o;
  o.specwave = "/opt/specwave/bin/specwave";
  const std::string cpu = sweep_job_script(s, 4, {0, 1, 2, 3}, false, o);
  CAPTURE(cpu);
  CHECK_FALSE(contains(cpu, "{{"));
  CHECK(contains(cpu, "#SBATCH --array=0-3%2\n"));
  CHECK(contains(cpu, "#SBATCH --job-name=tpl\n"));
  CHECK(contains(cpu, "#SBATCH --ntasks=4\n"));
  CHECK(contains(cpu, "#SBATCH --account=geo123\n"));
  CHECK(contains(cpu, "#SBATCH --time=02:00:00\n"));
  CHECK(contains(cpu, "#SBATCH --mem=16G\n#SBATCH --constraint=a100\n"));
  CHECK(contains(cpu, "#SBATCH --output=" + s.directory + "/logs/%4a.log\n"));
  CHECK(contains(cpu, "#SBATCH --requeue\n#SBATCH --signal=B:USR1@120\n#SBATCH --open-mode=append\n"));
  CHECK(contains(cpu, "specwave='/opt/specwave/bin/specwave'"));
  CHECK(contains(cpu, "command='forward'"));
  CHECK(contains(cpu, "printf '%04d'"));
  CHECK_FALSE(contains(cpu, "--partition"));  // not set: the line is dropped
  CHECK_FALSE(contains(cpu, "--gpus-per-task"));
  write(dir / "job.sbatch", cpu);
  CHECK(run_command("bash -n " + (dir / "job.sbatch").string()).code == 0);

  // The GPU template: chosen for variants on cuda, one GPU per task unless the sweep says otherwise.
  const std::string gpu = sweep_job_script(s, 4, {1, 3}, true, o);
  CHECK(contains(gpu, "#SBATCH --gpus-per-task=1\n"));
  CHECK(contains(gpu, "#SBATCH --array=1,3%2\n"));
  o.max_parallel = 0;  // --max-parallel overrides the sweep file (0: no limit)
  CHECK(contains(sweep_job_script(s, 4, {1, 3}, true, o), "#SBATCH --array=1,3\n"));

  // A site template: every placeholder must be known.
  write(dir / "site.sbatch",
        "#!/bin/bash\n#SBATCH --array={{array}}\n#SBATCH --qos={{qos}}\n{{specwave}} {{command}}\n");
  o.template_choice = (dir / "site.sbatch").string();
  int code = 0;
  const std::string e = error_of([&] { sweep_job_script(s, 4, {0}, false, o); }, &code);
  CHECK(code == 4);
  CHECK(contains(e, "site.sbatch: unknown placeholder {{qos}} (line 3)"));
  CHECK(contains(e, "{{sweep_dir}}"));
  write(dir / "site.sbatch", "#!/bin/bash\n#SBATCH --array={{ array }}\n{{specwave}} {{command}} x\n");
  CHECK(sweep_job_script(s, 4, {0}, false, o) ==
        "#!/bin/bash\n#SBATCH --array=0\n/opt/specwave/bin/specwave forward x\n");
  // Paths that cannot go into the script are refused.
  s.directory = "/tmp/my sweep";
  o.template_choice = "cpu";
  CHECK(contains(error_of([&] { sweep_job_script(s, 4, {0}, false, o); }), "has a space"));
}

TEST_CASE("job script environment: [slurm] modules and setup, loaded before the run; bad values refused") {
  const fs::path dir = work / "environment";
  fs::remove_all(dir);
  // A setup file that leaves a trace and sets a variable the run sees.
  write(dir / "site" / "env.sh", "echo \"setup sourced\" >> \"$ENV_TRACE\"\nexport SITE_READY=yes\n");
  const std::string body = R"(directory = "out"
[axes]
"scheme.order" = [4, 8]
[slurm]
modules = ["gcc/12.2", "openmpi/4.1-cuda", "hdf5@1.12:mpi"]
setup = "site/env.sh"
)";
  const SweepSpec s = read_sweep_file(write_sweep(dir, "env", body).string());
  CHECK(s.slurm.modules == std::vector<std::string>{"gcc/12.2", "openmpi/4.1-cuda", "hdf5@1.12:mpi"});
  CHECK(s.slurm.setup == (dir / "site" / "env.sh").lexically_normal().string());
  JobScriptOptions o;
  o.specwave = "/opt/specwave/bin/specwave";
  const std::string script = sweep_job_script(s, 2, {0, 1}, false, o);
  CAPTURE(script);
  const std::string lines =
      "\nmodule load gcc/12.2 openmpi/4.1-cuda hdf5@1.12:mpi || environment_failed='module load "
      "gcc/12.2 openmpi/4.1-cuda hdf5@1.12:mpi'\nsource '" +
      s.slurm.setup + "' || environment_failed='source " + s.slurm.setup + "'\n";
  CHECK(contains(script, lines + "set -u\n"));
  const std::string gpu = sweep_job_script(s, 2, {0, 1}, true, o);
  CHECK(contains(gpu, lines));
  // Without them, no such lines.
  const SweepSpec plain = read_sweep_file(write_sweep(dir, "plain", "[axes]\n\"scheme.order\" = [4, 8]\n").string());
  CHECK_FALSE(contains(sweep_job_script(plain, 2, {0, 1}, false, o), "module load"));
  // By hand: `module` is a shell function that a site's profile defines (Lmod, Environment Modules); a fake one from
  // BASH_ENV records the call. Then the setup file is sourced, and the run sees what it exported.
  write_executable(dir / "launcher", "#!/bin/bash\necho \"launcher: SITE_READY=${SITE_READY:-unset}\"\n");
  write(dir / "profile.sh", "module() { echo \"module $*\" >> \"$ENV_TRACE\"; }\n");
  const std::string out = (dir / "swept").string();
  REQUIRE(run_specwave("sweep " + (dir / "env.toml").string() + " --output " + out + " --slurm").code == 0);
  const Result task = run_command("SLURM_ARRAY_TASK_ID=0 ENV_TRACE=" + (dir / "trace").string() +
                                  " BASH_ENV=" + (dir / "profile.sh").string() +
                                  " SPECWAVE_LAUNCHER=" + (dir / "launcher").string() + " bash " + out + "/job.sbatch");
  CAPTURE(task.output);
  CHECK(contains(task.output, "launcher: SITE_READY=yes"));
  CHECK(read(dir / "trace") == "module load gcc/12.2 openmpi/4.1-cuda hdf5@1.12:mpi\nsetup sourced\n");
  // A module that does not load (here `module` is not a command at all, as on a node without the site's profile):
  // the task does not run; status.json says failed, exit code 3, and the log names the command.
  const Result broken =
      run_command("SLURM_ARRAY_TASK_ID=1 ENV_TRACE=" + (dir / "trace").string() +
                  " SPECWAVE_LAUNCHER=" + (dir / "launcher").string() + " bash " + out + "/job.sbatch");
  CAPTURE(broken.output);
  CHECK(broken.code == 3);
  CHECK_FALSE(contains(broken.output, "launcher:"));
  CHECK(contains(broken.output, "'module load gcc/12.2 openmpi/4.1-cuda hdf5@1.12:mpi' failed"));
  const std::string status = read(fs::path(out) / "variants" / "0001" / "status.json");
  CHECK(contains(status, "\"state\": \"failed\", \"exit_code\": 3"));
  // Refused: a module name with shell characters, a setup file that is not there; exit 3, the key named.
  for (const auto& [extra, key] :
       {std::pair<std::string, std::string>{"modules = [\"gcc; rm -rf ~\"]\n", "slurm.modules"},
        {"modules = \"gcc\"\n", "slurm.modules"},
        {"setup = \"missing.sh\"\n", "slurm.setup"},
        {"extra = [\"#SBATCH --array=0-999999\"]\n", "slurm.extra: sets what the job script sets itself"},
        {"extra = [\"-o /tmp/x.log\"]\n", "slurm.extra: sets what the job script sets itself"},
        {"ntasks = 99999999999\n", "slurm.ntasks: must be an integer in 1..1000000"}}) {
    CAPTURE(extra);
    int code = 0;
    const std::string e = error_of(
        [&] { read_sweep_file(write_sweep(dir, "bad", "[axes]\n\"scheme.order\" = [4]\n[slurm]\n" + extra).string()); },
        &code);
    CHECK(code == 3);
    CHECK(contains(e, key));
  }
}

TEST_CASE("sweep: a variant name holding a newline is printed on one line, quoted") {
  const fs::path dir = work / "newline";
  fs::remove_all(dir);
  const fs::path file = write_sweep(dir, "nl", "[axes]\nname = [\"a\\nb\", \"c\"]\n");
  const Result r = run_specwave("sweep " + file.string() + " --output " + (dir / "out").string());
  CAPTURE(r.output);
  REQUIRE(r.code == 0);
  CHECK(contains(r.output, "variant     \"0000_name=a\\nb\"\n"));
  CHECK(contains(r.output, "variant     0001_name=c\n"));
}

TEST_CASE("sweep folder: written whole, kept on an identical rerun, another sweep in it refused") {
  const fs::path dir = work / "folder";
  fs::remove_all(dir);
  const std::string out = (dir / "sweep-out").string();
  const Result first = run_specwave("sweep " + example_sweep.string() + " --output " + out + " --slurm");
  CAPTURE(first.output);
  REQUIRE(first.code == 0);
  CHECK(contains(first.output,
                 "sweep       frequency-order: 4 variant(s), product of shots[*].sources[*].peak_frequency (2) x "
                 "scheme.order (2)"));
  CHECK(contains(first.output, "(written)"));
  CHECK(contains(first.output, "variant     0003_peak_frequency=12_order=8"));
  CHECK(contains(first.output, "(array 0-3%2, 4 task(s))"));
  for (const char* f : {"sweep.toml", "manifest.json", "manifest.csv", "job.sbatch", "variants/0000/case.toml",
                        "variants/0003/case.toml"})
    CHECK_MESSAGE(fs::exists(fs::path(out) / f), f);
  CHECK(fs::is_directory(fs::path(out) / "logs"));
  CHECK(read(fs::path(out) / "sweep.toml") == read(example_sweep));
  CHECK(read(fs::path(out) / "manifest.csv") ==
        "index,shots[*].sources[*].peak_frequency,scheme.order\n0,8,4\n1,8,8\n2,12,4\n3,12,8\n");
  CHECK(contains(read(fs::path(out) / "job.sbatch"), "specwave='" + fs::canonical(SPECWAVE_BINARY).string() + "'"));
  const std::string manifest = read(fs::path(out) / "manifest.json");

  // The same sweep again: nothing changes.
  const Result again = run_specwave("sweep " + example_sweep.string() + " --output " + out);
  CAPTURE(again.output);
  CHECK(again.code == 0);
  CHECK(contains(again.output, "exists with the same manifest: kept"));
  CHECK(read(fs::path(out) / "manifest.json") == manifest);
  // --template implies --slurm: job.sbatch is rewritten from the gpu template.
  CHECK(run_specwave("sweep " + example_sweep.string() + " --output " + out + " --template gpu").code == 0);
  CHECK(contains(read(fs::path(out) / "job.sbatch"), "#SBATCH --gpus-per-task=1\n"));
  // A template that cannot be filled: refused before anything is written (no half-made sweep folder).
  write(dir / "typo.sbatch", "#!/bin/bash\n#SBATCH --array={{array}}\ncd {{sweep_dri}}\n{{specwave}} {{command}}\n");
  const std::string fresh = (dir / "fresh").string();
  const Result typo = run_specwave("sweep " + example_sweep.string() + " --output " + fresh + " --template " +
                                   (dir / "typo.sbatch").string());
  CAPTURE(typo.output);
  CHECK(typo.code == 4);
  CHECK(contains(typo.output, "unknown placeholder {{sweep_dri}}"));
  CHECK_FALSE(fs::exists(fresh));

  // Another sweep into the same folder: refused, the folder untouched.
  std::string other = read(example_sweep);
  other.replace(other.find("[8.0, 12.0]"), 11, "[8.0, 11.0]");
  write(dir / "other.toml",
        std::string(other).replace(other.find("base = \"small.toml\""), 19,
                                   "base = \"" + (source_dir / "cases/sweeps/small.toml").string() + "\""));
  const Result refused = run_specwave("sweep " + (dir / "other.toml").string() + " --output " + out);
  CAPTURE(refused.output);
  CHECK(refused.code == 5);
  CHECK(contains(refused.output, "holds another sweep (its manifest.json differs"));
  CHECK(contains(refused.output, "use a new directory (sweep.directory or --output) or remove the old one"));
  CHECK(read(fs::path(out) / "manifest.json") == manifest);

  // The same manifest over a changed base case: refused too, naming the variant case.
  fs::copy_file(source_dir / "cases/sweeps/small.toml", dir / "small.toml");
  write(dir / "same.toml", read(example_sweep));
  const std::string out2 = (dir / "sweep-out2").string();
  REQUIRE(run_specwave("sweep " + (dir / "same.toml").string() + " --output " + out2).code == 0);
  std::string base = read(dir / "small.toml");
  write(dir / "small.toml", base.replace(base.find("duration = 0.3"), 14, "duration = 0.25"));
  const Result changed = run_specwave("sweep " + (dir / "same.toml").string() + " --output " + out2);
  CAPTURE(changed.output);
  CHECK(changed.code == 5);
  CHECK(contains(changed.output,
                 "holds another sweep (variants/0000/case.toml differs from this sweep's (did the base case change?)"));
  CHECK(contains(changed.output, "duration = 0.3"));

  // A non-empty folder that is no sweep folder is refused.
  write(dir / "busy" / "file.txt", "x");
  CHECK(run_specwave("sweep " + example_sweep.string() + " --output " + (dir / "busy").string()).code == 5);
}

TEST_CASE("job script by hand: USR1 is forwarded, the run's exit 10 requeues; TERM does not; failures are recorded") {
  const fs::path dir = work / "signals";
  fs::remove_all(dir);
  const std::string out = (dir / "sweep").string();
  REQUIRE(run_specwave("sweep " + example_sweep.string() + " --output " + out + " --slurm").code == 0);
  // A fake launcher: ignores the command, signals that it started, and exits 10 on USR1 or TERM (as the engine
  // does after its checkpoint), or with FAKE_EXIT when not signalled.
  write_executable(dir / "fake-run", R"(#!/bin/bash
trap 'kill $s 2>/dev/null; echo "fake run: got USR1"; exit 10' USR1
trap 'kill $s 2>/dev/null; echo "fake run: got TERM"; exit 10' TERM
echo "fake run: $*"
touch "$FAKE_STARTED"
[ -n "${FAKE_EXIT:-}" ] && exit "$FAKE_EXIT"
sleep 30 & s=$!
wait $s
)");
  write_executable(dir / "bin" / "scontrol", "#!/bin/bash\necho \"$*\" >> \"$(dirname \"$0\")/scontrol.calls\"\n");
  const std::string path = "PATH=" + (dir / "bin").string() + ":" + std::getenv("PATH");
  const fs::path job = fs::path(out) / "job.sbatch";
  const auto env = [&](int task, const fs::path& started, const std::string& fake_exit) {
    return std::vector<std::string>{path,
                                    "SLURM_ARRAY_TASK_ID=" + std::to_string(task),
                                    "SLURM_ARRAY_JOB_ID=77",
                                    "SLURM_JOB_ID=" + std::to_string(100 + task),
                                    "SLURM_RESTART_COUNT=2",
                                    "SPECWAVE_LAUNCHER=" + (dir / "fake-run").string(),
                                    "FAKE_STARTED=" + started.string(),
                                    "FAKE_EXIT=" + fake_exit};
  };
  const fs::path variants = fs::path(out) / "variants";

  SUBCASE("USR1 (the time limit is near): forwarded, exit 10, scontrol requeue, state requeued") {
    const fs::path log = fs::path(out) / "logs" / "0001.log";
    const pid_t pid = spawn_bash(job, env(1, dir / "started1", ""), log);
    REQUIRE(wait_for_file(dir / "started1", 20));
    CHECK(io::get_string(status_of(variants / "0001"), "state") == "running");
    kill(pid, SIGUSR1);
    CHECK(wait_exit(pid) == 10);
    const nlohmann::json st = status_of(variants / "0001");
    CHECK(io::get_string(st, "state") == "requeued");
    CHECK(io::get_number(st, "exit_code") == 10.0);
    CHECK(io::get_string(st, "signal") == "USR1");
    CHECK(io::get_string(st, "job_id") == "101");
    CHECK(io::get_string(st, "array_job_id") == "77");
    CHECK(io::get_number(st, "task_id") == 1.0);
    CHECK(io::get_number(st, "restart_count") == 2.0);
    CHECK(io::get_string(st, "ended").has_value());
    CHECK(read(dir / "bin" / "scontrol.calls") == "requeue 77_1\n");
    const std::string text = read(log);
    CAPTURE(text);
    CHECK(contains(text, "[sweep] start "));
    CHECK(contains(text, "variant 0001 (task 1) of frequency-order on "));
    CHECK(contains(text, "job 101 (array 77), restart 2"));
    CHECK(contains(text, "fake run: " + fs::canonical(SPECWAVE_BINARY).string() + " forward " + out +
                             "/variants/0001/case.toml --resume"));
    CHECK(contains(text, "received SIGUSR1"));
    CHECK(contains(text, "fake run: got USR1"));
    CHECK(contains(text, "exit code 10, requeued"));
  }
  SUBCASE("TERM (scancel, preemption): forwarded, exit 10, not requeued: state interrupted") {
    const pid_t pid = spawn_bash(job, env(2, dir / "started2", ""), fs::path(out) / "logs" / "0002.log");
    REQUIRE(wait_for_file(dir / "started2", 20));
    kill(pid, SIGTERM);
    CHECK(wait_exit(pid) == 10);
    const nlohmann::json st = status_of(variants / "0002");
    CHECK(io::get_string(st, "state") == "interrupted");
    CHECK(io::get_string(st, "signal") == "TERM");
    CHECK_FALSE(fs::exists(dir / "bin" / "scontrol.calls"));
  }
  SUBCASE("a failing run: its exit code, state failed; a successful one: completed") {
    CHECK(wait_exit(spawn_bash(job, env(0, dir / "started0", "7"), fs::path(out) / "logs" / "0000.log")) == 7);
    CHECK(io::get_string(status_of(variants / "0000"), "state") == "failed");
    CHECK(io::get_number(status_of(variants / "0000"), "exit_code") == 7.0);
    CHECK(status_of(variants / "0000").at("signal").is_null());
    CHECK(wait_exit(spawn_bash(job, env(3, dir / "started3", "0"), fs::path(out) / "logs" / "0003.log")) == 0);
    CHECK(io::get_string(status_of(variants / "0003"), "state") == "completed");
    CHECK(contains(read(fs::path(out) / "logs" / "0003.log"), "exit code 0, completed"));
  }
  SUBCASE("without SLURM_ARRAY_TASK_ID the script says how to run it") {
    const Result r = run_command("env -u SLURM_ARRAY_TASK_ID bash " + job.string());
    CHECK(r.code != 0);
    CHECK(contains(r.output, "SLURM_ARRAY_TASK_ID=i SPECWAVE_LAUNCHER= bash job.sbatch"));
  }
}

namespace {

std::string status_json(int index, const std::string& state, const std::string& exit_code) {
  return "{\"index\": " + std::to_string(index) + ", \"state\": \"" + state + "\", \"exit_code\": " + exit_code +
         ", \"signal\": null, \"job_id\": \"" + std::to_string(500 + index) +
         "\", \"array_job_id\": \"500\", \"task_id\": " + std::to_string(index) +
         ", \"host\": \"node7\", \"restart_count\": 0, \"started\": \"2025-01-01T00:00:00Z\", "
         "\"ended\": \"2025-01-01T00:01:00Z\"}\n";
}

// A sweep folder of the example sweep in `out`, with variant 0 run for real (its status written as the job script
// would), 1 failed (exit 7, with a log), 2 requeued, 3 missing.
void fabricate_sweep(const std::string& out) {
  REQUIRE(run_specwave("sweep " + example_sweep.string() + " --output " + out).code == 0);
  const fs::path v = fs::path(out) / "variants";
  const Result run = run_specwave("forward -q " + (v / "0000" / "case.toml").string());
  CAPTURE(run.output);
  REQUIRE(run.code == 0);
  write(v / "0000" / "status.json", status_json(0, "completed", "0"));
  write(v / "0001" / "status.json", status_json(1, "failed", "7"));
  write(fs::path(out) / "logs" / "0001.log",
        "[sweep] start\nline a\nline b\nline c\nline d\n"
        "specwave: error: unstable at shot 0 step 40\n[sweep] end: exit code 7, failed\n");
  write(v / "0002" / "status.json", status_json(2, "requeued", "10"));
}

}  // namespace

TEST_CASE("collect: states from status.json and outputs, trace metrics, summary.csv and summary.h5") {
  const fs::path dir = work / "collect";
  fs::remove_all(dir);
  const std::string out = (dir / "sweep").string();
  fabricate_sweep(out);
  const Result r = run_specwave("collect " + out);
  CAPTURE(r.output);
  CHECK(r.code == 12);
  CHECK(contains(r.output,
                 "collect     frequency-order: 4 variant(s): 1 completed, 1 failed, 0 interrupted, 0 running, 1 "
                 "requeued, 1 missing"));
  CHECK(contains(r.output, "failed      0001 (exit code 7, host node7, job 501); log " + out + "/logs/0001.log\n"));
  // The last 5 lines of the failed variant's log, not the first ones.
  CHECK(contains(r.output, "            | specwave: error: unstable at shot 0 step 40\n"));
  CHECK(contains(r.output, "            | line b\n"));
  CHECK_FALSE(contains(r.output, "| line a"));
  CHECK(contains(
      r.output, "missing     0003 (no status.json: never started, or still pending); log " + out + "/logs/0003.log\n"));
  CHECK(contains(r.output, "(no log yet)"));
  CHECK_FALSE(contains(r.output, "requeued    0002"));  // requeued: Slurm runs it again, nothing to report

  // The metrics of the completed variant, from its traces.h5.
  const io::ShotGathers g = io::read_trace_file(out + "/variants/0000/output/traces.h5");
  double sum2 = 0, max_abs = 0;
  for (float u : g.traces) sum2 += double(u) * u, max_abs = std::max(max_abs, double(std::abs(u)));
  const SweepResults results = collect_sweep(out);
  REQUIRE(results.variants.size() == 4);
  const VariantResult& done = results.variants[0];
  CHECK(done.state == VariantState::completed);
  CHECK(*done.trace_l2 == doctest::Approx(std::sqrt(sum2)).epsilon(1e-12));
  CHECK(*done.trace_max_abs == doctest::Approx(max_abs).epsilon(1e-12));
  CHECK(done.trace_l2 > 0.0);
  CHECK(done.n_receivers == 13);
  CHECK(done.n_shots == 1);
  CHECK(done.nt == g.nt);
  CHECK(results.variants[1].state == VariantState::failed);
  CHECK(results.variants[2].state == VariantState::requeued);
  CHECK(results.variants[3].state == VariantState::missing);

  // summary.csv: one row per variant, one column per axis.
  const std::string csv = read(out + "/summary.csv");
  CAPTURE(csv);
  CHECK(csv.rfind("index,name,shots[*].sources[*].peak_frequency,scheme.order,state,exit_code,restart_count,seconds,"
                  "cells_per_second,propagator,nt,dt,n_shots,n_receivers,trace_l2,trace_max_abs,host,job_id,note,log\n",
                  0) == 0);
  CHECK(contains(csv, "\n0,0000_peak_frequency=8_order=4,8,4,completed,0,0,"));
  CHECK(contains(csv, "\n1,0001_peak_frequency=8_order=8,8,8,failed,7,0,"));
  CHECK(contains(csv, "\n3,0003_peak_frequency=12_order=8,12,8,missing,,,"));
  CHECK(contains(csv, "," + fmt::format("{}", *done.trace_l2) + ","));

  // summary.h5: the same table, typed.
  io::h5::Reader h5(out + "/summary.h5");
  CHECK(io::h5::read_attribute_string(h5.id(), "file_type") == "specwave.sweep_summary");
  CHECK(io::h5::read_attribute_string(h5.id(), "sweep_name") == "frequency-order");
  CHECK(io::h5::read_attribute_string(h5.id(), "command") == "forward");
  CHECK(h5.read_strings("state") == std::vector<std::string>{"completed", "failed", "requeued", "missing"});
  CHECK(h5.read_strings("name")[3] == "0003_peak_frequency=12_order=8");
  CHECK(h5.info("exit_code").dtype_name() == "int64");
  CHECK(h5.info("parameters/scheme.order").dtype_name() == "int64");
  const auto frequency = h5.read_floating<double>("parameters/shots[*].sources[*].peak_frequency", {4});
  CHECK(frequency == std::vector<double>{8.0, 8.0, 12.0, 12.0});
  const auto l2 = h5.read_floating<double>("trace_l2", {4});
  CHECK(l2[0] == doctest::Approx(std::sqrt(sum2)).epsilon(1e-12));
  CHECK(std::isnan(l2[1]));
  std::vector<std::int64_t> exit_codes(4);
  io::h5::Handle d = h5.open_dataset("exit_code");
  H5Dread(d.id(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, exit_codes.data());
  CHECK(exit_codes == std::vector<std::int64_t>{0, 7, 10, -1});

  // exit 0 without outputs is a failure; all completed is exit 0.
  write(fs::path(out) / "variants" / "0003" / "status.json", status_json(3, "completed", "0"));
  CHECK(collect_sweep(out).variants[3].state == VariantState::failed);
  CHECK(contains(collect_sweep(out).variants[3].note, "exit code 0 but no outputs"));
  CHECK(run_specwave("collect " + (dir / "nothing").string()).code == 2);  // not a folder: usage
  fs::create_directories(dir / "empty");
  CHECK(run_specwave("collect " + (dir / "empty").string()).code == 4);
  // A manifest whose index or command was edited is damaged (an index of 1e18 was written as -1486618624, a
  // command "rm" collected as forward).
  const std::string manifest = read(out + "/manifest.json");
  for (const auto& [from, to, expected] : std::vector<std::array<std::string, 3>>{
           {"\"index\": 1", "\"index\": 1000000000000000000", "variant 1 has index 1000000000000000000"},
           {"\"command\": \"forward\"", "\"command\": \"rm\"", "command \"rm\" is not one a sweep runs"}}) {
    const std::string message = expected;  // (clang 14: no structured bindings in CAPTURE)
    CAPTURE(message);
    REQUIRE(contains(manifest, from));
    std::string edited = manifest;
    edited.replace(edited.find(from), from.size(), to);
    write(fs::path(out) / "manifest.json", edited);
    const Result r = run_specwave("collect " + out);
    CHECK(r.code == 4);
    CHECK(contains(r.output, "the manifest is damaged"));
    CHECK(contains(r.output, message));
  }
  write(fs::path(out) / "manifest.json", manifest);
}

TEST_CASE("sweep --resume submits only the failed and missing variants (a fake sbatch records the array)") {
  const fs::path dir = work / "resume";
  fs::remove_all(dir);
  const std::string out = (dir / "sweep").string();
  const Result before =
      run_specwave("sweep " + example_sweep.string() + " --output " + (dir / "none").string() + " --resume");
  CHECK(before.code == 2);
  CHECK(contains(before.output, "no sweep folder to resume"));
  fabricate_sweep(out);
  // The fake sbatch records its arguments and the job script's array line, and answers a job id as --parsable does.
  write_executable(dir / "bin" / "sbatch", R"(#!/bin/bash
echo "$*" >> "$(dirname "$0")/sbatch.calls"
grep -- '--array=' "${@: -1}" >> "$(dirname "$0")/sbatch.calls"
echo "4242;cluster"
)");
  const std::string path = "PATH=" + (dir / "bin").string() + ":" + std::getenv("PATH");
  const Result r = run_specwave("sweep " + example_sweep.string() + " --output " + out + " --resume --submit", path);
  CAPTURE(r.output);
  REQUIRE(r.code == 0);
  CHECK(contains(r.output, "running     1 variant(s) running or requeued: not resubmitted"));
  CHECK(contains(r.output, "resume      2 variant(s): 0001 (failed, exit 7), 0003 (missing)"));
  CHECK(contains(r.output, "submitted   job 4242 (array 1,3%2)"));
  CHECK(read(dir / "bin" / "sbatch.calls") == "--parsable job.sbatch\n#SBATCH --array=1,3%2\n");
  const std::string submissions = read(out + "/submissions.jsonl");
  const nlohmann::json record = io::parse_json(submissions, "submissions.jsonl");
  CHECK(io::get_string(record, "job_id") == "4242");
  CHECK(io::get_string(record, "array") == "1,3%2");
  REQUIRE(record.at("indices").size() == 2);
  CHECK(record.at("indices").at(1) == 3);

  // --max-parallel overrides the sweep file.
  CHECK(
      run_specwave("sweep " + example_sweep.string() + " --output " + out + " --resume --max-parallel 1", path).code ==
      0);
  CHECK(contains(read(out + "/job.sbatch"), "#SBATCH --array=1,3%1\n"));

  // sbatch refusing the job: its message, exit 13; sbatch missing: exit 13.
  write_executable(dir / "bin" / "sbatch",
                   "#!/bin/bash\necho 'sbatch: error: invalid partition specified: gpu' >&2\nexit 1\n");
  const Result refused =
      run_specwave("sweep " + example_sweep.string() + " --output " + out + " --resume --submit", path);
  CAPTURE(refused.output);
  CHECK(refused.code == 13);
  CHECK(contains(refused.output, "sbatch refused"));
  CHECK(contains(refused.output, "invalid partition specified: gpu"));
  // A PATH with every program of this one except sbatch (this machine may have Slurm's client installed).
  fs::create_directories(dir / "no-sbatch");
  std::istringstream dirs(std::getenv("PATH"));
  for (std::string d; std::getline(dirs, d, ':');)
    if (fs::is_directory(d))
      for (const auto& e : fs::directory_iterator(d))
        if (e.path().filename() != "sbatch" && !fs::exists(dir / "no-sbatch" / e.path().filename()))
          fs::create_symlink(e.path(), dir / "no-sbatch" / e.path().filename());
  const Result missing = run_specwave("sweep " + example_sweep.string() + " --output " + out + " --submit",
                                      "PATH=" + (dir / "no-sbatch").string());
  CAPTURE(missing.output);
  CHECK(missing.code == 13);
  CHECK(contains(missing.output, "sbatch not found on PATH"));

  // Nothing left to run: exit 0, nothing submitted.
  for (const char* id : {"0001", "0002", "0003"}) {
    fs::copy(fs::path(out) / "variants" / "0000" / "output", fs::path(out) / "variants" / id / "output",
             fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    write(fs::path(out) / "variants" / id / "status.json", status_json(std::stoi(id), "completed", "0"));
  }
  const Result nothing =
      run_specwave("sweep " + example_sweep.string() + " --output " + out + " --resume --submit", path);
  CAPTURE(nothing.output);
  CHECK(nothing.code == 0);
  CHECK(contains(nothing.output, "nothing to resubmit"));
  CHECK(run_specwave("collect " + out).code == 0);

  // A completed variant whose traces.h5 is damaged: collect counts it failed, and --resume runs it again.
  const fs::path damaged = fs::path(out) / "variants" / "0002" / "output" / "traces.h5";
  REQUIRE(fs::exists(damaged));
  fs::resize_file(damaged, 1000);
  CHECK(run_specwave("collect " + out).code != 0);
  const Result again = run_specwave("sweep " + example_sweep.string() + " --output " + out + " --resume", path);
  CAPTURE(again.output);
  CHECK(again.code == 0);
  CHECK(contains(again.output, "resume      1 variant(s): 0002 (failed"));
}

TEST_CASE(
    "an invert sweep: the job script runs invert --resume (from the beginning without a state file), collect reads "
    "iterations.jsonl") {
  const fs::path dir = work / "invert";
  fs::remove_all(dir);
  // The small inversion of tests/test_invert.cpp: about a second a variant.
  const std::string base = R"(name = "invert-small"
[grid]
shape = [26, 24, 28]
spacing = 10.0
[model]
type = "homogeneous"
velocity = 2000.0
[time]
duration = 0.1
[[shots]]
[[shots.sources]]
position = [100.0, 120.0, 70.0]
peak_frequency = 15.0
[receivers]
points = [[100.0, 110.0, 200.0], [150.0, 130.0, 190.0], [60.0, 120.0, 200.0]]
[boundary]
pml_width = 6
[run]
precision = "fp64"
[output]
directory = "out"
plots = false
[inversion]
velocity_min = 1800.0
velocity_max = 2300.0
iterations = 2
[inversion.true_model]
type = "gaussian"
velocity = 2000.0
anomaly = 150.0
center = [120.0, 120.0, 135.0]
radius = 40.0
)";
  const fs::path sweep = write_sweep(dir, "inv",
                                     "command = \"invert\"\ndirectory = \"out\"\n[axes]\n"
                                     "\"inversion.optimizer\" = [\"lbfgs\", \"steepest\"]\n\"time.duration\" = [0.1]\n",
                                     base);
  const Result r = run_specwave("sweep " + sweep.string() + " --slurm");
  CAPTURE(r.output);
  REQUIRE(r.code == 0);
  const std::string out = (dir / "out").string();
  for (int i = 0; i < 2; ++i) {
    const std::string log = out + "/logs/000" + std::to_string(i) + ".log";
    CHECK(run_command("SLURM_ARRAY_TASK_ID=" + std::to_string(i) + " SPECWAVE_LAUNCHER= bash " + out +
                      "/job.sbatch >> " + log)
              .code == 0);
    CAPTURE(read(log));
    // The first run passes --resume too: without a state file invert starts from the beginning.
    CHECK(contains(read(log), "invert " + out + "/variants/000" + std::to_string(i) + "/case.toml --resume\n"));
    CHECK(contains(read(log), "no inversion state in"));
  }
  // A second run of a task continues from the state file (nothing left to do).
  CHECK(run_command("SLURM_ARRAY_TASK_ID=1 SPECWAVE_LAUNCHER= bash " + out + "/job.sbatch > " + out + "/logs/again.log")
            .code == 0);
  CHECK(contains(read(out + "/logs/again.log"), "invert " + out + "/variants/0001/case.toml --resume\n"));
  const Result c = run_specwave("collect " + out);
  CAPTURE(c.output);
  CHECK(c.code == 0);
  const SweepResults results = collect_sweep(out);
  for (const auto& v : results.variants) {
    CHECK(v.state == VariantState::completed);
    CHECK(v.iterations == 2);
    CHECK(v.relative_misfit.value_or(1) < 1.0);
    CHECK(v.model_error.has_value());
  }
  CHECK(read(out + "/summary.csv")
            .rfind("index,name,inversion.optimizer,time.duration,state,exit_code,restart_count,seconds,"
                   "iterations,misfit,relative_misfit,model_error,",
                   0) == 0);
  // Without an [inversion] table the variants are refused before anything is written.
  const Result refused = run_specwave("sweep " + write_sweep(dir, "inv2",
                                                             "command = \"invert\"\ndirectory = \"out2\"\n[axes]\n"
                                                             "\"scheme.order\" = [8]\n")
                                                     .string());
  CHECK(refused.code == 3);
  CHECK(contains(refused.output, "sweep variant 0000 of 1 (scheme.order = 8): "));
  CHECK(contains(refused.output, "invert needs an [inversion] table"));
  CHECK_FALSE(fs::exists(dir / "out2"));
  // Invert's checks of its bounds, here the Lame parameters': a variant whose box allows a vp above velocity_max
  // (sqrt((8e9 + 2 3e9) / 2000) = 2645.75 m/s) is refused before anything is written.
  std::string lame = std::regex_replace(base, std::regex(R"(velocity = 2000.0\n\[time\])"),
                                        "velocity = 2000.0\nshear_velocity = 1000.0\ndensity = 2000.0\n[time]");
  lame = std::regex_replace(lame, std::regex("peak_frequency = 15.0"), "peak_frequency = 8.0");  // (the S wave)
  lame = std::regex_replace(lame, std::regex("velocity_min = 1800.0\nvelocity_max = 2300.0"),
                            "parameters = [\"lambda\", \"mu\"]\nvelocity_max = 2500.0\nlambda_min = 1e9\n"
                            "lambda_max = 5e9\nmu_min = 1e9\nmu_max = 3e9");
  lame = std::regex_replace(lame, std::regex("anomaly = 150.0"),
                            "anomaly = 150.0\nshear_velocity = 1000.0\ndensity = 2000.0");
  const Result box = run_specwave("sweep " + write_sweep(dir, "inv3",
                                                         "command = \"invert\"\ndirectory = \"out3\"\n[axes]\n"
                                                         "\"inversion.lambda_max\" = [5e9, 8e9]\n",
                                                         lame)
                                                 .string());
  CAPTURE(box.output);
  CHECK(box.code == 3);
  CHECK(contains(box.output, "sweep variant 0001 of 2 (inversion.lambda_max = 8000000000.0): "));
  CHECK(contains(box.output, "vp = sqrt((lambda_max + 2 mu_max) / rho) = 2645.75 m/s"));
  CHECK_FALSE(fs::exists(dir / "out3"));
}

// Registered as its own CTest test (sweep_local_end_to_end): the example sweep's 4 variants run through the
// generated job.sbatch without Slurm, then collected.
TEST_CASE("end to end: sweep, each task by hand through job.sbatch, collect") {
  const fs::path dir = work / "end-to-end";
  fs::remove_all(dir);
  const std::string out = (dir / "frequency-order").string();
  const Result sweep = run_specwave("sweep " + example_sweep.string() + " --output " + out + " --slurm");
  CAPTURE(sweep.output);
  REQUIRE(sweep.code == 0);
  // The job script's launcher (srun under Slurm) runs the command as it is.
  write_executable(dir / "launcher", "#!/bin/bash\nexec \"$@\"\n");
  for (int i = 0; i < 4; ++i) {
    const std::string log = out + "/logs/000" + std::to_string(i) + ".log";
    const Result task = run_command("cd " + dir.string() + " && SLURM_ARRAY_TASK_ID=" + std::to_string(i) +
                                    " SPECWAVE_LAUNCHER=" + (dir / "launcher").string() + " OMP_NUM_THREADS=1 bash " +
                                    out + "/job.sbatch >> " + log);
    CAPTURE(read(log));
    CHECK(task.code == 0);
    const nlohmann::json st = status_of(fs::path(out) / "variants" / ("000" + std::to_string(i)));
    CHECK(io::get_string(st, "state") == "completed");
    CHECK(io::get_number(st, "exit_code") == 0.0);
    CHECK(st.at("job_id").is_null());  // not under Slurm
  }
  // Task 0 started again after it completed (a requeue): its run is not repeated.
  const Result requeued =
      run_command("cd " + dir.string() + " && SLURM_ARRAY_TASK_ID=0 SPECWAVE_LAUNCHER=" + (dir / "launcher").string() +
                  " OMP_NUM_THREADS=1 bash " + out + "/job.sbatch");
  CAPTURE(requeued.output);
  CHECK(requeued.code == 0);
  CHECK(contains(requeued.output, "this run completed already"));
  CHECK(io::get_string(status_of(fs::path(out) / "variants" / "0000"), "state") == "completed");
  const Result collect = run_specwave("collect " + out);
  CAPTURE(collect.output);
  CHECK(collect.code == 0);
  CHECK(contains(collect.output, "4 variant(s): 4 completed, 0 failed"));
  const SweepResults results = collect_sweep(out);
  for (const auto& v : results.variants) {
    CAPTURE(v.name);
    CHECK(v.trace_l2.value_or(0) > 0);
    CHECK(v.n_receivers == 13);
  }
  // Higher peak frequency: a different wavefield; the order changes the traces only a little.
  const auto l2 = [&](int i) { return *results.variants[i].trace_l2; };
  CHECK(std::abs(l2(0) - l2(1)) < 0.05 * l2(0));
  CHECK(std::abs(l2(0) - l2(2)) > 1e-3 * l2(0));
}
