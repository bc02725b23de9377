#pragma once
// What a path names, checked before anything opens it: opening a FIFO blocks until a writer comes (a `check` that
// never returns), a device or a directory reads as garbage or fails late. Inputs must be regular files.
#include <optional>
#include <string>

namespace specwave::io {

// "a FIFO", "a directory", "a character device", "a block device", "a socket", "another kind of file", or
// nullopt when `path` is a regular file (symlinks followed) or does not exist.
std::optional<std::string> not_a_regular_file(const std::string& path);

// Throws Error(ExitCode::input_error) "<path>: <what> is <kind>, not a regular file; <fix>" when the path exists
// and is not a regular file. Nothing is opened.
void require_regular_file(const std::string& path, const std::string& what, const std::string& fix);

}  // namespace specwave::io
