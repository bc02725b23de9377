// The MPI error path: the last rank throws while the others wait in a collective. main's catch block calls
// fatal_error(), which must end every rank (MPI_Abort) with a non-zero exit code and the failing rank's
// message, instead of leaving the others waiting forever. Run by CTest under mpiexec -n 2 through
// expect_failure.cmake (exit code non-zero, message present, within a timeout).
#include <fmt/format.h>

#include "solver/case/errors.hpp"
#include "solver/parallel/comm.hpp"

using namespace specwave;

int main(int argc, char** argv) {
  MpiSession mpi(argc, argv);
  try {
    const Comm world = Comm::world();
    if (world.rank() == world.size() - 1)
      throw Error(ExitCode::input_error,
                  fmt::format("rank {} cannot read its part of the model (deliberate test failure)", world.rank()));
    for (;;) world.barrier();  // never completes: the last rank does not join
  } catch (const Error& e) {
    return fatal_error(fmt::format("mpi_failure_check: error: {}", e.what()), int(e.code()));
  } catch (const std::exception& e) {
    return fatal_error(fmt::format("mpi_failure_check: internal error: {}", e.what()), 1);
  }
}
