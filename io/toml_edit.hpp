#pragma once
// Reading and editing TOML documents as the sweep expansion does (docs/batch.md): the spelling of values, a TOML
// writer that keeps floats in their shortest exact spelling, and case-file key paths ("shots[*].sources[0].x")
// to find or set nodes. The case-file parser (io/case_file.cpp) names node types with the same words.
#include <toml++/toml.h>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace specwave::io {

// "string", "integer", "float", "boolean", "array", "table" or "date/time".
const char* type_name(const toml::node& n);

// How a value is spelled: as TOML, as JSON, or as plain text for names and messages.
enum class Spelling { toml, json, text };
// Shortest spelling that reads back exactly, with ".0" kept on whole numbers so that TOML and JSON see a float.
std::string float_spelling(double v);
std::string spell(const toml::node& n, Spelling how);

// The document below `t` as TOML text, appended to `out`: key-values first, then sub-tables ([a.b]) and arrays of
// tables ([[a.b]]), recursively; `path` is the dotted key of `t` ("" for the root). Our own writer, so that floats
// keep their shortest spelling (0.3, not toml++'s 0.29999999999999999).
void write_toml(std::string& out, const toml::table& t, const std::string& path);

// `text` (a TOML document) parsed and written back by write_toml, without its comments and layout and without the
// dotted keys in `drop` ("run.threads"; "output": a whole table): equal for two documents that say the same thing
// but for those keys. `text` itself when it does not parse.
std::string canonical_toml(const std::string& text, std::initializer_list<std::string_view> drop);

// A dotted case-file key path: each segment a name, optionally with an entry index or [*] (every entry).
inline constexpr int kTableKey = -1, kEveryEntry = -2;
struct KeySegment {
  std::string name;
  int index = kTableKey;  // kTableKey, kEveryEntry ([*]) or an entry
};
// Empty when `key` is not a key path.
std::vector<KeySegment> parse_key_path(const std::string& key);

// Called with what is wrong and the fix; must throw.
using KeyPathFailure = std::function<void(std::string_view what, std::string_view fix)>;
// Sets path[k..] below `t` to `value`: missing tables are created, entries of arrays must exist ([*]: every one);
// `done` is the dotted key of `t`. What cannot be set goes to `fail`.
void set_key(toml::table& t, const std::vector<KeySegment>& path, std::size_t k, const toml::node& value,
             const std::string& done, const KeyPathFailure& fail);
// The nodes at path[k..] below `t` that exist ([*]: every entry), appended to `out`.
void find_nodes(toml::table& t, const std::vector<KeySegment>& path, std::size_t k, std::vector<toml::node*>& out);

}  // namespace specwave::io
