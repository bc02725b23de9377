// Opening cuBLAS at run time (kernels/cuda/cublas_library.hpp). The soname is the one of the headers the build
// used (libcublas.so.<major>). It is looked up as the dynamic loader would (LD_LIBRARY_PATH, the run path, the
// cache), then in the folder that the linked cuFFT was loaded from, where a CUDA toolkit keeps cuBLAS too.
#include <cufft.h>
#include <dlfcn.h>

#include <filesystem>
#include <stdexcept>

#include "kernels/cuda/cublas_library.cuh"

namespace specwave::cuda {
namespace {

struct Opened {
  CublasLibrary library;
  std::string problem, name;
};

template <typename F>
bool resolve(void* handle, const char* symbol, F& f, std::string& problem) {
  f = reinterpret_cast<F>(dlsym(handle, symbol));
  if (!f && problem.empty()) problem = std::string("cuBLAS has no function ") + symbol;
  return f != nullptr;
}

Opened open_cublas() {
  Opened o;
  const std::string soname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  std::string tried = soname;
  void* handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string first_error = handle ? "" : dlerror();
  if (!handle) {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&cufftExecC2C), &info) && info.dli_fname) {
      const std::string beside = (std::filesystem::path(info.dli_fname).parent_path() / soname).string();
      tried += ", " + beside;
      handle = dlopen(beside.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle) o.name = beside;
    }
  }
  if (!handle) {
    o.problem = "cuBLAS could not be loaded (tried " + tried + ": " + first_error +
                "); install the CUDA toolkit's cuBLAS " + std::to_string(CUBLAS_VER_MAJOR) +
                " or put its folder on LD_LIBRARY_PATH";
    return o;
  }
  if (o.name.empty()) o.name = soname;
  CublasLibrary& l = o.library;
  // Every symbol is resolved (and the first missing one named) before any is used.
  resolve(handle, "cublasCreate_v2", l.create, o.problem);
  resolve(handle, "cublasDestroy_v2", l.destroy, o.problem);
  resolve(handle, "cublasSetStream_v2", l.set_stream, o.problem);
  resolve(handle, "cublasSetPointerMode_v2", l.set_pointer_mode, o.problem);
  resolve(handle, "cublasDdot_v2", l.ddot, o.problem);
  resolve(handle, "cublasDnrm2_v2", l.dnrm2, o.problem);
  resolve(handle, "cublasDaxpy_v2", l.daxpy, o.problem);
  resolve(handle, "cublasDscal_v2", l.dscal, o.problem);
  resolve(handle, "cublasDcopy_v2", l.dcopy, o.problem);
  resolve(handle, "cublasGetStatusName", l.status_name, o.problem);
  resolve(handle, "cublasGetStatusString", l.status_string, o.problem);
  if (!o.problem.empty()) o.problem += " (" + tried + ")";
  return o;  // the handle stays open for the process' life: the pointers point into it
}

const Opened& opened() {
  static const Opened o = open_cublas();  // thread-safe, once
  return o;
}

}  // namespace

std::string cublas_library_problem() { return opened().problem; }

std::string cublas_library_name() { return opened().problem.empty() ? opened().name : std::string(); }

const CublasLibrary& cublas_library() {
  const Opened& o = opened();
  if (!o.problem.empty()) throw std::runtime_error(o.problem);
  return o.library;
}

}  // namespace specwave::cuda
