#pragma once
// What the elastic scheme's gradient propagators share whatever the backend (elastic_cpu_gradient.cpp,
// elastic_cuda_gradient.cpp; docs/numerics.md, "The elastic adjoint"): the model on the host (its checks and
// coefficients), a shot's sources and receiver lists, the Born operators' coefficient perturbations, the adjoint
// sources of the receivers, the gradients' assembly from the coefficients' images by the chain rule, and
// GradientPropagator's model setters and getters for both (a backend that keeps the coefficients elsewhere too follows
// them in model_changed). A base of each propagator (its members are theirs); one rank.
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <span>
#include <vector>

#include "solver/case/errors.hpp"
#include "solver/plan/model.hpp"
#include "solver/plan/plan.hpp"
#include "solver/plan/shot_receivers.hpp"
#include "solver/propagators/elastic/elastic_setup.hpp"
#include "solver/propagators/gradient_propagator.hpp"
#include "solver/propagators/point_lists.hpp"
#include "solver/propagators/staggered/staggered_setup.hpp"

namespace specwave {

// d(dt mu_e) / d(mu) of an edge's four corner slots (ElasticSetup::edge_nodes; a node can fill several at the grid's
// faces): dt H^2 / (4 mu_j^2) with H = 4 / sum 1/mu; next to a fluid, where H = 0, the one-sided derivative: 4 dt / z
// spread over the z fluid slots when they are all one node (H = 4 mu / z as it leaves 0), else 0.
inline std::array<double, 4> edge_derivative(const std::array<double, 4>& mu, const std::array<std::size_t, 4>& node,
                                             double dt) {
  std::array<double, 4> d{};
  int zeros = 0;
  double inverse = 0;
  for (int j = 0; j < 4; ++j) zeros += mu[std::size_t(j)] == 0, inverse += mu[std::size_t(j)] == 0 ? 0 : 1 / mu[j];
  if (zeros == 0) {
    const double h = 4 / inverse;
    for (std::size_t j = 0; j < 4; ++j) d[j] = dt * h * h / (4 * mu[j] * mu[j]);
    return d;
  }
  std::size_t first = 4;
  for (std::size_t j = 0; j < 4; ++j)
    if (mu[j] == 0) {
      if (first < 4 && node[j] != node[first]) return {};
      if (first == 4) first = j;
    }
  for (std::size_t j = 0; j < 4; ++j)
    if (mu[j] == 0) d[j] = 4 * dt / (double(zeros) * zeros);
  return d;
}

// dJ/d(coefficient) over the padded points (fp64 sums).
struct ElasticImages {
  std::vector<double> lam, mu2;
  std::array<std::vector<double>, 3> mudt, bdt;
  explicit ElasticImages(std::size_t size) : lam(size, 0.0), mu2(size, 0.0) {
    for (auto& v : mudt) v.assign(size, 0.0);
    for (auto& v : bdt) v.assign(size, 0.0);
  }
  void zero() {
    for (auto* v : {&lam, &mu2, &mudt[0], &mudt[1], &mudt[2], &bdt[0], &bdt[1], &bdt[2]})
      std::fill(v->begin(), v->end(), 0.0);
  }
};

template <class T>
class ElasticGradientModel : public GradientPropagator {
 public:
  void set_velocity(std::span<const double> vp) override { set(vp, setup_.vs, setup_.density); }
  void set_density(std::span<const double> rho) override { set(setup_.vp, setup_.vs, rho); }
  void set_model(std::span<const double> vp, std::span<const double> rho) override {
    set(vp, setup_.vs, rho.empty() ? std::span<const double>(setup_.density) : rho);
  }
  void set_shear_velocity(std::span<const double> vs) override { set(setup_.vp, vs, setup_.density); }
  void set_elastic_model(std::span<const double> vp, std::span<const double> rho, std::span<const double> vs) override {
    set(vp, vs.empty() ? std::span<const double>(setup_.vs) : vs,
        rho.empty() ? std::span<const double>(setup_.density) : rho);
  }
  std::vector<double> density() const override { return setup_.density; }
  std::vector<double> shear_velocity() const override { return setup_.vs; }
  std::vector<double> vel2dt2() const override { return model_vel2dt2(); }
  void add_density_gradient(std::span<double> out) const override {
    add_kept_density_gradient(*this, true, density_gradient_, out);
  }
  void add_shear_gradient(std::span<double> out) const override { add_kept_shear_gradient(out); }
  std::vector<double> born(int shot, std::span<const double> dmp) override {
    check_born_perturbation(dmp.size(), setup_.vp.size());
    return born_run(shot, dmp, {}, {});
  }
  std::vector<double> born_density(int shot, std::span<const double> drho) override {
    check_born_perturbation(drho.size(), setup_.vp.size());
    return born_run(shot, {}, {}, drho);
  }
  std::vector<double> born_shear(int shot, std::span<const double> dms) override {
    check_born_perturbation(dms.size(), setup_.vp.size());
    return born_run(shot, {}, dms, {});
  }

 protected:
  // The Born run of perturbations of m_p, m_s and rho (each empty: 0), the backend's.
  virtual std::vector<double> born_run(int shot, std::span<const double> dmp, std::span<const double> dms,
                                       std::span<const double> drho) = 0;
  // After set_all changed setup_'s coefficients: the backend's copy of them (none on the CPU).
  virtual void model_changed() {}
  void set(std::span<const double> vp, std::span<const double> vs, std::span<const double> rho) {
    set_all(vp, vs, rho);
    model_changed();
  }

  ElasticGradientModel(const Case& c, const Plan& plan)
      : case_(c),
        dt_(plan.dt),
        v_limit_(plan.v_reference / plan.cfl),
        speedup_(plan.unrelaxed_speedup),
        flush_denormals_(c.run.flush_denormals),
        source_stencils_(plan.sources),
        wavelets_(plan.wavelets),
        setup_(make_elastic_setup<T>(c, plan)),
        receivers_(c, plan),
        shared_receivers_(plan.receivers) {
    // The rows of every field's computed range, in the packed order (the history's field).
    const ElasticStep<T> s = setup_.step();
    for (int f = 0; f < elastic_fields; ++f)
      for (int z = s.lo(f, 0); z < s.hi(f, 0); ++z)
        for (int y = s.lo(f, 1); y < s.hi(f, 1); ++y) {
          const int n = s.hi(f, 2) - s.lo(f, 2);
          rows_[f].push_back({std::size_t(setup_.layout.index(z, y, s.lo(f, 2))), packed_values_, z, n});
          packed_values_ += std::size_t(n);
        }
  }

  // The model's checks: vp positive, finite and within the frozen dt's limit (with the density's contrasts, as the
  // plan's staggered_dt_max), rho positive and finite, 0 <= vs < vp sqrt(3) / 2 (a positive bulk modulus).
  void set_all(std::span<const double> vp, std::span<const double> vs, std::span<const double> rho) {
    const std::size_t points = setup_.vp.size();
    check_model_velocity(vp, points, v_limit_, dt_);
    if (rho.size() != points || vs.size() != points)
      throw std::invalid_argument("elastic gradient: the model must have nz * ny * nx values");
    for (std::size_t k = 0; k < points; ++k) {
      if (!std::isfinite(rho[k]) || rho[k] <= 0)
        throw Error(ExitCode::invalid_case,
                    fmt::format("model density {} kg/m^3 at flat index {} is not positive and finite", rho[k], k));
      if (!std::isfinite(vs[k]) || vs[k] < 0 || vs[k] >= vp[k] * std::sqrt(0.75))
        throw Error(ExitCode::invalid_case,
                    fmt::format("model shear velocity {} m/s at flat index {} is outside [0, vp sqrt(3)/2 = {:.6g}) "
                                "m/s (vp {} m/s there), where the bulk modulus stays positive; keep vs below "
                                "inversion.velocity_min sqrt(3)/2 (invert checks its bounds so at the start)",
                                vs[k], k, vp[k] * std::sqrt(0.75), vp[k]));
    }
    check_staggered_stability(case_, vp, rho, speedup_, dt_);
    update_elastic_model(setup_, vp, vs, rho);
  }

  std::vector<double> model_vel2dt2() const {
    std::vector<double> out(setup_.vp.size());
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = setup_.vp[k] * setup_.vp[k] * dt_ * dt_;
    return out;
  }
  void add_kept_shear_gradient(std::span<double> out) const {
    if (out.size() != shear_gradient_.size())
      throw std::invalid_argument("add_shear_gradient: call adjoint() first; out must be nz * ny * nx");
    for (std::size_t k = 0; k < out.size(); ++k) out[k] += shear_gradient_[k];
  }

  // A shot's host side: its sources' points and running sums, its receivers split into the pressure list (0) and the
  // velocity list (1); the last adjoint's gradients forgotten.
  void begin_shot_lists(int shot) {
    density_gradient_.clear();
    shear_gradient_.clear();
    sources_ = setup_.sources(source_stencils_.at(std::size_t(shot)));
    running_ = running_sums(wavelets_.at(std::size_t(shot)));
    shot_ = shot;
    const std::vector<PointStencil>& receivers = receivers_.of(shot, shared_receivers_);
    std::vector<PointStencil> lists[2];
    split_elastic_receivers(receivers, lists, velocity_, row_);
    for (int k = 0; k < 2; ++k) {
      lists_[k] = make_block_receivers<T>(setup_.layout, lists[k], setup_.block);
      list_receivers_[k] = lists[k].size();
    }
  }
  // The shot's traces from the two lists' raw records (pressure s^n; velocity v^{n+1/2}).
  std::vector<double> traces_of(const std::vector<double>& raw0, const std::vector<double>& raw1) const {
    std::vector<double> out;
    elastic_traces(velocity_, row_, raw0, raw1, setup_.nt, out);
    return out;
  }

  // Each list's adjoint source in its own rows' order, the transpose of traces(): a pressure trace is its raw row; a
  // velocity trace's sample n is (raw^n + raw^{n-1}) / 2, so raw^n's adjoint is (r^n + r^{n+1}) / 2 (r^{nt} = 0).
  std::array<std::vector<double>, 2> list_adjoint_sources(std::span<const double> residual) const {
    const std::size_t nt = std::size_t(setup_.nt);
    std::array<std::vector<double>, 2> out{std::vector<double>(list_receivers_[0] * nt),
                                           std::vector<double>(list_receivers_[1] * nt)};
    for (std::size_t r = 0; r < velocity_.size(); ++r) {
      const double* in = residual.data() + r * nt;
      double* o = out[velocity_[r]].data() + row_[r] * nt;
      for (std::size_t n = 0; n < nt; ++n) o[n] = velocity_[r] ? 0.5 * (in[n] + (n + 1 < nt ? in[n + 1] : 0.0)) : in[n];
    }
    return out;
  }
  // The coefficients' perturbation for parameter perturbations dm_p, dm_s, drho (each empty: 0), padded, and the
  // sources' factors'.
  struct Perturbation {
    std::vector<T> lam, mu2;
    std::array<std::vector<T>, 3> mudt, bdt;
    std::vector<T> factor;
  };
  Perturbation perturbation(std::span<const double> dmp, std::span<const double> dms, std::span<const double> drho) {
    const FieldLayout& L = setup_.layout;
    const std::size_t size = std::size_t(L.size()), points = setup_.vp.size();
    const auto at = [](std::span<const double> v, std::size_t k) { return v.empty() ? 0.0 : v[k]; };
    Perturbation p;
    p.lam.assign(size, T(0)), p.mu2.assign(size, T(0));
    std::vector<double> dmu(points);
    for_nodes([&](std::size_t k, index_t i, int) {
      const double rho = setup_.density[k], mp = msq(setup_.vp[k]), ms = msq(setup_.vs[k]);
      p.lam[std::size_t(i)] = T(rho / dt_ * (at(dmp, k) - 2 * at(dms, k)) + (mp - 2 * ms) / dt_ * at(drho, k));
      p.mu2[std::size_t(i)] = T(2 * rho / dt_ * at(dms, k) + 2 * ms / dt_ * at(drho, k));
      dmu[k] = (rho * at(dms, k) + ms * at(drho, k)) / (dt_ * dt_);
    });
    for (int c = 0; c < 3; ++c) {
      p.mudt[std::size_t(c)].assign(size, T(0));
      for_edges(c, [&](index_t i, const std::array<std::size_t, 4>& node, const std::array<double, 4>& d) {
        double sum = 0;
        for (std::size_t j = 0; j < 4; ++j) sum += d[j] * dmu[node[j]];
        p.mudt[std::size_t(c)][std::size_t(i)] = T(sum);
      });
      p.bdt[std::size_t(c)].assign(size, T(0));
      if (!drho.empty())
        for_velocity(c, [&](index_t i, std::size_t n0, std::size_t n1, double bdt) {
          p.bdt[std::size_t(c)][std::size_t(i)] = T(-bdt * bdt / (2 * dt_) * (drho[n0] + drho[n1]));
        });
    }
    // The sources: a pressure point's factor is proportional to m_p rho_k / rho_s, a force's to dt b at its point.
    p.factor.assign(sources_.factor.size(), T(0));
    const auto& stencils = source_stencils_.at(std::size_t(shot_));
    for (std::size_t j = 0; j + 1 < sources_.offsets.size(); ++j) {
      const double rho_s = point_density(stencils[j], std::span<const double>(setup_.density), setup_.shape);
      const double drho_s = drho.empty() ? 0.0 : point_density_change(stencils[j], drho, setup_.shape);
      for (std::int32_t q = sources_.offsets[j]; q < sources_.offsets[j + 1]; ++q) {
        const std::size_t e = std::size_t(q), f = sources_.field[e];
        const double factor = double(sources_.factor[e]);
        if (sources_.signal[e] == ElasticPoints<T>::running_sum) {
          const std::size_t k = compact(sources_.index[e]);
          p.factor[e] = T(factor * (at(dmp, k) / msq(setup_.vp[k]) + at(drho, k) / setup_.density[k] - drho_s / rho_s));
        } else if (sources_.signal[e] == ElasticPoints<T>::sample) {
          const std::size_t i = std::size_t(sources_.index[e]);
          p.factor[e] = T(factor * double(p.bdt[f - vz][i]) / double(setup_.bdt[f - vz][i]));
        }
      }
    }
    return p;
  }

  // The chain rule from the coefficients' images to m_p, m_s and rho (the transposes of perturbation()).
  void assemble_gradient(const ElasticImages& images, const std::vector<double>& source_image) {
    const std::size_t points = setup_.vp.size();
    vp_gradient_.assign(points, 0.0);
    shear_gradient_.assign(points, 0.0);
    density_gradient_.assign(points, 0.0);
    std::vector<double> mu_image(points, 0.0);  // dJ/d mu at each node
    for (int c = 0; c < 3; ++c)
      for_edges(c, [&](index_t i, const std::array<std::size_t, 4>& node, const std::array<double, 4>& d) {
        for (std::size_t j = 0; j < 4; ++j) mu_image[node[j]] += d[j] * images.mudt[std::size_t(c)][std::size_t(i)];
      });
    for_nodes([&](std::size_t k, index_t i, int) {
      const double rho = setup_.density[k], mp = msq(setup_.vp[k]), ms = msq(setup_.vs[k]);
      const double lam = images.lam[std::size_t(i)], mu2 = images.mu2[std::size_t(i)];
      vp_gradient_[k] = rho / dt_ * lam;
      shear_gradient_[k] = -2 * rho / dt_ * lam + 2 * rho / dt_ * mu2 + rho / (dt_ * dt_) * mu_image[k];
      density_gradient_[k] = (mp - 2 * ms) / dt_ * lam + 2 * ms / dt_ * mu2 + ms / (dt_ * dt_) * mu_image[k];
    });
    // The forces' images join their points' dt b images (factor = dt b w / V).
    std::array<std::vector<double>, 3> bdt_image = images.bdt;
    for (std::size_t e = 0; e < source_image.size(); ++e)
      if (sources_.signal[e] == ElasticPoints<T>::sample) {
        const int c = sources_.field[e] - vz;
        const std::size_t i = std::size_t(sources_.index[e]);
        bdt_image[std::size_t(c)][i] += source_image[e] / double(setup_.bdt[std::size_t(c)][i]);
      }
    for (int c = 0; c < 3; ++c)
      for_velocity(c, [&](index_t i, std::size_t n0, std::size_t n1, double bdt) {
        const double term = -bdt * bdt / (2 * dt_) * bdt_image[std::size_t(c)][std::size_t(i)];
        density_gradient_[n0] += term;
        density_gradient_[n1] += term;
      });
    // The pressure sources: factor -m_p rho_k / rho_s w / V.
    const auto& stencils = source_stencils_.at(std::size_t(shot_));
    for (std::size_t j = 0; j + 1 < sources_.offsets.size(); ++j) {
      double total = 0;
      for (std::int32_t q = sources_.offsets[j]; q < sources_.offsets[j + 1]; ++q) {
        const std::size_t e = std::size_t(q);
        if (sources_.signal[e] != ElasticPoints<T>::running_sum) continue;
        const std::size_t k = compact(sources_.index[e]);
        vp_gradient_[k] += source_image[e] / msq(setup_.vp[k]);
        density_gradient_[k] += source_image[e] / setup_.density[k];
        total += source_image[e];
      }
      if (total == 0) continue;
      const double rho_s = point_density(stencils[j], std::span<const double>(setup_.density), setup_.shape);
      const std::vector<double> d = point_density_derivative(stencils[j]);
      for (std::size_t q = 0; q < d.size(); ++q) {
        const GridPointWeight& w = stencils[j].points[q];
        density_gradient_[(std::size_t(w.iz) * setup_.shape[1] + w.iy) * setup_.shape[2] + w.ix] -=
            total / rho_s * d[q];
      }
    }
  }

  double msq(double v) const { return v * v * dt_ * dt_; }
  std::size_t compact(index_t i) const {
    int z, y, x;
    setup_.layout.coordinates(i, z, y, x);
    return (std::size_t(z) * setup_.shape[1] + y) * setup_.shape[2] + x;
  }
  // fn(k, i, z) for every node (compact index k, padded i), shared over the threads (fn writes at k or i only).
  template <class Fn>
  void for_nodes(Fn&& fn) const {
    const FieldLayout& L = setup_.layout;
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < L.nz; ++z)
      for (int y = 0; y < L.ny; ++y)
        for (int x = 0; x < L.nx; ++x) fn((std::size_t(z) * L.ny + y) * L.nx + x, L.index(z, y, x), z);
  }
  // fn(i, nodes, d(dt mu)/d mu per slot) for every point of shear stress szy + c's computed range.
  template <class Fn>
  void for_edges(int c, Fn&& fn) const {
    const ElasticStep<T> s = setup_.step();
    const int f = szy + c;
    for (int z = s.lo(f, 0); z < s.hi(f, 0); ++z)
      for (int y = s.lo(f, 1); y < s.hi(f, 1); ++y)
        for (int x = s.lo(f, 2); x < s.hi(f, 2); ++x) {
          const std::array<std::size_t, 4> node = setup_.edge_nodes(c, z, y, x);
          std::array<double, 4> mu{};
          for (std::size_t j = 0; j < 4; ++j) mu[j] = setup_.density[node[j]] * setup_.vs[node[j]] * setup_.vs[node[j]];
          fn(setup_.layout.index(z, y, x), node, edge_derivative(mu, node, dt_));
        }
  }
  // fn(i, n0, n1, dt b) for every point of v_{z+c}'s computed range and its two nodes.
  template <class Fn>
  void for_velocity(int c, Fn&& fn) const {
    const ElasticStep<T> s = setup_.step();
    const int f = vz + c;
    for (int z = s.lo(f, 0); z < s.hi(f, 0); ++z)
      for (int y = s.lo(f, 1); y < s.hi(f, 1); ++y)
        for (int x = s.lo(f, 2); x < s.hi(f, 2); ++x) {
          const auto [n0, n1] = setup_.velocity_nodes(c, z, y, x);
          fn(setup_.layout.index(z, y, x), n0, n1, 2 * dt_ / (setup_.density[n0] + setup_.density[n1]));
        }
  }

  Case case_;  // the grid and scheme, for the stability check
  double dt_, v_limit_, speedup_;
  bool flush_denormals_;
  std::vector<std::vector<PointStencil>> source_stencils_;  // [shot][source]
  std::vector<std::vector<std::vector<double>>> wavelets_;  // [shot][source][n]
  ElasticSetup<T> setup_;
  // A row of a field's computed range: its padded index, its offset in the packed field, its z and length.
  struct Row {
    std::size_t i, p;
    int z, n;
  };
  std::array<std::vector<Row>, elastic_fields> rows_;
  std::size_t packed_values_ = 0;  // the increments on the computed ranges
  ShotReceivers receivers_;
  std::vector<PointStencil> shared_receivers_;
  BlockReceivers<T> lists_[2];  // the pressure receivers, the velocity receivers (all whole: one rank)
  std::size_t list_receivers_[2] = {0, 0};
  std::vector<bool> velocity_;
  std::vector<std::size_t> row_;
  ElasticPoints<T> sources_;
  std::vector<std::vector<double>> running_;
  std::vector<double> vp_gradient_, shear_gradient_, density_gradient_;  // of the last adjoint
  int shot_ = -1;
};

}  // namespace specwave
