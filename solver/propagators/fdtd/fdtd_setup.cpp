#include "solver/propagators/fdtd/fdtd_setup.hpp"

#include "kernels/fdtd_coefficients.hpp"
#include "solver/plan/cpml.hpp"
#include "solver/plan/plan.hpp"

namespace specwave {
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
FdtdSetup<T> make_fdtd_setup(const Case& c, const Plan& plan, const Block* block_in) {
  FdtdSetup<T> s;
  const int R = c.scheme.order / 2;
  const auto& g = c.grid;
  s.block = block_in ? *block_in : whole_grid(g.shape);
  const Block& block = s.block;
  const Dims3 e = block.sub.extent, b = block.sub.begin;
  s.nt = plan.nt;
  s.free_surface = c.boundary.free_surface && block.neighbour[0][0] < 0;
  s.cell_volume = g.cell_volume();
  s.layout = FieldLayout{e[0], e[1], e[2], R};
  s.vel2dt2.assign(s.layout.size(), T(0));
  for (int z = 0; z < e[0]; ++z)
    for (int y = 0; y < e[1]; ++y)
      for (int x = 0; x < e[2]; ++x) {
        const double v = plan.model.at(z + b[0], y + b[1], x + b[2]);
        s.vel2dt2[s.layout.index(z, y, x)] = T(v * v * plan.dt * plan.dt);
      }
  s.coef = make_fdtd_coefficients<T>(R, g.spacing, {g.active(0), g.active(1), g.active(2)});
  const CpmlProfile profile =
      make_cpml_profile(g, c.boundary, plan.pml_power, plan.pml_reflection,
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
  s.set_receivers(plan.receivers);
  return s;
}

template struct FdtdSetup<float>;
template struct FdtdSetup<double>;
template FdtdSetup<float> make_fdtd_setup<float>(const Case&, const Plan&, const Block*);
template FdtdSetup<double> make_fdtd_setup<double>(const Case&, const Plan&, const Block*);

}  // namespace specwave
