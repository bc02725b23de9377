// Tests of the TOML case-file parser (io/case_file.cpp, docs/case-file.md).
#include "io/case_file.hpp"
#include "solver/case/errors.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace specwave;

namespace {

// Line numbers matter: errors below name them.
const std::string kMinimal = R"([grid]
shape = [50, 60, 70]
spacing = 10
[model]
type = "homogeneous"
velocity = 2000
[time]
duration = 0.5
[[shots]]
[[shots.sources]]
position = [100, 200, 300]
peak_frequency = 15
[receivers]
points = [[10, 20, 30]]
)";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, "test setup: '" << from << "' not in the case text");
  return text.replace(at, from.size(), to);
}

// Parses `text`, expects Error(invalid_case) whose message contains every piece.
void expect_invalid(const std::string& text, const std::vector<std::string>& pieces) {
  try {
    io::parse_case_text(text, "case.toml", "/cases");
    FAIL("no error for:\n" << text);
  } catch (const Error& e) {
    const std::string msg = e.what();
    INFO("message: " << msg);
    CHECK(e.code() == ExitCode::invalid_case);
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(msg.rfind("case.toml:", 0) == 0);
    for (const auto& p : pieces) CHECK_MESSAGE(msg.find(p) != std::string::npos, "missing '" << p << "'");
  }
}

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("specwave_case_test_" + std::to_string(std::random_device{}()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace

TEST_CASE("case file: a full case parses with every field") {
  TempDir dir;
  const fs::path file = dir.path / "full_case.toml";
  std::ofstream(file) << R"(name = "full"
[grid]
shape = [100, 80, 60]
spacing = [5, 10.0, 12.5]
origin = [1.0, -2, 3.5]
[model]
type = "file"
file = "models/vel.h5"
dataset = "/v"
[time]
duration = 1.25
dt = 0.0005
cfl_safety = 0.5
[[shots]]
[[shots.sources]]
position = [10, 20, 30]
peak_frequency = 12.5
delay = 0.2
amplitude = -2
[[shots.sources]]
position = [11, 21, 31]
wavelet = "file"
file = "/abs/w.h5"
dataset = "/w"
[[shots]]
[[shots.sources]]
position = [12, 22, 32]
peak_frequency = 20
[receivers]
points = [[1, 2, 3], [4, 5, 6]]
[scheme]
method = "spectral"
order = 4
min_points_per_wavelength = 3.5
[boundary]
pml_width = 12
free_surface = true
pml_power = 3
pml_reflection = 1e-4
pml_frequency = 18
[run]
precision = "fp64"
backend = "auto"
threads = 8
check_every = 10
progress_seconds = 2.5
max_amplitude = 1e10
[output]
directory = "results/run1"
traces = false
snapshot_every = 25
final_field = false
plots = false
)";
  const Case c = io::read_case_file(file.string());
  CHECK(c.name == "full");
  CHECK(c.source_path == file.string());
  CHECK(c.source_text.find("name = \"full\"") == 0);
  CHECK(c.grid.shape == std::array<int, 3>{100, 80, 60});
  CHECK(c.grid.spacing == Vec3{5, 10, 12.5});
  CHECK(c.grid.origin == Vec3{1, -2, 3.5});
  CHECK(c.model.kind == ModelSpec::Kind::file);
  CHECK(c.model.file == (dir.path / "models/vel.h5").string());
  CHECK(c.model.dataset == "/v");
  CHECK(c.time.duration == 1.25);
  REQUIRE(c.time.dt);
  CHECK(*c.time.dt == 0.0005);
  CHECK(c.time.cfl_safety == 0.5);
  REQUIRE(c.shots.size() == 2);
  REQUIRE(c.shots[0].sources.size() == 2);
  const auto& s0 = c.shots[0].sources[0];
  CHECK(s0.position == Vec3{10, 20, 30});
  CHECK(s0.wavelet.kind == WaveletSpec::Kind::ricker);
  CHECK(s0.wavelet.peak_frequency == 12.5);
  REQUIRE(s0.wavelet.delay);
  CHECK(*s0.wavelet.delay == 0.2);
  CHECK(s0.wavelet.amplitude == -2);
  const auto& s1 = c.shots[0].sources[1];
  CHECK(s1.position == Vec3{11, 21, 31});
  CHECK(s1.wavelet.kind == WaveletSpec::Kind::file);
  CHECK(s1.wavelet.file == "/abs/w.h5");
  CHECK(s1.wavelet.dataset == "/w");
  CHECK(s1.wavelet.amplitude == 1);
  REQUIRE(c.shots[1].sources.size() == 1);
  CHECK(c.shots[1].sources[0].wavelet.peak_frequency == 20);
  CHECK_FALSE(c.shots[1].sources[0].wavelet.delay);
  REQUIRE(c.receivers.size() == 2);
  CHECK(c.receivers[1] == Vec3{4, 5, 6});
  CHECK(c.scheme.method == Method::spectral);
  CHECK(c.scheme.order == 4);
  REQUIRE(c.scheme.min_points_per_wavelength);
  CHECK(*c.scheme.min_points_per_wavelength == 3.5);
  CHECK(c.boundary.pml_width == 12);
  CHECK(c.boundary.free_surface);
  CHECK(c.boundary.pml_power == 3);
  CHECK(c.boundary.pml_reflection == 1e-4);
  REQUIRE(c.boundary.pml_frequency);
  CHECK(*c.boundary.pml_frequency == 18);
  CHECK(c.run.precision == Precision::fp64);
  CHECK(c.run.backend == BackendKind::auto_select);
  CHECK(c.run.threads == 8);
  CHECK(c.run.check_every == 10);
  CHECK(c.run.progress_seconds == 2.5);
  CHECK(c.run.max_amplitude == 1e10);
  CHECK(c.output.directory == (dir.path / "results/run1").string());
  CHECK_FALSE(c.output.traces);
  CHECK(c.output.snapshot_every == 25);
  CHECK_FALSE(c.output.final_field);
  CHECK_FALSE(c.output.plots);
}

TEST_CASE("case file: defaults apply and the name is the file stem") {
  const Case c = io::parse_case_text(kMinimal, "dir/my_case.toml", "/cases/dir");
  CHECK(c.name == "my_case");
  CHECK(c.source_text == kMinimal);
  CHECK(c.grid.origin == Vec3{0, 0, 0});
  CHECK(c.model.kind == ModelSpec::Kind::homogeneous);
  CHECK(c.model.velocity == 2000);
  CHECK_FALSE(c.time.dt);
  CHECK(c.time.cfl_safety == 0.8);
  REQUIRE(c.shots.size() == 1);
  const auto& w = c.shots[0].sources[0].wavelet;
  CHECK(w.kind == WaveletSpec::Kind::ricker);
  CHECK_FALSE(w.delay);
  CHECK(w.amplitude == 1);
  CHECK(c.scheme.method == Method::fdtd);
  CHECK(c.scheme.order == 8);
  CHECK_FALSE(c.scheme.min_points_per_wavelength);
  CHECK(c.boundary.pml_width == 20);
  CHECK_FALSE(c.boundary.free_surface);
  CHECK_FALSE(c.boundary.pml_power);  // unset: the method's defaults (pml_profile_defaults)
  CHECK_FALSE(c.boundary.pml_reflection);
  CHECK(c.boundary.spectral_absorber == SpectralAbsorber::pml);
  CHECK(pml_profile_defaults(false, SpectralAbsorber::pml).power == 2);
  CHECK(pml_profile_defaults(false, SpectralAbsorber::pml).reflection == 1e-3);
  CHECK(pml_profile_defaults(true, SpectralAbsorber::pml).reflection == 1e-7);
  CHECK(pml_profile_defaults(true, SpectralAbsorber::damping).reflection == 1e-2);
  CHECK_FALSE(c.boundary.pml_frequency);
  CHECK(c.run.precision == Precision::fp32);
  CHECK(c.run.backend == BackendKind::cpu);
  CHECK(c.run.threads == 0);
  CHECK(c.run.check_every == 50);
  CHECK(c.run.progress_seconds == 5);
  CHECK(c.run.max_amplitude == 1e20);
  CHECK(c.output.directory == "/cases/dir/out");
  CHECK(c.output.traces);
  CHECK(c.output.snapshot_every == 0);
  CHECK(c.output.final_field);
  CHECK(c.output.plots);
  // No base folder: relative paths stay as written.
  CHECK(io::parse_case_text(kMinimal, "x.toml", "").output.directory == "out");
}

TEST_CASE("case file: scalar spacing fills all three axes") {
  const Case c = io::parse_case_text(replaced(kMinimal, "spacing = 10", "spacing = 2.5"), "c.toml", "");
  CHECK(c.grid.spacing == Vec3{2.5, 2.5, 2.5});
}

TEST_CASE("case file: layered and gaussian models") {
  const std::string hom = "type = \"homogeneous\"\nvelocity = 2000\n";
  Case c = io::parse_case_text(
      replaced(kMinimal, hom, "type = \"layered\"\ninterfaces = [100, 250.5]\nvelocities = [1500, 2000, 3000]\n"),
      "c.toml", "");
  CHECK(c.model.kind == ModelSpec::Kind::layered);
  CHECK(c.model.interfaces == std::vector<double>{100, 250.5});
  CHECK(c.model.velocities == std::vector<double>{1500, 2000, 3000});
  c = io::parse_case_text(
      replaced(kMinimal, hom,
               "type = \"gaussian\"\nvelocity = 2000\nanomaly = -300\ncenter = [1, 2, 3]\nradius = 50\n"),
      "c.toml", "");
  CHECK(c.model.kind == ModelSpec::Kind::gaussian);
  CHECK(c.model.velocity == 2000);
  CHECK(c.model.anomaly == -300);
  CHECK(c.model.center == Vec3{1, 2, 3});
  CHECK(c.model.radius == 50);
}

TEST_CASE("case file: receiver lines and planes expand in order") {
  const std::string text = replaced(kMinimal, "points = [[10, 20, 30]]\n", R"(points = [[10, 20, 30]]
[[receivers.lines]]
start = [0, 0, 0]
end = [0, 10, 40]
count = 5
[[receivers.lines]]
start = [7, 8, 9]
end = [70, 80, 90]
count = 1
[[receivers.planes]]
origin = [1, 2, 3]
u = [0, 10, 0]
v = [0, 0, 5]
count = [2, 3]
)");
  const Case c = io::parse_case_text(text, "c.toml", "");
  const std::vector<Vec3> want = {
      {10, 20, 30},                                                                    // points
      {0, 0, 0},    {0, 2.5, 10}, {0, 5, 20}, {0, 7.5, 30}, {0, 10, 40},               // line 1, both ends included
      {7, 8, 9},                                                                       // line 2, count 1 gives start
      {1, 2, 3},    {1, 2, 8},    {1, 2, 13}, {1, 12, 3},   {1, 12, 8},  {1, 12, 13},  // plane, j (v) fastest
  };
  REQUIRE(c.receivers.size() == want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    INFO("receiver " << k);
    for (int a = 0; a < 3; ++a) CHECK(c.receivers[k][a] == doctest::Approx(want[k][a]));
  }
}

TEST_CASE("case file: receivers per shot, a shot's own table and a spread that moves with the shot") {
  // Three shots: the first records the shared points plus the streamer placed at its source, the second its own
  // table, the third the shared table again.
  std::string text = replaced(kMinimal, "points = [[10, 20, 30]]\n", R"(points = [[10, 20, 30]]
[receivers.streamer]
count = 3
first_offset = -20.0
spacing = 10.0
direction = [3.0, 4.0]
depth = 12.0
)");
  text = replaced(text, "[receivers]", R"([[shots]]
[[shots.sources]]
position = [100, 250, 350]
peak_frequency = 15
[shots.receivers]
[[shots.receivers.lines]]
start = [5, 200, 300]
end = [5, 200, 320]
count = 3
[[shots]]
[[shots.sources]]
position = [110, 220, 330]
peak_frequency = 15
[receivers])");
  const Case c = io::parse_case_text(text, "c.toml", "");
  REQUIRE(c.shots.size() == 3);
  CHECK(!shared_receivers(c));
  CHECK(c.receivers == std::vector<Vec3>{{10, 20, 30}});  // the shared table's fixed receivers
  // Offsets -20, -10, 0 along (0.6, 0.8) in (y, x) from each shot's source, at z = 12.
  const auto streamer = [](const Vec3& s) {
    std::vector<Vec3> out = {{10, 20, 30}};
    for (double d : {-20.0, -10.0, 0.0}) out.push_back({12, s[1] + 0.6 * d, s[2] + 0.8 * d});
    return out;
  };
  const std::vector<std::vector<Vec3>> want = {
      streamer({100, 200, 300}), {{5, 200, 300}, {5, 200, 310}, {5, 200, 320}}, streamer({110, 220, 330})};
  for (std::size_t s = 0; s < 3; ++s) {
    INFO("shot " << s);
    const auto& got = shot_receivers(c, s);
    REQUIRE(got.size() == want[s].size());
    for (std::size_t r = 0; r < got.size(); ++r)
      for (int a = 0; a < 3; ++a) CHECK(got[r][a] == doctest::Approx(want[s][r][a]).epsilon(1e-12));
  }
  CHECK(total_traces(c) == 11);
  CHECK(max_shot_receivers(c) == 4);

  // Without a spread or a shot's own table every shot shares c.receivers, as before.
  const Case plain = io::parse_case_text(kMinimal, "c.toml", "");
  CHECK(shared_receivers(plain));
  CHECK(&shot_receivers(plain, 0) == &plain.receivers);

  SUBCASE("every shot with its own table needs no [receivers]") {
    const std::string own = replaced(kMinimal, "[receivers]\npoints = [[10, 20, 30]]\n",
                                     "[shots.receivers]\npoints = [[10, 20, 30], [10, 20, 40]]\n");
    const Case o = io::parse_case_text(own, "c.toml", "");
    CHECK(o.receivers.empty());
    CHECK(shot_receivers(o, 0).size() == 2);
  }
  SUBCASE("bad inputs") {
    const std::string two = replaced(kMinimal, "[receivers]\npoints = [[10, 20, 30]]\n", R"([shots.receivers]
points = [[10, 20, 30]]
[[shots]]
[[shots.sources]]
position = [100, 200, 300]
peak_frequency = 15
)");
    expect_invalid(two, {"shots[1]: has no receivers", "add a [receivers] table"});
    const std::string base = replaced(kMinimal, "points = [[10, 20, 30]]\n", "[receivers.streamer]\n");
    expect_invalid(base + "count = 4\nfirst_offset = 0\n", {"receivers.streamer.spacing: must be > 0 with count > 1"});
    expect_invalid(base + "count = 0\nfirst_offset = 0\n", {"receivers.streamer.count: must be >= 1"});
    expect_invalid(base + "count = 1\nfirst_offset = 0\ndirection = [0, 0]\n",
                   {"receivers.streamer.direction: must not be zero"});
    expect_invalid(base + "count = 1\nfirst_offset = 0\ndirection = [1, 0, 0]\n",
                   {"receivers.streamer.direction: must hold 2 numbers (y, x), found 3"});
    expect_invalid(base + "count = 1\n", {"first_offset"});
    expect_invalid(base + "count = 1\nfirst_offset = 0\nazimuth = 3\n", {"receivers.streamer", "azimuth"});
  }
}

TEST_CASE("case file: enum names") {
  CHECK(std::string(to_string(Precision::fp32)) == "fp32");
  CHECK(std::string(to_string(Precision::fp64)) == "fp64");
  CHECK(std::string(to_string(BackendKind::cpu)) == "cpu");
  CHECK(std::string(to_string(BackendKind::cuda)) == "cuda");
  CHECK(std::string(to_string(BackendKind::auto_select)) == "auto");
  CHECK(std::string(to_string(Method::fdtd)) == "fdtd");
  CHECK(std::string(to_string(Method::spectral)) == "spectral");
  CHECK(std::string(to_string(ModelSpec::Kind::homogeneous)) == "homogeneous");
  CHECK(std::string(to_string(ModelSpec::Kind::layered)) == "layered");
  CHECK(std::string(to_string(ModelSpec::Kind::gaussian)) == "gaussian");
  CHECK(std::string(to_string(ModelSpec::Kind::file)) == "file");
}

TEST_CASE("case file: bad inputs name the file, line and key") {
  const std::string& m = kMinimal;
  SUBCASE("negative spacing") {
    expect_invalid(replaced(m, "spacing = 10", "spacing = -10"),
                   {"case.toml:3: grid.spacing: must be at least 1e-9 m (every entry) (found -10); give the grid "
                    "spacing in metres, e.g. 10.0"});
  }
  SUBCASE("a subnormal spacing (it would make dt 0)") {
    expect_invalid(replaced(m, "spacing = 10", "spacing = 1e-320"),
                   {"case.toml:3: grid.spacing: must be at least 1e-9 m (every entry) (found 1e-320)"});
    expect_invalid(replaced(m, "spacing = 10", "spacing = [10, 10, 1e-12]"), {"grid.spacing", "1e-12"});
  }
  SUBCASE("float in an integer array") {
    expect_invalid(replaced(m, "shape = [50, 60, 70]", "shape = [50, 60.5, 70]"),
                   {"case.toml:2:", "grid.shape[1]: must be an integer", "60.5"});
  }
  SUBCASE("wrong array length") {
    expect_invalid(replaced(m, "shape = [50, 60, 70]", "shape = [50, 60]"), {"grid.shape: must have 3 elements"});
  }
  SUBCASE("zero points") {
    expect_invalid(replaced(m, "shape = [50, 60, 70]", "shape = [50, 0, 70]"),
                   {"grid.shape: every entry must be >= 1"});
  }
  SUBCASE("missing table") {
    expect_invalid(replaced(m, "[grid]\nshape = [50, 60, 70]\nspacing = 10\n", ""),
                   {"grid: missing required key", "not found in the file"});
  }
  SUBCASE("missing key uses the table's line") {
    expect_invalid(replaced(m, "duration = 0.5\n", ""),
                   {"case.toml:7: time.duration: missing required key", "add duration = 1.0"});
  }
  SUBCASE("unknown key with suggestion") {
    expect_invalid(replaced(m, "peak_frequency = 15", "peak_frequncy = 15"),
                   {"case.toml:12: shots[0].sources[0].peak_frequncy: unknown key", "did you mean 'peak_frequency'?"});
  }
  SUBCASE("unknown top-level key") {
    expect_invalid("nmae = \"x\"\n" + m, {"case.toml:1: nmae: unknown key", "did you mean 'name'?"});
  }
  SUBCASE("unknown key in an options table") {
    expect_invalid(m + "[run]\nthread = 4\n", {"case.toml:16: run.thread: unknown key", "did you mean 'threads'?"});
  }
  SUBCASE("model key of another type") {
    expect_invalid(replaced(m, "velocity = 2000", "velocity = 2000\ninterfaces = [10]"),
                   {"case.toml:7: model.interfaces: is not used with type = \"homogeneous\"", "type = \"layered\""});
  }
  SUBCASE("bad model type") {
    expect_invalid(replaced(m, "\"homogeneous\"", "\"homogenous\""),
                   {"model.type: must be one of", "did you mean 'homogeneous'?"});
  }
  SUBCASE("layered: velocities count") {
    expect_invalid(replaced(m, "type = \"homogeneous\"\nvelocity = 2000",
                            "type = \"layered\"\ninterfaces = [100]\nvelocities = [1500]"),
                   {"model.velocities: must have one entry more than interfaces (2)", "found 1"});
  }
  SUBCASE("layered: interfaces not increasing") {
    expect_invalid(replaced(m, "type = \"homogeneous\"\nvelocity = 2000",
                            "type = \"layered\"\ninterfaces = [200, 100]\nvelocities = [1, 2, 3]"),
                   {"model.interfaces: must be strictly increasing", "[200, 100]"});
  }
  SUBCASE("gaussian: radius") {
    expect_invalid(replaced(m, "type = \"homogeneous\"\nvelocity = 2000",
                            "type = \"gaussian\"\nvelocity = 2000\nanomaly = 1\ncenter = [0, 0, 0]\nradius = 0"),
                   {"model.radius: must be in [1e-9, 1e12] m"});
  }
  SUBCASE("gaussian: missing center") {
    expect_invalid(replaced(m, "type = \"homogeneous\"\nvelocity = 2000",
                            "type = \"gaussian\"\nvelocity = 2000\nanomaly = 1\nradius = 10"),
                   {"case.toml:4: model.center: missing required key"});
  }
  SUBCASE("non-positive velocity") {
    expect_invalid(replaced(m, "velocity = 2000", "velocity = 0"), {"model.velocity: must be > 0"});
  }
  SUBCASE("table defined twice") { expect_invalid(m + "[time]\n", {"case.toml:15:", "invalid TOML"}); }
  SUBCASE("cfl_safety above 1") {
    expect_invalid(replaced(m, "duration = 0.5", "duration = 0.5\ncfl_safety = 1.5"),
                   {"time.cfl_safety: must be in (0, 1] (found 1.5)"});
  }
  SUBCASE("nan duration") {
    expect_invalid(replaced(m, "duration = 0.5", "duration = nan"), {"time.duration: must be a finite number"});
  }
  SUBCASE("no shots") {
    expect_invalid(replaced(m, "[[shots]]\n[[shots.sources]]\nposition = [100, 200, 300]\npeak_frequency = 15\n", ""),
                   {"shots: missing required key"});
  }
  SUBCASE("shot without sources") {
    expect_invalid(replaced(m, "[[shots.sources]]\nposition = [100, 200, 300]\npeak_frequency = 15\n", ""),
                   {"case.toml:9: shots[0].sources: missing required key"});
  }
  SUBCASE("ricker needs peak_frequency") {
    expect_invalid(replaced(m, "peak_frequency = 15\n", ""),
                   {"case.toml:10: shots[0].sources[0].peak_frequency: missing required key"});
  }
  SUBCASE("wavelet key of another kind") {
    expect_invalid(replaced(m, "peak_frequency = 15", "peak_frequency = 15\ndataset = \"/w\""),
                   {"shots[0].sources[0].dataset: is not used with wavelet = \"ricker\""});
  }
  SUBCASE("negative delay") {
    expect_invalid(replaced(m, "peak_frequency = 15", "peak_frequency = 15\ndelay = -1"),
                   {"shots[0].sources[0].delay: must be >= 0"});
  }
  SUBCASE("position of wrong type") {
    expect_invalid(replaced(m, "position = [100, 200, 300]", "position = \"here\""),
                   {"shots[0].sources[0].position: must be an array of 3 numbers", "found string \"here\""});
  }
  SUBCASE("no receivers") {
    expect_invalid(replaced(m, "points = [[10, 20, 30]]", "points = []"),
                   {"case.toml:13: receivers: must define at least one receiver"});
  }
  SUBCASE("receiver point of wrong length") {
    expect_invalid(replaced(m, "points = [[10, 20, 30]]", "points = [[10, 20, 30], [1, 2]]"),
                   {"receivers.points[1]: must have 3 elements"});
  }
  SUBCASE("line count 0") {
    expect_invalid(m + "[[receivers.lines]]\nstart = [0, 0, 0]\nend = [0, 0, 1]\ncount = 0\n",
                   {"case.toml:18: receivers.lines[0].count: must be >= 1"});
  }
  SUBCASE("plane count shape") {
    expect_invalid(m + "[[receivers.planes]]\norigin = [0, 0, 0]\nu = [0, 1, 0]\nv = [0, 0, 1]\ncount = [3]\n",
                   {"receivers.planes[0].count: must have 2 elements"});
  }
  SUBCASE("odd order") {
    expect_invalid(m + "[scheme]\norder = 7\n", {"scheme.order: must be even and in 2..16 (found 7)"});
  }
  SUBCASE("float order") {
    expect_invalid(m + "[scheme]\norder = 8.0\n", {"scheme.order: must be an integer (found float 8.0)"});
  }
  SUBCASE("bad method") {
    expect_invalid(m + "[scheme]\nmethod = \"spectal\"\n", {"scheme.method", "did you mean 'spectral'?"});
  }
  SUBCASE("pml_reflection range") {
    expect_invalid(m + "[boundary]\npml_reflection = 1\n", {"boundary.pml_reflection: must be in (0, 1)"});
  }
  SUBCASE("negative pml_width") {
    expect_invalid(m + "[boundary]\npml_width = -1\n", {"boundary.pml_width: must be >= 0"});
  }
  SUBCASE("bad precision") {
    expect_invalid(m + "[run]\nprecision = \"fp16\"\n",
                   {"case.toml:16: run.precision: must be one of \"fp32\", \"fp64\""});
  }
  SUBCASE("check_every zero") { expect_invalid(m + "[run]\ncheck_every = 0\n", {"run.check_every: must be >= 1"}); }
  SUBCASE("boolean of wrong type") {
    expect_invalid(m + "[output]\ntraces = \"yes\"\n",
                   {"output.traces: must be true or false", "found string \"yes\""});
  }
  SUBCASE("table of wrong type") {
    expect_invalid("output = 3\n" + m, {"case.toml:1: output: must be a table (found integer 3)"});
  }
  SUBCASE("malformed TOML") {
    try {
      io::parse_case_text("[grid]\nshape = = 3\n", "case.toml", "");
      FAIL("no error");
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::invalid_case);
      CHECK(std::string(e.what()).rfind("case.toml:2:", 0) == 0);
      CHECK(std::string(e.what()).find("invalid TOML") != std::string::npos);
    }
  }
}

TEST_CASE("case file: an unreadable file is an input error") {
  try {
    io::read_case_file("/nonexistent/dir/case.toml");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::input_error);
    CHECK(std::string(e.what()).find("/nonexistent/dir/case.toml: cannot read case file") == 0);
    CHECK(std::string(e.what()).find("check the path") != std::string::npos);
  }
}

TEST_CASE("case file: the [inversion] table") {
  const std::string& m = kMinimal;
  SUBCASE("absent: no inversion") { CHECK_FALSE(io::parse_case_text(m, "case.toml", "").inversion.present); }
  SUBCASE("true model and every key") {
    const Case c = io::parse_case_text(m + R"([inversion]
parameterisation = "slowness2"
misfit = "least_squares"
velocity_min = 1500
velocity_max = 3000.0
wavefield_storage = "checkpoints"
wavefield_memory_gib = 2.5
[inversion.true_model]
type = "gaussian"
velocity = 2000
anomaly = 250
center = [100, 200, 300]
radius = 40
)",
                                       "case.toml", "");
    const auto& inv = c.inversion;
    CHECK(inv.present);
    REQUIRE(inv.true_model);
    CHECK(inv.true_model->kind == ModelSpec::Kind::gaussian);
    CHECK(inv.true_model->anomaly == 250);
    CHECK(inv.parameterisation == Parameterisation::slowness2);
    CHECK(*inv.velocity_min == 1500);
    CHECK(*inv.velocity_max == 3000);
    CHECK(inv.wavefield_storage == WavefieldStorage::checkpoints);
    CHECK(*inv.wavefield_memory_gib == 2.5);
    CHECK(inv.observed_file.empty());
  }
  SUBCASE("observed file resolved against the case folder, defaults") {
    const Case c = io::parse_case_text(m + "[inversion]\nobserved = \"data/traces.h5\"\n", "case.toml", "/cases/x");
    CHECK(c.inversion.observed_file == "/cases/x/data/traces.h5");
    CHECK(c.inversion.observed_dataset == "/traces");
    CHECK(c.inversion.parameterisation == Parameterisation::velocity);
    CHECK(c.inversion.wavefield_storage == WavefieldStorage::auto_select);
    CHECK(c.inversion.scratch_directory.empty());
    CHECK_FALSE(c.inversion.velocity_max);
  }
  SUBCASE("wavefield storage: binomial, disk, boundary; the scratch folder resolved against the case folder") {
    for (const auto& [word, storage] :
         {std::pair{"binomial", WavefieldStorage::binomial}, std::pair{"disk", WavefieldStorage::disk},
          std::pair{"boundary", WavefieldStorage::boundary}}) {
      const Case c = io::parse_case_text(m + "[inversion]\nobserved = \"t.h5\"\nwavefield_storage = \"" + word +
                                             "\"\nscratch_directory = \"scratch\"\n",
                                         "case.toml", "/cases/x");
      CHECK(c.inversion.wavefield_storage == storage);
      CHECK(std::string(to_string(storage)) == word);
      CHECK(c.inversion.scratch_directory == "/cases/x/scratch");
    }
    expect_invalid(m + "[inversion]\nobserved = \"t.h5\"\nwavefield_storage = \"revolve\"\n", {"wavefield_storage"});
  }
  SUBCASE("wavefield_storage = \"boundary\": FDTD only") {
    const std::string inv = "[inversion]\nobserved = \"d.h5\"\nwavefield_storage = \"boundary\"\n";
    CHECK(io::parse_case_text(m + inv, "case.toml", "").inversion.wavefield_storage == WavefieldStorage::boundary);
    expect_invalid(
        m + "[scheme]\nmethod = \"spectral\"\n" + inv,
        {"inversion.wavefield_storage: \"boundary\" needs a scheme that can run backwards", "\"checkpoints\""});
  }
  SUBCASE("no observed data") {
    expect_invalid(m + "[inversion]\nparameterisation = \"velocity\"\n",
                   {"case.toml:15: inversion: has no observed data", "[inversion.true_model]"});
  }
  SUBCASE("both observed and true model") {
    expect_invalid(
        m + "[inversion]\nobserved = \"t.h5\"\n[inversion.true_model]\ntype = \"homogeneous\"\nvelocity = 2100\n",
        {"case.toml:16: inversion.observed: cannot be combined with [inversion.true_model]"});
  }
  SUBCASE("true model checked like [model]") {
    expect_invalid(m + "[inversion.true_model]\ntype = \"homogeneous\"\nvelocity = -5\n",
                   {"inversion.true_model.velocity: must be > 0"});
  }
  SUBCASE("bad parameterisation") {
    expect_invalid(
        m + "[inversion]\nobserved = \"t.h5\"\nparameterisation = \"slowness\"\n",
        {"inversion.parameterisation: must be one of \"velocity\", \"slowness2\"", "did you mean 'slowness2'?"});
  }
  SUBCASE("bounds in the wrong order") {
    expect_invalid(m + "[inversion]\nobserved = \"t.h5\"\nvelocity_min = 3000\nvelocity_max = 2000\n",
                   {"inversion.velocity_max: must be above velocity_min (3000)"});
  }
  SUBCASE("unknown misfit") {
    expect_invalid(m + "[inversion]\nobserved = \"t.h5\"\nmisfit = \"l1\"\n",
                   {"inversion.misfit: must be one of \"least_squares\""});
  }
  SUBCASE("spectral method: accepted (its adjoint is built)") {
    const Case c = io::parse_case_text(m + "[scheme]\nmethod = \"spectral\"\n[inversion]\nobserved = \"t.h5\"\n",
                                       "case.toml", "/x");
    CHECK(c.scheme.method == Method::spectral);
    CHECK(c.inversion.present);
  }
}

TEST_CASE("case file: force sources, receiver components and the density") {
  // A four-component table: each position one receiver per component, consecutive; a force source's direction is
  // normalised; a shot's own table keeps its own components.
  std::string text = replaced(kMinimal, "points = [[10, 20, 30]]\n", R"(points = [[10, 20, 30], [10, 20, 40]]
components = ["p", "vz", "vy", "vx"]
)");
  text = replaced(text, "peak_frequency = 15\n", R"(peak_frequency = 15
kind = "force"
direction = [0.0, 3.0, 4.0]
)");
  text = replaced(text, "velocity = 2000\n", "velocity = 2000\ndensity = 1025.0\n");
  Case c = io::parse_case_text(text, "case.toml", "/cases");
  REQUIRE(c.receivers.size() == 8);
  REQUIRE(c.receiver_components.size() == 8);
  using K = ReceiverComponent;
  CHECK(c.receiver_components[0] == K::pressure);
  CHECK(c.receiver_components[3] == K::vx);
  CHECK(c.receiver_components[5] == K::vz);
  CHECK(c.receivers[3] == Vec3{10, 20, 30});
  CHECK(c.receivers[4] == Vec3{10, 20, 40});
  CHECK(shot_receiver_component(c, 0, 6) == K::vy);
  CHECK(has_velocity_receivers(c));
  CHECK(c.model.density == 1025.0);
  const SourceSpec& s = c.shots[0].sources[0];
  CHECK(s.kind == SourceKind::force);
  CHECK(s.direction[0] == 0.0);
  CHECK(s.direction[1] == doctest::Approx(0.6));
  CHECK(s.direction[2] == doctest::Approx(0.8));
  // The default: pressure, no components stored.
  const Case plain = io::parse_case_text(kMinimal, "case.toml", "/cases");
  CHECK(plain.receiver_components.empty());
  CHECK(plain.shots[0].sources[0].kind == SourceKind::pressure);
  CHECK_FALSE(plain.model.density);
  // A shot's own table with its components; the shared one without.
  std::string own = replaced(kMinimal, "[receivers]", R"([shots.receivers]
points = [[5, 5, 5]]
components = ["vz"]
[[shots]]
[[shots.sources]]
position = [100, 250, 350]
peak_frequency = 15
[receivers])");
  c = io::parse_case_text(own, "case.toml", "/cases");
  REQUIRE(c.shots.size() == 2);
  CHECK(c.shots[0].receiver_components == std::vector<K>{K::vz});
  CHECK(c.shots[1].receiver_components.empty());
  CHECK(shot_receiver_component(c, 1, 0) == K::pressure);
  CHECK(shot_receiver_component(c, 0, 0) == K::vz);

  SUBCASE("bad inputs") {
    expect_invalid(replaced(kMinimal, "points = [[10, 20, 30]]", "points = [[10, 20, 30]]\ncomponents = [\"vr\"]"),
                   {"receivers.components[0]", "must be one of \"p\", \"vz\", \"vy\", \"vx\""});
    expect_invalid(replaced(kMinimal, "points = [[10, 20, 30]]", "points = [[10, 20, 30]]\ncomponents = [\"VX\"]"),
                   {"receivers.components[0]", "did you mean 'vx'?"});
    expect_invalid(
        replaced(kMinimal, "points = [[10, 20, 30]]", "points = [[10, 20, 30]]\ncomponents = [\"p\", \"p\"]"),
        {"receivers.components[1]", "repeats \"p\""});
    expect_invalid(replaced(kMinimal, "points = [[10, 20, 30]]", "points = [[10, 20, 30]]\ncomponents = []"),
                   {"receivers.components", "must hold 1 to 8 names"});
    expect_invalid(
        replaced(kMinimal, "peak_frequency = 15", "peak_frequency = 15\nkind = \"force\"\ndirection = [0, 0, 0]"),
        {"shots[0].sources[0].direction", "must not be zero"});
    expect_invalid(replaced(kMinimal, "peak_frequency = 15", "peak_frequency = 15\ndirection = [1, 0, 0]"),
                   {"shots[0].sources[0].direction", "is not used with kind = \"pressure\""});
    expect_invalid(replaced(kMinimal, "peak_frequency = 15", "peak_frequency = 15\nkind = \"dipole\""),
                   {"shots[0].sources[0].kind", "must be one of"});
    expect_invalid(replaced(kMinimal, "velocity = 2000", "velocity = 2000\ndensity = -1"),
                   {"model.density", "must be a number in [1e-3, 1e6] kg/m^3"});
  }
}
