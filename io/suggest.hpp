#pragma once
// "did you mean" for a mistyped name (a case-file key or value, a command): the closest candidate by edit
// distance (case-insensitive), or one that the name is a prefix of.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace specwave::io {

std::size_t edit_distance(std::string_view a, std::string_view b);
// "did you mean 'x'?" when a candidate is close enough (distance <= max(2, |got| / 3), or a prefix of 3+ letters),
// else `otherwise`.
std::string suggest(std::string_view got, const std::vector<std::string_view>& candidates, std::string_view otherwise);

}  // namespace specwave::io
