#include "solver/plan/shot_receivers.hpp"

#include <fmt/format.h>

#include "solver/case/errors.hpp"
#include "solver/plan/plan.hpp"

namespace specwave {
namespace {

// The plan's geometry of points: the spectral method's weights' Courant numbers and band, the elastic free surface's
// lambda / (lambda + 2 mu).
struct PointGeometry {
  const std::array<double, 3>& courant;
  const std::array<double, 3>& band;
  std::span<const double> surface_ratio;
};

PointStencil stencil(const Case& c, const PointGeometry& p, const Vec3& position, const std::string& what,
                     const Vec3& direction, bool source) {
  const auto& [courant, band, surface_ratio] = p;
  if (c.scheme.formulation == Formulation::elastic)
    return make_elastic_stencil(c.grid, position, direction, source, c.boundary.free_surface, what, surface_ratio);
  const bool spectral = c.scheme.method == Method::spectral;
  if (direction == Vec3{0, 0, 0})
    return spectral ? make_spectral_point_stencil(c.grid, position, courant, band, what)
                    : make_point_stencil(c.grid, position, c.boundary.free_surface, what);
  return spectral ? make_spectral_derivative_stencil(c.grid, position, direction, courant, band, what)
                  : make_derivative_stencil(c.grid, position, direction, c.boundary.free_surface, what);
}

// A receiver's stencil: the elastic scheme's divergence and curl from the velocities' derivatives, else the stencil of
// its component's direction.
PointStencil receiver_stencil(const Case& c, const PointGeometry& p, const Vec3& position, const std::string& what,
                              ReceiverComponent component) {
  if (velocity_derivative(component)) {
    if (c.scheme.formulation != Formulation::elastic)
      throw Error(
          ExitCode::invalid_case,
          fmt::format("{}: receivers.components \"{}\" (the particle velocity's {}) needs the elastic scheme (a "
                      "shear velocity in [model]); record \"p\", \"vz\", \"vy\" or \"vx\" in an acoustic model",
                      what, to_string(component), component == ReceiverComponent::divergence ? "divergence" : "curl"));
    return make_elastic_derivative_stencil(c.grid, position, component, c.boundary.free_surface, what);
  }
  return stencil(c, p, position, what, component_direction(component), false);
}

}  // namespace

PointStencil make_receiver_stencil(const Case& c, const Plan& plan, const Vec3& position, ReceiverComponent component,
                                   const std::string& what) {
  return receiver_stencil(c, {plan.spectral_point_courant, plan.spectral_point_band, plan.surface_ratio}, position,
                          what, component);
}

PointStencil make_plan_stencil(const Case& c, const Plan& plan, const Vec3& position, const std::string& what,
                               const Vec3& direction, bool source) {
  return stencil(c, {plan.spectral_point_courant, plan.spectral_point_band, plan.surface_ratio}, position, what,
                 direction, source);
}

PointStencil make_source_stencil(const Case& c, const Plan& plan, const SourceSpec& source, const std::string& what) {
  if (source.kind == SourceKind::moment)
    return make_elastic_moment_stencil(c.grid, source.position, source.moment, c.boundary.free_surface, what);
  return make_plan_stencil(c, plan, source.position, what,
                           source.kind == SourceKind::force ? source.direction : Vec3{0, 0, 0}, true);
}

std::vector<double> velocity_receiver_densities(const Case& c, const Plan& plan, std::size_t shot) {
  if (plan.model.density.empty() || !has_velocity_receivers(c) || c.scheme.formulation == Formulation::elastic)
    return {};
  const auto& positions = shot_receivers(c, shot);
  const bool shared = c.shots[shot].receivers.empty();  // the plan's stencils are this shot's
  std::vector<double> out(positions.size(), 0.0);
  for (std::size_t r = 0; r < positions.size(); ++r) {
    const ReceiverComponent component = shot_receiver_component(c, shot, r);
    if (component == ReceiverComponent::pressure) continue;
    out[r] = point_density(shared ? plan.receivers[r]
                                  : make_receiver_stencil(c, plan, positions[r], component,
                                                          fmt::format("receiver {} of shot {}", r, shot)),
                           plan.model);
  }
  return out;
}

ShotReceivers::ShotReceivers(const Case& c, const Plan& plan)
    : courant_(plan.spectral_point_courant), band_(plan.spectral_point_band), surface_ratio_(plan.surface_ratio) {
  geometry_.grid = c.grid;
  geometry_.scheme = c.scheme;
  geometry_.boundary = c.boundary;
  if (shared_receivers(c)) return;
  for (std::size_t s = 0; s < c.shots.size(); ++s) {
    own_.push_back(shot_receivers(c, s));
    auto& components = components_.emplace_back();
    for (std::size_t r = 0; r < own_.back().size(); ++r) components.push_back(shot_receiver_component(c, s, r));
  }
}

const std::vector<PointStencil>* ShotReceivers::own(int shot) {
  if (own_.empty()) return nullptr;
  if (made_ != shot) {
    const auto& positions = own_[std::size_t(shot)];
    stencils_.clear();
    stencils_.reserve(positions.size());
    for (std::size_t r = 0; r < positions.size(); ++r)
      stencils_.push_back(receiver_stencil(geometry_, {courant_, band_, surface_ratio_}, positions[r],
                                           fmt::format("shots[{}] receiver {}", shot, r),
                                           components_[std::size_t(shot)][r]));
    made_ = shot;
  }
  return &stencils_;
}

}  // namespace specwave
