#include "io/text_file.hpp"

#include "io/file_kind.hpp"

#include <unistd.h>

#include <fmt/format.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "solver/case/errors.hpp"

namespace specwave::io {

std::optional<std::string> read_text_file(const std::string& path) {
  if (not_a_regular_file(path)) return std::nullopt;  // a FIFO would block; a directory is no text
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

void write_text_atomically(const std::string& path, const std::string& text, std::string_view fix) {
  const std::string tmp = fmt::format("{}.tmp-{}", path, ::getpid());
  std::FILE* f = nullptr;
  try {
    f = ::fdopen(create_fresh_file(tmp), "w");  // never through a symlink planted at the temporary name
  } catch (const Error&) {
    f = nullptr;
  }
  bool ok = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (f) ok = std::fclose(f) == 0 && ok;
  std::error_code ec;
  if (ok) std::filesystem::rename(tmp, path, ec);
  if (!ok || ec) {
    std::filesystem::remove(tmp, ec);
    throw Error(ExitCode::output_error,
                fmt::format("{}: cannot write (missing folder, disk full or no permission?); {}", path, fix));
  }
}

std::string csv_field(const std::string& field) {
  if (field.find_first_of(",\"\n") == std::string::npos) return field;
  std::string quoted = "\"";
  for (const char c : field) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted += '"';
}

}  // namespace specwave::io
