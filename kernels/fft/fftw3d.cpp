#include "kernels/fft/fftw3d.hpp"

#include "kernels/fft/fftw_batched.hpp"  // planner_mutex(): FFTW's planner is not thread-safe

#include <fcntl.h>
#include <fftw3.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <stdexcept>

namespace specwave::fft {
namespace {

template <class T>
struct Api;

template <>
struct Api<double> {
  static void init(int threads) {
    static bool done = (fftw_init_threads(), true);
    (void)done;
    fftw_plan_with_nthreads(threads);
  }
  static void* r2c(int nz, int ny, int nx, double* in, std::complex<double>* out) {
    return fftw_plan_dft_r2c_3d(nz, ny, nx, in, reinterpret_cast<fftw_complex*>(out), FFTW_MEASURE);
  }
  static void* c2r(int nz, int ny, int nx, std::complex<double>* in, double* out) {
    return fftw_plan_dft_c2r_3d(nz, ny, nx, reinterpret_cast<fftw_complex*>(in), out, FFTW_MEASURE);
  }
  static void execute(void* p) { fftw_execute(static_cast<fftw_plan>(p)); }
  static void r2c(void* p, const double* in, std::complex<double>* out) {
    fftw_execute_dft_r2c(static_cast<fftw_plan>(p), const_cast<double*>(in), reinterpret_cast<fftw_complex*>(out));
  }
  static void c2r(void* p, std::complex<double>* in, double* out) {
    fftw_execute_dft_c2r(static_cast<fftw_plan>(p), reinterpret_cast<fftw_complex*>(in), out);
  }
  static void destroy(void* p) { fftw_destroy_plan(static_cast<fftw_plan>(p)); }
  static void import_wisdom(const std::string& f) { fftw_import_wisdom_from_filename(f.c_str()); }
  static int export_wisdom(const std::string& f) { return fftw_export_wisdom_to_filename(f.c_str()); }
  static constexpr const char* file = "fftw-wisdom-f64";
};

template <>
struct Api<float> {
  static void init(int threads) {
    static bool done = (fftwf_init_threads(), true);
    (void)done;
    fftwf_plan_with_nthreads(threads);
  }
  static void* r2c(int nz, int ny, int nx, float* in, std::complex<float>* out) {
    return fftwf_plan_dft_r2c_3d(nz, ny, nx, in, reinterpret_cast<fftwf_complex*>(out), FFTW_MEASURE);
  }
  static void* c2r(int nz, int ny, int nx, std::complex<float>* in, float* out) {
    return fftwf_plan_dft_c2r_3d(nz, ny, nx, reinterpret_cast<fftwf_complex*>(in), out, FFTW_MEASURE);
  }
  static void execute(void* p) { fftwf_execute(static_cast<fftwf_plan>(p)); }
  static void r2c(void* p, const float* in, std::complex<float>* out) {
    fftwf_execute_dft_r2c(static_cast<fftwf_plan>(p), const_cast<float*>(in), reinterpret_cast<fftwf_complex*>(out));
  }
  static void c2r(void* p, std::complex<float>* in, float* out) {
    fftwf_execute_dft_c2r(static_cast<fftwf_plan>(p), reinterpret_cast<fftwf_complex*>(in), out);
  }
  static void destroy(void* p) { fftwf_destroy_plan(static_cast<fftwf_plan>(p)); }
  static void import_wisdom(const std::string& f) { fftwf_import_wisdom_from_filename(f.c_str()); }
  static int export_wisdom(const std::string& f) { return fftwf_export_wisdom_to_filename(f.c_str()); }
  static constexpr const char* file = "fftw-wisdom-f32";
};

// An exclusive flock(2) on `path` (created if missing) for the lifetime of the object; without the file (no
// directory, no permission) no lock, which only costs determinism across concurrent first runs.
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    if (path.empty()) return;
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0) ::close(fd_), fd_ = -1;
  }
  ~FileLock() {
    if (fd_ >= 0) ::flock(fd_, LOCK_UN), ::close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

std::string wisdom_directory() {
  if (const char* d = std::getenv("SPECWAVE_FFTW_WISDOM")) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME")) return std::string(x) + "/specwave";
  if (const char* h = std::getenv("HOME")) return std::string(h) + "/.cache/specwave";
  return "";
}

template <class T>
RealFft3d<T>::RealFft3d(int nz, int ny, int nx, T* real, std::complex<T>* spectrum, int threads) {
  std::lock_guard<std::mutex> lock(planner_mutex());
  Api<T>::init(threads);
  namespace fs = std::filesystem;
  const std::string dir = wisdom_directory();
  const std::string file = dir.empty() ? "" : (fs::path(dir) / Api<T>::file).string();
  // FFTW_MEASURE picks among algorithms by timing them, and they round differently: two processes planning the
  // same transform on a busy machine can get different plans, and then not bitwise the same results (a resumed run
  // would differ from an uninterrupted one). The wisdom file makes every process after the first use the first
  // one's plan, so its read-plan-write must not interleave with another process's (which would drop entries):
  // it runs under an exclusive lock on "<file>.lock".
  std::error_code dir_error;
  if (!dir.empty()) fs::create_directories(dir, dir_error);
  const FileLock file_lock(file.empty() || dir_error ? "" : file + ".lock");
  if (!file.empty() && fs::exists(file)) Api<T>::import_wisdom(file);
  forward_ = Api<T>::r2c(nz, ny, nx, real, spectrum);
  backward_ = Api<T>::c2r(nz, ny, nx, spectrum, real);
  if (!forward_ || !backward_) throw std::runtime_error("FFTW could not plan a 3-D transform");
  // Save what was learnt (atomically: another run may be reading it); a cache that cannot be written only
  // costs planning time next run.
  if (!file.empty()) {
    std::error_code ec;
    const std::string tmp = file + ".tmp-" + std::to_string(::getpid());
    if (!ec && Api<T>::export_wisdom(tmp)) fs::rename(tmp, file, ec);
    fs::remove(tmp, ec);
  }
}

template <class T>
RealFft3d<T>::~RealFft3d() {
  std::lock_guard<std::mutex> lock(planner_mutex());
  if (forward_) Api<T>::destroy(forward_);
  if (backward_) Api<T>::destroy(backward_);
}

template <class T>
void RealFft3d<T>::forward() {
  Api<T>::execute(forward_);
}

template <class T>
void RealFft3d<T>::backward() {
  Api<T>::execute(backward_);
}

namespace {
void check_aligned(const void* p, const char* what) {
  if (reinterpret_cast<std::uintptr_t>(p) % 64 != 0)
    throw std::logic_error(std::string("RealFft3d: the ") + what + " array is not 64-byte aligned (use fft::Buffer)");
}
}  // namespace

template <class T>
void RealFft3d<T>::forward(const T* real, std::complex<T>* spectrum) {
  check_aligned(real, "real");
  check_aligned(spectrum, "spectrum");
  Api<T>::r2c(forward_, real, spectrum);
}

template <class T>
void RealFft3d<T>::backward(std::complex<T>* spectrum, T* real) {
  check_aligned(real, "real");
  check_aligned(spectrum, "spectrum");
  Api<T>::c2r(backward_, spectrum, real);
}

template class RealFft3d<float>;
template class RealFft3d<double>;

}  // namespace specwave::fft
