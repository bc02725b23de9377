#pragma once
// A Propagator advances one shot's wavefield on one backend with one method (the methods and backends:
// solver/propagators/capabilities.hpp; the adjoint: gradient_propagator.hpp). The time loop, progress, blow-up checks
// and outputs live in the driver (forward.cpp); a propagator only steps, injects, records and hands out fields.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <optional>
#include <stdexcept>

#include "solver/case/case.hpp"
#include "solver/parallel/decomposition.hpp"
#include "solver/plan/acquisition.hpp"

namespace specwave {

struct Plan;
class Comm;

// Saves or restores a propagator's state array by array (solver/forward/checkpoint.hpp): visit() reads `data` when
// saving and fills it when loading; names and sizes are the propagator's own and the same every time.
class StateVisitor {
 public:
  virtual ~StateVisitor() = default;
  virtual bool loading() const = 0;
  virtual void visit(const std::string& name, std::span<std::byte> data) = 0;
  // Any contiguous array of trivially copyable elements (std::vector, fft::Buffer, ...).
  template <class Array>
  void visit_array(const std::string& name, Array& a) {
    visit(name, std::as_writable_bytes(std::span(a.data(), a.size())));
  }
};

struct FieldStats {
  double max_abs = 0;
  std::int64_t argmax = 0;  // flat (nz, ny, nx) index of max |u| (or of the first non-finite value)
  bool finite = true;
};

class Propagator {
 public:
  virtual ~Propagator() = default;
  virtual std::string name() const = 0;
  // Zeroes the state (u^0 = u^{-1} = 0, CPML memory) and sets this shot's sources (wavelets: nt samples each) and
  // receivers (plan.receivers, or the shot's own: ShotReceivers, solver/plan/shot_receivers.hpp). The receivers' lists
  // are made anew only when they differ from the last shot's.
  virtual void begin_shot(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets,
                          const std::vector<PointStencil>& receivers) = 0;
  // For n = n_begin .. n_end-1: records u^n into trace sample n, then computes u^{n+1}.
  virtual void advance(int n_begin, int n_end) = 0;
  // (n_receivers, nt), sample n valid once advance() has passed n. Domain-decomposed: collective, and every
  // rank gets all the traces.
  virtual std::span<const double> traces() = 0;
  // max |u| over the whole grid (domain-decomposed: collective, the same on every rank).
  virtual FieldStats field_stats() = 0;
  // The current field u^n (after the last advance), (nz, ny, nx) C order, converted to the requested type;
  // domain-decomposed: this rank's block (block()->sub.extent), in the same order.
  virtual void copy_field(std::span<float> out) = 0;
  virtual void copy_field(std::span<double> out) = 0;
  // The same copy in two phases, so that it overlaps the next steps: start_copy_field() takes u^n (after the last
  // advance), finish_copy_field() hands it out as copy_field() would, even if advance() ran in between. One copy at
  // a time: finish before the next start. On the GPU the copy runs on a copy stream into pinned host memory; a
  // propagator whose copy_field is synchronous copies in start (HeldField below).
  virtual void start_copy_field() = 0;
  virtual void finish_copy_field(std::span<float> out) = 0;
  virtual void finish_copy_field(std::span<double> out) = 0;
  virtual std::size_t device_bytes() const = 0;
  // Every array the next steps read (this rank's part, with halos and absorber memory) and the traces recorded
  // so far, in host memory. After begin_shot() of the same shot and a load of the state saved after
  // advance(.., n), advance(n, ..) continues bit for bit as if never stopped.
  virtual void visit_state(StateVisitor& v) = 0;
  // The block of the grid this rank holds when the propagator is domain-decomposed; none: the whole grid.
  virtual std::optional<Block> block() const { return std::nullopt; }
};

// The two-phase field copy of a propagator whose copy_field is synchronous: start copies the field (T, the
// propagator's precision) into host memory held here, finish converts it into the caller's array (the conversion
// copy_field makes, so the values are the same). The memory is allocated at the first start.
template <class T>
class HeldField {
 public:
  // The array for start_copy_field to fill with its n values; pending until take().
  std::span<T> hold(std::size_t n) {
    if (held_) throw std::logic_error("start_copy_field: the last copy was not finished");
    values_.resize(n);
    held_ = true;
    return values_;
  }
  template <class U>
  void take(std::span<U> out) {
    if (!held_) throw std::logic_error("finish_copy_field without start_copy_field");
    if (out.size() < values_.size()) throw std::invalid_argument("finish_copy_field: the output holds too few values");
    held_ = false;
    for (std::size_t i = 0; i < values_.size(); ++i) out[i] = U(values_[i]);
  }

 private:
  std::vector<T> values_;
  bool held_ = false;
};

// Chooses the implementation from the plan (method, backend, precision). With `domain` (a communicator of
// plan.process_grid's ranks, which must outlive the propagator), the grid is decomposed over its ranks.
std::unique_ptr<Propagator> make_propagator(const Case& c, const Plan& plan, const Comm* domain = nullptr);

}  // namespace specwave
