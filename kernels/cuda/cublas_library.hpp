#pragma once
// cuBLAS, opened when first used (dlopen) instead of linked. Linking libcublas made every specwave process and
// test pay cuBLAS Lt's start-up, about 0.3 s on the CI machine, though only a device optimiser calls it. Callable
// from plain C++; a build without the CUDA backend answers "not compiled" (kernels/no_cuda.cpp).
#include <string>

namespace specwave::cuda {

// Opens cuBLAS (once per process) and resolves every function specwave calls. Returns "" when it is usable, else
// why not (the library or a symbol that is missing, the names tried) in words a user can act on.
std::string cublas_library_problem();
// The name it was opened by (the soname, or the path beside cuFFT); "" when it could not be opened.
std::string cublas_library_name();

}  // namespace specwave::cuda
