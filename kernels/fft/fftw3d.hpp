#pragma once
// 3-D real-to-complex / complex-to-real FFTs with FFTW (threads, plans made once with FFTW_MEASURE, wisdom
// cached in a file). RAII: the plans are destroyed with the object. Explicitly instantiated for float/double.
#include <complex>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

namespace specwave::fft {

// 64-byte aligned storage, so that transforms planned on one buffer can run on any other (FFTW's new-array
// execute needs the same alignment as the planned arrays).
template <class T>
struct AlignedAllocator {
  using value_type = T;
  AlignedAllocator() = default;
  template <class U>
  AlignedAllocator(const AlignedAllocator<U>&) {}
  T* allocate(std::size_t n) {
    void* p = std::aligned_alloc(64, ((n * sizeof(T) + 63) / 64) * 64);
    if (!p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t) { std::free(p); }
  template <class U>
  bool operator==(const AlignedAllocator<U>&) const {
    return true;
  }
};
template <class T>
using Buffer = std::vector<T, AlignedAllocator<T>>;

template <class T>
class RealFft3d {
 public:
  // Plans for a (nz, ny, nx) real array `real` and its (nz, ny, nx/2+1) half spectrum `spectrum`, both owned
  // by the caller and kept alive. Planning with FFTW_MEASURE overwrites both arrays: plan before filling them.
  RealFft3d(int nz, int ny, int nx, T* real, std::complex<T>* spectrum, int threads);
  ~RealFft3d();
  RealFft3d(const RealFft3d&) = delete;
  RealFft3d& operator=(const RealFft3d&) = delete;
  void forward();   // real -> spectrum (unnormalised); real is preserved
  void backward();  // spectrum -> real (unnormalised: a round trip multiplies by nz ny nx); spectrum is destroyed
  // The same transforms on other arrays of the same shapes, 64-byte aligned like fft::Buffer (checked).
  void forward(const T* real, std::complex<T>* spectrum);
  void backward(std::complex<T>* spectrum, T* real);  // destroys spectrum

 private:
  void* forward_ = nullptr;
  void* backward_ = nullptr;
};

// Where FFTW wisdom is cached: $SPECWAVE_FFTW_WISDOM, else $XDG_CACHE_HOME/specwave or ~/.cache/specwave.
std::string wisdom_directory();

}  // namespace specwave::fft
