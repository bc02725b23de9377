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
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
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

// Page-locked host memory (cudaMallocHost), zero-filled: the staging buffers of asynchronous copies (the MPI
// halo exchange through the host, the receiver samples and snapshots of the FDTD propagator).
template <class T>
class PinnedArray {
 public:
  PinnedArray() = default;
  explicit PinnedArray(std::size_t n);
  PinnedArray(PinnedArray&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  PinnedArray& operator=(PinnedArray&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    return *this;
  }
  PinnedArray(const PinnedArray&) = delete;
  PinnedArray& operator=(const PinnedArray&) = delete;
  ~PinnedArray();
  T* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

// Asynchronous copies queued in `stream`; the host buffer must be pinned for them to overlap other work.
void copy_to_device_async(void* device, const void* host, std::size_t bytes, cudaStream_t stream);
void copy_to_host_async(void* host, const void* device, std::size_t bytes, cudaStream_t stream);
// Either way (device or pinned host memory at each end, told apart by unified addressing): cudaMemcpyDefault.
void copy_async(void* destination, const void* source, std::size_t bytes, cudaStream_t stream);

// A CUDA event without timing: record() in one stream, wait() makes another stream (or synchronize() the host)
// wait for the work queued before it.
class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(cudaStream_t stream);
  void wait(cudaStream_t stream) const;  // `stream` waits for the recorded work
  void synchronize() const;              // the host waits
  bool ready() const;                    // the recorded work is done (the host does not wait)

 private:
  cudaEvent_t event_ = nullptr;
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
