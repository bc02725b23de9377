#include "solver/propagators/capabilities.hpp"

#include <stdexcept>

namespace specwave {

std::span<const Capability> capabilities() {
  static const std::array<Capability, 4> rows{fdtd_capability(BackendKind::cpu), fdtd_capability(BackendKind::cuda),
                                              spectral_capability(BackendKind::cpu),
                                              spectral_capability(BackendKind::cuda)};
  return rows;
}

const Capability& capability(Method method, BackendKind backend) {
  for (const Capability& row : capabilities())
    if (row.method == method && row.backend == backend) return row;
  throw std::logic_error(std::string("capability: no row for method ") + to_string(method) + " on backend " +
                         to_string(backend) + " (the backend must be resolved)");
}

std::string decomposed_combinations() {
  std::string out;
  const auto rows = capabilities();
  for (std::size_t i = 0; i < rows.size();) {
    const Method method = rows[i].method;
    std::string backends;
    for (; i < rows.size() && rows[i].method == method; ++i)
      if (rows[i].decomposed) backends += (backends.empty() ? "" : " and ") + std::string(to_string(rows[i].backend));
    if (!backends.empty()) out += (out.empty() ? "" : ", ") + std::string(to_string(method)) + " on " + backends;
  }
  return out;
}

}  // namespace specwave
