#include "io/json.hpp"

#include <cmath>
#include <cstdlib>
#include <fmt/format.h>

#include "solver/errors.hpp"

namespace specwave::io {
namespace {

struct JsonParser {
  std::string_view s;
  const std::string& what;
  std::size_t i = 0;
  int depth = 0;

  [[noreturn]] void fail(std::string_view expected) const {
    const std::string found = i < s.size() ? fmt::format("'{}'", s[i]) : std::string("the end of the text");
    throw Error(ExitCode::input_error, fmt::format("{}: invalid JSON at byte {}: expected {}, found {}; the file is damaged: "
                                                   "remove it or write it again",
                                                   what, i, expected, found));
  }
  void space() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  }
  bool eat(char c) {
    space();
    if (i < s.size() && s[i] == c) return ++i, true;
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(fmt::format("'{}'", c));
  }
  bool word(std::string_view w) {
    if (s.substr(i, w.size()) != w) return false;
    i += w.size();
    return true;
  }

  std::string string() {
    expect('"');
    std::string out;
    while (i < s.size() && s[i] != '"') {
      char c = s[i++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i >= s.size()) fail("an escape");
      c = s[i++];
      switch (c) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u': {
          if (i + 4 > s.size()) fail("4 hex digits");
          const unsigned long cp = std::strtoul(std::string(s.substr(i, 4)).c_str(), nullptr, 16);
          i += 4;
          // UTF-8 of a code point of the Basic Multilingual Plane (surrogate pairs are not needed here).
          if (cp < 0x80) out += char(cp);
          else if (cp < 0x800) out += char(0xC0 | (cp >> 6)), out += char(0x80 | (cp & 0x3F));
          else out += char(0xE0 | (cp >> 12)), out += char(0x80 | ((cp >> 6) & 0x3F)), out += char(0x80 | (cp & 0x3F));
          break;
        }
        default: out += c;  // \" \\ \/
      }
    }
    if (i >= s.size()) fail("'\"' closing the string");
    ++i;
    return out;
  }

  Json value() {
    if (++depth > 100) fail("less nesting");
    space();
    Json v;
    if (i >= s.size()) fail("a value");
    const char c = s[i];
    if (c == '{') {
      ++i;
      v.type = Json::Type::object;
      if (!eat('}')) {
        do {
          space();
          v.keys.push_back(string());
          expect(':');
          v.items.push_back(value());
        } while (eat(','));
        expect('}');
      }
    } else if (c == '[') {
      ++i;
      v.type = Json::Type::array;
      if (!eat(']')) {
        do v.items.push_back(value());
        while (eat(','));
        expect(']');
      }
    } else if (c == '"') {
      v.type = Json::Type::string;
      v.text = string();
    } else if (word("true")) {
      v.type = Json::Type::boolean;
      v.boolean = true;
    } else if (word("false")) {
      v.type = Json::Type::boolean;
    } else if (word("null")) {
      v.type = Json::Type::null;
    } else {
      const std::string rest(s.substr(i, 64));
      char* end = nullptr;
      v.number = std::strtod(rest.c_str(), &end);
      const std::size_t n = std::size_t(end - rest.c_str());
      if (n == 0) fail("a value");
      v.type = Json::Type::number;
      v.integer = rest.substr(0, n).find_first_of(".eE") == std::string::npos;
      i += n;
    }
    --depth;
    return v;
  }
};

}  // namespace

const Json* Json::get(std::string_view key) const {
  if (type != Type::object) return nullptr;
  for (std::size_t k = 0; k < keys.size(); ++k)
    if (keys[k] == key) return &items[k];
  return nullptr;
}

std::optional<double> Json::get_number(std::string_view key) const {
  const Json* v = get(key);
  if (v && v->type == Type::number) return v->number;
  return std::nullopt;
}

std::optional<std::string> Json::get_string(std::string_view key) const {
  const Json* v = get(key);
  if (v && v->type == Type::string) return v->text;
  return std::nullopt;
}

Json parse_json(std::string_view text, const std::string& what) {
  JsonParser p{text, what};
  Json v = p.value();
  p.space();
  if (p.i != text.size()) p.fail("the end of the text");
  return v;
}

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", int(c));
        else out += c;
    }
  }
  return out + "\"";
}

std::string json_number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : "null"; }

}  // namespace specwave::io
