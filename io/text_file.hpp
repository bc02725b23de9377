#pragma once
// Small text files (sweep manifests, job scripts, summaries): read whole, written atomically, CSV fields.
#include <optional>
#include <string>
#include <string_view>

namespace specwave::io {

// The whole file, or nullopt when it does not exist or cannot be read.
std::optional<std::string> read_text_file(const std::string& path);
// Writes `text` to "<path>.tmp-<pid>" and renames it to `path`, so a reader never sees half a file.
// Errors: ExitCode::output_error naming the path, with `fix` (what the user should do) at the end.
void write_text_atomically(const std::string& path, const std::string& text, std::string_view fix = "check the folder");
// One CSV field (RFC 4180): as it is, or quoted with inner quotes doubled when it holds a comma, quote or newline.
std::string csv_field(const std::string& field);

}  // namespace specwave::io
