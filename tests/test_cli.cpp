// The command line on bad input: each case is refused before the run with one clear line (naming the
// file/key/dataset) and the documented exit code; a run that fails leaves no file under a final name.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "cli_helpers.hpp"
#include "io/hdf5.hpp"
#include "io/segy.hpp"
#include "solver/plan/plan.hpp"

namespace fs = std::filesystem;
using namespace specwave;
using testing::Result;
using testing::run_specwave;

namespace {

const fs::path work = fs::temp_directory_path() / "specwave_test_cli";

const std::string base_case = testing::cli_base_case("cli");

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  REQUIRE_MESSAGE(pos != std::string::npos, "test bug: '" << from << "' not in the base case");
  return text.replace(pos, from.size(), to);
}

std::string write_case(const std::string& name, const std::string& text) {
  const fs::path p = work / (name + ".toml");
  std::ofstream(p) << text;
  return p.string();
}

template <class T>
void write_h5(const std::string& name, const std::vector<hsize_t>& dims, const std::vector<T>& data) {
  io::h5::AtomicWriter w((work / name).string());
  io::h5::write_dataset<T>(w.id(), "velocity", dims, data.data(), "m/s");
  w.commit();
}

struct BadInput {
  std::string name, text;
  int code;
  std::string expect;  // substring of the message
};

// A wavelet file: dataset /wavelet with attribute dt (or `dt_text` as a string attribute instead).
void write_wavelet(const std::string& name, const std::vector<double>& samples, const std::string& dt_text = "",
                   double dt = 0.001) {
  io::h5::AtomicWriter w((work / name).string());
  const std::vector<hsize_t> dims = {samples.size()};
  io::h5::Handle d = io::h5::write_dataset<double>(w.id(), "wavelet", dims, samples.data(), "1");
  if (dt_text.empty())
    io::h5::write_attribute(d.id(), "dt", dt);
  else
    io::h5::write_attribute(d.id(), "dt", dt_text);
  w.commit();
}

std::string wavelet_file(const std::string& file) {
  return replaced(testing::cli_base_case("cli"), "peak_frequency = 10.0",
                  "wavelet = \"file\"\nfile = \"" + file + "\"");
}

std::string model_file(const std::string& file) {
  return replaced(base_case, "type = \"homogeneous\"\nvelocity = 2000.0", "type = \"file\"\nfile = \"" + file + "\"");
}

}  // namespace

TEST_CASE("bad inputs are refused before the run with a clear message and the documented exit code") {
  fs::remove_all(work);
  fs::create_directories(work);
  const std::vector<hsize_t> dims = {40, 40, 40};
  write_h5<float>("good.h5", dims, std::vector<float>(40 * 40 * 40, 2000.f));
  write_h5<float>("shape.h5", {40, 40, 39}, std::vector<float>(40 * 40 * 39, 2000.f));
  write_h5<float>("rank.h5", {1600, 40}, std::vector<float>(1600 * 40, 2000.f));
  write_h5<std::int32_t>("int.h5", dims, std::vector<std::int32_t>(40 * 40 * 40, 2000));
  std::vector<float> with_nan(40 * 40 * 40, 2000.f);
  with_nan[12345] = NAN;
  write_h5<float>("nan.h5", dims, with_nan);
  std::vector<float> with_zero(40 * 40 * 40, 2000.f);
  with_zero[777] = 0.f;
  write_h5<float>("zero.h5", dims, with_zero);
  std::ofstream(work / "text.h5") << "not hdf5\n";
  {  // 40^3 float32 values of 2000 m/s, raw
    const std::vector<float> raw(40 * 40 * 40, 2000.f);
    std::ofstream(work / "raw.bin", std::ios::binary)
        .write(reinterpret_cast<const char*>(raw.data()), std::streamsize(raw.size() * sizeof(float)));
  }
  {  // the first half of a good file: HDF5's signature, a structure cut short
    std::ifstream in(work / "good.h5", std::ios::binary);
    const std::string bytes(std::istreambuf_iterator<char>(in), {});
    std::ofstream(work / "truncated.h5", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  REQUIRE(::mkfifo((work / "fifo.h5").c_str(), 0600) == 0);  // opening it would wait for a writer forever
  fs::create_directories(work / "folder.h5");
  std::vector<double> pulse(50, 0.0);
  pulse[10] = 1.0;
  write_wavelet("wavelet_empty.h5", {});
  write_wavelet("wavelet_zero.h5", std::vector<double>(50, 0.0));
  write_wavelet("wavelet_dt_text.h5", pulse, "one millisecond");
  write_wavelet("wavelet_dt_subnormal.h5", pulse, "", 5e-324);  // found by fuzz_hdf5_inputs: an int overflow
  write_wavelet("wavelet_dt_ms.h5", pulse, "", 1.0e4);          // milliseconds where seconds are meant

  const std::vector<BadInput> cases = {
      {"malformed_toml", replaced(base_case, "shape = [40, 40, 40]", "shape = [40, 40"), 3, "cli-malformed_toml.toml"},
      {"unknown_key", replaced(base_case, "velocity = 2000.0", "velocity = 2000.0\nvelocty = 1.0"), 3, "velocty"},
      {"wrong_type", replaced(base_case, "velocity = 2000.0", "velocity = \"fast\""), 3, "model.velocity"},
      {"negative_velocity", replaced(base_case, "velocity = 2000.0", "velocity = -2000.0"), 3, "velocity"},
      {"missing_duration", replaced(base_case, "duration = 0.2", ""), 3, "duration"},
      {"odd_order", replaced(base_case, "pml_width = 10", "pml_width = 10\n[scheme]\norder = 7"), 3, "order"},
      {"cfl", replaced(base_case, "duration = 0.2", "duration = 0.2\ndt = 0.01"), 3, "CFL"},
      {"ppw", replaced(base_case, "peak_frequency = 10.0", "peak_frequency = 60.0"), 3, "points per wavelength"},
      {"grid_vs_pml", replaced(base_case, "shape = [40, 40, 40]", "shape = [25, 40, 40]"), 3, "pml_width"},
      {"source_outside", replaced(base_case, "position = [200.0, 200.0, 200.0]", "position = [900.0, 200.0, 200.0]"), 3,
       "outside the grid"},
      {"receiver_in_pml", replaced(base_case, "points = [[200.0, 200.0, 280.0]]", "points = [[200.0, 200.0, 30.0]]"), 3,
       "absorbing layer"},
      {"layered_counts",
       replaced(base_case, "type = \"homogeneous\"\nvelocity = 2000.0",
                "type = \"layered\"\ninterfaces = [100.0]\nvelocities = [1500.0]"),
       3, "velocities"},
      {"spectral_free_surface",
       replaced(base_case, "pml_width = 10", "pml_width = 10\nfree_surface = true\n[scheme]\nmethod = \"spectral\""), 3,
       "free_surface"},
      {"no_receivers", replaced(base_case, "[receivers]\npoints = [[200.0, 200.0, 280.0]]", ""), 3, "receivers"},
      // Receivers per shot (issue 17): each shot's checked as the shared ones are, named by shot.
      {"shot_receiver_in_pml",
       replaced(base_case, "peak_frequency = 10.0\n",
                "peak_frequency = 10.0\n[shots.receivers]\npoints = [[200.0, 200.0, 250.0], [200.0, 200.0, 30.0]]\n"),
       3, "shots[0] receiver 1 at (200, 200, 30) m lies inside the absorbing layer"},
      {"streamer_leaves_grid",
       replaced(base_case, "points = [[200.0, 200.0, 280.0]]",
                "[receivers.streamer]\ncount = 30\nfirst_offset = 50.0\nspacing = 10.0"),
       3, "shots[0] receiver 5 at (200, 200, 300) m lies inside the absorbing layer"},

      {"model_missing_file", model_file("absent.h5"), 4, "file not found"},
      {"model_missing_dataset",
       replaced(model_file("good.h5"), "file = \"good.h5\"", "file = \"good.h5\"\ndataset = \"/vp\""), 4,
       "dataset '/vp' is missing"},
      {"model_shape", model_file("shape.h5"), 4,
       "has shape (40, 40, 39), the case's grid (40, 40, 40); give the model's grid"},
      {"model_rank", model_file("rank.h5"), 4, "has 2 dimension(s); a model is 3-D"},
      {"model_dtype", model_file("int.h5"), 4, "dtype is int32"},
      {"model_nan", model_file("nan.h5"), 4, "velocity nan"},
      {"model_zero", model_file("zero.h5"), 4, "velocity 0"},
      {"model_not_hdf5", model_file("text.h5"), 4, "not an HDF5 file"},
      {"model_truncated", model_file("truncated.h5"), 4, "cannot open HDF5 file: it is damaged or truncated"},
      // Raw binary and SEG-Y models: layouts that do not fit the file, keys of another format, headers missing.
      {"model_raw_size",
       replaced(model_file("raw.bin"), "file = \"raw.bin\"",
                "file = \"raw.bin\"\nformat = \"raw\"\nshape = [40, 40, 41]"),
       4, "holds 256000 bytes, the layout 40 x 40 x 41 float32 needs 262400"},
      // Read with the wrong byte order: 2000 m/s becomes 8.98e-41 m/s, named as implausible (not as a time step).
      {"model_raw_byte_order",
       replaced(model_file("raw.bin"), "file = \"raw.bin\"",
                "file = \"raw.bin\"\nformat = \"raw\"\nshape = [40, 40, 40]\nbyte_order = \"big\""),
       4, "m/s at index (z=0, y=0, x=0) is outside [1, 1e6] m/s: are the values in m/s"},
      {"model_raw_no_shape",
       replaced(model_file("raw.bin"), "file = \"raw.bin\"", "file = \"raw.bin\"\nformat = \"raw\""), 3, "model.shape"},
      {"model_raw_dataset",
       replaced(model_file("raw.bin"), "file = \"raw.bin\"",
                "file = \"raw.bin\"\nformat = \"raw\"\nshape = [40, 40, 40]\ndataset = \"/v\""),
       3, "model.dataset: is not used with format = \"raw\""},
      {"model_raw_axis_order",
       replaced(model_file("raw.bin"), "file = \"raw.bin\"",
                "file = \"raw.bin\"\nformat = \"raw\"\nshape = [40, 40, 40]\naxis_order = \"zzx\""),
       3, "model.axis_order"},
      {"model_hdf5_shear_file",
       replaced(model_file("good.h5"), "file = \"good.h5\"", "file = \"good.h5\"\nshear_file = \"raw.bin\""), 3,
       "model.shear_file: is not used with format = \"hdf5\""},
      {"model_raw_density_file_missing",
       replaced(model_file("raw.bin"), "file = \"raw.bin\"",
                "file = \"raw.bin\"\nformat = \"raw\"\nshape = [40, 40, 40]\ndensity_file = \"absent.bin\""),
       4, "absent.bin"},
      {"model_segy_no_spacing",
       replaced(model_file("text.h5"), "file = \"text.h5\"", "file = \"text.h5\"\nformat = \"segy\""), 3,
       "model.sample_spacing"},
      {"model_segy_not_segy",
       replaced(model_file("text.h5"), "file = \"text.h5\"",
                "file = \"text.h5\"\nformat = \"segy\"\nsample_spacing = 10.0"),
       4, "shorter than the 3600-byte SEG-Y headers"},
      {"unwritable_output", replaced(base_case, "directory = \"out\"", "directory = \"/proc/specwave-out\""), 5,
       "output.directory"},
      {"memory", replaced(base_case, "shape = [40, 40, 40]", "shape = [40, 40000, 40000]"), 6, "available"},
      {"cuda_grid_limit",
       replaced(replaced(base_case, "shape = [40, 40, 40]", "shape = [40, 70000, 40]"), "pml_width = 10",
                "pml_width = 10\n[run]\nbackend = \"cuda\""),
       3, "at most 65535 points along z and y"},
      {"device_fraction", replaced(base_case, "pml_width = 10", "pml_width = 10\n[run]\ndevice_memory_fraction = 1.5"),
       3, "device_memory_fraction"},
      {"no_shots",
       replaced(base_case, "[[shots]]\n[[shots.sources]]\nposition = [200.0, 200.0, 200.0]\npeak_frequency = 10.0\n",
                ""),
       3, "shots"},
      // Integer overflow and limits (issue 21): each a clear error naming the key, never a wrapped count.
      {"threads_huge", replaced(base_case, "pml_width = 10", "pml_width = 10\n[run]\nthreads = 100000"), 3,
       "run.threads"},
      {"duration_wraps", replaced(base_case, "duration = 0.2", "duration = 4294967.396\ndt = 0.001"), 3,
       "time steps, more than the limit of 100000000"},
      {"duration_huge", replaced(base_case, "duration = 0.2", "duration = 1e12"), 3, "more than the limit"},
      {"pml_width_huge", replaced(base_case, "pml_width = 10", "pml_width = 2147483647"), 3,
       "is smaller than 2 x boundary.pml_width (2147483647)"},
      // Inputs that are not regular files: refused before anything opens them.
      {"model_fifo", model_file("fifo.h5"), 4, "model.file: names"},
      {"model_directory", model_file("folder.h5"), 4, "which is a directory, not a regular file"},
      // Wavelets that would run and record nothing, and attributes that are not numbers (file and dataset named).
      {"wavelet_empty", wavelet_file("wavelet_empty.h5"), 4, "dataset '/wavelet': the wavelet has no samples"},
      {"wavelet_all_zero", wavelet_file("wavelet_zero.h5"), 4, "every sample is zero"},
      {"wavelet_dt_string", wavelet_file("wavelet_dt_text.h5"), 4,
       "wavelet_dt_text.h5: '/wavelet': attribute 'dt' is not numeric (a string)"},
      {"wavelet_dt_subnormal", wavelet_file("wavelet_dt_subnormal.h5"), 4,
       "must be the sampling interval in seconds, in [1e-9, 1e3]"},
      {"wavelet_dt_too_large", wavelet_file("wavelet_dt_ms.h5"), 4, "attribute dt = 10000 must be"},
      // Every kind of value the case file holds, out of range or of the wrong kind (issue 21's bad-input suite).
      {"spacing_zero", replaced(base_case, "spacing = 10.0", "spacing = 0.0"), 3, "grid.spacing"},
      {"spacing_negative", replaced(base_case, "spacing = 10.0", "spacing = -10.0"), 3, "grid.spacing"},
      {"spacing_nan", replaced(base_case, "spacing = 10.0", "spacing = nan"), 3, "grid.spacing"},
      {"spacing_inf", replaced(base_case, "spacing = 10.0", "spacing = inf"), 3, "grid.spacing"},
      {"spacing_string", replaced(base_case, "spacing = 10.0", "spacing = \"10 m\""), 3, "grid.spacing"},
      {"shape_zero", replaced(base_case, "shape = [40, 40, 40]", "shape = [40, 0, 40]"), 3, "grid.shape"},
      {"shape_negative", replaced(base_case, "shape = [40, 40, 40]", "shape = [40, -40, 40]"), 3, "grid.shape"},
      {"shape_two", replaced(base_case, "shape = [40, 40, 40]", "shape = [40, 40]"), 3, "grid.shape"},
      {"shape_float", replaced(base_case, "shape = [40, 40, 40]", "shape = [40, 40.5, 40]"), 3, "grid.shape"},
      {"shape_huge", replaced(base_case, "shape = [40, 40, 40]", "shape = [40, 40, 9999999999]"), 3, "grid.shape"},
      {"memory_beyond_64_bits", replaced(base_case, "shape = [40, 40, 40]", "shape = [2000000, 2000000, 2000000]"), 6,
       "the run needs about 16 EiB or more but only"},
      {"force_along_y_in_2d",
       replaced(replaced(replaced(base_case, "shape = [40, 40, 40]", "shape = [40, 1, 40]"), "[200.0, 200.0, 200.0]",
                         "[200.0, 0.0, 200.0]\nkind = \"force\"\ndirection = [0.0, 1.0, 0.0]"),
                "[200.0, 200.0, 280.0]", "[200.0, 0.0, 280.0]"),
       3, "cli-force_along_y_in_2d.toml: shots[0].sources[0] at (200, 0, 200) m: a 2-D grid"},
      {"origin_string", replaced(base_case, "spacing = 10.0", "spacing = 10.0\norigin = \"zero\""), 3, "grid.origin"},
      {"no_grid", replaced(replaced(base_case, "[grid]\n", ""), "shape = [40, 40, 40]\nspacing = 10.0\n", ""), 3,
       "grid"},
      {"duration_negative", replaced(base_case, "duration = 0.2", "duration = -0.2"), 3, "time.duration"},
      {"duration_nan", replaced(base_case, "duration = 0.2", "duration = nan"), 3, "time.duration"},
      {"dt_zero", replaced(base_case, "duration = 0.2", "duration = 0.2\ndt = 0.0"), 3, "time.dt"},
      {"dt_negative", replaced(base_case, "duration = 0.2", "duration = 0.2\ndt = -0.001"), 3, "time.dt"},
      {"cfl_safety_zero", replaced(base_case, "duration = 0.2", "duration = 0.2\ncfl_safety = 0.0"), 3,
       "time.cfl_safety"},
      {"cfl_safety_above_one", replaced(base_case, "duration = 0.2", "duration = 0.2\ncfl_safety = 1.5"), 3,
       "time.cfl_safety"},
      {"order_18", replaced(base_case, "pml_width = 10", "pml_width = 10\n[scheme]\norder = 18"), 3, "scheme.order"},
      {"order_zero", replaced(base_case, "pml_width = 10", "pml_width = 10\n[scheme]\norder = 0"), 3, "scheme.order"},
      {"method_unknown", replaced(base_case, "pml_width = 10", "pml_width = 10\n[scheme]\nmethod = \"fem\""), 3,
       "scheme.method"},
      {"ppw_floor_negative",
       replaced(base_case, "pml_width = 10", "pml_width = 10\n[scheme]\nmin_points_per_wavelength = -1.0"), 3,
       "min_points_per_wavelength"},
      {"pml_negative", replaced(base_case, "pml_width = 10", "pml_width = -1"), 3, "boundary.pml_width"},
      {"free_surface_string", replaced(base_case, "pml_width = 10", "pml_width = 10\nfree_surface = \"yes\""), 3,
       "boundary.free_surface"},
      {"pml_reflection_one", replaced(base_case, "pml_width = 10", "pml_width = 10\npml_reflection = 1.0"), 3,
       "boundary.pml_reflection"},
      {"pml_power_zero", replaced(base_case, "pml_width = 10", "pml_width = 10\npml_power = 0.0"), 3,
       "boundary.pml_power"},
      {"precision_fp16", replaced(base_case, "pml_width = 10", "pml_width = 10\n[run]\nprecision = \"fp16\""), 3,
       "run.precision"},
      {"backend_unknown", replaced(base_case, "pml_width = 10", "pml_width = 10\n[run]\nbackend = \"tpu\""), 3,
       "run.backend"},
      {"threads_negative", replaced(base_case, "pml_width = 10", "pml_width = 10\n[run]\nthreads = -1"), 3,
       "run.threads"},
      {"check_every_zero", replaced(base_case, "pml_width = 10", "pml_width = 10\n[run]\ncheck_every = 0"), 3,
       "run.check_every"},
      {"max_amplitude_zero", replaced(base_case, "pml_width = 10", "pml_width = 10\n[run]\nmax_amplitude = 0.0"), 3,
       "run.max_amplitude"},
      {"device_negative", replaced(base_case, "pml_width = 10", "pml_width = 10\n[run]\ndevice = -1"), 3, "run.device"},
      {"attenuation_reference_far_outside_band",
       replaced(base_case, "pml_width = 10", "pml_width = 10\n[attenuation]\nq = 50\nreference_frequency = 1e12"), 3,
       "attenuation.reference_frequency = 1e+12 Hz is more than a million times outside the band"},
      {"checkpoint_minutes_nan",
       replaced(base_case, "pml_width = 10", "pml_width = 10\n[run]\ncheckpoint_minutes = nan"), 3,
       "run.checkpoint_minutes"},
      {"process_grid_zero", replaced(base_case, "pml_width = 10", "pml_width = 10\n[run]\nprocess_grid = [0, 1, 1]"), 3,
       "run.process_grid"},
      {"unknown_table", replaced(base_case, "pml_width = 10", "pml_width = 10\n[runn]\nthreads = 1"), 3, "runn"},
      {"duplicate_key", replaced(base_case, "velocity = 2000.0", "velocity = 2000.0\nvelocity = 2100.0"), 3,
       "invalid TOML"},
      {"peak_frequency_zero", replaced(base_case, "peak_frequency = 10.0", "peak_frequency = 0.0"), 3,
       "peak_frequency"},
      {"peak_frequency_negative", replaced(base_case, "peak_frequency = 10.0", "peak_frequency = -10.0"), 3,
       "peak_frequency"},
      {"amplitude_nan", replaced(base_case, "peak_frequency = 10.0", "peak_frequency = 10.0\namplitude = nan"), 3,
       "amplitude"},
      {"delay_negative", replaced(base_case, "peak_frequency = 10.0", "peak_frequency = 10.0\ndelay = -0.1"), 3,
       "delay"},
      {"wavelet_unknown", replaced(base_case, "peak_frequency = 10.0", "wavelet = \"gabor\""), 3, "wavelet"},
      {"position_two", replaced(base_case, "position = [200.0, 200.0, 200.0]", "position = [200.0, 200.0]"), 3,
       "position"},
      {"position_nan", replaced(base_case, "position = [200.0, 200.0, 200.0]", "position = [200.0, nan, 200.0]"), 3,
       "position"},
      {"receiver_outside", replaced(base_case, "points = [[200.0, 200.0, 280.0]]", "points = [[200.0, 200.0, 5000.0]]"),
       3, "outside the grid"},
      {"receiver_line_count_zero",
       replaced(base_case, "points = [[200.0, 200.0, 280.0]]",
                "[[receivers.lines]]\nstart = [200.0, 200.0, 150.0]\nend = [200.0, 200.0, 250.0]\ncount = 0"),
       3, "count"},
      {"snapshot_every_negative", replaced(base_case, "plots = false", "plots = false\nsnapshot_every = -1"), 3,
       "output.snapshot_every"},
      {"output_directory_empty", replaced(base_case, "directory = \"out\"", "directory = \"\""), 3, "output.directory"},
      {"plot_shots_out_of_range", replaced(base_case, "plots = false", "plots = true\nplot_shots = [0, 1]"), 3,
       "output.plot_shots[1]"},
      {"plot_shots_not_array", replaced(base_case, "plots = false", "plots = true\nplot_shots = 0"), 3,
       "output.plot_shots"},
      {"layered_not_increasing",
       replaced(base_case, "type = \"homogeneous\"\nvelocity = 2000.0",
                "type = \"layered\"\ninterfaces = [200.0, 100.0]\nvelocities = [1500.0, 2000.0, 2500.0]"),
       3, "interfaces"},
      {"gaussian_radius_zero",
       replaced(base_case, "type = \"homogeneous\"\nvelocity = 2000.0",
                "type = \"gaussian\"\nvelocity = 2000.0\nanomaly = 100.0\ncenter = [200.0, 200.0, 200.0]\n"
                "radius = 0.0"),
       3, "radius"},
      {"velocity_nan", replaced(base_case, "velocity = 2000.0", "velocity = nan"), 3, "model.velocity"},
      {"inversion_bounds_crossed",
       base_case + "[inversion]\nvelocity_min = 3000.0\nvelocity_max = 2000.0\n[inversion.true_model]\ntype = "
                   "\"homogeneous\"\nvelocity = 2100.0\n",
       3, "inversion.velocity"},
      {"inversion_iterations_zero",
       base_case + "[inversion]\nvelocity_min = 1500.0\nvelocity_max = 2500.0\niterations = "
                   "0\n[inversion.true_model]\ntype = \"homogeneous\"\nvelocity = 2100.0\n",
       3, "inversion.iterations"},
      {"inversion_optimizer_unknown",
       base_case + "[inversion]\nvelocity_min = 1500.0\nvelocity_max = 2500.0\noptimizer = "
                   "\"adam\"\n[inversion.true_model]\ntype = \"homogeneous\"\nvelocity = 2100.0\n",
       3, "inversion.optimizer"},
      {"inversion_misfit_unknown",
       base_case + "[inversion]\nvelocity_min = 1500.0\nvelocity_max = 2500.0\nmisfit = "
                   "\"l1\"\n[inversion.true_model]\ntype = \"homogeneous\"\nvelocity = 2100.0\n",
       3, "inversion.misfit"},
      {"inversion_bands_decreasing",
       base_case + "[inversion]\nvelocity_min = 1500.0\nvelocity_max = 2500.0\nbands_hz = [8.0, "
                   "4.0]\n[inversion.true_model]\ntype = \"homogeneous\"\nvelocity = 2100.0\n",
       3, "inversion.bands_hz"},
      {"inversion_smoothing_negative",
       base_case + "[inversion]\nvelocity_min = 1500.0\nvelocity_max = 2500.0\nsmoothing_m = "
                   "-5.0\n[inversion.true_model]\ntype = \"homogeneous\"\nvelocity = 2100.0\n",
       3, "inversion.smoothing_m"},
      {"inversion_smoothing_beyond_the_grid",
       base_case + "[inversion]\nvelocity_min = 1500.0\nvelocity_max = 2500.0\nsmoothing_m = "
                   "10000.0\n[inversion.true_model]\ntype = \"homogeneous\"\nvelocity = 2100.0\n",
       3, "inversion.smoothing_m: pads the grid by 3 sigma on each side to a box of (6040, 6040, 6040) points"},
      {"density_far_below_any_medium", replaced(base_case, "velocity = 2000.0", "velocity = 2000.0\ndensity = 1e-300"),
       3, "model.density: must be a number in [1e-3, 1e6] kg/m^3 (found 1e-300)"},
      {"inversion_lbfgs_memory_zero",
       base_case + "[inversion]\nvelocity_min = 1500.0\nvelocity_max = 2500.0\nlbfgs_memory = "
                   "0\n[inversion.true_model]\ntype = \"homogeneous\"\nvelocity = 2100.0\n",
       3, "inversion.lbfgs_memory"},
      {"inversion_observed_fifo",
       base_case + "[inversion]\nvelocity_min = 1500.0\nvelocity_max = 2500.0\nobserved = "
                   "\"fifo.h5\"\n[inversion.true_model]\ntype = \"homogeneous\"\nvelocity = 2100.0\n",
       4, "inversion.observed: names"},
      {"inversion_trace_weights_fifo",
       base_case + "[inversion]\nvelocity_min = 1500.0\nvelocity_max = 2500.0\ntrace_weights = "
                   "\"fifo.h5\"\n[inversion.true_model]\ntype = \"homogeneous\"\nvelocity = 2100.0\n",
       4, "inversion.trace_weights: names"},
      {"inversion_trace_weights_dataset_alone",
       base_case + "[inversion]\nvelocity_min = 1500.0\nvelocity_max = 2500.0\ntrace_weights_dataset = "
                   "\"/w\"\n[inversion.true_model]\ntype = \"homogeneous\"\nvelocity = 2100.0\n",
       3, "inversion.trace_weights_dataset"},
  };
  int tested = 0;
  for (const auto& bad : cases) {
    CAPTURE(bad.name);
    const std::string path = write_case("cli-" + bad.name, bad.text);
    const Result r = run_specwave("check " + path, "timeout 120");  // a hang fails (exit 124), never blocks CI
    CAPTURE(r.output);
    CHECK(r.code == bad.code);
    CHECK(r.output.find(bad.expect) != std::string::npos);
    CHECK(r.output.find("specwave: error:") != std::string::npos);
    // One clear line: the error is a single line.
    const auto at = r.output.find("specwave: error:");
    if (at != std::string::npos) CHECK(r.output.find('\n', at) == r.output.size() - 1);
    CHECK_FALSE(fs::exists(work / "out"));  // check writes nothing
    ++tested;
  }
  // Command-line misuse.
  CHECK(run_specwave("forward " + (work / "no-such-case.toml").string()).code == 2);
  CHECK(run_specwave("frobnicate").code == 2);
  CHECK(run_specwave("check --threads 100000 " + write_case("cli-threads-option", base_case)).code == 2);
  // An empty --output-dir is a usage error (it fell back to the case's output.directory unsaid).
  const Result empty_dir = run_specwave("forward --output-dir '' " + write_case("cli-empty-dir", base_case));
  CHECK(empty_dir.code == 2);
  CHECK(empty_dir.output.find("an empty path") != std::string::npos);
  CHECK_FALSE(fs::exists(work / "out"));
  // Usage errors in the house format: one line, "did you mean" for a mistyped command, the command named.
  for (const auto& [args_, expected_] : std::vector<std::pair<std::string, std::string>>{
           {"forwad case.toml", "specwave: error: unknown command 'forwad'; did you mean 'forward'?"},
           {"frobnicate", "specwave: error: unknown command 'frobnicate'; give one of the commands (commands: forward"},
           {"forward --no-such-option x.toml", "run specwave forward --help for its options"},
           {"segy export", "specwave: error: traces is required; run specwave segy export --help"},
           {"forward " + (work / "absent.toml").string(), "File does not exist"}}) {
    const std::string& args = args_;  // clang 14 cannot capture a structured binding
    const std::string& expected = expected_;
    CAPTURE(args);
    const Result r = run_specwave(args);
    CAPTURE(r.output);
    CHECK(r.code == 2);
    CHECK(r.output.find(expected) != std::string::npos);
    CHECK(r.output.rfind("specwave: error: ", 0) == 0);  // the house prefix, first
    CHECK(r.output.find('\n') == r.output.size() - 1);   // one line
  }
  // Option values that used to pass: NaN minutes (silently ignored), a negative grid limit (exit 3, not 2).
  const std::string small = write_case("cli-options", base_case);
  for (const char* value : {"nan", "inf", "-1", "ten"}) {
    CAPTURE(value);
    const Result r = run_specwave(std::string("forward --checkpoint-minutes ") + value + " " + small);
    CHECK(r.code == 2);
    CHECK(r.output.find("--checkpoint-minutes") != std::string::npos);
  }
  CHECK(run_specwave("validate --max-points -1 " + small).code == 2);
  // Whole-number options: their bounds in words (CLI11 printed DBL_MAX's 309 digits), non-numbers named.
  for (const auto& [args_, expected_] : std::vector<std::pair<std::string, std::string>>{
           {"forward --shot-groups -1 ", "--shot-groups: must be a whole number >= 0 (found -1)"},
           {"forward --process-grid 2,0,1 ", "--process-grid: must be a whole number >= 1 (found 0)"},
           {"forward --checkpoint-every 1.5 ", "--checkpoint-every: must be a whole number >= 0 (found 1.5)"},
           {"forward --threads abc ", "--threads: must be a whole number in 0..1024 (found abc)"},
           {"invert --threads 99999999999999999999 ", "must be a whole number in 0..1024 (found 99999999999999999999)"},
           {"validate --max-points 0 ", "--max-points: must be a whole number >= 1 (found 0)"},
           {"sweep --max-parallel 0 ", "--max-parallel: must be a whole number >= 1 (found 0)"}}) {
    const std::string& args = args_;  // clang 14 cannot capture a structured binding
    const std::string& expected = expected_;
    CAPTURE(args);
    const Result r = run_specwave(args + small);
    CAPTURE(r.output);
    CHECK(r.code == 2);
    CHECK(r.output.find(expected) != std::string::npos);
    CHECK(r.output.find("000000") == std::string::npos);
    CHECK(r.output.find('\n') == r.output.size() - 1);
    ++tested;
  }
  CHECK_FALSE(fs::exists(work / "out"));
  // The case file itself a FIFO or a directory: refused without opening it.
  const Result fifo_case = run_specwave("check " + (work / "fifo.h5").string(), "timeout 120");
  CHECK(fifo_case.code == 4);
  CHECK(fifo_case.output.find("not a regular file") != std::string::npos);
  MESSAGE(tested << " bad case inputs tested");
  CHECK(tested >= 90);
}

TEST_CASE("a run that blows up stops with step and location, and leaves no output file behind") {
  fs::create_directories(work);
  const std::string path = write_case(
      "blowup", replaced(base_case, "pml_width = 10", "pml_width = 10\n[run]\nmax_amplitude = 1e-30\ncheck_every = 5"));
  fs::remove_all(work / "out");
  const Result r = run_specwave("forward " + path);
  CAPTURE(r.output);
  CHECK(r.code == 7);
  CHECK(r.output.find("unstable at shot 0 step") != std::string::npos);
  CHECK(r.output.find("index (z=") != std::string::npos);
  CHECK_FALSE(fs::exists(work / "out" / "traces.h5"));
  CHECK_FALSE(fs::exists(work / "out" / "wavefield.h5"));
  for (const auto& e : fs::directory_iterator(work / "out"))  // but the (empty) lock of the folder
    if (e.path().filename() != ".specwave.lock") CHECK_MESSAGE(false, "left behind: " << e.path());
  // The threshold is the user's (below its default): the message names it and says to raise it.
  CHECK(r.output.find("above run.max_amplitude = 1e-30") != std::string::npos);
  CHECK(r.output.find("raise it") != std::string::npos);
  // After a completed run, a rerun that fails leaves no run.json saying "completed".
  const Result ok = run_specwave("forward -q " + write_case("blowup-ok", base_case));
  REQUIRE(ok.code == 0);
  REQUIRE(fs::exists(work / "out" / "run.json"));
  CHECK(run_specwave("forward -q " + path).code == 7);
  CHECK_FALSE(fs::exists(work / "out" / "run.json"));
}

TEST_CASE("forward plots the gather of every shot, or of the shots output.plot_shots names") {
  fs::create_directories(work);
  const std::string three =
      replaced(replaced(testing::cli_base_case(
                            "gathers", {"[200.0, 200.0, 120.0]", "[200.0, 200.0, 200.0]", "[200.0, 200.0, 280.0]"}),
                        "points = [[200.0, 200.0, 280.0]]", "points = [[200.0, 200.0, 150.0], [200.0, 200.0, 250.0]]"),
               "duration = 0.2", "duration = 0.05");
  for (const bool selected : {false, true}) {
    CAPTURE(selected);
    const std::string text =
        replaced(three, "plots = false", selected ? "plots = true\nplot_shots = [2, 0, 2]" : "plots = true");
    const std::string path = write_case("gathers", text);
    fs::remove_all(work / "out");
    const Result r = run_specwave("forward --quiet " + path);
    CAPTURE(r.output);
    REQUIRE(r.code == 0);
    CHECK(fs::exists(work / "out" / "shot_gather_shot0000.png"));
    CHECK(fs::exists(work / "out" / "shot_gather_shot0001.png") == !selected);
    CHECK(fs::exists(work / "out" / "shot_gather_shot0002.png"));
    CHECK_FALSE(fs::exists(work / "out" / "shot_gather_shot0003.png"));
  }
}

TEST_CASE("a completed forward run removes what an earlier run left in its folder and it did not write") {
  // Three shots with gathers and final fields, then one shot without a wavefield into the same folder: the other
  // shots' gathers, every wavefield view and the wavefield file go (ParaView would read the views as one series).
  fs::create_directories(work);
  const std::string three =
      replaced(replaced(testing::cli_base_case(
                            "earlier", {"[200.0, 200.0, 120.0]", "[200.0, 200.0, 200.0]", "[200.0, 200.0, 280.0]"}),
                        "duration = 0.2", "duration = 0.05"),
               "plots = false", "plots = true");
  fs::remove_all(work / "out");
  REQUIRE(run_specwave("forward --quiet " + write_case("earlier", three)).code == 0);
  for (const char* f : {"shot_gather_shot0002.png", "wavefield_shot0002_final.vtkhdf", "wavefield.h5"})
    REQUIRE(fs::exists(work / "out" / f));
  std::ofstream(work / "out" / "notes.txt") << "mine\n";  // not the program's: kept
  const std::string one =
      replaced(replaced(replaced(testing::cli_base_case("later"), "duration = 0.2", "duration = 0.05"), "plots = false",
                        "plots = true"),
               "directory = \"out\"", "directory = \"out\"\nfinal_field = false");
  const Result r = run_specwave("forward " + write_case("later", one));
  CAPTURE(r.output);
  REQUIRE(r.code == 0);
  CHECK(r.output.find("output      removed 7 file(s) an earlier run left in") != std::string::npos);
  CHECK(fs::exists(work / "out" / "shot_gather_shot0000.png"));
  for (const char* f : {"shot_gather_shot0001.png", "shot_gather_shot0002.png", "wavefield_shot0000_final.vtkhdf",
                        "wavefield_shot0002_final.vtkhdf", "wavefield.h5", "wavefield.xdmf"})
    CHECK_MESSAGE(!fs::exists(work / "out" / f), f);
  CHECK(fs::exists(work / "out" / "notes.txt"));
  CHECK(fs::exists(work / "out" / "traces.h5"));
}

TEST_CASE("force sources and four-component receivers: traces.h5 names each trace's component, one gather each") {
  fs::create_directories(work);
  std::string text = replaced(
      replaced(base_case, "points = [[200.0, 200.0, 280.0]]",
               "points = [[200.0, 200.0, 280.0], [150.0, 200.0, 260.0]]\ncomponents = [\"p\", \"vz\", \"vx\"]"),
      "plots = false", "plots = true");
  text =
      replaced(text, "peak_frequency = 10.0", "peak_frequency = 10.0\nkind = \"force\"\ndirection = [1.0, 0.0, 1.0]");
  // Without the density: refused by the preflight (exit 3), nothing written.
  fs::remove_all(work / "out");
  const Result missing = run_specwave("forward --quiet " + write_case("components", text));
  CHECK(missing.code == 3);
  CHECK(missing.output.find("add density = 1000.0 (kg/m^3") != std::string::npos);
  CHECK_FALSE(fs::exists(work / "out"));
  text = replaced(text, "velocity = 2000.0", "velocity = 2000.0\ndensity = 1000.0");
  const std::string path = write_case("components", text);
  const Result r = run_specwave("forward --quiet " + path);
  CAPTURE(r.output);
  REQUIRE(r.code == 0);
  io::h5::Reader traces((work / "out" / "traces.h5").string());
  CHECK(io::h5::read_attribute_string(traces.id(), "schema_version") == "1.3");
  CHECK(traces.info("traces").dims == std::vector<hsize_t>{1, 6, traces.info("traces").dims[2]});
  REQUIRE(traces.info("receiver_component").dims == std::vector<hsize_t>{6});
  std::vector<std::int32_t> codes(6);
  const io::h5::Handle d = traces.open_dataset("receiver_component");
  REQUIRE(H5Dread(d.id(), H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, codes.data()) >= 0);
  CHECK(codes == std::vector<std::int32_t>{0, 1, 3, 0, 1, 3});
  for (const char* f : {"shot_gather_shot0000.png", "shot_gather_shot0000_vz.png", "shot_gather_shot0000_vx.png"})
    CHECK_MESSAGE(fs::exists(work / "out" / f), f);
  // The gradient fits those traces as they are (velocity rows in m/s); data whose components are not the case's are
  // refused before anything is written (exit 4).
  const std::string observed = (work / "out" / "traces.h5").string();
  const std::string fit = text + "[inversion]\nobserved = \"" + observed + "\"\n";
  fs::remove_all(work / "out_g");
  const Result g = run_specwave("gradient --quiet --output-dir " + (work / "out_g").string() + " " +
                                write_case("components_gradient", fit));
  CAPTURE(g.output);
  CHECK(g.code == 0);
  fs::remove_all(work / "out_g");
  const Result wrong = run_specwave("gradient --quiet --output-dir " + (work / "out_g").string() + " " +
                                    write_case("components_wrong", replaced(fit, "components = [\"p\", \"vz\", \"vx\"]",
                                                                            "components = [\"p\", \"vx\", \"vz\"]")));
  CHECK(wrong.code == 4);
  CHECK(wrong.output.find("trace 1 (shot 0 receiver 1) records component code 1") != std::string::npos);
  CHECK_FALSE(fs::exists(work / "out_g"));
  // validate (the Eigen reference records pressure from pressure sources) refuses them (exit 3).
  const Result v = run_specwave("validate " + path);
  CHECK(v.code == 3);
  CHECK(v.output.find("particle-velocity receivers") != std::string::npos);
}

TEST_CASE("forward writes traces, wavefield and model with the documented schema; check and info run") {
  fs::create_directories(work);
  const std::string path =
      write_case("good", replaced(base_case, "plots = false", "plots = true\nsnapshot_every = 50"));
  fs::remove_all(work / "out");
  const Result check = run_specwave("check " + path);
  CHECK(check.code == 0);
  CHECK(check.output.find("CFL number") != std::string::npos);
  CHECK(check.output.find("points per wavelength") != std::string::npos);
  CHECK(check.output.find("memory") != std::string::npos);
  CHECK_FALSE(fs::exists(work / "out" / "traces.h5"));
  const Result r = run_specwave("forward " + path);
  CAPTURE(r.output);
  REQUIRE(r.code == 0);
  CHECK(r.output.find("[progress] shot 0 (of 1) step") != std::string::npos);
  // Each progress line ends with the wall clock in UTC, for a Slurm log read hours later.
  CHECK(std::regex_search(
      r.output,
      std::regex(R"(\[progress\] shot 0 \(of 1\) step [^\n]*\| ETA [^|\n]* \| 20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ\n)")));
  CHECK(r.output.find('\r') == std::string::npos);
  io::h5::Reader traces((work / "out" / "traces.h5").string());
  CHECK(io::h5::read_attribute_string(traces.id(), "file_type") == "specwave.traces");
  CHECK(io::h5::read_attribute_string(traces.id(), "case_text").find("[grid]") != std::string::npos);
  const auto info = traces.info("traces");
  REQUIRE(info.dims.size() == 3);
  CHECK(info.dims[0] == 1);
  CHECK(info.dims[1] == 1);
  io::h5::Reader wave((work / "out" / "wavefield.h5").string());
  CHECK(wave.info("/shot_0000/final").dims == std::vector<hsize_t>{40, 40, 40});
  CHECK(wave.info("/shot_0000/snapshots").dims[0] >= 1);
  for (const char* f : {"model.h5", "wavefield.xdmf", "model.xdmf", "shot_gather_shot0000.png", "wavefield_slice.png",
                        "model_slice.png"})
    CHECK_MESSAGE(fs::exists(work / "out" / f), f);
  CHECK(run_specwave("info").output.find("HDF5") != std::string::npos);
  CHECK(run_specwave("forward --help").code == 0);

  // The traces through SEG-Y and back: same shape and dt (docs/segy.md).
  const std::string sgy = (work / "out" / "traces.sgy").string(), back = (work / "out" / "back.h5").string();
  const Result ex = run_specwave("segy export " + (work / "out" / "traces.h5").string() + " " + sgy);
  CAPTURE(ex.output);
  REQUIRE(ex.code == 0);
  REQUIRE(run_specwave("segy import " + sgy + " " + back).code == 0);
  io::h5::Reader round_trip(back);
  CHECK(round_trip.info("traces").dims == info.dims);
  // dt round-trips exactly (the extended sample interval, an IEEE double); a dt that is not a whole number of
  // microseconds is said, with where the exact value is.
  const double dt = io::read_trace_file((work / "out" / "traces.h5").string()).dt;
  CHECK(io::read_trace_file(back).dt == dt);
  const bool whole_us = std::abs(dt * 1e6 - std::round(dt * 1e6)) <= 1e-9 * dt * 1e6;
  CHECK((ex.output.find("not a whole number of them") != std::string::npos) == !whole_us);
  if (!whole_us) CHECK(ex.output.find("extended sample interval (3273-3280)") != std::string::npos);
  CHECK(run_specwave("segy import " + path + " " + back).code == 4);  // a TOML file is no SEG-Y: input error
}

namespace {

// A small case for check-gradient; the [inversion] part is appended by each test.
const char* gradient_case = R"(name = "grad"
[grid]
shape = [28, 26, 30]
spacing = 10.0
[model]
type = "homogeneous"
velocity = 2000.0
[time]
duration = 0.1
dt = 0.0012
[[shots]]
[[shots.sources]]
position = [100.0, 130.0, 90.0]
peak_frequency = 15.0
[receivers]
points = [[100.0, 120.0, 200.0], [180.0, 130.0, 150.0]]
[scheme]
order = 8
[boundary]
pml_width = 6
[run]
precision = "fp64"
[output]
directory = "out-grad"
plots = false
final_field = false
)";

}  // namespace

TEST_CASE("check-gradient: the shipped case passes; observed data from a traces file; refusals") {
  fs::create_directories(work);
  SUBCASE("cases/validation/gradient.toml") {
    const Result r = run_specwave(std::string("check-gradient --threads 1 ") + SPECWAVE_SOURCE_DIR +
                                  "/cases/validation/gradient.toml");
    CAPTURE(r.output);
    CHECK(r.code == 0);
    CHECK(r.output.find("| fp64 |") != std::string::npos);
    CHECK(r.output.find("| fp32 |") != std::string::npos);
    CHECK(r.output.find("least-squares slopes") != std::string::npos);
    CHECK(r.output.find("check-gradient: the adjoint and the gradient pass") != std::string::npos);
  }
  SUBCASE("observed = the traces.h5 of a forward run with the true model") {
    // The data: the true model (a Gaussian anomaly) through `specwave forward`, at the same dt.
    const std::string truth =
        replaced(gradient_case, "type = \"homogeneous\"\nvelocity = 2000.0",
                 "type = \"gaussian\"\nvelocity = 2000.0\nanomaly = 250.0\ncenter = [140.0, 130.0, 150.0]\n"
                 "radius = 40.0");
    fs::remove_all(work / "out-grad");
    REQUIRE(run_specwave("forward -q " + write_case("grad-truth", truth)).code == 0);
    const std::string data = (work / "out-grad" / "traces.h5").string();
    const Result r = run_specwave("check-gradient " +
                                  write_case("grad-file", std::string(gradient_case) + "[inversion]\nobserved = \"" +
                                                              data + "\"\nparameterisation = \"slowness2\"\n"));
    CAPTURE(r.output);
    CHECK(r.code == 0);
    CHECK(r.output.find("parameter slowness2") != std::string::npos);
    // The same data against a case at another dt: resampled to the data's times, which needs the simulation to
    // outlast the data by the interpolator's window; this one does not: refused, naming the time.duration needed.
    const Result bad =
        run_specwave("check-gradient " + write_case("grad-dt", replaced(gradient_case, "dt = 0.0012", "dt = 0.00121") +
                                                                   "[inversion]\nobserved = \"" + data + "\"\n"));
    CHECK(bad.code == 4);
    CHECK(bad.output.find("traces.h5: dataset '/traces' lasts 0.0996 s (84 samples of 0.0012 s); resampling the "
                          "synthetic data to those times needs the simulation to run") != std::string::npos);
    CHECK(bad.output.find("set time.duration >= ") != std::string::npos);
  }
  SUBCASE("wavefield_storage = \"boundary\": the Taylor test with fields rebuilt backwards") {
    const Result r = run_specwave(
        "check-gradient --threads 1 " +
        write_case("grad-boundary", std::string(gradient_case) +
                                        "[inversion]\nwavefield_storage = \"boundary\"\n"
                                        "[inversion.true_model]\ntype = \"gaussian\"\nvelocity = 2000.0\n"
                                        "anomaly = 200.0\ncenter = [140.0, 130.0, 150.0]\nradius = 40.0\n"));
    CAPTURE(r.output);
    CHECK(r.code == 0);
    CHECK(r.output.find("wavefields: absorbing-layer values, fields rebuilt backwards") != std::string::npos);
    CHECK(r.output.find("check-gradient: the adjoint and the gradient pass") != std::string::npos);
  }
  SUBCASE("a case without [inversion]") {
    const Result r = run_specwave("check-gradient " + write_case("grad-none", gradient_case));
    CHECK(r.code == 3);
    CHECK(r.output.find("check-gradient needs an [inversion] table") != std::string::npos);
  }
  SUBCASE("a starting model outside the velocity bounds") {
    const Result r = run_specwave("check-gradient " +
                                  write_case("grad-bounds", std::string(gradient_case) +
                                                                "[inversion]\nvelocity_min = 2100.0\n"
                                                                "[inversion.true_model]\ntype = \"homogeneous\"\n"
                                                                "velocity = 2200.0\n"));
    CHECK(r.code == 3);
    CHECK(r.output.find("outside inversion.velocity_min/max") != std::string::npos);
  }
}

TEST_CASE("validate --cases: stored references are regenerated only when asked, and a changed result fails") {
  const fs::path folder = work / "regression";
  fs::remove_all(folder);
  fs::create_directories(folder);
  const std::string small = replaced(replaced(replaced(base_case, "shape = [40, 40, 40]", "shape = [36, 36, 36]"),
                                              "duration = 0.2", "duration = 0.12\ndt = 0.0015"),
                                     "position = [200.0, 200.0, 200.0]", "position = [170.0, 170.0, 140.0]");
  const std::string small_case =
      replaced(small, "points = [[200.0, 200.0, 280.0]]", "points = [[170.0, 170.0, 220.0]]");
  const std::string with_validation =
      small_case + "[validation]\ntier = \"smoke\"\nreference = \"ref.h5\"\nrel_l2 = 1e-6\n";
  std::ofstream(folder / "case.toml") << with_validation;
  const std::string cmd = "validate --cases " + folder.string();
  const Result missing = run_specwave(cmd);
  CHECK(missing.code == 4);
  CHECK(missing.output.find("--update") != std::string::npos);
  REQUIRE(run_specwave(cmd + " --update").code == 0);
  CHECK(fs::exists(folder / "ref.h5"));
  const Result same = run_specwave(cmd + " --report " + (folder / "report").string());
  CAPTURE(same.output);
  CHECK(same.code == 0);
  CHECK(same.output.find("1 passed, 0 failed") != std::string::npos);
  CHECK(fs::exists(folder / "report" / "report.md"));
  // A progress line per case (never silent), with the wall clock; none with -q.
  CHECK(
      std::regex_search(same.output, std::regex(R"(\[validate\] \S*case\.toml \(1 of 1 case files\): passed in \S+ \| )"
                                                R"(20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ\n)")));
  const Result quiet = run_specwave(cmd + " -q");
  CHECK(quiet.code == 0);
  CHECK(quiet.output.find("[validate]") == std::string::npos);
  // One case alone: a line per shot with the time of each of its runs.
  const Result one = run_specwave("validate " + (folder / "case.toml").string());
  CAPTURE(one.output);
  CHECK(std::regex_search(one.output, std::regex(R"(\[validate\] \S+ shot 0 \(of 1\): Eigen reference \S+, fp64 run )"
                                                 R"(\S+, fp32 run \S+ \| 20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ\n)")));
  // A 1% faster medium moves the arrival: the comparison fails (exit 8) and names the case.
  std::ofstream(folder / "case.toml") << replaced(with_validation, "velocity = 2000.0", "velocity = 2020.0");
  const Result changed = run_specwave(cmd);
  CAPTURE(changed.output);
  CHECK(changed.code == 8);
  CHECK(changed.output.find("FAILED") != std::string::npos);
  // The full tier includes smoke cases; an unknown tier is a usage error.
  CHECK(run_specwave(cmd + " --tier bogus").code == 2);
}

namespace {

// Flips one bit in the middle of the largest state array of `rank_file` (the HDF5 API, so the file stays valid and
// only the checksum can tell).
std::string flip_a_bit(const std::string& rank_file) {
  const hid_t file = H5Fopen(rank_file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  REQUIRE(file >= 0);
  const hid_t group = H5Gopen2(file, "propagator_0", H5P_DEFAULT);
  REQUIRE(group >= 0);
  H5G_info_t info;
  H5Gget_info(group, &info);
  std::string best;
  hssize_t best_size = -1;
  for (hsize_t k = 0; k < info.nlinks; ++k) {
    char name[256] = {};
    H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, k, name, sizeof name, H5P_DEFAULT);
    const hid_t d = H5Dopen2(group, name, H5P_DEFAULT);
    const hid_t space = H5Dget_space(d);
    const hssize_t n = H5Sget_simple_extent_npoints(space);
    if (n > best_size) best_size = n, best = name;
    H5Sclose(space);
    H5Dclose(d);
  }
  REQUIRE(best_size > 0);
  const hid_t d = H5Dopen2(group, best.c_str(), H5P_DEFAULT);
  std::vector<unsigned char> bytes(static_cast<std::size_t>(best_size));
  REQUIRE(H5Dread(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()) >= 0);
  bytes[bytes.size() / 2] ^= 0x10;
  REQUIRE(H5Dwrite(d, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()) >= 0);
  H5Dclose(d);
  H5Gclose(group);
  H5Fclose(file);
  return best;
}

}  // namespace

TEST_CASE("a checkpoint with a flipped bit, or whose model file changed, is refused on resume (exit 4, 3)") {
  const fs::path dir = work / "integrity";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::vector<hsize_t> dims = {40, 40, 40};
  io::h5::AtomicWriter w((dir / "model.h5").string());
  io::h5::write_dataset<float>(w.id(), "velocity", dims, std::vector<float>(40 * 40 * 40, 2000.f).data(), "m/s");
  w.commit();
  const std::string text = replaced(base_case, "type = \"homogeneous\"\nvelocity = 2000.0",
                                    "type = \"file\"\nfile = \"" + (dir / "model.h5").string() + "\"");
  const std::string path = (dir / "case.toml").string();
  std::ofstream(path) << text;
  const std::string a = (dir / "a").string(), b = (dir / "b").string();
  const Result stopped = run_specwave("forward -q " + path + " --output-dir " + a, "SPECWAVE_STOP_AFTER_STEPS=20");
  CAPTURE(stopped.output);
  REQUIRE(stopped.code == 10);
  fs::copy(a, b, fs::copy_options::recursive);
  const std::string rank_file = (fs::path(a) / "checkpoint" / "rank-00000.g1.h5").string();
  REQUIRE(fs::exists(rank_file));
  const std::string array = flip_a_bit(rank_file);
  const Result corrupt = run_specwave("forward -q --resume " + path + " --output-dir " + a);
  CAPTURE(corrupt.output);
  CHECK(corrupt.code == 4);
  CHECK(corrupt.output.find(rank_file + ": the state array " + array + " fails its checksum") != std::string::npos);
  CHECK_FALSE(fs::exists(fs::path(a) / "traces.h5"));

  // The model file changed under the checkpoint: refused, then the original model resumes and completes.
  std::vector<float> other(40 * 40 * 40, 2000.f);
  other[4321] = 1950.f;  // below v_max: dt (from v_max) stays, only the model checksum tells
  {
    io::h5::AtomicWriter m((dir / "model.h5").string());
    io::h5::write_dataset<float>(m.id(), "velocity", dims, other.data(), "m/s");
    m.commit();
  }
  const Result changed = run_specwave("forward -q --resume " + path + " --output-dir " + b);
  CAPTURE(changed.output);
  CHECK(changed.code == 3);
  CHECK(changed.output.find("the checkpoint belongs to another run") != std::string::npos);
  CHECK(changed.output.find("model.file changed") != std::string::npos);
  {
    io::h5::AtomicWriter m((dir / "model.h5").string());
    io::h5::write_dataset<float>(m.id(), "velocity", dims, std::vector<float>(40 * 40 * 40, 2000.f).data(), "m/s");
    m.commit();
  }
  const Result resumed = run_specwave("forward -q --resume " + path + " --output-dir " + b);
  CAPTURE(resumed.output);
  CHECK(resumed.code == 0);
  CHECK(fs::exists(fs::path(b) / "traces.h5"));

  // Requeued after it completed: the same run is not run again (its outputs untouched); a changed model file, or an
  // output gone, runs it again.
  const auto traces_time = fs::last_write_time(fs::path(b) / "traces.h5");
  const Result again = run_specwave("forward -q --resume " + path + " --output-dir " + b);
  CAPTURE(again.output);
  CHECK(again.code == 0);
  CHECK(again.output.find("this run completed already") != std::string::npos);
  CHECK(again.output.find("done        nothing run: 1 shot(s)") != std::string::npos);
  CHECK(fs::last_write_time(fs::path(b) / "traces.h5") == traces_time);
  {
    io::h5::AtomicWriter m((dir / "model.h5").string());
    io::h5::write_dataset<float>(m.id(), "velocity", dims, other.data(), "m/s");
    m.commit();
  }
  const Result rerun = run_specwave("forward -q --resume " + path + " --output-dir " + b);
  CAPTURE(rerun.output);
  CHECK(rerun.code == 0);
  CHECK(rerun.output.find("no checkpoint in") != std::string::npos);
  CHECK(rerun.output.find("it runs again") != std::string::npos);
  CHECK(rerun.output.find("completed already") == std::string::npos);
  CHECK(run_specwave("forward -q --resume " + path + " --output-dir " + b).output.find("completed already") !=
        std::string::npos);
  fs::remove(fs::path(b) / "traces.h5");
  const Result missing = run_specwave("forward -q --resume " + path + " --output-dir " + b);
  CHECK(missing.code == 0);
  CHECK(missing.output.find("completed already") == std::string::npos);
  CHECK(fs::exists(fs::path(b) / "traces.h5"));
}

TEST_CASE(
    "the elastic CPML's late growth: the M-PML runs the case to its end; without it the watch stops it (exit 7); the "
    "checks run in a gradient's and a Born run's forward passes too") {
  // Two solid layers under a free surface, CPML on the other faces (an independent probe's case, 2026-12-07): with a
  // plain CPML (boundary.pml_multiaxial = 0) the field falls to 1e-1 of its peak by 1.5 s, then grows about 15-fold
  // every 1.46 s from the x faces' layers at the interface (docs/validation.md, "Late growth"), and the watch stops
  // it at 6.6 s, 1044 times its earlier largest value (run.late_growth_factor 1000), where run.max_amplitude (1e20)
  // would have let it run on. With the default M-PML it runs to the end, and its field there is far below its peak.
  fs::create_directories(work);
  const std::string text =
      "name = \"late_growth\"\n[grid]\nshape = [100, 1, 100]\nspacing = 10.0\n[model]\ntype = \"layered\"\n"
      "interfaces = [203.0]\nvelocities = [2400.0, 3000.0]\nshear_velocities = [800.0, 1500.0]\n"
      "densities = [1000.0, 2500.0]\n[time]\nduration = 8.0\n[[shots]]\n[[shots.sources]]\n"
      "position = [0.0, 0.0, 480.0]\npeak_frequency = 6.0\nkind = \"force\"\ndirection = [1.0, 0.0, 0.0]\n"
      "[receivers]\ncomponents = [\"vz\", \"vx\"]\npoints = [[300.0, 0.0, 500.0]]\n[scheme]\norder = 8\n"
      "min_points_per_wavelength = 3.0\n[boundary]\npml_width = 12\nfree_surface = true\n[run]\n"
      "precision = \"fp64\"\n[output]\ndirectory = \"out\"\nplots = false\n";
  fs::remove_all(work / "out");
  const Result plain = run_specwave(
      "forward --quiet " + write_case("late-growth-plain", replaced(text, "free_surface = true",
                                                                    "free_surface = true\npml_multiaxial = 0")));
  CAPTURE(plain.output);
  CHECK(plain.code == 7);
  CHECK(plain.output.find("its sources fell silent at step 323") != std::string::npos);
  CHECK(plain.output.find("boundary.pml_multiaxial = 0 here") != std::string::npos);
  CHECK_FALSE(fs::exists(work / "out" / "traces.h5"));
  const Result r = run_specwave("forward --quiet " + write_case("late-growth", text));
  CAPTURE(r.output);
  REQUIRE(r.code == 0);
  io::h5::Reader file((work / "out" / "traces.h5").string());
  const auto dims = file.info("traces").dims;
  REQUIRE(dims.size() == 3);
  const std::vector<double> traces = file.read_floating<double>("traces", dims);
  const std::size_t nt = dims[2];
  double early = 0, late = 0;  // the largest |v| in the first and the last eighth of the run
  for (std::size_t k = 0; k < 2; ++k)
    for (std::size_t n = 0; n < nt; ++n) {
      const double v = std::abs(traces[k * nt + n]);
      if (n < nt / 8) early = std::max(early, v);
      if (n >= nt - nt / 8) late = std::max(late, v);
    }
  MESSAGE("largest |v| in the first eighth " << early << ", in the last " << late);
  CHECK(late < 1e-4 * early);
  // The forward passes of gradient, invert, born and migrate run the same checks (forward_step; the late growth
  // itself through the Python Operator, python/tests/test_gradient.py). Cheaply, since test_cli also runs under the
  // sanitizers: a run.max_amplitude below the field stops a gradient fitting these traces, and a Born run (whose
  // elastic background steps in a loop of its own), at the first check, before anything is written.
  const std::string tiny = replaced(text, "precision = \"fp64\"", "precision = \"fp64\"\nmax_amplitude = 1e-30");
  const Result gradient = run_specwave(
      "gradient --quiet " +
      write_case("late-growth-gradient",
                 tiny + "[inversion]\nobserved = \"out/traces.h5\"\nwavefield_storage = \"checkpoints\"\n") +
      " --output-dir " + (work / "late-gradient").string());
  CAPTURE(gradient.output);
  CHECK(gradient.code == 7);
  CHECK(gradient.output.find("at shot 0 step 50 ") != std::string::npos);
  CHECK(gradient.output.find("above run.max_amplitude = 1e-30") != std::string::npos);
  CHECK_FALSE(fs::exists(work / "late-gradient" / "gradient.h5"));
  {
    const std::vector<float> bump(100 * 100, 1.0f);
    io::h5::AtomicWriter p((work / "late-perturbation.h5").string());
    io::h5::write_dataset<float>(p.id(), "perturbation", {100, 1, 100}, bump.data(), "m/s");
    p.commit();
  }
  const Result born =
      run_specwave("born --quiet " + write_case("late-growth-born", tiny) + " --perturbation " +
                   (work / "late-perturbation.h5").string() + " --output-dir " + (work / "late-born").string());
  CAPTURE(born.output);
  CHECK(born.code == 7);
  CHECK(born.output.find("at shot 0 step 50 ") != std::string::npos);
  CHECK_FALSE(fs::exists(work / "late-born" / "born_traces.h5"));
}

TEST_CASE("attenuation velocities measured far above the band (a sonic log) run, with a note of the dispersion") {
  fs::create_directories(work);
  const std::string text = replaced(testing::cli_base_case("sonic"), "pml_width = 10",
                                    "pml_width = 10\n[attenuation]\nq = 50\nreference_frequency = 1e4");
  const Result r = run_specwave("check " + write_case("sonic", text));
  CAPTURE(r.output);
  CHECK(r.code == 0);
  CHECK(r.output.find("attenuation.reference_frequency = 1e+04 Hz lies more than 100 times outside the band") !=
        std::string::npos);
  // (A shot listed twice in plot_shots is plotted once, and noted.)
  const Result twice =
      run_specwave("check " + write_case("twice", replaced(testing::cli_base_case("twice"), "plots = false",
                                                           "plots = true\nplot_shots = [0, 0]")));
  CHECK(twice.code == 0);
  CHECK(twice.output.find("output.plot_shots lists shot 0 more than once; its gather is plotted once") !=
        std::string::npos);
}

TEST_CASE("a Gaussian anomaly that falls between the grid's points is noted; an absurd one is refused") {
  fs::create_directories(work);
  const std::string gaussian =
      replaced(testing::cli_base_case("gaussian"), "type = \"homogeneous\"\nvelocity = 2000.0",
               "type = \"gaussian\"\nvelocity = 2000.0\nanomaly = 300.0\ncenter = [205.0, 205.0, 205.0]\nradius = 1.0");
  const Result narrow = run_specwave("check " + write_case("gaussian-narrow", gaussian));
  CAPTURE(narrow.output);
  CHECK(narrow.code == 0);
  CHECK(narrow.output.find("model.anomaly = 300 m/s changes no grid point by more than") != std::string::npos);
  const Result wide =
      run_specwave("check " + write_case("gaussian-wide", replaced(gaussian, "radius = 1.0", "radius = 30.0")));
  CHECK(wide.code == 0);
  CHECK(wide.output.find("changes no grid point") == std::string::npos);
  for (const auto& [from, to, key] : std::vector<std::array<std::string, 3>>{
           {"anomaly = 300.0", "anomaly = 1e300", "model.anomaly"},
           {"radius = 1.0", "radius = 1e300", "model.radius"},
           {"center = [205.0, 205.0, 205.0]", "center = [1e300, 205.0, 205.0]", "model.center"}}) {
    const std::string name = key;  // (clang 14: no structured bindings in CAPTURE)
    CAPTURE(name);
    const Result r = run_specwave("check " + write_case("gaussian-bad", replaced(gaussian, from, to)));
    CHECK(r.code == 3);
    CHECK(r.output.find("gaussian-bad.toml:") != std::string::npos);
    CHECK(r.output.find(name) != std::string::npos);
  }
}

TEST_CASE("check refuses, before reading or allocating them, inputs whose size the run cannot hold") {
  const fs::path dir = work / "sizes";
  fs::remove_all(dir);
  fs::create_directories(dir);
  // A model file far finer than the grid (declared 1e5^3 at 1 cm, nothing written: a few KB on disk): resampling
  // would read a (39002, ...) box of it. Refused (exit 6) naming the box, before it is allocated.
  {
    const hid_t file = H5Fcreate((dir / "fine.h5").string().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hsize_t dims[3] = {100000, 100000, 100000}, chunk[3] = {64, 64, 64};
    const io::h5::Handle space(H5Screate_simple(3, dims, nullptr));
    const io::h5::Handle props(H5Pcreate(H5P_DATASET_CREATE));
    H5Pset_chunk(props.id(), 3, chunk);
    const io::h5::Handle d(
        H5Dcreate2(file, "velocity", H5T_NATIVE_FLOAT, space.id(), H5P_DEFAULT, props.id(), H5P_DEFAULT));
    const std::vector<double> spacing = {0.01, 0.01, 0.01};
    io::h5::write_attribute(d.id(), "spacing", std::span<const double>(spacing));
    H5Fclose(file);
  }
  const Result fine = run_specwave(
      "check " + write_case("sizes-model", replaced(base_case, "type = \"homogeneous\"\nvelocity = 2000.0",
                                                    "type = \"file\"\nfile = \"" + (dir / "fine.h5").string() + "\"")));
  CAPTURE(fine.output);
  CHECK(fine.code == 6);
  CHECK(fine.output.find("resampling it onto the grid reads a box of (39002, 39002, 39002) of its points") !=
        std::string::npos);
  // output.trace_dt giving more samples a trace than a run may have steps: exit 3, naming the key.
  const Result samples = run_specwave(
      "check " + write_case("sizes-trace-dt", replaced(base_case, "plots = false", "plots = false\ntrace_dt = 1e-12")));
  CAPTURE(samples.output);
  CHECK(samples.code == 3);
  CHECK(samples.output.find("output.trace_dt = 1e-12 s over time.duration = 0.2 s is 2e+11 samples a trace") !=
        std::string::npos);
  // A Ricker wavelet that lasts far longer than the run (its delay): named as the shot's source, exit 3.
  const Result ricker =
      run_specwave("check " + write_case("sizes-ricker", replaced(base_case, "peak_frequency = 10.0",
                                                                  "peak_frequency = 10.0\ndelay = 1e300")));
  CAPTURE(ricker.output);
  CHECK(ricker.code == 3);
  CHECK(ricker.output.find("shots[0].sources[0]: the Ricker wavelet (peak_frequency = 10 Hz, delay = 1e+300 s)") !=
        std::string::npos);
}

TEST_CASE("no clobbering: inputs that outputs would overwrite, symlinks at temporary names, exports onto inputs") {
  const fs::path dir = work / "clobber";
  fs::remove_all(dir);
  fs::create_directories(dir / "out");
  const auto bytes_of = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  // model.file inside the output folder under a name the run writes.
  {
    io::h5::AtomicWriter w((dir / "out" / "model.h5").string());
    io::h5::write_dataset<float>(w.id(), "velocity", {40, 40, 40}, std::vector<float>(64000, 2000.f).data(), "m/s");
    w.commit();
  }
  const std::string before = bytes_of(dir / "out" / "model.h5");
  const std::string own_model = (dir / "own-model.toml").string();
  std::ofstream(own_model) << replaced(base_case, "type = \"homogeneous\"\nvelocity = 2000.0",
                                       "type = \"file\"\nfile = \"out/model.h5\"");
  for (const char* command : {"check ", "forward -q "}) {
    const Result r = run_specwave(command + own_model);
    CAPTURE(r.output);
    CHECK(r.code == 5);
    CHECK(r.output.find("model.file (") != std::string::npos);
    CHECK(r.output.find("it would overwrite its own input") != std::string::npos);
    CHECK(bytes_of(dir / "out" / "model.h5") == before);
  }
  // A case file named run.json with output ".": refused, the case file intact.
  const fs::path json_case = dir / "run.json";
  std::ofstream(json_case) << replaced(base_case, "directory = \"out\"", "directory = \".\"");
  const std::string json_text = bytes_of(json_case);
  const Result r_json = run_specwave("forward -q " + json_case.string());
  CAPTURE(r_json.output);
  CHECK(r_json.code == 5);
  CHECK(bytes_of(json_case) == json_text);
  // A symlink planted at out/traces.h5.partial: the run replaces the link, never writes through it.
  const fs::path victim = dir / "victim.txt";
  std::ofstream(victim) << "precious\n";
  const fs::path run_dir = dir / "run";
  fs::create_directories(run_dir);
  fs::create_symlink(victim, run_dir / "traces.h5.partial");
  const std::string plain = (dir / "plain.toml").string();
  std::ofstream(plain) << base_case;
  const Result r_link = run_specwave("forward -q " + plain + " --output-dir " + run_dir.string());
  CAPTURE(r_link.output);
  CHECK(r_link.code == 0);
  CHECK(bytes_of(victim) == "precious\n");
  CHECK(fs::is_regular_file(fs::symlink_status(run_dir / "traces.h5")));
  // segy export onto its own input, or onto a folder: refused, nothing left behind.
  const std::string traces = (run_dir / "traces.h5").string();
  const std::string traces_bytes = bytes_of(traces);
  const Result self = run_specwave("segy export " + traces + " " + traces);
  CAPTURE(self.output);
  CHECK(self.code == 5);
  CHECK(self.output.find("is the input") != std::string::npos);
  CHECK(bytes_of(traces) == traces_bytes);
  fs::create_directories(dir / "folder.sgy");
  const Result onto_dir = run_specwave("segy export " + traces + " " + (dir / "folder.sgy").string());
  CHECK(onto_dir.code == 5);
  for (const auto& e : fs::directory_iterator(dir))
    CHECK(e.path().filename().string().find(".tmp-") == std::string::npos);
  // check with a dangling symlink as the output folder: refused, the link left as it was.
  fs::create_symlink(dir / "nowhere", dir / "dangling");
  const Result dangling = run_specwave("check " + plain + " --output-dir " + (dir / "dangling").string());
  CHECK(dangling.code == 5);
  CHECK(fs::is_symlink(dir / "dangling"));
}

TEST_CASE("one run per output folder: a second forward or invert into a folder in use is refused at once") {
  const fs::path dir = work / "locked";
  fs::remove_all(dir);
  fs::create_directories(dir / "out");
  // Another run holds the folder (as `forward` does: flock on out/.specwave.lock, its identity inside), and has
  // partial outputs there.
  const int fd = ::open((dir / "out" / ".specwave.lock").c_str(), O_RDWR | O_CREAT, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
  const std::string holder = "host nodeA, pid 4242, specwave forward, since 2026-12-01 10:00:00 UTC\n";
  REQUIRE(::write(fd, holder.data(), holder.size()) == ssize_t(holder.size()));
  std::ofstream(dir / "out" / "traces.h5.partial") << "the first run's\n";
  const std::string path = (dir / "case.toml").string();
  std::ofstream(path) << base_case;
  const Result second = run_specwave("forward -q " + path);
  CAPTURE(second.output);
  CHECK(second.code == 5);
  CHECK(second.output.find("is in use by another specwave run (host nodeA, pid 4242, specwave forward") !=
        std::string::npos);
  CHECK(fs::exists(dir / "out" / "traces.h5.partial"));  // nothing of the first run's touched
  ::close(fd);                                           // the first run ends
  const Result third = run_specwave("forward -q " + path);
  CAPTURE(third.output);
  CHECK(third.code == 0);
  CHECK(fs::exists(dir / "out" / "traces.h5"));
}

TEST_CASE(
    "a source or receiver whose interpolation stencil reaches into the absorbing layer gets a note with the margin") {
  fs::create_directories(work);
  // x = 105 m: 10.5 grid points, the stencil (4 points each side) covers points 7..14 of which 7..9 are in the
  // 10-point layer; 130 m is on the grid (one point), 125 m the nearest off-grid position that stays clear.
  const std::string text = replaced(base_case, "points = [[200.0, 200.0, 280.0]]",
                                    "points = [[200.0, 200.0, 280.0], [200.0, 200.0, 105.0], [200.0, 200.0, 130.0], "
                                    "[200.0, 200.0, 135.0], [200.0, 200.0, 255.0], [200.0, 200.0, 264.0]]");
  const Result r = run_specwave("check " + write_case("cli-stencil-layer", text));
  CAPTURE(r.output);
  CHECK(r.code == 0);
  CHECK(r.output.find("receiver 1 at (200, 200, 105) m: its interpolation stencil reaches 3 point(s) into the "
                      "absorbing layer along x") != std::string::npos);
  CHECK(r.output.find("place it within [130, 250] m along x") != std::string::npos);
  CHECK(r.output.find("receiver 5 at (200, 200, 264) m: its interpolation stencil reaches 1 point(s)") !=
        std::string::npos);
  for (const char* clear : {"receiver 0 ", "receiver 2 ", "receiver 3 ", "receiver 4 "})
    CHECK(r.output.find(clear) == std::string::npos);
  // A patch of 3 x 3 receivers near the layer, 8 of them noted (receiver 4 is on a grid node): five notes by name,
  // then one line for the rest.
  const Result patch = run_specwave(
      "check " +
      write_case("cli-stencil-layer-patch",
                 replaced(base_case, "points = [[200.0, 200.0, 280.0]]",
                          "points = []\n[[receivers.planes]]\norigin = [200.0, 105.0, 105.0]\nu = [0.0, 5.0, "
                          "0.0]\nv = [0.0, 0.0, 5.0]\ncount = [3, 3]")));
  CAPTURE(patch.output);
  CHECK(patch.code == 0);
  CHECK(patch.output.find("receiver 5 at") != std::string::npos);
  CHECK(patch.output.find("receiver 6 at") == std::string::npos);
  CHECK(patch.output.find("and 3 more source(s) or receiver(s) whose interpolation stencil reaches into the "
                          "absorbing layer") != std::string::npos);
}

TEST_CASE("spectral method: receivers within 10 cells of a source at under 4 points per wavelength get one note") {
  fs::create_directories(work);
  // The receiver at x = 280 m is 8 cells from the source at 200 m; the one at (200, 280, 280) m is 11.3 cells away.
  const std::string spectral =
      replaced(replaced(base_case, "pml_width = 10", "pml_width = 10\n[scheme]\nmethod = \"spectral\""),
               "points = [[200.0, 200.0, 280.0]]", "points = [[200.0, 280.0, 280.0], [200.0, 200.0, 280.0]]");
  const Result fine = run_specwave("check " + write_case("cli-spectral-near-fine", spectral));
  CAPTURE(fine.output);
  CHECK(fine.code == 0);
  CHECK(fine.output.find("cells apart") == std::string::npos);  // 8.4 points per wavelength: no note
  const Result coarse = run_specwave(
      "check " + write_case("cli-spectral-near", replaced(spectral, "peak_frequency = 10.0", "peak_frequency = 25.0")));
  CAPTURE(coarse.output);
  CHECK(coarse.code == 0);
  CHECK(coarse.output.find("1 source-receiver pair(s) less than 10 cells apart (the nearest: receiver 1 and "
                           "shots[0].sources[0], 8 cells)") != std::string::npos);
}

TEST_CASE("--confine-writes: a case file cannot make the run write outside its output folder") {
  const fs::path dir = work / "confine";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string elsewhere = (work / "confine-elsewhere").string();
  const std::string path =
      write_case("cli-confine", replaced(base_case, "directory = \"out\"", "directory = \"" + elsewhere + "\""));
  const std::string in_dir = "cd " + dir.string() + " && ";
  const Result flag = testing::run_command(in_dir + SPECWAVE_BINARY + " check --confine-writes " + path);
  CAPTURE(flag.output);
  CHECK(flag.code == 5);
  CHECK(flag.output.find("lies outside the current directory") != std::string::npos);
  const Result env = testing::run_command(in_dir + "SPECWAVE_CONFINE_WRITES=1 " + SPECWAVE_BINARY + " check " + path);
  CHECK(env.code == 5);
  CHECK_FALSE(fs::exists(elsewhere));
  // The command line's own output folder is trusted; without confinement the case's folder is used as before.
  CHECK(testing::run_command(in_dir + SPECWAVE_BINARY + " check --confine-writes --output-dir out " + path).code == 0);
  CHECK(testing::run_command(in_dir + SPECWAVE_BINARY + " check " + path).code == 0);
  // An inversion's scratch folder outside the output folder.
  const std::string inv =
      write_case("cli-confine-inv", base_case +
                                        "[inversion]\nvelocity_min = 1500.0\nvelocity_max = 2500.0\n"
                                        "scratch_directory = \"/tmp\"\n[inversion.true_model]\ntype = \"homogeneous\"\n"
                                        "velocity = 2100.0\n");
  const Result scratch =
      testing::run_command(in_dir + SPECWAVE_BINARY + " invert --confine-writes --output-dir out " + inv);
  CAPTURE(scratch.output);
  CHECK(scratch.code == 5);
  CHECK(scratch.output.find("inversion.scratch_directory = /tmp lies outside the output folder") != std::string::npos);
}

TEST_CASE("check refuses, before building them, more receivers than the memory holds (their stencils counted)") {
  // 9,000,000 receivers on a 40^3 grid: about 200 GiB of interpolation stencils (8^3 points each). Refused with
  // exit 6 naming the receivers, before any stencil is made.
  fs::create_directories(work);
  const std::string text =
      replaced(base_case, "points = [[200.0, 200.0, 280.0]]",
               "planes = [{origin = [200.0, 110.0, 110.0], u = [0.0, 0.06, 0.0], v = [0.0, 0.0, 0.06], count = [3000, "
               "3000]}]");
  if (available_memory_bytes() > std::size_t(180) << 30) {
    MESSAGE("not run: this machine has more than 180 GiB available, the stencils would fit");
    return;
  }
  const Result r = run_specwave("check " + write_case("many-receivers", text));
  CAPTURE(r.output);
  CHECK(r.code == 6);
  CHECK(r.output.find("of it the interpolation stencils of 9000000 receivers") != std::string::npos);
  CHECK(r.output.find("record fewer receivers") != std::string::npos);
}
