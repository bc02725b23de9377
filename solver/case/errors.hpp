#pragma once
// Errors are exceptions with context (what, which file/key, the value, the limit, the fix); only main()
// turns them into a process exit code. The codes are documented in docs/cli.md.
#include <stdexcept>
#include <string>

namespace specwave {

enum class ExitCode : int {
  ok = 0,
  internal = 1,              // a bug or an unexpected system failure
  usage = 2,                 // bad command line
  invalid_case = 3,          // the case file or its inputs are inconsistent (CFL, sampling, geometry, keys, types)
  input_error = 4,           // an input file is missing, unreadable or has the wrong shape/dtype/values
  output_error = 5,          // the output directory or a file in it cannot be written
  resources = 6,             // not enough memory (host or device)
  blow_up = 7,               // the simulation became unstable (NaN / huge amplitude)
  validation_failed = 8,     // `validate` found an error above tolerance
  backend_unavailable = 9,   // the requested backend is not compiled in or has no usable device
  interrupted = 10,          // stopped by a signal
  optimisation_failed = 11,  // `invert`: the line search found no acceptable step
  sweep_incomplete = 12,     // `collect`: some variants of the sweep failed, are missing or have not finished
  submit_failed = 13,        // `sweep --submit`: sbatch is not found or refused the job
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

}  // namespace specwave
