#pragma once
// A propagator's state saved array by array in memory, then loaded into another (Propagator::visit_state): the tests
// of the checkpoint contract (a resumed run continues bit for bit).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "solver/plan/plan.hpp"
#include "solver/propagators/propagator.hpp"

namespace specwave::testing {

class MemoryState : public StateVisitor {
 public:
  bool loading() const override { return loading_; }
  void visit(const std::string& name, std::span<std::byte> data) override {
    if (!loading_) {
      saved_[name].assign(data.begin(), data.end());
      return;
    }
    const auto& bytes = saved_.at(name);
    REQUIRE(bytes.size() == data.size());
    std::copy(bytes.begin(), bytes.end(), data.begin());
  }
  void start_loading() { loading_ = true; }
  // The array saved under `name`, as values of type T.
  template <class T>
  std::vector<T> values(const std::string& name) const {
    const auto& bytes = saved_.at(name);
    std::vector<T> out(bytes.size() / sizeof(T));
    std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
  }

 private:
  bool loading_ = false;
  std::map<std::string, std::vector<std::byte>> saved_;
};

// The traces of a whole run of shot 0 of `c`, and of one saved after half its steps and resumed in a new propagator:
// the checkpoint contract wants them bitwise equal.
struct ResumedRun {
  std::vector<double> whole, resumed;
};
inline ResumedRun run_whole_and_resumed(const Case& c) {
  const Plan plan = make_plan(c);
  ResumedRun out;
  auto whole = make_propagator(c, plan);
  whole->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
  whole->advance(0, plan.nt);
  out.whole.assign(whole->traces().begin(), whole->traces().end());
  auto first = make_propagator(c, plan);
  first->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
  first->advance(0, plan.nt / 2);
  MemoryState state;
  first->visit_state(state);
  state.start_loading();
  auto second = make_propagator(c, plan);
  second->begin_shot(plan.sources[0], plan.wavelets[0], plan.receivers);
  second->visit_state(state);
  second->advance(plan.nt / 2, plan.nt);
  out.resumed.assign(second->traces().begin(), second->traces().end());
  return out;
}

}  // namespace specwave::testing
