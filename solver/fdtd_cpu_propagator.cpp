// FDTD on the CPU: runs kernels/cpu/fdtd_cpu on the host arrays of FdtdSetup, on the whole grid or, with a
// domain communicator, on this rank's block with a halo exchange that overlaps the interior update
// (docs/architecture.md, "Domain decomposition").
#include <algorithm>
#include <cmath>
#include <limits>
#include <fmt/format.h>
#include <omp.h>

#include "kernels/cpu/fdtd_cpu.hpp"
#include "solver/block_reduce.hpp"
#include "solver/comm.hpp"
#include "solver/fdtd_cpu_propagator.hpp"
#include "solver/fdtd_setup.hpp"
#include "solver/host_field.hpp"
#include "solver/plan.hpp"

namespace specwave {
namespace {

// The halo planes of one face: `radius` planes along `axis`, the block's extent along the other two axes.
// Owned planes next to the face are packed and sent; the neighbour's planes arrive into the ghost planes.
struct HaloFace {
  int axis = 0, side = 0, peer = -1;
  int send_first = 0, receive_first = 0;  // first plane (local coordinate along axis) sent / received
};

template <class T>
class HaloExchange {
 public:
  HaloExchange() = default;
  HaloExchange(const Comm& comm, const Block& block, const FieldLayout& layout) : layout_(layout) {
    const int R = layout.halo;
    for (int a = 0; a < 3; ++a)
      for (int side = 0; side < 2; ++side) {
        const int peer = block.neighbour[a][side];
        if (peer < 0) continue;
        const int e = layout.extent(a);
        faces_.push_back({a, side, peer, side == 0 ? 0 : e - R, side == 0 ? -R : e});
      }
    send_.resize(faces_.size());
    receive_.resize(faces_.size());
    exchange_ = std::make_unique<Exchange>(comm.exchange());
    for (std::size_t f = 0; f < faces_.size(); ++f) {
      const HaloFace& h = faces_[f];
      send_[f].assign(face_points(h.axis), T(0));
      receive_[f].assign(face_points(h.axis), T(0));
      // Tag: the axis and the face of the sender; what leaves my low face arrives at the peer's high ghosts.
      exchange_->add_send<T>(std::span<const T>(send_[f]), h.peer, 2 * h.axis + h.side);
      exchange_->add_receive<T>(std::span<T>(receive_[f]), h.peer, 2 * h.axis + (1 - h.side));
    }
  }
  bool active() const { return !faces_.empty(); }

  // Shell widths of the step split: the halo radius on every face with a neighbour.
  cpu::Shell shell() const {
    cpu::Shell s;
    for (const auto& h : faces_) s.width[h.axis][h.side] = layout_.halo;
    return s;
  }

  void start(const T* u) {
    for (std::size_t f = 0; f < faces_.size(); ++f)
      for_each_row(faces_[f], faces_[f].send_first, [&](index_t i, std::size_t j, int n) {
        std::copy_n(u + i, n, send_[f].data() + j);
      });
    exchange_->start();
  }
  void finish(T* u) {
    exchange_->wait();
    for (std::size_t f = 0; f < faces_.size(); ++f)
      for_each_row(faces_[f], faces_[f].receive_first, [&](index_t i, std::size_t j, int n) {
        std::copy_n(receive_[f].data() + j, n, u + i);
      });
  }

 private:
  std::size_t face_points(int axis) const {
    std::size_t n = std::size_t(layout_.halo);
    for (int a = 0; a < 3; ++a)
      if (a != axis) n *= std::size_t(layout_.extent(a));
    return n;
  }
  // Planes first .. first + R - 1 along h.axis, the other axes over the block's extent: fn(field index,
  // buffer index, n) for each x row of that box; the buffer holds the box in C order.
  template <class Fn>
  void for_each_row(const HaloFace& h, int first, Fn fn) const {
    int lo[3] = {0, 0, 0}, n[3] = {layout_.nz, layout_.ny, layout_.nx};
    lo[h.axis] = first;
    n[h.axis] = layout_.halo;
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < n[0]; ++z)
      for (int y = 0; y < n[1]; ++y)
        fn(layout_.index(lo[0] + z, lo[1] + y, lo[2]), (std::size_t(z) * n[1] + y) * n[2], n[2]);
  }

  FieldLayout layout_;
  std::vector<HaloFace> faces_;
  std::vector<std::vector<T>> send_, receive_;
  std::unique_ptr<Exchange> exchange_;
};

template <class T>
class FdtdCpu final : public Propagator {
 public:
  FdtdCpu(const Case& c, const Plan& plan, const Comm* domain)
      : domain_(domain && domain->size() > 1 ? domain : nullptr) {
    std::optional<Block> block;
    if (domain_) block = block_of(c.grid.shape, plan.process_grid, domain_->rank());
    setup_ = make_fdtd_setup<T>(c, plan, block ? &*block : nullptr);
    u_.assign(setup_.layout.size(), T(0));
    u_prev_.assign(setup_.layout.size(), T(0));
    for (int a = 0; a < 3; ++a) {
      CpmlAxis<T>& axis = setup_.pml[a];
      axis.a = setup_.pml_a[a].data();
      axis.b = setup_.pml_b[a].data();
      for (int side = 0; side < 2; ++side) {
        if (!axis.face[side]) continue;
        axis.psi[side] = slabs_.emplace_back(setup_.slab_points[a], T(0)).data();
        axis.zeta[side] = slabs_.emplace_back(setup_.slab_points[a], T(0)).data();
      }
    }
    n_receivers_ = int(plan.receivers.size());
    local_.assign(std::size_t(n_receivers_) * setup_.nt, 0.0);
    parts_.assign(std::size_t(setup_.block_receivers.slots()) * setup_.nt, 0.0);
    if (domain_) halo_ = HaloExchange<T>(*domain_, setup_.block, setup_.layout);
  }

  std::string name() const override {
    std::string n = std::string("fdtd-cpu-") + (sizeof(T) == 4 ? "fp32" : "fp64");
    if (domain_) {
      const Dims3 p = setup_.block.process_grid;
      n += fmt::format(" on {} ranks ({}x{}x{})", domain_->size(), p[0], p[1], p[2]);
    }
    return n;
  }

  void begin_shot(const std::vector<PointStencil>& sources, const std::vector<std::vector<double>>& wavelets) override {
    std::fill(u_.begin(), u_.end(), T(0));
    std::fill(u_prev_.begin(), u_prev_.end(), T(0));
    for (auto& s : slabs_) std::fill(s.begin(), s.end(), T(0));
    std::fill(local_.begin(), local_.end(), 0.0);
    std::fill(parts_.begin(), parts_.end(), 0.0);
    wavelets_ = wavelets;
    // Sources in the exchanged shell are injected before the shell is sent, the others after the interior.
    const PointLists<T> all = setup_.sources(sources);
    const cpu::Shell sh = halo_.active() ? halo_.shell() : cpu::Shell{};
    shell_sources_ = {};
    interior_sources_ = {};
    const FieldLayout& L = setup_.layout;
    for (std::size_t p = 0; p < all.index.size(); ++p) {
      const index_t i = all.index[p];
      const int z = int(i / L.stride_z()) - L.halo, y = int(i / L.stride_y() % (L.ny + 2 * L.halo)) - L.halo,
                x = int(i % L.stride_y()) - L.halo;
      const bool in_shell = z < sh.width[0][0] || z >= L.nz - sh.width[0][1] || y < sh.width[1][0] ||
                            y >= L.ny - sh.width[1][1] || x < sh.width[2][0] || x >= L.nx - sh.width[2][1];
      PointLists<T>& to = in_shell ? shell_sources_ : interior_sources_;
      to.index.push_back(i);
      to.factor.push_back(all.factor[p]);
      to.owner.push_back(all.owner[p]);
    }
  }

  void advance(int n_begin, int n_end) override {
    for (int n = n_begin; n < n_end; ++n) {
      record_block(setup_.block_receivers, u_.data(), local_, parts_, setup_.nt, n);
      const FdtdStep<T> step{setup_.layout, u_.data(), u_prev_.data(), setup_.vel2dt2.data(), setup_.coef,
                             {setup_.pml[0], setup_.pml[1], setup_.pml[2]}, setup_.free_surface};
      if (!halo_.active()) {
        cpu::fdtd_step(step);
        inject(shell_sources_, n);
        inject(interior_sources_, n);
        if (setup_.free_surface) cpu::zero_top_plane(setup_.layout, u_prev_.data());
      } else {
        // The shell first (u^n's halo is in place from the last exchange), then its exchange runs while the
        // interior is updated. The top plane of a free surface is zero in u^{n-1} already, so zeroing it
        // before the interior update changes nothing there, and it is zeroed again after.
        const cpu::Shell sh = halo_.shell();
        cpu::fdtd_step(step, cpu::StepPart::shell, sh);
        inject(shell_sources_, n);
        if (setup_.free_surface) cpu::zero_top_plane(setup_.layout, u_prev_.data());
        halo_.start(u_prev_.data());
        cpu::fdtd_step(step, cpu::StepPart::interior, sh);
        inject(interior_sources_, n);
        if (setup_.free_surface) cpu::zero_top_plane(setup_.layout, u_prev_.data());
        halo_.finish(u_prev_.data());
      }
      std::swap(u_, u_prev_);
    }
  }

  std::span<const double> traces() override {
    if (!domain_) return local_;
    traces_ = gather_block_traces(*domain_, setup_.block_receivers, local_, parts_, setup_.nt);
    return traces_;
  }

  FieldStats field_stats() override {
    const FieldStats local = host::field_stats(setup_.layout, u_.data());
    return domain_ ? reduce_field_stats(*domain_, setup_.block, local) : local;
  }

  void copy_field(std::span<float> out) override { copy_out(out); }
  void copy_field(std::span<double> out) override { copy_out(out); }
  std::size_t device_bytes() const override { return 0; }
  std::optional<Block> block() const override {
    if (!domain_) return std::nullopt;
    return setup_.block;
  }

 private:
  void inject(const PointLists<T>& src, int n) {
    // f^n: u^{n+1} += (v dt)^2 w / (dz dy dx) s(t_n)
    for (std::size_t p = 0; p < src.index.size(); ++p)
      u_prev_[src.index[p]] += src.factor[p] * T(wavelets_[src.owner[p]][n]);
  }

  template <class U>
  void copy_out(std::span<U> out) const {
    host::copy_interior(setup_.layout, u_.data(), out);
  }

  const Comm* domain_ = nullptr;
  FdtdSetup<T> setup_;
  HaloExchange<T> halo_;
  std::vector<T> u_, u_prev_;
  std::vector<std::vector<T>> slabs_;
  PointLists<T> shell_sources_, interior_sources_;
  std::vector<std::vector<double>> wavelets_;
  std::vector<double> local_, parts_;  // this rank's samples: whole receivers, split receivers' slots
  std::vector<double> traces_;         // every receiver, gathered (domain-decomposed runs)
  int n_receivers_ = 0;
};

}  // namespace

std::unique_ptr<Propagator> make_fdtd_cpu_propagator(const Case& c, const Plan& plan, const Comm* domain) {
  if (c.run.precision == Precision::fp64) return std::make_unique<FdtdCpu<double>>(c, plan, domain);
  return std::make_unique<FdtdCpu<float>>(c, plan, domain);
}

}  // namespace specwave
