#pragma once
// The halo exchange of a host block (docs/architecture.md, "Domain decomposition"): the planes of each face packed into
// contiguous buffers, persistent point-to-point messages, the received planes unpacked into the ghost planes. Used by
// the FDTD CPU propagator (one field, every face) and the staggered one (u on every face; w_a on the faces of axis a).
#include <algorithm>
#include <memory>
#include <span>
#include <vector>

#include "solver/parallel/comm.hpp"
#include "solver/propagators/fdtd/fdtd_halo.hpp"

namespace specwave {

template <class T>
class HostHaloExchange {
 public:
  HostHaloExchange() = default;
  HostHaloExchange(const Comm& comm, std::vector<HaloFace> faces, const FieldLayout& layout)
      : layout_(layout), faces_(std::move(faces)) {
    send_.resize(faces_.size());
    receive_.resize(faces_.size());
    exchange_ = std::make_unique<Exchange>(comm.exchange());
    for (std::size_t f = 0; f < faces_.size(); ++f) {
      const HaloFace& h = faces_[f];
      send_[f].assign(h.send.points(), T(0));
      receive_[f].assign(h.receive.points(), T(0));
      exchange_->add_send<T>(std::span<const T>(send_[f]), h.peer, h.send_tag());
      exchange_->add_receive<T>(std::span<T>(receive_[f]), h.peer, h.receive_tag());
    }
  }
  bool active() const { return !faces_.empty(); }
  const std::vector<HaloFace>& faces() const { return faces_; }

  // field_of(face) -> T*: the field a face's planes leave from and arrive into.
  template <class FieldOf>
  void start_fields(FieldOf&& field_of) {
    for (std::size_t f = 0; f < faces_.size(); ++f) {
      const T* u = field_of(faces_[f]);
      for_each_row(faces_[f].send,
                   [&](index_t i, std::size_t j, int n) { std::copy_n(u + i, n, send_[f].data() + j); });
    }
    exchange_->start();
  }
  template <class FieldOf>
  void finish_fields(FieldOf&& field_of) {
    exchange_->wait();
    for (std::size_t f = 0; f < faces_.size(); ++f) {
      T* u = field_of(faces_[f]);
      for_each_row(faces_[f].receive,
                   [&](index_t i, std::size_t j, int n) { std::copy_n(receive_[f].data() + j, n, u + i); });
    }
  }
  void start(const T* u) {
    start_fields([u](const HaloFace&) { return u; });
  }
  void finish(T* u) {
    finish_fields([u](const HaloFace&) { return u; });
  }

 private:
  // fn(field index, buffer index, n) for each x row of the box; the buffer holds the box in C order.
  template <class Fn>
  void for_each_row(const FieldBox& b, Fn fn) const {
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < b.extent[0]; ++z)
      for (int y = 0; y < b.extent[1]; ++y)
        fn(layout_.index(b.lo[0] + z, b.lo[1] + y, b.lo[2]), (std::size_t(z) * b.extent[1] + y) * b.extent[2],
           b.extent[2]);
  }

  FieldLayout layout_;
  std::vector<HaloFace> faces_;
  std::vector<std::vector<T>> send_, receive_;
  std::unique_ptr<Exchange> exchange_;
};

}  // namespace specwave
