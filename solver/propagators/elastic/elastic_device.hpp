#pragma once
// The elastic scheme's arrays on the device, shared by its CUDA propagator (elastic_cuda_propagator.cpp) and its CUDA
// gradient (elastic_cuda_gradient.cpp): the model uploaded from an ElasticSetup, a state of the shapes of
// ElasticFields (the nine fields in one array, field k from k x the padded size, as the point lists index them; every
// term's CPML memory slabs in ElasticFields' order), the step's view of both, the sources' two injection groups and
// their signal table, and a receiver list. CUDA builds only.
#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "kernels/cuda/device_buffer.hpp"
#include "solver/propagators/elastic/elastic_setup.hpp"
#include "solver/propagators/gpu/device_gather.hpp"
#include "solver/propagators/gpu/device_upload.hpp"
#include "solver/propagators/point_lists.hpp"
#include "solver/propagators/staggered/staggered_setup.hpp"

namespace specwave {

// dt lambda, 2 dt mu, dt mu on the edges, dt b on the velocities' points, and the CPML's and M-PML's profiles (the
// latter empty without an M-PML).
template <class T>
struct DeviceElasticModel {
  cuda::DeviceArray<T> lamdt, mu2dt;
  std::array<cuda::DeviceArray<T>, 3> mudt, bdt, a_node, b_node, a_half, b_half, ma_node, mb_node, ma_half, mb_half;

  explicit DeviceElasticModel(const ElasticSetup<T>& s) : lamdt(upload(s.lamdt)), mu2dt(upload(s.mu2dt)) {
    for (std::size_t a = 0; a < 3; ++a) {
      mudt[a] = upload(s.mudt[a]), bdt[a] = upload(s.bdt[a]);
      a_node[a] = upload(s.a_node[a]), b_node[a] = upload(s.b_node[a]);
      a_half[a] = upload(s.a_half[a]), b_half[a] = upload(s.b_half[a]);
      ma_node[a] = upload(s.ma_node[a]), mb_node[a] = upload(s.mb_node[a]);
      ma_half[a] = upload(s.ma_half[a]), mb_half[a] = upload(s.mb_half[a]);
    }
  }
  // After a new model (update_elastic_model): the coefficients anew (ordered in `stream`).
  void update(const ElasticSetup<T>& s, cudaStream_t stream) {
    cuda::copy_to_device(lamdt.data(), s.lamdt.data(), lamdt.bytes(), stream);
    cuda::copy_to_device(mu2dt.data(), s.mu2dt.data(), mu2dt.bytes(), stream);
    for (std::size_t a = 0; a < 3; ++a) {
      cuda::copy_to_device(mudt[a].data(), s.mudt[a].data(), mudt[a].bytes(), stream);
      cuda::copy_to_device(bdt[a].data(), s.bdt[a].data(), bdt[a].bytes(), stream);
    }
  }
  std::size_t bytes() const {
    std::size_t n = lamdt.bytes() + mu2dt.bytes();
    for (std::size_t a = 0; a < 3; ++a)
      n += mudt[a].bytes() + bdt[a].bytes() + a_node[a].bytes() + b_node[a].bytes() + a_half[a].bytes() +
           b_half[a].bytes() + ma_node[a].bytes() + mb_node[a].bytes() + ma_half[a].bytes() + mb_half[a].bytes();
    return n;
  }
};

// The nine fields and every term's memory slabs, zero when made (device buffers are zero-filled).
template <class T>
struct DeviceElasticFields {
  std::size_t size;  // values of one padded field
  cuda::DeviceArray<T> all;
  std::vector<cuda::DeviceArray<T>> slabs;
  T* psi[elastic_terms][3][2] = {};  // into slabs (null: no slab; for_each_elastic_slab)

  explicit DeviceElasticFields(const ElasticSetup<T>& s)
      : size(std::size_t(s.layout.size())), all(elastic_fields * size) {
    for_each_elastic_slab(
        s, [&](int t, int a, int side) { psi[t][a][side] = slabs.emplace_back(s.slab_values(t, a)).data(); });
  }
  // Every array, all first (a checkpoint's order).
  std::vector<cuda::DeviceArray<T>*> arrays() {
    std::vector<cuda::DeviceArray<T>*> out{&all};
    for (auto& s : slabs) out.push_back(&s);
    return out;
  }
  void zero(cudaStream_t stream) {
    for (cuda::DeviceArray<T>* a : arrays()) a->zero(stream);
  }
  std::size_t bytes() const {
    std::size_t n = all.bytes();
    for (const auto& s : slabs) n += s.bytes();
    return n;
  }
  std::size_t values() const { return bytes() / sizeof(T); }
  // The step's view (ElasticSetup::step's values) of these fields with the device model.
  ElasticStep<T> step(const ElasticSetup<T>& setup, const DeviceElasticModel<T>& m) const {
    ElasticStep<T> s = setup.step();
    for (int k = 0; k < elastic_fields; ++k) s.f[k] = all.data() + std::size_t(k) * size;
    s.lamdt = m.lamdt.data();
    s.mu2dt = m.mu2dt.data();
    for (std::size_t a = 0; a < 3; ++a) {
      s.mudt[a] = m.mudt[a].data();
      s.bdt[a] = m.bdt[a].data();
      s.pml[a].a_node = m.a_node[a].data(), s.pml[a].b_node = m.b_node[a].data();
      s.pml[a].a_half = m.a_half[a].data(), s.pml[a].b_half = m.b_half[a].data();
      s.pml[a].ma_node = m.ma_node[a].data(), s.pml[a].mb_node = m.mb_node[a].data();
      s.pml[a].ma_half = m.ma_half[a].data(), s.pml[a].mb_half = m.mb_half[a].data();
    }
    std::copy_n(&psi[0][0][0], elastic_terms * 6, &s.psi[0][0][0]);
    return s;
  }
};

// A shot's source points split by when they are added (0: the forces, after the velocity step; 1: the rest, after
// the stress step), each group by target in the CPU's order; point p of source j reads row 3 j + kind of the signal
// table. `factor`: the points' factors (the sources', or a Born run's perturbed ones), in the points' order.
template <class T>
std::array<HostGather<T>, 2> elastic_source_gathers(const ElasticPoints<T>& points, const std::vector<T>& factor,
                                                    std::size_t size) {
  using P = ElasticPoints<T>;
  std::vector<index_t> index[2];
  std::vector<T> value[2];
  std::vector<std::int32_t> owner[2];
  for (std::size_t j = 0; j + 1 < points.offsets.size(); ++j)
    for (std::int32_t p = points.offsets[j]; p < points.offsets[j + 1]; ++p) {
      const std::size_t q = std::size_t(p), g = points.signal[q] == P::sample ? 0 : 1;
      index[g].push_back(index_t(points.field[q]) * index_t(size) + points.index[q]);
      value[g].push_back(factor[q]);
      owner[g].push_back(std::int32_t(3 * j + points.signal[q]));
    }
  return {gather_by_target(index[0], value[0], owner[0]), gather_by_target(index[1], value[1], owner[1])};
}

// Each source's three signals (elastic_signal: the running sum F^n, s(t_n), the rate at t_{n+1/2}) in fp64, row 3 j +
// kind, nt values a row.
inline std::vector<double> elastic_signal_table(const std::vector<std::vector<double>>& wavelets,
                                                const std::vector<std::vector<double>>& running, int nt) {
  using P = ElasticPoints<double>;
  const std::size_t n_t = std::size_t(nt);
  std::vector<double> table(3 * wavelets.size() * n_t);
  for (std::size_t j = 0; j < wavelets.size(); ++j)
    for (std::uint8_t kind : {P::running_sum, P::sample, P::midpoint})
      for (std::size_t n = 0; n < n_t; ++n)
        table[(3 * j + kind) * n_t + n] = elastic_signal(kind, wavelets[j], running[j], int(n));
  return table;
}

// A receiver list on the device: its points into the nine fields and the offsets per receiver (every receiver whole
// on one rank, in the list's order).
template <class T>
struct DeviceElasticList {
  int receivers = 0;
  cuda::DeviceArray<index_t> index;
  cuda::DeviceArray<T> factor;
  cuda::DeviceArray<std::int32_t> offsets;

  DeviceElasticList() = default;
  explicit DeviceElasticList(const BlockReceivers<T>& r) {
    for (std::size_t i = 0; i < r.whole_id.size(); ++i)
      if (r.whole_id[i] != int(i)) throw std::logic_error("elastic-cuda: a receiver not whole, or out of order");
    receivers = int(r.whole.offsets.size()) - 1;
    index = upload(r.whole.index);
    factor = upload(r.whole.factor);
    offsets = upload(r.whole.offsets);
  }
  std::size_t bytes() const { return index.bytes() + factor.bytes() + offsets.bytes(); }
};

}  // namespace specwave
