#include "kernels/cuda/check.cuh"
#include "kernels/cuda/device_buffer.hpp"

namespace specwave::cuda {

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  SPECWAVE_CUDA_CHECK(cudaMalloc(&data_, bytes));
  SPECWAVE_CUDA_CHECK(cudaMemset(data_, 0, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (data_) cudaFree(data_);  // no throw from a destructor; a failure here means the context is already gone
}

void DeviceBuffer::zero(cudaStream_t stream) {
  if (data_) SPECWAVE_CUDA_CHECK(cudaMemsetAsync(data_, 0, bytes_, stream));
}

void copy_to_device(void* device, const void* host, std::size_t bytes, cudaStream_t stream) {
  if (!bytes) return;
  SPECWAVE_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream));
  SPECWAVE_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void copy_to_host(void* host, const void* device, std::size_t bytes, cudaStream_t stream) {
  if (!bytes) return;
  SPECWAVE_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream));
  SPECWAVE_CUDA_CHECK(cudaStreamSynchronize(stream));
}

Stream::Stream() { SPECWAVE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }

Stream::~Stream() {
  if (stream_) cudaStreamDestroy(stream_);
}

void Stream::synchronize() const { SPECWAVE_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

void select_device(int index) {
  int count = 0;
  SPECWAVE_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (index < 0 || index >= count)
    throw std::runtime_error("CUDA device " + std::to_string(index) + " does not exist (this machine has " +
                             std::to_string(count) + "); choose an index in 0.." + std::to_string(count - 1));
  SPECWAVE_CUDA_CHECK(cudaSetDevice(index));
}

void synchronize() { SPECWAVE_CUDA_CHECK(cudaDeviceSynchronize()); }

}  // namespace specwave::cuda
