#pragma once
// Parameter sweeps (docs/batch.md, "Parameter sweeps"). A sweep file names a base case and axes of case-file keys;
// `specwave sweep` expands them into variant cases, checks every variant as `specwave check` does, writes the sweep
// folder (manifest, variant cases, logs/) and, for Slurm, a job-array script from a template.
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace specwave {

// One value of an axis, in the spellings the sweep folder needs.
struct SweepValue {
  std::string toml;  // as written into a case file: 10.0, 8, "fp64", [10.0, 10.0, 10.0]
  std::string json;  // in manifest.json: 10.0, 8, "fp64", [10.0, 10.0, 10.0]
  std::string text;  // in names and CSV columns: 10, 8, fp64, [10,10,10]
};

// A case-file key path as in docs/case-file.md error messages ("scheme.order", "shots[0].sources[0].peak_frequency"),
// where an index may be [*] (every entry), and the values it takes.
struct SweepAxis {
  std::string key;
  std::vector<SweepValue> values;
  int line = 0;  // in the sweep file
};

// The [slurm] table: #SBATCH settings of the job array.
struct SlurmSettings {
  std::string account, partition, time;
  int ntasks = 1;                  // MPI ranks per variant
  int cpus_per_task = 0;           // 0: not set (the site's default)
  int gpus_per_task = 0;           // 0: not set (the gpu template then asks for 1)
  int max_parallel = 0;            // 0: no limit (no %MAX in the array)
  std::vector<std::string> extra;  // extra #SBATCH lines, e.g. "--mem=16G"
  // The environment of every task, set up before the run: `module load` of these (in this order), then `source` of
  // this file (absolute; a relative path in the sweep file is taken from the sweep file's folder).
  std::vector<std::string> modules;
  std::string setup;
};

enum class SweepMode { product, zip };

struct SweepSpec {
  std::string file, text;  // the sweep file and its text (copied to sweep.toml)
  std::string name;
  std::string base_case, base_text;  // absolute path of the base case, and its text
  std::string directory;             // the sweep folder, absolute
  SweepMode mode = SweepMode::product;
  std::string command = "forward";  // or "invert"
  std::vector<SweepAxis> axes;      // in file order; product mode: the first axis varies slowest
  SlurmSettings slurm;
};

// Reads a sweep file; relative paths in it (base, directory) are resolved against its folder. Errors:
// ExitCode::input_error (unreadable file or base case), ExitCode::invalid_case (anything wrong in it), one line
// `<file>:<line>: <key>: <what is wrong> (<what was found>); <fix>`.
SweepSpec read_sweep_file(const std::string& path);
SweepSpec parse_sweep_text(const std::string& text, const std::string& path);
// True for a TOML file with a [sweep] table (`validate --cases` skips these).
bool is_sweep_file(const std::string& path);

// For each variant, the index of its value on every axis: product (first axis slowest) or zip (the k-th value of
// every axis; the axes must have the same length).
std::vector<std::vector<int>> expand_sweep(const SweepSpec& spec);

struct SweepVariant {
  int index = 0;
  std::string id;                  // zero-padded index, the folder name under variants/: "0003"
  std::string name;                // "0003_peak_frequency=10_order=8"
  std::vector<SweepValue> values;  // one per axis
  std::string case_text;           // variants/<id>/case.toml
};
// The variant cases: the base case with the axis keys set, relative paths made absolute (model.file, a source's
// file, inversion.observed, inversion.true_model.file, validation.reference: against the base case's folder) and
// output.directory = "output" (variants/<id>/output).
std::vector<SweepVariant> make_variants(const SweepSpec& spec);
// Digits of the variant ids: 4, or more for 10,000 variants and above.
int sweep_index_width(std::size_t n_variants);

struct SweepCheck {
  std::vector<std::string> notes;  // one line each, printed
  bool wants_gpu = false;          // some variant runs on run.backend = "cuda"
};
// Reads every variant case (io::parse_case_text, as if at variants/<id>/case.toml) and makes its plan on one rank, as
// `specwave check` does. The first failure is thrown with its code and the variant's index and values. A variant
// with run.backend = "cuda" is planned with the cpu backend when this machine has no usable GPU (one note).
SweepCheck check_variants(const SweepSpec& spec, const std::vector<SweepVariant>& variants);

std::string sweep_manifest_json(const SweepSpec& spec, const std::vector<SweepVariant>& variants);
std::string sweep_manifest_csv(const SweepSpec& spec, const std::vector<SweepVariant>& variants);

// Writes the sweep folder: sweep.toml, manifest.json, manifest.csv, variants/<id>/case.toml, logs/. A new folder is
// written under a temporary name and renamed, so a failure leaves nothing behind. An existing sweep folder with the
// same manifest and variant cases is kept (returns false); one with another manifest, or a non-empty folder that
// is not a sweep folder, is refused (ExitCode::output_error).
bool write_sweep_folder(const SweepSpec& spec, const std::vector<SweepVariant>& variants);

// Slurm's --array value for these indices, ranges compressed ("0-3", "3,7,12-14"), with "%max" when max_parallel > 0.
std::string slurm_array_spec(const std::vector<int>& indices, int max_parallel);
// The text of a template shipped in scripts/slurm/ ("cpu" or "gpu"; compiled into the program).
std::string builtin_slurm_template(const std::string& name);
// Replaces every {{name}} in `text` with values[name]; a line that holds only a placeholder whose value is empty is
// dropped. A placeholder not in `values` is an error (ExitCode::input_error naming `what`, the line and the names).
std::string fill_template(const std::string& text, const std::map<std::string, std::string>& values,
                          const std::string& what);

struct JobScriptOptions {
  std::string template_choice;  // "cpu", "gpu", a file path, or empty: gpu when the sweep wants GPUs, else cpu
  std::string specwave;         // absolute path of the specwave program the jobs run
  int max_parallel = -1;        // overrides slurm.max_parallel when >= 0
};
// The job-array script running `indices` (docs/batch.md lists the placeholders).
std::string sweep_job_script(const SweepSpec& spec, std::size_t n_variants, const std::vector<int>& indices,
                             bool wants_gpu, const JobScriptOptions& options);

// `sbatch --parsable job.sbatch` in the sweep folder: the job id; the submission is appended to submissions.jsonl.
// Errors: ExitCode::submit_failed when sbatch is not on PATH or refuses the job (its message quoted).
std::string submit_sweep_job(const std::string& directory, const std::string& array, const std::vector<int>& indices);

// `specwave sweep`: everything above, then (slurm) job.sbatch, (submit) sbatch, (resume) only the variants that
// failed, were interrupted or are missing. submit, resume, a template choice and max_parallel imply slurm. Lines go
// to `print` as they are ready.
struct SweepOptions {
  std::string sweep_file, output;  // output: overrides sweep.directory (relative to the current directory)
  bool slurm = false, submit = false, resume = false;
  JobScriptOptions job;
};
void run_sweep(const SweepOptions& options, const std::function<void(const std::string&)>& print);

}  // namespace specwave
