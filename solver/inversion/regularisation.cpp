#include "solver/inversion/regularisation.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace specwave {

double add_regularisation(const Regularisation& r, const GridSpec& g, std::span<const double> m,
                          std::span<double> gradient) {
  if (r.kind == "none" || r.weight == 0) return 0;
  const bool tv = r.kind == "total_variation";
  if (!tv && r.kind != "tikhonov") throw std::invalid_argument("add_regularisation: unknown kind " + r.kind);
  const int n[3] = {g.shape[0], g.shape[1], g.shape[2]};
  const std::size_t stride[3] = {std::size_t(n[1]) * n[2], std::size_t(n[2]), 1};
  if (tv && !(r.epsilon > 0)) throw std::invalid_argument("add_regularisation: total variation needs epsilon > 0");
  const double eps2 = r.epsilon * r.epsilon;
  const bool grad = !gradient.empty();
  double total = 0;
  // Serial: the sum and the scattered gradient in one fixed order (the same bits on every rank and run).
  for (int z = 0; z < n[0]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[2]; ++x) {
        const int idx[3] = {z, y, x};
        const std::size_t p = std::size_t(z) * stride[0] + std::size_t(y) * stride[1] + std::size_t(x);
        double d[3] = {0, 0, 0}, sum = 0;
        for (int a = 0; a < 3; ++a) {
          if (idx[a] + 1 >= n[a]) continue;
          d[a] = (m[p + stride[a]] - m[p]) / g.spacing[a];
          sum += d[a] * d[a];
        }
        const double s = tv ? std::sqrt(sum + eps2) : 0;
        total += tv ? s : 0.5 * sum;
        if (!grad) continue;
        for (int a = 0; a < 3; ++a) {
          if (idx[a] + 1 >= n[a]) continue;
          const double c = r.weight * (tv ? d[a] / s : d[a]) / g.spacing[a];
          gradient[p + stride[a]] += c;
          gradient[p] -= c;
        }
      }
  return r.weight * total;
}

}  // namespace specwave
