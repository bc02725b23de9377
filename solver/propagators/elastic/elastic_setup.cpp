#include "solver/propagators/elastic/elastic_setup.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "kernels/staggered_step.hpp"
#include "kernels/stencil.hpp"
#include "solver/plan/cpml.hpp"
#include "solver/plan/model.hpp"
#include "solver/plan/plan.hpp"

namespace specwave {

namespace {

// The compact index of node (z, y, x) clamped to the grid (the medium continued outside by its nearest node).
std::size_t clamped(const std::array<int, 3>& n, int z, int y, int x) {
  z = std::clamp(z, 0, n[0] - 1), y = std::clamp(y, 0, n[1] - 1), x = std::clamp(x, 0, n[2] - 1);
  return (std::size_t(z) * n[1] + y) * n[2] + x;
}

// fn(z, y, x) over the computed range of field f (ElasticStep::lo / hi), all threads.
template <class T, class Fn>
void for_each_point(const ElasticStep<T>& s, int f, Fn&& fn) {
  const int z0 = s.lo(f, 0), z1 = s.hi(f, 0), y0 = s.lo(f, 1), y1 = s.hi(f, 1), x0 = s.lo(f, 2), x1 = s.hi(f, 2);
#pragma omp parallel for collapse(2)
  for (int z = z0; z < z1; ++z)
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) fn(z, y, x);
}

// dt lambda and 2 dt mu on the nodes, dt mu on the edges (the harmonic mean of the four nodes' mu, 0 next to a fluid),
// dt b on the velocities' points.
template <class T>
void set_material(ElasticSetup<T>& s) {
  const FieldLayout& L = s.layout;
  const std::array<int, 3> n = s.shape;
  const ElasticStep<T> view = s.step();
  const double dt = s.dt;
  const Dims3 o = s.block.sub.begin;  // the block's first node in the whole grid
  for_each_point(view, szz, [&](int z, int y, int x) {
    const std::size_t k = (std::size_t(z + o[0]) * n[1] + y + o[1]) * n[2] + x + o[2];
    const double rho = s.density[k], v = s.vp[k], w = s.vs[k];
    s.lamdt[std::size_t(L.index(z, y, x))] = T(dt * rho * v * v - 2 * dt * rho * w * w);
    s.mu2dt[std::size_t(L.index(z, y, x))] = T(2 * dt * rho * w * w);
  });
  for (int c = 0; c < 3; ++c)
    for_each_point(view, szy + c, [&](int z, int y, int x) {
      double inverse = 0;
      bool fluid = false;
      for (std::size_t k : s.edge_nodes(c, z, y, x)) {
        const double mu = s.density[k] * s.vs[k] * s.vs[k];
        if (mu == 0)
          fluid = true;
        else
          inverse += 1 / mu;
      }
      s.mudt[std::size_t(c)][std::size_t(L.index(z, y, x))] = fluid ? T(0) : T(dt * 4 / inverse);
    });
  for (int a = 0; a < 3; ++a)
    for_each_point(view, vz + a, [&](int z, int y, int x) {
      const auto [n0, n1] = s.velocity_nodes(a, z, y, x);
      s.bdt[std::size_t(a)][std::size_t(L.index(z, y, x))] = T(2 * dt / (s.density[n0] + s.density[n1]));
    });
}

}  // namespace

template <class T>
ElasticPoints<T> ElasticSetup<T>::sources(const std::vector<PointStencil>& stencils) const {
  ElasticPoints<T> out;
  const Dims3 b = block.sub.begin;
  for (const PointStencil& s : stencils) {
    const bool pressure = std::any_of(s.points.begin(), s.points.end(), [](const auto& p) { return p.field < 3; });
    const double rho_s = pressure ? point_density(s, std::span<const double>(density), shape) : 1.0;
    for (const GridPointWeight& p : s.points) {
      if (!block.owns(p.iz, p.iy, p.ix)) continue;
      const std::size_t k = (std::size_t(p.iz) * shape[1] + p.iy) * shape[2] + p.ix;
      const index_t i = layout.index(p.iz - b[0], p.iy - b[1], p.ix - b[2]);
      double factor;
      std::uint8_t field = p.field, signal;
      if (p.field < 3) {
        const double v = vp[k];
        factor = -(v * v * dt * dt * (density[k] / rho_s) * p.weight / cell_volume);
        signal = ElasticPoints<T>::running_sum;
      } else if (p.field >= moment_field_offset) {
        field = std::uint8_t(p.field - moment_field_offset);
        factor = -dt * p.weight / cell_volume;
        signal = ElasticPoints<T>::midpoint;
      } else {
        factor = double(bdt[std::size_t(p.field - ElasticField::vz)][std::size_t(i)]) * p.weight / cell_volume;
        signal = ElasticPoints<T>::sample;
      }
      out.signal.push_back(signal);
      out.field.push_back(field);
      out.index.push_back(i);
      out.factor.push_back(T(factor));
    }
    out.offsets.push_back(std::int32_t(out.index.size()));
  }
  return out;
}

template <class T>
std::array<std::size_t, 2> ElasticSetup<T>::velocity_nodes(int a, int z, int y, int x) const {
  int p[3] = {z + block.sub.begin[0], y + block.sub.begin[1], x + block.sub.begin[2]};
  const std::size_t n0 = clamped(shape, p[0], p[1], p[2]);
  p[a] += 1;
  return {n0, clamped(shape, p[0], p[1], p[2])};
}

template <class T>
std::array<std::size_t, 4> ElasticSetup<T>::edge_nodes(int c, int z, int y, int x) const {
  // The edges: s_zy (z and y), s_zx (z and x), s_yx (y and x).
  constexpr int pairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  const int a = pairs[c][0], b = pairs[c][1];
  std::array<std::size_t, 4> out{};
  for (int corner = 0; corner < 4; ++corner) {
    int p[3] = {z + block.sub.begin[0], y + block.sub.begin[1], x + block.sub.begin[2]};
    p[a] += corner & 1, p[b] += corner >> 1;
    out[std::size_t(corner)] = clamped(shape, p[0], p[1], p[2]);
  }
  return out;
}

std::size_t elastic_slab_values(const Case& c, const std::array<int, 3>& shape) {
  const int R = c.scheme.order / 2, W = c.boundary.pml_width;
  if (W == 0) return 0;
  const bool multiaxial = c.boundary.pml_multiaxial.value_or(default_pml_multiaxial) > 0;
  std::size_t slabs = 0;
  for (int t = 0; t < elastic_terms; ++t) {  // as make_elastic_setup's slab geometry and ElasticSetup::has_slab
    const int own = elastic_term[t].axis;
    if (!c.grid.active(own)) continue;
    for (int a = 0; a < 3; ++a) {
      if (!c.grid.active(a) || (a != own && !multiaxial)) continue;
      const int faces = 1 + !(a == 0 && c.boundary.free_surface);
      std::size_t points = std::size_t((a == own ? W : elastic_multiaxial_points(W)) + R);
      for (int k = 0; k < 3; ++k)
        if (k != a) points *= k == 1 && !c.grid.active(1) ? 1 : std::size_t(shape[std::size_t(k)] + 2 * R);
      slabs += std::size_t(faces) * points;
    }
  }
  return slabs;
}

std::size_t elastic_state_values(const Case& c) {
  const auto& n = c.grid.shape;
  const int R = c.scheme.order / 2;
  const std::size_t padded = std::size_t(FieldLayout{n[0], n[1], n[2], staggered_halo(R)}.size());
  return elastic_fields * padded + elastic_slab_values(c, n);
}

std::size_t elastic_increment_points(const Case& c) {
  ElasticStep<float> s;
  const auto& n = c.grid.shape;
  s.layout = FieldLayout{n[0], n[1], n[2], staggered_halo(c.scheme.order / 2)};
  s.coef.radius = c.scheme.order / 2;
  s.two_d = n[1] == 1;
  s.free_surface = c.boundary.free_surface;
  std::size_t total = 0;
  for (int f = 0; f < elastic_fields; ++f) {
    std::size_t box = 1;
    for (int a = 0; a < 3; ++a) box *= std::size_t(s.hi(f, a) - s.lo(f, a));
    total += box;
  }
  return total;
}

void split_elastic_receivers(const std::vector<PointStencil>& receivers, std::vector<PointStencil> (&lists)[2],
                             std::vector<bool>& velocity, std::vector<std::size_t>& row) {
  velocity.assign(receivers.size(), false);
  row.assign(receivers.size(), 0);
  for (std::size_t r = 0; r < receivers.size(); ++r) {
    const bool v = !receivers[r].points.empty() && receivers[r].points.front().field >= ElasticField::vz;
    velocity[r] = v;
    row[r] = lists[v].size();
    lists[v].push_back(receivers[r]);
  }
}

void elastic_traces(const std::vector<bool>& velocity, const std::vector<std::size_t>& row,
                    std::span<const double> pressure, std::span<const double> velocity_samples, int nt,
                    std::vector<double>& out) {
  const std::size_t steps = std::size_t(nt);
  out.assign(velocity.size() * steps, 0.0);
  for (std::size_t r = 0; r < velocity.size(); ++r) {
    const double* in = (velocity[r] ? velocity_samples : pressure).data() + row[r] * steps;
    double* o = out.data() + r * steps;
    for (std::size_t n = 0; n < steps; ++n) o[n] = velocity[r] ? 0.5 * (in[n] + (n > 0 ? in[n - 1] : 0.0)) : in[n];
  }
}

template <class T>
void update_elastic_model(ElasticSetup<T>& s, std::span<const double> vp, std::span<const double> vs,
                          std::span<const double> rho) {
  // (Copies first: a span may view the setup's own arrays.)
  std::vector<double> p(vp.begin(), vp.end()), v(vs.begin(), vs.end()), r(rho.begin(), rho.end());
  s.vp = std::move(p), s.vs = std::move(v), s.density = std::move(r);
  set_material(s);
}

template <class T>
ElasticStep<T> ElasticSetup<T>::step() const {
  ElasticStep<T> s;
  s.layout = layout;
  s.lamdt = lamdt.data();
  s.mu2dt = mu2dt.data();
  for (int a = 0; a < 3; ++a) {
    s.mudt[a] = mudt[a].data();
    s.bdt[a] = bdt[a].data();
    s.pml[a] = pml[a];
    s.pml[a].a_node = a_node[a].data(), s.pml[a].b_node = b_node[a].data();
    s.pml[a].a_half = a_half[a].data(), s.pml[a].b_half = b_half[a].data();
    if (multiaxial > 0) {
      s.pml[a].ma_node = ma_node[a].data(), s.pml[a].mb_node = mb_node[a].data();
      s.pml[a].ma_half = ma_half[a].data(), s.pml[a].mb_half = mb_half[a].data();
    }
  }
  s.coef = coef;
  s.two_d = shape[1] == 1;
  s.free_surface = free_surface;
  for (int a = 0; a < 3; ++a)
    for (int side = 0; side < 2; ++side) s.ghost_band[a][side] = block.neighbour[a][side] < 0;
  return s;
}

template <class T>
ElasticSetup<T> make_elastic_setup(const Case& c, const Plan& plan, const Block* block) {
  ElasticSetup<T> s;
  const int R = c.scheme.order / 2;
  const GridSpec& g = c.grid;
  if (!plan.model.whole_grid() || plan.model.block.extent != g.shape || plan.model.shear.empty())
    throw std::logic_error("make_elastic_setup: the plan's model must hold the whole grid with a shear velocity");
  if (R < 1 || R > 4) throw std::logic_error("make_elastic_setup: order 2 to 8");
  s.shape = g.shape;
  s.block = block ? *block : whole_grid(g.shape);
  const Dims3 b = s.block.sub.begin, e = s.block.sub.extent;
  s.nt = plan.nt;
  s.dt = plan.dt;
  s.cell_volume = g.cell_volume();
  s.free_surface = c.boundary.free_surface && s.block.neighbour[0][0] < 0;
  s.layout = FieldLayout{e[0], e[1], e[2], staggered_halo(R)};
  const std::size_t points = std::size_t(g.points());
  s.vp.assign(plan.model.velocity.begin(), plan.model.velocity.end());
  s.density.assign(plan.model.density.begin(), plan.model.density.end());
  s.vs.assign(plan.model.shear.begin(), plan.model.shear.end());
  if (s.vp.size() != points || s.density.size() != points || s.vs.size() != points)
    throw std::logic_error("make_elastic_setup: the model's arrays must hold the whole grid");
  const std::size_t size = std::size_t(s.layout.size());
  s.lamdt.assign(size, T(0));
  s.mu2dt.assign(size, T(0));
  for (auto& m : s.mudt) m.assign(size, T(0));
  for (auto& b : s.bdt) b.assign(size, T(0));
  const auto gk = staggered_derivative_coefficients(R);
  s.coef.radius = R;
  for (int a = 0; a < 3; ++a)
    for (int k = 1; k <= R; ++k) s.coef.g[a][k] = g.active(a) ? T(gk[std::size_t(k)] / g.spacing[a]) : T(0);
  const double v_ref = plan.v_reference > 0 ? plan.v_reference : plan.model.v_max;
  s.multiaxial = c.boundary.pml_width > 0 ? c.boundary.pml_multiaxial.value_or(default_pml_multiaxial) : 0.0;
  for (int a = 0; a < 3; ++a) {
    const CpmlAxisProfile prof = make_cpml_axis_profile(g, c.boundary, a, plan.pml_power, plan.pml_reflection, v_ref,
                                                        plan.pml_frequency, plan.dt);
    // The block's part of the profile (local index i is global i + b[a]); a face absorbs on the block that lies on
    // it, which holds the whole layer (check_decomposition).
    const int n = e[a];
    // a, b of profile q at the nodes and half nodes (none where xi <= min_xi).
    const auto sample = [&](const CpmlAxisProfile& q, double min_xi, std::vector<T>& na, std::vector<T>& nb,
                            std::vector<T>& ha, std::vector<T>& hb) {
      na.assign(std::size_t(n), T(0)), nb.assign(std::size_t(n), T(1));
      ha.assign(std::size_t(n + 2 * R), T(0)), hb.assign(std::size_t(n + 2 * R), T(1));
      const auto at = [&](double position, T& ca, T& cb) {
        double x = 0, y = 1;
        if (q.xi(position) > min_xi) q.coefficients(position, x, y);
        ca = T(x), cb = T(y);
      };
      for (int i = 0; i < n; ++i) at(i + b[a], na[std::size_t(i)], nb[std::size_t(i)]);
      for (int i = -R; i < n + R; ++i) at(i + b[a] + 0.5, ha[std::size_t(i + R)], hb[std::size_t(i + R)]);
    };
    sample(prof, 0, s.a_node[a], s.b_node[a], s.a_half[a], s.b_half[a]);
    if (s.multiaxial > 0) {
      // The M-PML's filter: the profile's damping times ratio xi^8, alpha as it is, in the layer's outer half
      // (pml_multiaxial_reach: the ElasticCpmlAxis::outer points nearest the face).
      CpmlAxisProfile m = prof;
      m.d0 *= s.multiaxial;
      m.power += pml_multiaxial_exponent;
      sample(m, pml_multiaxial_reach, s.ma_node[a], s.mb_node[a], s.ma_half[a], s.mb_half[a]);
    }
    ElasticCpmlAxis<T>& p = s.pml[a];
    p.n = n;
    p.width = c.boundary.pml_width;
    // The M-PML's reach: xi > 1/2 is s < W / 2 from the face, on nodes and half nodes.
    static_assert(pml_multiaxial_reach == 0.5, "ElasticCpmlAxis::outer covers xi > 1/2 only");
    p.outer = elastic_multiaxial_points(p.width);
    p.radius = R;
    p.face[0] = prof.low && g.active(a) && p.width > 0 && s.block.neighbour[a][0] < 0;
    p.face[1] = prof.high && g.active(a) && p.width > 0 && s.block.neighbour[a][1] < 0;
    for (int own = 0; own < 2; ++own) {  // [0]: the CPML's slabs, W + R along the axis; [1]: the M-PML's, outer + R
      int extent[3];
      for (int k = 0; k < 3; ++k) {
        const bool inactive = k == 1 && !g.active(1);
        extent[k] = k == a ? (own == 0 ? p.width : p.outer) + R : inactive ? 1 : e[k] + 2 * R;
        p.slab_offset[k] = k == a || inactive ? 0 : R;
      }
      p.slab_stride[own][2] = 1;
      p.slab_stride[own][1] = extent[2];
      p.slab_stride[own][0] = index_t(extent[1]) * extent[2];
      s.slab_points[a][own] = std::size_t(extent[0]) * extent[1] * extent[2];
    }
  }
  set_material(s);
  return s;
}

template struct ElasticSetup<float>;
template struct ElasticSetup<double>;
template void update_elastic_model<float>(ElasticSetup<float>&, std::span<const double>, std::span<const double>,
                                          std::span<const double>);
template void update_elastic_model<double>(ElasticSetup<double>&, std::span<const double>, std::span<const double>,
                                           std::span<const double>);
template ElasticSetup<float> make_elastic_setup<float>(const Case&, const Plan&, const Block*);
template ElasticSetup<double> make_elastic_setup<double>(const Case&, const Plan&, const Block*);

}  // namespace specwave
