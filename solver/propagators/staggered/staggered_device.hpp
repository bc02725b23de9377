#pragma once
// The staggered scheme's arrays on the device, shared by its CUDA propagator (staggered_cuda_propagator.cpp) and its
// CUDA gradient (staggered_cuda_gradient.cpp): the model uploaded from a StaggeredSetup, and a state of the shapes of
// StaggeredFields (the forward's, the Born perturbation's, the adjoint's), with the step's view of both. CUDA builds
// only.
#include <array>
#include <vector>

#include "kernels/cuda/device_buffer.hpp"
#include "solver/propagators/gpu/device_upload.hpp"
#include "solver/propagators/staggered/staggered_setup.hpp"

namespace specwave {

// dt K, dt beta_a, the CPML's profiles on the nodes and half nodes, and the attenuation's drives g_l.
template <class T>
struct DeviceStaggeredModel {
  cuda::DeviceArray<T> kdt;
  std::array<cuda::DeviceArray<T>, 3> bdt, a_node, b_node, a_half, b_half;
  std::vector<cuda::DeviceArray<T>> drives;

  explicit DeviceStaggeredModel(const StaggeredSetup<T>& s) : kdt(upload(s.kdt)) {
    for (std::size_t a = 0; a < 3; ++a) {
      bdt[a] = upload(s.bdt[a]);
      a_node[a] = upload(s.a_node[a]), b_node[a] = upload(s.b_node[a]);
      a_half[a] = upload(s.a_half[a]), b_half[a] = upload(s.b_half[a]);
    }
    for (const auto& g : s.sls_drive) drives.push_back(upload(g));
  }
  // After a new velocity or density model: dt K, dt beta and the drives anew (ordered in `stream`).
  void update(const StaggeredSetup<T>& s, cudaStream_t stream) {
    cuda::copy_to_device(kdt.data(), s.kdt.data(), kdt.bytes(), stream);
    for (std::size_t a = 0; a < 3; ++a) cuda::copy_to_device(bdt[a].data(), s.bdt[a].data(), bdt[a].bytes(), stream);
    for (std::size_t l = 0; l < drives.size(); ++l)
      cuda::copy_to_device(drives[l].data(), s.sls_drive[l].data(), drives[l].bytes(), stream);
  }
  std::size_t bytes() const {
    std::size_t n = kdt.bytes();
    for (std::size_t a = 0; a < 3; ++a)
      n += bdt[a].bytes() + a_node[a].bytes() + b_node[a].bytes() + a_half[a].bytes() + b_half[a].bytes();
    for (const auto& g : drives) n += g.bytes();
    return n;
  }
};

// u, w_a, the phi and chi slabs of the absorbing faces and the memory variables r_l, zero when made (device buffers are
// zero-filled).
template <class T>
struct DeviceStaggeredFields {
  cuda::DeviceArray<T> u;
  std::array<cuda::DeviceArray<T>, 3> w;
  std::vector<cuda::DeviceArray<T>> slabs, memory;
  std::array<std::array<T*, 2>, 3> phi{}, chi{};  // into slabs (null: no layer on that face)

  explicit DeviceStaggeredFields(const StaggeredSetup<T>& s) : u(s.layout.size()) {
    for (std::size_t a = 0; a < 3; ++a) {
      w[a] = cuda::DeviceArray<T>(s.layout.size());
      for (std::size_t side = 0; side < 2; ++side) {
        if (!s.pml[a].face[side]) continue;
        phi[a][side] = slabs.emplace_back(s.slab_points[a]).data();
        chi[a][side] = slabs.emplace_back(s.slab_points[a]).data();
      }
    }
    for (std::size_t l = 0; l < s.sls_drive.size(); ++l) memory.emplace_back(s.velocity.size());
  }
  // Every array, in StaggeredFields::arrays()'s order (a checkpoint's).
  std::vector<cuda::DeviceArray<T>*> arrays() {
    std::vector<cuda::DeviceArray<T>*> out{&u, &w[0], &w[1], &w[2]};
    for (auto& s : slabs) out.push_back(&s);
    for (auto& r : memory) out.push_back(&r);
    return out;
  }
  void zero(cudaStream_t stream) {
    for (cuda::DeviceArray<T>* a : arrays()) a->zero(stream);
  }
  std::size_t values() const { return bytes() / sizeof(T); }
  std::size_t bytes() const {
    std::size_t n = u.bytes() + w[0].bytes() + w[1].bytes() + w[2].bytes();
    for (const auto& s : slabs) n += s.bytes();
    for (const auto& r : memory) n += r.bytes();
    return n;
  }
  // The step's view (StaggeredSetup::step's values) of these fields with the device model.
  StaggeredStep<T> step(const StaggeredSetup<T>& s, const DeviceStaggeredModel<T>& m) const {
    StaggeredStep<T> v;
    v.layout = s.layout;
    v.u = u.data();
    v.kdt = m.kdt.data();
    v.coef = s.coef;
    v.free_surface = s.free_surface;
    for (std::size_t a = 0; a < 3; ++a) {
      v.w[a] = w[a].data();
      v.bdt[a] = m.bdt[a].data();
      StaggeredCpmlAxis<T> p = s.pml[a];
      p.a_node = m.a_node[a].data(), p.b_node = m.b_node[a].data();
      p.a_half = m.a_half[a].data(), p.b_half = m.b_half[a].data();
      for (std::size_t side = 0; side < 2; ++side) p.phi[side] = phi[a][side], p.chi[side] = chi[a][side];
      v.pml[a] = p;
    }
    v.mechanisms = int(memory.size());
    for (std::size_t l = 0; l < memory.size(); ++l) {
      v.r[l] = memory[l].data();
      v.g[l] = m.drives[l].data();
      v.decay[l] = s.sls_decay[l];
    }
    v.half_dt = T(s.dt / 2);
    return v;
  }
};

}  // namespace specwave
