#pragma once
// TOML case files (docs/case-file.md). Every problem throws specwave::Error with one line
// `<file>:<line>: <key path>: <what is wrong> (<what was found>); <fix>`.
#include <string>
#include "solver/case/case.hpp"
namespace specwave::io {
// Reads the file; relative paths inside are resolved against the file's folder.
// An unreadable file: ExitCode::input_error; anything wrong in it: ExitCode::invalid_case.
Case read_case_file(const std::string& path);
// Parses case text; path_for_messages prefixes errors (and gives the default name, its stem);
// relative paths inside are resolved against base_dir (kept as written when base_dir is empty).
Case parse_case_text(const std::string& text, const std::string& path_for_messages, const std::string& base_dir);
}  // namespace specwave::io
