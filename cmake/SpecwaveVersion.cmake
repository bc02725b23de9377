# Version and git hash recorded in every output file (created_by) and printed by `specwave info`.
find_package(Git QUIET)
set(SPECWAVE_GIT_HASH "unknown")
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE _hash OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _rc ERROR_QUIET)
  if(_rc EQUAL 0)
    set(SPECWAVE_GIT_HASH ${_hash})
    execute_process(COMMAND ${GIT_EXECUTABLE} diff --quiet HEAD WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
      RESULT_VARIABLE _dirty ERROR_QUIET)
    if(NOT _dirty EQUAL 0)
      string(APPEND SPECWAVE_GIT_HASH "-dirty")
    endif()
  endif()
endif()
set(SPECWAVE_BUILD_TYPE ${CMAKE_BUILD_TYPE})
configure_file(${CMAKE_CURRENT_LIST_DIR}/build_info.hpp.in ${PROJECT_BINARY_DIR}/generated/specwave/build_info.hpp @ONLY)
