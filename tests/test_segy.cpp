// SEG-Y rev 2 export and import (io/segy.hpp): round trips through SEG-Y and traces.h5, the header fields other
// tools read, IBM floats, and clear errors on files specwave cannot use; and the trace comparison of the
// regression cases (validation/regression.hpp).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <tuple>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "io/case_file.hpp"
#include "io/hdf5.hpp"
#include "io/outputs.hpp"
#include "io/segy.hpp"
#include "solver/case/errors.hpp"
#include "validation/regression.hpp"

using namespace specwave;
using namespace specwave::io;

namespace {

constexpr int kShots = 3, kReceivers = 4;

ShotGathers sample_gathers() {
  const int nt = 37;
  std::vector<float> traces;
  for (int k = 0; k < kShots * kReceivers * nt; ++k) traces.push_back(float(std::sin(0.37 * k) * std::exp(-0.01 * k)));
  traces[5] = -0.0f;
  traces[6] = 1e-38f;
  std::vector<Vec3> receivers, sources;
  for (int r = 0; r < kReceivers; ++r) receivers.push_back({12.5 + r, 150.125, 100.0 + 25.5 * r});
  for (int s = 0; s < kShots; ++s) sources.push_back({30.0, 149.75 + s, 80.0 + 60.0 * s});
  return shared_gathers(kShots, receivers, nt, 1.25e-3, traces, sources);
}

// A streamer: each shot with its own receivers, 3, 5 and 2 of them, moving with the source.
ShotGathers ragged_gathers() {
  ShotGathers g;
  g.n_shots = 3, g.nt = 29, g.dt = 2e-3;
  const int counts[3] = {3, 5, 2};
  g.first_trace = {0};
  for (int s = 0; s < g.n_shots; ++s) {
    g.sources.push_back({10.0, 200.0, 100.0 + 50.0 * s});
    for (int r = 0; r < counts[s]; ++r) g.receivers.push_back({15.0, 200.0 + r, 150.0 + 50.0 * s + 12.5 * r});
    g.first_trace.push_back(g.first_trace.back() + counts[s]);
  }
  for (std::size_t k = 0; k < g.n_traces() * std::size_t(g.nt); ++k) g.traces.push_back(float(std::cos(0.21 * k)));
  return g;
}

std::string temp(const std::string& name) { return (std::filesystem::temp_directory_path() / name).string(); }

std::vector<unsigned char> bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

long be(const std::vector<unsigned char>& b, std::size_t position, int size) {
  long v = 0;
  for (int k = 0; k < size; ++k) v = (v << 8) | b[position - 1 + k];
  return size == 2 ? long(std::int16_t(v)) : size == 4 ? long(std::int32_t(v)) : v;
}

void check_equal(const ShotGathers& a, const ShotGathers& b, double coordinate_tolerance) {
  REQUIRE(a.n_shots == b.n_shots);
  REQUIRE(a.first_trace == b.first_trace);
  REQUIRE(a.n_traces() == b.n_traces());
  REQUIRE(a.nt == b.nt);
  CHECK(a.dt == doctest::Approx(b.dt).epsilon(1e-12));
  REQUIRE(a.traces.size() == b.traces.size());
  long mismatch = 0;
  for (std::size_t i = 0; i < a.traces.size(); ++i) mismatch += a.traces[i] != b.traces[i];
  CHECK(mismatch == 0);
  for (std::size_t r = 0; r < a.n_traces(); ++r)
    for (int k = 0; k < 3; ++k) CHECK(std::abs(a.receivers[r][k] - b.receivers[r][k]) <= coordinate_tolerance);
  for (int s = 0; s < a.n_shots; ++s)
    for (int k = 0; k < 3; ++k) CHECK(std::abs(a.sources[s][k] - b.sources[s][k]) <= coordinate_tolerance);
}

// Overwrites bytes of a file at a 1-based position (as SEG-Y numbers them), big-endian.
void patch(const std::string& path, std::size_t position, long value, int size) {
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  f.seekp(std::streamoff(position - 1));
  for (int k = size - 1; k >= 0; --k) f.put(char((value >> (8 * k)) & 0xff));
}

// The 1-based file position of byte `byte` of trace `trace`'s (0-based) header.
std::size_t trace_byte(const ShotGathers& g, std::size_t trace, std::size_t byte) {
  return 3600 + trace * std::size_t(240 + 4 * g.nt) + byte;
}

// The names in `dir` that start with `prefix` (temporary files left behind).
std::vector<std::string> leftovers(const std::filesystem::path& dir, const std::string& prefix) {
  std::vector<std::string> found;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().rfind(prefix, 0) == 0) found.push_back(e.path().filename().string());
  return found;
}

// The Error a call throws (its code and message), or a failed check when it throws none.
template <class F>
std::pair<ExitCode, std::string> refusal(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  FAIL("expected an error");
  return {ExitCode::ok, ""};
}

}  // namespace

TEST_CASE("SEG-Y rev 2: shot gathers survive export and import exactly (samples bitwise, coordinates to 1 mm)") {
  const ShotGathers g = sample_gathers();
  const std::string path = temp("specwave_test.sgy");
  write_segy(path, g, "specwave test\nsecond line", SegyText::ascii);
  check_equal(g, read_segy(path), 5e-4);

  auto b = bytes_of(path);
  REQUIRE(b.size() == 3600 + g.n_traces() * (240 + 4 * std::size_t(g.nt)));
  CHECK(std::string(b.begin(), b.begin() + 16) == "C1  specwave tes");
  // The default textual header is EBCDIC (code page 037; these bytes are Python's "C1  specwave tes".encode("cp037")),
  // and everything after it is the same.
  write_segy(path, g, "specwave test\nsecond line");
  check_equal(g, read_segy(path), 5e-4);
  const auto e = bytes_of(path);
  REQUIRE(e.size() == b.size());
  CHECK(std::vector<unsigned char>(e.begin(), e.begin() + 16) ==
        std::vector<unsigned char>{195, 241, 64, 64, 162, 151, 133, 131, 166, 129, 165, 133, 64, 163, 133, 162});
  CHECK(std::equal(e.begin() + 3200, e.end(), b.begin() + 3200));
  for (std::size_t k = 0; k < 3200; ++k) CHECK(e[k] == ebcdic_of(char(b[k])));
  CHECK(be(b, 3225, 2) == 5);  // IEEE float
  CHECK(be(b, 3221, 2) == g.nt);
  CHECK(be(b, 3217, 2) == 1250);      // microseconds
  CHECK(be(b, 3297, 4) == 16909060);  // byte-order constant
  CHECK(b[3500] == 2);                // revision 2.0
  CHECK(be(b, 3503, 2) == 1);         // fixed-length traces
  // Second trace of the second shot: field record 2, trace 2, receiver x 125.5 m = 125500 mm, scalar -1000.
  const std::size_t t = 3600 + (1 * kReceivers + 1) * std::size_t(240 + 4 * g.nt);
  CHECK(be(b, t + 9, 4) == 2);
  CHECK(be(b, t + 13, 4) == 2);
  CHECK(be(b, t + 71, 2) == -1000);
  CHECK(be(b, t + 81, 4) == 125500);
  CHECK(be(b, t + 73, 4) == 140000);  // source x of shot 2
  CHECK(be(b, t + 41, 4) == -13500);  // receiver elevation = -z
  CHECK(be(b, t + 49, 4) == 30000);   // source depth
  // offset (37-40): the horizontal source-receiver distance in whole metres
  const double offset = std::hypot(g.receivers[1][2] - g.sources[1][2], g.receivers[1][1] - g.sources[1][1]);
  CHECK(be(b, t + 37, 4) == std::lround(offset));
  CHECK(be(b, t + 115, 2) == g.nt);
  std::filesystem::remove(path);
}

TEST_CASE("traces.h5 -> SEG-Y -> traces.h5 keeps traces, sampling and geometry") {
  const ShotGathers g = sample_gathers();
  const std::string h5 = temp("specwave_test_traces.h5"), sgy = temp("specwave_test_2.sgy"),
                    back = temp("specwave_test_back.h5");
  write_trace_file(h5, g, "test");
  const ShotGathers from_h5 = read_trace_file(h5);
  check_equal(g, from_h5, 0.0);
  write_segy(sgy, from_h5, "round trip");
  write_trace_file(back, read_segy(sgy), sgy);
  check_equal(g, read_trace_file(back), 5e-4);
  for (const auto& p : {h5, sgy, back}) std::filesystem::remove(p);
}

TEST_CASE("receiver components: traces.h5 <-> SEG-Y keep each trace's (trace identification codes 11 to 14)") {
  // Shared receivers (4 a shot: p, vz, vy, vx at one position each) and a ragged set: /receiver_component survives
  // traces.h5, and SEG-Y carries it in bytes 29-30 (11 pressure sensor; 12, 13, 14 the vertical, cross-line (y) and
  // in-line (x) components of a multicomponent sensor); pressure-only gathers keep code 1 and no dataset.
  for (const bool ragged : {false, true}) {
    CAPTURE(ragged);
    ShotGathers g = ragged ? ragged_gathers() : sample_gathers();
    for (std::size_t t = 0; t < g.n_traces(); ++t) g.components.push_back(std::int32_t(t % 4));
    if (!ragged) REQUIRE(g.shared_receivers());
    const std::string h5 = temp("specwave_test_components.h5"), sgy = temp("specwave_test_components.sgy");
    write_trace_file(h5, g, "test");
    const ShotGathers from_h5 = read_trace_file(h5);
    CHECK(from_h5.components == g.components);
    write_segy(sgy, from_h5, "components");
    const auto b = bytes_of(sgy);
    for (std::size_t t = 0; t < g.n_traces(); ++t)
      CHECK(be(b, 3600 + t * std::size_t(240 + 4 * g.nt) + 29, 2) == 11 + g.components[t]);
    CHECK(read_segy(sgy).components == g.components);
    for (const auto& p : {h5, sgy}) std::filesystem::remove(p);
  }
  const ShotGathers plain = sample_gathers();
  const std::string h5 = temp("specwave_test_plain.h5"), sgy = temp("specwave_test_plain.sgy");
  write_trace_file(h5, plain, "test");
  CHECK_FALSE(specwave::io::h5::Reader(h5).has_dataset("/receiver_component"));
  write_segy(sgy, read_trace_file(h5), "plain");
  CHECK(be(bytes_of(sgy), 3600 + 29, 2) == 1);
  CHECK(read_segy(sgy).components.empty());
  for (const auto& p : {h5, sgy}) std::filesystem::remove(p);
}

TEST_CASE("shots with their own receivers: ragged traces.h5 <-> SEG-Y keep each shot's traces and geometry") {
  const ShotGathers g = ragged_gathers();
  REQUIRE(!g.shared_receivers());
  CHECK(g.describe() == "3 shots, 10 traces (2 to 5 a shot)");
  const std::string h5 = temp("specwave_test_ragged.h5"), sgy = temp("specwave_test_ragged.sgy"),
                    back = temp("specwave_test_ragged_back.h5");
  write_trace_file(h5, g, "test");
  {
    specwave::io::h5::Reader reader(h5);
    CHECK(reader.info("/traces").dims == std::vector<hsize_t>{10, 29});
    CHECK(read_shot_first_trace(reader) == std::vector<std::int64_t>{0, 3, 8, 10});
  }
  const ShotGathers from_h5 = read_trace_file(h5);
  check_equal(g, from_h5, 0.0);
  write_segy(sgy, from_h5, "ragged");
  const auto b = bytes_of(sgy);
  REQUIRE(b.size() == 3600 + 10 * std::size_t(240 + 4 * g.nt));
  CHECK(be(b, 3213, 2) == 5);  // traces per ensemble: the largest shot's
  // Every trace header: its shot (field record), its number in the shot, its group x and its offset.
  for (int s = 0; s < g.n_shots; ++s)
    for (int r = 0; r < g.shot_traces(s); ++r) {
      const std::size_t trace = std::size_t(g.first_trace[std::size_t(s)] + r);
      const std::size_t t = 3600 + trace * std::size_t(240 + 4 * g.nt);
      CHECK(be(b, t + 9, 4) == s + 1);
      CHECK(be(b, t + 13, 4) == r + 1);
      CHECK(be(b, t + 81, 4) == std::lround(g.receivers[trace][2] * 1000));
      const double offset = std::hypot(g.receivers[trace][2] - g.sources[std::size_t(s)][2],
                                       g.receivers[trace][1] - g.sources[std::size_t(s)][1]);
      CHECK(be(b, t + 37, 4) == std::lround(offset));
    }
  write_trace_file(back, read_segy(sgy), sgy);
  check_equal(g, read_trace_file(back), 5e-4);
  for (const auto& p : {h5, sgy, back}) std::filesystem::remove(p);
}

TEST_CASE("[receivers] file: each shot's receivers from a survey's traces.h5 or SEG-Y; files that cannot say refused") {
  const ShotGathers g = ragged_gathers();
  const std::string h5 = temp("specwave_test_acq.h5"), sgy = temp("specwave_test_acq.sgy");
  write_trace_file(h5, g, "test");
  write_segy(sgy, g, "acquisition");
  // A case on a grid that holds the streamer, one shot per shot of the gathers, each source where the file has it.
  const auto case_text = [](const ShotGathers& gathers) {
    std::string t =
        "[grid]\nshape = [40, 40, 60]\nspacing = 10\n[model]\ntype = \"homogeneous\"\nvelocity = "
        "2000\n[time]\nduration = 0.2\n";
    for (const Vec3& p : gathers.sources)
      t +=
          fmt::format("[[shots]]\n[[shots.sources]]\nposition = [{}, {}, {}]\npeak_frequency = 15\n", p[0], p[1], p[2]);
    return t;
  };
  const std::string text = case_text(g);
  for (const std::string& file : {h5, sgy}) {
    CAPTURE(file);
    const Case c = parse_case_text(text + "[receivers]\nfile = \"" + file + "\"\n", "c.toml", "");
    REQUIRE(!shared_receivers(c));
    for (int s = 0; s < g.n_shots; ++s) {
      const auto& got = shot_receivers(c, std::size_t(s));
      REQUIRE(int(got.size()) == g.shot_traces(s));
      for (int r = 0; r < g.shot_traces(s); ++r)
        for (int a = 0; a < 3; ++a)
          CHECK(std::abs(got[std::size_t(r)][a] - g.receivers[std::size_t(g.first_trace[std::size_t(s)] + r)][a]) <=
                5e-4);
    }
  }
  // An HDF5 acquisition table: the geometry datasets of a ragged traces.h5 without /traces.
  const std::string table = temp("specwave_test_acq_table.h5");
  {
    specwave::io::h5::AtomicWriter w(table);
    std::vector<double> rec, src;
    for (const Vec3& p : g.receivers) rec.insert(rec.end(), p.begin(), p.end());
    for (const Vec3& p : g.sources) src.insert(src.end(), p.begin(), p.end());
    const std::vector<std::int32_t> shot_of = {0, 1, 2};
    specwave::io::h5::write_dataset<double>(w.id(), "receiver_coordinates", {g.n_traces(), 3}, rec.data(), "m");
    specwave::io::h5::write_dataset<std::int64_t>(w.id(), "shot_first_trace", {4}, g.first_trace.data(), "");
    specwave::io::h5::write_dataset<double>(w.id(), "source_coordinates", {3, 3}, src.data(), "m");
    specwave::io::h5::write_dataset<std::int32_t>(w.id(), "source_shot", {3}, shot_of.data(), "");
    w.commit();
  }
  {
    const Case c = parse_case_text(text + "[receivers]\nfile = \"" + table + "\"\n", "c.toml", "");
    for (int s = 0; s < g.n_shots; ++s) {
      const auto& got = shot_receivers(c, std::size_t(s));
      REQUIRE(int(got.size()) == g.shot_traces(s));
      CHECK(got.front() == g.receivers[std::size_t(g.first_trace[std::size_t(s)])]);
    }
  }
  // The same table with integer coordinates (docs/hdf5-schema.md: any float and integer types), then with a NaN
  // source coordinate (named as such, not as a shot without a source).
  for (const bool nan_source : {false, true}) {
    CAPTURE(nan_source);
    {
      specwave::io::h5::AtomicWriter w(table);
      std::vector<std::int32_t> rec;
      std::vector<double> src;
      for (const Vec3& p : g.receivers)
        for (double v : p) rec.push_back(std::int32_t(std::lround(v)));
      for (const Vec3& p : g.sources) src.insert(src.end(), p.begin(), p.end());
      if (nan_source) src[4] = NAN;
      const std::vector<std::int32_t> shot_of = {0, 1, 2};
      specwave::io::h5::write_dataset<std::int32_t>(w.id(), "receiver_coordinates", {g.n_traces(), 3}, rec.data(), "m");
      specwave::io::h5::write_dataset<std::int64_t>(w.id(), "shot_first_trace", {4}, g.first_trace.data(), "");
      specwave::io::h5::write_dataset<double>(w.id(), "source_coordinates", {3, 3}, src.data(), "m");
      specwave::io::h5::write_dataset<std::int32_t>(w.id(), "source_shot", {3}, shot_of.data(), "");
      w.commit();
    }
    if (nan_source) {
      CHECK_THROWS_WITH_AS(parse_case_text(text + "[receivers]\nfile = \"" + table + "\"\n", "c.toml", ""),
                           doctest::Contains("'/source_coordinates' row 1 holds nan (its y coordinate)"), Error);
      continue;
    }
    const Case c = parse_case_text(text + "[receivers]\nfile = \"" + table + "\"\n", "c.toml", "");
    const Vec3& first = g.receivers[std::size_t(g.first_trace[1])];
    CHECK(shot_receivers(c, 1).front() ==
          Vec3{double(std::lround(first[0])), double(std::lround(first[1])), double(std::lround(first[2]))});
  }
  std::filesystem::remove(table);
  // Shots that all record the same receivers stay shared (traces.h5's (shots, receivers, samples) layout).
  const ShotGathers same = sample_gathers();
  write_trace_file(h5, same, "test");
  const std::string same_text = case_text(same);
  const Case shared = parse_case_text(same_text + "[receivers]\nfile = \"" + h5 + "\"\n", "c.toml", "");
  CHECK(shared_receivers(shared));
  CHECK(shared.receivers.size() == std::size_t(kReceivers));
  CHECK(shared.receiver_components.empty());
  // A survey whose traces name their components (traces.h5's /receiver_component, SEG-Y codes 11 to 14): the case's
  // receivers record them, shared or per shot; a components key beside such a file is refused.
  for (const bool ragged : {false, true}) {
    ShotGathers four = ragged ? ragged_gathers() : sample_gathers();
    for (std::size_t t = 0; t < four.n_traces(); ++t) four.components.push_back(std::int32_t((t + 1) % 4));
    write_trace_file(h5, four, "test");
    write_segy(sgy, four, "components");
    for (const std::string& file : {h5, sgy}) {
      CAPTURE(file);
      const Case c = parse_case_text(case_text(four) + "[receivers]\nfile = \"" + file + "\"\n", "c.toml", "");
      CHECK(shared_receivers(c) == !ragged);
      for (int s = 0; s < four.n_shots; ++s)
        for (int r = 0; r < four.shot_traces(s); ++r)
          CHECK(int(shot_receiver_component(c, std::size_t(s), std::size_t(r))) ==
                four.components[std::size_t(four.first_trace[std::size_t(s)] + r)]);
    }
  }
  CHECK_THROWS_WITH_AS(
      parse_case_text(case_text(ragged_gathers()) + "[receivers]\nfile = \"" + h5 + "\"\ncomponents = [\"p\"]\n",
                      "c.toml", ""),
      doctest::Contains("which names each trace's component"), Error);
  write_trace_file(h5, same, "test");
  // Refusals: shots that do not match the file's, a source elsewhere, file with points, a SEG-Y without coordinates.
  const auto refused = [](const std::string& t, const std::string& expected, ExitCode code) {
    try {
      parse_case_text(t, "c.toml", "");
      FAIL("expected an error");
    } catch (const Error& e) {
      CAPTURE(e.what());
      CHECK(std::string(e.what()).find(expected) != std::string::npos);
      CHECK(e.code() == code);
    }
  };
  write_trace_file(h5, g, "test");
  refused(text.substr(0, text.rfind("[[shots]]")) + "[receivers]\nfile = \"" + h5 + "\"\n",
          "receivers.file: " + h5 + " holds 3 shot(s) (the case has 2 [[shots]])", ExitCode::invalid_case);
  std::string moved = text;
  moved.replace(moved.find("position = [10, 200, 150]"), 25, "position = [10, 200, 151]");
  refused(moved + "[receivers]\nfile = \"" + h5 + "\"\n", "shot 1's source in", ExitCode::invalid_case);
  refused(text + "[receivers]\npoints = [[1, 2, 3]]\nfile = \"" + h5 + "\"\n",
          "receivers.points: cannot be combined with file", ExitCode::invalid_case);
  ShotGathers blank = g;
  for (auto& p : blank.receivers) p = {0, 0, 0};
  for (auto& p : blank.sources) p = {0, 0, 0};
  write_segy(sgy, blank, "no coordinates");
  refused(text + "[receivers]\nfile = \"" + sgy + "\"\n", "the trace headers hold no coordinates",
          ExitCode::input_error);
  for (const auto& p : {h5, sgy}) std::filesystem::remove(p);
}

TEST_CASE("SEG-Y import: IBM floats, and clear errors") {
  CHECK(ibm_to_ieee(0xC276A000u) == -118.625f);  // the example of the SEG-Y standard
  CHECK(ibm_to_ieee(0x41100000u) == 1.0f);
  CHECK(ibm_to_ieee(0u) == 0.0f);

  const std::string path = temp("specwave_test_bad.sgy");
  { std::ofstream(path, std::ios::binary) << "too short"; }
  try {
    read_segy(path);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("3600-byte") != std::string::npos);
    CHECK(e.code() == ExitCode::input_error);
  }
  // A field record that changes within a shot makes shots with their own receivers; one that comes back after other
  // records is refused, naming the trace.
  ShotGathers g = sample_gathers();
  write_segy(path, g, "x");
  auto b = bytes_of(path);
  const std::size_t trace = 240 + 4 * std::size_t(g.nt);
  b[3600 + 3 * trace + 8 + 3] = 9;  // shot 1's last trace claims field record 9
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  }
  const ShotGathers split = read_segy(path);
  CHECK(split.n_shots == 4);
  CHECK(split.first_trace == std::vector<std::int64_t>{0, 3, 4, 8, 12});
  b[3600 + 5 * trace + 8 + 3] = 1;  // shot 2's second trace claims shot 1's record
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  }
  try {
    read_segy(path);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("trace 6 returns to field record 1 (shot 1)") != std::string::npos);
  }
  // Corrupt binary headers (issue 21): 0 samples per trace, a negative extended count, a negative or NaN
  // extended sample interval. Each refused with the header bytes named (big-endian, as written).
  const auto patched = [&](std::size_t position, std::vector<unsigned char> value) {
    write_segy(path, g, "x");
    auto c = bytes_of(path);
    std::copy(value.begin(), value.end(), c.begin() + std::ptrdiff_t(position - 1));
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(c.data()), std::streamsize(c.size()));
  };
  const std::vector<std::tuple<std::size_t, std::vector<unsigned char>, std::string>> corrupt = {
      {3221, {0, 0}, "0 samples per trace"},  // and the extended count below is 0 too
      {3269, {0xff, 0xff, 0xff, 0xfe}, "extended samples per trace (binary header bytes 3269-3272) is -2"},
      {3273, {0xbf, 0xf0, 0, 0, 0, 0, 0, 0}, "extended sample interval (binary header bytes 3273-3280) is -1"},
      {3273, {0x7f, 0xf8, 0, 0, 0, 0, 0, 0}, "extended sample interval (binary header bytes 3273-3280) is nan"},
  };
  for (const auto& item : corrupt) {
    const std::size_t position = std::get<0>(item);  // a plain variable: clang 14 cannot capture a binding
    const auto& [_, value, expected] = item;
    CAPTURE(position);
    patched(position, value);
    if (position == 3221) {  // no extended count either
      auto c = bytes_of(path);
      std::fill(c.begin() + 3268, c.begin() + 3272, 0);
      std::ofstream out(path, std::ios::binary);
      out.write(reinterpret_cast<const char*>(c.data()), std::streamsize(c.size()));
    }
    try {
      read_segy(path);
      FAIL("expected an error");
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find(expected) != std::string::npos);
      CHECK(e.code() == ExitCode::input_error);
    }
  }
  std::filesystem::remove(path);
}

TEST_CASE("SEG-Y export: a sample count or interval beyond the 16-bit fields goes to the rev 2 extended fields, said") {
  // 70,000 samples of 0.1 s: the 16-bit fields (3217-3218, 3221-3222, trace headers 115-118) cannot hold them. They
  // hold 0 ("not given"; a clamped 65535 made rev 0/1 readers misparse every trace after the first), the values are
  // in the extended fields (3269-3272, 3273-3280) of a rev 2.0 file, and a note says so.
  std::vector<Vec3> receivers = {{5.0, 10.0, 20.0}, {5.0, 10.0, 30.0}};
  const int nt = 70000;
  std::vector<float> traces(2 * std::size_t(nt));
  for (std::size_t k = 0; k < traces.size(); ++k) traces[k] = float(std::sin(0.001 * double(k)));
  const ShotGathers g = shared_gathers(1, receivers, nt, 0.1, traces, {{1.0, 10.0, 0.0}});
  const std::string path = temp("specwave_test_extended.sgy");
  const std::vector<std::string> notes = write_segy(path, g, "extended");
  const auto b = bytes_of(path);
  CHECK(be(b, 3217, 2) == 0);
  CHECK(be(b, 3221, 2) == 0);
  CHECK(be(b, 3269, 4) == nt);
  double us = 0;
  {
    std::uint64_t bits = 0;
    for (int k = 0; k < 8; ++k) bits = (bits << 8) | b[3272 + std::size_t(k)];
    std::memcpy(&us, &bits, 8);
  }
  CHECK(us == 100000.0);
  CHECK(b[3500] == 2);
  for (std::size_t t = 0; t < 2; ++t) {
    CHECK(be(b, trace_byte(g, t, 115), 2) == 0);
    CHECK(be(b, trace_byte(g, t, 117), 2) == 0);
  }
  REQUIRE(notes.size() == 2);
  CHECK(notes[0].find("dt = 0.1 s (100000 microseconds) does not fit the 16-bit sample intervals") !=
        std::string::npos);
  CHECK(notes[0].find("extended sample interval (3273-3280) only") != std::string::npos);
  CHECK(notes[1].find("70000 samples per trace do not fit the 16-bit sample counts") != std::string::npos);
  CHECK(notes[1].find("extended samples per trace (3269-3272) only") != std::string::npos);
  const ShotGathers back = read_segy(path);
  CHECK(back.nt == nt);
  CHECK(back.dt == 0.1);
  CHECK(back.traces == g.traces);
  // Within the 16-bit fields nothing is said.
  CHECK(write_segy(path, sample_gathers(), "plain").empty());
  std::filesystem::remove(path);
}

TEST_CASE("SEG-Y: dt of whole microseconds survives export and import bit for bit (0.1 s among them)") {
  ShotGathers g = sample_gathers();
  const std::string sgy = temp("specwave_test_dt.sgy"), h5 = temp("specwave_test_dt.h5");
  std::vector<long> microseconds = {1, 3, 7, 125, 250, 500, 1000, 1250, 2000, 4000, 65535, 65536, 100000, 250000};
  for (long us = 11; us < 2'000'000; us = us * 3 + 7) microseconds.push_back(us);
  for (const long us : microseconds) {
    CAPTURE(us);
    g.dt = double(us) / 1e6;  // the double nearest us microseconds, as a case file's "0.1" is
    write_segy(sgy, g, "dt");
    const ShotGathers back = read_segy(sgy);
    CHECK(back.dt == g.dt);
    write_trace_file(h5, back, sgy);
    CHECK(read_trace_file(h5).dt == g.dt);
  }
  // A dt that is not a whole number of microseconds: said, and exact where us / 1e6 gives it back.
  g.dt = 1.6467473575215272e-3;
  const auto notes = write_segy(sgy, g, "dt");
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("is not a whole number of them") != std::string::npos);
  CHECK(read_segy(sgy).dt == g.dt);
  for (const auto& p : {sgy, h5}) std::filesystem::remove(p);
}

TEST_CASE("SEG-Y and traces.h5 writers: an empty output path is a usage error; no failure leaves a temporary file") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(temp("specwave_test_leftovers"));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path cwd = fs::current_path();
  fs::current_path(dir);  // "" would put the temporary here
  const ShotGathers g = sample_gathers();
  for (const bool segy : {true, false}) {
    CAPTURE(segy);
    const auto [code, message] =
        refusal([&] { segy ? (void)write_segy("", g, "empty") : write_trace_file("", g, "empty"); });
    CHECK(code == ExitCode::usage);
    CHECK(message.find("output path is empty") != std::string::npos);
  }
  // A rename that fails (onto a folder that holds a file) and a coordinate that does not fit a 32-bit field in mm
  // (found while the traces are written): refused, and the folder holds nothing of the writers'.
  fs::create_directories(dir / "taken");
  { std::ofstream(dir / "taken" / "file") << "x"; }
  CHECK(refusal([&] { write_trace_file((dir / "taken").string(), g, "onto a folder"); }).first ==
        ExitCode::output_error);
  CHECK(refusal([&] { write_segy((dir / "taken").string(), g, "onto a folder"); }).first == ExitCode::output_error);
  ShotGathers far = g;
  far.receivers.back()[2] = 1e7;  // 10,000 km: 1e10 mm
  CHECK(refusal([&] { write_segy((dir / "far.sgy").string(), far, "far"); }).first == ExitCode::output_error);
  fs::current_path(cwd);
  CHECK(leftovers(dir, "").size() == 1);  // "taken" alone
  CHECK(leftovers(dir, ".tmp").empty());
  CHECK(leftovers(dir, "taken.").empty());
  CHECK(leftovers(dir, "far.").empty());
  fs::remove_all(dir);
}

TEST_CASE("SEG-Y import: coordinate and elevation scalars other than SEG-Y's are refused, naming the trace") {
  const ShotGathers g = sample_gathers();
  const std::string path = temp("specwave_test_scalar.sgy");
  // Allowed: +-1, 10, 100, 1000, 10000, and 0 meaning 1 (the coordinates of -1000 rescaled by hand).
  for (const long scalar : {0L, 1L, -1L, 10L, -10L, 100L, -100L, 1000L, 10000L, -10000L}) {
    CAPTURE(scalar);
    write_segy(path, g, "scalar");
    patch(path, trace_byte(g, 2, 71), scalar, 2);
    const ShotGathers back = read_segy(path);
    const double factor = scalar > 0 ? double(scalar) : scalar < -1 ? 1.0 / double(-scalar) : 1.0;
    CHECK(back.receivers[2][2] == doctest::Approx(g.receivers[2][2] * 1000 * factor));
  }
  for (const auto& [at, value, kind] :
       std::vector<std::tuple<std::size_t, long, std::string>>{{71, -32768, "coordinate"},
                                                               {71, 3, "coordinate"},
                                                               {71, 100000 & 0xffff, "coordinate"},
                                                               {69, 7, "elevation"}}) {
    const std::size_t position = at;  // clang 14 cannot capture a structured binding
    const long scalar = value;
    const std::string what = kind;
    CAPTURE(scalar);
    write_segy(path, g, "scalar");
    patch(path, trace_byte(g, 4, position), scalar, 2);
    const auto [code, message] = refusal([&] { read_segy(path); });
    CHECK(code == ExitCode::input_error);
    CHECK(message.find(fmt::format("trace 5: the {} scalar (trace header bytes {}-{}) is {}", what, position,
                                   position + 1, std::int16_t(scalar))) != std::string::npos);
  }
  std::filesystem::remove(path);
}

TEST_CASE("SEG-Y import: NaN or infinite samples are refused, naming the trace and sample") {
  const ShotGathers g = sample_gathers();
  const std::string path = temp("specwave_test_nan.sgy");
  for (const auto& [pattern, label] :
       std::vector<std::pair<long, std::string>>{{0x7fc00000L, "nan"}, {0x7f800000L, "inf"}, {0xff800000L, "-inf"}}) {
    const long bits = pattern;  // clang 14 cannot capture a structured binding
    const std::string name = label;
    CAPTURE(name);
    write_segy(path, g, "nan");
    patch(path, trace_byte(g, 2, 240 + 4 * 4 + 1), bits, 4);  // trace 3, sample 5
    const auto [code, message] = refusal([&] { read_segy(path); });
    CHECK(code == ExitCode::input_error);
    CHECK(message.find(fmt::format("trace 3, sample 5 (of {}) is {}", g.nt, name)) != std::string::npos);
    // The geometry alone (a [receivers] file) does not need the samples.
    CHECK(read_acquisition(path).n_traces() == g.n_traces());
  }
  std::filesystem::remove(path);
}

TEST_CASE("SEG-Y: the delay recording time is traces.h5's t0, both ways; delays that differ are refused") {
  ShotGathers g = sample_gathers();
  const std::string sgy = temp("specwave_test_delay.sgy"), h5 = temp("specwave_test_delay.h5");
  write_segy(sgy, g, "delay");
  CHECK(read_segy(sgy).t0 == 0.0);
  for (std::size_t t = 0; t < g.n_traces(); ++t) patch(sgy, trace_byte(g, t, 109), 20, 2);  // 20 ms
  const ShotGathers back = read_segy(sgy);
  CHECK(back.t0 == 0.02);
  write_trace_file(h5, back, sgy);
  {
    specwave::io::h5::Reader reader(h5);
    specwave::io::h5::Handle d = reader.open_dataset("/traces");
    CHECK(specwave::io::h5::read_attribute_doubles(d.id(), "t0") == std::vector<double>{0.02});
  }
  const ShotGathers from_h5 = read_trace_file(h5);
  CHECK(from_h5.t0 == 0.02);
  write_segy(sgy, from_h5, "delay");
  for (std::size_t t = 0; t < g.n_traces(); ++t) CHECK(be(bytes_of(sgy), trace_byte(g, t, 109), 2) == 20);
  // A negative delay, and the rev 1+ time scalar (bytes 215-216): 25 / 10 ms.
  g.t0 = -0.007;
  write_segy(sgy, g, "delay");
  CHECK(read_segy(sgy).t0 == -0.007);
  for (std::size_t t = 0; t < g.n_traces(); ++t) {
    patch(sgy, trace_byte(g, t, 109), 25, 2);
    patch(sgy, trace_byte(g, t, 215), -10, 2);
  }
  CHECK(read_segy(sgy).t0 == 0.0025);
  patch(sgy, trace_byte(g, 0, 215), 3, 2);
  CHECK(refusal([&] { read_segy(sgy); }).second.find("trace 1: the time scalar (trace header bytes 215-216) is 3") !=
        std::string::npos);
  // Traces that start at different times.
  g.t0 = 0.02;
  write_segy(sgy, g, "delay");
  patch(sgy, trace_byte(g, 6, 109), 24, 2);
  const auto [code, message] = refusal([&] { read_segy(sgy); });
  CHECK(code == ExitCode::input_error);
  CHECK(message.find("trace 7 starts at 0.024 s, trace 1 at 0.02 s (delay recording time, trace header bytes "
                     "109-110") != std::string::npos);
  // Export: a t0 that is not a whole number of milliseconds, or beyond 16 bits of them, is refused, nothing written.
  std::filesystem::remove(sgy);
  for (const double t0 : {0.0005, 40.0, std::nan("")}) {
    CAPTURE(t0);
    g.t0 = t0;
    const auto [export_code, export_message] = refusal([&] { write_segy(sgy, g, "delay"); });
    CHECK(export_code == ExitCode::input_error);
    CHECK(export_message.find("is not a whole number of milliseconds within +-32767 ms") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(sgy));
  }
  std::filesystem::remove(h5);
}

TEST_CASE("regression metrics: a time shift and a scaled trace are measured") {
  const int nt = 200;
  std::vector<double> ref(2 * nt), shifted(2 * nt), scaled(2 * nt);
  for (int n = 0; n < nt; ++n) {
    const auto ricker = [](double t) {
      const double a = std::pow(M_PI * 15 * (t - 0.1), 2);
      return (1 - 2 * a) * std::exp(-a);
    };
    ref[n] = ricker(n * 1e-3);
    ref[nt + n] = 0.5 * ricker(n * 1e-3 - 0.02);
    shifted[n] = ricker((n - 3) * 1e-3);
    shifted[nt + n] = 0.5 * ricker((n - 3) * 1e-3 - 0.02);
    scaled[n] = 1.01 * ref[n];
    scaled[nt + n] = 1.01 * ref[nt + n];
  }
  const TraceComparison same = compare_traces(ref, ref, 2, nt);
  CHECK(same.rel_l2 == 0);
  CHECK(same.min_correlation == doctest::Approx(1.0));
  CHECK(same.max_time_shift == 0);
  const TraceComparison s = compare_traces(shifted, ref, 2, nt);
  CHECK(s.max_time_shift == 3);
  CHECK(s.min_correlation < 0.99);
  const TraceComparison k = compare_traces(scaled, ref, 2, nt);
  CHECK(k.rel_l2 == doctest::Approx(0.01));
  CHECK(k.max_error == doctest::Approx(0.01));
  CHECK(k.min_correlation == doctest::Approx(1.0));
  CHECK(k.max_time_shift == 0);
}
