#include "io/segy.hpp"
#include "io/file_kind.hpp"

#include <fmt/format.h>
#include <unistd.h>
#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <type_traits>
#include <unordered_map>

#include "io/hdf5.hpp"
#include "io/outputs.hpp"
#include "solver/case/errors.hpp"

namespace specwave::io {
namespace {

constexpr std::size_t text_bytes = 3200, binary_bytes = 400, trace_header_bytes = 240;
constexpr std::int32_t byte_order_constant = 16909060;  // 0x01020304
constexpr double coordinate_scale = 1000.0;             // stored in millimetres
constexpr std::int16_t coordinate_scalar = -1000;       // SEG-Y: negative = divide by |scalar|

// Big-endian fields at 1-based SEG-Y byte positions (as the standard numbers them) of a header buffer.
template <class T>
void put(std::vector<unsigned char>& h, std::size_t position, T value) {
  using U = std::conditional_t<sizeof(T) == 2, std::uint16_t,
                               std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>;
  U bits;
  std::memcpy(&bits, &value, sizeof(T));
  for (std::size_t k = 0; k < sizeof(T); ++k) h[position - 1 + k] = (unsigned char)(bits >> (8 * (sizeof(T) - 1 - k)));
}

// Reads a field in the file's byte order (big-endian unless the byte-order constant says otherwise).
template <class T>
T get(const unsigned char* h, std::size_t position, bool little) {
  using U = std::conditional_t<sizeof(T) == 2, std::uint16_t,
                               std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>;
  U bits = 0;
  for (std::size_t k = 0; k < sizeof(T); ++k) {
    const std::size_t at = little ? sizeof(T) - 1 - k : k;
    bits = U(bits << 8) | U(h[position - 1 + at]);
  }
  T value;
  std::memcpy(&value, &bits, sizeof(T));
  return value;
}

std::int32_t scaled(double metres) {
  const double v = std::round(metres * coordinate_scale);
  if (std::abs(v) > double(std::numeric_limits<std::int32_t>::max()))
    throw Error(ExitCode::output_error,
                fmt::format("SEG-Y: coordinate {} m does not fit a 32-bit field in millimetres", metres));
  return std::int32_t(v);
}

double unscaled(std::int32_t value, std::int16_t scalar) {
  if (scalar < 0) return double(value) / double(-scalar);
  if (scalar > 0) return double(value) * double(scalar);
  return double(value);
}

// The scalars SEG-Y allows (coordinates 71-72, elevations and depths 69-70, times 215-216): +-1, 10, 100, 1000 or
// 10000 (negative: divide), 0 meaning 1.
bool standard_scalar(std::int16_t scalar) {
  const int a = std::abs(int(scalar));
  return a == 0 || a == 1 || a == 10 || a == 100 || a == 1000 || a == 10000;
}

}  // namespace

float ibm_to_ieee(std::uint32_t ibm) {
  if ((ibm & 0x7fffffff) == 0) return 0.0f;
  const double sign = (ibm >> 31) ? -1.0 : 1.0;
  const int exponent = int((ibm >> 24) & 0x7f) - 64;
  const double fraction = double(ibm & 0x00ffffff) / double(1 << 24);
  return float(sign * fraction * std::pow(16.0, exponent));
}

namespace {

[[noreturn]] void bad_input(const std::string& path, const std::string& what) {
  throw Error(ExitCode::input_error, fmt::format("{}: {}", path, what));
}

// An output path must name a file: "" would make the temporary ".tmp-PID" in the current folder and fail its rename.
void check_output_path(const std::string& path, const char* what) {
  if (path.empty())
    throw Error(ExitCode::usage, fmt::format("the {} output path is empty; give the name of the file to write", what));
}

// Trace `trace`'s (0-based) scalar at `position` (bytes position, position + 1), refused unless SEG-Y allows it.
std::int16_t checked_scalar(const std::string& path, const unsigned char* th, std::size_t position, bool little,
                            std::size_t trace, const char* what) {
  const std::int16_t scalar = get<std::int16_t>(th, position, little);
  if (!standard_scalar(scalar))
    bad_input(path, fmt::format("trace {}: the {} scalar (trace header bytes {}-{}) is {}; SEG-Y allows 1, 10, 100, "
                                "1000 or 10000 (negative to divide, 0 meaning 1); correct the header (or check the "
                                "file's byte order)",
                                trace + 1, what, position, position + 1, scalar));
  return scalar;
}

// SEG-Y -> gathers (below); read_acquisition wants the geometry alone.
ShotGathers segy_gathers(const std::string& path, bool data);

// Removes a temporary file unless kept: every way out of a writer but success leaves nothing behind.
struct RemoveUnlessKept {
  std::vector<std::string> paths;
  bool keep = false;
  ~RemoveUnlessKept() {
    if (keep) return;
    std::error_code ignored;
    for (const std::string& p : paths) std::filesystem::remove(p, ignored);
  }
};

}  // namespace

bool ShotGathers::shared_receivers() const {
  for (int s = 1; s < n_shots; ++s) {
    if (shot_traces(s) != shot_traces(0)) return false;
    for (int r = 0; r < shot_traces(s); ++r) {
      const Vec3& p = receivers[std::size_t(first_trace[std::size_t(s)] + r)];
      const Vec3& q = receivers[std::size_t(r)];
      if (std::abs(p[0] - q[0]) + std::abs(p[1] - q[1]) + std::abs(p[2] - q[2]) > 1e-3) return false;
      if (!components.empty() && components[std::size_t(first_trace[std::size_t(s)] + r)] != components[std::size_t(r)])
        return false;
    }
  }
  return true;
}

std::string ShotGathers::describe() const {
  if (shared_receivers()) return fmt::format("{} shots x {} receivers", n_shots, n_shots ? shot_traces(0) : 0);
  int least = INT_MAX, most = 0;
  for (int s = 0; s < n_shots; ++s) least = std::min(least, shot_traces(s)), most = std::max(most, shot_traces(s));
  return fmt::format("{} shots, {} traces ({} to {} a shot)", n_shots, n_traces(), least, most);
}

ShotGathers shared_gathers(int n_shots, const std::vector<Vec3>& receivers, int nt, double dt,
                           std::vector<float> traces, std::vector<Vec3> sources) {
  ShotGathers g;
  g.n_shots = n_shots, g.nt = nt, g.dt = dt;
  g.traces = std::move(traces);
  g.sources = std::move(sources);
  for (int s = 0; s <= n_shots; ++s) g.first_trace.push_back(std::int64_t(s) * std::int64_t(receivers.size()));
  for (int s = 0; s < n_shots; ++s) g.receivers.insert(g.receivers.end(), receivers.begin(), receivers.end());
  return g;
}

ShotGathers read_trace_file(const std::string& path, bool samples) {
  h5::Reader reader(path);
  ShotGathers g;
  const std::vector<std::int64_t> first = read_shot_first_trace(reader);
  // An acquisition table (geometry alone): the traces file's datasets without /traces; the shots by
  // /shot_first_trace, one receiver per row of /receiver_coordinates.
  const bool table = !samples && !reader.has_dataset("/traces");
  if (table && first.empty())
    bad_input(path, "an acquisition table without '/traces' needs '/shot_first_trace' (docs/hdf5-schema.md)");
  const h5::DatasetInfo info =
      table ? h5::DatasetInfo{{hsize_t(first.back()), 0}, H5T_FLOAT, 8} : reader.info("/traces");
  if (first.empty()) {
    if (info.dims.size() != 3)
      bad_input(path,
                "dataset '/traces' must be 3-D (shot, receiver, sample), or 2-D (trace, sample) with "
                "'/shot_first_trace'; is this a specwave traces.h5?");
    const auto n_receivers = info.dims[1];
    const auto rec = reader.read_numbers<double>("/receiver_coordinates", {n_receivers, 3});
    std::vector<Vec3> receivers;
    for (hsize_t r = 0; r < n_receivers; ++r) receivers.push_back({rec[3 * r], rec[3 * r + 1], rec[3 * r + 2]});
    g = shared_gathers(int(info.dims[0]), receivers, int(info.dims[2]), 0, {}, {});
  } else {
    if (info.dims.size() != 2 || hsize_t(first.back()) != info.dims[0])
      bad_input(path, fmt::format("dataset '/traces' must be (trace, sample) with {} rows, as '/shot_first_trace' "
                                  "ends",
                                  first.back()));
    g.n_shots = int(first.size()) - 1;
    g.nt = int(info.dims[1]);
    g.first_trace = first;
    const auto rec = reader.read_numbers<double>("/receiver_coordinates", {info.dims[0], 3});
    for (hsize_t r = 0; r < info.dims[0]; ++r) g.receivers.push_back({rec[3 * r], rec[3 * r + 1], rec[3 * r + 2]});
  }
  if (g.n_shots < 1 || g.n_traces() < 1 || (!table && g.nt < 1))
    bad_input(path, fmt::format("holds {} shot(s), {} trace(s) of {} sample(s): a traces file needs at least one of "
                                "each",
                                g.n_shots, g.n_traces(), g.nt));
  if (samples) g.traces = reader.read_floating<float>("/traces", info.dims);
  if (reader.has_dataset("/receiver_component")) {  // one a row of /receiver_coordinates (schema 1.3)
    const std::size_t rows = first.empty() ? std::size_t(info.dims[1]) : g.n_traces();
    const h5::DatasetInfo ci = reader.info("/receiver_component");
    if (ci.type_class != H5T_INTEGER || ci.dims != std::vector<hsize_t>{rows})
      bad_input(path, fmt::format("dataset '/receiver_component' must be {} integers, one a row of "
                                  "'/receiver_coordinates'",
                                  rows));
    std::vector<std::int32_t> codes(rows);
    h5::Handle d = reader.open_dataset("/receiver_component");
    if (H5Dread(d.id(), H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, codes.data()) < 0)
      bad_input(path, "cannot read dataset '/receiver_component'");
    for (const std::int32_t k : codes)
      if (k < 0 || k > 3)
        bad_input(path, fmt::format("dataset '/receiver_component' holds {}; the codes are 0 (p), 1 (vz), 2 (vy) and "
                                    "3 (vx)",
                                    k));
    for (int s = 0; s < (first.empty() ? g.n_shots : 1); ++s)
      g.components.insert(g.components.end(), codes.begin(), codes.end());
  }
  if (!table) {
    h5::Handle d = reader.open_dataset("/traces");
    const auto dt = h5::read_attribute_doubles(d.id(), "dt");
    if (dt.size() != 1 || !(dt[0] > 0)) bad_input(path, "dataset '/traces' needs a positive attribute dt (s)");
    g.dt = dt[0];
    if (h5::has_attribute(d.id(), "t0")) {  // the time of sample 0; absent: 0
      const auto t0 = h5::read_attribute_doubles(d.id(), "t0");
      if (t0.size() != 1 || !std::isfinite(t0[0]))
        bad_input(path, fmt::format("dataset '/traces' has attribute t0 = {} (the time of sample 0, s); it must be one "
                                    "finite number",
                                    t0.empty() ? NAN : t0[0]));
      g.t0 = t0[0];
    }
  }
  const h5::DatasetInfo si = reader.info("/source_coordinates");
  if (si.dims.size() != 2 || si.dims[1] != 3)
    bad_input(path, "dataset '/source_coordinates' must be (n_sources, 3): each source's (z, y, x) in m");
  const auto src = reader.read_numbers<double>("/source_coordinates", si.dims);
  for (std::size_t k = 0; k < src.size(); ++k)
    if (!std::isfinite(src[k]))
      bad_input(path, fmt::format("'/source_coordinates' row {} holds {} (its {} coordinate); every coordinate must "
                                  "be a finite number of metres",
                                  k / 3, src[k], "zyx"[k % 3]));
  for (std::size_t r = 0; r < g.receivers.size(); ++r)
    for (int a = 0; a < 3; ++a)
      if (!std::isfinite(g.receivers[r][a]))
        bad_input(path, fmt::format("'/receiver_coordinates' row {} holds {} (its {} coordinate); every coordinate "
                                    "must be a finite number of metres",
                                    r, g.receivers[r][a], "zyx"[a]));
  const h5::DatasetInfo shot_info = reader.info("/source_shot");
  if (shot_info.type_class != H5T_INTEGER || shot_info.dims != std::vector<hsize_t>{si.dims[0]})
    bad_input(path, "dataset '/source_shot' must be integers, one per source");
  std::vector<std::int32_t> shot_of(si.dims[0]);
  {
    h5::Handle ds = reader.open_dataset("/source_shot");
    if (H5Dread(ds.id(), H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, shot_of.data()) < 0)
      bad_input(path, "cannot read dataset '/source_shot'");
  }
  g.sources.assign(g.n_shots, {NAN, NAN, NAN});
  for (std::size_t s = 0; s < shot_of.size(); ++s) {
    const int shot = shot_of[s];
    if (shot >= 0 && shot < g.n_shots && std::isnan(g.sources[shot][0]))
      g.sources[shot] = {src[3 * s], src[3 * s + 1], src[3 * s + 2]};
  }
  for (int s = 0; s < g.n_shots; ++s)
    if (std::isnan(g.sources[s][0])) bad_input(path, fmt::format("shot {} has no source in '/source_shot'", s));
  return g;
}

ShotGathers read_acquisition(const std::string& path) {
  char signature[8] = {};
  std::ifstream(path, std::ios::binary).read(signature, 8);
  if (std::memcmp(signature, "\x89HDF\r\n\x1a\n", 8) == 0) return read_trace_file(path, false);
  ShotGathers g = segy_gathers(path, false);
  g.traces.clear();
  g.traces.shrink_to_fit();
  bool any = false;
  for (const Vec3& p : g.receivers) any = any || p[0] != 0 || p[1] != 0 || p[2] != 0;
  for (const Vec3& p : g.sources) any = any || p[1] != 0 || p[2] != 0;
  if (!any)
    bad_input(path,
              "the trace headers hold no coordinates (source x, y: bytes 73-80; group x, y: bytes 81-88; group "
              "elevation: bytes 41-44; all 0), so the receivers' positions are unknown; fill them in (with the "
              "scalar in bytes 71-72), or give the receivers in the case file");
  return g;
}

void write_trace_file(const std::string& path, const ShotGathers& g, const std::string& created_from) {
  check_output_path(path, "traces.h5");
  // Written complete under a staged name of this process's (TraceFile: its own temporary, renamed to it), t0 set there,
  // then renamed to `path`: the final name appears only complete, and a failure anywhere (the last rename included)
  // removes the staged file and TraceFile's temporary ("<name>.tmp-<pid>", io/hdf5.hpp).
  const std::string staged = fmt::format("{}.tmp-{}-staged", path, ::getpid());
  RemoveUnlessKept cleanup{{staged, fmt::format("{}.tmp-{}", staged, ::getpid())}};
  h5::Provenance prov{"specwave.traces", "fp32", "none", "", "converted from " + created_from, 0, 1};
  std::vector<std::vector<Vec3>> sources;
  for (const auto& s : g.sources) sources.push_back({s});
  std::unique_ptr<TraceFile> file;
  if (g.shared_receivers()) {
    const std::vector<Vec3> receivers(g.receivers.begin(), g.receivers.begin() + (g.n_shots ? g.shot_traces(0) : 0));
    file = std::make_unique<TraceFile>(staged, prov, false, g.n_shots, receivers, sources, g.nt, g.dt);
  } else {
    std::vector<std::vector<Vec3>> receivers;
    for (int s = 0; s < g.n_shots; ++s)
      receivers.emplace_back(g.receivers.begin() + g.first_trace[std::size_t(s)],
                             g.receivers.begin() + g.first_trace[std::size_t(s) + 1]);
    file = std::make_unique<TraceFile>(staged, prov, false, receivers, sources, g.nt, g.dt);
  }
  if (std::any_of(g.components.begin(), g.components.end(), [](std::int32_t k) { return k != 0; })) {
    const std::size_t rows = g.shared_receivers() ? std::size_t(g.n_shots ? g.shot_traces(0) : 0) : g.n_traces();
    std::vector<ReceiverComponent> components;
    for (std::size_t r = 0; r < rows; ++r) components.push_back(ReceiverComponent(g.components[r]));
    file->write_components(components);
  }
  for (int s = 0; s < g.n_shots; ++s) {
    const std::size_t begin = std::size_t(g.first_trace[std::size_t(s)]) * std::size_t(g.nt);
    const std::size_t end = std::size_t(g.first_trace[std::size_t(s) + 1]) * std::size_t(g.nt);
    std::vector<double> shot(g.traces.begin() + std::ptrdiff_t(begin), g.traces.begin() + std::ptrdiff_t(end));
    file->write_shot(s, shot);
  }
  file->commit();
  file.reset();
  {  // the time of sample 0 (TraceFile writes t0 = 0, a simulation's)
    h5::Handle f(H5Fopen(staged.c_str(), H5F_ACC_RDWR, H5P_DEFAULT));
    h5::Handle d(f ? H5Dopen2(f.id(), "/traces", H5P_DEFAULT) : H5I_INVALID_HID);
    if (!d) throw Error(ExitCode::output_error, fmt::format("cannot reopen {} to write its t0", staged));
    h5::write_attribute(d.id(), "t0", g.t0);
    d.close();
    if (H5Fflush(f.id(), H5F_SCOPE_GLOBAL) < 0)
      throw Error(ExitCode::output_error, fmt::format("cannot write {} (disk full?)", staged));
  }
  std::error_code ec;
  std::filesystem::rename(staged, path, ec);
  if (ec) throw Error(ExitCode::output_error, fmt::format("cannot rename {} to {}: {}", staged, path, ec.message()));
  cleanup.keep = true;
}

unsigned char ebcdic_of(char ascii) {
  // Code page 037 for ASCII 32..126.
  static constexpr unsigned char table[95] = {
      0x40, 0x5a, 0x7f, 0x7b, 0x5b, 0x6c, 0x50, 0x7d, 0x4d, 0x5d, 0x5c, 0x4e, 0x6b, 0x60, 0x4b, 0x61,  // ' ' .. '/'
      0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0x7a, 0x5e, 0x4c, 0x7e, 0x6e, 0x6f,  // '0' .. '?'
      0x7c, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6,  // '@' .. 'O'
      0xd7, 0xd8, 0xd9, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xba, 0xe0, 0xbb, 0xb0, 0x6d,  // 'P' .. '_'
      0x79, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96,  // '`' .. 'o'
      0x97, 0x98, 0x99, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xc0, 0x4f, 0xd0, 0xa1};       // 'p' .. '~'
  const auto c = static_cast<unsigned char>(ascii);
  return c >= 32 && c < 127 ? table[c - 32] : 0x40;
}

std::vector<std::string> write_segy(const std::string& path, const ShotGathers& g, const std::string& text,
                                    SegyText encoding) {
  check_output_path(path, "SEG-Y");
  std::vector<std::string> notes;
  // The sample interval: whole microseconds in the 16-bit fields (binary header 3217-3218, trace headers 117-118), the
  // exact value in the extended sample interval (3273-3280, microseconds as an IEEE double); read_segy's dt = us / 1e6
  // gives a whole number of microseconds back bit for bit.
  const double us = g.dt * 1e6;
  const long us_rounded = std::lround(us);
  if (std::abs(us - double(us_rounded)) > 1e-9 * us)
    notes.push_back(fmt::format(
        "dt = {:.6g} microseconds is not a whole number of them: the 16-bit sample intervals (binary header "
        "3217-3218, trace headers 117-118) hold {}; the exact value is in the extended sample interval (3273-3280), "
        "which SEG-Y rev 2 readers and specwave segy import use{}",
        us, us_rounded > 65535 ? 0L : us_rounded,
        us / 1e6 == g.dt ? "" : " (dt comes back to within one part in 1e16, not bit for bit)"));
  // A value beyond a 16-bit field is not clamped there (a rev 0/1 reader would then misread the file): the field
  // holds 0, "not given", and the value is in the rev 2 extended field, which overrides it.
  const std::uint16_t dt_us = us_rounded > 65535 ? 0 : std::uint16_t(std::max(us_rounded, 0L));
  if (us_rounded > 65535)
    notes.push_back(fmt::format(
        "dt = {} s ({} microseconds) does not fit the 16-bit sample intervals (binary header 3217-3218, trace headers "
        "117-118; at most 65535 microseconds): they hold 0, and dt is in the SEG-Y rev 2 extended sample interval "
        "(3273-3280) only, which rev 2 readers and specwave segy import use; for a rev 0/1 reader, resample the traces "
        "to at most 65.535 ms (output.trace_dt)",
        g.dt, us));
  const std::uint16_t nt16 = g.nt > 65535 ? 0 : std::uint16_t(g.nt);
  if (g.nt > 65535)
    notes.push_back(fmt::format(
        "{} samples per trace do not fit the 16-bit sample counts (binary header 3221-3222, trace headers 115-116; at "
        "most 65535): they hold 0, and the count is in the SEG-Y rev 2 extended samples per trace (3269-3272) only, "
        "which rev 2 readers and specwave segy import use; for a rev 0/1 reader, use at most 65535 samples (a coarser "
        "output.trace_dt, or a shorter time.duration)",
        g.nt));
  // The delay recording time (trace header bytes 109-110): t0 in whole milliseconds, signed 16 bits.
  const double t0_ms = g.t0 * 1000.0;
  const double t0_whole = std::round(t0_ms);
  if (!std::isfinite(t0_ms) || std::abs(t0_ms - t0_whole) > 1e-6 || std::abs(t0_whole) > 32767)
    throw Error(
        ExitCode::input_error,
        fmt::format("t0 = {} s (the time of sample 0) is not a whole number of milliseconds within +-32767 ms: "
                    "SEG-Y's delay recording time (trace header bytes 109-110) holds no other; shift the traces "
                    "to start at a whole millisecond (or at 0) and set t0 to it",
                    g.t0));
  const auto delay_ms = std::int16_t(t0_whole);

  const std::string temporary = fmt::format("{}.tmp-{}", path, ::getpid());
  ::close(create_fresh_file(temporary));  // ours, a regular file: never written through a planted symlink
  RemoveUnlessKept cleanup{{temporary}};  // an error anywhere below leaves nothing behind
  {
    std::ofstream out(temporary, std::ios::binary);
    if (!out) throw Error(ExitCode::output_error, fmt::format("cannot create {}; check the folder", temporary));
    // Textual header: 40 cards of 80 characters, "C 1 " ... with the caller's text, in EBCDIC unless asked for ASCII.
    std::string header(text_bytes, ' ');
    std::vector<std::string> lines;
    std::string line;
    for (char ch : text + "\n") {
      if (ch == '\n' || line.size() == 76) {
        lines.push_back(line);
        line.clear();
        if (ch == '\n') continue;
      }
      line += (ch >= 32 && ch < 127) ? ch : ' ';
    }
    lines.resize(40);
    lines[38] = "SEG-Y_REV2.0";
    lines[39] = "END TEXTUAL HEADER";
    for (int k = 0; k < 40; ++k) {
      const std::string card = fmt::format("C{:<2} {}", k + 1, lines[k]);
      std::copy_n(card.begin(), std::min<std::size_t>(80, card.size()), header.begin() + 80 * k);
    }
    if (encoding == SegyText::ebcdic)
      for (char& ch : header) ch = static_cast<char>(ebcdic_of(ch));
    out.write(header.data(), text_bytes);

    std::vector<unsigned char> bin(binary_bytes, 0);  // positions relative to the file: subtract 3200
    auto bput = [&](std::size_t file_position, auto value) { put(bin, file_position - text_bytes, value); };
    int most = 0;  // traces per ensemble: the largest shot's
    for (int s = 0; s < g.n_shots; ++s) most = std::max(most, g.shot_traces(s));
    bput(3213, std::int16_t(most > 32767 ? 0 : most));  // data traces per ensemble (0 beyond: 3261 holds it)
    bput(3217, dt_us);                                  // sample interval (microseconds; 0 beyond 65535)
    bput(3221, nt16);                                   // samples per trace (0 beyond 65535)
    bput(3225, std::int16_t(5));                        // IEEE float32
    bput(3227, std::int16_t(1));                        // ensemble fold
    bput(3229, std::int16_t(1));                        // sorted as recorded (shot gathers)
    bput(3255, std::int16_t(1));                        // measurement system: metres
    bput(3261, std::int32_t(most));                     // extended traces per ensemble
    bput(3269, std::int32_t(g.nt));                     // extended samples per trace
    bput(3273, us);                                     // extended sample interval (microseconds, IEEE double)
    bput(3297, byte_order_constant);
    bin[3501 - 1 - text_bytes] = 2;  // major revision 2
    bin[3502 - 1 - text_bytes] = 0;  // minor revision 0
    bput(3503, std::int16_t(1));     // fixed-length traces
    bput(3505, std::int16_t(0));     // no extended textual headers
    out.write(reinterpret_cast<const char*>(bin.data()), binary_bytes);

    std::vector<unsigned char> th(trace_header_bytes);
    std::vector<unsigned char> samples(std::size_t(g.nt) * 4);
    for (int s = 0; s < g.n_shots; ++s)
      for (int r = 0; r < g.shot_traces(s); ++r) {
        std::fill(th.begin(), th.end(), 0);
        const std::size_t trace = std::size_t(g.first_trace[std::size_t(s)] + r);
        const std::int32_t serial = std::int32_t(trace + 1);
        const Vec3& src = g.sources[s];
        const Vec3& rec = g.receivers[trace];
        put(th, 1, serial);                // trace sequence number within line
        put(th, 5, serial);                // ... within file
        put(th, 9, std::int32_t(s + 1));   // original field record number (shot)
        put(th, 13, std::int32_t(r + 1));  // trace number within the field record
        // trace identification: time-domain seismic data; with components, 11 pressure sensor, 12 vertical, 13
        // cross-line (y), 14 in-line (x) component of a multicomponent sensor
        put(th, 29, std::int16_t(g.components.empty() ? 1 : 11 + g.components[trace]));
        put(th, 35, std::int16_t(1));  // data use: production
        // offset: the horizontal source-receiver distance, whole metres (bytes 37-40 take no scalar)
        put(th, 37, std::int32_t(std::lround(std::hypot(rec[2] - src[2], rec[1] - src[1]))));
        put(th, 41, scaled(-rec[0]));    // receiver group elevation (up positive) = -z
        put(th, 45, std::int32_t(0));    // surface elevation at source
        put(th, 49, scaled(src[0]));     // source depth below surface = z
        put(th, 69, coordinate_scalar);  // scalar for elevations and depths
        put(th, 71, coordinate_scalar);  // scalar for coordinates
        put(th, 73, scaled(src[2]));     // source x
        put(th, 77, scaled(src[1]));     // source y
        put(th, 81, scaled(rec[2]));     // group x
        put(th, 85, scaled(rec[1]));     // group y
        put(th, 89, std::int16_t(1));    // coordinate units: length (metres)
        put(th, 109, delay_ms);          // delay recording time (ms): t0
        put(th, 115, nt16);
        put(th, 117, dt_us);
        out.write(reinterpret_cast<const char*>(th.data()), trace_header_bytes);
        const float* v = g.traces.data() + trace * std::size_t(g.nt);
        for (int n = 0; n < g.nt; ++n) {
          std::uint32_t bits;
          std::memcpy(&bits, &v[n], 4);
          for (int k = 0; k < 4; ++k) samples[4 * std::size_t(n) + k] = (unsigned char)(bits >> (8 * (3 - k)));
        }
        out.write(reinterpret_cast<const char*>(samples.data()), std::streamsize(samples.size()));
      }
    out.flush();
    if (!out) throw Error(ExitCode::output_error, fmt::format("cannot write {} (disk full?)", temporary));
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) throw Error(ExitCode::output_error, fmt::format("cannot rename {} to {}: {}", temporary, path, ec.message()));
  cleanup.keep = true;
  return notes;
}

namespace {

// Every trace of a SEG-Y file: its 240-byte header and its samples, in file order, after the checks of the binary
// header (byte order, sample format, a fixed sample count).
struct SegyTraces {
  bool little = false;
  int revision = 0;  // the major revision (binary header byte 3501): 0, 1 or 2
  int nt = 0;
  double dt_us = 0;                    // the sample interval field(s): microseconds (or the file's own unit)
  std::vector<unsigned char> headers;  // (traces, 240)
  std::vector<float> samples;          // (traces, nt)
  std::size_t count() const { return headers.size() / trace_header_bytes; }
  const unsigned char* header(std::size_t t) const { return headers.data() + t * trace_header_bytes; }
};

SegyTraces scan_segy(const std::string& path) {
  if (const auto kind = not_a_regular_file(path))
    bad_input(path, "is " + *kind + ", not a regular file; give a SEG-Y file");
  std::ifstream in(path, std::ios::binary);
  if (!in) bad_input(path, "file not found or unreadable; check the path");
  std::vector<unsigned char> head(text_bytes + binary_bytes);
  if (!in.read(reinterpret_cast<char*>(head.data()), std::streamsize(head.size())))
    bad_input(path, "shorter than the 3600-byte SEG-Y headers; is it a SEG-Y file?");
  const unsigned char* bin = head.data();
  SegyTraces f;
  // Byte order: the rev 2 constant when present, else big-endian (rev 0 and 1).
  bool little = false;
  if (get<std::int32_t>(bin, 3297, false) != byte_order_constant &&
      get<std::int32_t>(bin, 3297, true) == byte_order_constant)
    little = true;
  f.little = little;
  f.revision = bin[3501 - 1];
  const int format = get<std::int16_t>(bin, 3225, little);
  if (format != 5 && format != 1)
    bad_input(path, fmt::format("data sample format code {} (binary header bytes 3225-3226) is not supported; "
                                "convert to IEEE float (5) or IBM float (1)",
                                format));
  int nt = get<std::uint16_t>(bin, 3221, little);
  // The extended fields (3261-3280) are SEG-Y rev 2's: a rev 0 or 1 file may carry anything in that unassigned area.
  const bool rev2 = f.revision >= 2;
  const std::int32_t ext_nt = rev2 ? get<std::int32_t>(bin, 3269, little) : 0;
  if (ext_nt < 0)
    bad_input(path,
              fmt::format("extended samples per trace (binary header bytes 3269-3272) is {}; it must be >= 0", ext_nt));
  if (ext_nt > 0) nt = ext_nt;
  if (nt <= 0)
    bad_input(path, "0 samples per trace (binary header bytes 3221-3222 and 3269-3272); is it a SEG-Y file?");
  if (nt > 100'000'000)
    bad_input(path, fmt::format("{} samples per trace (binary header bytes 3269-3272) is more than 1e8; is the "
                                "header corrupt?",
                                nt));
  f.nt = nt;
  double dt_us = get<std::uint16_t>(bin, 3217, little);
  const double ext_dt = rev2 ? get<double>(bin, 3273, little) : 0.0;
  if (ext_dt != 0 && !(std::isfinite(ext_dt) && ext_dt > 0))
    bad_input(path, fmt::format("extended sample interval (binary header bytes 3273-3280) is {}; it must be a "
                                "positive number of microseconds, or 0 to use bytes 3217-3218",
                                ext_dt));
  if (ext_dt > 0) dt_us = ext_dt;
  f.dt_us = dt_us;
  const int extended_text = get<std::int16_t>(bin, 3505, little);
  if (extended_text < 0) bad_input(path, "a variable number of extended textual headers (-1) is not supported");
  in.seekg(std::streamoff(text_bytes + binary_bytes + 3200 * std::size_t(extended_text)));

  std::vector<unsigned char> th(trace_header_bytes), data;
  for (long long trace = 0;; ++trace) {
    if (!in.read(reinterpret_cast<char*>(th.data()), trace_header_bytes)) break;
    int n = get<std::uint16_t>(th.data(), 115, little);
    if (n == 0 || n == 65535) n = nt;  // rev 2 files with more samples keep the count in the binary header
    if (n != nt)
      bad_input(path, fmt::format("trace {} has {} samples (trace header bytes 115-116), the file {}; specwave reads "
                                  "fixed-length traces only",
                                  trace + 1, n, nt));
    f.headers.insert(f.headers.end(), th.begin(), th.end());
    data.resize(std::size_t(nt) * 4);
    if (!in.read(reinterpret_cast<char*>(data.data()), std::streamsize(data.size())))
      bad_input(path, fmt::format("trace {} is cut short (file truncated?)", trace + 1));
    for (int k = 0; k < nt; ++k) {
      const std::uint32_t bits = get<std::uint32_t>(data.data(), 1 + 4 * std::size_t(k), little);
      float v;
      if (format == 5)
        std::memcpy(&v, &bits, 4);
      else
        v = ibm_to_ieee(bits);
      f.samples.push_back(v);
    }
  }
  if (f.headers.empty()) bad_input(path, "no traces after the headers");
  return f;
}

// Trace `trace`'s (0-based) delay recording time in seconds: bytes 109-110 (ms, signed), times the time scalar of
// bytes 215-216 in a rev 1 or 2 file (rev 0 leaves those bytes unassigned).
double delay_of(const std::string& path, const SegyTraces& f, std::size_t trace) {
  const unsigned char* th = f.header(trace);
  const std::int16_t delay = get<std::int16_t>(th, 109, f.little);
  if (delay == 0) return 0.0;
  const std::int16_t scalar = f.revision >= 1 ? checked_scalar(path, th, 215, f.little, trace, "time") : 1;
  // One rounding: an integer numerator over an integer denominator (20 ms gives the double nearest 0.02 s).
  return double(delay) * double(scalar > 1 ? scalar : 1) / (1000.0 * double(scalar < -1 ? -scalar : 1));
}

// SEG-Y -> gathers; with `data`, the samples and t0 are checked (read_segy); without, the geometry is what is wanted.
ShotGathers segy_gathers(const std::string& path, bool data) {
  SegyTraces f = scan_segy(path);
  const bool little = f.little;
  const int nt = f.nt;
  const double dt_us = f.dt_us;
  ShotGathers g;
  if (data) {
    // The inversion cannot fit NaN or infinite samples (IBM floats beyond float32's range become infinite).
    for (std::size_t k = 0; k < f.samples.size(); ++k)
      if (!std::isfinite(f.samples[k]))
        bad_input(path, fmt::format("trace {}, sample {} (of {}) is {}; specwave cannot use NaN or infinite samples: "
                                    "mute, interpolate or drop them before importing",
                                    k / std::size_t(nt) + 1, k % std::size_t(nt) + 1, nt, f.samples[k]));
    // The time of sample 0: one for all traces.
    g.t0 = delay_of(path, f, 0);
    for (std::size_t t = 1; t < f.count(); ++t)
      if (const double t0 = delay_of(path, f, t); t0 != g.t0)
        bad_input(path, fmt::format("trace {} starts at {} s, trace 1 at {} s (delay recording time, trace header "
                                    "bytes 109-110, scaled by 215-216): specwave's traces share one time of sample 0; "
                                    "shift the traces to a common start time before importing",
                                    t + 1, t0, g.t0));
  }
  g.traces = std::move(f.samples);
  std::vector<std::int32_t> record_of;
  std::vector<Vec3> receiver_of, source_of;
  for (std::size_t t = 0; t < f.count(); ++t) {
    const unsigned char* th = f.header(t);
    const std::int16_t sc = checked_scalar(path, th, 71, little, t, "coordinate"),
                       se = checked_scalar(path, th, 69, little, t, "elevation");
    record_of.push_back(get<std::int32_t>(th, 9, little));
    const std::int16_t id = get<std::int16_t>(th, 29, little);  // 12, 13, 14: vz, vy, vx (multicomponent sensor)
    g.components.push_back(id >= 12 && id <= 14 ? id - 11 : 0);
    receiver_of.push_back({-unscaled(get<std::int32_t>(th, 41, little), se),
                           unscaled(get<std::int32_t>(th, 85, little), sc),
                           unscaled(get<std::int32_t>(th, 81, little), sc)});
    source_of.push_back(
        {unscaled(get<std::int32_t>(th, 49, little), se) - unscaled(get<std::int32_t>(th, 45, little), se),
         unscaled(get<std::int32_t>(th, 77, little), sc), unscaled(get<std::int32_t>(th, 73, little), sc)});
  }
  // Shots in order of first appearance of their field record number; traces of a shot must be contiguous.
  std::vector<std::size_t> first_of_shot;
  for (std::size_t t = 0; t < record_of.size(); ++t)
    if (t == 0 || record_of[t] != record_of[t - 1]) first_of_shot.push_back(t);
  g.n_shots = int(first_of_shot.size());
  g.nt = nt;
  g.dt = dt_us / 1e6;  // the nearest double to a whole number of microseconds (* 1e-6 is not: 100000 -> 0.0999...)
  if (!(g.dt > 0)) bad_input(path, "sample interval is 0 (binary header bytes 3217-3218 and 3273-3280)");
  std::unordered_map<std::int32_t, int> shot_of_record;
  for (int s = 0; s < g.n_shots; ++s) {
    const std::size_t first = first_of_shot[std::size_t(s)];
    if (const auto [at, fresh] = shot_of_record.emplace(record_of[first], s); !fresh)
      bad_input(path, fmt::format("trace {} returns to field record {} (shot {}) after other records: a shot's "
                                  "traces must be contiguous (sort the file by field record, bytes 9-12)",
                                  first + 1, record_of[first], at->second + 1));
    g.first_trace.push_back(std::int64_t(first));
    g.sources.push_back(source_of[first]);
  }
  g.first_trace.push_back(std::int64_t(record_of.size()));
  g.receivers = std::move(receiver_of);
  if (std::all_of(g.components.begin(), g.components.end(), [](std::int32_t k) { return k == 0; }))
    g.components.clear();
  return g;
}

}  // namespace

ShotGathers read_segy(const std::string& path) { return segy_gathers(path, true); }

SegyVolume read_segy_volume(const std::string& path) {
  const SegyTraces f = scan_segy(path);
  const std::size_t n = f.count();
  // Each trace's (y, x): the CDP coordinates (bytes 185-188 and 181-184), scaled by bytes 71-72.
  std::vector<double> xs(n), ys(n);
  for (std::size_t t = 0; t < n; ++t) {
    const unsigned char* th = f.header(t);
    const std::int16_t sc = checked_scalar(path, th, 71, f.little, t, "coordinate");
    xs[t] = unscaled(get<std::int32_t>(th, 181, f.little), sc);
    ys[t] = unscaled(get<std::int32_t>(th, 185, f.little), sc);
  }
  // The distinct coordinates along one axis, which must be evenly spaced (to 1e-3 of the spacing).
  const auto axis = [&](const std::vector<double>& c, const char* name, const char* bytes, double& origin,
                        double& spacing) {
    std::vector<double> u = c;
    std::sort(u.begin(), u.end());
    const double span = u.back() - u.front();
    u.erase(std::unique(u.begin(), u.end(), [&](double a, double b) { return b - a <= 1e-6 * std::max(span, 1.0); }),
            u.end());
    origin = u.front();
    spacing = u.size() > 1 ? span / double(u.size() - 1) : 1.0;
    for (std::size_t k = 1; k < u.size(); ++k)
      if (std::abs(u[k] - u[k - 1] - spacing) > 1e-3 * spacing)
        bad_input(path, fmt::format("the traces' CDP {} coordinates (trace header bytes {}, scaled by 71-72) are not "
                                    "evenly spaced: {} then {} m, where the mean spacing is {} m; a velocity cube "
                                    "must be a regular grid whose axes are x and y (rotate or regrid it first)",
                                    name, bytes, u[k - 1], u[k], spacing));
    return u.size();
  };
  SegyVolume v;
  const std::size_t nx = axis(xs, "x", "181-184", v.origin_x, v.spacing_x);
  const std::size_t ny = axis(ys, "y", "185-188", v.origin_y, v.spacing_y);
  if (nx * ny != n)
    bad_input(path, fmt::format("{} traces at {} distinct CDP x and {} distinct CDP y coordinates (trace header bytes "
                                "181-188): a velocity cube needs one trace at every point of the (y, x) grid, {} "
                                "traces{}",
                                n, nx, ny, nx * ny,
                                nx * ny == 1 ? "; every trace has the same CDP coordinates: are they filled in?" : ""));
  v.shape = {std::int64_t(f.nt), std::int64_t(ny), std::int64_t(nx)};
  v.values.assign(std::size_t(f.nt) * ny * nx, 0.0f);
  std::vector<char> seen(ny * nx, 0);
  for (std::size_t t = 0; t < n; ++t) {
    const std::size_t ix = nx > 1 ? std::size_t(std::lround((xs[t] - v.origin_x) / v.spacing_x)) : 0;
    const std::size_t iy = ny > 1 ? std::size_t(std::lround((ys[t] - v.origin_y) / v.spacing_y)) : 0;
    if (seen[iy * nx + ix]++)
      bad_input(path, fmt::format("trace {} repeats the CDP position (x {}, y {}) m of an earlier trace (trace header "
                                  "bytes 181-188): a velocity cube has one trace per (y, x) point",
                                  t + 1, xs[t], ys[t]));
    for (int k = 0; k < f.nt; ++k)
      v.values[(std::size_t(k) * ny + iy) * nx + ix] = f.samples[t * std::size_t(f.nt) + k];
  }
  return v;
}

}  // namespace specwave::io
