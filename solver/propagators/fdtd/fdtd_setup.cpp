#include "solver/propagators/fdtd/fdtd_setup.hpp"

#include "kernels/fdtd_coefficients.hpp"
#include "solver/plan/cpml.hpp"
#include "solver/plan/plan.hpp"

namespace specwave {
template <class T>
PointLists<T> make_point_lists(const FieldLayout& layout, const std::vector<PointStencil>& stencils, double scale,
                               const std::vector<T>* vel2dt2, const Block* block) {
  PointLists<T> out;
  out.offsets.push_back(0);
  const Dims3 b = block ? block->sub.begin : Dims3{0, 0, 0};
  for (std::size_t s = 0; s < stencils.size(); ++s) {
    for (const auto& p : stencils[s].points) {
      if (block && !block->owns(p.iz, p.iy, p.ix)) continue;
      const index_t i = layout.index(p.iz - b[0], p.iy - b[1], p.ix - b[2]);
      out.index.push_back(i);
      out.factor.push_back(T(p.weight * scale * (vel2dt2 ? double((*vel2dt2)[i]) : 1.0)));
      out.owner.push_back(std::int32_t(s));
    }
    out.offsets.push_back(std::int32_t(out.index.size()));
  }
  return out;
}

template <class T>
void FdtdSetup<T>::set_velocity(std::span<const double> velocity, double dt) {
  const FieldLayout& L = layout;
  const double dt2 = dt * dt;
#pragma omp parallel for collapse(2)
  for (int z = 0; z < L.nz; ++z)
    for (int y = 0; y < L.ny; ++y)
      for (int x = 0; x < L.nx; ++x) {
        const double v = velocity[(std::size_t(z) * L.ny + y) * L.nx + x];
        vel2dt2[L.index(z, y, x)] = T(v * v * dt2);
      }
}

template <class T>
PointLists<T> FdtdSetup<T>::sources(const std::vector<PointStencil>& stencils) const {
  return make_point_lists<T>(layout, stencils, 1.0 / cell_volume, &vel2dt2, &block);
}

template <class T>
BlockReceivers<T> make_block_receivers(const FieldLayout& layout, const std::vector<PointStencil>& receivers,
                                       const Block& block) {
  BlockReceivers<T> out;
  out.whole.offsets.push_back(0);
  out.parts.offsets.push_back(0);
  out.split_slots.push_back(0);
  const Dims3 b = block.sub.begin;
  for (std::size_t r = 0; r < receivers.size(); ++r) {
    const auto& points = receivers[r].points;
    bool one_block = true;
    for (const auto& p : points)
      one_block = one_block && owner_of(block.shape, block.process_grid, p.iz, p.iy, p.ix) ==
                                   owner_of(block.shape, block.process_grid, points[0].iz, points[0].iy, points[0].ix);
    if (one_block) {
      if (points.empty() || !block.owns(points[0].iz, points[0].iy, points[0].ix)) continue;
      for (const auto& p : points) {
        out.whole.index.push_back(layout.index(p.iz - b[0], p.iy - b[1], p.ix - b[2]));
        out.whole.factor.push_back(T(p.weight));
        out.whole.owner.push_back(std::int32_t(out.whole_id.size()));
      }
      out.whole.offsets.push_back(std::int32_t(out.whole.index.size()));
      out.whole_id.push_back(int(r));
      continue;
    }
    int slot = out.split_slots.back();
    for (const auto& p : points) {
      if (block.owns(p.iz, p.iy, p.ix)) {
        out.parts.index.push_back(layout.index(p.iz - b[0], p.iy - b[1], p.ix - b[2]));
        out.parts.factor.push_back(T(p.weight));
        out.parts.owner.push_back(slot);
      }
      ++slot;
    }
    out.split_id.push_back(int(r));
    out.split_slots.push_back(slot);
  }
  return out;
}

template <class T>
void record_block(const BlockReceivers<T>& r, const T* u, std::vector<double>& traces, std::vector<double>& parts,
                  int nt, int n) {
  for (std::size_t k = 0; k < r.whole_id.size(); ++k) {
    double sum = 0;
    for (std::int32_t p = r.whole.offsets[k]; p < r.whole.offsets[k + 1]; ++p)
      sum += double(r.whole.factor[p]) * double(u[r.whole.index[p]]);
    traces[std::size_t(r.whole_id[k]) * nt + n] = sum;
  }
  for (std::size_t p = 0; p < r.parts.index.size(); ++p)
    parts[std::size_t(r.parts.owner[p]) * nt + n] = double(r.parts.factor[p]) * double(u[r.parts.index[p]]);
}

template <class T>
FdtdSetup<T> make_fdtd_setup(const Case& c, const Plan& plan, const Block* block_in) {
  FdtdSetup<T> s;
  const int R = c.scheme.order / 2;
  const auto& g = c.grid;
  s.block = block_in ? *block_in : whole_grid(g.shape);
  const Block& block = s.block;
  const Dims3 e = block.sub.extent, b = block.sub.begin;
  s.nt = plan.nt;
  s.free_surface = c.boundary.free_surface && block.neighbour[0][0] < 0;
  s.cell_volume = g.spacing[0] * g.spacing[1] * g.spacing[2];
  s.layout = FieldLayout{e[0], e[1], e[2], R};
  s.vel2dt2.assign(s.layout.size(), T(0));
  for (int z = 0; z < e[0]; ++z)
    for (int y = 0; y < e[1]; ++y)
      for (int x = 0; x < e[2]; ++x) {
        const double v = plan.model.at(z + b[0], y + b[1], x + b[2]);
        s.vel2dt2[s.layout.index(z, y, x)] = T(v * v * plan.dt * plan.dt);
      }
  s.coef = make_fdtd_coefficients<T>(R, g.spacing);
  const CpmlProfile profile = make_cpml_profile(g, c.boundary, plan.pml_power, plan.pml_reflection,
                                                 plan.v_reference > 0 ? plan.v_reference : plan.model.v_max, plan.pml_frequency, plan.dt);
  // The block's part of each profile; a face absorbs on the block that lies on it (preflight guarantees that
  // such a block holds the whole layer: check_decomposition).
  for (int a = 0; a < 3; ++a) {
    s.pml_a[a].assign(profile.a[a].begin() + b[a], profile.a[a].begin() + b[a] + e[a]);
    s.pml_b[a].assign(profile.b[a].begin() + b[a], profile.b[a].begin() + b[a] + e[a]);
    CpmlAxis<T>& axis = s.pml[a];
    axis.n = e[a];
    axis.width = profile.width;
    axis.radius = R;
    int se[3];
    cpml_slab_extents(a, e[0], e[1], e[2], profile.width, R, se);
    axis.slab_stride[2] = 1;
    axis.slab_stride[1] = se[2];
    axis.slab_stride[0] = index_t(se[1]) * se[2];
    s.slab_points[a] = std::size_t(se[0]) * se[1] * se[2];
    for (int side = 0; side < 2; ++side) axis.face[side] = profile.face[a][side] && block.neighbour[a][side] < 0;
  }
  s.block_receivers = make_block_receivers<T>(s.layout, plan.receivers, block);
  s.receivers = s.block_receivers.whole;
  return s;
}

template PointLists<float> make_point_lists<float>(const FieldLayout&, const std::vector<PointStencil>&, double,
                                                   const std::vector<float>*, const Block*);
template PointLists<double> make_point_lists<double>(const FieldLayout&, const std::vector<PointStencil>&, double,
                                                     const std::vector<double>*, const Block*);
template BlockReceivers<float> make_block_receivers<float>(const FieldLayout&, const std::vector<PointStencil>&,
                                                           const Block&);
template BlockReceivers<double> make_block_receivers<double>(const FieldLayout&, const std::vector<PointStencil>&,
                                                             const Block&);
template void record_block<float>(const BlockReceivers<float>&, const float*, std::vector<double>&,
                                  std::vector<double>&, int, int);
template void record_block<double>(const BlockReceivers<double>&, const double*, std::vector<double>&,
                                   std::vector<double>&, int, int);
template struct FdtdSetup<float>;
template struct FdtdSetup<double>;
template FdtdSetup<float> make_fdtd_setup<float>(const Case&, const Plan&, const Block*);
template FdtdSetup<double> make_fdtd_setup<double>(const Case&, const Plan&, const Block*);

}  // namespace specwave
