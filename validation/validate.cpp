#include "validation/validate.hpp"

#include <fmt/format.h>
#include <chrono>
#include <cmath>

#include "solver/case/errors.hpp"
#include "solver/forward/forward.hpp"
#include "solver/forward/progress.hpp"
#include "solver/plan/wavelet.hpp"
#include "validation/reference.hpp"
#include "validation/spectral_reference.hpp"

namespace specwave {

bool ValidationReport::passed() const {
  for (const auto& n : norms)
    if (!n.passed()) return false;
  return true;
}

std::string ValidationReport::text() const {
  std::string out = fmt::format("{:<48} {:>12} {:>10}  {}\n", "comparison", "rel. L2", "tolerance", "result");
  for (const auto& n : norms)
    out += fmt::format("{:<48} {:>12.3e} {:>10}  {}\n", n.what, n.value,
                       n.tolerance > 0 ? fmt::format("{:.0e}", n.tolerance) : "-",
                       n.tolerance > 0 ? (n.passed() ? "PASS" : "FAIL") : "(reported)");
  return out;
}

bool analytic_traces(const Case& c, const Plan& plan, std::vector<double>& traces) {
  traces.clear();
  if (c.model.kind != ModelSpec::Kind::homogeneous || c.boundary.free_surface) return false;
  for (const auto& shot : c.shots)
    for (const auto& s : shot.sources)
      if (s.wavelet.kind != WaveletSpec::Kind::ricker) return false;
  const double v = c.model.velocity;
  const auto& shot = c.shots[0];
  traces.assign(c.receivers.size() * plan.nt, 0.0);
  for (std::size_t r = 0; r < c.receivers.size(); ++r)
    for (const auto& s : shot.sources) {
      const auto& a = c.receivers[r];
      const auto& b = s.position;
      const double dist =
          std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
      if (dist < 1e-9) return traces.clear(), false;  // singular at the source
      const double delay = s.wavelet.delay.value_or(1.5 / s.wavelet.peak_frequency);
      for (int n = 0; n < plan.nt; ++n)
        traces[r * plan.nt + n] +=
            s.wavelet.amplitude * ricker(n * plan.dt - dist / v, s.wavelet.peak_frequency, delay) / (4 * M_PI * dist);
    }
  return true;
}

validation::ReferenceProblem reference_problem(const Case& c, const Plan& plan, int shot) {
  validation::ReferenceProblem ref;
  ref.shape = c.grid.shape;
  ref.spacing = c.grid.spacing;
  ref.origin = c.grid.origin;
  ref.velocity.assign(plan.model.velocity.begin(), plan.model.velocity.end());
  ref.density.assign(plan.model.density.begin(), plan.model.density.end());  // the staggered scheme's (else empty)
  if (!plan.sls.empty()) {  // attenuation: the reference makes its own fit from these
    ref.q.assign(plan.model.q.begin(), plan.model.q.end());
    ref.attenuation_band = {plan.sls.f1, plan.sls.f2};
    ref.attenuation_reference_frequency = plan.sls.f_ref;
    ref.attenuation_mechanisms = int(plan.sls.tau.size());
  }
  ref.dt = plan.dt;
  ref.nt = plan.nt;
  ref.order = c.scheme.order;
  ref.pml_width = c.boundary.pml_width;
  ref.pml_power = plan.pml_power;
  ref.pml_reflection = plan.pml_reflection;
  ref.pml_frequency = plan.pml_frequency;
  ref.free_surface = c.boundary.free_surface;
  ref.spectral_absorber = c.boundary.spectral_absorber == SpectralAbsorber::pml ? "pml" : "damping";
  if (c.scheme.method == Method::spectral) ref.spectral_point_band = plan.spectral_point_band;
  for (const auto& r : c.receivers) ref.receivers.push_back({r[0], r[1], r[2]});
  for (const auto& s : c.shots.at(shot).sources) ref.sources.push_back({s.position[0], s.position[1], s.position[2]});
  ref.source_wavelets = plan.wavelets.at(shot);
  return ref;
}

ValidationReport validate_case(const Case& input, long long max_points, const ValidationProgress& progress) {
  if (input.grid.points() > max_points)
    throw Error(
        ExitCode::invalid_case,
        fmt::format("{}: the grid has {} points, more than the reference limit {} (the Eigen reference is plain "
                    "fp64 loops); validate a smaller case or raise --max-points",
                    input.source_path.empty() ? input.name : input.source_path, input.grid.points(), max_points));
  const std::string where = input.source_path.empty() ? input.name : input.source_path;
  if (input.grid.two_d())
    throw Error(ExitCode::invalid_case,
                fmt::format("{}: validate's Eigen references are 3-D, and grid.shape[1] = 1 is a 2-D run; validate a "
                            "3-D case (2-D runs are checked against the 2-D Green's function: docs/validation.md, "
                            "section 13)",
                            where));
  if (input.scheme.method == Method::spectral && input.model.has_density_model())
    throw Error(ExitCode::invalid_case,
                fmt::format("{}: validate's spectral reference is constant-density, and [model] has a density model; "
                            "validate it with scheme.method = \"fdtd\" (the staggered scheme's reference)",
                            where));
  if (input.scheme.method == Method::spectral && input.attenuation.present)
    throw Error(ExitCode::invalid_case,
                fmt::format("{}: validate's spectral reference is lossless, and the case has an [attenuation] table; "
                            "validate it with scheme.method = \"fdtd\" (the staggered scheme's reference has the "
                            "memory variables)",
                            where));
  if (input.scheme.formulation == Formulation::elastic)
    throw Error(ExitCode::invalid_case,
                fmt::format("{}: validate's references are acoustic, and [model] gives a shear velocity (the elastic "
                            "scheme, whose own Eigen reference runs in build/tests/test_elastic); validate an acoustic "
                            "case",
                            where));
  ValidationReport report;
  Case c = input;
  c.run.precision = Precision::fp64;
  require_shared_receivers(c, "validate");
  require_pressure_receivers(c, "validate");
  for (const auto& shot : c.shots)
    for (const auto& s : shot.sources)
      if (s.kind != SourceKind::pressure)
        throw Error(ExitCode::invalid_case,
                    fmt::format("{}: validate compares pressure sources with the Eigen reference, and this case has a "
                                "{} source (kind = \"{}\"); validate a case with pressure sources",
                                input.source_path.empty() ? input.name : input.source_path, to_string(s.kind),
                                to_string(s.kind)));
  const Plan plan = make_plan(c);

  Case c32 = c;
  c32.run.precision = Precision::fp32;
  using clock = std::chrono::steady_clock;
  const auto seconds_since = [](clock::time_point t) {
    return std::chrono::duration<double>(clock::now() - t).count();
  };
  for (std::size_t shot = 0; shot < c.shots.size(); ++shot) {
    auto t = clock::now();
    std::string times;
    const validation::ReferenceProblem ref = reference_problem(c, plan, int(shot));
    const auto expected = c.scheme.method == Method::spectral              ? validation::run_spectral_reference(ref)
                          : c.scheme.formulation == Formulation::staggered ? validation::run_staggered_reference(ref)
                                                                           : validation::run_reference(ref);
    std::vector<double> ref_traces(expected.traces.size());
    for (int r = 0; r < expected.traces.rows(); ++r)
      for (int n = 0; n < expected.traces.cols(); ++n) ref_traces[std::size_t(r) * plan.nt + n] = expected.traces(r, n);
    times = fmt::format("Eigen reference {}", format_duration(seconds_since(t)));
    const std::string tag = c.shots.size() > 1 ? fmt::format(" (shot {})", shot) : "";
    for (const auto& [engine_case, precision, tolerance] :
         {std::tuple{&c, "fp64", 1e-12}, std::tuple{&c32, "fp32", 1e-5}}) {
      t = clock::now();
      const ShotOutput out = simulate_shot(*engine_case, plan, int(shot));
      times += fmt::format(", {} run {}", precision, format_duration(seconds_since(t)));
      report.norms.push_back({fmt::format("{} traces vs Eigen reference{}", precision, tag),
                              validation::relative_l2(out.traces.data(), ref_traces.data(), ref_traces.size()),
                              tolerance});
      report.norms.push_back(
          {fmt::format("{} final field vs Eigen reference{}", precision, tag),
           validation::relative_l2(out.final_field.data(), expected.final_field.data(), expected.final_field.size()),
           tolerance});
      if (shot == 0 && std::string(precision) == "fp64") {
        std::vector<double> analytic;
        if (analytic_traces(c, plan, analytic))
          report.norms.push_back({"fp64 traces vs analytic Green's function",
                                  validation::relative_l2(out.traces.data(), analytic.data(), analytic.size()), 0});
      }
    }
    if (progress)
      progress(fmt::format("[validate] {} shot {} (of {}): {} | {}\n", c.name, shot, c.shots.size(), times,
                           utc_timestamp()));
  }
  return report;
}

}  // namespace specwave
