#include "solver/fdtd_setup.hpp"

#include "kernels/fdtd_coefficients.hpp"
#include "solver/cpml.hpp"
#include "solver/plan.hpp"

namespace specwave {
template <class T>
PointLists<T> make_point_lists(const FieldLayout& layout, const std::vector<PointStencil>& stencils, double scale,
                               const std::vector<T>* vel2dt2) {
  PointLists<T> out;
  out.offsets.push_back(0);
  for (std::size_t s = 0; s < stencils.size(); ++s) {
    for (const auto& p : stencils[s].points) {
      const index_t i = layout.index(p.iz, p.iy, p.ix);
      out.index.push_back(i);
      out.factor.push_back(T(p.weight * scale * (vel2dt2 ? double((*vel2dt2)[i]) : 1.0)));
      out.owner.push_back(std::int32_t(s));
    }
    out.offsets.push_back(std::int32_t(out.index.size()));
  }
  return out;
}

template <class T>
PointLists<T> FdtdSetup<T>::sources(const std::vector<PointStencil>& stencils) const {
  return make_point_lists<T>(layout, stencils, 1.0 / cell_volume, &vel2dt2);
}

template <class T>
FdtdSetup<T> make_fdtd_setup(const Case& c, const Plan& plan) {
  FdtdSetup<T> s;
  const int R = c.scheme.order / 2;
  const auto& g = c.grid;
  s.nt = plan.nt;
  s.free_surface = c.boundary.free_surface;
  s.cell_volume = g.spacing[0] * g.spacing[1] * g.spacing[2];
  s.layout = FieldLayout{g.shape[0], g.shape[1], g.shape[2], R};
  s.vel2dt2.assign(s.layout.size(), T(0));
  for (int z = 0; z < g.shape[0]; ++z)
    for (int y = 0; y < g.shape[1]; ++y)
      for (int x = 0; x < g.shape[2]; ++x) {
        const double v = plan.model.velocity[(std::size_t(z) * g.shape[1] + y) * g.shape[2] + x];
        s.vel2dt2[s.layout.index(z, y, x)] = T(v * v * plan.dt * plan.dt);
      }
  s.coef = make_fdtd_coefficients<T>(R, g.spacing);
  const CpmlProfile profile = make_cpml_profile(g, c.boundary, plan.pml_power, plan.pml_reflection, plan.model.v_max, plan.pml_frequency, plan.dt);
  for (int a = 0; a < 3; ++a) {
    s.pml_a[a].assign(profile.a[a].begin(), profile.a[a].end());
    s.pml_b[a].assign(profile.b[a].begin(), profile.b[a].end());
    CpmlAxis<T>& axis = s.pml[a];
    axis.n = g.shape[a];
    axis.width = profile.width;
    axis.radius = R;
    int e[3];
    cpml_slab_extents(a, g.shape[0], g.shape[1], g.shape[2], profile.width, R, e);
    axis.slab_stride[2] = 1;
    axis.slab_stride[1] = e[2];
    axis.slab_stride[0] = index_t(e[1]) * e[2];
    s.slab_points[a] = std::size_t(e[0]) * e[1] * e[2];
    for (int side = 0; side < 2; ++side) axis.face[side] = profile.face[a][side];
  }
  s.receivers = make_point_lists<T>(s.layout, plan.receivers, 1.0, nullptr);
  return s;
}

template PointLists<float> make_point_lists<float>(const FieldLayout&, const std::vector<PointStencil>&, double,
                                                   const std::vector<float>*);
template PointLists<double> make_point_lists<double>(const FieldLayout&, const std::vector<PointStencil>&, double,
                                                     const std::vector<double>*);
template struct FdtdSetup<float>;
template struct FdtdSetup<double>;
template FdtdSetup<float> make_fdtd_setup<float>(const Case&, const Plan&);
template FdtdSetup<double> make_fdtd_setup<double>(const Case&, const Plan&);

}  // namespace specwave
