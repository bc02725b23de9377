#pragma once
// The halo exchange geometry of a domain-decomposed FDTD block, shared by the CPU and CUDA propagators
// (docs/architecture.md, "FDTD domain decomposition"): which faces have a neighbour, which planes leave and
// arrive, the shell of points updated before the exchange starts, and the sources that lie in it.
#include <vector>

#include "kernels/fdtd_step.hpp"
#include "solver/parallel/decomposition.hpp"
#include "solver/propagators/fdtd/fdtd_setup.hpp"

namespace specwave {

// A box of a padded field in interior coordinates (z, y, x): [lo, lo + extent); lo may be negative (halo).
struct FieldBox {
  int lo[3] = {0, 0, 0};
  int extent[3] = {0, 0, 0};
  std::size_t points() const { return std::size_t(extent[0]) * extent[1] * extent[2]; }
};

// One face with a neighbour: R planes along `axis`, the block's extent along the other two. The owned planes
// next to the face are sent; the neighbour's arrive into the ghost planes. Tag = 2 axis + side of the sender.
struct HaloFace {
  int axis = 0, side = 0, peer = -1;
  FieldBox send, receive;
  int send_tag() const { return 2 * axis + side; }
  int receive_tag() const { return 2 * axis + (1 - side); }
};

// `planes` deep (the layout's halo unless given); only the faces along `only_axis` when it is 0, 1 or 2.
inline std::vector<HaloFace> halo_faces(const Block& block, const FieldLayout& layout, int planes = -1,
                                        int only_axis = -1) {
  std::vector<HaloFace> faces;
  const int R = planes < 0 ? layout.halo : planes;
  for (int a = 0; a < 3; ++a)
    for (int side = 0; side < 2; ++side) {
      const int peer = block.neighbour[a][side];
      if (peer < 0 || (only_axis >= 0 && a != only_axis)) continue;
      HaloFace f;
      f.axis = a;
      f.side = side;
      f.peer = peer;
      for (int b = 0; b < 3; ++b) f.send.extent[b] = f.receive.extent[b] = layout.extent(b);
      f.send.extent[a] = f.receive.extent[a] = R;
      const int e = layout.extent(a);
      f.send.lo[a] = side == 0 ? 0 : e - R;
      f.receive.lo[a] = side == 0 ? -R : e;
      faces.push_back(f);
    }
  return faces;
}

// The shell: the halo radius next to every face that has a neighbour.
inline Shell halo_shell(const std::vector<HaloFace>& faces, int radius) {
  Shell s;
  for (const auto& f : faces) s.width[f.axis][f.side] = radius;
  return s;
}

inline bool in_shell(const Shell& sh, int z, int y, int x, const FieldLayout& L) {
  return z < sh.width[0][0] || z >= L.nz - sh.width[0][1] || y < sh.width[1][0] || y >= L.ny - sh.width[1][1] ||
         x < sh.width[2][0] || x >= L.nx - sh.width[2][1];
}

// Splits source points into those in the shell (injected before the shell is sent) and the others.
template <class T>
void split_sources(const PointLists<T>& all, const Shell& sh, const FieldLayout& L, PointLists<T>& shell,
                   PointLists<T>& interior) {
  shell = {};
  interior = {};
  for (std::size_t p = 0; p < all.index.size(); ++p) {
    const index_t i = all.index[p];
    int z, y, x;
    L.coordinates(i, z, y, x);
    PointLists<T>& to = in_shell(sh, z, y, x, L) ? shell : interior;
    to.index.push_back(i);
    to.factor.push_back(all.factor[p]);
    to.owner.push_back(all.owner[p]);
  }
}

}  // namespace specwave
