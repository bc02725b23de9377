#pragma once
// 3-D real-to-complex / complex-to-real FFTs with FFTW (threads, plans made once with FFTW_MEASURE, wisdom
// cached in a file). RAII: the plans are destroyed with the object. Explicitly instantiated for float/double.
#include <complex>
#include <string>

namespace specwave::fft {

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

 private:
  void* forward_ = nullptr;
  void* backward_ = nullptr;
};

// Where FFTW wisdom is cached: $SPECWAVE_FFTW_WISDOM, else $XDG_CACHE_HOME/specwave or ~/.cache/specwave.
std::string wisdom_directory();

}  // namespace specwave::fft
