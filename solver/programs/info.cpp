#include "solver/programs/info.hpp"

#include <fftw3.h>
#include <hdf5.h>
#include <omp.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fstream>

#include "solver/parallel/comm.hpp"
#include "solver/plan/plan.hpp"
#include "specwave/build_info.hpp"

#include "kernels/cuda/cublas_library.hpp"
#include "kernels/cuda/device.hpp"
#if defined(SPECWAVE_HAVE_MPI)
#include <mpi.h>
#endif

namespace specwave {

namespace {
std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}
}  // namespace

std::string build_and_hardware_info() {
  std::string out;
  unsigned h5_major = 0, h5_minor = 0, h5_release = 0;
  H5get_libversion(&h5_major, &h5_minor, &h5_release);
  out += fmt::format("specwave {} (git {}), {} build, {}\n", build::version, build::git_hash, build::build_type,
                     build::compiler);
  out += "precisions  fp32, fp64\n";
  out += "methods     fdtd (orders 2..16; cpu, cuda), spectral k-space (cpu, cuda)\n";
  const auto cuda = cuda::query_devices(true);  // a build without the CUDA backend: compiled = false
  if (cuda.compiled)
    out += fmt::format("backends    cpu (OpenMP), cuda (compiled for sm {})\n", build::cuda_architectures);
  else
    out += "backends    cpu (OpenMP); cuda: not compiled (SPECWAVE_CUDA=OFF or no CUDA toolkit at configure time)\n";
#if defined(SPECWAVE_HAVE_MPI)
  char mpi_version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(mpi_version, &len);
  std::string mpi(mpi_version, len);
  mpi = mpi.substr(0, mpi.find_first_of(std::string("\n\0", 2)));  // the first line (len may count the NUL)
  out += fmt::format("MPI         {}; this run: {} rank(s)\n", mpi, Comm::world().size());
#else
  out += "MPI         not compiled (SPECWAVE_MPI=OFF, or no MPI / hdf5-openmpi at configure time)\n";
#endif
  out += fmt::format("HDF5        {}.{}.{} ({} flavour)\n", h5_major, h5_minor, h5_release, build::hdf5_flavour);
  out += fmt::format("FFTW        {}\n", fftw_version);
  out += "hardware\n";
  out += fmt::format("  CPU       {}, {} logical cores, OpenMP max threads {}\n", cpu_model(),
                     sysconf(_SC_NPROCESSORS_ONLN), omp_get_max_threads());
  out += fmt::format("  memory    {:.1f} GiB available\n", available_memory_bytes() / double(1ull << 30));
  if (cuda.compiled) {
    out += fmt::format(
        "  CUDA      runtime {}.{}, driver {}\n", cuda.runtime_version / 1000, cuda.runtime_version % 1000 / 10,
        cuda.driver_version ? fmt::format("{}.{}", cuda.driver_version / 1000, cuda.driver_version % 1000 / 10)
                            : std::string("none"));
    // cuBLAS is opened only here and by a device optimiser (kernels/cuda/cublas_library.hpp): say whether it can be.
    const std::string blas_problem = cuda::cublas_library_problem();
    out += blas_problem.empty() ? fmt::format("  cuBLAS    {} (opened at run time, for the optimiser on the device)\n",
                                              cuda::cublas_library_name())
                                : fmt::format("  cuBLAS    not usable: {}\n", blas_problem);
    if (!cuda.usable) out += fmt::format("  GPU       none usable: {}\n", cuda.reason);
    for (const auto& d : cuda.devices)
      if (!d.problem.empty())
        out +=
            fmt::format("  GPU {}     {}: {}\n", d.index, d.name.empty() ? std::string("unknown") : d.name, d.problem);
      else
        out += fmt::format("  GPU {}     {}, compute capability {}.{}, {} SMs, {:.1f} GiB ({:.1f} GiB free)\n", d.index,
                           d.name, d.compute_major, d.compute_minor, d.multiprocessors,
                           d.total_bytes / double(1ull << 30), d.free_bytes / double(1ull << 30));
  }
  return out;
}

}  // namespace specwave
