#pragma once
// The cuBLAS functions specwave calls, resolved from the library opened at run time (kernels/cuda/cublas_library.hpp).
// Each pointer has the type of the cuBLAS declaration it stands for, so a call is checked by the compiler as a
// linked call would be.
#include <cublas_v2.h>

#include "kernels/cuda/cublas_library.hpp"

namespace specwave::cuda {

struct CublasLibrary {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetPointerMode_v2) set_pointer_mode = nullptr;
  decltype(&cublasDdot_v2) ddot = nullptr;
  decltype(&cublasDnrm2_v2) dnrm2 = nullptr;
  decltype(&cublasDaxpy_v2) daxpy = nullptr;
  decltype(&cublasDscal_v2) dscal = nullptr;
  decltype(&cublasDcopy_v2) dcopy = nullptr;
  decltype(&cublasGetStatusName) status_name = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
};

// The opened library; throws std::runtime_error with cublas_library_problem()'s words when it cannot be used.
const CublasLibrary& cublas_library();

}  // namespace specwave::cuda
