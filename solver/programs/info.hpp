#pragma once
#include <string>

namespace specwave {
// What `specwave info` prints: the build (version, git hash, precisions, backends, MPI, HDF5, FFTW) and the hardware.
std::string build_and_hardware_info();
}  // namespace specwave
