#include "solver/forward/checkpoint.hpp"

#include <fmt/format.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <utility>

#include "io/checksum.hpp"
#include "io/hdf5.hpp"
#include "solver/case/errors.hpp"

namespace specwave {
namespace {

std::atomic<int> g_stop_signal{0};
// CLOCK_MONOTONIC (ns) of the first SIGINT or SIGTERM; 0: none yet.
std::atomic<long long> g_first_stop_ns{0};
// A SIGINT or SIGTERM within this long of the first is the same request delivered twice (GNU timeout signals the
// child and its process group; so does a scheduler's kill of a job step), not a second one.
constexpr long long repeat_window_ns = 1'000'000'000;

long long monotonic_ns() {  // (async-signal-safe)
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1'000'000'000 + t.tv_nsec;
}

extern "C" void on_stop_signal(int signal) {
  if (signal != SIGUSR1) {
    const long long now = monotonic_ns();
    long long first = 0;
    if (!g_first_stop_ns.compare_exchange_strong(first, now)) {
      if (now - first < repeat_window_ns) return;  // the first one again
      // A second SIGINT or SIGTERM, a second or more after the first: end now, the default way.
      std::signal(signal, SIG_DFL);
      std::raise(signal);
      return;
    }
  }
  int none = 0;  // the first stop signal is the one reported (SIGUSR1, then the scheduler's SIGTERM: still SIGUSR1)
  g_stop_signal.compare_exchange_strong(none, signal);
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace fs = std::filesystem;
using io::h5::Handle;

constexpr const char* manifest_name = "checkpoint.h5";
constexpr const char* file_type = "specwave.checkpoint";

[[noreturn]] void fail(const std::string& what) { throw Error(ExitCode::output_error, what); }

// A state array as raw bytes (the propagator's own element type and layout: only it reads them back).
void write_bytes(hid_t parent, const std::string& name, std::span<const std::byte> data) {
  const hsize_t n = data.size();
  Handle space(H5Screate_simple(1, &n, nullptr));
  errno = 0;
  Handle d(H5Dcreate2(parent, name.c_str(), H5T_NATIVE_UINT8, space.id(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!d || (n > 0 && H5Dwrite(d.id(), H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) < 0))
    io::h5::fail_write_at(parent, "cannot write the checkpoint array " + name);
  io::h5::write_checksum(d.id(), data.data(), data.size());
}

hsize_t dataset_size(hid_t d) {
  Handle space(H5Dget_space(d));
  return hsize_t(H5Sget_simple_extent_npoints(space.id()));
}

class SaveVisitor final : public StateVisitor {
 public:
  explicit SaveVisitor(hid_t group) : group_(group) {}
  bool loading() const override { return false; }
  void visit(const std::string& name, std::span<std::byte> data) override {
    write_bytes(group_, name, data);
    bytes += data.size();
  }
  std::size_t bytes = 0;

 private:
  hid_t group_;
};

class LoadVisitor final : public StateVisitor {
 public:
  LoadVisitor(hid_t group, std::string file) : group_(group), file_(std::move(file)) {}
  bool loading() const override { return true; }
  void visit(const std::string& name, std::span<std::byte> data) override {
    Handle d(H5Dopen2(group_, name.c_str(), H5P_DEFAULT));
    if (!d || dataset_size(d.id()) != data.size())
      throw Error(
          ExitCode::input_error,
          fmt::format("{}: the state array {} is missing or has another size ({} bytes expected): the checkpoint "
                      "was not written by this case; start the run again without --resume",
                      file_, name, data.size()));
    if (!data.empty() && H5Dread(d.id(), H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) < 0)
      throw Error(ExitCode::input_error, fmt::format("{}: cannot read the state array {}", file_, name));
    io::h5::verify_checksum(d.id(), data.data(), data.size(), file_, "the state array " + name);
  }

 private:
  hid_t group_;
  std::string file_;
};

// The driver's integers and the generation as one text, for their checksum.
std::string integer_text(const std::map<std::string, long long>& integers, long long generation) {
  std::string text = fmt::format("generation={};", generation);
  for (const auto& [name, value] : integers) text += fmt::format("{}={};", name, value);
  return text;
}

std::vector<double> read_doubles(hid_t file, const std::string& name, const std::string& path) {
  Handle d(H5Dopen2(file, name.c_str(), H5P_DEFAULT));
  if (!d) throw Error(ExitCode::input_error, fmt::format("{}: the array {} is missing", path, name));
  std::vector<double> out(dataset_size(d.id()));
  if (!out.empty() && H5Dread(d.id(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
    throw Error(ExitCode::input_error, fmt::format("{}: cannot read the array {}", path, name));
  io::h5::verify_checksum(d.id(), out.data(), out.size() * sizeof(double), path, "the array " + name);
  return out;
}

}  // namespace

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // a write or an MPI call in progress goes on; the run stops at the next step boundary
  for (int s : {SIGUSR1, SIGTERM, SIGINT}) sigaction(s, &action, nullptr);
}

int stop_signal() { return g_stop_signal.load(); }

void request_stop(int signal) { g_stop_signal.store(signal); }
void clear_stop() {
  g_stop_signal.store(0);
  g_first_stop_ns.store(0);
}

CheckpointSchedule::CheckpointSchedule(const Comm& world, long long every_steps, double every_minutes,
                                       long long steps_done)
    : world_(world),
      every_steps_(every_steps),
      last_steps_(steps_done),
      every_seconds_(every_minutes * 60),
      last_time_(now_seconds()) {}

CheckpointSchedule::Action CheckpointSchedule::poll(long long steps_done) {
  // 2: a stop signal (any rank), 1: the period (by steps, the same everywhere; by time, rank 0's clock).
  int local = stop_signal() ? 2 : 0;
  if (every_steps_ > 0 && steps_done - last_steps_ >= every_steps_) local = std::max(local, 1);
  if (every_seconds_ > 0 && world_.rank() == 0 && now_seconds() - last_time_ >= every_seconds_)
    local = std::max(local, 1);
  int signal = stop_signal();
  if (world_.size() > 1) {
    world_.allreduce_in_place(std::span<int>(&local, 1), ReduceOp::max);
    world_.allreduce_in_place(std::span<int>(&signal, 1), ReduceOp::max);
  }
  if (local == 0) return Action::none;
  last_steps_ = steps_done;
  last_time_ = now_seconds();
  if (local == 2) {
    signal_ = signal;
    return Action::save_and_stop;
  }
  return Action::save;
}

long long CheckpointMeta::integer(const std::string& name) const {
  const auto it = integers.find(name);
  if (it == integers.end()) throw Error(ExitCode::input_error, "checkpoint: the value " + name + " is missing");
  return it->second;
}

const std::vector<double>& CheckpointMeta::array(const std::string& name) const {
  const auto it = arrays.find(name);
  if (it == arrays.end()) throw Error(ExitCode::input_error, "checkpoint: the array " + name + " is missing");
  return it->second;
}

CheckpointStore::CheckpointStore(std::string directory, const Comm& world, std::string fingerprint,
                                 std::string rank_fingerprint)
    : directory_(std::move(directory)),
      world_(world),
      fingerprint_(std::move(fingerprint)),
      rank_fingerprint_(std::move(rank_fingerprint)) {}

std::string CheckpointStore::rank_file(long long generation, int rank) const {
  return (fs::path(directory_) / fmt::format("rank-{:05d}.g{}.h5", rank, generation)).string();
}

bool CheckpointStore::exists() const {
  int found = world_.rank() == 0 && fs::exists(fs::path(directory_) / manifest_name) ? 1 : 0;
  world_.broadcast(std::span<int>(&found, 1), 0);
  return found != 0;
}

void CheckpointStore::save(const CheckpointMeta& meta, const std::vector<Propagator*>& propagators) {
  const double start = now_seconds();
  const long long generation = generation_ + 1;
  std::error_code ec;
  // Whether this save made the folder (every rank knows): a first checkpoint that fails takes it away again, when
  // nothing is in it, so that a failed run leaves no empty checkpoint/ behind.
  int made = 0;
  if (world_.rank() == 0) made = fs::create_directories(directory_, ec) ? 1 : 0;
  world_.broadcast(std::span<int>(&made, 1), 0);
  if (!fs::is_directory(directory_))
    fail(fmt::format("cannot create the checkpoint folder {}: {}", directory_, ec ? ec.message() : "not a folder"));
  try {
    write_generation(generation, meta, propagators);
  } catch (...) {
    std::error_code ignored;
    if (made) fs::remove(directory_, ignored);  // only if empty
    throw;
  }
  world_.barrier();
  if (generation_ > 0) fs::remove(rank_file(generation_, world_.rank()), ec);
  generation_ = generation;
  last_save_seconds_ = now_seconds() - start;
}

// Every rank's state, then (rank 0) the manifest that names the generation; last_save_bytes_ = this rank's bytes.
void CheckpointStore::write_generation(long long generation, const CheckpointMeta& meta,
                                       const std::vector<Propagator*>& propagators) {
  std::size_t bytes = 0;
  {
    io::h5::AtomicWriter file(rank_file(generation, world_.rank()));
    io::h5::write_attribute(file.id(), "rank_fingerprint", rank_fingerprint_);
    for (std::size_t k = 0; k < propagators.size(); ++k) {
      Handle group = io::h5::create_group(file.id(), fmt::format("propagator_{}", k));
      SaveVisitor v(group.id());
      propagators[k]->visit_state(v);
      bytes += v.bytes;
    }
    file.commit("the checkpoint arrays");
  }
  world_.barrier();  // every rank's state is on disk before the manifest names its generation
  if (world_.rank() == 0) {
    io::h5::AtomicWriter file((fs::path(directory_) / manifest_name).string());
    io::h5::write_attribute(file.id(), "file_type", std::string(file_type));
    io::h5::write_attribute(file.id(), "fingerprint", fingerprint_);
    io::h5::write_attribute(file.id(), "generation", std::int64_t(generation));
    io::h5::write_attribute(file.id(), "ranks", std::int64_t(world_.size()));
    io::h5::write_attribute(file.id(), "propagators", std::int64_t(propagators.size()));
    std::string integer_names, array_names;
    for (const auto& [name, value] : meta.integers) {
      io::h5::write_attribute(file.id(), "int_" + name, std::int64_t(value));
      integer_names += name + ",";
    }
    for (const auto& [name, values] : meta.arrays) {
      Handle d = io::h5::write_dataset<double>(file.id(), name, {hsize_t(values.size())}, values.data(), "");
      io::h5::write_checksum(d.id(), values.data(), values.size() * sizeof(double));
      array_names += name + ",";
    }
    // The scalars too: one checksum over "name=value;" of every integer, in order.
    const std::string integers = integer_text(meta.integers, generation);
    io::h5::write_attribute(file.id(), "integers_checksum64",
                            io::checksum_hex(io::checksum64(integers.data(), integers.size())));
    io::h5::write_attribute(file.id(), "integer_names", integer_names);
    io::h5::write_attribute(file.id(), "array_names", array_names);
    file.commit();
  }
  last_save_bytes_ = bytes;
}

CheckpointMeta CheckpointStore::load_meta() {
  const std::string manifest = (fs::path(directory_) / manifest_name).string();
  io::h5::Reader reader(manifest);
  const hid_t f = reader.id();
  const auto fixed = [&](const std::string& name) {
    return std::int64_t(io::h5::read_attribute_doubles(f, name).at(0));
  };
  if (!io::h5::has_attribute(f, "file_type") || io::h5::read_attribute_string(f, "file_type") != file_type)
    throw Error(ExitCode::input_error,
                manifest + ": not a specwave checkpoint; remove the folder or start without --resume");
  const std::string written_by = io::h5::read_attribute_string(f, "fingerprint");
  if (written_by != fingerprint_)
    throw Error(
        ExitCode::invalid_case,
        fmt::format("{}: the checkpoint belongs to another run:\n  checkpoint: {}\n  this run:   {}\nresume with the "
                    "same case file, number of ranks and options, or remove {} to start over",
                    manifest, written_by, fingerprint_, directory_));
  // The names were written as lists (integers: attributes "int_NAME", arrays: datasets NAME).
  CheckpointMeta meta;
  const auto names = [&](const std::string& list) {
    std::vector<std::string> out;
    std::string text = io::h5::read_attribute_string(f, list), item;
    for (char ch : text + ",") {
      if (ch != ',')
        item += ch;
      else if (!item.empty())
        out.push_back(std::exchange(item, {}));
    }
    return out;
  };
  for (const auto& n : names("integer_names")) meta.integers[n] = fixed("int_" + n);
  for (const auto& n : names("array_names")) meta.arrays[n] = read_doubles(f, n, manifest);
  generation_ = fixed("generation");
  const std::string integers = integer_text(meta.integers, generation_);
  if (!io::h5::has_attribute(f, "integers_checksum64") ||
      io::h5::read_attribute_string(f, "integers_checksum64") !=
          io::checksum_hex(io::checksum64(integers.data(), integers.size())))
    throw Error(ExitCode::input_error,
                manifest +
                    ": the checkpoint's step counters fail their checksum (or have none): the file is corrupt "
                    "or was written by an older specwave; start again without --resume");
  return meta;
}

void CheckpointStore::load_state(const std::vector<Propagator*>& propagators) {
  const std::string mine = rank_file(generation_, world_.rank());
  io::h5::Reader state(mine);
  const std::string written_by = io::h5::has_attribute(state.id(), "rank_fingerprint")
                                     ? io::h5::read_attribute_string(state.id(), "rank_fingerprint")
                                     : std::string("(none)");
  if (written_by != rank_fingerprint_)
    throw Error(ExitCode::invalid_case,
                fmt::format("{}: the checkpoint belongs to another run: written with {}, this run has {} (an input "
                            "such as model.file changed since it was written); resume with the same inputs, or "
                            "remove {} to start over",
                            mine, written_by, rank_fingerprint_, directory_));
  H5G_info_t info;
  H5Gget_info(state.id(), &info);
  if (info.nlinks != propagators.size())
    throw Error(ExitCode::input_error,
                fmt::format("{}: holds {} propagator state(s), this run has {}; start again without "
                            "--resume",
                            mine, info.nlinks, propagators.size()));
  for (std::size_t k = 0; k < propagators.size(); ++k) {
    Handle group(H5Gopen2(state.id(), fmt::format("propagator_{}", k).c_str(), H5P_DEFAULT));
    if (!group)
      throw Error(ExitCode::input_error, mine + ": a propagator's state is missing; start again without --resume");
    LoadVisitor v(group.id(), mine);
    propagators[k]->visit_state(v);
  }
}

void CheckpointStore::remove() {
  world_.barrier();
  std::error_code ec;
  if (world_.rank() == 0) fs::remove_all(directory_, ec);
  world_.barrier();
}

}  // namespace specwave
