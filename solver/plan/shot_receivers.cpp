#include "solver/plan/shot_receivers.hpp"

#include <fmt/format.h>

#include "solver/plan/plan.hpp"

namespace specwave {
namespace {

PointStencil stencil(const Case& c, const std::array<double, 3>& courant, const std::array<double, 3>& band,
                     const Vec3& position, const std::string& what) {
  return c.scheme.method == Method::spectral ? make_spectral_point_stencil(c.grid, position, courant, band, what)
                                             : make_point_stencil(c.grid, position, c.boundary.free_surface, what);
}

}  // namespace

PointStencil make_plan_stencil(const Case& c, const Plan& plan, const Vec3& position, const std::string& what) {
  return stencil(c, plan.spectral_point_courant, plan.spectral_point_band, position, what);
}

ShotReceivers::ShotReceivers(const Case& c, const Plan& plan)
    : courant_(plan.spectral_point_courant), band_(plan.spectral_point_band) {
  geometry_.grid = c.grid;
  geometry_.scheme = c.scheme;
  geometry_.boundary = c.boundary;
  if (shared_receivers(c)) return;
  for (std::size_t s = 0; s < c.shots.size(); ++s) own_.push_back(shot_receivers(c, s));
}

const std::vector<PointStencil>* ShotReceivers::own(int shot) {
  if (own_.empty()) return nullptr;
  if (made_ != shot) {
    const auto& positions = own_[std::size_t(shot)];
    stencils_.clear();
    stencils_.reserve(positions.size());
    for (std::size_t r = 0; r < positions.size(); ++r)
      stencils_.push_back(
          stencil(geometry_, courant_, band_, positions[r], fmt::format("shots[{}] receiver {}", shot, r)));
    made_ = shot;
  }
  return &stencils_;
}

}  // namespace specwave
