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
const char* to_string(Formulation f) {
  return f == Formulation::staggered ? "staggered" : f == Formulation::elastic ? "elastic" : "second_order";
}
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

const char* to_string(SourceKind k) {
  return k == SourceKind::force ? "force" : k == SourceKind::moment ? "moment" : "pressure";
}

const char* to_string(ReceiverComponent r) {
  switch (r) {
    case ReceiverComponent::pressure: return "p";
    case ReceiverComponent::vz: return "vz";
    case ReceiverComponent::vy: return "vy";
    case ReceiverComponent::vx: return "vx";
    case ReceiverComponent::divergence: return "div";
    case ReceiverComponent::curl_z: return "curl_z";
    case ReceiverComponent::curl_y: return "curl_y";
    case ReceiverComponent::curl_x: return "curl_x";
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
                          c.label(), what));
}

ReceiverComponent shot_receiver_component(const Case& c, std::size_t shot, std::size_t receiver) {
  const auto& own = c.shots.at(shot);
  const auto& components = own.receivers.empty() ? c.receiver_components : own.receiver_components;
  return receiver < components.size() ? components[receiver] : ReceiverComponent::pressure;
}

bool has_velocity_receivers(const Case& c) {
  const auto velocity = [](const std::vector<ReceiverComponent>& v) {
    return std::any_of(v.begin(), v.end(), [](ReceiverComponent r) { return r != ReceiverComponent::pressure; });
  };
  if (velocity(c.receiver_components)) return true;
  return std::any_of(c.shots.begin(), c.shots.end(),
                     [&](const ShotSpec& s) { return velocity(s.receiver_components); });
}

Vec3 component_direction(ReceiverComponent r) {
  switch (r) {
    case ReceiverComponent::vz: return {1, 0, 0};
    case ReceiverComponent::vy: return {0, 1, 0};
    case ReceiverComponent::vx: return {0, 0, 1};
    case ReceiverComponent::pressure:
    case ReceiverComponent::divergence:
    case ReceiverComponent::curl_z:
    case ReceiverComponent::curl_y:
    case ReceiverComponent::curl_x: break;
  }
  return {0, 0, 0};
}

void require_pressure_receivers(const Case& c, const std::string& what) {
  if (!has_velocity_receivers(c)) return;
  throw Error(ExitCode::invalid_case,
              fmt::format("{}: {} takes pressure receivers only in this version (the Eigen reference has no "
                          "particle velocity), and this case has particle-velocity receivers (receivers.components); "
                          "record components = [\"p\"] for it, or run `specwave forward`",
                          c.label(), what));
}

std::size_t total_traces(const Case& c) {
  std::size_t n = 0;
  for (std::size_t s = 0; s < c.shots.size(); ++s) n += shot_receivers(c, s).size();
  return n;
}

}  // namespace specwave
