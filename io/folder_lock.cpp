#include "io/folder_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>

#include "solver/case/errors.hpp"

namespace specwave::io {
namespace {

std::string read_all(int fd) {
  std::string text;
  char buffer[512];
  ::lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, std::size_t(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return text;
}

}  // namespace

FolderLock::FolderLock(const std::string& directory, const std::string& command) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(directory, ec);
  const std::string path = (fs::path(directory) / ".specwave.lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw Error(ExitCode::output_error, fmt::format("output.directory '{}' cannot be used: cannot open {} ({}); choose "
                                                    "a writable path (output.directory or --output-dir)",
                                                    directory, path, std::strerror(errno)));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string holder = read_all(fd_);
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK)
      throw Error(ExitCode::output_error,
                  fmt::format("output.directory '{}' is in use by another specwave run ({}); wait for it to end, or "
                              "give this run another output.directory (or --output-dir)",
                              directory, holder.empty() ? "holder unknown" : holder));
    throw Error(ExitCode::output_error,
                fmt::format("output.directory '{}': cannot lock {} ({})", directory, path, std::strerror(err)));
  }
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char when[32] = {};
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  const std::string me = fmt::format("host {}, pid {}, specwave {}, since {}\n", host, ::getpid(), command, when);
  if (::ftruncate(fd_, 0) == 0) {
    ::lseek(fd_, 0, SEEK_SET);
    [[maybe_unused]] const ssize_t written = ::write(fd_, me.data(), me.size());
  }
}

FolderLock::~FolderLock() {
  if (fd_ < 0) return;
  [[maybe_unused]] const int truncated = ::ftruncate(fd_, 0);  // no stale holder named after we are gone
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
}

}  // namespace specwave::io
