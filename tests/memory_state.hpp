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

}  // namespace specwave::testing
