#include "solver/inversion/shot_checkpoint.hpp"

#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "io/hdf5.hpp"
#include "solver/case/errors.hpp"
#include "solver/forward/checkpoint.hpp"

namespace specwave {
namespace {

double now_minutes() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count() / 60.0;
}

}  // namespace

ShotCheckpoint::ShotCheckpoint(const std::string& output_directory, int rank, int ranks, std::string fingerprint,
                               double minutes)
    : path_((std::filesystem::path(output_directory) / "checkpoint" / fmt::format("shots_rank{}.h5", rank)).string()),
      fingerprint_(fmt::format("{}, {} rank(s)", fingerprint, ranks)),
      ranks_(ranks),
      minutes_(minutes),
      last_(now_minutes()) {
  if (const char* n = std::getenv("SPECWAVE_STOP_AFTER_SHOTS")) stop_after_ = std::atol(n);
}

std::optional<ShotState> ShotCheckpoint::load() const {
  if (!std::filesystem::exists(path_)) return std::nullopt;
  io::h5::Reader r(path_);
  const std::string fingerprint = io::h5::read_attribute_string(r.id(), "fingerprint");
  if (fingerprint != fingerprint_)
    throw Error(ExitCode::invalid_case,
                fmt::format("{}: the state belongs to another run (a case, an input or an option changed since it was "
                            "written):\n  state:    {}\n  this run: {}\nresume with the same case, inputs and options, "
                            "or remove {} to start over",
                            path_, fingerprint, fingerprint_, path_));
  ShotState s;
  const auto done = io::h5::read_checked_doubles(r, "done", {r.info("done").dims.at(0)});
  for (double d : done) s.done.push_back(int(d));
  for (const std::string& name : r.read_strings("array_names"))
    s.arrays[name] = io::h5::read_checked_doubles(r, "arrays/" + name, {r.info("arrays/" + name).dims.at(0)});
  return s;
}

bool ShotCheckpoint::due(int shots_done) {
  if (stop_after_ > 0 && shots_done >= stop_after_ && !stop_signal()) request_stop(SIGUSR1);
  return stop_signal() != 0 || (minutes_ > 0 && now_minutes() - last_ >= minutes_);
}

void ShotCheckpoint::save(const ShotState& state) {
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path());
  {
    io::h5::AtomicWriter w(path_);
    io::h5::write_attribute(w.id(), "file_type", std::string("specwave.shot_checkpoint"));
    io::h5::write_attribute(w.id(), "fingerprint", fingerprint_);
    io::h5::write_attribute(w.id(), "ranks", std::int64_t(ranks_));
    const std::vector<double> done(state.done.begin(), state.done.end());
    io::h5::write_checked_doubles(w.id(), "done", {hsize_t(done.size())}, done.data(), "");
    std::vector<std::string> names;
    io::h5::Handle group = io::h5::create_group(w.id(), "arrays");
    for (const auto& [name, values] : state.arrays) {
      names.push_back(name);
      io::h5::write_checked_doubles(group.id(), name, {hsize_t(values.size())}, values.data(), "");
    }
    io::h5::write_string_dataset(w.id(), "array_names", names);
    w.commit();
  }
  last_ = now_minutes();
  if (const int signal = stop_signal())
    throw Error(ExitCode::interrupted,
                fmt::format("stopped by signal {} ({}) after {} shot(s) of this rank, their sums in {}; run the same "
                            "command with --resume to continue",
                            signal, strsignal(signal), state.done.size(), path_));
}

void ShotCheckpoint::remove() const {
  std::error_code ec;
  std::filesystem::remove(path_, ec);
  std::filesystem::remove(std::filesystem::path(path_).parent_path(), ec);  // when empty
}

}  // namespace specwave
