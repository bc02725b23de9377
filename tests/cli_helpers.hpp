#pragma once
// The command-line tests (test_cli, test_sweep, test_invert): running the specwave binary (SPECWAVE_BINARY, its
// path, defined by specwave_test in tests/CMakeLists.txt) and the small case they write and edit as TOML text.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

namespace specwave::testing {

// What a command did: its exit status (-1 when it did not start or did not exit normally, e.g. killed by a
// signal) and its stdout and stderr, interleaved as written.
struct Result {
  int code;
  std::string output;
};

// Runs `command` through the shell (popen) with its stderr sent to its stdout, and waits for it.
inline Result run_command(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  while (pipe && fgets(buf.data(), buf.size(), pipe)) out += buf.data();
  const int status = pipe ? pclose(pipe) : -1;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// Runs the specwave binary with `args` (one shell string); `env`, when given, goes before the program (settings
// such as PATH=...).
inline Result run_specwave(const std::string& args, const std::string& env = "") {
  return run_command(env + (env.empty() ? "" : " ") + SPECWAVE_BINARY + " " + args);
}

// The command-line tests' small case as TOML text: 40^3 points 10 m apart, homogeneous 2000 m/s, 0.2 s, one shot
// of one 10 Hz source at each entry of `shot_positions` (TOML arrays, in order), one receiver at
// [200.0, 200.0, 280.0], a PML of 10 points, output to "out" without plots. Tests edit it by replacing whole
// lines of it (test_cli's replaced), so the text of each line is part of this contract.
inline std::string cli_base_case(const std::string& name,
                                 const std::vector<std::string>& shot_positions = {"[200.0, 200.0, 200.0]"}) {
  std::string text = "name = \"" + name +
                     "\"\n"
                     "[grid]\n"
                     "shape = [40, 40, 40]\n"
                     "spacing = 10.0\n"
                     "[model]\n"
                     "type = \"homogeneous\"\n"
                     "velocity = 2000.0\n"
                     "[time]\n"
                     "duration = 0.2\n";
  for (const std::string& position : shot_positions)
    text +=
        "[[shots]]\n"
        "[[shots.sources]]\n"
        "position = " +
        position +
        "\n"
        "peak_frequency = 10.0\n";
  return text +
         "[receivers]\n"
         "points = [[200.0, 200.0, 280.0]]\n"
         "[boundary]\n"
         "pml_width = 10\n"
         "[output]\n"
         "directory = \"out\"\n"
         "plots = false\n";
}

}  // namespace specwave::testing
