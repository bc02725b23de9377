#pragma once
// RAII FFTW plans of batched lower-dimensional transforms on strided data (FFTW's guru interface): the local
// transforms of a distributed FFT. Plans are made with FFTW_MEASURE, under the planner lock that RealFft3d
// shares, and are executed on the arrays they were planned for. Explicitly instantiated for float/double.
#include <complex>
#include <mutex>
#include <vector>

namespace specwave::fft {

// One axis of a transform or of its batch: n points, strides in elements of the input and output arrays (reals
// for a real array, complex values for a complex one). Mirrors fftw_iodim.
struct Axis {
  int n;
  int in_stride;
  int out_stride;
};

enum class Direction { forward = -1, backward = +1 };  // FFTW's sign of the exponent

// FFTW_MEASURE times candidate algorithms and keeps the fastest, which can differ from one process to the next (and
// with it the rounding); FFTW_ESTIMATE picks by a model, the same plan every time: for small transforms whose results
// a resumed run must reproduce bit for bit (the misfit's trace filters).
enum class Planning { measure, estimate };

template <class T>
class BatchedFft {
 public:
  // Real -> half-spectrum over `axes` (the last one is halved: n/2+1 outputs), repeated over `batch`.
  static BatchedFft r2c(const std::vector<Axis>& axes, const std::vector<Axis>& batch, T* in, std::complex<T>* out,
                        int threads, Planning planning = Planning::measure);
  // Half-spectrum -> real (unnormalised); destroys `in`.
  static BatchedFft c2r(const std::vector<Axis>& axes, const std::vector<Axis>& batch, std::complex<T>* in, T* out,
                        int threads, Planning planning = Planning::measure);
  // Complex -> complex (unnormalised); `in == out` is an in-place transform.
  static BatchedFft c2c(const std::vector<Axis>& axes, const std::vector<Axis>& batch, std::complex<T>* in,
                        std::complex<T>* out, Direction direction, int threads, Planning planning = Planning::measure);

  BatchedFft() = default;  // an empty plan: execute() does nothing
  BatchedFft(BatchedFft&& other) noexcept;
  BatchedFft& operator=(BatchedFft&& other) noexcept;
  BatchedFft(const BatchedFft&) = delete;
  BatchedFft& operator=(const BatchedFft&) = delete;
  ~BatchedFft();

  void execute() const;

 private:
  explicit BatchedFft(void* plan) : plan_(plan) {}
  void* plan_ = nullptr;
};

// FFTW's planner is not thread-safe: every planner call (plans, wisdom, destruction) holds this lock.
std::mutex& planner_mutex();

}  // namespace specwave::fft
