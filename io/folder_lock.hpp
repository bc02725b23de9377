#pragma once
// One run per output folder: `forward` and `invert` hold an exclusive lock on output.directory/.specwave.lock for
// the whole run (flock: released by the kernel when the process ends, even killed), so a second run into the same
// folder is refused at once, naming the holder, instead of deleting the first one's partial files.
#include <string>

namespace specwave::io {

class FolderLock {
 public:
  // Creates `directory` if needed and takes the lock; Error(ExitCode::output_error) "output.directory <dir> is in
  // use by another specwave run (<holder>)" when another process holds it, naming its host, pid, command and start
  // time as that process wrote them.
  FolderLock(const std::string& directory, const std::string& command);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace specwave::io
