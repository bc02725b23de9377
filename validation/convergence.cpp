// Grid-refinement study against the analytic Green's function (docs/validation.md).
//
// Homogeneous medium, a Ricker point source and receivers on grid points at every level, Dirichlet walls far
// enough that no reflection reaches a receiver inside the time window.
//
// Two analytic references: the continuous Green's function s(t - r/v) / (4 pi r) (total error, space and
// time), and the time-discrete one (validation/analytic.hpp), exact for leapfrog in time, so that the error
// against it is the spatial error alone, C (kh)^{2R} to leading order. The measured order is the
// least-squares slope of log(spatial error) vs log(h), with dt at half the CFL limit on every level.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "solver/forward/forward.hpp"
#include "solver/plan/plan.hpp"
#include "validation/analytic.hpp"
#include "validation/elastic_analytic.hpp"
#include "validation/reference.hpp"
#include "validation/validate.hpp"

using namespace specwave;

namespace {

struct Level {
  int points_per_wavelength;  // at the peak frequency
  double h, dt, error, total_error;
  int n, nt;
  double seconds;
};

std::vector<Level> study(int order, const std::vector<int>& ppw_levels, double half_width_wavelengths,
                         const std::vector<std::array<double, 3>>& offsets_wavelengths, bool verbose, int dimension) {
  const double v = 2000, f = 10, lambda = v / f;
  std::vector<Level> levels;
  for (int ppw : ppw_levels) {
    Level lv;
    lv.points_per_wavelength = ppw;
    lv.h = lambda / ppw;
    const int half = int(std::lround(half_width_wavelengths * ppw));
    lv.n = 2 * half + 1;
    Case c;
    c.name = "convergence";
    const bool plane = dimension == 2;  // an x-z grid (GridSpec::two_d)
    c.grid.shape = {lv.n, plane ? 1 : lv.n, lv.n};
    c.grid.spacing = {lv.h, lv.h, lv.h};
    c.grid.origin = {-half * lv.h, plane ? 0.0 : -half * lv.h, -half * lv.h};
    c.model.kind = ModelSpec::Kind::homogeneous;
    c.model.velocity = v;
    c.scheme.order = order;
    c.scheme.min_points_per_wavelength = 1;
    c.boundary.pml_width = 0;
    double max_offset = 0;
    for (const auto& o : offsets_wavelengths) {
      c.receivers.push_back({o[0] * lambda, o[1] * lambda, o[2] * lambda});
      max_offset = std::max(max_offset, std::hypot(o[0], o[1], o[2]) * lambda);
    }
    SourceSpec s;
    s.position = {0, 0, 0};
    s.wavelet.peak_frequency = f;
    c.shots.push_back({{s}});
    // Window: the whole Ricker (delay 1.5/f, half-width 1.5/f) at the farthest receiver.
    c.time.duration = 3.0 / f + max_offset / v;
    c.run.precision = Precision::fp64;
    c.run.check_every = 1000;
    c.output.directory = (std::filesystem::temp_directory_path() / "specwave_convergence").string();
    lv.dt = 0.5 * stable_dt(c.grid, order, v);
    c.time.dt = lv.dt;
    const Plan plan = make_plan(c);
    lv.nt = plan.nt;
    const double reflection_time = (2 * half * lv.h - max_offset) / v;  // earliest wall reflection at a receiver
    if (reflection_time < c.time.duration)
      throw std::runtime_error(
          fmt::format("domain too small: wall reflections at {} s < window {} s", reflection_time, c.time.duration));
    const auto t0 = std::chrono::steady_clock::now();
    const auto out = simulate_shot(c, plan, 0);
    lv.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::vector<double> continuous, discrete;
    for (std::size_t r = 0; r < c.receivers.size(); ++r) {
      const double dist = std::hypot(c.receivers[r][0], c.receivers[r][1], c.receivers[r][2]);
      const auto a = validation::green_continuous(plan.wavelets[0][0], plan.dt, dist, v, dimension);
      const auto b = validation::green_time_discrete(plan.wavelets[0][0], plan.dt, dist, v, dimension);
      continuous.insert(continuous.end(), a.begin(), a.end());
      discrete.insert(discrete.end(), b.begin(), b.end());
    }
    lv.error = validation::relative_l2(out.traces.data(), discrete.data(), discrete.size());
    lv.total_error = validation::relative_l2(out.traces.data(), continuous.data(), continuous.size());
    if (verbose)
      std::fprintf(stderr, "%d-D, order %d ppw %d: n = %d, nt = %d, error %.4e (%.1f s)\n", dimension, order, ppw, lv.n,
                   lv.nt, lv.error, lv.seconds);
    levels.push_back(lv);
  }
  return levels;
}

// The elastic scheme (docs/validation.md, section 14): vp 2000, vs 1000 m/s, rho 2000, a vertical point force with a
// 10 Hz Ricker at a v_z point, v_z recorded 100 m away along the force (P), across it (S) and at 45 degrees (both,
// near field) at v_z points: nothing interpolated. A CPML (R0 = 1e-6, at least 80 m) around 250 m on every side. The
// spatial error is against Stokes' solution discrete in time as the leapfrog steps it
// (validation/elastic_analytic.hpp), the total error against the continuous one. ppw counts the S wavelength at the
// peak frequency (100 m).
std::vector<Level> study_elastic(int order, const std::vector<int>& ppw_levels, bool verbose) {
  const validation::ElasticMedium medium{2000, 1000, 2000};
  const double f = 10, lambda = medium.vs / f, half_width = 250;
  const std::vector<std::array<double, 3>> offsets = {{100, 0, 0}, {0, 0, 100}, {100, 0, 100}};
  std::vector<Level> levels;
  for (int ppw : ppw_levels) {
    Level lv;
    lv.points_per_wavelength = ppw;
    lv.h = lambda / ppw;
    // The CPML at least 80 m thick and designed for R0 = 1e-6: the default (10 points, 1e-3) returns the P wave to
    // the receivers inside the window at about 1e-5 of the signal, which would floor order 8's finest errors.
    const int pml = std::max(10, int(std::lround(80 / lv.h))), half = int(std::lround(half_width / lv.h)) + pml;
    lv.n = 2 * half + 1;
    Case c;
    c.name = "convergence-elastic";
    c.scheme.formulation = Formulation::elastic;
    c.grid.shape = {lv.n, lv.n, lv.n};
    c.grid.spacing = {lv.h, lv.h, lv.h};
    c.grid.origin = {-(half + 0.5) * lv.h, -half * lv.h, -half * lv.h};  // (0, 0, 0) a v_z point
    c.model.kind = ModelSpec::Kind::homogeneous;
    c.model.velocity = medium.vp;
    c.model.shear_velocity = medium.vs;
    c.model.density = medium.rho;
    c.scheme.order = order;
    c.scheme.min_points_per_wavelength = 1;
    c.boundary.pml_width = pml;
    c.boundary.pml_reflection = 1e-6;
    for (const auto& o : offsets) {
      c.receivers.push_back(o);
      c.receiver_components.push_back(ReceiverComponent::vz);
    }
    SourceSpec s;
    s.position = {0, 0, 0};
    s.kind = SourceKind::force;
    s.direction = {1, 0, 0};
    s.wavelet.peak_frequency = f;
    c.shots.push_back({{s}});
    c.time.duration = 3.0 / f + 100 * std::sqrt(2.0) / medium.vs;
    c.run.precision = Precision::fp64;
    c.run.check_every = 1000;
    c.output.directory = (std::filesystem::temp_directory_path() / "specwave_convergence").string();
    const Plan plan = make_plan(c);
    lv.nt = plan.nt;
    lv.dt = plan.dt;
    const auto t0 = std::chrono::steady_clock::now();
    const auto out = simulate_shot(c, plan, 0);
    lv.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::vector<double> continuous, discrete;
    for (const auto& o : offsets) {
      const auto a =
          validation::stokes_force_velocity_sampled(medium, plan.wavelets[0][0], plan.dt, {1, 0, 0}, o, false);
      const auto b =
          validation::stokes_force_velocity_sampled(medium, plan.wavelets[0][0], plan.dt, {1, 0, 0}, o, true);
      for (std::size_t n = 0; n < a.size(); ++n) continuous.push_back(a[n][0]), discrete.push_back(b[n][0]);
    }
    lv.error = validation::relative_l2(out.traces.data(), discrete.data(), discrete.size());
    lv.total_error = validation::relative_l2(out.traces.data(), continuous.data(), continuous.size());
    if (verbose)
      std::fprintf(stderr, "elastic, order %d ppw %d: n = %d, nt = %d, error %.4e, total %.4e (%.1f s)\n", order, ppw,
                   lv.n, lv.nt, lv.error, lv.total_error, lv.seconds);
    levels.push_back(lv);
  }
  return levels;
}

// Least-squares slope over the three finest levels: the asymptotic range (coarser levels are listed with their
// local orders to show the approach; a Ricker's spectrum reaches ~2.4 f_peak, so high orders need fine grids).
double fitted_order(const std::vector<Level>& all) {
  const std::vector<Level> levels(all.end() - std::min<std::size_t>(3, all.size()), all.end());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = double(levels.size());
  for (const auto& l : levels) {
    const double x = std::log(l.h), y = std::log(l.error);
    sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Grid-refinement study of the FDTD engine against the analytic Green's function"};
  std::vector<int> orders = {2, 4, 8};
  bool quick = false;
  int dimension = 3;
  std::string output;
  app.add_option("--orders", orders, "FDTD orders to study")->capture_default_str();
  app.add_flag("--quick", quick, "Coarser levels (CI-sized)");
  app.add_option("--dimension", dimension,
                 "3 (a cube), or 2 (an x-z grid of one point along y, the 2-D Green's function)")
      ->check(CLI::IsMember({2, 3}))
      ->capture_default_str();
  app.add_option("--output", output, "Also write the Markdown table here");
  bool elastic = false;
  app.add_flag("--elastic", elastic,
               "The elastic scheme against Stokes' point force (3-D; points per S wavelength), instead of the acoustic "
               "Green's function");
  CLI11_PARSE(app, argc, argv);
  std::string table =
      "| order | points per wavelength (peak) | h (m) | grid | steps | dt (s) | spatial error | local order | total "
      "error | run time (s) |\n"
      "|---|---|---|---|---|---|---|---|---|---|\n";
  std::string summary = "| order | measured order (3 finest levels) | design order | within 0.3 |\n|---|---|---|---|\n";
  bool ok = true;
  for (int order : orders) {
    std::vector<int> ppw;
    if (elastic)
      ppw = order == 2   ? (quick ? std::vector<int>{10, 16, 20} : std::vector<int>{8, 10, 16, 20, 25})
            : order == 4 ? (quick ? std::vector<int>{8, 10, 16} : std::vector<int>{4, 5, 8, 10, 16})
                         : (quick ? std::vector<int>{10, 16, 20} : std::vector<int>{10, 16, 20, 25, 32});
    else if (order == 2)
      ppw = quick ? std::vector<int>{10, 12, 15} : std::vector<int>{10, 12, 15, 20, 24};
    else if (order == 4)
      ppw = quick ? std::vector<int>{6, 8, 10} : std::vector<int>{6, 8, 10, 12, 16};
    else if (order == 8)
      ppw = quick ? std::vector<int>{16, 20, 24} : std::vector<int>{12, 16, 20, 24, 32};
    else
      ppw = quick ? std::vector<int>{3, 4, 5} : std::vector<int>{3, 4, 5, 6};
    const auto levels = elastic ? study_elastic(order, ppw, true)
                                : study(order, ppw, 3.0,
                                        dimension == 2 ? std::vector<std::array<double, 3>>{{0, 0, 1}, {1, 0, 1}}
                                                       : std::vector<std::array<double, 3>>{{0, 0, 1}, {0, 1, 1}},
                                        true, dimension);
    for (std::size_t k = 0; k < levels.size(); ++k) {
      const auto& l = levels[k];
      const std::string local =
          k == 0 ? "-"
                 : fmt::format("{:.2f}", std::log(levels[k - 1].error / l.error) / std::log(levels[k - 1].h / l.h));
      table += fmt::format("| {} | {} | {:.3f} | {} | {} | {:.3e} | {:.3e} | {} | {:.3e} | {:.1f} |\n", order,
                           l.points_per_wavelength, l.h,
                           dimension == 2 ? fmt::format("{} x 1 x {}", l.n, l.n) : fmt::format("{}^3", l.n), l.nt, l.dt,
                           l.error, local, l.total_error, l.seconds);
    }
    const double measured = fitted_order(levels);
    const bool within = std::abs(measured - order) <= 0.3;
    ok = ok && within;
    summary += fmt::format("| {} | {:.2f} | {} | {} |\n", order, measured, order, within ? "yes" : "NO");
  }
  const std::string text = table + "\n" + summary;
  std::fputs(text.c_str(), stdout);
  if (!output.empty()) std::ofstream(output) << text;
  return ok ? 0 : 8;
}
