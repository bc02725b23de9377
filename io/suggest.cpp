#include "io/suggest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>

namespace specwave::io {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      const bool same =
          std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
      diag = up;
    }
  }
  return row.back();
}

std::string suggest(std::string_view got, const std::vector<std::string_view>& candidates, std::string_view otherwise) {
  // Words users write for a candidate that spelling does not find (a GPU backend is "cuda", not the nearer "cpu").
  static constexpr std::pair<std::string_view, std::string_view> synonyms[] = {
      {"gpu", "cuda"}, {"nvidia", "cuda"}, {"rho", "density"}, {"vs", "shear_velocity"}, {"vp", "velocity"}};
  std::string lower(got);
  for (char& ch : lower) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  for (const auto& [word, meant] : synonyms)
    if (lower == word && std::find(candidates.begin(), candidates.end(), meant) != candidates.end())
      return fmt::format("did you mean '{}'?", meant);
  std::string_view best;
  std::size_t best_d = SIZE_MAX;
  for (auto c : candidates) {
    const bool prefix = got.size() >= 3 && (c.substr(0, got.size()) == got || got.substr(0, c.size()) == c);
    const std::size_t d = prefix ? 1 : edit_distance(got, c);
    if (d < best_d) best_d = d, best = c;
  }
  if (best_d <= std::max<std::size_t>(2, got.size() / 3)) return fmt::format("did you mean '{}'?", best);
  return std::string(otherwise);
}

}  // namespace specwave::io
