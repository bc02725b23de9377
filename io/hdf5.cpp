#include "io/hdf5.hpp"
#include "io/checksum.hpp"
#include "io/file_kind.hpp"

#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <type_traits>

#if defined(SPECWAVE_HAVE_MPI)
#include <mpi.h>
#endif

#include <fmt/format.h>

#include "solver/case/errors.hpp"
#include "specwave/build_info.hpp"

namespace specwave::io::h5 {
namespace {

// Why the system refused a write, from errno as HDF5's file driver left it: a full disk or quota is said plainly.
std::string system_reason(int err) {
  if (err == ENOSPC || err == EDQUOT)
    return fmt::format(" ({}: the disk or quota is full; free space or choose another output.directory)",
                       std::strerror(err));
  if (err == EFBIG) return fmt::format(" ({}: the file size limit was reached)", std::strerror(err));
  if (err == EIO || err == EROFS || err == EACCES) return fmt::format(" ({})", std::strerror(err));
  return "";
}

// Set when a write failed or a file was abandoned: HDF5 may then hold a file it cannot close (a flush to a full
// disk fails again), and closing the library would crash in it; shutdown() leaves it to the operating system.
std::atomic<bool> g_write_failed{false};
// Parallel (MPI-IO) files open for writing. After a failed write, closing an object of such a file is collective
// and would wait forever for the ranks that did not fail: the failing rank leaks it and goes on to MPI_Abort.
std::atomic<int> g_parallel_writers{0};

[[noreturn]] void fail_write(const std::string& what) {
  const int err = errno;
  g_write_failed = true;
  throw Error(ExitCode::output_error, "HDF5: " + what + system_reason(err));
}

// The same, naming the file that `object` belongs to. Without an errno (MPI-IO does not always leave one), a file
// system with almost no space left is named as the likely reason.
[[noreturn]] void fail_write_in(hid_t object, const std::string& what) {
  const int err = errno;
  g_write_failed = true;
  std::string file(1024, '\0');
  const ssize_t n = H5Fget_name(object, file.data(), file.size());
  file.resize(n > 0 ? std::min<std::size_t>(std::size_t(n), file.size() - 1) : 0);
  std::string reason = system_reason(err);
  struct statvfs fs {};
  const std::string folder = std::filesystem::path(file).parent_path().string();
  if (reason.empty() && !file.empty() && ::statvfs(folder.empty() ? "." : folder.c_str(), &fs) == 0 &&
      double(fs.f_bavail) * double(fs.f_frsize) < 16.0 * 1024 * 1024)
    reason = fmt::format(
        " (No space left on device: the disk or quota is full, {:.0f} KiB free; free space or "
        "choose another output.directory)",
        double(fs.f_bavail) * double(fs.f_frsize) / 1024);
  throw Error(ExitCode::output_error, (file.empty() ? std::string("HDF5") : file) + ": " + what + reason);
}

}  // namespace

void fail_write_at(hid_t object, const std::string& what) { fail_write_in(object, what); }

namespace {

Handle attribute_space(std::size_t n) {
  const hsize_t dims[1] = {n};
  return Handle(n == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, dims, nullptr));
}

void replace_attribute(hid_t object, const std::string& name) {
  if (H5Aexists(object, name.c_str()) > 0) H5Adelete(object, name.c_str());
}

}  // namespace

Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    close();
    id_ = o.id_;
    o.id_ = H5I_INVALID_HID;
  }
  return *this;
}

void Handle::close() {
  if (id_ < 0) return;
  const H5I_type_t type = H5Iget_type(id_);
  const bool in_file = type == H5I_FILE || type == H5I_GROUP || type == H5I_DATASET || type == H5I_ATTR;
  if (in_file && g_write_failed && g_parallel_writers > 0) {  // see g_parallel_writers
    id_ = H5I_INVALID_HID;
    return;
  }
  switch (type) {
    case H5I_FILE: H5Fclose(id_); break;
    case H5I_GROUP: H5Gclose(id_); break;
    case H5I_DATASET: H5Dclose(id_); break;
    case H5I_DATASPACE: H5Sclose(id_); break;
    case H5I_DATATYPE: H5Tclose(id_); break;
    case H5I_ATTR: H5Aclose(id_); break;
    case H5I_GENPROP_LST: H5Pclose(id_); break;
    default: break;
  }
  id_ = H5I_INVALID_HID;
}

template <>
hid_t native_type<float>() {
  return H5T_NATIVE_FLOAT;
}
template <>
hid_t native_type<double>() {
  return H5T_NATIVE_DOUBLE;
}
template <>
hid_t native_type<std::int32_t>() {
  return H5T_NATIVE_INT32;
}
template <>
hid_t native_type<std::int64_t>() {
  return H5T_NATIVE_INT64;
}

void silence_library_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

void write_attribute(hid_t object, const std::string& name, const std::string& value) {
  replace_attribute(object, name);
  Handle type(H5Tcopy(H5T_C_S1));
  H5Tset_size(type.id(), value.empty() ? 1 : value.size());
  H5Tset_cset(type.id(), H5T_CSET_UTF8);
  Handle space = attribute_space(0);
  Handle attr(H5Acreate2(object, name.c_str(), type.id(), space.id(), H5P_DEFAULT, H5P_DEFAULT));
  if (!attr || H5Awrite(attr.id(), type.id(), value.empty() ? "" : value.data()) < 0)
    fail_write("cannot write attribute '" + name + "'");
}

void write_attribute(hid_t object, const std::string& name, double value) {
  write_attribute(object, name, std::span<const double>(&value, 1));
}

void write_attribute(hid_t object, const std::string& name, std::int64_t value) {
  replace_attribute(object, name);
  Handle space = attribute_space(0);
  Handle attr(H5Acreate2(object, name.c_str(), H5T_STD_I64LE, space.id(), H5P_DEFAULT, H5P_DEFAULT));
  if (!attr || H5Awrite(attr.id(), H5T_NATIVE_INT64, &value) < 0) fail_write("cannot write attribute '" + name + "'");
}

void write_attribute(hid_t object, const std::string& name, std::span<const double> values) {
  replace_attribute(object, name);
  Handle space = attribute_space(values.size() == 1 ? 0 : values.size());
  Handle attr(H5Acreate2(object, name.c_str(), H5T_IEEE_F64LE, space.id(), H5P_DEFAULT, H5P_DEFAULT));
  if (!attr || H5Awrite(attr.id(), H5T_NATIVE_DOUBLE, values.data()) < 0)
    fail_write("cannot write attribute '" + name + "'");
}

bool has_attribute(hid_t object, const std::string& name) { return H5Aexists(object, name.c_str()) > 0; }

// "<file>: '<object>'" for messages: the file and the dataset or group an attribute belongs to.
std::string object_where(hid_t object) {
  std::string file(1024, '\0'), path(1024, '\0');
  const ssize_t nf = H5Fget_name(object, file.data(), file.size());
  const ssize_t np = H5Iget_name(object, path.data(), path.size());
  file.resize(nf > 0 ? std::min<std::size_t>(std::size_t(nf), file.size() - 1) : 0);
  path.resize(np > 0 ? std::min<std::size_t>(std::size_t(np), path.size() - 1) : 0);
  return (file.empty() ? std::string("HDF5") : file) + ": '" + (path.empty() ? std::string("/") : path) + "'";
}

std::vector<double> read_attribute_doubles(hid_t object, const std::string& name) {
  const std::string where = object_where(object);
  Handle attr(H5Aopen(object, name.c_str(), H5P_DEFAULT));
  if (!attr) throw Error(ExitCode::input_error, where + ": attribute '" + name + "' is missing; add it");
  Handle type(H5Aget_type(attr.id()));
  const H5T_class_t cls = H5Tget_class(type.id());
  if (cls != H5T_INTEGER && cls != H5T_FLOAT)
    throw Error(ExitCode::input_error,
                where + ": attribute '" + name + "' is not numeric (" +
                    (cls == H5T_STRING ? "a string" : "HDF5 type class " + std::to_string(int(cls))) +
                    "); write it as a number, e.g. in h5py attrs['" + name + "'] = 0.001");
  Handle space(H5Aget_space(attr.id()));
  const hssize_t n = H5Sget_simple_extent_npoints(space.id());
  if (n <= 0) throw Error(ExitCode::input_error, where + ": attribute '" + name + "' is empty; give it a value");
  std::vector<double> values(static_cast<std::size_t>(n));
  if (H5Aread(attr.id(), H5T_NATIVE_DOUBLE, values.data()) < 0)
    throw Error(ExitCode::input_error, where + ": attribute '" + name + "' cannot be read as a number");
  return values;
}

void write_checksum(hid_t dataset, const void* data, std::size_t bytes) {
  write_attribute(dataset, "checksum64", checksum_hex(checksum64(data, bytes)));
}

void verify_checksum(hid_t dataset, const void* data, std::size_t bytes, const std::string& path,
                     const std::string& what) {
  if (!has_attribute(dataset, "checksum64"))
    throw Error(ExitCode::input_error, path + ": " + what +
                                           " has no checksum (written by an older specwave, or not by specwave); "
                                           "start again without --resume");
  const std::string stored = read_attribute_string(dataset, "checksum64");
  const std::string computed = checksum_hex(checksum64(data, bytes));
  if (stored != computed)
    throw Error(ExitCode::input_error,
                path + ": " + what + " fails its checksum (stored " + stored + ", computed " + computed +
                    "): the file is corrupt (a disk or transfer error); start again without --resume, or resume "
                    "from an intact copy of the folder");
}

std::string read_attribute_string(hid_t object, const std::string& name) {
  Handle attr(H5Aopen(object, name.c_str(), H5P_DEFAULT));
  if (!attr) throw Error(ExitCode::input_error, "HDF5: attribute '" + name + "' is missing");
  Handle type(H5Aget_type(attr.id()));
  if (H5Tget_class(type.id()) != H5T_STRING)
    throw Error(ExitCode::input_error, "HDF5: attribute '" + name + "' is not a string");
  if (H5Tis_variable_str(type.id()) > 0) {
    char* text = nullptr;
    Handle mem(H5Tcopy(H5T_C_S1));
    H5Tset_size(mem.id(), H5T_VARIABLE);
    H5Aread(attr.id(), mem.id(), &text);
    std::string out = text ? text : "";
    H5free_memory(text);
    return out;
  }
  std::string out(H5Tget_size(type.id()), '\0');
  H5Aread(attr.id(), type.id(), out.data());
  while (!out.empty() && out.back() == '\0') out.pop_back();
  return out;
}

Handle create_group(hid_t parent, const std::string& name) {
  Handle g(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!g) fail_write("cannot create group '" + name + "'");
  return g;
}

template <class T>
Handle write_dataset(hid_t parent, const std::string& name, const std::vector<hsize_t>& dims, const T* data,
                     const std::string& units) {
  Handle space(H5Screate_simple(int(dims.size()), dims.data(), nullptr));
  const hid_t file_type = std::is_same_v<T, float>          ? H5T_IEEE_F32LE
                          : std::is_same_v<T, double>       ? H5T_IEEE_F64LE
                          : std::is_same_v<T, std::int32_t> ? H5T_STD_I32LE
                                                            : H5T_STD_I64LE;
  // Storage allocated now: later writes change no metadata, so a file flushed after its datasets were made
  // stays readable even when the writer is killed mid-write (a resumable output, AtomicWriter).
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE));
  H5Pset_alloc_time(dcpl.id(), H5D_ALLOC_TIME_EARLY);
  H5Pset_fill_time(dcpl.id(), H5D_FILL_TIME_NEVER);  // every element is written before the file is committed
  Handle dset(H5Dcreate2(parent, name.c_str(), file_type, space.id(), H5P_DEFAULT, dcpl.id(), H5P_DEFAULT));
  if (!dset) fail_write("cannot create dataset '" + name + "'");
  if (data && H5Dwrite(dset.id(), native_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    fail_write("cannot write dataset '" + name + "'");
  if (!units.empty()) write_attribute(dset.id(), "units", units);
  return dset;
}

Handle write_string_dataset(hid_t parent, const std::string& name, const std::vector<std::string>& values) {
  Handle type(H5Tcopy(H5T_C_S1));
  H5Tset_size(type.id(), H5T_VARIABLE);
  H5Tset_cset(type.id(), H5T_CSET_UTF8);
  const hsize_t n = values.size();
  Handle space(H5Screate_simple(1, &n, nullptr));
  Handle dset(H5Dcreate2(parent, name.c_str(), type.id(), space.id(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!dset) fail_write("cannot create dataset '" + name + "'");
  std::vector<const char*> pointers;
  for (const auto& v : values) pointers.push_back(v.c_str());
  if (n > 0 && H5Dwrite(dset.id(), type.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()) < 0)
    fail_write("cannot write dataset '" + name + "'");
  return dset;
}

template <class T>
void write_first_dim_slab(hid_t dataset, hsize_t index, const T* data) {
  Handle space(H5Dget_space(dataset));
  const int rank = H5Sget_simple_extent_ndims(space.id());
  std::vector<hsize_t> dims(rank), start(rank, 0), count(rank);
  H5Sget_simple_extent_dims(space.id(), dims.data(), nullptr);
  count = dims;
  count[0] = 1;
  start[0] = index;
  H5Sselect_hyperslab(space.id(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
  Handle memspace(H5Screate_simple(rank, count.data(), nullptr));
  errno = 0;
  if (H5Dwrite(dataset, native_type<T>(), memspace.id(), space.id(), H5P_DEFAULT, data) < 0)
    fail_write_in(dataset, "cannot write slab " + std::to_string(index));
}

template <class T>
void write_hyperslab(hid_t dataset, const std::vector<hsize_t>& start, const std::vector<hsize_t>& count, const T* data,
                     bool collective) {
  Handle space(H5Dget_space(dataset));
  const int rank = H5Sget_simple_extent_ndims(space.id());
  if (rank != int(start.size()) || rank != int(count.size())) fail_write("hyperslab rank does not match the dataset");
  bool empty = data == nullptr;
  for (auto c : count) empty = empty || c == 0;
  Handle memspace;
  if (empty) {
    H5Sselect_none(space.id());
    const hsize_t one = 1;
    memspace = Handle(H5Screate_simple(1, &one, nullptr));
    H5Sselect_none(memspace.id());
  } else {
    H5Sselect_hyperslab(space.id(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
    memspace = Handle(H5Screate_simple(rank, count.data(), nullptr));
  }
  Handle xfer(H5Pcreate(H5P_DATASET_XFER));
#if defined(H5_HAVE_PARALLEL)
  if (collective) H5Pset_dxpl_mpio(xfer.id(), H5FD_MPIO_COLLECTIVE);
#else
  if (collective) fail_write("collective write: this HDF5 library has no parallel support");
#endif
  errno = 0;
  if (H5Dwrite(dataset, native_type<T>(), memspace.id(), space.id(), xfer.id(), data) < 0)
    fail_write_in(dataset, "cannot write a hyperslab");
}

template void write_hyperslab<float>(hid_t, const std::vector<hsize_t>&, const std::vector<hsize_t>&, const float*,
                                     bool);
template void write_hyperslab<double>(hid_t, const std::vector<hsize_t>&, const std::vector<hsize_t>&, const double*,
                                      bool);

template Handle write_dataset<float>(hid_t, const std::string&, const std::vector<hsize_t>&, const float*,
                                     const std::string&);
template Handle write_dataset<double>(hid_t, const std::string&, const std::vector<hsize_t>&, const double*,
                                      const std::string&);
template Handle write_dataset<std::int32_t>(hid_t, const std::string&, const std::vector<hsize_t>&, const std::int32_t*,
                                            const std::string&);
template Handle write_dataset<std::int64_t>(hid_t, const std::string&, const std::vector<hsize_t>&, const std::int64_t*,
                                            const std::string&);
template void write_first_dim_slab<float>(hid_t, hsize_t, const float*);
template void write_first_dim_slab<double>(hid_t, hsize_t, const double*);

std::string DatasetInfo::dtype_name() const {
  const std::string bits = std::to_string(type_size * 8);
  switch (type_class) {
    case H5T_FLOAT: return "float" + bits;
    case H5T_INTEGER: return "int" + bits;
    case H5T_STRING: return "string";
    case H5T_COMPOUND: return "compound";
    default: return "unsupported type";
  }
}

#if defined(SPECWAVE_HAVE_MPI)
namespace {
// MPI_Comm is a pointer in Open MPI and an int in MPICH (solver/parallel/comm.cpp stores it as an integer).
template <class Handle = MPI_Comm>
Handle mpi_comm(std::intptr_t h) {
  if constexpr (std::is_pointer_v<Handle>)
    return reinterpret_cast<Handle>(h);
  else
    return static_cast<Handle>(h);
}
}  // namespace
#endif

Reader::Reader(const std::string& path, const Parallel& parallel) : path_(path), parallel_(parallel.active()) {
  silence_library_errors();
  if (!std::filesystem::exists(path))
    throw Error(ExitCode::input_error,
                path + ": file not found; check the path (relative paths are resolved against the case file's folder)");
  // Before anything opens it: a FIFO would block here forever, a directory or device is no HDF5 file.
  require_regular_file(path, "the HDF5 input", "give an HDF5 file written e.g. by h5py or specwave");
  if (H5Fis_hdf5(path.c_str()) <= 0)
    throw Error(ExitCode::input_error,
                path + ": not an HDF5 file (or unreadable); give an HDF5 file written e.g. by h5py or specwave");
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS));
#if defined(H5_HAVE_PARALLEL) && defined(SPECWAVE_HAVE_MPI)
  if (parallel_) H5Pset_fapl_mpio(fapl.id(), mpi_comm(parallel.comm), MPI_INFO_NULL);
#endif
  file_ = Handle(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.id()));
  if (!file_) {
    // It has HDF5's signature, so either it may not be read or its structure is broken (a copy cut short).
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(path, ec);
    if (::access(path.c_str(), R_OK) != 0)
      throw Error(ExitCode::input_error, path + ": cannot open HDF5 file: no read permission; check permissions");
    throw Error(ExitCode::input_error, path + ": cannot open HDF5 file: it is damaged or truncated (" +
                                           std::to_string(ec ? 0 : bytes) +
                                           " bytes; a copy or transfer cut short?); write or copy it again");
  }
}

bool Reader::has_dataset(const std::string& name) const {
  if (H5Lexists(file_.id(), name.c_str(), H5P_DEFAULT) <= 0) return false;
  H5O_info_t info;
  if (H5Oget_info_by_name(file_.id(), name.c_str(), &info, H5P_DEFAULT) < 0) return false;
  return info.type == H5O_TYPE_DATASET;
}

Handle Reader::open_dataset(const std::string& name) const {
  if (!has_dataset(name))
    throw Error(ExitCode::input_error, path_ + ": dataset '" + name +
                                           "' is missing; name the dataset that holds the data (h5ls -r " + path_ +
                                           " lists them)");
  return Handle(H5Dopen2(file_.id(), name.c_str(), H5P_DEFAULT));
}

DatasetInfo Reader::info(const std::string& name) const {
  Handle dset = open_dataset(name);
  Handle space(H5Dget_space(dset.id()));
  Handle type(H5Dget_type(dset.id()));
  DatasetInfo out;
  out.dims.resize(H5Sget_simple_extent_ndims(space.id()));
  H5Sget_simple_extent_dims(space.id(), out.dims.data(), nullptr);
  out.type_class = H5Tget_class(type.id());
  out.type_size = H5Tget_size(type.id());
  return out;
}

namespace {
std::string dims_text(const std::vector<hsize_t>& d) {
  std::string s = "(";
  for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + ")";
}
// What an expected shape means: a grid's values, or a table of points' z, y, x.
std::string shape_hint(const std::vector<hsize_t>& expected) {
  if (expected.size() == 3) return " (C order, x fastest); match grid.shape or resample the model";
  if (expected.size() == 2 && expected[1] == 3) return " (a row a point: z, y, x in metres)";
  return "";
}
}  // namespace

std::vector<std::string> Reader::read_strings(const std::string& name) const {
  const DatasetInfo in = info(name);
  const std::string where = path_ + ": dataset '" + name + "'";
  if (in.type_class != H5T_STRING || in.dims.size() != 1)
    throw Error(ExitCode::input_error,
                where + ": expected a 1-D string dataset, found " + in.dtype_name() + " " + dims_text(in.dims));
  Handle dset = open_dataset(name);
  Handle type(H5Dget_type(dset.id()));
  std::vector<std::string> out(in.dims[0]);
  if (H5Tis_variable_str(type.id()) > 0) {
    std::vector<char*> pointers(out.size(), nullptr);
    Handle mem(H5Tcopy(H5T_C_S1));
    H5Tset_size(mem.id(), H5T_VARIABLE);
    H5Tset_cset(mem.id(), H5Tget_cset(type.id()));  // HDF5 converts no character sets: read UTF-8 as UTF-8
    if (!out.empty() && H5Dread(dset.id(), mem.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()) < 0)
      throw Error(ExitCode::input_error, where + ": read failed (corrupt file?)");
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i] = pointers[i] ? pointers[i] : "";
      H5free_memory(pointers[i]);
    }
    return out;
  }
  const std::size_t width = H5Tget_size(type.id());
  std::vector<char> buffer(width * out.size());
  if (!out.empty() && H5Dread(dset.id(), type.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()) < 0)
    throw Error(ExitCode::input_error, where + ": read failed (corrupt file?)");
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].assign(buffer.data() + i * width, width);
    out[i].erase(out[i].find_last_not_of('\0') + 1);
  }
  return out;
}

namespace {
// Error(input_error) at `where` (the file and dataset) unless the dataset's dims are `expected`: its rank, then its
// shape, with the hint for the expected shape.
void require_shape(const std::string& where, const std::vector<hsize_t>& dims, const std::vector<hsize_t>& expected) {
  if (dims.size() != expected.size())
    throw Error(ExitCode::input_error, where + ": rank is " + std::to_string(dims.size()) + " " + dims_text(dims) +
                                           ", expected rank " + std::to_string(expected.size()) + " " +
                                           dims_text(expected) + " in C order (nz, ny, nx)");
  if (dims != expected)
    throw Error(ExitCode::input_error,
                where + ": shape is " + dims_text(dims) + ", expected " + dims_text(expected) + shape_hint(expected));
}
}  // namespace

template <class T>
std::vector<T> Reader::read_floating(const std::string& name, const std::vector<hsize_t>& expected) const {
  return read_floating_block<T>(name, expected, std::vector<hsize_t>(expected.size(), 0), expected);
}

template <class T>
std::vector<T> Reader::read_floating_block(const std::string& name, const std::vector<hsize_t>& expected,
                                           const std::vector<hsize_t>& begin, const std::vector<hsize_t>& count) const {
  const DatasetInfo in = info(name);
  const std::string where = path_ + ": dataset '" + name + "'";
  if (in.type_class != H5T_FLOAT)
    throw Error(ExitCode::input_error, where + ": dtype is " + in.dtype_name() +
                                           ", expected float32 or float64; convert it (e.g. numpy astype('float32'))");
  require_shape(where, in.dims, expected);
  std::size_t n = 1;
  for (auto d : count) n *= d;
  std::vector<T> out(n);
  Handle dset = open_dataset(name);
  Handle space(H5Dget_space(dset.id()));
  H5Sselect_hyperslab(space.id(), H5S_SELECT_SET, begin.data(), nullptr, count.data(), nullptr);
  Handle memspace(H5Screate_simple(int(count.size()), count.data(), nullptr));
  Handle xfer(H5Pcreate(H5P_DATASET_XFER));
#if defined(H5_HAVE_PARALLEL)
  if (parallel_) H5Pset_dxpl_mpio(xfer.id(), H5FD_MPIO_COLLECTIVE);
#endif
  if (H5Dread(dset.id(), native_type<T>(), memspace.id(), space.id(), xfer.id(), out.data()) < 0)
    throw Error(ExitCode::input_error, where + ": read failed (corrupt file?)");
  return out;
}
template <class T>
std::vector<T> Reader::read_numbers(const std::string& name, const std::vector<hsize_t>& expected) const {
  const DatasetInfo in = info(name);
  if (in.type_class != H5T_INTEGER) return read_floating<T>(name, expected);  // its checks and messages
  const std::string where = path_ + ": dataset '" + name + "'";
  require_shape(where, in.dims, expected);
  std::size_t n = 1;
  for (auto d : expected) n *= d;
  std::vector<T> out(n);
  Handle dset = open_dataset(name);
  if (H5Dread(dset.id(), native_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
    throw Error(ExitCode::input_error, where + ": read failed (corrupt file?)");
  return out;
}
template std::vector<double> Reader::read_numbers<double>(const std::string&, const std::vector<hsize_t>&) const;
template std::vector<float> Reader::read_floating<float>(const std::string&, const std::vector<hsize_t>&) const;
template std::vector<double> Reader::read_floating<double>(const std::string&, const std::vector<hsize_t>&) const;
template std::vector<float> Reader::read_floating_block<float>(const std::string&, const std::vector<hsize_t>&,
                                                               const std::vector<hsize_t>&,
                                                               const std::vector<hsize_t>&) const;
template std::vector<double> Reader::read_floating_block<double>(const std::string&, const std::vector<hsize_t>&,
                                                                 const std::vector<hsize_t>&,
                                                                 const std::vector<hsize_t>&) const;

bool parallel_hdf5_available() {
#if defined(H5_HAVE_PARALLEL) && defined(SPECWAVE_HAVE_MPI)
  return true;
#else
  return false;
#endif
}

AtomicWriter::AtomicWriter(const std::string& path, const Parallel& parallel, const Resumable& resumable)
    : path_(path),
      temporary_(resumable.enabled
                     ? path + ".partial"
                     : path + ".tmp-" + std::to_string(parallel.active() ? parallel.token : (long long)::getpid())),
      parallel_(parallel),
      resumable_(resumable) {
  silence_library_errors();
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS));
  if (parallel_.active()) {
#if defined(H5_HAVE_PARALLEL) && defined(SPECWAVE_HAVE_MPI)
    H5Pset_fapl_mpio(fapl.id(), mpi_comm(parallel_.comm), MPI_INFO_NULL);
    ++g_parallel_writers;
    parallel_counted_ = true;
#else
    fail_write("cannot create " + path + " for several MPI ranks: this HDF5 library has no parallel support");
#endif
  }
  if (resumable_.enabled && resumable_.reopen) {
    file_ = Handle(H5Fopen(temporary_.c_str(), H5F_ACC_RDWR, fapl.id()));
    if (!file_)
      fail_write("cannot reopen " + temporary_ +
                 ", the partial output of the interrupted run; it is missing or damaged. "
                 "Start the run again without --resume");
    return;
  }
  // A fresh file under the temporary name, never through a symlink planted there (another user's file would be
  // truncated): the old entry is unlinked and the file created exclusively. A parallel file: rank 0 only unlinks.
  if (!parallel_.active() || parallel_.rank == 0) unlink_stale(temporary_);
#if defined(H5_HAVE_PARALLEL) && defined(SPECWAVE_HAVE_MPI)
  if (parallel_.active()) MPI_Barrier(mpi_comm(parallel_.comm));
#endif
  file_ = Handle(H5Fcreate(temporary_.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.id()));
  if (!file_) {
    // A full disk can fail the creation after the entry is made (writing the superblock): the entry is ours (the
    // name is this process's, the stale one was unlinked above), so it goes, and the error keeps the creation's errno.
    const int err = errno;
    if (!parallel_.active() || parallel_.rank == 0) ::unlink(temporary_.c_str());
    errno = err;
    fail_write("cannot create " + temporary_ + "; check that the output directory exists and is writable");
  }
}

AtomicWriter::~AtomicWriter() {
  if (committed_) return;
  g_write_failed = true;  // abandoned: an error is on its way (see shutdown)
  file_.close();
  if (parallel_counted_) --g_parallel_writers;
  std::error_code ec;
  if (parallel_.rank == 0 && !resumable_.enabled) std::filesystem::remove(temporary_, ec);
}

void AtomicWriter::flush(const std::string& what) {
  errno = 0;
  if (H5Fflush(file_.id(), H5F_SCOPE_GLOBAL) < 0)
    fail_write(what.empty() ? "cannot flush " + temporary_
                            : temporary_ + ": cannot write " + what + " (flushing them to disk)");
}

void AtomicWriter::commit(const std::string& what) {
  flush(what);
  file_.close();  // collective for a parallel file: every rank's data is in the file after it
  committed_ = true;
  if (parallel_counted_) --g_parallel_writers, parallel_counted_ = false;
  std::error_code ec;
  if (parallel_.rank == 0) std::filesystem::rename(temporary_, path_, ec);
#if defined(SPECWAVE_HAVE_MPI)
  // Every rank returns once the file has its final name (a rank may read it next).
  if (parallel_.active()) MPI_Barrier(mpi_comm(parallel_.comm));
#endif
  if (ec) {
    std::error_code ignored;  // a complete file under a temporary name is of no use to anyone: not left behind
    if (parallel_.rank == 0 && !resumable_.enabled) std::filesystem::remove(temporary_, ignored);
    fail_write("cannot rename " + temporary_ + " to " + path_ + ": " + ec.message());
  }
}

void write_identity_attributes(hid_t file, const std::string& file_type) {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  write_attribute(file, "file_type", file_type);
  write_attribute(file, "schema_version", std::string(schema_version));
  write_attribute(file, "created_by", std::string("specwave ") + build::version + " (" + build::git_hash + ")");
  write_attribute(file, "created_at", std::string(stamp));
}

void write_root_attributes(hid_t file, const Provenance& p) {
  write_identity_attributes(file, p.file_type);
  write_attribute(file, "precision", p.precision);
  write_attribute(file, "backend", p.backend);
  write_attribute(file, "device", p.device);
  write_attribute(file, "threads", std::int64_t(p.threads));
  write_attribute(file, "ranks", std::int64_t(p.ranks));
  write_attribute(file, "case_text", p.case_text);
}

Handle write_checked_doubles(hid_t parent, const std::string& name, const std::vector<hsize_t>& dims,
                             const double* data, const std::string& units) {
  std::size_t count = 1;
  for (hsize_t d : dims) count *= std::size_t(d);
  Handle d = write_dataset<double>(parent, name, dims, data, units);
  write_checksum(d.id(), data, count * sizeof(double));
  return d;
}

std::vector<double> read_checked_doubles(const Reader& reader, const std::string& name,
                                         const std::vector<hsize_t>& dims) {
  std::vector<double> values = reader.read_floating<double>(name, dims);
  Handle d = reader.open_dataset(name);
  verify_checksum(d.id(), values.data(), values.size() * sizeof(double), reader.path(), "the array " + name);
  return values;
}

void startup() { H5dont_atexit(); }

void shutdown() {
  // Every open object closed now, while MPI still runs; after a failed write HDF5 may hold a file it cannot close
  // (HDF5 1.10 crashes closing it): the process ends without, the operating system closes what is left.
  if (!g_write_failed) H5close();
}

}  // namespace specwave::io::h5
