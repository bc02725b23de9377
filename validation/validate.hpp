#pragma once
// `specwave validate`: the case through the engine (fp64 and fp32) and through the independent Eigen
// reference, plus the analytic solution when the case has one; prints the error norms.
#include <functional>
#include <string>
#include <vector>

#include "solver/case/case.hpp"
#include "solver/plan/plan.hpp"
#include "validation/reference.hpp"

namespace specwave {

struct Norm {
  std::string what;      // e.g. "fp64 traces vs Eigen reference"
  double value = 0;      // relative L2
  double tolerance = 0;  // 0: reported only
  bool passed() const { return tolerance <= 0 || value <= tolerance; }
};

struct ValidationReport {
  std::vector<Norm> norms;
  bool passed() const;
  std::string text() const;
};

// Progress lines of `validate` (each ends with a newline), so that a long validation is never silent; empty: none.
using ValidationProgress = std::function<void(const std::string&)>;

// The reference runs in fp64 on one core-set; refuse grids above max_points (it is slow by design). After each
// shot: "[validate] <case> shot 0 (of 2): Eigen reference 12.3s, fp64 run 0.4s, fp32 run 0.3s | <UTC>".
ValidationReport validate_case(const Case& c, long long max_points, const ValidationProgress& progress = {});

// The reference solvers' description of shot `shot` of a planned case (same velocities, dt, wavelets, layers).
validation::ReferenceProblem reference_problem(const Case& c, const Plan& plan, int shot);

// Analytic traces for a homogeneous medium and Ricker sources: u = sum_j s_j(t - r_j/v) / (4 pi r_j).
// Returns false (and leaves `traces` empty) when the case has no analytic solution.
bool analytic_traces(const Case& c, const Plan& plan, std::vector<double>& traces);

}  // namespace specwave
