#pragma once
// The two-phase field copy of a GPU propagator (Propagator::start_copy_field / finish_copy_field; docs/gpu.md,
// "Bus traffic"): start fills a dense device buffer on the compute stream (the caller's `fill`: unpad, or a
// device copy), then copies it on the output stream into a pinned host buffer while the next steps run; finish
// waits for that copy and converts into the caller's array. The dense buffer and the pinned one are not touched
// again before finish. Only built with CUDA. Both streams must outlive this (declared before it).
#include <cstddef>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "kernels/cuda/device_buffer.hpp"

namespace specwave {

template <class T>
class DeviceFieldCopy {
 public:
  // `points` values a field. The dense buffer is allocated now when `dense_now` (a propagator that also uses it
  // for copy_field), else at the first start; the pinned buffer now when snapshots are planned, else at the
  // first start. Both streams outlive this.
  DeviceFieldCopy(const cuda::Stream& compute, const cuda::Stream& output, std::size_t points, bool snapshots_planned,
                  bool dense_now)
      : compute_(compute),
        output_(output),
        points_(points),
        dense_(dense_now ? points : 0),
        host_(snapshots_planned ? points : 0) {}
  // Waits for a copy still queued: it writes into the pinned buffer freed here.
  ~DeviceFieldCopy() {
    if (pending_) cudaStreamSynchronize(output_.handle());  // no throw from a destructor
  }
  DeviceFieldCopy(const DeviceFieldCopy&) = delete;
  DeviceFieldCopy& operator=(const DeviceFieldCopy&) = delete;

  // The dense device buffer: (nz, ny, nx) C order once allocated. A propagator using it outside start/finish
  // calls wait_for_copy() first.
  T* dense() const { return dense_.data(); }
  std::size_t size() const { return points_; }
  std::size_t device_bytes() const { return dense_.bytes(); }

  // `fill(T* dense)` queues on the compute stream the work that writes the field into the dense buffer; its
  // copy to the host follows on the output stream.
  template <class Fill>
  void start(Fill&& fill) {
    if (pending_) throw std::logic_error("start_copy_field: the last copy was not finished");
    if (host_.size() < points_) host_ = cuda::PinnedArray<T>(points_);    // snapshots not planned
    if (dense_.size() < points_) dense_ = cuda::DeviceArray<T>(points_);  // zero-filled before it returns
    const cudaStream_t st = compute_.handle(), out = output_.handle();
    fill(dense_.data());
    filled_.record(st);
    filled_.wait(out);
    cuda::copy_to_host_async(host_.data(), dense_.data(), dense_.bytes(), out);
    copied_.record(out);
    pending_ = true;
  }

  // copy_field's copy, at once: `fill(T* dense)` on the compute stream once a pending copy has read the dense buffer,
  // then the dense buffer to `out`, converted to U (waits).
  template <class U, class Fill>
  void copy_now(std::span<U> out, Fill&& fill) {
    if (out.size() < points_) throw std::invalid_argument("copy_field: the output holds too few values");
    wait_for_copy();
    if (dense_.size() < points_) dense_ = cuda::DeviceArray<T>(points_);
    const cudaStream_t st = compute_.handle();
    fill(dense_.data());
    if constexpr (std::is_same_v<U, T>) {
      cuda::copy_to_host(out.data(), dense_.data(), points_ * sizeof(T), st);
    } else {
      std::vector<T> host(points_);
      cuda::copy_to_host(host.data(), dense_.data(), points_ * sizeof(T), st);
      for (std::size_t i = 0; i < points_; ++i) out[i] = U(host[i]);
    }
  }

  // Waits for the copy start queued and converts it into `out` (the conversion copy_field makes).
  template <class U>
  void finish(std::span<U> out) {
    if (!pending_) throw std::logic_error("finish_copy_field without start_copy_field");
    if (out.size() < points_) throw std::invalid_argument("finish_copy_field: the output holds too few values");
    copied_.synchronize();
    pending_ = false;
    const T* held = host_.data();
    for (std::size_t i = 0; i < points_; ++i) out[i] = U(held[i]);
  }

  // Drops a started copy (a new shot, a loaded state): waits for it, hands nothing out.
  void discard() {
    if (pending_) copied_.synchronize();
    pending_ = false;
  }

  // The compute stream waits until a pending copy has read the dense buffer (before other work writes it).
  void wait_for_copy() const {
    if (pending_) copied_.wait(compute_.handle());
  }

 private:
  const cuda::Stream& compute_;
  const cuda::Stream& output_;
  std::size_t points_ = 0;
  cuda::DeviceArray<T> dense_;
  cuda::PinnedArray<T> host_;
  cuda::Event filled_, copied_;
  bool pending_ = false;
};

}  // namespace specwave
