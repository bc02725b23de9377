#pragma once
// JSON of the bookkeeping files of sweeps (manifest.json, status.json, run.json, iterations.jsonl,
// submissions.jsonl), through nlohmann::json (Debian nlohmann-json3-dev). Not for large data.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace specwave::io {

// Parses one JSON value (surrounding white space allowed). Errors: ExitCode::input_error naming `what` (the file)
// with the library's message (line and column).
nlohmann::json parse_json(std::string_view text, const std::string& what);

// Optional members of an object: nullptr / nullopt when `j` is not an object, the member is absent, or (for the
// typed getters) of another type.
const nlohmann::json* get_member(const nlohmann::json& j, std::string_view key);
std::optional<double> get_number(const nlohmann::json& j, std::string_view key);
std::optional<std::string> get_string(const nlohmann::json& j, std::string_view key);

// `s` as a JSON string literal, quoted and escaped (also a valid TOML basic string but for DEL, which it keeps).
// Bytes that are not UTF-8 become U+FFFD.
std::string json_quote(std::string_view s);

}  // namespace specwave::io
