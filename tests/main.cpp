#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "io/hdf5.hpp"

int main(int argc, char** argv) {
  specwave::io::h5::silence_library_errors();
  doctest::Context context(argc, argv);
  return context.run();
}
