#pragma once
// The headline of specwave-bench: whole runs of realistic cases as a user makes them (docs/benchmarks.md), through
// the production path (make_plan, make_propagator / make_gradient_propagator): a field that starts at zero, a Ricker
// source, a CPML of `pml` points on all faces (or a free surface on top and the CPML on the other five), a plane of
// n^2 receivers on grid nodes, nt steps. The grid is (n + 2 pml)^3 points (Devito's convention for the same
// workload), and every point counts in Gpts/s.
#include <string>
#include <vector>

namespace specwave::bench {

struct RunConfig {
  std::vector<int> sizes{128, 256};     // n: interior points per axis
  std::vector<bool> fp64{false, true};  // precisions
  int order = 8;
  int pml = 10;
  int steps = 165;
  bool free_surface = false;  // also each forward size with a free surface on top
  bool staggered = false;     // also each forward size on the staggered scheme with a density model (issue 19)
  int gradient_n = 128;       // one gradient at (gradient_n + 2 pml)^3, fp32 (0: none)
  int rounds = 2;             // best of
};

// The Markdown section, and its headline line (forward order 8 fp32 at the largest size) in `headline`. Each row's
// "of triad" is its effective bandwidth (4 values a point: read u, u_prev, (v dt)^2, write u_next) over the triad
// bandwidth `triad_gbs` measured in the same run.
std::string whole_run_report(const RunConfig& cfg, double triad_gbs, std::string& headline);

}  // namespace specwave::bench
