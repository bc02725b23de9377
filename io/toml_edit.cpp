#include "io/toml_edit.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cctype>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "io/json.hpp"

namespace specwave::io {
namespace {

bool is_table_array(const toml::node& n) {
  const toml::array* a = n.as_array();
  return a && !a->empty() && std::all_of(a->begin(), a->end(), [](const toml::node& e) { return e.is_table(); });
}

std::string toml_key(std::string_view k) {
  const bool bare = !k.empty() && std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
  return bare ? std::string(k) : json_quote(k);
}

std::string toml_inline(const toml::node& n) {
  if (const toml::table* t = n.as_table()) {
    std::string out;
    for (auto&& [k, v] : *t) out += (out.empty() ? "{ " : ", ") + toml_key(k.str()) + " = " + toml_inline(v);
    return out.empty() ? "{}" : out + " }";
  }
  if (const toml::array* a = n.as_array()) {
    std::string out = "[";
    for (std::size_t k = 0; k < a->size(); ++k) out.append(k ? ", " : "").append(toml_inline(*a->get(k)));
    return out + "]";
  }
  return spell(n, Spelling::toml);
}

// What cannot be set goes to `fail`, which must throw; this stops a caller's callback that returns.
[[noreturn]] void failed(const KeyPathFailure& fail, std::string_view what, std::string_view fix) {
  fail(what, fix);
  throw std::logic_error("set_key: the failure callback returned");
}

}  // namespace

const char* type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "string";
    case toml::node_type::integer: return "integer";
    case toml::node_type::floating_point: return "float";
    case toml::node_type::boolean: return "boolean";
    case toml::node_type::array: return "array";
    case toml::node_type::table: return "table";
    default: return "date/time";
  }
}

std::string float_spelling(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // n: inf, nan
  return s;
}

std::string spell(const toml::node& n, Spelling how) {
  if (auto i = n.as_integer()) return fmt::format("{}", i->get());
  if (auto f = n.as_floating_point())
    return how == Spelling::text ? fmt::format("{}", f->get()) : float_spelling(f->get());
  if (auto b = n.as_boolean()) return b->get() ? "true" : "false";
  if (auto s = n.as_string()) {
    if (how == Spelling::text) return s->get();
    std::string q = json_quote(s->get());  // valid in TOML too, once DEL is escaped
    for (std::size_t p = q.find('\x7f'); p != std::string::npos; p = q.find('\x7f', p)) q.replace(p, 1, "\\u007f");
    return q;
  }
  if (auto a = n.as_array()) {
    std::string out = "[";
    for (std::size_t k = 0; k < a->size(); ++k)
      out.append(k ? (how == Spelling::text ? "," : ", ") : "").append(spell(*a->get(k), how));
    return out + "]";
  }
  if (n.is_table()) return "{...}";
  std::ostringstream os;  // dates and times: their TOML spelling
  n.visit([&](auto&& x) { os << x; });
  return how == Spelling::json ? json_quote(os.str()) : os.str();
}

void write_toml(std::string& out, const toml::table& t, const std::string& path) {
  for (auto&& [k, v] : t)
    if (!v.is_table() && !is_table_array(v)) out += toml_key(k.str()) + " = " + toml_inline(v) + "\n";
  for (auto&& [k, v] : t) {
    const std::string p = path.empty() ? toml_key(k.str()) : path + "." + toml_key(k.str());
    if (const toml::table* sub = v.as_table()) {
      out += "\n[" + p + "]\n";
      write_toml(out, *sub, p);
    } else if (is_table_array(v)) {
      for (const toml::node& e : *v.as_array()) {
        out += "\n[[" + p + "]]\n";
        write_toml(out, *e.as_table(), p);
      }
    }
  }
}

std::vector<KeySegment> parse_key_path(const std::string& key) {
  static const std::regex segment(R"(^([A-Za-z0-9_-]+)(\[([0-9]+|\*)\])?$)");
  std::vector<KeySegment> out;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = key.find('.', begin);
    const std::string s = key.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    std::smatch m;
    if (!std::regex_match(s, m, segment)) return {};
    KeySegment seg{m[1].str()};
    if (m[2].matched) seg.index = m[3].str() == "*" ? kEveryEntry : std::stoi(m[3].str());
    out.push_back(seg);
    if (end == std::string::npos) return out;
    begin = end + 1;
  }
}

void set_key(toml::table& t, const std::vector<KeySegment>& path, std::size_t k, const toml::node& value,
             const std::string& done, const KeyPathFailure& fail) {
  const KeySegment& seg = path[k];
  const bool last = k + 1 == path.size();
  const std::string here = done.empty() ? seg.name : done + "." + seg.name;
  if (seg.index == kTableKey) {
    if (last) {
      t.insert_or_assign(seg.name, value);
      return;
    }
    if (!t.contains(seg.name)) t.insert(seg.name, toml::table{});
    toml::node& n = *t.get(seg.name);
    if (n.is_array())
      failed(fail, fmt::format("'{}' is an array in the base case", here),
             fmt::format("give an entry: {}[0], or {}[*] for every one", here, here));
    if (!n.is_table())
      failed(fail, fmt::format("'{}' is a {} in the base case, not a table", here, type_name(n)),
             "check the key in docs/case-file.md");
    set_key(*n.as_table(), path, k + 1, value, here, fail);
    return;
  }
  toml::array* a = t.get(seg.name) ? t.get(seg.name)->as_array() : nullptr;
  if (!a)
    failed(fail, fmt::format("the base case has no array '{}'", here),
           "sweep entries the base case has (docs/case-file.md)");
  if (seg.index >= int(a->size()))
    failed(fail, fmt::format("the base case has {} '{}' entries", a->size(), here),
           fmt::format("use an index in 0..{}, or [*] for every entry", int(a->size()) - 1));
  const std::size_t first = seg.index == kEveryEntry ? 0 : std::size_t(seg.index);
  const std::size_t stop = seg.index == kEveryEntry ? a->size() : first + 1;
  for (std::size_t i = first; i < stop; ++i) {
    const std::string entry = fmt::format("{}[{}]", here, i);
    if (last) {
      a->replace(a->cbegin() + std::ptrdiff_t(i), value);
      continue;
    }
    toml::table* sub = a->get(i)->as_table();
    if (!sub)
      failed(fail, fmt::format("'{}' is not a table in the base case", entry), "check the key in docs/case-file.md");
    set_key(*sub, path, k + 1, value, entry, fail);
  }
}

void find_nodes(toml::table& t, const std::vector<KeySegment>& path, std::size_t k, std::vector<toml::node*>& out) {
  const KeySegment& seg = path[k];
  toml::node* n = t.get(seg.name);
  if (!n) return;
  std::vector<toml::node*> here;
  if (seg.index == kTableKey) {
    here.push_back(n);
  } else if (toml::array* a = n->as_array()) {
    for (std::size_t i = 0; i < a->size(); ++i)
      if (seg.index == kEveryEntry || int(i) == seg.index) here.push_back(a->get(i));
  }
  for (toml::node* h : here) {
    if (k + 1 == path.size())
      out.push_back(h);
    else if (toml::table* sub = h->as_table())
      find_nodes(*sub, path, k + 1, out);
  }
}

std::string canonical_toml(const std::string& text, std::initializer_list<std::string_view> drop) {
  toml::table t;
  try {
    t = toml::parse(text);
  } catch (const toml::parse_error&) {
    return text;
  }
  for (std::string_view key : drop) {
    toml::table* at = &t;
    std::size_t dot;
    while (at && (dot = key.find('.')) != std::string_view::npos) {
      at = (*at)[key.substr(0, dot)].as_table();
      key.remove_prefix(dot + 1);
    }
    if (at) at->erase(key);
  }
  std::string out;
  write_toml(out, t, "");
  return out;
}

}  // namespace specwave::io
