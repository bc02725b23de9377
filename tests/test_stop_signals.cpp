// The stop signals' handler (solver/forward/checkpoint.cpp, docs/cli.md "Checkpoints and restart"), in child
// processes: a SIGTERM repeated within a second (GNU timeout and a kill of the process group deliver it twice) and a
// SIGTERM after SIGUSR1 (Slurm's warning, then its time limit) are one stop request, to be acted on at the next step
// boundary; a second SIGTERM a second or more after the first ends the process at once.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <thread>

#include "solver/forward/checkpoint.hpp"

using namespace specwave;

namespace {

// Runs `signals` in a child with the handlers installed: its exit code (the stop signal it recorded), or 128 + the
// signal that ended it.
template <class Signals>
int child_status(Signals&& signals) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    install_stop_handlers();
    signals();
    _exit(stop_signal());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST_CASE("stop signals: a SIGTERM repeated at once or after SIGUSR1 is one request; one a second later ends the run") {
  CHECK(child_status([] { std::raise(SIGTERM); }) == SIGTERM);
  CHECK(child_status([] {
          std::raise(SIGTERM);
          std::raise(SIGTERM);
        }) == SIGTERM);
  CHECK(child_status([] {
          std::raise(SIGUSR1);
          std::raise(SIGTERM);
        }) == SIGUSR1);
  CHECK(child_status([] {
          std::raise(SIGINT);
          std::this_thread::sleep_for(std::chrono::milliseconds(1100));
          std::raise(SIGTERM);
        }) == 128 + SIGTERM);
}
