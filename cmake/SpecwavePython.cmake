# The Python module (python/, docs/python.md): SPECWAVE_PYTHON = AUTO builds it when pybind11 (pybind11-dev), the
# Python headers and numpy are found, ON requires them, OFF skips it. It is built for Debian's interpreter
# (/usr/bin/python3, whose numpy, scipy, torch and mpi4py are Debian packages) unless Python3_EXECUTABLE says
# otherwise. The module links the static libraries into a shared object, so with it every library is compiled as
# position-independent code. -fno-semantic-interposition keeps GCC free to inline and clone the libraries' global
# functions as it does under the default -fPIE (nothing here relies on a symbol being interposed at load time).
set(SPECWAVE_PYTHON AUTO CACHE STRING "Build the Python module (pybind11, numpy): AUTO, ON, OFF")
set_property(CACHE SPECWAVE_PYTHON PROPERTY STRINGS AUTO ON OFF)
set(SPECWAVE_HAVE_PYTHON OFF)
if(NOT SPECWAVE_PYTHON STREQUAL "OFF")
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3)
  endif()
  find_package(Python3 COMPONENTS Interpreter Development.Module NumPy QUIET)
  if(Python3_FOUND AND Python3_NumPy_FOUND)
    set(PYBIND11_FINDPYTHON ON)
    find_package(pybind11 CONFIG QUIET)
  endif()
  if(pybind11_FOUND)
    set(SPECWAVE_HAVE_PYTHON ON)
    set(CMAKE_POSITION_INDEPENDENT_CODE ON)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" OR CMAKE_CXX_COMPILER_ID MATCHES "Clang")
      add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fno-semantic-interposition>)
    endif()
  elseif(SPECWAVE_PYTHON STREQUAL "ON")
    message(FATAL_ERROR "SPECWAVE_PYTHON=ON but pybind11, the Python headers or numpy were not found "
      "(Debian: apt-get install pybind11-dev python3-dev python3-numpy)")
  endif()
endif()
