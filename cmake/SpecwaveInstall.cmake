# `cmake --install build --prefix PREFIX` (docs/batch.md, "Installing"): the programs, the static libraries and
# the headers to build against them, the docs, the shipped cases and the Slurm templates.
#   PREFIX/bin                      specwave and the benchmark and validation programs
#   PREFIX/lib/specwave             the static libraries (libspecwave_solver.a, ...)
#   PREFIX/include/specwave         the headers, by their source paths (add -I PREFIX/include/specwave)
#   PREFIX/share/doc/specwave       README.md and docs/
#   PREFIX/share/specwave/cases     the shipped cases (demo, validation, inversion, sweeps)
#   PREFIX/share/specwave/slurm     the Slurm job templates (also compiled into specwave: `sweep --slurm`)
include(GNUInstallDirs)

set(_specwave_programs specwave specwave-bench specwave-gradient-bench specwave-convergence specwave-accuracy)
foreach(_t specwave-gpu-bench specwave-mpi-fdtd-bench specwave-mpi-fft-bench)
  if(TARGET ${_t})
    list(APPEND _specwave_programs ${_t})
  endif()
endforeach()
install(TARGETS ${_specwave_programs} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(_specwave_libraries specwave_solver specwave_io specwave_case specwave_kernels specwave_validation
  specwave_validate)
if(TARGET specwave_cuda)
  list(APPEND _specwave_libraries specwave_cuda)
endif()
install(TARGETS ${_specwave_libraries} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}/specwave)

foreach(_dir kernels io solver validation)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${_dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/specwave/${_dir}
    FILES_MATCHING PATTERN "*.hpp" PATTERN "*.cuh")
endforeach()
install(FILES ${PROJECT_BINARY_DIR}/generated/specwave/build_info.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/specwave/specwave)

install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/cases/ DESTINATION ${CMAKE_INSTALL_DATADIR}/specwave/cases)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/scripts/slurm/ DESTINATION ${CMAKE_INSTALL_DATADIR}/specwave/slurm)
