#pragma once
// What the staggered scheme's gradient propagators share whatever the backend (staggered_cpu_gradient.cpp,
// staggered_cuda_gradient.cpp; docs/numerics.md, "The staggered scheme's adjoint"): the model on the host (its checks,
// dt K, dt beta and the drives), the Born operators' relative perturbations, and the gradients' assembly from the
// images the adjoint pass sums, and GradientPropagator's model setters and getters for both (a backend that keeps the
// model elsewhere too follows it in model_changed). A base of each propagator (its members are theirs); one rank.
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <span>
#include <vector>

#include "solver/case/errors.hpp"
#include "solver/plan/model.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/gradient_propagator.hpp"
#include "solver/propagators/staggered/staggered_setup.hpp"

namespace specwave {

template <class T>
class StaggeredGradientModel : public GradientPropagator {
 public:
  void set_velocity(std::span<const double> velocity) override {
    set_velocity_model(velocity);
    model_changed();
  }
  void set_density(std::span<const double> density) override {
    set_density_model(density);
    model_changed();
  }
  void set_model(std::span<const double> velocity, std::span<const double> density) override {
    set_both(velocity, density);
    model_changed();
  }
  std::vector<double> density() const override { return setup_.density; }
  std::vector<double> vel2dt2() const override { return model_vel2dt2(); }
  void add_density_gradient(std::span<double> out) const override {
    add_kept_density_gradient(*this, with_density_, density_gradient_, out);
  }
  std::vector<double> born(int shot, std::span<const double> dm) override {
    return born_run(shot, velocity_relative(dm), nullptr, {});
  }
  // F_rho drho, the density's Born operator at fixed velocity: the scattering of born() with drho / rho for dm / m (dt
  // K, the drives and the sources' factors are proportional to rho at each point), each half node's w_a gaining
  // (d(dt beta) / (dt beta)) dw_a^n between the velocity and the pressure steps (dw_a the background's increment, dt
  // beta = 2 dt / (rho_0 + rho_1) of its two nodes), and each source's factor -(drho_s / rho_s) of itself.
  std::vector<double> born_density(int shot, std::span<const double> drho) override {
    if (!with_density_) return GradientPropagator::born_density(shot, drho);
    const std::vector<T> relative = density_relative(drho);
    const std::array<std::vector<T>, 3> buoyancy = buoyancy_relative(drho);
    return born_run(shot, relative, &buoyancy, source_relative(shot, drho));
  }

 protected:
  // The Born run of a relative perturbation of dt K, the drives and the sources' factors (`relative`, at the nodes),
  // with `buoyancy` (born_density) the relative perturbations of dt beta_a at the half nodes and `source_relative`
  // one more of each source's factor; the backend's.
  virtual std::vector<double> born_run(int shot, const std::vector<T>& relative,
                                       const std::array<std::vector<T>, 3>* buoyancy,
                                       const std::vector<T>& source_relative) = 0;
  // After the setters changed setup_'s coefficients: the backend's copy of them (none on the CPU).
  virtual void model_changed() {}

  StaggeredGradientModel(const Case& c, const Plan& plan)
      : dt_(plan.dt),
        v_limit_(plan.v_reference / plan.cfl),
        speedup_(plan.unrelaxed_speedup),
        case_(c),
        flush_denormals_(c.run.flush_denormals),
        source_stencils_(plan.sources),
        wavelets_(plan.wavelets),
        sls_(plan.sls),
        q_(plan.model.q),
        setup_(make_staggered_setup<T>(c, plan)),
        with_density_(c.inversion.density_parameter) {}

  // The model's setters (GradientPropagator's), each checked before anything changes.
  void set_velocity_model(std::span<const double> velocity) {
    check_model_velocity(velocity, setup_.velocity.size(), v_limit_, dt_);
    check_stable(velocity, setup_.density);
    setup_.set_velocity(velocity, sls_, q_);
  }
  void set_density_model(std::span<const double> density) {
    check_density(density);
    check_stable(setup_.velocity, density);
    setup_.set_density(density, sls_, q_);
  }
  void set_both(std::span<const double> velocity, std::span<const double> density) {
    if (density.empty()) return set_velocity_model(velocity);
    check_model_velocity(velocity, setup_.velocity.size(), v_limit_, dt_);
    check_density(density);
    check_stable(velocity, density);
    setup_.set_density(density, sls_, q_);
    setup_.set_velocity(velocity, sls_, q_);
  }
  std::vector<double> model_vel2dt2() const {
    std::vector<double> out(setup_.velocity.size());
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = setup_.velocity[k] * setup_.velocity[k] * dt_ * dt_;
    return out;
  }

  // born(): dm / m at the nodes (compact).
  std::vector<T> velocity_relative(std::span<const double> dm) const {
    check_born_perturbation(dm.size(), setup_.velocity.size());
    std::vector<T> relative(dm.size());
    for (std::size_t k = 0; k < dm.size(); ++k)
      relative[k] = T(dm[k] / (setup_.velocity[k] * setup_.velocity[k] * dt_ * dt_));
    return relative;
  }
  // born_density(): drho / rho at the nodes; d(dt beta_a) / (dt beta_a) = -(dt beta_a) (drho_0 + drho_1) / (2 dt) at
  // the half nodes (padded); -drho_s / rho_s of each source of shot `shot` (point_density).
  std::vector<T> density_relative(std::span<const double> drho) const {
    check_born_perturbation(drho.size(), setup_.density.size());
    std::vector<T> relative(drho.size());
    for (std::size_t k = 0; k < drho.size(); ++k) relative[k] = T(drho[k] / setup_.density[k]);
    return relative;
  }
  std::array<std::vector<T>, 3> buoyancy_relative(std::span<const double> drho) const {
    std::array<std::vector<T>, 3> buoyancy;
    for (int axis = 0; axis < 3; ++axis) {
      auto& out = buoyancy[std::size_t(axis)];
      out.assign(std::size_t(setup_.layout.size()), T(0));
      const T* bdt = setup_.bdt[std::size_t(axis)].data();
      for_each_half_node(axis, [&](index_t i, std::size_t n0, std::size_t n1) {
        out[std::size_t(i)] = T(-double(bdt[i]) / (2 * dt_) * (drho[n0] + drho[n1]));
      });
    }
    return buoyancy;
  }
  std::vector<T> source_relative(int shot, std::span<const double> drho) const {
    const auto& stencils = source_stencils_.at(std::size_t(shot));
    std::vector<T> out(stencils.size());
    for (std::size_t j = 0; j < stencils.size(); ++j) {
      const double rho_s = point_density(stencils[j], std::span<const double>(setup_.grid_density), shape());
      out[j] = T(-point_density_change(stencils[j], drho, shape()) / rho_s);
    }
    return out;
  }

  // gradient += image / m (the velocity gradient: dt K, the drives and the sources' factors are proportional to m).
  void add_velocity_gradient(const double* image, std::span<double> gradient) const {
    for (std::size_t k = 0; k < gradient.size(); ++k)
      gradient[k] += image[k] / (setup_.velocity[k] * setup_.velocity[k] * dt_ * dt_);
  }

  // dJ/d rho at fixed velocity for shot `shot`: dt K, the drives and the sources' factors are proportional to rho at
  // each point (the image over rho); dt beta_a at a half node is 2 dt / (rho_0 + rho_1) of its two nodes
  // (buoyancy_nodes), whose derivative with respect to each is -dt beta^2 / (2 dt), and dJ/d(dt beta) = sum_n w-bar dw
  // / (dt beta) (`buoyancy`, padded); a source's factor is inversely proportional to its rho_s, a mean of its stencil's
  // densities (point_density), and `source_image` is its sum of u-bar factor F^n.
  std::vector<double> density_gradient(int shot, const double* image, const std::array<const double*, 3>& buoyancy,
                                       const std::vector<double>& source_image) const {
    const FieldLayout& L = setup_.layout;
    std::vector<double> out(setup_.density.size());
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = image[k] / setup_.density[k];
    for (int axis = 0; axis < 3; ++axis) {
      const double* b = buoyancy[std::size_t(axis)];
      const T* bdt = setup_.bdt[std::size_t(axis)].data();
      for_each_half_node(axis, [&](index_t i, std::size_t n0, std::size_t n1) {
        const double term = -b[i] * double(bdt[i]) / (2 * dt_);
        out[n0] += term;
        out[n1] += term;
      });
    }
    const auto& stencils = source_stencils_.at(std::size_t(shot));
    for (std::size_t j = 0; j < stencils.size(); ++j) {
      const double rho_s = point_density(stencils[j], std::span<const double>(setup_.grid_density), shape());
      const std::vector<double> d = point_density_derivative(stencils[j]);
      for (std::size_t p = 0; p < d.size(); ++p) {
        const GridPointWeight& q = stencils[j].points[p];
        out[(std::size_t(q.iz) * L.ny + q.iy) * L.nx + q.ix] -= source_image[j] / rho_s * d[p];
      }
    }
    return out;
  }

  // fn(i, n0, n1) for every half node of axis `axis` whose dt beta the step uses (-R .. n + R - 1 along it, the grid's
  // nodes along the others; i its padded index) and the two nodes whose densities make it (buoyancy_nodes).
  template <class Fn>
  void for_each_half_node(int axis, Fn&& fn) const {
    const FieldLayout& L = setup_.layout;
    const int R = setup_.coef.radius;
    int lo[3] = {0, 0, 0}, hi[3] = {L.nz, L.ny, L.nx};
    lo[axis] = -R, hi[axis] = L.extent(axis) + R;
    for (int z = lo[0]; z < hi[0]; ++z)
      for (int y = lo[1]; y < hi[1]; ++y)
        for (int x = lo[2]; x < hi[2]; ++x) {
          std::size_t n0, n1;
          setup_.buoyancy_nodes(axis, z, y, x, n0, n1);
          fn(L.index(z, y, x), n0, n1);
        }
  }

  std::string scheme_name(const char* backend) const {
    return fmt::format("{}staggered-{}-{}", setup_.sls_drive.empty() ? "" : "visco-", backend,
                       sizeof(T) == 4 ? "fp32" : "fp64");
  }

  double dt_, v_limit_, speedup_;
  Case case_;  // the grid and scheme, for check_stable
  bool flush_denormals_;
  std::vector<std::vector<PointStencil>> source_stencils_;  // [shot][source]
  std::vector<std::vector<std::vector<double>>> wavelets_;  // [shot][source][n]
  SlsFit sls_;
  std::vector<float> q_;  // the whole grid's Q (attenuation), or empty
  StaggeredSetup<T> setup_;
  bool with_density_;                     // inversion.parameters names "density"
  std::vector<double> density_gradient_;  // dJ/d rho of the last adjoint

 private:
  std::array<int, 3> shape() const { return {setup_.layout.nz, setup_.layout.ny, setup_.layout.nx}; }
  void check_density(std::span<const double> density) const {
    if (density.size() != setup_.density.size())
      throw std::invalid_argument("set_density: the model must have nz * ny * nx values");
    for (std::size_t k = 0; k < density.size(); ++k)
      if (!std::isfinite(density[k]) || density[k] <= 0)
        throw Error(ExitCode::invalid_case,
                    fmt::format("model density {} kg/m^3 at flat index {} is not positive and finite", density[k], k));
  }
  void check_stable(std::span<const double> velocity, std::span<const double> density) const {
    check_staggered_stability(case_, velocity, density, speedup_, dt_);
  }
};

}  // namespace specwave
