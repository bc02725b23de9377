#include "solver/parallel/decomposition.hpp"

#include <fmt/format.h>

#include <limits>

#include "solver/case/errors.hpp"

namespace specwave {

long long halo_exchange_points(const Dims3& shape, const Dims3& p, int halo) {
  long long total = 0;
  for (int a = 0; a < 3; ++a) {
    const long long area = 1LL * shape[(a + 1) % 3] * shape[(a + 2) % 3];
    total += 2LL * (p[a] - 1) * halo * area;
  }
  return total;
}

Dims3 choose_process_grid(const Dims3& shape, int ranks, int halo, const std::optional<Dims3>& requested) {
  if (ranks < 1) throw Error(ExitCode::invalid_case, fmt::format("{} ranks: need at least 1", ranks));
  if (requested) {
    const Dims3 p = *requested;
    if (p[0] < 1 || p[1] < 1 || p[2] < 1 || p[0] * p[1] * p[2] != ranks)
      throw Error(ExitCode::invalid_case,
                  fmt::format("process grid [{}, {}, {}] does not multiply to the {} ranks of this run; give a grid "
                              "whose product is {} or remove it to let specwave choose",
                              p[0], p[1], p[2], ranks, ranks));
    return p;
  }
  Dims3 best{ranks, 1, 1};
  long long best_cost = std::numeric_limits<long long>::max();
  for (int pz = 1; pz <= ranks; ++pz) {
    if (ranks % pz) continue;
    for (int py = 1; py <= ranks / pz; ++py) {
      if ((ranks / pz) % py) continue;
      const Dims3 p{pz, py, ranks / pz / py};
      if (p[0] > shape[0] || p[1] > shape[1] || p[2] > shape[2]) continue;
      const long long cost = halo_exchange_points(shape, p, halo);
      // Ties go to more ranks along z, then y: each rank's block then stays long and contiguous in x.
      if (cost < best_cost || (cost == best_cost && (p[0] > best[0] || (p[0] == best[0] && p[1] > best[1])))) {
        best = p;
        best_cost = cost;
      }
    }
  }
  return best;
}

Subdomain subdomain_of(const Dims3& shape, const Dims3& p, int rank) {
  Subdomain s;
  s.coords = {rank / (p[1] * p[2]), rank / p[2] % p[1], rank % p[2]};
  for (int a = 0; a < 3; ++a) {
    const int base = shape[a] / p[a], extra = shape[a] % p[a], i = s.coords[a];
    s.extent[a] = base + (i < extra ? 1 : 0);
    s.begin[a] = i * base + std::min(i, extra);
  }
  return s;
}

int block_coordinate(int n, int p, int i) {
  const int base = n / p, extra = n % p;
  const int big = extra * (base + 1);  // points in the first `extra` blocks (base + 1 each)
  return i < big ? i / (base + 1) : extra + (i - big) / base;
}

Block block_of(const Dims3& shape, const Dims3& p, int rank) {
  Block b;
  b.shape = shape;
  b.process_grid = p;
  b.sub = subdomain_of(shape, p, rank);
  for (int a = 0; a < 3; ++a)
    for (int side = 0; side < 2; ++side) {
      Dims3 c = b.sub.coords;
      c[a] += side == 0 ? -1 : 1;
      b.neighbour[a][side] = rank_of(p, c);
    }
  return b;
}

int owner_of(const Dims3& shape, const Dims3& p, int z, int y, int x) {
  return rank_of(p, {block_coordinate(shape[0], p[0], z), block_coordinate(shape[1], p[1], y),
                     block_coordinate(shape[2], p[2], x)});
}

int rank_of(const Dims3& p, const Dims3& c) {
  for (int a = 0; a < 3; ++a)
    if (c[a] < 0 || c[a] >= p[a]) return -1;
  return (c[0] * p[1] + c[1]) * p[2] + c[2];
}

void check_decomposition(const Dims3& shape, const Dims3& p, int halo, int pml_width, int layer_extra) {
  // Every decomposed axis has an absorbing layer on at least one face (a free surface removes only the top
  // one), so the thinnest block must hold both the stencil halo and a whole layer.
  const int layer = pml_width > 0 ? pml_width + layer_extra : 0;
  const int limit = std::max(halo, layer);
  for (int a = 0; a < 3; ++a) {
    if (p[a] == 1) continue;
    const int thinnest = shape[a] / p[a];
    if (thinnest < limit)
      throw Error(
          ExitCode::invalid_case,
          fmt::format("{} ranks along {} give subdomains of {} points, fewer than the {} of {} (stencil halo {}, "
                      "absorbing layer {}); use fewer ranks along {}, a larger grid, or a thinner layer",
                      p[a], "zyx"[a], thinnest, limit, halo >= layer ? "the stencil halo" : "the absorbing layer", halo,
                      layer_extra > 0 ? fmt::format("{} + {}", pml_width, layer_extra) : fmt::format("{}", pml_width),
                      "zyx"[a]));
  }
}

}  // namespace specwave
