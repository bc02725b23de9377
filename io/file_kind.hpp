#pragma once
// What a path names, checked before anything opens it: opening a FIFO blocks until a writer comes (a `check` that
// never returns), a device or a directory reads as garbage or fails late. Inputs must be regular files.
#include <optional>
#include <string>
#include <vector>

namespace specwave::io {

// "a FIFO", "a directory", "a character device", "a block device", "a socket", "another kind of file", or
// nullopt when `path` is a regular file (symlinks followed) or does not exist.
std::optional<std::string> not_a_regular_file(const std::string& path);

// Throws Error(ExitCode::input_error) "<path>: <what> is <kind>, not a regular file; <fix>" when the path exists
// and is not a regular file. Nothing is opened.
void require_regular_file(const std::string& path, const std::string& what, const std::string& fix);

// Refuses (Error(ExitCode::output_error)) an output path that is an existing directory, or that names the same file
// as one of `inputs` (an export onto its own input): "<output>: ...; <fix>". Nothing is written.
void check_output_file(const std::string& output, const std::vector<std::string>& inputs, const std::string& fix);

// Creates `path` afresh for writing, never through a symlink and never sharing a file another process opened: an
// existing entry of that name (a file left by a failed run, or a symlink planted there) is unlinked first, then
// the file is created with O_CREAT | O_EXCL | O_NOFOLLOW. Returns the open descriptor; Error(output_error) naming
// the path on failure.
int create_fresh_file(const std::string& path);
// Unlinks an existing entry named `path` (file or symlink, not a directory) so that an exclusive create can follow.
void unlink_stale(const std::string& path);

}  // namespace specwave::io
