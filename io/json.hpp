#pragma once
// A small JSON reader and writer helpers for the bookkeeping files of sweeps (manifest.json, status.json, run.json,
// iterations.jsonl): RFC 8259 values, objects kept in file order. Not for large data.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace specwave::io {

struct Json {
  enum class Type { null, boolean, number, string, array, object };
  Type type = Type::null;
  bool boolean = false;
  double number = 0;
  bool integer = false;           // a number written without fraction or exponent
  std::string text;               // string value
  std::vector<Json> items;        // array elements, or object values (in file order)
  std::vector<std::string> keys;  // object keys, parallel to items

  // The member `key` of an object (null when absent or not an object).
  const Json* get(std::string_view key) const;
  std::optional<double> get_number(std::string_view key) const;
  std::optional<std::string> get_string(std::string_view key) const;
};

// Parses one JSON value (surrounding white space allowed). Errors: ExitCode::input_error naming `what` (the file)
// and the byte offset.
Json parse_json(std::string_view text, const std::string& what);

// `s` as a JSON string literal, quoted and escaped.
std::string json_quote(std::string_view s);
// A double as a JSON number that reads back exactly (null when not finite).
std::string json_number(double v);

}  // namespace specwave::io
