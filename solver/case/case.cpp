// The words of the case file for each enumeration (the parser in io/case_file.cpp reads the same words), and
// what the Case's acquisition implies.
#include "solver/case/case.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "solver/case/errors.hpp"

namespace specwave {

const char* to_string(Precision p) { return p == Precision::fp64 ? "fp64" : "fp32"; }
const char* to_string(BackendKind b) {
  switch (b) {
    case BackendKind::cpu: return "cpu";
    case BackendKind::cuda: return "cuda";
    case BackendKind::auto_select: return "auto";
  }
  return "?";
}
const char* to_string(Method m) { return m == Method::spectral ? "spectral" : "fdtd"; }
const char* to_string(ModelSpec::Kind k) {
  switch (k) {
    case ModelSpec::Kind::homogeneous: return "homogeneous";
    case ModelSpec::Kind::layered: return "layered";
    case ModelSpec::Kind::gaussian: return "gaussian";
    case ModelSpec::Kind::file: return "file";
    case ModelSpec::Kind::array: return "array";
  }
  return "?";
}

const char* to_string(Parameterisation p) { return p == Parameterisation::slowness2 ? "slowness2" : "velocity"; }
const char* to_string(WavefieldStorage s) {
  switch (s) {
    case WavefieldStorage::auto_select: return "auto";
    case WavefieldStorage::memory: return "memory";
    case WavefieldStorage::checkpoints: return "checkpoints";
    case WavefieldStorage::binomial: return "binomial";
    case WavefieldStorage::disk: return "disk";
    case WavefieldStorage::boundary: return "boundary";
  }
  return "?";
}

std::size_t max_shot_sources(const Case& c) {
  std::size_t n = 0;
  for (const auto& shot : c.shots) n = std::max(n, shot.sources.size());
  return n;
}

const std::vector<Vec3>& shot_receivers(const Case& c, std::size_t shot) {
  const auto& own = c.shots.at(shot).receivers;
  return own.empty() ? c.receivers : own;
}

bool shared_receivers(const Case& c) {
  return std::all_of(c.shots.begin(), c.shots.end(), [](const ShotSpec& s) { return s.receivers.empty(); });
}

std::size_t max_shot_receivers(const Case& c) {
  std::size_t n = 0;
  for (std::size_t s = 0; s < c.shots.size(); ++s) n = std::max(n, shot_receivers(c, s).size());
  return c.shots.empty() ? c.receivers.size() : n;
}

void require_shared_receivers(const Case& c, const std::string& what) {
  if (shared_receivers(c)) return;
  throw Error(ExitCode::invalid_case,
              fmt::format("{}: {} needs every shot to record the shared [receivers] in this version, and this case "
                          "gives shots their own ([shots.receivers] or [receivers.streamer]); run `specwave forward`, "
                          "`invert`, `gradient`, `born` or `migrate` instead",
                          c.source_path.empty() ? c.name : c.source_path, what));
}

std::size_t total_traces(const Case& c) {
  std::size_t n = 0;
  for (std::size_t s = 0; s < c.shots.size(); ++s) n += shot_receivers(c, s).size();
  return n;
}

}  // namespace specwave
