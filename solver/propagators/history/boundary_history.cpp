#include "solver/propagators/history/boundary_history.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <stdexcept>
#include <vector>

#include "solver/case/errors.hpp"

namespace specwave {
namespace {

// layer_[n] holds u^n at the stepper's boundary points for n = 0 .. nt-2; last_ holds u^{nt-1} then u^nt.
// The adjoint pass asks for u^nt, u^{nt-1}, ..., u^0: the first two come from last_, each later one from one
// reverse step of the stepper, started from the last two fields.
template <class T>
class BoundarySaving final : public WavefieldHistory<T> {
 public:
  std::string name() const override { return "absorbing-layer values, fields rebuilt backwards"; }

  void run_forward(ForwardStepper<T>& s, int nt) override {
    if (!s.reversible())
      throw Error(ExitCode::invalid_case,
                  "inversion.wavefield_storage = \"boundary\" needs a gradient propagator that runs backwards (the "
                  "FDTD one on the CPU), and this one does not; use \"memory\", \"checkpoints\" or \"auto\"");
    if (nt < 1) throw std::invalid_argument("boundary saving: nt must be >= 1");
    nt_ = nt;
    boundary_size_ = s.boundary_values();
    field_size_ = s.field_values();
    layer_.resize(boundary_size_ * std::size_t(nt - 1));
    last_.resize(2 * field_size_);
    this->begin_count();
    for (int n = 0; n < nt; ++n) {
      if (n <= nt - 2) s.save_boundary(layer(n));
      if (n == nt - 1)
        this->copy_and_step(s, n, last(0));
      else
        this->step(s, n);
    }
    s.copy_field(last(1));
    next_ = nt;
  }

  void field(ForwardStepper<T>& s, int n, std::span<T> out) override {
    if (n >= nt_ - 1) {
      check_order(n);
      const auto in = last(n - (nt_ - 1));
      std::copy(in.begin(), in.end(), out.begin());
      if (n == nt_ - 1) s.start_reverse(last(0), last(1));
      return;
    }
    reverse(s, n);
    s.copy_field(out);
  }
  const T* rebuilt(ForwardStepper<T>& s, int n) override {
    if (n >= nt_ - 1) return nullptr;  // from last_: field()
    reverse(s, n);
    return s.current_field();
  }

  std::size_t bytes() const override { return (layer_.size() + last_.size()) * sizeof(T); }

 private:
  void check_order(int n) {
    if (n != next_) throw std::logic_error("boundary saving: fields must be asked for as u^nt, u^{nt-1}, ..., u^0");
    next_ = n - 1;
  }
  // (u^{n+1}, u^{n+2}) -> u^n, the stepper's current field.
  void reverse(ForwardStepper<T>& s, int n) {
    check_order(n);
    s.reverse_step(n + 1, layer(n));
    this->count_steps(1);  // a reverse step, counted like a forward one
  }
  std::span<T> layer(int n) { return std::span<T>(layer_).subspan(std::size_t(n) * boundary_size_, boundary_size_); }
  std::span<T> last(int k) { return std::span<T>(last_).subspan(std::size_t(k) * field_size_, field_size_); }
  int nt_ = 0, next_ = -1;
  std::size_t boundary_size_ = 0, field_size_ = 0;
  std::vector<T> layer_, last_;
};

}  // namespace

template <class T>
std::unique_ptr<WavefieldHistory<T>> make_boundary_history() {
  return std::make_unique<BoundarySaving<T>>();
}

std::size_t cpml_update_points(const std::array<int, 3>& shape, int width, bool free_surface) {
  std::size_t all = 1, inner = 1;
  for (int a = 0; a < 3; ++a) {
    // (A 2-D grid, one point along y, has no layer there.)
    const int faces = width > 0 && !(a == 1 && shape[1] == 1) ? (a == 0 && free_surface ? 1 : 2) : 0;
    all *= std::size_t(shape[a]);
    inner *= std::size_t(std::max(0, shape[a] - faces * width));
  }
  return all - inner;
}

template std::unique_ptr<WavefieldHistory<float>> make_boundary_history<float>();
template std::unique_ptr<WavefieldHistory<double>> make_boundary_history<double>();

}  // namespace specwave
