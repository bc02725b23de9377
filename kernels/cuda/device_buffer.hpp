#pragma once
// Device memory for plain C++ code: RAII buffers and checked copies (implemented in device_buffer.cu).
// Buffers are allocated when a propagator is built, never inside the time loop.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

namespace specwave::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);  // zero-filled
  DeviceBuffer(DeviceBuffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  void zero(cudaStream_t stream = nullptr);  // ordered in `stream`

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t n) : buffer_(n * sizeof(T)), size_(n) {}
  T* data() const { return static_cast<T*>(buffer_.data()); }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return buffer_.bytes(); }
  void zero(cudaStream_t stream = nullptr) { buffer_.zero(stream); }

 private:
  DeviceBuffer buffer_;
  std::size_t size_ = 0;
};

// Copies ordered in `stream` (after the work already queued there). Both return when the host buffer may be
// reused: host-to-device once the data is staged, device-to-host once it has arrived.
void copy_to_device(void* device, const void* host, std::size_t bytes, cudaStream_t stream = nullptr);
void copy_to_host(void* host, const void* device, std::size_t bytes, cudaStream_t stream = nullptr);

// An owned, non-blocking CUDA stream: the work of one propagator (one shot), so that several shots can
// share a device concurrently.
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t handle() const { return stream_; }
  void synchronize() const;

 private:
  cudaStream_t stream_ = nullptr;
};
void select_device(int index);  // throws with a clear message when the index does not exist
void synchronize();

}  // namespace specwave::cuda
