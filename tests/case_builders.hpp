#pragma once
// Small cases built in code for the tests.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "solver/case/case.hpp"
#include "solver/inversion/objective.hpp"
#include "solver/parallel/decomposition.hpp"
#include "solver/plan/plan.hpp"
#include "solver/propagators/propagator.hpp"
#include "validation/reference.hpp"

namespace specwave::testing {

// ||a - b|| / ||b|| (one definition for every test file: the unity builds put several in one compilation).
inline double rel_l2(const std::vector<double>& a, const std::vector<double>& b) {
  return validation::relative_l2(a.data(), b.data(), a.size());
}

// Receiver r's trace, from traces (n_receivers, nt) in receiver order.
inline std::vector<double> trace_row(const std::vector<double>& traces, int nt, int r) {
  return {traces.begin() + std::ptrdiff_t(r) * nt, traces.begin() + std::ptrdiff_t(r + 1) * nt};
}

inline Case small_case(int n, double h, double v, int order, int pml_width, double f_peak, double duration) {
  Case c;
  c.name = "test";
  c.grid.shape = {n, n, n};
  c.grid.spacing = {h, h, h};
  c.model.kind = ModelSpec::Kind::homogeneous;
  c.model.velocity = v;
  c.time.duration = duration;
  c.scheme.order = order;
  c.scheme.min_points_per_wavelength = 1.0;  // tests choose their sampling deliberately
  c.boundary.pml_width = pml_width;
  SourceSpec s;
  s.position = {h * (n / 2), h * (n / 2), h * (n / 2)};
  s.wavelet.peak_frequency = f_peak;
  c.shots.push_back({{s}});
  c.run.precision = Precision::fp64;
  c.output.directory = (std::filesystem::temp_directory_path() / "specwave_tests_out").string();
  c.output.plots = false;
  return c;
}

// The backend comparison case (tests/test_physics.cpp, tests/test_gpu.cpp): 40 x 44 x 48 points, order `order`,
// an absorbing layer of `pml` points (and a free surface on top, or not), a model of kind `model` (Gaussian
// anomaly, layers or homogeneous), two sources fired together (the first off the grid) and three receivers (two
// off the grid).
inline Case forward_comparison_case(int order, int pml, bool free_surface, ModelSpec::Kind model) {
  Case c = small_case(40, 10, 2000, order, pml, 15, 0.15);
  c.grid.shape = {40, 44, 48};
  c.model.kind = model;
  c.model.velocity = 2000;
  c.model.anomaly = -400;
  c.model.center = {190, 200, 230};
  c.model.radius = 60;
  c.model.interfaces = {150, 260};
  c.model.velocities = {1800, 2200, 2600};
  c.boundary.free_surface = free_surface;
  c.shots[0].sources[0].position = {free_surface ? 21.0 : 171.3, 203.4, 188.8};
  SourceSpec second = c.shots[0].sources[0];
  second.position = {200, 180, 250};
  second.wavelet.peak_frequency = 12;
  c.shots[0].sources.push_back(second);
  c.receivers = {{free_surface ? 15.5 : 110.0, 150.0, 290.3}, {250.7, 220.1, 150.0}, {200, 200, 200}};
  return c;
}

// The backend comparison case (order 8, an absorbing layer of 8, the Gaussian anomaly) with the spectral method.
inline Case spectral_comparison_case(SpectralAbsorber absorber, Precision precision) {
  Case c = forward_comparison_case(8, 8, false, ModelSpec::Kind::gaussian);
  c.scheme.method = Method::spectral;
  c.boundary.spectral_absorber = absorber;  // each with its default profile
  c.run.precision = precision;
  return c;
}

// A std::string, not a const char*: doctest's MESSAGE and CAPTURE print a const char* as its address.
inline std::string absorber_name(SpectralAbsorber a) { return a == SpectralAbsorber::pml ? "pml" : "damping"; }

// The gradient tests' case (tests/test_gradient.cpp, tests/test_gpu.cpp): a small heterogeneous model (a Gaussian
// anomaly), 2 sources in 2 shots, receivers off the grid, CPML on every face (or a free surface on top), order 8.
inline Case gradient_test_case(bool free_surface, Precision precision, int order = 8) {
  Case c = small_case(30, 10, 2000, order, 6, 25, 0.08);
  c.grid.shape = {30, 28, 32};
  c.model.kind = ModelSpec::Kind::gaussian;
  c.model.anomaly = 300;
  c.model.center = {150, 140, 160};
  c.model.radius = 50;
  c.boundary.free_surface = free_surface;
  c.shots[0].sources[0].position = {free_surface ? 33.0 : 103.0, 131.0, 95.0};
  SourceSpec s2 = c.shots[0].sources[0];
  s2.position = {120.0, 150.0, 221.0};
  c.shots.push_back({{s2}});
  c.receivers = {{free_surface ? 12.5 : 91.0, 110.0, 205.0}, {180.0, 133.0, 140.0}, {104.0, 171.0, 102.5}};
  c.run.precision = precision;
  c.inversion.present = true;
  c.inversion.velocity_max = 2600;
  return c;
}

// The gradient tests' case with observed data from a shifted anomaly (inversion.true_model), so that the residual
// is not small.
inline Case gradient_data_case(bool free_surface, Precision precision, int order = 8) {
  Case c = gradient_test_case(free_surface, precision, order);
  ModelSpec truth = c.model;
  truth.center = {120, 150, 150};
  truth.anomaly = 200;
  c.inversion.true_model = truth;
  return c;
}

// Four-component receivers: p, vz, vy, vx at each of the case's receiver positions.
inline void four_component_receivers(Case& c) {
  const auto positions = c.receivers;
  c.receivers.clear();
  c.receiver_components.clear();
  for (const Vec3& p : positions)
    for (ReceiverComponent k :
         {ReceiverComponent::pressure, ReceiverComponent::vz, ReceiverComponent::vy, ReceiverComponent::vx})
      c.receivers.push_back(p), c.receiver_components.push_back(k);
}

// Per-trace weights of every shot: 1 for pressure, `velocity` for a particle-velocity trace (so that both weigh alike
// in a misfit: about (rho v)^2).
inline std::vector<std::vector<double>> component_weights(const Case& c, double velocity) {
  std::vector<std::vector<double>> weights(c.shots.size());
  for (auto& w : weights)
    for (std::size_t r = 0; r < c.receivers.size(); ++r)
      w.push_back(c.receiver_components[r] == ReceiverComponent::pressure ? 1.0 : velocity);
  return weights;
}

// Uneven extents (31 = 16 + 15 over 2, 8 + 8 + 8 + 7 over 4, ...), CPML on every face (or a free surface on
// top), order 8 (halo 4), a heterogeneous model, two sources fired together, and receivers on a line that
// crosses every block boundary plus one point in the middle of the grid.
inline Case decomposition_case(Precision precision, bool free_surface) {
  Case c = small_case(32, 10.0, 2000.0, 8, 6, 15.0, 0.12);
  c.grid.shape = {31, 34, 36};
  c.model.kind = ModelSpec::Kind::gaussian;
  c.model.anomaly = -300.0;
  c.model.center = {150.0, 170.0, 180.0};
  c.model.radius = 50.0;
  c.boundary.free_surface = free_surface;
  c.run.precision = precision;
  c.run.threads = 1;
  c.shots[0].sources[0].position = {152.3, 168.9, 176.4};  // near the middle: its stencil straddles blocks
  SourceSpec second = c.shots[0].sources[0];
  second.position = {80.0, 90.7, 110.1};
  second.wavelet.peak_frequency = 12.0;
  c.shots[0].sources.push_back(second);
  for (int k = 0; k < 9; ++k) c.receivers.push_back({70.0 + 20.0 * k, 165.3, 70.0 + 26.1 * k});
  c.receivers.push_back({150.0, 170.0, 180.0});
  return c;
}

// Every process grid of `ranks` ranks whose blocks hold the halo and the absorbing layer (check_decomposition).
inline std::vector<Dims3> process_grids(const Dims3& shape, int ranks, int halo, int pml) {
  std::vector<Dims3> grids;
  for (int pz = 1; pz <= ranks; ++pz)
    for (int py = 1; pz * py <= ranks; ++py) {
      if (ranks % (pz * py)) continue;
      const Dims3 p{pz, py, ranks / pz / py};
      try {
        check_decomposition(shape, p, halo, pml);
        grids.push_back(p);
      } catch (const std::exception&) {
      }
    }
  return grids;
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// A small heterogeneous spectral case: an even, an odd and an even extent (Nyquist planes on two axes only), an
// absorbing layer of 6 on every face, sources and receivers off the grid, 2 shots (the second with two sources).
inline Case spectral_gradient_case(SpectralAbsorber absorber, Precision precision) {
  Case c = specwave::testing::small_case(24, 10, 2000, 8, 6, 20, 0.1);
  c.scheme.method = Method::spectral;
  c.boundary.spectral_absorber = absorber;
  c.grid.shape = {24, 25, 28};
  c.model.kind = ModelSpec::Kind::gaussian;
  c.model.anomaly = 300;
  c.model.center = {120, 125, 140};
  c.model.radius = 40;
  c.shots[0].sources[0].position = {83.0, 101.3, 95.0};
  SourceSpec s2 = c.shots[0].sources[0], s3 = c.shots[0].sources[0];
  s2.position = {150.0, 130.0, 181.0};
  s3.position = {91.7, 160.0, 110.0};
  s3.wavelet.peak_frequency = 16;
  c.shots.push_back({{s2, s3}});
  c.receivers = {{71.0, 90.0, 175.0}, {160.0, 133.0, 140.0}, {104.0, 171.0, 82.5}};
  c.run.precision = precision;
  c.inversion.present = true;
  c.inversion.velocity_max = 2600;
  return c;
}

// The illumination of every shot (sum over shots and steps n < nt of (u^n)^2), once from the production forward
// propagator's fields, step by step, and once from the gradient propagator's adjoint pass (Objective::evaluate).
// Returns the relative L2 difference of the adjoint's from the independent one, and the latter's norm.
struct IlluminationComparison {
  double relative_difference = 0, norm = 0;
};
inline IlluminationComparison compare_illumination(const Case& c, const Plan& plan) {
  const std::size_t points = std::size_t(c.grid.points());
  std::vector<double> forward(points, 0.0), field(points);
  auto propagator = make_propagator(c, plan);
  for (std::size_t s = 0; s < c.shots.size(); ++s) {
    propagator->begin_shot(plan.sources[s], plan.wavelets[s], plan.receivers);
    for (int n = 0; n < plan.nt; ++n) {
      propagator->copy_field(std::span<double>(field));
      for (std::size_t k = 0; k < points; ++k) forward[k] += field[k] * field[k];
      propagator->advance(n, n + 1);
    }
  }
  auto gradient = make_gradient_propagator(c, plan, HistoryChoice{});
  LeastSquaresMisfit misfit;
  Objective objective(*gradient, misfit, observed_data(c, plan, *gradient), Parameterisation::velocity, plan.dt);
  const std::vector<double> velocity(plan.model.velocity.begin(), plan.model.velocity.end());
  const std::vector<double> adjoint = objective.evaluate(velocity, true, true).illumination;
  if (adjoint.size() != forward.size()) return {1e300, 0};
  double diff = 0, norm = 0;
  for (std::size_t k = 0; k < points; ++k)
    diff += (adjoint[k] - forward[k]) * (adjoint[k] - forward[k]), norm += forward[k] * forward[k];
  return {std::sqrt(diff / norm), std::sqrt(norm)};
}

// The elastic gradient tests' case (tests/test_elastic_gradient.cpp, tests/test_gpu.cpp): three solid layers (the first
// interface between the first shot's source and two receivers), a pressure source (shot 0) and a force with a moment
// tensor (shot 1), and p, vz, vy, vx at the gradient case's three receivers.
inline Case elastic_gradient_case(bool free_surface, Precision precision, int order, bool two_d = false,
                                  bool fluid = false) {
  Case c = gradient_test_case(free_surface, precision, order);
  c.scheme.formulation = Formulation::elastic;
  c.model.kind = ModelSpec::Kind::layered;
  c.model.interfaces = {95.0, 185.0};
  c.model.velocities = {1800.0, 2200.0, 2450.0};
  c.model.shear_velocities = {fluid ? 0.0 : 1000.0, 1250.0, 1400.0};  // fluid: water over two solids
  c.model.densities = {1900.0, 2000.0, 2300.0};
  if (free_surface)  // (pressure below the free surface's stencil reach)
    c.receivers[0][0] = 41.5, c.shots[0].sources[0].position[0] = 45.0;
  c.shots[0].sources[0].wavelet.peak_frequency = 15;
  SourceSpec& force = c.shots[1].sources[0];
  force.kind = SourceKind::force;
  force.direction = {0.6, 0.0, -0.8};
  force.wavelet.peak_frequency = 15;
  SourceSpec moment = force;
  moment.kind = SourceKind::moment;
  moment.moment = {1.0, -0.5, 0.3, 0.4, 0.8, -0.6};
  moment.position = {150.0, 101.0, 170.0};
  c.shots[1].sources.push_back(moment);
  four_component_receivers(c);
  if (free_surface) {  // a force and v_z, v_x, v_y on the surface (v_z's images add v_x and v_y points there)
    SourceSpec surface = force;
    surface.position = {0.0, 123.4, 187.7};
    c.shots[1].sources.push_back(surface);
    for (ReceiverComponent k : {ReceiverComponent::vz, ReceiverComponent::vy, ReceiverComponent::vx}) {
      c.receivers.push_back({0.0, 97.3, 150.6});
      c.receiver_components.push_back(k);
    }
    for (ReceiverComponent k : {ReceiverComponent::vy, ReceiverComponent::vx}) {  // (off the node planes: images)
      c.receivers.push_back({3.0, 97.3, 150.6});
      c.receiver_components.push_back(k);
    }
  }
  if (two_d) {
    c.grid.shape[1] = 1;
    for (auto& shot : c.shots)
      for (auto& s : shot.sources) s.position[1] = 0, s.direction[1] = 0, s.moment[3] = s.moment[5] = 0;
    for (std::size_t r = c.receivers.size(); r-- > 0;) {
      c.receivers[r][1] = 0;
      if (c.receiver_components[r] == ReceiverComponent::vy) {
        c.receivers.erase(c.receivers.begin() + std::ptrdiff_t(r));
        c.receiver_components.erase(c.receiver_components.begin() + std::ptrdiff_t(r));
      }
    }
  }
  return c;
}

}  // namespace specwave::testing
