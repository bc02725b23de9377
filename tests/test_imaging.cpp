// `specwave gradient`, `specwave born` and `specwave migrate` end to end (solver/inversion/imaging.hpp): the gradient
// file against central differences of the command's own misfit, Born against the gradient (dot-product test through
// the files), the reference migration (cases/imaging/reflector.toml) against the reflector's depth, and bad input
// refused before anything is written.
#include <doctest/doctest.h>

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli_helpers.hpp"
#include "io/hdf5.hpp"

namespace fs = std::filesystem;
using namespace specwave;
using testing::Result;
using testing::run_specwave;

namespace {

const fs::path work = fs::temp_directory_path() / "specwave_test_imaging";
constexpr int nz = 26, ny = 24, nx = 28;
const std::vector<hsize_t> dims = {nz, ny, nx};

// A small fp64 case: 2 shots, 4 receivers, homogeneous 2000 m/s; [inversion] appended by the tests.
std::string small_case(const std::string& model_table = "type = \"homogeneous\"\nvelocity = 2000.0\n") {
  return fmt::format(R"(name = "imaging-small"
[grid]
shape = [{}, {}, {}]
spacing = 10.0
[model]
{}[time]
duration = 0.1
[[shots]]
[[shots.sources]]
position = [100.0, 120.0, 70.0]
peak_frequency = 15.0
[[shots]]
[[shots.sources]]
position = [100.0, 120.0, 200.0]
peak_frequency = 15.0
[receivers]
points = [[100.0, 110.0, 200.0], [150.0, 130.0, 190.0], [60.0, 120.0, 200.0], [100.0, 110.0, 70.0]]
[scheme]
order = 8
[boundary]
pml_width = 6
[run]
precision = "fp64"
[output]
directory = "out"
plots = false
)",
                     nz, ny, nx, model_table);
}

// velocity_max fixes dt, so that every model below runs with the same steps.
const char* gaussian_truth = R"(type = "gaussian"
velocity = 2000.0
anomaly = 150.0
center = [120.0, 120.0, 135.0]
radius = 40.0
)";

std::string write_case(const std::string& name, const std::string& text) {
  fs::create_directories(work);
  const fs::path p = work / (name + ".toml");
  std::ofstream(p) << text;
  return p.string();
}

void write_array(const fs::path& path, const std::string& dataset, const std::vector<double>& values) {
  io::h5::AtomicWriter file(path.string());
  io::h5::write_dataset<double>(file.id(), dataset, dims, values.data(), "m/s");
  file.commit();
}

std::vector<double> read_array(const fs::path& path, const std::string& dataset,
                               const std::vector<hsize_t>& shape = dims) {
  return io::h5::Reader(path.string()).read_floating<double>(dataset, shape);
}

double root_attribute(const fs::path& path, const std::string& name) {
  const io::h5::Reader r(path.string());
  return io::h5::read_attribute_doubles(r.id(), name).at(0);
}

// A smooth perturbation inside the grid (m/s, peak 1): a Gaussian bump off the sources and receivers.
std::vector<double> bump() {
  std::vector<double> d(std::size_t(nz) * ny * nx);
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        const double r2 = (z * 10.0 - 130) * (z * 10.0 - 130) + (y * 10.0 - 115) * (y * 10.0 - 115) +
                          (x * 10.0 - 140) * (x * 10.0 - 140);
        d[(std::size_t(z) * ny + y) * nx + x] = std::exp(-0.5 * r2 / (30.0 * 30.0));
      }
  return d;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t k = 0; k < a.size(); ++k) s += a[k] * b[k];
  return s;
}

// The observed data of the Gaussian truth, made by `specwave forward` (traces.h5, fp64): a file, as a survey's.
fs::path observed_file(const std::string& duration = "0.1") {
  const fs::path out = work / ("truth-" + duration);
  if (fs::exists(out / "traces.h5")) return out / "traces.h5";
  std::string text = small_case(gaussian_truth);
  text.replace(text.find("duration = 0.1"), 14, "duration = " + duration);
  text += "[inversion]\nvelocity_max = 2300.0\ntrue_model = { type = \"homogeneous\", velocity = 2000.0 }\n";
  const Result r = run_specwave("forward -q " + write_case("truth", text) + " --output-dir " + out.string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  return out / "traces.h5";
}

std::string inversion_case(const std::string& name) {
  return write_case(name, small_case() + fmt::format("[inversion]\nvelocity_max = 2300.0\nobserved = \"{}\"\n",
                                                     observed_file().string()));
}

}  // namespace

TEST_CASE("gradient: the gradient in gradient.h5 matches central differences of the command's misfit") {
  const std::string case_path = inversion_case("gradient");
  const fs::path out = work / "gradient";
  fs::remove_all(out);
  const Result r = run_specwave("gradient --threads 1 " + case_path + " --output-dir " + out.string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(r.output.find("done        gradient: misfit ") != std::string::npos);
  for (const char* f : {"gradient.h5", "gradient.xdmf", "gradient.vtkhdf"}) CHECK(fs::exists(out / f));
  const std::vector<double> g = read_array(out / "gradient.h5", "gradient");
  const double j0 = root_attribute(out / "gradient.h5", "misfit");
  const std::vector<double> per_shot = read_array(out / "gradient.h5", "misfit_per_shot", {2});
  CHECK(per_shot[0] + per_shot[1] == doctest::Approx(j0).epsilon(1e-14));
  REQUIRE(j0 > 0);

  // The same model as a file (--model): the same bits.
  const std::vector<double> v0(std::size_t(nz) * ny * nx, 2000.0);
  write_array(work / "m0.h5", "velocity", v0);
  const Result same = run_specwave("gradient -q --threads 1 " + case_path + " --model " + (work / "m0.h5").string() +
                                   " --output-dir " + (out / "m0").string());
  REQUIRE(same.code == 0);
  CHECK(read_array(out / "m0" / "gradient.h5", "gradient") == g);

  // (J(m + h d) - J(m - h d)) / 2h = <g, d> + O(h^2), fp64.
  const std::vector<double> d = bump();
  const double h = 4.0;
  double j[2];
  for (int k = 0; k < 2; ++k) {
    std::vector<double> v = v0;
    for (std::size_t i = 0; i < v.size(); ++i) v[i] += (k == 0 ? h : -h) * d[i];
    const fs::path model = work / fmt::format("m{}.h5", k + 1);
    write_array(model, "model", v);
    const fs::path dir = out / fmt::format("m{}", k + 1);
    const Result rk = run_specwave("gradient -q --threads 1 " + case_path + " --model " + model.string() +
                                   " --model-dataset model --output-dir " + dir.string());
    INFO(rk.output);
    REQUIRE(rk.code == 0);
    j[k] = root_attribute(dir / "gradient.h5", "misfit");
  }
  const double fd = (j[0] - j[1]) / (2 * h), analytic = dot(g, d);
  INFO(fmt::format("central difference {:.10e}, <g, d> {:.10e}, relative difference {:.2e}", fd, analytic,
                   std::abs(fd - analytic) / std::abs(analytic)));
  CHECK(std::abs(analytic) > 1e-3 * std::abs(j0));  // the bump sees the data
  CHECK(std::abs(fd - analytic) <= 1e-4 * std::abs(analytic));
}

TEST_CASE("gradient: observed data at their own sampling (every 2nd sample, dt attribute 2 dt) are fitted there") {
  // The data file: the truth's traces at every other sample, with its own interval; the case's dt is unchanged.
  // 0.25 s: the waves have passed the receivers by the end of the record, so that the misfit's sum over the samples
  // approximates the same time integral at either interval.
  const fs::path truth = observed_file("0.25");
  const io::h5::Reader full(truth.string());
  const auto tdims = full.info("traces").dims;
  const double dt = io::h5::read_attribute_doubles(full.open_dataset("traces").id(), "dt").at(0);
  const std::vector<double> traces = full.read_floating<double>("traces", tdims);
  const hsize_t n2 = (tdims[2] + 1) / 2;
  std::vector<double> decimated;
  for (std::size_t t = 0; t < tdims[0] * tdims[1]; ++t)
    for (hsize_t k = 0; k < n2; ++k) decimated.push_back(traces[t * tdims[2] + 2 * k]);
  const auto write_traces = [&](const fs::path& path, const std::vector<double>& values, hsize_t n, double interval) {
    io::h5::AtomicWriter file(path.string());
    auto d = io::h5::write_dataset<double>(file.id(), "traces", {tdims[0], tdims[1], n}, values.data(), "1");
    io::h5::write_attribute(d.id(), "dt", interval);
    d.close();
    file.commit();
  };
  const fs::path coarse = work / "observed-2dt.h5", fine = work / "observed-dt.h5";
  write_traces(coarse, decimated, n2, 2 * dt);
  write_traces(fine, traces, tdims[2], dt);
  // The simulation outlasts the 0.25 s of data by the interpolator's window (12 samples of 2 dt).
  const auto resampled_case = [&](const std::string& name, const fs::path& data, const std::string& duration) {
    std::string t =
        small_case() + fmt::format("[inversion]\nvelocity_max = 2300.0\nobserved = \"{}\"\n", data.string());
    return write_case(name, t.replace(t.find("duration = 0.1"), 14, "duration = " + duration));
  };
  const std::string case_path = resampled_case("resampled", coarse, "0.29");
  const fs::path out = work / "resampled";
  fs::remove_all(out);
  const Result r = run_specwave("gradient -q --threads 1 " + case_path + " --output-dir " + out.string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  const Result f = run_specwave("gradient -q --threads 1 " + resampled_case("full-rate", fine, "0.29") +
                                " --output-dir " + (out / "full").string());
  INFO(f.output);
  REQUIRE(f.code == 0);
  // The same misfit integral and gradient, sampled twice as coarsely.
  const double j = root_attribute(out / "gradient.h5", "misfit"),
               j_full = root_attribute(out / "full" / "gradient.h5", "misfit");
  const std::vector<double> g = read_array(out / "gradient.h5", "gradient"),
                            g_full = read_array(out / "full" / "gradient.h5", "gradient");
  std::vector<double> diff(g.size());
  for (std::size_t k = 0; k < g.size(); ++k) diff[k] = g[k] - g_full[k];
  const double g_error = std::sqrt(dot(diff, diff) / dot(g_full, g_full));
  INFO(fmt::format("misfit {:.6e} (2 dt) against {:.6e} (dt): {:.2e} relative; gradient {:.2e} relative", j, j_full,
                   std::abs(j - j_full) / j_full, g_error));
  CHECK(std::abs(j - j_full) <= 1e-4 * j_full);  // measured 1.0e-5
  CHECK(g_error <= 5e-4);                        // measured 6.6e-5
  // The gradient is still the exact gradient of the resampled misfit: central differences.
  const std::vector<double> d = bump();
  const double h = 4.0;
  double jk[2];
  for (int k = 0; k < 2; ++k) {
    std::vector<double> v(std::size_t(nz) * ny * nx, 2000.0);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] += (k == 0 ? h : -h) * d[i];
    const fs::path model = work / fmt::format("r{}.h5", k);
    write_array(model, "velocity", v);
    const Result rk = run_specwave("gradient -q --threads 1 " + case_path + " --model " + model.string() +
                                   " --output-dir " + (out / fmt::format("r{}", k)).string());
    REQUIRE(rk.code == 0);
    jk[k] = root_attribute(out / fmt::format("r{}", k) / "gradient.h5", "misfit");
  }
  const double fd = (jk[0] - jk[1]) / (2 * h), analytic = dot(g, d);
  INFO(fmt::format("central difference {:.10e}, <g, d> {:.10e}, relative difference {:.2e}", fd, analytic,
                   std::abs(fd - analytic) / std::abs(analytic)));
  CHECK(std::abs(fd - analytic) <= 1e-4 * std::abs(analytic));
  // Data that outlast the simulation are refused, naming time.duration.
  const std::string short_case = resampled_case("too-long", coarse, "0.26");
  const Result too_long = run_specwave("gradient " + short_case + " --output-dir " + (out / "short").string());
  CHECK(too_long.code == 4);
  CHECK(too_long.output.find("set time.duration >= ") != std::string::npos);
  CHECK_FALSE(fs::exists(out / "short"));
}

TEST_CASE("forward with output.trace_dt: traces.h5 at 4 ms equals the 1 ms traces at those times") {
  const fs::path out = work / "trace-dt";
  fs::remove_all(out);
  std::string text = small_case(gaussian_truth);
  text.replace(text.find("duration = 0.1"), 14, "duration = 0.2\ndt = 0.001");
  const std::string fine = write_case("trace-dt-fine", text);
  text.replace(text.find("plots = false"), 13, "plots = false\ntrace_dt = 0.004");
  const std::string coarse = write_case("trace-dt-coarse", text);
  const Result f = run_specwave("forward -q " + fine + " --output-dir " + (out / "fine").string());
  REQUIRE(f.code == 0);
  const Result c = run_specwave("forward " + coarse + " --output-dir " + (out / "coarse").string());
  INFO(c.output);
  REQUIRE(c.code == 0);
  CHECK(c.output.find("traces      51 samples of 0.004 s to 0.2 s") != std::string::npos);
  const io::h5::Reader rc((out / "coarse" / "traces.h5").string());
  CHECK(io::h5::read_attribute_doubles(rc.open_dataset("traces").id(), "dt").at(0) == 0.004);
  const std::vector<double> a = rc.read_floating<double>("traces", {2, 4, 51});
  const std::vector<double> b = read_array(out / "fine" / "traces.h5", "traces", {2, 4, 201});
  double num = 0, den = 0;
  for (std::size_t t = 0; t < 8; ++t)
    for (std::size_t m = 0; m < 51; ++m) {
      const double d = a[t * 51 + m] - b[t * 201 + 4 * m];
      num += d * d, den += b[t * 201 + 4 * m] * b[t * 201 + 4 * m];
    }
  INFO("relative L2 difference " << std::sqrt(num / den));
  CHECK(std::sqrt(num / den) < 3e-6);  // measured 3.8e-7
}

TEST_CASE("born keeps no forward wavefields: a wavefield budget that stops the gradient does not stop it") {
  const std::string case_path = write_case(
      "born-budget", small_case() + fmt::format("[inversion]\nvelocity_max = 2300.0\nobserved = \"{}\"\n"
                                                "wavefield_storage = \"memory\"\nwavefield_memory_gib = 1e-6\n",
                                                observed_file().string()));
  const fs::path out = work / "born-budget";
  fs::remove_all(out);
  write_array(work / "perturbation.h5", "perturbation", bump());
  const Result b = run_specwave("born -q --threads 1 " + case_path + " --perturbation " +
                                (work / "perturbation.h5").string() + " --output-dir " + out.string());
  INFO(b.output);
  CHECK(b.code == 0);
  const Result g = run_specwave("gradient -q --threads 1 " + case_path + " --output-dir " + (out / "g").string());
  INFO(g.output);
  CHECK(g.code == 6);  // (the gradient keeps them: the budget is its resources error)
}

TEST_CASE("born: born_traces.h5 is the transpose of the gradient (dot-product test through the files)") {
  const std::string case_path = inversion_case("born");
  const fs::path out = work / "born";
  fs::remove_all(out);
  write_array(work / "perturbation.h5", "perturbation", bump());
  const Result b = run_specwave("born --threads 1 " + case_path + " --perturbation " +
                                (work / "perturbation.h5").string() + " --output-dir " + out.string());
  INFO(b.output);
  REQUIRE(b.code == 0);
  CHECK(b.output.find("done        born: Born data of 2 shot(s) x 4 receivers") != std::string::npos);
  const Result g = run_specwave("gradient -q --threads 1 " + case_path + " --output-dir " + out.string());
  REQUIRE(g.code == 0);
  const Result f = run_specwave("forward -q --threads 1 " + case_path + " --output-dir " + (out / "fwd").string());
  REQUIRE(f.code == 0);
  // The gradient is J^T dt (F(m) - d_obs): <J d, dt (F(m) - d_obs)> = <d, gradient>.
  const io::h5::Reader traces((out / "born_traces.h5").string());
  const auto info = traces.info("traces");
  REQUIRE(info.dims.size() == 3);
  const std::vector<hsize_t> tdims = info.dims;
  CHECK(tdims[0] == 2);
  CHECK(tdims[1] == 4);
  const std::vector<double> born = traces.read_floating<double>("traces", tdims);
  const std::vector<double> synthetic = read_array(out / "fwd" / "traces.h5", "traces", tdims);
  const std::vector<double> observed = read_array(observed_file(), "traces", tdims);
  const double dt = root_attribute(out / "gradient.h5", "dt");
  std::vector<double> residual(born.size());
  for (std::size_t k = 0; k < residual.size(); ++k) residual[k] = dt * (synthetic[k] - observed[k]);
  const double lhs = dot(born, residual), rhs = dot(bump(), read_array(out / "gradient.h5", "gradient"));
  INFO(fmt::format("<J d, r> = {:.15e}, <d, J^T r> = {:.15e}, relative difference {:.2e}", lhs, rhs,
                   std::abs(lhs - rhs) / std::abs(rhs)));
  CHECK(std::abs(rhs) > 0);
  CHECK(std::abs(lhs - rhs) <= 1e-10 * std::abs(rhs));
}

TEST_CASE("migrate: cases/imaging/reflector.toml images the flat reflector at its depth within one cell") {
  const fs::path out = work / "reflector";
  fs::remove_all(out);
  const Result r = run_specwave(std::string("migrate ") + SPECWAVE_SOURCE_DIR +
                                "/cases/imaging/reflector.toml --output-dir " + out.string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  for (const char* f : {"image.h5", "image.xdmf", "image.vtkhdf", "image_slice.png"}) CHECK(fs::exists(out / f));
  const int mz = 48, my = 24, mx = 64;
  const std::vector<double> image = read_array(out / "image.h5", "image", {mz, my, mx});
  // The trace under the middle of the spread (x 200..430 m, y = 120 m), averaged over x, below the sources.
  std::vector<double> trace(mz, 0.0);
  for (int z = 0; z < mz; ++z)
    for (int x = 20; x <= 43; ++x) trace[std::size_t(z)] += image[(std::size_t(z) * my + 12) * mx + x];
  int strongest = 12;
  for (int z = 12; z < mz - 6; ++z)
    if (std::abs(trace[std::size_t(z)]) > std::abs(trace[std::size_t(strongest)])) strongest = z;
  // The image is dv-like (docs/numerics.md, "Migration"): a velocity increase appears as a negative lobe above
  // the interface and a positive one below; its zero crossing between them is the interface.
  int top = strongest, bottom = strongest;
  for (int z = strongest - 4; z <= strongest + 4; ++z) {
    if (trace[std::size_t(z)] < trace[std::size_t(top)]) top = z;
    if (trace[std::size_t(z)] > trace[std::size_t(bottom)]) bottom = z;
  }
  REQUIRE(top < bottom);
  double crossing = -1;
  for (int z = top; z < bottom; ++z)
    if (trace[std::size_t(z)] < 0 && trace[std::size_t(z + 1)] >= 0)
      crossing = 10.0 * (z + trace[std::size_t(z)] / (trace[std::size_t(z)] - trace[std::size_t(z + 1)]));
  INFO("strongest at z = " << 10 * strongest << " m, lobes at " << 10 * top << " and " << 10 * bottom
                           << " m, zero crossing at " << crossing << " m");
  CHECK(std::abs(crossing - 300.0) <= 10.0);
}

TEST_CASE("gradient, born, migrate: a pass stopped after a shot and resumed ends bitwise as an uninterrupted one") {
  const std::string case_path = inversion_case("restart");
  write_array(work / "perturbation.h5", "perturbation", bump());
  const std::string perturbation = " --perturbation " + (work / "perturbation.h5").string();
  struct Pass {
    const char* command;
    std::string extra, file, dataset;
    std::vector<hsize_t> dims;
  };
  const std::vector<hsize_t> grid = {26, 24, 28};
  for (const Pass& p : std::vector<Pass>{{"gradient", "", "gradient.h5", "gradient", grid},
                                         {"migrate", "", "image.h5", "raw_image", grid},
                                         {"born", perturbation, "born_traces.h5", "traces", {}}}) {
    const std::string command = p.command;
    CAPTURE(command);
    const fs::path straight = work / ("restart-" + command), resumed = work / ("restart-" + command + "-resumed");
    fs::remove_all(straight), fs::remove_all(resumed);
    const std::string args = command + " -q --threads 1 " + case_path + p.extra + " --output-dir ";
    REQUIRE(run_specwave(args + straight.string()).code == 0);
    const Result stopped = run_specwave(args + resumed.string(), "SPECWAVE_STOP_AFTER_SHOTS=1");
    CAPTURE(stopped.output);
    CHECK(stopped.code == 10);
    CHECK(stopped.output.find("after 1 shot(s) of this rank") != std::string::npos);
    CHECK(fs::exists(resumed / "checkpoint" / "shots_rank0.h5"));
    CHECK_FALSE(fs::exists(resumed / p.file));
    const Result again =
        run_specwave(command + " --threads 1 --resume " + case_path + p.extra + " --output-dir " + resumed.string());
    CAPTURE(again.output);
    REQUIRE(again.code == 0);
    CHECK(again.output.find("resume      from") != std::string::npos);
    CHECK_FALSE(fs::exists(resumed / "checkpoint"));  // removed once the pass completed
    const auto dims = p.dims.empty() ? io::h5::Reader((straight / p.file).string()).info(p.dataset).dims : p.dims;
    CHECK(io::h5::Reader((straight / p.file).string()).read_floating<double>(p.dataset, dims) ==
          io::h5::Reader((resumed / p.file).string()).read_floating<double>(p.dataset, dims));
  }
}

TEST_CASE("gradient, born, migrate: bad input is refused before anything is written") {
  const fs::path out = work / "bad";
  fs::remove_all(out);
  const std::string no_inversion = write_case("no-inversion", small_case());
  for (const char* command : {"gradient", "migrate"}) {
    const Result r = run_specwave(std::string(command) + " " + no_inversion + " --output-dir " + out.string());
    CHECK(r.code == 3);
    CHECK(r.output.find(std::string(command) + " needs the observed data of an [inversion] table") !=
          std::string::npos);
  }
  // born without --perturbation: a usage error.
  CHECK(run_specwave("born " + no_inversion + " --output-dir " + out.string()).code == 2);
  // a perturbation of another shape: the file and the dataset named.
  io::h5::AtomicWriter file((work / "wrong-shape.h5").string());
  const std::vector<double> small(8, 1.0);
  io::h5::write_dataset<double>(file.id(), "perturbation", {2, 2, 2}, small.data(), "m/s");
  file.commit();
  const Result shape = run_specwave("born " + no_inversion + " --perturbation " + (work / "wrong-shape.h5").string() +
                                    " --output-dir " + out.string());
  CHECK(shape.code == 4);
  CHECK(shape.output.find("wrong-shape.h5") != std::string::npos);
  // --model that does not exist: the option named.
  const Result missing = run_specwave("gradient " + inversion_case("bad-model") + " --model " +
                                      (work / "absent.h5").string() + " --output-dir " + out.string());
  CHECK(missing.code == 4);
  CHECK(missing.output.find("--model") != std::string::npos);
  // a mistyped [migration] key: "did you mean".
  const Result key =
      run_specwave("migrate " + write_case("bad-key", small_case() + "[migration]\nlaplacian_filtre = true\n") +
                   " --output-dir " + out.string());
  CHECK(key.code == 3);
  CHECK(key.output.find("laplacian_filter") != std::string::npos);
  // inversion.trace_weights of the wrong shape, with a negative or a NaN weight, or all 0: the file, the dataset (and
  // the shot and receiver) named, exit 4.
  const auto weights_file = [&](const std::string& name, const std::vector<hsize_t>& shape, std::vector<double> w) {
    io::h5::AtomicWriter f((work / name).string());
    io::h5::write_dataset<double>(f.id(), "weights", shape, w.data(), "1");
    f.commit();
  };
  for (const auto& [name, shape, values, expected] :
       std::vector<std::tuple<std::string, std::vector<hsize_t>, std::vector<double>, std::string>>{
           {"w-shape.h5", {4, 2}, std::vector<double>(8, 1.0), "has shape (4, 2), expected (2, 4)"},
           {"w-negative.h5", {2, 4}, {1, 1, 1, 1, 1, 1, -0.5, 1}, "the weight of shot 1 receiver 2 is -0.5"},
           {"w-nan.h5", {2, 4}, {1, NAN, 1, 1, 1, 1, 1, 1}, "the weight of shot 0 receiver 1 is nan"},
           {"w-zero.h5", {2, 4}, std::vector<double>(8, 0.0), "every weight is 0"}}) {
    const std::string file = name, message = expected;  // clang 14 cannot capture a structured binding
    CAPTURE(file);
    weights_file(file, shape, values);
    const std::string path =
        write_case("weights-" + file, small_case() + fmt::format("[inversion]\nvelocity_max = "
                                                                 "2300.0\nobserved = \"{}\"\n"
                                                                 "trace_weights = \"{}\"\n",
                                                                 observed_file().string(), (work / file).string()));
    const Result r = run_specwave("gradient " + path + " --output-dir " + out.string());
    CAPTURE(r.output);
    CHECK(r.code == 4);
    CHECK(r.output.find(file + ": dataset '/weights' (inversion.trace_weights)") != std::string::npos);
    CHECK(r.output.find(message) != std::string::npos);
  }
  CHECK_FALSE(fs::exists(out));  // nothing written by any of them
}

TEST_CASE("observed data that cannot be this case's are refused before anything is written, and check says so") {
  // Copies of a traces file, each with one thing wrong: a NaN sample, the receivers or sources of another
  // acquisition, a time origin other than 0, a single sample. gradient, invert and check-gradient refuse them (exit 4,
  // naming the file and what is wrong) before writing; `check` notes it.
  const fs::path out = work / "bad-data";
  fs::remove_all(out);
  const io::h5::Reader truth(observed_file().string());
  const auto dims = truth.info("traces").dims;
  const double dt = io::h5::read_attribute_doubles(truth.open_dataset("traces").id(), "dt").at(0);
  const std::vector<double> traces = truth.read_floating<double>("traces", dims);
  const auto rdims = truth.info("receiver_coordinates").dims, sdims = truth.info("source_coordinates").dims;
  const std::vector<double> receivers = truth.read_floating<double>("receiver_coordinates", rdims);
  const std::vector<double> sources = truth.read_floating<double>("source_coordinates", sdims);
  const std::vector<std::int64_t> source_shot = {0, 1};
  REQUIRE(sdims[0] == 2);
  struct Variant {
    std::string name, expected;
    std::vector<double> traces, receivers, sources;
    hsize_t nt;
    double t0 = 0;
    double dt = 0;  // 0: the true data's
  };
  std::vector<Variant> variants;
  variants.push_back(
      {"nan", "trace 5 (counting from 0 over the shots) sample 7 (t = ", traces, receivers, sources, dims[2]});
  variants.back().traces[5 * dims[2] + 7] = NAN;
  variants.push_back({"moved-receivers", "'/receiver_coordinates' row 0 (shot 0 receiver 0) is at", traces, receivers,
                      sources, dims[2]});
  for (std::size_t r = 0; r < rdims[0]; ++r) variants.back().receivers[3 * r + 2] += 50;
  variants.push_back(
      {"swapped-shots", "'/source_coordinates' row 0 (shot 0) is at", traces, receivers, sources, dims[2]});
  std::swap_ranges(variants.back().sources.begin(), variants.back().sources.begin() + 3,
                   variants.back().sources.begin() + 3);
  variants.push_back(
      {"t0", "has attribute t0 = 0.02 s (the time of sample 0)", traces, receivers, sources, dims[2], 0.02});
  variants.push_back(
      {"one-sample", "holds 1 sample(s) a trace", std::vector<double>(dims[0] * dims[1], 0.0), receivers, sources, 1});
  variants.push_back({"fine-dt", "has attribute dt = 1e-12 s, more than 100 times finer than the simulation's dt",
                      traces, receivers, sources, dims[2], 0, 1e-12});
  for (const Variant& v : variants) {
    CAPTURE(v.name);
    const fs::path data = work / ("bad-data-" + v.name + ".h5");
    {
      io::h5::AtomicWriter f(data.string());
      auto d = io::h5::write_dataset<double>(f.id(), "traces", {dims[0], dims[1], v.nt}, v.traces.data(), "1");
      io::h5::write_attribute(d.id(), "dt", v.dt > 0 ? v.dt : dt);
      io::h5::write_attribute(d.id(), "t0", v.t0);
      d.close();
      io::h5::write_dataset<double>(f.id(), "receiver_coordinates", rdims, v.receivers.data(), "m");
      io::h5::write_dataset<double>(f.id(), "source_coordinates", sdims, v.sources.data(), "m");
      io::h5::write_dataset<std::int64_t>(f.id(), "source_shot", {2}, source_shot.data(), "1");
      f.commit();
    }
    const std::string path = write_case(
        "bad-data-" + v.name,
        small_case() + fmt::format("[inversion]\nvelocity_min = 1500.0\nvelocity_max = 2300.0\nobserved = \"{}\"\n",
                                   data.string()));
    for (const char* command : {"gradient", "invert", "check-gradient"}) {
      CAPTURE(command);
      const std::string where = std::string(command) == "check-gradient" ? "" : " --output-dir " + out.string();
      const Result r = run_specwave(std::string(command) + " " + path + where);
      CAPTURE(r.output);
      CHECK(r.code == 4);
      CHECK(r.output.find(data.filename().string()) != std::string::npos);
      CHECK(r.output.find(v.expected) != std::string::npos);
    }
    if (v.name == "moved-receivers") {  // data in other coordinates, compared on purpose no more: they run
      const std::string ignored = write_case(
          "bad-data-ignored", small_case() + fmt::format("[inversion]\nvelocity_max = 2300.0\nobserved = \"{}\"\n"
                                                         "observed_geometry = \"ignored\"\n",
                                                         data.string()));
      const Result r = run_specwave("gradient -q " + ignored + " --output-dir " + (work / "bad-data-ignored").string());
      CAPTURE(r.output);
      CHECK(r.code == 0);
    }
    const Result check = run_specwave("check " + path);
    CAPTURE(check.output);
    CHECK(check.code == 0);  // the case can run forward
    CHECK(check.output.find("note        invert, gradient, check-gradient and migrate would stop: ") !=
          std::string::npos);
    CHECK(check.output.find(v.expected) != std::string::npos);
  }
  // The case's own keys: an offset window that leaves no trace, a top mute that leaves no sample, a low-pass band
  // below the data's lowest frequency (it would pass only each trace's mean), a scratch folder that is a file (exit
  // 3, 3, 3, 5).
  std::ofstream(work / "a-file") << "not a folder\n";
  const std::string good =
      fmt::format("[inversion]\nvelocity_max = 2300.0\nobserved = \"{}\"\n", observed_file().string());
  for (const auto& [name, keys, option, code, expected] :
       std::vector<std::tuple<std::string, std::string, std::string, int, std::string>>{
           {"window", "offset_min = 1e6\n", "", 3, "inversion.offset_min = 1e+06 m leaves no trace of any shot"},
           {"mute", "mute_velocity = 2000.0\nmute_time = 1e4\n", "", 3,
            "inversion.mute_velocity = 2000 m/s and mute_time = 10000 s mute every sample of every trace"},
           {"band-low", "", " --band 1e-3", 3, "--band = 0.001 Hz is below "},
           {"bands", "bands_hz = [1.0, 20.0]\n", "", 3, "inversion.bands_hz = 1 Hz is below "},
           {"scratch", fmt::format("scratch_directory = \"{}\"\n", (work / "a-file").string()), "", 5,
            "a-file is a file, not a folder"}}) {
    const std::string label = name, text = keys, extra = option, message = expected;  // (structured bindings)
    const int want = code;
    CAPTURE(label);
    const Result r = run_specwave("gradient " + write_case("bad-" + label, small_case() + good + text) + extra +
                                  " --output-dir " + out.string());
    CAPTURE(r.output);
    CHECK(r.code == want);
    CHECK(r.output.find(message) != std::string::npos);
  }
  CHECK_FALSE(fs::exists(out));  // nothing written by any of them
}

TEST_CASE("gradient with inversion.trace_weights: the weighted sum of the shots' traces' misfits and gradients") {
  // Weights 0 for every trace of shot 1 and 2 for shot 0's: the misfit is twice shot 0's, and the gradient twice
  // that of a run whose weights keep shot 0 alone (least squares is a sum over traces).
  const auto run = [&](const std::string& name, const std::vector<double>& w) {
    io::h5::AtomicWriter f((work / (name + ".h5")).string());
    io::h5::write_dataset<double>(f.id(), "weights", {2, 4}, w.data(), "1");
    f.commit();
    REQUIRE(read_array(work / (name + ".h5"), "weights", {2, 4}) == w);
    const std::string path =
        write_case(name, small_case() + fmt::format("[inversion]\nvelocity_max = 2300.0\nobserved = \"{}\"\n"
                                                    "trace_weights = \"{}\"\n",
                                                    observed_file().string(), (work / (name + ".h5")).string()));
    const fs::path out = work / name;
    fs::remove_all(out);
    const Result r = run_specwave("gradient -q --threads 1 " + path + " --output-dir " + out.string());
    INFO(r.output);
    REQUIRE(r.code == 0);
    return out / "gradient.h5";
  };
  const fs::path plain = run("weights-ones", std::vector<double>(8, 1.0));
  // Shot 0's four traces (the first row) weighted 2, shot 1's 0. This braced list is how GCC 12.2's SLP vectoriser
  // with -march=native on AVX-512 was found to store eight 2s (cmake/SpecwaveDependencies.cmake): the checks below
  // of weighted[1] and of the misfit fail with that wrong code.
  const fs::path doubled = run("weights-shot0-twice", {2, 2, 2, 2, 0, 0, 0, 0});
  const std::vector<double> per_shot = read_array(plain, "misfit_per_shot", {2});
  const std::vector<double> weighted = read_array(doubled, "misfit_per_shot", {2});
  CHECK(weighted[0] == doctest::Approx(2 * per_shot[0]).epsilon(1e-12));
  CHECK(weighted[1] == 0.0);
  CHECK(root_attribute(doubled, "misfit") == doctest::Approx(2 * per_shot[0]).epsilon(1e-12));
  const fs::path shot0 = run("weights-shot0", {1, 1, 1, 1, 0, 0, 0, 0});
  const std::vector<double> g2 = read_array(doubled, "gradient"), g1 = read_array(shot0, "gradient");
  double largest = 0, difference = 0;
  for (std::size_t k = 0; k < g1.size(); ++k)
    largest = std::max(largest, std::abs(g2[k])), difference = std::max(difference, std::abs(g2[k] - 2 * g1[k]));
  MESSAGE("gradient with weights 2 against twice the gradient with weights 1: largest difference "
          << difference / largest);
  CHECK(largest > 0);
  CHECK(difference <= 1e-12 * largest);
}
