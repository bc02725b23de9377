#pragma once
// Receivers per shot (docs/case-file.md, "Receivers per shot"): the stencils of a shot's own receivers, made when the
// shot runs from the case's positions and the plan's method, exactly as make_plan makes the shared ones.
#include <string>
#include <vector>

#include "solver/case/case.hpp"
#include "solver/plan/acquisition.hpp"

namespace specwave {

struct Plan;

// The stencil of a source or receiver at `position` with the plan's method: FDTD's interpolation (with the free
// surface's mirror) or the spectral method's band-limited point (plan.spectral_point_courant and _band). Throws
// Error(invalid_case) naming `what` when the stencil leaves the grid. With a non-zero `direction` (a unit vector), the
// stencil of the derivative along it (make_derivative_stencil): a particle-velocity receiver's or a force's. The
// elastic scheme's stencils address its fields (make_elastic_stencil; `source` tells a source's from a receiver's).
PointStencil make_plan_stencil(const Case& c, const Plan& plan, const Vec3& position, const std::string& what,
                               const Vec3& direction = {0, 0, 0}, bool source = false);
// A source's stencil: a point (pressure) or the derivative along its direction (force).
PointStencil make_source_stencil(const Case& c, const Plan& plan, const SourceSpec& source, const std::string& what);
// A receiver's stencil for the component it records (the elastic scheme's divergence and curl:
// make_elastic_derivative_stencil).
PointStencil make_receiver_stencil(const Case& c, const Plan& plan, const Vec3& position, ReceiverComponent component,
                                   const std::string& what);

// The density at each receiver of shot `shot` (point_density of its stencil) when the plan has a density model (the
// staggered scheme) and the shot has particle-velocity receivers; else empty (particle_velocity_traces then takes
// model.density). Pressure receivers get 0 (unused).
std::vector<double> velocity_receiver_densities(const Case& c, const Plan& plan, std::size_t shot);

// Every shot's receivers as stencils. Copies what it needs from the case and the plan (their positions, the grid,
// the method), so it may outlive both.
class ShotReceivers {
 public:
  ShotReceivers(const Case& c, const Plan& plan);
  // True when every shot records the shared receivers (plan.receivers).
  bool shared() const { return own_.empty(); }
  // Shot s's receivers made here (kept until the next call for another shot) when shots have receivers of their own
  // (for every shot then, those sharing c.receivers too); nullptr when every shot shares plan.receivers. The same
  // vector for every shot, refilled: its address does not tell shots apart (list_key does).
  const std::vector<PointStencil>* own(int shot);
  // Which receivers shot s records, for a propagator that keeps lists made from them: equal keys, equal receivers
  // (-1: the shared ones; else the shot's own).
  int list_key(int shot) const { return own_.empty() ? -1 : shot; }
  // Shot s's receivers: its own, or `shared` (the plan's receivers) when it has none.
  const std::vector<PointStencil>& of(int shot, const std::vector<PointStencil>& shared) {
    const auto* p = own(shot);
    return p ? *p : shared;
  }

 private:
  Case geometry_;                       // grid, method and free surface (no shots, no receivers)
  std::vector<std::vector<Vec3>> own_;  // per shot (shot_receivers); empty when every shot shares c.receivers
  std::vector<std::vector<ReceiverComponent>> components_;  // per shot and receiver
  std::array<double, 3> courant_{}, band_{};
  std::vector<double> surface_ratio_;  // Plan::surface_ratio
  int made_ = -1;
  std::vector<PointStencil> stencils_;
};

}  // namespace specwave
