#pragma once
// Thin RAII layer over the HDF5 C API: typed datasets, attributes, and atomic files (temporary name,
// close, rename). Readers check rank, shape and dtype and name the file and dataset in every error.
#include <hdf5.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace specwave::io::h5 {

// Owns one HDF5 identifier and closes it with the right H5*close.
class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) : id_(id) {}
  Handle(Handle&& o) noexcept : id_(o.id_) { o.id_ = H5I_INVALID_HID; }
  Handle& operator=(Handle&& o) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { close(); }
  hid_t id() const { return id_; }
  explicit operator bool() const { return id_ >= 0; }
  void close();

 private:
  hid_t id_ = H5I_INVALID_HID;
};

template <class T>
hid_t native_type();

// Attributes on any object (file root, group or dataset).
void write_attribute(hid_t object, const std::string& name, const std::string& value);
void write_attribute(hid_t object, const std::string& name, double value);
void write_attribute(hid_t object, const std::string& name, std::int64_t value);
void write_attribute(hid_t object, const std::string& name, std::span<const double> values);
bool has_attribute(hid_t object, const std::string& name);
// Throws Error(ExitCode::output_error) "<file of object>: <what> (<why>)": the file named, and a full disk or quota
// said plainly (errno, or the file system's free space). For a write that failed right before.
[[noreturn]] void fail_write_at(hid_t object, const std::string& what);
// Integrity of restart files (io/checksum.hpp): attribute "checksum64" (16 hexadecimal digits) of a dataset, the
// checksum of its `bytes` bytes as written from `data`.
void write_checksum(hid_t dataset, const void* data, std::size_t bytes);
// Checks `data` (the dataset's bytes as read back) against its checksum64 attribute: Error(input_error)
// "<path>: <what> fails its checksum ..." on a mismatch, or "... has no checksum ..." when the attribute is missing.
void verify_checksum(hid_t dataset, const void* data, std::size_t bytes, const std::string& path,
                     const std::string& what);
std::vector<double> read_attribute_doubles(hid_t object, const std::string& name);
std::string read_attribute_string(hid_t object, const std::string& name);

Handle create_group(hid_t parent, const std::string& name);

// A dataset of shape `dims` (C order) with a `units` attribute. Data may be null (written later by slabs).
template <class T>
Handle write_dataset(hid_t parent, const std::string& name, const std::vector<hsize_t>& dims, const T* data,
                     const std::string& units);
// A 1-D dataset of variable-length UTF-8 strings (h5py reads it as str).
Handle write_string_dataset(hid_t parent, const std::string& name, const std::vector<std::string>& values);
// Writes data into dataset[index, ...] (a slab of the first dimension).
template <class T>
void write_first_dim_slab(hid_t dataset, hsize_t index, const T* data);
// Writes `data` (C order, count[0] x count[1] x ...) into the box [start, start + count) of `dataset`. With
// `collective`, one collective MPI-IO transfer of a parallel file: every rank of its communicator calls it, a
// rank with nothing to write passes a count with a zero (or data null).
template <class T>
void write_hyperslab(hid_t dataset, const std::vector<hsize_t>& start, const std::vector<hsize_t>& count, const T* data,
                     bool collective);

struct DatasetInfo {
  std::vector<hsize_t> dims;
  H5T_class_t type_class = H5T_NO_CLASS;
  std::size_t type_size = 0;
  std::string dtype_name() const;  // "float32", "int16", ...
};

// A file shared by the ranks of an MPI communicator (parallel HDF5 over MPI-IO): the MPI_Comm as an integer
// (specwave::Comm::native_handle()), this rank, and a token every rank agrees on (rank 0's process id) that
// names the temporary file. The default is a serial file.
struct Parallel {
  std::intptr_t comm = 0;
  int rank = 0;
  long long token = 0;
  bool active() const { return comm != 0; }
};
// True when this HDF5 library can write parallel files.
bool parallel_hdf5_available();

// A file opened for reading. Errors name `path` and the dataset. Parallel: opened by every rank of the
// communicator with MPI-IO, for collective block reads.
class Reader {
 public:
  explicit Reader(const std::string& path, const Parallel& parallel = {});
  const std::string& path() const { return path_; }
  hid_t id() const { return file_.id(); }
  bool has_dataset(const std::string& name) const;
  DatasetInfo info(const std::string& name) const;
  // Reads a floating-point dataset (float32 or float64 in the file) converted to T; checks its shape.
  template <class T>
  std::vector<T> read_floating(const std::string& name, const std::vector<hsize_t>& expected_dims) const;
  // The box [begin, begin + count) of a floating-point dataset of shape expected_dims (checked as above), in
  // C order; one collective transfer when the file is parallel (every rank calls it).
  template <class T>
  std::vector<T> read_floating_block(const std::string& name, const std::vector<hsize_t>& expected_dims,
                                     const std::vector<hsize_t>& begin, const std::vector<hsize_t>& count) const;
  // As read_floating, integer datasets too (converted to T): coordinates, which any numeric type may hold.
  template <class T>
  std::vector<T> read_numbers(const std::string& name, const std::vector<hsize_t>& expected_dims) const;
  Handle open_dataset(const std::string& name) const;
  // A 1-D string dataset (fixed or variable length).
  std::vector<std::string> read_strings(const std::string& name) const;

 private:
  std::string path_;
  Handle file_;
  bool parallel_ = false;
};

// A file written atomically: created as "<path>.tmp-<pid>", renamed to `path` by commit(). Destroying it
// without commit() removes the temporary file, so a failed run never leaves a half-written file behind.
// Parallel: created collectively; every metadata call (groups, datasets, attributes) must then be made by every
// rank with the same arguments, and commit() is collective (rank 0 renames).
// Resumable (a checkpointed run, solver/forward/checkpoint.hpp): the temporary is "<path>.partial", it is kept when the
// writer goes without commit(), and reopen opens the one an earlier run left for writing again instead of
// creating it.
struct Resumable {
  bool enabled = false, reopen = false;
};

class AtomicWriter {
 public:
  explicit AtomicWriter(const std::string& path, const Parallel& parallel = {}, const Resumable& resumable = {});
  bool parallel() const { return parallel_.active(); }
  int rank() const { return parallel_.rank; }
  ~AtomicWriter();
  AtomicWriter(const AtomicWriter&) = delete;
  AtomicWriter& operator=(const AtomicWriter&) = delete;
  hid_t id() const { return file_.id(); }
  const std::string& path() const { return path_; }
  bool reopened() const { return resumable_.reopen; }
  // Everything written so far on disk (collective for a parallel file). A write that fails here (HDF5 keeps data in
  // its caches until then: a full disk often shows only now) names `what` was being written when it is given.
  void flush(const std::string& what = "");
  void commit(const std::string& what = "");

 private:
  std::string path_, temporary_;
  Handle file_;
  Parallel parallel_;
  Resumable resumable_;
  bool committed_ = false;
  bool parallel_counted_ = false;  // counted in the parallel writers (hdf5.cpp)
};

// file_type, schema_version, created_by and created_at: the root attributes every specwave file starts with.
void write_identity_attributes(hid_t file, const std::string& file_type);
// Root attributes every output file of a run carries (docs/hdf5-schema.md): the identity plus the provenance.
struct Provenance {
  std::string file_type;  // "specwave.traces", "specwave.wavefield", "specwave.model"
  std::string precision, backend, case_text, device;
  int threads = 0, ranks = 1;
};
void write_root_attributes(hid_t file, const Provenance& provenance);
inline constexpr const char* schema_version = "1.3";

// Silence HDF5's automatic error stack printing (errors become exceptions with context instead).
void silence_library_errors();

// Restart files' arrays of doubles with their checksum (write_checksum / verify_checksum): written with
// `units`; read back with shape `dims` and verified (Error(input_error) naming the file and dataset).
Handle write_checked_doubles(hid_t parent, const std::string& name, const std::vector<hsize_t>& dims,
                             const double* data, const std::string& units);
std::vector<double> read_checked_doubles(const Reader& reader, const std::string& name,
                                         const std::vector<hsize_t>& dims);

// A program's first call (before any HDF5 use): HDF5 must not close itself at exit, after MPI_Finalize, where a file
// abandoned after a write error (a full disk) made it crash (exit 139).
void startup();
// Before MPI_Finalize: closes the library when every file closed cleanly; after a failed write, leaves what is
// still open to the operating system.
void shutdown();

}  // namespace specwave::io::h5
