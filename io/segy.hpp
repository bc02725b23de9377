#pragma once
// Shot gathers in SEG-Y revision 2.0 (SEG Technical Standards Committee, 2017) and in specwave's traces.h5
// (docs/hdf5-schema.md): export, import and the conversion between them (docs/segy.md).
//
// What is written: a 3200-byte textual header (ASCII, 40 card images), the 400-byte binary header (big-endian;
// revision 2.0 in bytes 3501-3502, fixed-length traces, the byte-order constant 16909060, the exact sample
// interval as an IEEE double), then per trace a 240-byte header and nt IEEE 754 float32 samples (format code 5).
// Trace headers carry the shot (field record number, bytes 9-12), the trace number in the shot (13-16), the
// source and receiver coordinates (x: 73-76 / 81-84, y: 77-80 / 85-88, scaled by bytes 71-72), receiver
// elevation -z (41-44) and source depth z (49-52, scaled by bytes 69-70), the delay recording time t0 (109-110,
// ms), the sample count and interval.
// Coordinates are stored in millimetres (scalar -1000). Reading accepts both byte orders (by the byte-order
// constant), IEEE (5) and IBM (1) floats, and the fixed or extended sample count and interval.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "solver/case/case.hpp"

namespace specwave::io {

// What traces.h5 holds, in either of its layouts (docs/hdf5-schema.md): shots that share their receivers, or shots with
// their own (ragged). Shot s's traces are rows first_trace[s] .. first_trace[s + 1] - 1.
struct ShotGathers {
  int n_shots = 0, nt = 0;
  double dt = 0;                          // s
  double t0 = 0;                          // s: the time of sample 0 (traces.h5's t0; SEG-Y's delay recording time)
  std::vector<std::int64_t> first_trace;  // n_shots + 1 row offsets
  std::vector<float> traces;              // (n_traces, nt), C order, shot by shot
  std::vector<Vec3> receivers;            // one per trace: (z, y, x) m, z down
  std::vector<Vec3> sources;              // one per shot: its (first) source, (z, y, x) m
  // one per trace: what it records (traces.h5's /receiver_component: 0 p, 1 vz, 2 vy, 3 vx); empty: all pressure
  std::vector<std::int32_t> components;

  std::size_t n_traces() const { return receivers.size(); }
  int shot_traces(int s) const { return int(first_trace[std::size_t(s) + 1] - first_trace[std::size_t(s)]); }
  // Every shot records the same receivers (count, and coordinates within 1 mm): traces.h5's (shot, receiver, sample)
  // layout then.
  bool shared_receivers() const;
  // "3 shots x 48 receivers" or "3 shots, 140 traces (40 to 52 a shot)", for messages.
  std::string describe() const;
};
// Gathers of n_shots shots that all record `receivers` (traces: (n_shots, receivers, nt)).
ShotGathers shared_gathers(int n_shots, const std::vector<Vec3>& receivers, int nt, double dt,
                           std::vector<float> traces, std::vector<Vec3> sources);

// traces.h5 (file_type "specwave.traces") -> gathers; errors name the file and dataset. Without `samples`, the
// geometry alone (traces left empty). t0: the /traces attribute (0 when absent; a non-finite one is refused).
ShotGathers read_trace_file(const std::string& path, bool samples = true);
// The acquisition geometry of a survey (gathers without their samples): from a traces.h5 (either layout) or a SEG-Y
// file (told apart by the HDF5 signature). A SEG-Y file whose trace headers hold no coordinates (every source and
// group x, y and elevation 0) is refused (exit 4) naming the file and the header bytes.
ShotGathers read_acquisition(const std::string& path);
// gathers -> traces.h5 (atomic, nothing left behind on failure; float32 traces; /traces attribute t0 = gathers.t0).
// An empty path is refused (exit 2) before anything is written.
void write_trace_file(const std::string& path, const ShotGathers& gathers, const std::string& created_from);

// gathers -> SEG-Y rev 2 (atomic: temporary name, then rename; nothing left behind on failure). `text` goes into the
// textual header (cut to fit). The textual header in EBCDIC (code page 037: what segyio and most readers assume), or
// in ASCII when asked. Returns notes for the user ("dt = ... is not a whole number of them", a sample count or
// interval beyond the 16-bit fields: those hold 0 and the value is in the rev 2 extended fields only). Refused before
// anything is written: an empty path (exit 2), a t0 that is not a whole number of milliseconds within +-32767 (the
// delay recording time, bytes 109-110; exit 4).
enum class SegyText { ebcdic, ascii };
std::vector<std::string> write_segy(const std::string& path, const ShotGathers& gathers, const std::string& text,
                                    SegyText encoding = SegyText::ebcdic);
// The EBCDIC (code page 037) byte of a printable ASCII character (32-126); others become a space (0x40).
unsigned char ebcdic_of(char ascii);
// SEG-Y -> gathers. Traces are grouped by field record number, in file order (a shot's traces contiguous), each shot
// with its own receivers; every trace has the same sample count and interval (errors name the trace). dt = the
// interval in microseconds / 1e6 (an integer count gives the nearest double). t0 = the delay recording time (bytes
// 109-110, ms, times the rev 1+ time scalar of bytes 215-216), the same for every trace. Refused (exit 4, naming the
// trace): a NaN or infinite sample, delays that differ between traces, a coordinate or elevation scalar (bytes 71-72,
// 69-70) or time scalar other than +-1, 10, 100, 1000, 10000 (0 meaning 1).
ShotGathers read_segy(const std::string& path);

// A velocity cube in SEG-Y (a model file, docs/case-file.md): one trace per (y, x) point of a regular grid whose axes
// are x and y, at the trace's CDP coordinates (bytes 181-184 x, 185-188 y, scaled by bytes 71-72); samples down in
// z. The sample interval field is a time, so the depth spacing comes from the case file, not from here.
struct SegyVolume {
  std::array<std::int64_t, 3> shape{};                              // (nz = samples per trace, ny, nx)
  double origin_y = 0, origin_x = 0, spacing_y = 1, spacing_x = 1;  // m; spacing 1 along an axis of one point
  std::vector<float> values;                                        // (nz, ny, nx), C order
};
// Errors (exit 4) name the file and the header bytes: coordinates not evenly spaced, a missing or repeated (y, x)
// point, and every check of read_segy's headers.
SegyVolume read_segy_volume(const std::string& path);
// IBM System/360 single precision (SEG-Y format code 1) to IEEE.
float ibm_to_ieee(std::uint32_t ibm);

}  // namespace specwave::io
