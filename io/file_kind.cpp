#include "io/file_kind.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

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

void check_output_file(const std::string& output, const std::vector<std::string>& inputs, const std::string& fix) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(output, ec))
    throw Error(ExitCode::output_error, fmt::format("{}: is a directory; name the file to write; {}", output, fix));
  for (const std::string& input : inputs) {
    const bool same = fs::exists(output, ec) ? fs::equivalent(output, input, ec)
                                             : fs::weakly_canonical(output, ec) == fs::weakly_canonical(input, ec);
    if (same)
      throw Error(
          ExitCode::output_error,
          fmt::format("{}: is the input {} itself; writing it would destroy the input; {}", output, input, fix));
  }
}

void unlink_stale(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode) && ::unlink(path.c_str()) != 0)
    throw Error(ExitCode::output_error,
                fmt::format("{}: cannot replace it ({}); check the folder's permissions", path, std::strerror(errno)));
}

int create_fresh_file(const std::string& path) {
  unlink_stale(path);
  const int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error(ExitCode::output_error, fmt::format("{}: cannot create it ({}); check that the folder exists and is "
                                                    "writable",
                                                    path, std::strerror(errno)));
  return fd;
}

}  // namespace specwave::io
