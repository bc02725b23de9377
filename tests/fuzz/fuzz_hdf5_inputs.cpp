// libFuzzer target: specwave's HDF5 input readers (traces.h5 for `segy export` and inversion.observed, model.file,
// a source's wavelet file) on well-formed HDF5 files of fuzzed content: the fuzz input chooses the reader, the
// datasets' names, ranks, shapes (0 included), element types (float, double, int32, int64, uint8, strings) and
// values (NaN, Inf), and the attributes (dt missing, empty, several values, a string). HDF5's own file parser is not
// the target (its malformed-file bugs are the library's): the readers' checks of emptiness, rank, shape, dtype and
// attributes are. A reader may refuse (specwave::Error); what it accepts must be sane, or it is a finding.
#include <fuzzer/FuzzedDataProvider.h>
#include <hdf5.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "io/segy.hpp"
#include "solver/case/case.hpp"
#include "solver/plan/model.hpp"
#include "solver/plan/wavelet.hpp"

namespace {

using specwave::fuzz::refusal_allowed;

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_hdf5_inputs: accepted input violates: %s\n", what);
    std::abort();
  }
}

// One dataset of fuzzed rank, shape, type and values (bit patterns: NaN and Inf included), with a fuzzed `dt`.
void fuzzed_dataset(FuzzedDataProvider& in, hid_t file, const std::string& name) {
  const int rank = in.ConsumeIntegralInRange(0, 4);
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  std::size_t count = 1;
  for (auto& d : dims) count *= (d = in.ConsumeIntegralInRange<hsize_t>(0, 6));
  const int kind = in.ConsumeIntegralInRange(0, 5);
  const hid_t space = rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, dims.data(), nullptr);
  hid_t type = kind == 0   ? H5Tcopy(H5T_IEEE_F32LE)
               : kind == 1 ? H5Tcopy(H5T_IEEE_F64LE)
               : kind == 2 ? H5Tcopy(H5T_STD_I32LE)
               : kind == 3 ? H5Tcopy(H5T_STD_I64LE)
               : kind == 4 ? H5Tcopy(H5T_STD_U8LE)
                           : H5Tcopy(H5T_C_S1);
  if (kind == 5) H5Tset_size(type, 4);
  const std::size_t bytes = H5Tget_size(type) * (rank == 0 ? 1 : count);
  std::vector<std::uint8_t> values = in.ConsumeBytes<std::uint8_t>(bytes);
  values.resize(bytes, 0);
  const hid_t dset = H5Dcreate2(file, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (dset >= 0) {
    if (bytes > 0) H5Dwrite(dset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
    const int dt_kind = in.ConsumeIntegralInRange(0, 3);  // none, numbers, empty, string
    if (dt_kind == 1) {
      const hsize_t n = in.ConsumeIntegralInRange<hsize_t>(1, 3);
      std::vector<double> dt(n);
      for (auto& v : dt) {
        const std::uint64_t bits = in.ConsumeIntegral<std::uint64_t>();
        std::memcpy(&v, &bits, 8);
        if (in.ConsumeBool()) v = in.ConsumeFloatingPointInRange(-1.0, 1.0);
      }
      const hid_t s = H5Screate_simple(1, &n, nullptr);
      const hid_t a = H5Acreate2(dset, "dt", H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT);
      H5Awrite(a, H5T_NATIVE_DOUBLE, dt.data());
      H5Aclose(a), H5Sclose(s);
    } else if (dt_kind == 2) {
      const hid_t s = H5Screate(H5S_NULL);
      const hid_t a = H5Acreate2(dset, "dt", H5T_IEEE_F64LE, s, H5P_DEFAULT, H5P_DEFAULT);
      H5Aclose(a), H5Sclose(s);
    } else if (dt_kind == 3) {
      const hid_t s = H5Screate(H5S_SCALAR);
      const hid_t t = H5Tcopy(H5T_C_S1);
      H5Tset_size(t, 3);
      const hid_t a = H5Acreate2(dset, "dt", t, s, H5P_DEFAULT, H5P_DEFAULT);
      H5Awrite(a, t, "abc");
      H5Aclose(a), H5Tclose(t), H5Sclose(s);
    }
    H5Dclose(dset);
  }
  H5Tclose(type);
  H5Sclose(space);
}

std::string fuzzed_name(FuzzedDataProvider& in, const char* usual) {
  return in.ConsumeIntegralInRange(0, 9) > 0 ? std::string(usual) : "/" + in.ConsumeRandomLengthString(6) + "x";
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = specwave::fuzz::scratch_path(".h5");
  FuzzedDataProvider in(data, size);
  const int reader = in.ConsumeIntegralInRange(0, 2);
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) return 0;
  if (reader == 0) {  // traces.h5
    fuzzed_dataset(in, file, fuzzed_name(in, "/traces"));
    fuzzed_dataset(in, file, fuzzed_name(in, "/receiver_coordinates"));
    fuzzed_dataset(in, file, fuzzed_name(in, "/source_coordinates"));
    fuzzed_dataset(in, file, fuzzed_name(in, "/source_shot"));
  } else {
    fuzzed_dataset(in, file, fuzzed_name(in, reader == 1 ? "/velocity" : "/wavelet"));
  }
  H5Fclose(file);
  if (reader == 0) {
    refusal_allowed([&] {
      const auto g = specwave::io::read_trace_file(path);
      check(g.n_shots >= 1 && g.n_traces() >= 1 && g.nt >= 1, "traces: at least one shot, trace and sample");
      check(std::isfinite(g.dt) && g.dt > 0, "traces: a finite positive dt");
      check(g.traces.size() == g.n_traces() * std::size_t(g.nt), "traces: the shape read");
      check(g.first_trace.size() == std::size_t(g.n_shots) + 1 && g.first_trace.front() == 0 &&
                std::size_t(g.first_trace.back()) == g.n_traces() && g.sources.size() == std::size_t(g.n_shots),
            "traces: the shots' rows, one coordinate per trace and per shot");
    });
  } else if (reader == 1) {
    specwave::Case c;
    c.grid.shape = {in.ConsumeIntegralInRange(1, 6), in.ConsumeIntegralInRange(1, 6), in.ConsumeIntegralInRange(1, 6)};
    c.grid.spacing = {10, 10, 10};
    c.model.kind = specwave::ModelSpec::Kind::file;
    c.model.file = path;
    refusal_allowed([&] {
      const auto m = specwave::build_velocity_model(c);
      check(m.velocity.size() == std::size_t(c.grid.points()), "model: one velocity per grid point");
      for (float v : m.velocity) check(std::isfinite(v) && v > 0, "model: finite positive velocities");
      check(m.v_min > 0 && m.v_min <= m.v_max, "model: v_min <= v_max");
    });
  } else {
    specwave::WaveletSpec w;
    w.kind = specwave::WaveletSpec::Kind::file;
    w.file = path;
    refusal_allowed([&] {
      const auto samples = specwave::sample_wavelet(w, 0.001, 20);
      check(samples.size() == 20, "wavelet: nt samples");
      for (double v : samples) check(std::isfinite(v), "wavelet: finite samples");
      const double length = specwave::wavelet_length(w);
      check(std::isfinite(length) && length >= 0, "wavelet: a finite length");
    });
  }
  return 0;
}
