// The words of the case file for each enumeration (the parser in io/case_file.cpp reads the same words), and
// what the Case's acquisition implies.
#include "solver/case/case.hpp"

#include <algorithm>

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

}  // namespace specwave
