#pragma once
// A Propagator advances one shot's wavefield on one backend with one method (FDTD now; spectral and the
// adjoint later). The time loop, progress, blow-up checks and outputs live in the driver (forward.cpp);
// a propagator only steps, injects, records and hands out fields.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "solver/acquisition.hpp"
#include "solver/case.hpp"

namespace specwave {

struct Plan;

struct FieldStats {
  double max_abs = 0;
  std::int64_t argmax = 0;  // flat (nz, ny, nx) index of max |u| (or of the first non-finite value)
  bool finite = true;
};

class Propagator {
 public:
  virtual ~Propagator() = default;
  virtual std::string name() const = 0;
  // Zeroes the state (u^0 = u^{-1} = 0, CPML memory) and sets this shot's sources (wavelets: nt samples each).
  virtual void begin_shot(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets) = 0;
  // For n = n_begin .. n_end-1: records u^n into trace sample n, then computes u^{n+1}.
  virtual void advance(int n_begin, int n_end) = 0;
  // (n_receivers, nt), sample n valid once advance() has passed n.
  virtual std::span<const double> traces() = 0;
  virtual FieldStats field_stats() = 0;
  // The current field u^n (after the last advance), (nz, ny, nx) C order, converted to the requested type.
  virtual void copy_field(std::span<float> out) = 0;
  virtual void copy_field(std::span<double> out) = 0;
  virtual std::size_t device_bytes() const = 0;
};

// Chooses the implementation from the plan (method, backend, precision).
std::unique_ptr<Propagator> make_propagator(const Case& c, const Plan& plan);

}  // namespace specwave
