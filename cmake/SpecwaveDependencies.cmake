# Every dependency comes from a Debian package (scripts/setup installs them); nothing is downloaded.
find_package(PkgConfig REQUIRED)
find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
find_package(tomlplusplus REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(PNG REQUIRED)
pkg_check_modules(FFTW REQUIRED IMPORTED_TARGET fftw3 fftw3f)

# MPI: AUTO builds with MPI when an MPI C++ library and Debian's Open MPI flavour of HDF5 are both found; ON
# requires them; OFF builds the serial single-rank code path (solver/parallel/comm.cpp without MPI calls).
# HDF5: Debian ships a serial and an Open MPI flavour side by side; the one that matches MPI is used. Both are found by
# pkg-config under Debian's module names; elsewhere (an HDF5 of a cluster's modules or Spack, whose module is `hdf5`)
# name the module: -DSPECWAVE_HDF5_MPI_PC=hdf5 (a parallel HDF5) or -DSPECWAVE_HDF5_SERIAL_PC=hdf5 (docs/batch.md).
set(SPECWAVE_HDF5_MPI_PC hdf5-openmpi CACHE STRING "pkg-config module of the parallel (MPI) HDF5")
set(SPECWAVE_HDF5_SERIAL_PC hdf5-serial CACHE STRING "pkg-config module of the serial HDF5")
string(TOUPPER "${SPECWAVE_MPI}" _mpi_option)
if(NOT _mpi_option STREQUAL "AUTO")
  if(_mpi_option)
    set(_mpi_option ON)
  else()
    set(_mpi_option OFF)
  endif()
endif()
set(SPECWAVE_HAVE_MPI OFF)
if(NOT _mpi_option STREQUAL "OFF")
  set(MPI_CXX_SKIP_MPICXX ON CACHE BOOL "Do not link the deprecated MPI C++ bindings")
  if(_mpi_option STREQUAL "ON")
    find_package(MPI REQUIRED COMPONENTS CXX)
    pkg_check_modules(HDF5_OPENMPI REQUIRED IMPORTED_TARGET ${SPECWAVE_HDF5_MPI_PC})
  else()
    find_package(MPI QUIET COMPONENTS CXX)
    if(MPI_CXX_FOUND)
      pkg_check_modules(HDF5_OPENMPI QUIET IMPORTED_TARGET ${SPECWAVE_HDF5_MPI_PC})
    endif()
  endif()
  if(MPI_CXX_FOUND AND HDF5_OPENMPI_FOUND)
    set(SPECWAVE_HAVE_MPI ON)
    add_library(specwave_hdf5 INTERFACE)
    target_link_libraries(specwave_hdf5 INTERFACE PkgConfig::HDF5_OPENMPI)
    set(SPECWAVE_HDF5_FLAVOUR "openmpi")
    # FFTW's own MPI transforms, the baseline of the distributed-FFT benchmark (libfftw3-mpi-dev has no .pc file).
    find_library(SPECWAVE_FFTW3_MPI fftw3_mpi)
    find_library(SPECWAVE_FFTW3F_MPI fftw3f_mpi)
    # Open MPI refuses more ranks than cores unless told (the MPI tests run 4 ranks on small CI machines).
    set(SPECWAVE_MPIEXEC_FLAGS "")
    execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _mpiexec_version ERROR_QUIET)
    if(_mpiexec_version MATCHES "Open MPI|OpenRTE")
      set(SPECWAVE_MPIEXEC_FLAGS --oversubscribe)
    endif()
  endif()
endif()
# (Each flavour has its own pkg-config prefix, so that switching SPECWAVE_MPI in a build folder never mixes the
# headers of one with the library of the other.)
if(NOT SPECWAVE_HAVE_MPI)
  pkg_check_modules(HDF5_SERIAL REQUIRED IMPORTED_TARGET ${SPECWAVE_HDF5_SERIAL_PC})
  add_library(specwave_hdf5 INTERFACE)
  target_link_libraries(specwave_hdf5 INTERFACE PkgConfig::HDF5_SERIAL)
  set(SPECWAVE_HDF5_FLAVOUR "serial")
endif()

# CUDA: AUTO builds the backend when a toolkit is found; ON requires it.
set(SPECWAVE_HAVE_CUDA OFF)
if(NOT SPECWAVE_CUDA STREQUAL "OFF")
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    # CMake 3.25 does not know the C++20 flag of recent nvcc; CUDA sources use C++17 (they hold only kernels).
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(SPECWAVE_HAVE_CUDA ON)
  elseif(SPECWAVE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "SPECWAVE_CUDA=ON but no CUDA compiler was found (set CMAKE_CUDA_COMPILER)")
  endif()
endif()

# Flags shared by every specwave target.
add_library(specwave_options INTERFACE)
target_compile_options(specwave_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wno-unknown-pragmas>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${SPECWAVE_NATIVE}>>:-march=native>)
# With -march=native on a CPU with AVX-512, GCC 12's tuning for AMD (znver*) keeps 256-bit vectors and ends each
# loop with up to 7 scalar iterations. The grids users run have rows of 148 or 276 points and CPML ends of 10 or 20,
# so every row has such tails. With 512-bit vectors, on the Zen 4 VM of 2026-12-03, the order-8 step with a CPML of
# 10 at 148^3 went from 6.57 to 5.76 ms (best of 4 interleaved runs); the step without a CPML and the whole runs did
# not move beyond the machine's noise (docs/benchmarks.md). The partial-vector parameter was meant to make each
# remainder one masked iteration, but GCC 12 ignores it on x86 (-fopt-info-vec: a 256-bit iteration, then scalar
# ones; and masked remainders, forced another way, measured no faster: docs/benchmarks.md, 2026-12-05). Both
# flags do nothing where the CPU has no AVX-512.
if(SPECWAVE_NATIVE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(specwave_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-mprefer-vector-width=512 --param=vect-partial-vector-usage=2>)
endif()
# Wrong code from GCC 12.2 (Debian 12) with -march=native on an AVX-512 CPU (found 2026-12-04 on the Zen 4 VM, which
# GCC takes for znver3 + AVX-512): at -O2 and -O3 its SLP vectoriser stored std::vector<double>{2, 2, 2, 2, 0, 0, 0, 0},
# an argument of a lambda in tests/test_imaging.cpp, as one 512-bit broadcast of 2.0 (vpbroadcastq; eight 2s). -O0,
# -mavx2 or -fno-tree-slp-vectorize give the right values; -fno-store-merging does not. SLP is therefore off everywhere
# but in the kernels library, whose loops are vectorised by the loop vectoriser (untouched) and whose every result is
# checked against the Eigen reference; the test that found it keeps the braced list (its weighted[1] == 0 check).
if(SPECWAVE_NATIVE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(specwave_options INTERFACE
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<NOT:$<STREQUAL:$<TARGET_PROPERTY:NAME>,specwave_kernels>>>:-fno-tree-slp-vectorize>)
endif()
if(SPECWAVE_SANITIZE)  # ASan + UBSan, every UB report fatal (scripts/sanitize)
  target_compile_options(specwave_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer>)
  target_link_options(specwave_options INTERFACE -fsanitize=address,undefined)
endif()
# Coverage for libFuzzer (scripts/fuzz) in the libraries the fuzz targets exercise: the readers and parsers (io/,
# solver/case, solver/: sweep files, plans). The kernels and the Eigen reference are left uninstrumented: the
# fuzzers never reach them, and the same build runs the unit tests under ASan + UBSan (scripts/sanitize), where
# instrumented Eigen loops ran 3x slower.
add_library(specwave_fuzz_coverage INTERFACE)
if(SPECWAVE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "SPECWAVE_FUZZ=ON needs clang (-DCMAKE_CXX_COMPILER=clang++); scripts/fuzz configures it")
  endif()
  target_compile_options(specwave_fuzz_coverage INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>)
endif()
target_include_directories(specwave_options INTERFACE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)
target_link_libraries(specwave_options INTERFACE OpenMP::OpenMP_CXX)
if(SPECWAVE_HAVE_CUDA)
  target_compile_definitions(specwave_options INTERFACE SPECWAVE_HAVE_CUDA=1)
endif()
if(SPECWAVE_HAVE_MPI)
  target_compile_definitions(specwave_options INTERFACE SPECWAVE_HAVE_MPI=1)
  target_link_libraries(specwave_options INTERFACE MPI::MPI_CXX)
endif()
