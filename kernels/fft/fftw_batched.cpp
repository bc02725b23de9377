#include "kernels/fft/fftw_batched.hpp"

#include <fftw3.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace specwave::fft {
namespace {

template <class Dim>
std::vector<Dim> dims_of(const std::vector<Axis>& axes) {
  std::vector<Dim> d;
  for (const Axis& a : axes) d.push_back(Dim{a.n, a.in_stride, a.out_stride});
  return d;
}

template <class T>
struct Guru;

template <>
struct Guru<double> {
  using Dim = fftw_iodim;
  static void threads(int n) {
    static bool done = (fftw_init_threads(), true);
    (void)done;
    fftw_plan_with_nthreads(n);
  }
  static void* r2c(const std::vector<Dim>& d, const std::vector<Dim>& b, double* in, std::complex<double>* out,
                   unsigned flags) {
    return fftw_plan_guru_dft_r2c(int(d.size()), d.data(), int(b.size()), b.data(), in,
                                  reinterpret_cast<fftw_complex*>(out), flags);
  }
  static void* c2r(const std::vector<Dim>& d, const std::vector<Dim>& b, std::complex<double>* in, double* out,
                   unsigned flags) {
    return fftw_plan_guru_dft_c2r(int(d.size()), d.data(), int(b.size()), b.data(), reinterpret_cast<fftw_complex*>(in),
                                  out, flags);
  }
  static void* c2c(const std::vector<Dim>& d, const std::vector<Dim>& b, std::complex<double>* in,
                   std::complex<double>* out, int sign, unsigned flags) {
    return fftw_plan_guru_dft(int(d.size()), d.data(), int(b.size()), b.data(), reinterpret_cast<fftw_complex*>(in),
                              reinterpret_cast<fftw_complex*>(out), sign, flags);
  }
  static void execute(void* p) { fftw_execute(static_cast<fftw_plan>(p)); }
  static void destroy(void* p) { fftw_destroy_plan(static_cast<fftw_plan>(p)); }
};

template <>
struct Guru<float> {
  using Dim = fftwf_iodim;
  static void threads(int n) {
    static bool done = (fftwf_init_threads(), true);
    (void)done;
    fftwf_plan_with_nthreads(n);
  }
  static void* r2c(const std::vector<Dim>& d, const std::vector<Dim>& b, float* in, std::complex<float>* out,
                   unsigned flags) {
    return fftwf_plan_guru_dft_r2c(int(d.size()), d.data(), int(b.size()), b.data(), in,
                                   reinterpret_cast<fftwf_complex*>(out), flags);
  }
  static void* c2r(const std::vector<Dim>& d, const std::vector<Dim>& b, std::complex<float>* in, float* out,
                   unsigned flags) {
    return fftwf_plan_guru_dft_c2r(int(d.size()), d.data(), int(b.size()), b.data(),
                                   reinterpret_cast<fftwf_complex*>(in), out, flags);
  }
  static void* c2c(const std::vector<Dim>& d, const std::vector<Dim>& b, std::complex<float>* in,
                   std::complex<float>* out, int sign, unsigned flags) {
    return fftwf_plan_guru_dft(int(d.size()), d.data(), int(b.size()), b.data(), reinterpret_cast<fftwf_complex*>(in),
                               reinterpret_cast<fftwf_complex*>(out), sign, flags);
  }
  static void execute(void* p) { fftwf_execute(static_cast<fftwf_plan>(p)); }
  static void destroy(void* p) { fftwf_destroy_plan(static_cast<fftwf_plan>(p)); }
};

void* checked(void* plan, const char* kind, const std::vector<Axis>& axes, const std::vector<Axis>& batch) {
  if (plan) return plan;
  std::string what = std::string("FFTW could not plan a batched ") + kind + " transform: axes";
  for (const Axis& a : axes)
    what += " (n " + std::to_string(a.n) + ", strides " + std::to_string(a.in_stride) + "/" +
            std::to_string(a.out_stride) + ")";
  what += ", batch";
  for (const Axis& a : batch)
    what += " (n " + std::to_string(a.n) + ", strides " + std::to_string(a.in_stride) + "/" +
            std::to_string(a.out_stride) + ")";
  throw std::runtime_error(what);
}

unsigned flags_of(Planning p) { return p == Planning::measure ? FFTW_MEASURE : FFTW_ESTIMATE; }

}  // namespace

std::mutex& planner_mutex() {
  static std::mutex m;
  return m;
}

template <class T>
BatchedFft<T> BatchedFft<T>::r2c(const std::vector<Axis>& axes, const std::vector<Axis>& batch, T* in,
                                 std::complex<T>* out, int threads, Planning planning) {
  using G = Guru<T>;
  std::lock_guard<std::mutex> lock(planner_mutex());
  G::threads(threads);
  return BatchedFft(
      checked(G::r2c(dims_of<typename G::Dim>(axes), dims_of<typename G::Dim>(batch), in, out, flags_of(planning)),
              "r2c", axes, batch));
}

template <class T>
BatchedFft<T> BatchedFft<T>::c2r(const std::vector<Axis>& axes, const std::vector<Axis>& batch, std::complex<T>* in,
                                 T* out, int threads, Planning planning) {
  using G = Guru<T>;
  std::lock_guard<std::mutex> lock(planner_mutex());
  G::threads(threads);
  return BatchedFft(
      checked(G::c2r(dims_of<typename G::Dim>(axes), dims_of<typename G::Dim>(batch), in, out, flags_of(planning)),
              "c2r", axes, batch));
}

template <class T>
BatchedFft<T> BatchedFft<T>::c2c(const std::vector<Axis>& axes, const std::vector<Axis>& batch, std::complex<T>* in,
                                 std::complex<T>* out, Direction direction, int threads, Planning planning) {
  using G = Guru<T>;
  std::lock_guard<std::mutex> lock(planner_mutex());
  G::threads(threads);
  return BatchedFft(checked(G::c2c(dims_of<typename G::Dim>(axes), dims_of<typename G::Dim>(batch), in, out,
                                   int(direction), flags_of(planning)),
                            "c2c", axes, batch));
}

template <class T>
BatchedFft<T>::BatchedFft(BatchedFft&& other) noexcept : plan_(std::exchange(other.plan_, nullptr)) {}

template <class T>
BatchedFft<T>& BatchedFft<T>::operator=(BatchedFft&& other) noexcept {
  std::swap(plan_, other.plan_);
  return *this;
}

template <class T>
BatchedFft<T>::~BatchedFft() {
  if (!plan_) return;
  std::lock_guard<std::mutex> lock(planner_mutex());
  Guru<T>::destroy(plan_);
}

template <class T>
void BatchedFft<T>::execute() const {
  if (plan_) Guru<T>::execute(plan_);
}

template class BatchedFft<float>;
template class BatchedFft<double>;

}  // namespace specwave::fft
