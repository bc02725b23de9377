#include "io/json.hpp"

#include <fmt/format.h>

#include "solver/case/errors.hpp"

namespace specwave::io {

nlohmann::json parse_json(std::string_view text, const std::string& what) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // The library's text, without its "[json.exception.parse_error.101] " tag: where and what.
    std::string why = e.what();
    if (const auto tag = why.find("] "); why.starts_with("[json.exception") && tag != std::string::npos)
      why = why.substr(tag + 2);
    throw Error(ExitCode::input_error,
                fmt::format("{}: invalid JSON ({}); the file is damaged: remove it or write it again", what, why));
  }
}

const nlohmann::json* get_member(const nlohmann::json& j, std::string_view key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

std::optional<double> get_number(const nlohmann::json& j, std::string_view key) {
  const nlohmann::json* v = get_member(j, key);
  if (v && v->is_number()) return v->get<double>();
  return std::nullopt;
}

std::optional<std::string> get_string(const nlohmann::json& j, std::string_view key) {
  const nlohmann::json* v = get_member(j, key);
  if (v && v->is_string()) return v->get<std::string>();
  return std::nullopt;
}

std::string json_quote(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace specwave::io
