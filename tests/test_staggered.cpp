// The staggered velocity-pressure scheme (variable density; docs/numerics.md, "Variable density"): against the
// second-order scheme where they are the same scheme (order 2, constant density, no CPML: rounding), against the
// analytic Green's function and reflection coefficients (discretisation error), reciprocity (rounding), and the case
// file's and the preflight's refusals.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <Eigen/Dense>
#include <vector>

#include "case_builders.hpp"
#include "case_text.hpp"
#include "kernels/stencil.hpp"
#include "reflection.hpp"
#include "solver/case/errors.hpp"
#include "solver/forward/forward.hpp"
#include "solver/forward/particle_velocity.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/capabilities.hpp"
#include "solver/propagators/propagator.hpp"
#include "validation/analytic.hpp"
#include "validation/validate.hpp"

using namespace specwave;
using testing::rel_l2;

namespace {

// The backend comparison case (tests/case_builders.hpp) on the staggered scheme, with the density `densities` of its
// three layers (none: a constant density).
Case staggered_case(int order, int pml, bool free_surface, ModelSpec::Kind kind, std::vector<double> densities = {}) {
  Case c = testing::forward_comparison_case(order, pml, free_surface, kind);
  c.scheme.formulation = Formulation::staggered;
  if (!densities.empty()) {
    c.model.kind = ModelSpec::Kind::layered;
    c.model.densities = std::move(densities);
  } else {
    c.model.density = 1800;
  }
  return c;
}

}  // namespace

TEST_CASE("staggered: order 2 at a constant density is the second-order scheme (traces to rounding)") {
  for (const bool free_surface : {false, true})
    for (const auto kind : {ModelSpec::Kind::gaussian, ModelSpec::Kind::layered})
      for (const auto& [precision, tolerance] : {std::pair{Precision::fp64, 1e-12}, std::pair{Precision::fp32, 1e-5}}) {
        Case staggered = staggered_case(2, 0, free_surface, kind);
        staggered.run.precision = precision;
        Case second = staggered;
        second.scheme.formulation = Formulation::second_order;
        const Plan ps = make_plan(staggered), p2 = make_plan(second);
        // The same dt for both (the two limits are equal at order 2).
        REQUIRE(std::abs(ps.dt - p2.dt) <= 1e-15 * p2.dt);
        const auto a = simulate_shot(staggered, ps, 0), b = simulate_shot(second, p2, 0);
        const double traces = rel_l2(a.traces, b.traces), field = rel_l2(a.final_field, b.final_field);
        MESSAGE(std::string(free_surface ? "free surface, " : "")
                << std::string(to_string(kind)) << (precision == Precision::fp64 ? " fp64" : " fp32") << ": traces "
                << traces << ", final field " << field);
        CHECK(traces <= tolerance);
        CHECK(field <= tolerance);
      }
}

TEST_CASE("staggered: the engine matches the Eigen staggered reference (fp64 <= 1e-12, fp32 <= 1e-5)") {
  // validate_case: the engine in fp64 and fp32 against validation/staggered_reference.cpp, traces and final field.
  struct Config {
    const char* name;
    int order, pml;
    bool free_surface;
  };
  for (const Config& cfg :
       {Config{"order 2, no CPML", 2, 0, false}, Config{"order 8, CPML 6", 8, 6, false},
        Config{"order 4, CPML 5, free surface", 4, 5, true}, Config{"order 16, CPML 4", 16, 4, false}}) {
    const std::string config = cfg.name;
    CAPTURE(config);
    const Case c = staggered_case(cfg.order, cfg.pml, cfg.free_surface, ModelSpec::Kind::layered, {1000, 2100, 2600});
    const ValidationReport report = validate_case(c, 1'000'000);
    MESSAGE(config << "\n" << report.text());
    for (const auto& n : report.norms) {
      CAPTURE(n.what);
      if (n.tolerance > 0) CHECK(n.value <= n.tolerance);
    }
  }
}

TEST_CASE("staggered: a constant density's value changes no pressure") {
  Case a = staggered_case(8, 6, false, ModelSpec::Kind::gaussian);
  Case b = a;
  b.model.density = 2650;
  const Plan pa = make_plan(a), pb = make_plan(b);
  const auto ua = simulate_shot(a, pa, 0), ub = simulate_shot(b, pb, 0);
  const double d = rel_l2(ub.traces, ua.traces);
  MESSAGE("density 1800 vs 2650 kg/m^3: traces differ by " << d);
  CHECK(d <= 1e-12);
}

TEST_CASE(
    "staggered: the analytic Green's function at 6 points per wavelength (order 8), beside the second-order "
    "scheme") {
  // Homogeneous medium, source and receivers on nodes 10-20 cells apart, no boundary reflection before the end: the
  // error is the schemes' dispersion (green_time_discrete removes the leapfrog's time error).
  Case c = testing::small_case(64, 10, 2000, 8, 10, 14, 0.32);
  c.model.density = 1000;
  const double centre = 10 * 32;
  c.shots[0].sources[0].position = {centre, centre, centre};
  c.receivers = {{centre, centre, centre + 100}, {centre + 150, centre, centre}, {centre + 120, centre + 120, centre}};
  double errors[2] = {0, 0};
  for (const auto formulation : {Formulation::second_order, Formulation::staggered}) {
    c.scheme.formulation = formulation;
    const Plan plan = make_plan(c);
    const auto out = simulate_shot(c, plan, 0);
    double worst = 0;
    for (int r = 0; r < int(c.receivers.size()); ++r) {
      const auto& p = c.receivers[std::size_t(r)];
      const double dist = std::hypot(p[0] - centre, p[1] - centre, p[2] - centre);
      const auto expected = validation::green_time_discrete(plan.wavelets[0][0], plan.dt, dist, 2000);
      worst = std::max(worst, rel_l2(testing::trace_row(out.traces, plan.nt, r), expected));
    }
    MESSAGE(std::string(to_string(formulation))
            << ": " << plan.points_per_wavelength << " points per wavelength, largest error " << worst);
    errors[formulation == Formulation::staggered] = worst;
  }
  // The staggered operator is the more accurate of the two at one order (docs/numerics.md); both are well within
  // the sampling's discretisation error.
  CHECK(errors[1] < 1e-2);
  CHECK(errors[1] < errors[0]);
}

TEST_CASE("staggered: reciprocity in a variable-density model with CPML and off-grid points (fp64, rounding)") {
  // rho_A trace(A -> B) = rho_B trace(B -> A) (docs/numerics.md, "Reciprocity"), rho_X the density at the point
  // averaged with its own weights (|w|-weighted).
  for (const bool free_surface : {false, true}) {
    Case c = staggered_case(8, 6, free_surface, ModelSpec::Kind::layered, {1000, 2100, 2600});
    const Vec3 a{free_surface ? 31.0 : 121.3, 203.4, 188.8}, b{231.7, 180.2, 262.6};
    c.shots[0].sources.resize(1);
    c.shots[0].sources[0].position = a;
    c.receivers = {b};
    Case swapped = c;
    swapped.shots[0].sources[0].position = b;
    swapped.receivers = {a};
    const Plan pc = make_plan(c), ps = make_plan(swapped);
    const auto ab = simulate_shot(c, pc, 0).traces, ba = simulate_shot(swapped, ps, 0).traces;
    const auto density = [&](const Vec3& p) {
      const PointStencil s = make_point_stencil(c.grid, p, free_surface, "point");
      double sum = 0, weights = 0;
      for (const auto& q : s.points) sum += std::abs(q.weight) * pc.model.density_at(q.iz, q.iy, q.ix);
      for (const auto& q : s.points) weights += std::abs(q.weight);
      return sum / weights;
    };
    const double rho_a = density(a), rho_b = density(b);
    std::vector<double> lhs(ab.size()), rhs(ba.size());
    for (std::size_t n = 0; n < ab.size(); ++n) lhs[n] = rho_a * ab[n], rhs[n] = rho_b * ba[n];
    const double d = rel_l2(lhs, rhs);
    MESSAGE(std::string(free_surface ? "free surface: " : "")
            << "rho_A " << rho_a << ", rho_B " << rho_b << ", |rho_A u_AB - rho_B u_BA| / |rho_B u_BA| = " << d);
    CHECK(rho_a != doctest::Approx(rho_b));
    CHECK(d <= 1e-12);
  }
}

namespace {}  // namespace

TEST_CASE("staggered: normal-incidence reflection coefficients within 2% of (Z2 - Z1) / (Z2 + Z1)") {
  struct Contrast {
    const char* name;
    double v1, rho1, v2, rho2;
  };
  for (const Contrast& k :
       {Contrast{"density only", 2000, 1000, 2000, 2500}, Contrast{"velocity and density", 2000, 1000, 2600, 1800},
        Contrast{"velocity only", 2000, 1500, 2500, 1500}}) {
    const double z1 = k.rho1 * k.v1, z2 = k.rho2 * k.v2, expected = (z2 - z1) / (z2 + z1);
    const double measured = testing::measured_reflection(k.v1, k.rho1, k.v2, k.rho2);
    MESSAGE(std::string(k.name) << ": measured R " << measured << ", (Z2 - Z1) / (Z2 + Z1) = " << expected << ", error "
                                << std::abs(measured - expected) / std::abs(expected));
    CHECK(std::abs(measured - expected) <= 0.02 * std::abs(expected));
  }
}

TEST_CASE(
    "spectral with a density model: reflection coefficients within 2%; a constant density model is the "
    "constant-density run bit for bit") {
  // docs/numerics.md, "Variable density in the k-space method": the split-field PML's w_a update takes dt rho_ref /
  // rho at the staggered points, its p_a update rho v^2 dt / rho_ref.
  struct Contrast {
    const char* name;
    double v1, rho1, v2, rho2;
  };
  for (const Contrast& k :
       {Contrast{"density only", 2000, 1000, 2000, 2500}, Contrast{"velocity and density", 2000, 1000, 2600, 1800}}) {
    const double z1 = k.rho1 * k.v1, z2 = k.rho2 * k.v2, expected = (z2 - z1) / (z2 + z1);
    const double measured = testing::measured_reflection(k.v1, k.rho1, k.v2, k.rho2, Method::spectral);
    MESSAGE("spectral, " << std::string(k.name) << ": measured R " << measured << ", (Z2 - Z1) / (Z2 + Z1) = "
                         << expected << ", error " << std::abs(measured - expected) / std::abs(expected));
    CHECK(std::abs(measured - expected) <= 0.02 * std::abs(expected));
  }
  Case c = testing::small_case(36, 10, 2000, 8, 8, 15, 0.2);
  c.scheme.method = Method::spectral;
  c.model.kind = ModelSpec::Kind::layered;
  c.model.interfaces = {175.0};
  c.model.velocities = {1800.0, 2400.0};
  c.shots[0].sources[0].position = {123.4, 171.2, 168.9};
  c.receivers = {{250.0, 150.0, 200.0}, {100.0, 200.0, 120.5}};
  const auto constant = simulate_shot(c, make_plan(c), 0).traces;
  c.model.densities = {1500.0, 1500.0};
  const auto layered = simulate_shot(c, make_plan(c), 0).traces;
  CHECK(constant == layered);
}

TEST_CASE("staggered: the case file's density keys and their refusals") {
  const auto parse = testing::parse_case_tables;
  const auto refused = testing::check_refused;
  const std::string& layered = testing::two_layers;
  {
    const Case c = parse(layered + "densities = [1000.0, 2000.0]\n");
    CHECK(c.scheme.formulation == Formulation::staggered);
    CHECK(c.model.densities == std::vector<double>{1000, 2000});
  }
  CHECK(parse(layered).scheme.formulation == Formulation::second_order);
  CHECK(parse(layered + "density = 1000.0\n[scheme]\nformulation = \"staggered\"\n").scheme.formulation ==
        Formulation::staggered);
  refused(layered + "densities = [1000.0]\n", "model.densities");
  refused(layered + "densities = [1000.0, -2.0]\n", "model.densities");
  refused(layered + "densities = [1000.0, 2000.0]\ndensity = 1000.0\n", "cannot be combined with density");
  refused(layered + "densities = [1000.0, 2000.0]\n[scheme]\nformulation = \"second_order\"\n", "scheme.formulation");
  {  // the k-space method takes the density (and Q) in its own form (not the FDTD staggered scheme)
    const Case c = parse(layered + "densities = [1000.0, 2000.0]\n[scheme]\nmethod = \"spectral\"\n");
    CHECK(c.scheme.formulation == Formulation::second_order);
    const Case q = parse(layered + "densities = [1000.0, 2000.0]\n[scheme]\nmethod = \"spectral\"\n[attenuation]\n" +
                         "q = 50.0\n");
    CHECK(q.scheme.formulation == Formulation::second_order);
    CHECK(q.attenuation.present);
  }
  refused("[model]\ntype = \"homogeneous\"\nvelocity = 2000.0\ndensities = [1000.0]\n", "model.densities");
  refused(
      "[model]\ntype = \"file\"\nfile = \"m.raw\"\nformat = \"raw\"\nshape = [40, 40, 40]\n"
      "density_dataset = \"/density\"\n",
      "model.density_dataset");
}

TEST_CASE("staggered: a force source and a particle-velocity receiver in a density model are each other's transpose") {
  // A force d at A recorded as pressure at B, and a pressure source at B recorded as the velocity w_d at A:
  // w_d(A) = -(1 / rho_B) I[u_force(B)] (docs/numerics.md, "Variable density": rho_B the pressure source's density,
  // the force's and the velocity receiver's the same |w|-weighted density at A), in fp64 to rounding, with CPML,
  // three layers of density and off-grid points, for each axis.
  const Vec3 a{121.3, 203.4, 188.8}, b{231.7, 180.2, 262.6};
  Case force = staggered_case(8, 6, false, ModelSpec::Kind::layered, {1000, 2100, 2600});
  force.shots[0].sources.resize(1);
  force.shots[0].sources[0].position = a;
  force.shots[0].sources[0].kind = SourceKind::force;
  force.receivers = {b};
  Case pressure = force;
  pressure.shots[0].sources[0].position = b;
  pressure.shots[0].sources[0].kind = SourceKind::pressure;
  pressure.receivers = {a};
  pressure.receiver_components = {ReceiverComponent::vz};
  // A particle-velocity receiver records along an axis: compare component by component, with the force along it.
  double worst = 0;
  for (const auto component : {ReceiverComponent::vz, ReceiverComponent::vy, ReceiverComponent::vx}) {
    force.shots[0].sources[0].direction = component_direction(component);
    pressure.receiver_components = {component};
    const Plan pf = make_plan(force), pp = make_plan(pressure);
    auto u_force = simulate_shot(force, pf, 0).traces;
    const auto w = simulate_shot(pressure, pp, 0).traces;
    const double rho_b = point_density(make_point_stencil(force.grid, b, false, "B"), pf.model);
    integrate_in_time(u_force, pf.dt);
    for (double& x : u_force) x *= -1 / rho_b;
    const double e = rel_l2(w, u_force);
    MESSAGE(std::string(to_string(component)) << ": |w(A) + I[u_force(B)] / rho_B| / |w(A)| = " << e);
    worst = std::max(worst, e);
  }
  CHECK(worst <= 1e-12);
}

TEST_CASE("staggered: the preflight refuses what the scheme does not do yet, naming the key") {
  Case c = staggered_case(8, 6, false, ModelSpec::Kind::layered, {1000, 2000, 2500});
  {
    // The GPU runs the scheme forward and its gradient (staggered_cuda_gradient.cpp), so a case with an [inversion]
    // table may run on "cuda" (the elastic scheme's too: test_elastic).
    const Capability& gpu = capability(Method::fdtd, BackendKind::cuda);
    CHECK(gpu.cannot_run(c).empty());
    Case g = c;
    g.inversion.present = true;
    CHECK(gpu.cannot_run(g).empty());
  }
  {
    // A density of 0 in the model is refused with its index.
    Case z = c;
    z.model.densities = {1000, 0, 2000};
    CHECK_THROWS_WITH_AS(make_plan(z), doctest::Contains("density 0"), Error);
  }
}

TEST_CASE("staggered: the plan notes a density contrast that shrinks dt, and an attenuation band off the wavelet") {
  const auto noted = [](const Plan& plan, const std::string& text) {
    return std::any_of(plan.notes.begin(), plan.notes.end(),
                       [&](const std::string& n) { return n.find(text) != std::string::npos; });
  };
  // Densities of 1e-3 and 1e6 kg/m^3 beside 1000 (the ends accepted; a no-data value of 1e9 is refused as misread): dt
  // falls, and the plan says so.
  const Plan absurd = make_plan(staggered_case(8, 6, false, ModelSpec::Kind::layered, {1000, 1e-3, 1e6}));
  CHECK(noted(absurd, "lowers dt_max"));
  CHECK_THROWS_WITH_AS(make_plan(staggered_case(8, 6, false, ModelSpec::Kind::layered, {1000, 2000, 1e9})),
                       doctest::Contains("density must be finite and in [1e-3, 1e6] kg/m^3"), Error);
  const Plan usual = make_plan(staggered_case(8, 6, false, ModelSpec::Kind::layered, {1000, 2000, 2500}));
  CHECK_FALSE(noted(usual, "lowers dt_max"));
  // Q fitted over 1-10 MHz while the sources peak at tens of hertz.
  Case q = staggered_case(8, 6, false, ModelSpec::Kind::layered, {1000, 2000, 2500});
  q.attenuation.present = true;
  q.attenuation.q_layers = {30.0, 60.0, 120.0};
  q.attenuation.band = std::array<double, 2>{1e6, 1e7};
  CHECK(noted(make_plan(q), "does not hold the peak frequency"));
  q.attenuation.band.reset();
  CHECK_FALSE(noted(make_plan(q), "does not hold the peak frequency"));
}

namespace {
// The field after `steps` steps of the plan's first shot at `dt` (its wavelet, then zeros): a stability probe.
FieldStats run_at_dt(const Case& c, const Plan& plan, double dt, int steps) {
  Plan p = plan;
  p.dt = dt;
  p.nt = steps;
  p.wavelets[0][0].assign(std::size_t(steps), 0.0);
  for (int n = 0; n < std::min(steps, int(plan.wavelets[0][0].size())); ++n)
    p.wavelets[0][0][std::size_t(n)] = plan.wavelets[0][0][std::size_t(n)];
  auto prop = make_propagator(c, p);
  prop->begin_shot(p.sources[0], p.wavelets[0], p.receivers);
  prop->advance(0, steps);
  return prop->field_stats();
}

// The largest eigenvalue of -K D- beta D+ on a periodic line (unit spacing and velocity, densities rho at the nodes),
// written here apart from the library's: the operator applied to the unit vectors, then Eigen's symmetric solver on
// the symmetric form's matrix.
double line_eigenvalue(const std::vector<double>& rho, int R) {
  const int n = int(rho.size());
  const std::vector<double> g = staggered_derivative_coefficients(R);
  const auto wrap = [n](int i) { return ((i % n) + n) % n; };
  Eigen::MatrixXd a(n, n);
  for (int col = 0; col < n; ++col) {
    std::vector<double> x(std::size_t(n), 0.0), half(std::size_t(n), 0.0);
    x[std::size_t(col)] = std::sqrt(rho[std::size_t(col)]);  // K^(1/2) e_col
    for (int j = 0; j < n; ++j) {                            // beta D+ at half node j + 1/2
      double d = 0;
      for (int k = 1; k <= R; ++k)
        d += g[std::size_t(k)] * (x[std::size_t(wrap(j + k))] - x[std::size_t(wrap(j - k + 1))]);
      half[std::size_t(j)] = d * 2 / (rho[std::size_t(j)] + rho[std::size_t(wrap(j + 1))]);
    }
    for (int i = 0; i < n; ++i) {  // -K^(1/2) D- at node i
      double d = 0;
      for (int k = 1; k <= R; ++k)
        d += g[std::size_t(k)] * (half[std::size_t(wrap(i + k - 1))] - half[std::size_t(wrap(i - k))]);
      a(i, col) = -std::sqrt(rho[std::size_t(i)]) * d;
    }
  }
  return Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(a, Eigen::EigenvaluesOnly).eigenvalues().maxCoeff();
}
}  // namespace

TEST_CASE("staggered: an inversion's density bounds set a dt that holds for every density within them") {
  // staggered_density_growth searches periodic two-valued layerings; here random lines (two-valued and continuous,
  // 40 nodes) must not exceed it, and the growth must be 1 without contrast and grow with it.
  for (int R : {1, 2, 4, 8}) {
    CHECK(staggered_density_growth(R, 1.0) == 1.0);
    double previous = 1;
    for (double ratio : {1.5, 3.0, 10.0, 100.0}) {
      const double growth = staggered_density_growth(R, ratio);
      CHECK(growth >= previous * (1 - 1e-12));  // (order 2: 1 to rounding at every ratio)
      previous = growth;
      const double g_max = staggered_derivative_symbol_max(R);
      unsigned state = 12345u + unsigned(R);
      const auto uniform = [&] {
        state = state * 1664525u + 1013904223u;
        return double(state >> 8) / double(1u << 24);
      };
      double worst = 0;
      for (int trial = 0; trial < 60; ++trial) {
        std::vector<double> rho(40);
        for (double& r : rho) r = trial % 2 ? (uniform() < 0.5 ? ratio : 1.0) : 1.0 + (ratio - 1) * uniform();
        worst = std::max(worst, line_eigenvalue(rho, R) / (g_max * g_max));
      }
      CAPTURE(R);
      CAPTURE(ratio);
      MESSAGE("order " << 2 * R << ", density ratio " << ratio << ": growth " << growth << ", random lines up to "
                       << worst);
      CHECK(worst <= growth * (1 + 1e-9));
    }
  }
  // End to end, order 8, densities within [10, 1000] (growth 1.48): starting from a constant density, the plan's dt
  // is the constant-density limit over sqrt(growth), and the worst layering (one node at 1000 in three) runs 1500
  // steps bounded at 0.99 of it; at 0.99 of the constant-density limit, the plan's dt without the bounds, it blows up.
  Case c = testing::small_case(40, 10, 1500, 8, 8, 4, 1.0);
  c.grid.shape = {60, 40, 40};
  c.scheme.formulation = Formulation::staggered;
  c.model.kind = ModelSpec::Kind::layered;
  c.model.interfaces = {};
  c.model.velocities = {1500};
  c.model.densities = {1000};
  c.shots[0].sources[0].position = {300, 200, 200};
  c.receivers = {{250, 200, 250}};
  c.time.cfl_safety = 0.99;
  Case bounded = c;
  bounded.inversion.density_parameter = true;
  bounded.inversion.density_min = 10;
  bounded.inversion.density_max = 1000;
  const double growth = staggered_density_growth(4, 100);
  const double limit = stable_dt_staggered(c.grid, 8, 1500);
  const Plan plan = make_plan(bounded);
  CHECK(plan.dt_max == doctest::Approx(limit / std::sqrt(growth)).epsilon(1e-12));
  CHECK(make_plan(c).dt_max == doctest::Approx(limit).epsilon(1e-12));
  Case fixed = bounded;  // a time.dt the starting model allows but the bounds do not: refused, naming them
  fixed.time.dt = 0.95 * limit;
  CHECK_THROWS_WITH_AS(make_plan(fixed), doctest::Contains("every density within inversion.density_min/max"), Error);
  Case layered = c;  // nodes i % 3 == 0 at 1000 kg/m^3, the others at 10
  layered.model.interfaces.clear();
  layered.model.velocities.clear();
  layered.model.densities.clear();
  for (int i = 0; i < 60; ++i) {
    if (i > 0) layered.model.interfaces.push_back(10.0 * i - 5.0);
    layered.model.velocities.push_back(1500);
    layered.model.densities.push_back(i % 3 == 0 ? 1000 : 10);
  }
  const Plan layered_plan = make_plan(layered);
  const FieldStats stable = run_at_dt(layered, layered_plan, 0.99 * plan.dt_max, 1500),
                   unstable = run_at_dt(layered, layered_plan, 0.99 * limit, 1500);
  MESSAGE("densities 10-1000: dt_max " << plan.dt_max << " s (constant density: " << limit << " s); max |u| after "
                                       << "1500 steps of the worst layering " << stable.max_abs << " at 0.99 dt_max, "
                                       << unstable.max_abs << " at 0.99 of the constant-density limit");
  CHECK(stable.finite);
  CHECK(stable.max_abs < 1e-3);
  CHECK((!unstable.finite || unstable.max_abs > 1e3));
}

TEST_CASE(
    "staggered: dt_max across a strong density contrast (air over water) is stable, the constant-density bound "
    "is not") {
  // Order 8, air (340 m/s, 1.2 kg/m^3) over water (1500 m/s, 1000 kg/m^3): across the jump a half node's buoyancy
  // meets moduli up to R nodes away and the operator's largest eigenvalue exceeds the constant-density bound (docs/
  // numerics.md, "Stability"). The plan's dt_max is lowered by the z column's eigenvalue; 1500 steps at 0.99 of it
  // stay bounded, and the same run at 0.99 of the constant-density bound blows up.
  Case c = testing::small_case(40, 10, 1500, 8, 8, 4, 1.0);
  c.grid.shape = {60, 40, 40};
  c.model.kind = ModelSpec::Kind::layered;
  c.model.interfaces = {200};
  c.model.velocities = {340, 1500};
  c.model.densities = {1.2, 1000};
  c.scheme.formulation = Formulation::staggered;
  c.shots[0].sources[0].position = {300, 200, 200};
  c.receivers = {{250, 200, 250}};
  c.time.cfl_safety = 0.99;
  const Plan plan = make_plan(c);
  const double bound = stable_dt_staggered(c.grid, 8, 1500);
  MESSAGE("dt_max " << plan.dt_max << " s, the constant-density bound " << bound << " s (ratio " << plan.dt_max / bound
                    << ")");
  CHECK(plan.dt_max < 0.95 * bound);
  const FieldStats stable = run_at_dt(c, plan, 0.99 * plan.dt_max, 1500);
  const FieldStats unstable = run_at_dt(c, plan, 0.99 * bound, 1500);
  MESSAGE("max |u| after 1500 steps: " << stable.max_abs << " at 0.99 dt_max, " << unstable.max_abs
                                       << " at 0.99 of the bound");
  CHECK(stable.finite);
  CHECK(stable.max_abs < 1e-3);
  CHECK((!unstable.finite || unstable.max_abs > 1e3));
}

TEST_CASE("k-space method with a density model: a contrast above 1000:1 needs the smaller step the preflight names") {
  // Air-like 1 kg/m^3 over 2300: at the default CFL number (0.8) the k-space method's global derivatives make such a
  // contrast unstable (measured: docs/numerics.md), so the preflight refuses it and names the cfl_safety that runs.
  const std::string model =
      testing::two_layers + "densities = [1.0, 2300.0]\n[scheme]\nmethod = \"spectral\"\n[boundary]\npml_width = 10\n";
  CHECK_THROWS_WITH_AS(make_plan(testing::parse_case_tables(model)),
                       doctest::Contains("density contrast of 2.3e+03:1 (1 to 2300 kg/m^3) is unstable at the CFL "
                                         "number 0.800"),
                       Error);
  Case c = testing::parse_case_tables(model);
  try {  // the cfl_safety the refusal names (rounded down) runs
    (void)make_plan(c);
  } catch (const Error& e) {
    const std::string what = e.what();
    const std::size_t at = what.find("set time.cfl_safety <= ");
    REQUIRE(at != std::string::npos);
    Case advised = c;
    advised.time.cfl_safety = std::stod(what.substr(at + 23));
    CHECK(advised.time.cfl_safety == doctest::Approx(0.527));
    CHECK_NOTHROW(make_plan(advised));
  }
  c.time.cfl_safety = 0.5;
  const Plan plan = make_plan(c);
  const auto run = simulate_shot(c, plan, 0);
  double peak = 0;
  for (double v : run.traces) peak = std::max(peak, std::abs(v));
  CHECK(std::isfinite(peak));
  CHECK(peak > 0);
  // Up to 1000:1 the default step stands.
  CHECK_NOTHROW(make_plan(testing::parse_case_tables(testing::two_layers +
                                                     "densities = [2.3, 2300.0]\n[scheme]\n"
                                                     "method = \"spectral\"\n[boundary]\npml_width = 10\n")));
}
