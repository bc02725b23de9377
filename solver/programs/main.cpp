// specwave: the command-line program. Commands parse their arguments, call the library, and turn
// specwave::Error into the documented exit codes (docs/cli.md). Nothing else here knows about exit codes.
#include <omp.h>
#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include "io/case_file.hpp"
#include "io/file_kind.hpp"
#include "io/hdf5.hpp"
#include "io/segy.hpp"
#include "io/suggest.hpp"
#include "kernels/cuda/device.hpp"
#include "solver/batch/collect.hpp"
#include "solver/batch/sweep.hpp"
#include "solver/case/errors.hpp"
#include "solver/forward/checkpoint.hpp"
#include "solver/forward/forward.hpp"
#include "solver/inversion/gradient_check.hpp"
#include "solver/inversion/imaging.hpp"
#include "solver/inversion/inversion.hpp"
#include "solver/inversion/objective.hpp"
#include "solver/parallel/comm.hpp"
#include "solver/plan/plan.hpp"
#include "solver/programs/info.hpp"
#include "specwave/build_info.hpp"
#include "validation/regression.hpp"
#include "validation/validate.hpp"

namespace {

using namespace specwave;

struct Overrides {
  std::string backend, precision, output_dir;
  int threads = -1, shot_groups = -1, checkpoint_every = -1;
  double checkpoint_minutes = -1;
  std::vector<int> process_grid;
  bool confine_writes = false;
};

// A finite number >= 0: CLI::NonNegativeNumber lets "nan" through (nan < 0 is false), and "inf" means nothing here.
const CLI::Validator finite_non_negative(
    [](std::string& text) -> std::string {
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (end == text.c_str() || *end != '\0' || !std::isfinite(v) || v < 0)
        return "must be a finite number >= 0 (found " + text + ")";
      return "";
    },
    "FINITE >= 0");

// A whole number in [lo, hi], said in those words: CLI11's Range and PositiveNumber print their open bound as
// DBL_MAX in full (309 digits) and "abc" as out of range.
// A folder path that is not empty (an empty --output-dir fell back to the case's output.directory unsaid).
const CLI::Validator non_empty_path(
    [](std::string& text) -> std::string {
      return text.empty() ? "an empty path; give the folder (\".\" for the current one)" : std::string();
    },
    "PATH");

CLI::Validator whole_number(long long lo, long long hi = std::numeric_limits<long long>::max()) {
  const std::string bounds =
      hi == std::numeric_limits<long long>::max() ? fmt::format(">= {}", lo) : fmt::format("in {}..{}", lo, hi);
  return CLI::Validator(
      [lo, hi, bounds](std::string& text) -> std::string {
        errno = 0;
        char* end = nullptr;
        const long long v = std::strtoll(text.c_str(), &end, 10);
        if (end == text.c_str() || *end != '\0' || errno == ERANGE || v < lo || v > hi)
          return "must be a whole number " + bounds + " (found " + text + ")";
        return "";
      },
      bounds);
}

// A command-line error in the house format: one line "specwave: error: ..." (exit 2), naming the command, with
// "did you mean" for a mistyped command, printed by rank 0 only.
int usage_error(const CLI::App& app, int argc, char** argv, const CLI::ParseError& e) {
  std::vector<std::string_view> commands;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    commands.push_back(sub->get_name());
  std::string message;
  const std::string first = argc > 1 ? argv[1] : "";
  const bool known = std::find(commands.begin(), commands.end(), first) != commands.end();
  if (!first.empty() && first[0] != '-' && !known) {
    std::string list;
    for (auto c : commands) list += (list.empty() ? "" : ", ") + std::string(c);
    message = fmt::format("unknown command '{}'; {} (commands: {}; specwave --help describes them)", first,
                          io::suggest(first, commands, "give one of the commands"), list);
  } else {
    std::string what = e.what();
    for (char& ch : what)
      if (ch == '\n') ch = ' ';
    std::string command = "specwave";
    for (const CLI::App* sub = &app; sub;) {  // the deepest command given: "specwave segy export"
      const auto parsed = sub->get_subcommands();
      sub = parsed.empty() ? nullptr : parsed.front();
      if (sub) command += " " + sub->get_name();
    }
    message = fmt::format("{}; run {} --help for its options", what, command);
  }
  if (Comm::world().rank() == 0) std::fprintf(stderr, "specwave: error: %s\n", message.c_str());
  return int(ExitCode::usage);
}

void add_overrides(CLI::App* cmd, Overrides& o) {
  cmd->add_option("--backend", o.backend, "Override run.backend")->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  cmd->add_option("--precision", o.precision, "Override run.precision")->check(CLI::IsMember({"fp32", "fp64"}));
  cmd->add_option("--output-dir", o.output_dir, "Override output.directory (relative to the current directory)")
      ->check(non_empty_path);
  cmd->add_option("--threads", o.threads, "OpenMP threads (0: all)")->check(whole_number(0, max_threads));
  cmd->add_flag("--confine-writes", o.confine_writes,
                "Write only inside the output folder, which must be --output-dir or inside the current directory "
                "(also SPECWAVE_CONFINE_WRITES=1): for running a case file from someone else");
  cmd->add_option("--shot-groups", o.shot_groups,
                  "Override run.shot_groups (MPI: rank groups running shots side by side; 0: choose)")
      ->check(whole_number(0));
  cmd->add_option("--process-grid", o.process_grid, "Override run.process_grid (MPI: ranks along z,y,x, e.g. 2,1,1)")
      ->delimiter(',')
      ->expected(3)
      ->check(whole_number(1));
}

Case load_case(const std::string& path, const Overrides& o) {
  Case c = io::read_case_file(path);
  if (o.backend == "cpu") c.run.backend = BackendKind::cpu;
  if (o.backend == "cuda") c.run.backend = BackendKind::cuda;
  if (o.backend == "auto") c.run.backend = BackendKind::auto_select;
  if (o.precision == "fp32") c.run.precision = Precision::fp32;
  if (o.precision == "fp64") c.run.precision = Precision::fp64;
  if (!o.output_dir.empty()) c.output.directory = std::filesystem::absolute(o.output_dir).string();
  if (o.threads >= 0) c.run.threads = o.threads;
  if (o.shot_groups >= 0) c.run.shot_groups = o.shot_groups;
  if (o.checkpoint_every >= 0) c.run.checkpoint_every = o.checkpoint_every;
  if (o.checkpoint_minutes >= 0) c.run.checkpoint_minutes = o.checkpoint_minutes;
  if (o.process_grid.size() == 3)
    c.run.process_grid = std::array<int, 3>{o.process_grid[0], o.process_grid[1], o.process_grid[2]};
  const char* confine = std::getenv("SPECWAVE_CONFINE_WRITES");
  if (o.confine_writes || (confine && std::string(confine) == "1")) check_writes_confined(c, !o.output_dir.empty());
  return c;
}

// This process's place in the MPI job (one rank without mpirun); `world` must outlive the plan's making.
RankPlacement placement(const Comm& world) {
  const Comm node = world.split_node();
  return {world.size(), world.rank(), node.size(), node.rank(), &world};
}

void print(const std::string& text) {
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

int run(int argc, char** argv) {
  CLI::App app{
      "specwave: 3D acoustic wave simulation (FDTD) with validation against an independent reference.\n"
      "Exit codes: 0 ok, 2 usage, 3 invalid case, 4 input file, 5 output, 6 memory, 7 unstable run, "
      "8 validation or gradient check failed, 9 backend unavailable, 11 inversion line search failed, "
      "12 sweep variants failed or missing (collect), 13 sbatch failed, 1 internal error (docs/cli.md)."};
  app.set_version_flag("--version", std::string("specwave ") + build::version + " (" + build::git_hash + ")");
  app.require_subcommand(1);

  Overrides forward_o, check_o, validate_o;
  std::string forward_case, check_case, validate_case_path;
  bool quiet = false, forward_resume = false;
  long long max_points = 2'000'000;

  auto* forward = app.add_subcommand("forward", "Run the forward simulation of a case file (all shots)");
  forward->add_option("case", forward_case, "Case file (TOML, docs/case-file.md)")
      ->required()
      ->check(CLI::ExistingFile);
  forward->add_flag("-q,--quiet", quiet, "No progress lines");
  forward->add_flag(
      "--resume", forward_resume,
      "Continue from the checkpoint in output.directory/checkpoint when there is one, else start from the "
      "beginning (batch scripts always pass it)");
  forward
      ->add_option("--checkpoint-every", forward_o.checkpoint_every, "Override run.checkpoint_every (steps; 0: none)")
      ->check(whole_number(0));
  forward
      ->add_option("--checkpoint-minutes", forward_o.checkpoint_minutes,
                   "Override run.checkpoint_minutes (minutes between checkpoints; 0: none)")
      ->check(finite_non_negative);
  add_overrides(forward, forward_o);

  auto* check =
      app.add_subcommand("check", "Validate a case and print the plan (dt, CFL, sampling, memory) without running");
  check->add_option("case", check_case, "Case file")->required()->check(CLI::ExistingFile);
  add_overrides(check, check_o);

  auto* info = app.add_subcommand("info", "Print the build (version, backends, libraries) and the hardware found");

  auto* validate = app.add_subcommand(
      "validate",
      "Run a case through the engine (fp64, fp32) and the independent Eigen reference; print error norms. "
      "With --cases: the regression cases of a folder against their stored references");
  RegressionOptions regression;
  std::string cases_folder;
  auto* case_opt = validate->add_option("case", validate_case_path, "Case file")->check(CLI::ExistingFile);
  auto* cases_opt =
      validate->add_option("--cases", cases_folder, "Folder of reference cases ([validation] tables), e.g. cases/")
          ->check(CLI::ExistingDirectory)
          ->excludes(case_opt);
  validate->add_option("--tier", regression.tier, "With --cases: smoke (the CI cases) or full")
      ->check(CLI::IsMember({"smoke", "full"}))
      ->capture_default_str()
      ->needs(cases_opt);
  validate->add_flag("--update", regression.update, "With --cases: regenerate the stored references (review the diff)")
      ->needs(cases_opt);
  validate
      ->add_option("--report", regression.report_dir, "With --cases: write report.md and PNG plots into this folder")
      ->needs(cases_opt);
  bool validate_quiet = false;
  validate->add_flag("-q,--quiet", validate_quiet,
                     "No progress lines (one per shot of a case, one per regression case)");
  validate->add_option("--max-points", max_points, "Largest grid the reference will run")
      ->check(whole_number(1))
      ->capture_default_str();
  add_overrides(validate, validate_o);

  std::string gradient_case;
  int gradient_threads = -1;
  auto* check_gradient_cmd = app.add_subcommand(
      "check-gradient",
      "Check the adjoint and the gradient of a case with an [inversion] table: dot-product test of the Born operator "
      "(fp64, fp32) and Taylor test of the misfit gradient (fp64)");
  check_gradient_cmd->add_option("case", gradient_case, "Case file")->required()->check(CLI::ExistingFile);
  check_gradient_cmd->add_option("--threads", gradient_threads, "OpenMP threads (0: all)")
      ->check(whole_number(0, max_threads));
  std::string gradient_backend, invert_backend;
  check_gradient_cmd->add_option("--backend", gradient_backend, "Override run.backend")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));

  std::string segy_in, segy_out;
  auto* segy = app.add_subcommand("segy", "Convert shot gathers between traces.h5 and SEG-Y rev 2 (docs/segy.md)");
  segy->require_subcommand(1);
  auto* segy_export = segy->add_subcommand("export", "traces.h5 -> SEG-Y rev 2 (IEEE float32, coordinates in mm)");
  segy_export->add_option("traces", segy_in, "A traces.h5 written by specwave forward")
      ->required()
      ->check(CLI::ExistingFile);
  segy_export->add_option("output", segy_out, "The SEG-Y file to write")->required();
  bool segy_ascii = false;
  segy_export->add_flag("--ascii-header", segy_ascii,
                        "Write the textual header in ASCII (default: EBCDIC, which most SEG-Y readers assume)");
  auto* segy_import = segy->add_subcommand("import", "SEG-Y (rev 0-2, IEEE or IBM floats) -> traces.h5");
  segy_import->add_option("segy", segy_in, "The SEG-Y file to read")->required()->check(CLI::ExistingFile);
  segy_import->add_option("output", segy_out, "The traces.h5 to write (usable as inversion.observed)")->required();

  std::string invert_case, invert_output_dir;
  int invert_threads = -1;
  bool invert_quiet = false, invert_resume = false;
  auto* invert_cmd = app.add_subcommand(
      "invert",
      "Full-waveform inversion of a case with an [inversion] table: recover the velocity from the observed data, "
      "starting from [model]");
  invert_cmd->add_option("case", invert_case, "Case file")->required()->check(CLI::ExistingFile);
  invert_cmd->add_option("--threads", invert_threads, "OpenMP threads (0: all)")->check(whole_number(0, max_threads));
  invert_cmd
      ->add_option("--output-dir", invert_output_dir, "Override output.directory (relative to the current directory)")
      ->check(non_empty_path);
  bool invert_confine = false;
  invert_cmd->add_flag("--confine-writes", invert_confine,
                       "Write only inside the output folder (also SPECWAVE_CONFINE_WRITES=1); see forward --help");
  invert_cmd->add_option("--backend", invert_backend, "Override run.backend")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  invert_cmd->add_flag("-q,--quiet", invert_quiet, "No plan and no progress lines");
  invert_cmd->add_flag("--resume", invert_resume,
                       "Continue from the last completed iteration (output.directory/inversion_state.h5) when there is "
                       "one, else start from the beginning (batch scripts always pass it)");

  SweepOptions sweep_o;
  int sweep_max_parallel = -1;
  auto* sweep_cmd = app.add_subcommand(
      "sweep",
      "Expand a sweep file (a base case and axes of case-file keys) into variant cases, check every one, and write "
      "the sweep folder; with --slurm a job-array script, with --submit also submit it (docs/batch.md)");
  sweep_cmd->add_option("sweep_file", sweep_o.sweep_file, "Sweep file (TOML with [sweep] and [axes] tables)")
      ->required()
      ->check(CLI::ExistingFile);
  sweep_cmd
      ->add_option("--output", sweep_o.output,
                   "The sweep folder (overrides sweep.directory; relative to the current directory)")
      ->check(non_empty_path);
  sweep_cmd->add_flag("--slurm", sweep_o.slurm, "Also write job.sbatch, a Slurm job array with one task per variant");
  sweep_cmd->add_flag("--submit", sweep_o.submit, "Write job.sbatch and submit it with sbatch (implies --slurm)");
  sweep_cmd->add_option(
      "--template", sweep_o.job.template_choice,
      "Job script template: cpu, gpu (scripts/slurm/) or the path of a site template (default: gpu when "
      "the variants run on cuda or slurm.gpus_per_task is set, else cpu); implies --slurm");
  sweep_cmd->add_flag(
      "--resume", sweep_o.resume,
      "With an existing sweep folder: write (and with --submit submit) an array of only the variants that "
      "failed, were interrupted or are missing");
  sweep_cmd
      ->add_option("--max-parallel", sweep_max_parallel,
                   "At most M tasks of the array at once (overrides slurm.max_parallel); implies --slurm")
      ->check(whole_number(1));

  std::string collect_dir;
  auto* collect_cmd = app.add_subcommand(
      "collect",
      "State and results of every variant of a sweep folder: summary.csv and summary.h5, a table, and the "
      "log tails of variants that failed or are missing (exit 12 unless all completed)");
  collect_cmd->add_option("sweep_dir", collect_dir, "The sweep folder written by specwave sweep")
      ->required()
      ->check(CLI::ExistingDirectory);

  // gradient, born, migrate (solver/inversion/imaging.hpp): one pass over the shots each, the result in
  // output.directory.
  struct ImagingCommand {
    CLI::App* app;
    ImagingSummary (*run)(const Case&, const ImagingOptions&);
    std::string case_path{};
    Overrides o{};
    ImagingOptions options{};
  };
  std::array<ImagingCommand, 3> imaging{
      {{app.add_subcommand("gradient",
                           "The misfit of a case with an [inversion] table and its gradient (and the source "
                           "illumination) at the model, to gradient.h5: for an optimiser outside specwave"),
        run_gradient},
       {app.add_subcommand("born",
                           "The Born (linearised) data of a model perturbation at the model, to born_traces.h5"),
        run_born},
       {app.add_subcommand("migrate",
                           "Reverse-time migration of [inversion]'s observed data in the model ([migration] says how), "
                           "to image.h5 and image_slice.png"),
        run_migration}}};
  for (auto& cmd : imaging) {
    cmd.app->add_option("case", cmd.case_path, "Case file")->required()->check(CLI::ExistingFile);
    cmd.app->add_flag("-q,--quiet", cmd.options.quiet, "No plan and no progress lines");
    cmd.app->add_option("--model", cmd.options.model_file,
                        "The model instead of [model]: an HDF5 file with a dataset of the grid's shape (m/s)");
    cmd.app->add_option("--model-dataset", cmd.options.model_dataset, "The dataset of --model (default /velocity)");
    cmd.app->add_option("--backend", cmd.o.backend, "Override run.backend")
        ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
    cmd.app->add_option("--precision", cmd.o.precision, "Override run.precision")
        ->check(CLI::IsMember({"fp32", "fp64"}));
    cmd.app
        ->add_option("--output-dir", cmd.o.output_dir, "Override output.directory (relative to the current directory)")
        ->check(non_empty_path);
    cmd.app->add_option("--threads", cmd.o.threads, "OpenMP threads (0: all)")->check(whole_number(0, max_threads));
    cmd.app->add_flag("--confine-writes", cmd.o.confine_writes,
                      "Write only inside the output folder (also SPECWAVE_CONFINE_WRITES=1); see forward --help");
    cmd.app->add_flag("--resume", cmd.options.resume,
                      "Continue an interrupted pass from the shots its checkpoint holds (output.directory/checkpoint; "
                      "written on a stop signal and every run.checkpoint_minutes), or start when there is none");
  }
  imaging[0]
      .app
      ->add_option("--band", imaging[0].options.band_hz,
                   "The misfit of the data low-passed at this cutoff (Hz), as invert's inversion.bands_hz")
      ->check(finite_non_negative);
  imaging[1]
      .app
      ->add_option("--perturbation", imaging[1].options.perturbation_file,
                   "HDF5 file of the perturbation (the grid's shape; m/s, or s^2/m^2 with parameterisation = "
                   "\"slowness2\")")
      ->required();
  imaging[1].app->add_option("--perturbation-dataset", imaging[1].options.perturbation_dataset,
                             "The dataset of --perturbation (default /perturbation)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    return usage_error(app, argc, argv, e);
  }

  if (info->parsed()) {
    print(build_and_hardware_info());
    return 0;
  }
  if (segy->parsed()) {
    if (segy_out.empty())  // a usage error, before anything is read or written
      throw Error(ExitCode::usage, fmt::format("the output path is empty; give the file to write; run specwave segy {} "
                                               "--help for its options",
                                               segy_export->parsed() ? "export" : "import"));
    // The output must be a file that is not the input (an export onto its own input destroyed it).
    io::check_output_file(segy_out, {segy_in}, "give another output path");
    if (segy_export->parsed()) {
      const io::ShotGathers g = io::read_trace_file(segy_in);
      const auto notes =
          io::write_segy(segy_out, g,
                         fmt::format("specwave {} ({}) shot gathers from {}\n{} x {} samples, dt {} s\n"
                                     "IEEE float32 samples; coordinates in mm (scalar -1000); z down: receiver "
                                     "elevation = -z, source depth = z",
                                     build::version, build::git_hash, segy_in, g.describe(), g.nt, g.dt),
                         segy_ascii ? io::SegyText::ascii : io::SegyText::ebcdic);
      print(fmt::format("segy: wrote {} ({} x {} samples)\n", segy_out, g.describe(), g.nt));
      for (const std::string& note : notes) print(fmt::format("segy: note: {}\n", note));
    } else {
      const io::ShotGathers g = io::read_segy(segy_in);
      io::write_trace_file(segy_out, g, segy_in);
      print(fmt::format("segy: wrote {} ({} x {} samples, dt {} s{})\n", segy_out, g.describe(), g.nt, g.dt,
                        g.t0 != 0 ? fmt::format(", t0 {} s: the delay recording time", g.t0) : ""));
    }
    return 0;
  }
  if (sweep_cmd->parsed()) {
    sweep_o.job.max_parallel = sweep_max_parallel;
    sweep_o.job.specwave = std::filesystem::read_symlink("/proc/self/exe").string();
    run_sweep(sweep_o, print);
    return 0;
  }
  if (collect_cmd->parsed()) {
    const SweepResults results = collect_sweep(std::filesystem::absolute(collect_dir).lexically_normal().string());
    write_sweep_summary(results);
    print(describe_sweep_results(results));
    print(fmt::format("wrote       {}, {}\n", (std::filesystem::path(results.directory) / "summary.csv").string(),
                      (std::filesystem::path(results.directory) / "summary.h5").string()));
    const bool all = results.count(VariantState::completed) == int(results.variants.size());
    return all ? 0 : int(ExitCode::sweep_incomplete);
  }
  // forward and check take any number of ranks (shot groups x domain decomposition); validate runs its
  // reference comparison on one.
  const Comm world = Comm::world();
  const int ranks = world.size();
  if ((validate->parsed() || check_gradient_cmd->parsed()) && ranks > 1)
    throw Error(ExitCode::usage, fmt::format("{} runs on one MPI rank only, not on {}; start it without "
                                             "mpirun/mpiexec (or with -n 1)",
                                             validate->parsed() ? "validate" : "check-gradient", ranks));
  const bool root = Comm::world().rank() == 0;
  if (check->parsed()) {
    const Case c = load_case(check_case, check_o);
    check_inputs_not_overwritten(c, forward_output_names);  // what `forward` would write
    const Plan plan = make_plan(c, placement(world));
    if (!root) return 0;
    std::string text = describe_plan(c, plan);
    // An inversion case: how `invert` would keep the forward wavefields (its own refusal, if any, as a note:
    // the case can still run forward).
    if (c.inversion.present) {
      try {
        text += describe_wavefields(plan, history_for(c, plan));
      } catch (const Error& e) {
        text += fmt::format("note        invert, gradient, check-gradient and migrate would stop: {}\n", e.what());
      }
      try {  // invert's own checks: the bounds of what it inverts, the starting model inside them
        check_invert_case(c);
        (void)check_invert_start(c, plan);
      } catch (const Error& e) {
        text += fmt::format("note        invert would stop: {}\n", e.what());
      }
      try {  // the observed data (a file's shape, interval, geometry and values), the bands, the offset window
        check_observed(c, plan);
      } catch (const Error& e) {
        text += fmt::format("note        invert, gradient, check-gradient and migrate would stop: {}\n", e.what());
      }
    }
    print(text);
    print("check: OK, the case can run\n");
    return 0;
  }
  const ValidationProgress validate_progress = [&](const std::string& line) {
    if (validate_quiet) return;
    std::fputs(line.c_str(), stdout);
    std::fflush(stdout);
  };
  if (validate->parsed() && !cases_folder.empty()) {
    regression.progress = validate_progress;
    const RegressionSummary s = run_regression(cases_folder, regression);
    print(s.text);
    if (regression.update) {
      print(fmt::format("validate: {} reference(s) written; review them before committing\n", s.updated));
      return 0;
    }
    print(fmt::format("validate: {} passed, {} failed, {} skipped\n", s.passed, s.failed, s.skipped));
    if (s.passed + s.failed == 0)
      throw Error(ExitCode::input_error,
                  fmt::format("{}: no case of tier {} with a [validation] table", cases_folder, regression.tier));
    return s.failed ? int(ExitCode::validation_failed) : 0;
  }
  if (validate->parsed()) {
    if (validate_case_path.empty())
      throw Error(ExitCode::usage, "validate needs a case file, or --cases FOLDER for the regression cases");
    Case c = load_case(validate_case_path, validate_o);
    c.output.plots = false;
    const ValidationReport report = validate_case(c, max_points, validate_progress);
    print(report.text());
    if (!report.passed()) {
      print("validate: FAILED\n");
      return int(ExitCode::validation_failed);
    }
    print("validate: all comparisons within tolerance\n");
    return 0;
  }
  if (check_gradient_cmd->parsed()) {
    Overrides o;
    o.threads = gradient_threads;
    o.backend = gradient_backend;
    Case c = load_case(gradient_case, o);
    apply_threads(c);
    const GradientCheckReport report = check_gradient(c);
    print(report.text());
    if (!report.passed()) {
      print("check-gradient: FAILED\n");
      return int(ExitCode::validation_failed);
    }
    print("check-gradient: the adjoint and the gradient pass\n");
    return 0;
  }
  for (auto& cmd : imaging)
    if (cmd.app->parsed()) {
      const Case c = load_case(cmd.case_path, cmd.o);
      install_stop_handlers();
      const ImagingSummary s = cmd.run(c, cmd.options);
      if (!root) return 0;
      std::string text = fmt::format("done        {}: {}\n", cmd.app->get_name(), s.result);
      for (const auto& f : s.outputs) text += fmt::format("output      {}\n", f);
      print(text);
      return 0;
    }
  if (invert_cmd->parsed()) {
    Overrides o;
    o.threads = invert_threads;
    o.backend = invert_backend;
    o.output_dir = invert_output_dir;
    o.confine_writes = invert_confine;
    const Case c = load_case(invert_case, o);
    install_stop_handlers();
    const InversionSummary s = run_inversion(c, InversionOptions{invert_quiet, invert_resume});
    if (!root) return s.failure.empty() ? 0 : int(ExitCode::optimisation_failed);
    std::string text =
        fmt::format("done        {} iteration(s) of {} with {}, wavefields: {}: misfit reduced by {:.2f}%",
                    s.history.size() - 1, s.optimizer, s.propagator, s.wavefield_history, 100 * s.misfit_reduction());
    if (const auto e = s.model_error_reduction()) text += fmt::format(", model error by {:.2f}%", 100 * *e);
    if (const auto e = s.model_error_reduction(&InversionIteration::density_error))
      text += fmt::format(", density error by {:.2f}%", 100 * *e);
    if (const auto e = s.model_error_reduction(&InversionIteration::shear_error))
      text += fmt::format(", vs error by {:.2f}%", 100 * *e);
    text += "\n";
    for (const auto& f : s.outputs) text += fmt::format("output      {}\n", f);
    print(text);
    if (!s.failure.empty()) {
      print(fmt::format("invert: stopped: {}\nthe outputs hold iteration {}\n", s.failure, s.history.size() - 1));
      return int(ExitCode::optimisation_failed);
    }
    return 0;
  }
  // forward
  const Case c = load_case(forward_case, forward_o);
  const Plan plan = make_plan(c, placement(world));
  if (root) print(describe_plan(c, plan));
  install_stop_handlers();
  const ForwardSummary s = run_forward(c, plan, ForwardOptions{quiet, forward_resume});
  if (!root) return 0;
  std::string summary =
      s.completed_earlier
          ? fmt::format("done        nothing run: {} shot(s) x {} steps had completed in {:.2f} s with {}\n",
                        c.shots.size(), plan.nt, s.seconds, s.propagator)
          : fmt::format("done        {} shot(s) x {} steps in {:.2f} s with {}: {:.3g} cells/s\n", c.shots.size(),
                        plan.nt, s.seconds, s.propagator, s.cells_per_second);
  for (const auto& f : s.outputs) summary += fmt::format("output      {}\n", f);
  if (s.checkpoints) summary += fmt::format("checkpoints {} written, removed at the end\n", s.checkpoints);
  print(summary);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // line-buffered even when redirected to a Slurm log
  io::h5::startup();                         // first: before anything starts the HDF5 library
  io::h5::silence_library_errors();
  // MPI (when built with it) lives for the whole program when a launcher (mpirun, mpiexec, srun) started it. An error
  // on one of several ranks ends them all through fatal_error (MPI_Abort), never leaving the others waiting.
  // Outside a launcher the program starts no MPI and is one serial rank (Comm::world()), as an Open MPI singleton
  // would be: starting one costs about 0.35 s a process (most of a `specwave check`), and the program also runs
  // where its libraries were copied but Open MPI's run-time files were not (scripts/gpu-check on a bare GPU machine).
  MpiSession mpi(argc, argv, mpi_launched());
  // Destroyed before `mpi`: HDF5 closes what is still open (a file abandoned after a full disk) while MPI runs.
  struct Hdf5Shutdown {
    ~Hdf5Shutdown() { io::h5::shutdown(); }
  } hdf5_shutdown;
  try {
    return run(argc, argv);
  } catch (const Error& e) {
    // A stop signal is agreed by every rank at the same step: they all stop here together, no abort needed.
    if (e.code() == ExitCode::interrupted) {
      if (Comm::world().rank() == 0) std::fprintf(stderr, "specwave: %s\n", e.what());
      return int(e.code());
    }
    return fatal_error(fmt::format("specwave: error: {}", e.what()), int(e.code()));
  } catch (const cuda::DeviceMemoryError& e) {
    return fatal_error(fmt::format("specwave: error: out of GPU memory: {}; the run needs more than the preflight "
                                   "estimate or another process holds the device: lower run.device_memory_fraction, "
                                   "reduce grid.shape or use precision = \"fp32\"",
                                   e.what()),
                       int(ExitCode::resources));
  } catch (const std::bad_alloc&) {
    // What the preflight did not count (it names what it does: `specwave check`): exit 6 like its refusals.
    return fatal_error(fmt::format("specwave: error: out of memory: an allocation failed ({:.1f} GiB available now); "
                                   "the inputs or the run need more memory than the preflight estimated: run "
                                   "`specwave check` on the case, reduce the grid, the receivers, output.trace_dt's "
                                   "samples or the input files' sizes, or ask the job for more memory",
                                   double(available_memory_bytes()) / double(1ull << 30)),
                       int(ExitCode::resources));
  } catch (const std::exception& e) {
    return fatal_error(fmt::format("specwave: internal error: {}", e.what()), int(ExitCode::internal));
  }
}
