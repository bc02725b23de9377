// FDTD forward, Born and adjoint operators on the CPU (docs/numerics.md, "Adjoint and gradient").
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "kernels/cpu/fdtd_adjoint_cpu.hpp"
#include "kernels/cpu/fdtd_cpu.hpp"
#include "kernels/cpu/flush_denormals.hpp"
#include "solver/forward/progress.hpp"
#include "solver/plan/plan.hpp"
#include "solver/plan/shot_receivers.hpp"
#include "solver/propagators/fdtd/fdtd_setup.hpp"
#include "solver/propagators/gradient_propagator.hpp"
#include "solver/propagators/host_field.hpp"

namespace specwave {
namespace {

// The forward state of one wavefield: u^n, u^{n-1} (padded) and the CPML memory.
template <class T>
struct ForwardState {
  std::vector<T> u, u_prev;
  std::vector<std::vector<T>> slabs;
  std::array<CpmlAxis<T>, 3> pml;

  explicit ForwardState(const FdtdSetup<T>& setup) : u(setup.layout.size(), T(0)), u_prev(setup.layout.size(), T(0)) {
    for (int a = 0; a < 3; ++a) {
      pml[a] = setup.pml[a];
      pml[a].a = setup.pml_a[a].data();
      pml[a].b = setup.pml_b[a].data();
      for (int side = 0; side < 2; ++side) {
        if (!pml[a].face[side]) continue;
        pml[a].psi[side] = slabs.emplace_back(setup.slab_points[a], T(0)).data();
        pml[a].zeta[side] = slabs.emplace_back(setup.slab_points[a], T(0)).data();
      }
    }
  }
  ForwardState(const ForwardState&) = delete;
  ForwardState& operator=(const ForwardState&) = delete;

  void reset() {
    std::fill(u.begin(), u.end(), T(0));
    std::fill(u_prev.begin(), u_prev.end(), T(0));
    for (auto& s : slabs) std::fill(s.begin(), s.end(), T(0));
  }
  // u_prev <- u^{n+1} without sources (fdtd_step), u^n's interior into u_copy when given; the caller injects,
  // applies Z, then calls swap().
  void step(const FdtdSetup<T>& setup, T* u_copy = nullptr) {
    cpu::fdtd_step(FdtdStep<T>{setup.layout,
                               u.data(),
                               u_prev.data(),
                               setup.vel2dt2.data(),
                               setup.coef,
                               {pml[0], pml[1], pml[2]},
                               setup.free_surface,
                               u_copy});
  }
  void finish_step(const FdtdSetup<T>& setup) {
    if (setup.free_surface) cpu::zero_top_plane(setup.layout, u_prev.data());
    std::swap(u, u_prev);
  }
  std::size_t values() const {
    std::size_t n = u.size() + u_prev.size();
    for (const auto& s : slabs) n += s.size();
    return n;
  }
};

template <class T>
class FdtdCpuGradient final : public GradientPropagator, private ForwardStepper<T> {
 public:
  FdtdCpuGradient(const Case& c, const Plan& plan, const HistoryChoice& history)
      : dt_(plan.dt),
        v_limit_(plan.v_reference / plan.cfl),
        flush_denormals_(c.run.flush_denormals),
        source_stencils_(plan.sources),
        wavelets_(plan.wavelets),
        setup_(make_fdtd_setup<T>(c, plan)),
        state_(setup_),
        history_(make_history<T>(history)),
        boundary_runs_(cpml_runs(setup_)),
        receivers_(c, plan) {
    traces_.assign(n_receivers() * std::size_t(setup_.nt), 0.0);
  }

  std::string name() const override { return std::string("fdtd-cpu-") + (sizeof(T) == 4 ? "fp32" : "fp64"); }
  std::string history_name() const override { return history_->name(); }
  std::size_t history_bytes() const override { return history_->bytes(); }
  long long history_forward_steps() const override { return history_->forward_steps(); }

  void set_velocity(std::span<const double> velocity) override {
    check_model_velocity(velocity, std::size_t(setup_.layout.interior_points()), v_limit_, dt_);
    setup_.set_velocity(velocity, dt_);
  }

  // The forward wavefields of one shot as the history hands them to the adjoint pass, u^nt .. u^0.
  void visit_history(int shot, const HistoryVisitor& visit) {
    const cpu::FlushDenormals flush(flush_denormals_);
    forward(shot, true);
    std::vector<T> field(setup_.layout.interior_points());
    std::vector<double> out(field.size());
    for (int n = setup_.nt; n >= 0; --n) {
      history_->field(*this, n, field);
      std::copy(field.begin(), field.end(), out.begin());
      visit(n, out);
    }
    history_shot_ = -1;
  }

  std::vector<double> vel2dt2() const override {
    std::vector<double> out(setup_.layout.interior_points());
    host::copy_interior(setup_.layout, setup_.vel2dt2.data(), std::span<double>(out));
    return out;
  }

  std::vector<double> forward(int shot, bool keep_history) override {
    const cpu::FlushDenormals flush(flush_denormals_);
    begin_shot(shot);
    if (keep_history) {
      history_->run_forward(*this, setup_.nt);
      history_shot_ = shot;
    } else {
      for (int n = 0; n < setup_.nt; ++n) step(n);
    }
    return traces_;
  }

  // Background and perturbation in lockstep: du^{n+1} = Z[step(du) + dm a^n], a^n = (u^{n+1} - 2u^n + u^{n-1}) / (v
  // dt)^2.
  std::vector<double> born(int shot, std::span<const double> dm) override {
    const FieldLayout& L = setup_.layout;
    check_born_perturbation(dm.size(), std::size_t(L.interior_points()));
    const cpu::FlushDenormals flush(flush_denormals_);
    begin_shot(shot);
    ForwardState<T> du(setup_);
    std::vector<T> u_before(L.size());
    std::vector<double> out(traces_.size(), 0.0);
    for (int n = 0; n < setup_.nt; ++n) {
      host::record(setup_.receivers, du.u.data(), out, setup_.nt, n);
      std::copy(state_.u_prev.begin(), state_.u_prev.end(), u_before.begin());  // u^{n-1}
      background_step(n);  // state_.u_prev = u^{n+1} (injected, Z applied), not yet swapped
      du.step(setup_);
      const T* u1 = state_.u_prev.data();
      const T* u0 = state_.u.data();
      const T* vel = setup_.vel2dt2.data();
#pragma omp parallel for collapse(2)
      for (int z = 0; z < L.nz; ++z)
        for (int y = 0; y < L.ny; ++y)
          for (int x = 0; x < L.nx; ++x) {
            const index_t i = L.index(z, y, x);
            const T a = (u1[i] - T(2) * u0[i] + u_before[i]) / vel[i];
            du.u_prev[i] += T(dm[(std::size_t(z) * L.ny + y) * L.nx + x]) * a;
          }
      du.finish_step(setup_);
      state_.finish_step(setup_);
    }
    return out;
  }

  // The adjoint in omega = (v dt)^2 mu (docs/numerics.md, "The adjoint in omega"): omega^n = Z [2 omega^{n+1} -
  // omega^{n+2} + V (Ltilde^T omega^{n+1} + R^T g^n)], one sweep a step; the imaging condition, summed by parts in
  // time, accumulates u^n times that step's increment (omega^n - 2 omega^{n+1} + omega^{n+2}) and is divided by V^2
  // once, at the end of the shot.
  void adjoint(std::span<const double> residual, std::span<double> gradient, std::span<double> illumination) override {
    const FieldLayout& L = setup_.layout;
    const int nt = setup_.nt;
    check_adjoint_arguments(history_shot_ >= 0, traces_.size(), std::size_t(L.interior_points()), residual.size(),
                            gradient.size(), illumination.size());
    const cpu::FlushDenormals flush(flush_denormals_);
    double* const illum = illumination.empty() ? nullptr : illumination.data();
    AdjointState& st = adjoint_state();  // zeroed: the adjoint starts at rest
    std::vector<T>&omega = st.omega, &omega_next = st.omega_next;
    const T* vel = setup_.vel2dt2.data();
    FdtdScaledAdjointStep<T> step = scaled_adjoint_view(L, vel, setup_.coef, st.pml.data(), setup_.free_surface);
    // u^n, handed out in decreasing n from nt: interior-compact, in place when the history holds them, or padded in
    // state_.u where boundary saving rebuilds them (no copy).
    ReverseFields<T> fields(*history_, *this, L.interior_points());
    (void)fields(nt);  // u^nt: its term has omega^nt = 0, but the history hands the fields out from nt
    // Boundary saving's reverse steps run inside the adjoint's sweeps (reverse_step), until this pass ends.
    struct Fuse {
      bool& on;
      explicit Fuse(bool& flag) : on(flag) { on = true; }
      ~Fuse() { on = false; }
    } fuse(fuse_reverse_);
    const auto& rec = setup_.receivers;
    // The adjoint sources in omega, V R^T g: the receivers' weights times V at their points; and each point's
    // interior index, for the sources' part of the imaging condition.
    std::vector<T> factor(rec.factor.size());
    std::vector<std::size_t> interior(rec.index.size());
    for (std::size_t p = 0; p < factor.size(); ++p) {
      factor[p] = rec.factor[p] * vel[rec.index[p]];
      int z, y, x;
      L.coordinates(rec.index[p], z, y, x);
      interior[p] = (std::size_t(z) * std::size_t(L.ny) + std::size_t(y)) * std::size_t(L.nx) + std::size_t(x);
    }
    double* const image = st.image.data();
    step.image = image;
    step.illumination = illum;
    // fp32: the terms summed in fp32 over image_block_steps steps, then added to the fp64 image (the last step,
    // n = 0, flushes); fp64: straight into the image.
    const int block = sizeof(T) == 4 ? image_block_steps : 1;
    if (block > 1) step.image_partial = st.image_partial.data();
    shot_step(ShotPass::adjoint, 0, nt);  // the adjoint pass begins (replays count as its)
    for (int n = nt - 1; n >= 0; --n) {
      const auto [u_now, padded] = fields.current(n);
      step.omega = omega.data();
      step.omega_next = omega_next.data();
      step.u_now = u_now;
      step.u_now_padded = padded;
      step.reverse = pending_reverse();
      step.flush = n % block == 0;
      // omega_next = omega^n without the adjoint sources; image += u^n V Ltilde^T omega^{n+1}, illumination +=
      // (u^n)^2 (u^n rebuilt first, row by row, when boundary saving's reverse step is pending)
      cpu::fdtd_adjoint_step(step);
      finish_reverse();
      for (std::size_t r = 0; r + 1 < rec.offsets.size(); ++r)
        for (std::int32_t p = rec.offsets[r]; p < rec.offsets[r + 1]; ++p) {
          const T source = factor[p] * T(residual[r * nt + n]);
          omega_next[rec.index[p]] += source;
          image[interior[p]] += imaging_term_by_parts(u_now[padded ? rec.index[p] : interior[p]], source);
        }
      if (setup_.free_surface) cpu::zero_top_plane(L, omega_next.data());
      std::swap(omega, omega_next);
      shot_step(ShotPass::adjoint, nt - n, nt);
    }
    // dJ/dV = sum_n mu^{n+1} a^n = image / V^2 (on the free-surface plane u^n, hence image, is zero).
#pragma omp parallel for collapse(2) schedule(static)
    for (int z = 0; z < L.nz; ++z)
      for (int y = 0; y < L.ny; ++y) {
        const std::size_t k0 = (std::size_t(z) * std::size_t(L.ny) + std::size_t(y)) * std::size_t(L.nx);
        const T* v = vel + L.index(z, y, 0);
        for (int x = 0; x < L.nx; ++x) gradient[k0 + x] += image[k0 + x] / (double(v[x]) * double(v[x]));
      }
  }

 private:
  std::size_t n_receivers() const { return setup_.receivers.offsets.size() - 1; }

  void begin_shot(int shot) {
    state_.reset();
    // A shot with receivers of its own (ShotReceivers): its lists and traces made anew when they change.
    if (const auto* own = receivers_.own(shot); own && setup_.set_receivers(*own))
      traces_.assign(n_receivers() * std::size_t(setup_.nt), 0.0);
    std::fill(traces_.begin(), traces_.end(), 0.0);
    sources_ = setup_.sources(source_stencils_.at(shot));
    wavelet_ = &wavelets_.at(shot);
    history_shot_ = -1;
    // The sources' points in index order (stable: a point's sources in inject's order), for a fused reverse step.
    reverse_order_.resize(sources_.index.size());
    std::iota(reverse_order_.begin(), reverse_order_.end(), std::size_t(0));
    std::stable_sort(reverse_order_.begin(), reverse_order_.end(),
                     [&](std::size_t a, std::size_t b) { return sources_.index[a] < sources_.index[b]; });
    reverse_index_.resize(reverse_order_.size());
    reverse_factors_.resize(reverse_order_.size());
    reverse_amplitudes_.resize(reverse_order_.size());
    for (std::size_t k = 0; k < reverse_order_.size(); ++k) {
      reverse_index_[k] = sources_.index[reverse_order_[k]];
      reverse_factors_[k] = sources_.factor[reverse_order_[k]];
    }
    fuse_reverse_ = reverse_pending_ = false;
  }
  // u^{n+1} into state_.u_prev: the step (copying u^n's interior into u_copy when given), f^n injected; the caller
  // applies Z and swaps.
  void background_step(int n, T* u_copy = nullptr) {
    state_.step(setup_, u_copy);
    inject(n, state_.u_prev.data());
    // (step(), and Born runs, which step here; u^{n+1} is in u_prev now)
    forward_step(n + 1, setup_.nt, [&] { return host::field_stats(setup_.layout, state_.u_prev.data()); });
  }
  // field += f^n (V included in the factors).
  void inject(int n, T* field) const {
    for (std::size_t p = 0; p < sources_.index.size(); ++p)
      field[sources_.index[p]] += sources_.factor[p] * T((*wavelet_)[sources_.owner[p]][n]);
  }

  // ForwardStepper
  std::size_t state_values() const override { return state_.values(); }
  void save_state(std::span<T> out) const override {
    auto it = std::copy(state_.u.begin(), state_.u.end(), out.begin());
    it = std::copy(state_.u_prev.begin(), state_.u_prev.end(), it);
    for (const auto& s : state_.slabs) it = std::copy(s.begin(), s.end(), it);
  }
  void restore_state(std::span<const T> in) override {
    auto it = in.begin();
    std::copy(it, it + state_.u.size(), state_.u.begin());
    it += state_.u.size();
    std::copy(it, it + state_.u_prev.size(), state_.u_prev.begin());
    it += state_.u_prev.size();
    for (auto& s : state_.slabs) {
      std::copy(it, it + s.size(), s.begin());
      it += s.size();
    }
  }
  void step(int n) override {
    host::record(setup_.receivers, state_.u.data(), traces_, setup_.nt, n);
    background_step(n);
    state_.finish_step(setup_);
  }
  void copy_field_and_step(int n, std::span<T> out) override {
    host::record(setup_.receivers, state_.u.data(), traces_, setup_.nt, n);
    background_step(n, out.data());
    state_.finish_step(setup_);
  }
  std::size_t field_values() const override { return setup_.layout.interior_points(); }
  void copy_field(std::span<T> out) const override {
    if (reverse_pending_) throw std::logic_error("copy_field: a reverse step is pending (the adjoint's sweep does it)");
    host::copy_interior(setup_.layout, state_.u.data(), out);
  }

  // Running backwards (solver/propagators/history/boundary_history.hpp). The boundary points are those of
  // boundary_runs_.
  bool reversible() const override { return true; }
  std::size_t boundary_values() const override {
    return boundary_runs_.empty() ? 0 : boundary_runs_.back().offset + std::size_t(boundary_runs_.back().length);
  }
  void save_boundary(std::span<T> out) const override {
    const T* u = state_.u.data();
#pragma omp parallel for schedule(static)
    for (std::size_t r = 0; r < boundary_runs_.size(); ++r) {
      const Run& run = boundary_runs_[r];
      std::copy(u + run.start, u + run.start + run.length, out.begin() + std::ptrdiff_t(run.offset));
    }
  }
  // The reverse pass keeps the current field in state_.u and the one after it in time in state_.u_prev, so that
  // its step has the forward step's shape: u_prev <- 2 u - u_prev + V L u, then a swap.
  void start_reverse(std::span<const T> now, std::span<const T> next) override {
    state_.reset();
    set_interior(now, state_.u.data());
    set_interior(next, state_.u_prev.data());
  }
  // u^{n-1} = Z [2 u^n - u^{n+1} + V (L u^n + f^n)] on the points outside the layer: fdtd_step without CPML
  // terms on the box inside the absorbing faces' layers (the same arithmetic as the forward's update of those
  // points), f^n as the forward injected it (its sign unchanged: it stands on the same side of the recurrence);
  // then the saved values on the layer points, which the step left alone.
  // Inside adjoint() (fuse_reverse_), the step is fused into the adjoint's sweep instead: this only puts the layer
  // values in place and lists f^n by point (FdtdReverseRows); the adjoint step rebuilds the rest of u^{n-1} in
  // state_.u_prev row by row, just before its imaging reads it, and finish_reverse() swaps. Same arithmetic a point.
  void reverse_step(int n, std::span<const T> boundary_before) override {
    if (fuse_reverse_) {
      set_boundary(boundary_before);
      for (std::size_t k = 0; k < reverse_order_.size(); ++k)
        reverse_amplitudes_[k] = T((*wavelet_)[sources_.owner[reverse_order_[k]]][n]);
      reverse_pending_ = true;
      return;
    }
    if (setup_.free_surface) cpu::mirror_top_ghosts(setup_.layout, state_.u.data());  // the interior part does not
    cpu::fdtd_step(FdtdStep<T>{setup_.layout,
                               state_.u.data(),
                               state_.u_prev.data(),
                               setup_.vel2dt2.data(),
                               setup_.coef,
                               {},
                               setup_.free_surface},
                   StepPart::interior, layer_shell());
    inject(n, state_.u_prev.data());
    if (setup_.free_surface) cpu::zero_top_plane(setup_.layout, state_.u_prev.data());
    set_boundary(boundary_before);
    std::swap(state_.u, state_.u_prev);
  }
  // The reverse step's part in the adjoint sweep, after a deferred reverse_step; none otherwise.
  FdtdReverseRows<T> pending_reverse() {
    if (!reverse_pending_) return {};
    return {state_.u.data(),           state_.u_prev.data(),    layer_shell(),
            reverse_index_.data(),     reverse_factors_.data(), reverse_amplitudes_.data(),
            int(reverse_index_.size())};
  }
  void finish_reverse() {
    if (!reverse_pending_) return;
    std::swap(state_.u, state_.u_prev);
    reverse_pending_ = false;
  }
  // The absorbing layers' points, whose u^{n-1} the reverse step takes from the saved values.
  Shell layer_shell() const {
    Shell layer;
    for (int a = 0; a < 3; ++a)
      for (int side = 0; side < 2; ++side) layer.width[a][side] = setup_.pml[a].face[side] ? setup_.pml[a].width : 0;
    return layer;
  }
  void set_boundary(std::span<const T> boundary_before) {
    T* u = state_.u_prev.data();
#pragma omp parallel for schedule(static)
    for (std::size_t r = 0; r < boundary_runs_.size(); ++r) {
      const Run& run = boundary_runs_[r];
      std::copy(boundary_before.begin() + std::ptrdiff_t(run.offset),
                boundary_before.begin() + std::ptrdiff_t(run.offset + run.length), u + run.start);
    }
  }
  const T* current_field() const override { return reverse_pending_ ? state_.u_prev.data() : state_.u.data(); }
  void set_interior(std::span<const T> in, T* u) const {
    const FieldLayout& L = setup_.layout;
#pragma omp parallel for collapse(2)
    for (int z = 0; z < L.nz; ++z)
      for (int y = 0; y < L.ny; ++y)
        for (int x = 0; x < L.nx; ++x) u[L.index(z, y, x)] = in[(std::size_t(z) * L.ny + y) * L.nx + x];
  }

  // A run of boundary points along x: padded indices start .. start + length - 1, packed values from offset.
  struct Run {
    index_t start;
    int length;
    std::size_t offset;
  };
  // The points whose forward update has a CPML term, as the CPU step decides it (kernels/cpu/fdtd_cpu.cpp): a
  // whole row (z, y) when z or y lies in a layer, else the x-layer ends of the row.
  static std::vector<Run> cpml_runs(const FdtdSetup<T>& s) {
    const FieldLayout& L = s.layout;
    const CpmlAxis<T>& px = s.pml[2];
    const int x_begin = px.face[0] ? px.width : 0, x_end = px.face[1] ? L.nx - px.width : L.nx;
    std::vector<Run> runs;
    std::size_t offset = 0;
    const auto add = [&](int z, int y, int x0, int x1) {
      if (x0 >= x1) return;
      runs.push_back({L.index(z, y, x0), x1 - x0, offset});
      offset += std::size_t(x1 - x0);
    };
    for (int z = 0; z < L.nz; ++z)
      for (int y = 0; y < L.ny; ++y) {
        if (s.pml[0].in_layer(z) || s.pml[1].in_layer(y)) {
          add(z, y, 0, L.nx);
        } else {
          add(z, y, 0, std::min(x_begin, L.nx));
          add(z, y, std::max(x_end, x_begin), L.nx);
        }
      }
    return runs;
  }

  // The adjoint's fields (omega^{n+1}, omega^{n+2}, the CPML's alpha, beta, gamma slabs, the fp64 image and its fp32
  // partial sums), allocated
  // by the first adjoint and kept: an inversion calls adjoint once per shot and evaluation, and fresh pages for these
  // (tens of MB at 150^3) cost more than zeroing them in parallel.
  struct AdjointState {
    std::vector<T> omega, omega_next;
    std::vector<double> image;
    std::vector<T> image_partial;  // fp32 runs: the image's partial sums (FdtdScaledAdjointStep::image_partial)
    std::vector<std::vector<T>> slabs;
    std::array<CpmlAdjointAxis<T>, 3> pml;
  };
  AdjointState& adjoint_state() {
    const FieldLayout& L = setup_.layout;
    if (!adjoint_) {
      adjoint_ = std::make_unique<AdjointState>();
      AdjointState& st = *adjoint_;
      for (auto* v : {&st.omega, &st.omega_next}) v->resize(L.size());
      st.image.resize(L.interior_points());
      if (sizeof(T) == 4) st.image_partial.resize(L.interior_points());
      for (int a = 0; a < 3; ++a)
        make_cpml_adjoint_axis(st.pml[a], setup_.pml[a], a, L.nz, L.ny, L.nx, setup_.pml_a[a].data(),
                               setup_.pml_b[a].data(),
                               [&](std::size_t values) { return st.slabs.emplace_back(values).data(); });
    }
    AdjointState& st = *adjoint_;
    std::vector<std::vector<T>*> arrays = {&st.omega, &st.omega_next, &st.image_partial};
    for (auto& s : st.slabs) arrays.push_back(&s);
    for (std::vector<T>* v : arrays) host::zero(std::span<T>(*v));
    host::zero(std::span<double>(st.image));
    return st;
  }

  // Frozen from the plan: dt, the stability limit of the model, the acquisition.
  double dt_, v_limit_;
  bool flush_denormals_;
  std::vector<std::vector<PointStencil>> source_stencils_;  // [shot][source]
  std::vector<std::vector<std::vector<double>>> wavelets_;  // [shot][source][n]
  FdtdSetup<T> setup_;
  ForwardState<T> state_;
  std::unique_ptr<WavefieldHistory<T>> history_;
  PointLists<T> sources_;  // this shot's, with the current model's (v dt)^2
  const std::vector<std::vector<double>>* wavelet_ = nullptr;
  std::vector<double> traces_;
  int history_shot_ = -1;
  std::vector<Run> boundary_runs_;
  // Boundary saving's reverse step fused into the adjoint (reverse_step): on while adjoint() runs; a step deferred
  // to the adjoint's sweep; this shot's sources sorted by point, their factors and the step's wavelet values.
  bool fuse_reverse_ = false, reverse_pending_ = false;
  std::vector<std::size_t> reverse_order_;
  std::vector<index_t> reverse_index_;
  std::vector<T> reverse_factors_, reverse_amplitudes_;
  std::unique_ptr<AdjointState> adjoint_;
  ShotReceivers receivers_;
};

template <class T>
void visit_history(const Case& c, const Plan& plan, const HistoryChoice& history, std::span<const double> velocity,
                   int shot, const HistoryVisitor& visit) {
  FdtdCpuGradient<T> g(c, plan, history);
  g.set_velocity(velocity);
  g.visit_history(shot, visit);
}

}  // namespace

void visit_fdtd_cpu_history(const Case& c, const Plan& plan, const HistoryChoice& history,
                            std::span<const double> velocity, int shot, const HistoryVisitor& visit) {
  if (c.run.precision == Precision::fp64)
    visit_history<double>(c, plan, history, velocity, shot, visit);
  else
    visit_history<float>(c, plan, history, velocity, shot, visit);
}

std::unique_ptr<GradientPropagator> make_fdtd_cpu_gradient(const Case& c, const Plan& plan,
                                                           const HistoryChoice& history) {
  if (c.run.precision == Precision::fp64) return std::make_unique<FdtdCpuGradient<double>>(c, plan, history);
  return std::make_unique<FdtdCpuGradient<float>>(c, plan, history);
}

}  // namespace specwave
