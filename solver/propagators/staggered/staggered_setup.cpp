#include "solver/propagators/staggered/staggered_setup.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <unordered_map>

#include "kernels/stencil.hpp"
#include "solver/plan/cpml.hpp"
#include "solver/plan/plan.hpp"

namespace specwave {

template <class T>
PointLists<T> StaggeredSetup<T>::sources(const std::vector<PointStencil>& stencils) const {
  PointLists<T> out;
  out.offsets.push_back(0);
  const Dims3 b = block.sub.begin, e = block.sub.extent;
  for (std::size_t s = 0; s < stencils.size(); ++s) {
    const double rho_s = point_density(stencils[s], grid_density, block.shape);
    for (const auto& p : stencils[s].points) {
      if (!block.owns(p.iz, p.iy, p.ix)) continue;
      const int z = p.iz - b[0], y = p.iy - b[1], x = p.ix - b[2];
      const std::size_t k = (std::size_t(z) * e[1] + y) * e[2] + x;
      const double v = velocity[k];
      out.index.push_back(layout.index(z, y, x));
      out.factor.push_back(T(v * v * dt * dt * (double(density[k]) / rho_s) * p.weight / cell_volume));
      out.owner.push_back(std::int32_t(s));
    }
    out.offsets.push_back(std::int32_t(out.index.size()));
  }
  return out;
}

std::vector<std::vector<double>> running_sums(const std::vector<std::vector<double>>& wavelets) {
  std::vector<std::vector<double>> out(wavelets.size());
  for (std::size_t j = 0; j < wavelets.size(); ++j) {
    out[j].resize(wavelets[j].size());
    double sum = 0;
    for (std::size_t n = 0; n < wavelets[j].size(); ++n) out[j][n] = sum += wavelets[j][n];
  }
  return out;
}

template <class T>
StaggeredStep<T> StaggeredSetup<T>::step(T* u, const std::array<T*, 3>& w, const std::vector<T*>& memory) const {
  StaggeredStep<T> s;
  s.mechanisms = int(sls_drive.size());
  for (int l = 0; l < s.mechanisms; ++l) {
    s.r[l] = memory.at(std::size_t(l));
    s.g[l] = sls_drive[std::size_t(l)].data();
    s.decay[l] = sls_decay[std::size_t(l)];
  }
  s.half_dt = T(dt / 2);
  s.layout = layout;
  s.u = u;
  for (int a = 0; a < 3; ++a) {
    s.w[a] = w[a];
    s.bdt[a] = bdt[a].data();
    s.pml[a] = pml[a];
    s.pml[a].a_node = a_node[a].data(), s.pml[a].b_node = b_node[a].data();
    s.pml[a].a_half = a_half[a].data(), s.pml[a].b_half = b_half[a].data();
  }
  s.kdt = kdt.data();
  s.coef = coef;
  s.free_surface = free_surface;
  for (int a = 0; a < 3; ++a)
    for (int side = 0; side < 2; ++side) s.ghost_band[a][side] = block.neighbour[a][side] < 0;
  return s;
}

namespace {

// The SLS weights y_l of every point's Q (plan.sls.weights; once per distinct value), K_R = rho v^2 relaxed_factor,
// and from them dt K_R (1 + sum y_l), the drives b_l K_R y_l and the decays a_l (docs/numerics.md, "Attenuation").
template <class T>
void set_attenuation(StaggeredSetup<T>& s, const SlsFit& fit, std::span<const float> q_grid) {
  const FieldLayout& L = s.layout;
  const int mechanisms = int(fit.tau.size());
  const double dt = s.dt;
  const SlsStep step = sls_step(fit, dt);
  const std::vector<double>& b = step.b;
  s.sls_decay.assign(step.a.begin(), step.a.end());
  s.sls_drive.assign(std::size_t(mechanisms), std::vector<T>(s.velocity.size(), T(0)));
  // Per point: the weights of its Q, 1 + sum y_l and the relaxed factor (fit_points).
  const auto set_point = [&](std::size_t k, const SlsPointFit& f) {
    const double v = s.velocity[k];
    const double k_relaxed = double(s.density[k]) * v * v * f.relaxed;
    int z, y, x;
    z = int(k / (std::size_t(L.ny) * L.nx)), y = int(k / L.nx % L.ny), x = int(k % L.nx);
    s.kdt[L.index(z, y, x)] = T(dt * k_relaxed * f.sum);
    for (int l = 0; l < mechanisms; ++l)
      s.sls_drive[std::size_t(l)][k] = T(b[std::size_t(l)] * k_relaxed * f.y[std::size_t(l)]);
  };
  // Q at the block's point k (q_grid: the whole grid's).
  const Dims3 begin = s.block.sub.begin, shape = s.block.shape;
  const auto q_at = [&](std::size_t k) {
    const int z = int(k / (std::size_t(L.ny) * L.nx)) + begin[0], y = int(k / L.nx % L.ny) + begin[1],
              x = int(k % L.nx) + begin[2];
    return q_grid[(std::size_t(z) * shape[1] + y) * shape[2] + x];
  };
  fit_points(fit, s.velocity.size(), q_at, set_point);
}

// dt K on the nodes (and with attenuation the drives and decays) from the block's velocity and density.
template <class T>
void set_stiffness(StaggeredSetup<T>& s, const SlsFit& fit, std::span<const float> q_grid) {
  if (!fit.empty()) return set_attenuation(s, fit, q_grid);
  const FieldLayout& L = s.layout;
#pragma omp parallel for collapse(2)
  for (int z = 0; z < L.nz; ++z)
    for (int y = 0; y < L.ny; ++y)
      for (int x = 0; x < L.nx; ++x) {
        const std::size_t k = (std::size_t(z) * L.ny + y) * L.nx + x;
        const double v = s.velocity[k];
        s.kdt[L.index(z, y, x)] = T(s.dt * double(s.density[k]) * v * v);
      }
}

// dt beta_a = 2 dt / (rho[i] + rho[i + 1]) on the block's half nodes -R .. n + R - 1 of axis a (its nodes on the other
// axes), rho continued outside the grid by its nearest node (buoyancy_nodes): those beyond a face with a neighbour
// get a value here too but are never used: their w arrive by the exchange.
template <class T>
void set_buoyancy(StaggeredSetup<T>& s) {
  const FieldLayout& L = s.layout;
  const Dims3 e = s.block.sub.extent;
  const int R = s.coef.radius;
  for (int a = 0; a < 3; ++a) {
    int lo[3] = {0, 0, 0}, hi[3] = {e[0], e[1], e[2]};
    lo[a] = -R, hi[a] = e[a] + R;
#pragma omp parallel for collapse(2)
    for (int z = lo[0]; z < hi[0]; ++z)
      for (int y = lo[1]; y < hi[1]; ++y)
        for (int x = lo[2]; x < hi[2]; ++x) {
          std::size_t n0, n1;
          s.buoyancy_nodes(a, z, y, x, n0, n1);
          s.bdt[a][L.index(z, y, x)] = T(2 * s.dt / (s.grid_density[n0] + s.grid_density[n1]));
        }
  }
}

}  // namespace

template <class T>
void StaggeredSetup<T>::buoyancy_nodes(int axis, int z, int y, int x, std::size_t& n0, std::size_t& n1) const {
  const Dims3 b = block.sub.begin, shape = block.shape;
  const int g[3] = {z + b[0], y + b[1], x + b[2]};
  int c0[3], c1[3];
  for (int k = 0; k < 3; ++k) {
    c0[k] = std::clamp(g[k], 0, shape[k] - 1);
    c1[k] = std::clamp(g[k] + (k == axis ? 1 : 0), 0, shape[k] - 1);
  }
  n0 = (std::size_t(c0[0]) * shape[1] + c0[1]) * shape[2] + c0[2];
  n1 = (std::size_t(c1[0]) * shape[1] + c1[1]) * shape[2] + c1[2];
}

template <class T>
void StaggeredSetup<T>::set_density(std::span<const double> rho, const SlsFit& fit, std::span<const float> q_grid) {
  if (rho.size() != density.size() || rho.size() != grid_density.size())
    throw std::invalid_argument("StaggeredSetup::set_density: one value a point of the whole grid (one rank)");
  std::copy(rho.begin(), rho.end(), density.begin());
  std::copy(rho.begin(), rho.end(), grid_density.begin());
  set_stiffness(*this, fit, q_grid);
  set_buoyancy(*this);
}

template <class T>
void StaggeredSetup<T>::set_velocity(std::span<const double> v, const SlsFit& fit, std::span<const float> q_grid) {
  if (v.size() != velocity.size()) throw std::invalid_argument("StaggeredSetup::set_velocity: one value a point");
  std::copy(v.begin(), v.end(), velocity.begin());
  set_stiffness(*this, fit, q_grid);
}

template <class T>
StaggeredSetup<T> make_staggered_setup(const Case& c, const Plan& plan, const Block* block_in) {
  StaggeredSetup<T> s;
  const int R = c.scheme.order / 2;
  const GridSpec& g = c.grid;
  if (!plan.model.whole_grid() || plan.model.block.extent != g.shape)
    throw std::logic_error("make_staggered_setup: the plan's model must hold the whole grid");
  s.block = block_in ? *block_in : whole_grid(g.shape);
  const Dims3 b = s.block.sub.begin, e = s.block.sub.extent;
  const int nz = e[0], ny = e[1], nx = e[2];
  s.nt = plan.nt;
  s.dt = plan.dt;
  s.free_surface = c.boundary.free_surface && s.block.neighbour[0][0] < 0;
  s.cell_volume = g.cell_volume();
  s.layout = FieldLayout{nz, ny, nx, staggered_halo(R)};
  s.grid_density.assign(plan.model.density.begin(), plan.model.density.end());
  s.velocity.resize(std::size_t(s.block.points()));
  s.density.resize(s.velocity.size());
  const FieldLayout& L = s.layout;
#pragma omp parallel for collapse(2)
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        const std::size_t k = (std::size_t(z) * ny + y) * nx + x;
        s.velocity[k] = plan.model.at(z + b[0], y + b[1], x + b[2]);
        s.density[k] = plan.model.density_at(z + b[0], y + b[1], x + b[2]);
      }
  s.kdt.assign(L.size(), T(0));
  for (auto& bd : s.bdt) bd.assign(L.size(), T(0));
  const double dt = plan.dt;
  set_stiffness(s, plan.sls, plan.model.q);
  const auto gk = staggered_derivative_coefficients(R);
  s.coef.radius = R;
  for (int a = 0; a < 3; ++a)  // (an inactive axis, 2-D: no derivative along it, w_y stays 0)
    for (int k = 1; k <= R; ++k) s.coef.g[a][k] = g.active(a) ? T(gk[k] / g.spacing[a]) : T(0);
  set_buoyancy(s);
  const double v_ref = plan.v_reference > 0 ? plan.v_reference : plan.model.v_max;
  for (int a = 0; a < 3; ++a) {
    const CpmlAxisProfile prof =
        make_cpml_axis_profile(g, c.boundary, a, plan.pml_power, plan.pml_reflection, v_ref, plan.pml_frequency, dt);
    // The block's part of the profile (local index i is global i + b[a]); a face absorbs on the block that lies on
    // it, which holds the whole layer (check_decomposition).
    const int n = e[a];
    s.a_node[a].assign(n, T(0)), s.b_node[a].assign(n, T(1));
    s.a_half[a].assign(n + 2 * R, T(0)), s.b_half[a].assign(n + 2 * R, T(1));
    for (int i = 0; i < n; ++i) {
      double ca, cb;
      prof.coefficients(i + b[a], ca, cb);
      s.a_node[a][i] = T(ca), s.b_node[a][i] = T(cb);
    }
    for (int i = -R; i < n + R; ++i) {
      double ca, cb;
      prof.coefficients(i + b[a] + 0.5, ca, cb);
      s.a_half[a][i + R] = T(ca), s.b_half[a][i + R] = T(cb);
    }
    StaggeredCpmlAxis<T>& p = s.pml[a];
    p.n = n;
    p.width = c.boundary.pml_width;
    p.radius = R;
    p.face[0] = prof.low && s.block.neighbour[a][0] < 0;
    p.face[1] = prof.high && s.block.neighbour[a][1] < 0;
    int se[3];
    staggered_slab_extents(a, nz, ny, nx, p.width, R, se);
    p.slab_stride[2] = 1;
    p.slab_stride[1] = se[2];
    p.slab_stride[0] = index_t(se[1]) * se[2];
    s.slab_points[a] = std::size_t(se[0]) * se[1] * se[2];
  }
  s.set_receivers(plan.receivers);
  return s;
}

template struct StaggeredSetup<float>;
template struct StaggeredSetup<double>;
template StaggeredSetup<float> make_staggered_setup<float>(const Case&, const Plan&, const Block*);
template StaggeredSetup<double> make_staggered_setup<double>(const Case&, const Plan&, const Block*);

}  // namespace specwave
