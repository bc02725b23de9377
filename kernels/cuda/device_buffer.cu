#include "kernels/cuda/check.cuh"
#include "kernels/cuda/device_buffer.hpp"

#include <cstring>

namespace specwave::cuda {

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes == 0) return;
  SPECWAVE_CUDA_CHECK(cudaMalloc(&data_, bytes));
  // Zeroed before the constructor returns: the propagators' streams are non-blocking, so a fill left queued in
  // the default stream could land after their first copies into the buffer. Waits for the default stream only.
  SPECWAVE_CUDA_CHECK(cudaMemsetAsync(data_, 0, bytes, cudaStreamLegacy));
  SPECWAVE_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
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

template <class T>
PinnedArray<T>::PinnedArray(std::size_t n) : size_(n) {
  if (n == 0) return;
  void* p = nullptr;
  SPECWAVE_CUDA_CHECK(cudaMallocHost(&p, n * sizeof(T)));
  data_ = static_cast<T*>(p);
  std::memset(data_, 0, n * sizeof(T));
}

template <class T>
PinnedArray<T>::~PinnedArray() {
  if (data_) cudaFreeHost(data_);
}

template class PinnedArray<float>;
template class PinnedArray<double>;

void copy_to_device_async(void* device, const void* host, std::size_t bytes, cudaStream_t stream) {
  if (bytes) SPECWAVE_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream));
}

void copy_to_host_async(void* host, const void* device, std::size_t bytes, cudaStream_t stream) {
  if (bytes) SPECWAVE_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream));
}

void copy_async(void* destination, const void* source, std::size_t bytes, cudaStream_t stream) {
  if (bytes) SPECWAVE_CUDA_CHECK(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDefault, stream));
}

Event::Event() { SPECWAVE_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }

Event::~Event() {
  if (event_) cudaEventDestroy(event_);
}

void Event::record(cudaStream_t stream) { SPECWAVE_CUDA_CHECK(cudaEventRecord(event_, stream)); }

void Event::wait(cudaStream_t stream) const { SPECWAVE_CUDA_CHECK(cudaStreamWaitEvent(stream, event_, 0)); }

void Event::synchronize() const { SPECWAVE_CUDA_CHECK(cudaEventSynchronize(event_)); }

bool Event::ready() const {
  const cudaError_t status = cudaEventQuery(event_);
  if (status == cudaErrorNotReady) {
    // Not an error: the work is still running. Cleared from the last-error state so that the next launch check
    // does not see it (every launch is checked at once, so nothing else is pending there).
    (void)cudaGetLastError();
    return false;
  }
  SPECWAVE_CUDA_CHECK(status);
  return true;
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
