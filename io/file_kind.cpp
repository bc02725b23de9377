#include "io/file_kind.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include "solver/case/errors.hpp"

namespace specwave::io {

std::optional<std::string> not_a_regular_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;  // missing (or unreadable): the reader says which
  if (S_ISREG(st.st_mode)) return std::nullopt;
  if (S_ISFIFO(st.st_mode)) return "a FIFO (named pipe)";
  if (S_ISDIR(st.st_mode)) return "a directory";
  if (S_ISCHR(st.st_mode)) return "a character device";
  if (S_ISBLK(st.st_mode)) return "a block device";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  return "another kind of file";
}

void require_regular_file(const std::string& path, const std::string& what, const std::string& fix) {
  if (const auto kind = not_a_regular_file(path))
    throw Error(ExitCode::input_error, fmt::format("{}: {} is {}, not a regular file; {}", path, what, *kind, fix));
}

}  // namespace specwave::io
