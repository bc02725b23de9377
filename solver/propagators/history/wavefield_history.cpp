#include "solver/propagators/history/wavefield_history.hpp"
#include "solver/propagators/history/segment_schedule.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <utility>
#include <vector>

#include "solver/case/errors.hpp"
#include "solver/propagators/history/boundary_history.hpp"

namespace specwave {
namespace {

std::string gib(double bytes) { return fmt::format("{:.3g} GiB", bytes / double(1ull << 30)); }

std::string disk_space_message(const std::string& directory, double needed, double free) {
  return fmt::format(
      "the forward wavefields need {} on disk in {} (inversion.scratch_directory), but only {} are free "
      "there; point inversion.scratch_directory at a larger file system, or use wavefield_storage = "
      "\"binomial\" (recomputation in memory)",
      gib(needed), directory, gib(free));
}

template <class T>
class AllSteps final : public WavefieldHistory<T> {
 public:
  std::string name() const override { return "all steps in memory"; }
  void run_forward(ForwardStepper<T>& s, int nt) override {
    const std::size_t f = s.field_values();
    this->begin_count();
    fields_.resize(f * (std::size_t(nt) + 1));
    for (int n = 0; n < nt; ++n) this->copy_and_step(s, n, slot(n, f));
    s.copy_field(slot(nt, f));
    field_size_ = f;
  }
  void field(ForwardStepper<T>&, int n, std::span<T> out) override {
    const auto in = slot(n, field_size_);
    std::copy(in.begin(), in.end(), out.begin());
  }
  std::span<const T> held(int n) const override {
    return std::span<const T>(fields_).subspan(std::size_t(n) * field_size_, field_size_);
  }
  std::size_t bytes() const override { return fields_.size() * sizeof(T); }

 private:
  std::span<T> slot(int n, std::size_t f) { return std::span<T>(fields_).subspan(std::size_t(n) * f, f); }
  std::vector<T> fields_;
  std::size_t field_size_ = 0;
};

// Segment checkpoints (segment_schedule.hpp) in host memory.
template <class T>
class SegmentCheckpoints final : public WavefieldHistory<T> {
 public:
  explicit SegmentCheckpoints(int segment) : schedule_(segment) {}
  std::string name() const override { return fmt::format("checkpoints every {} steps", schedule_.segment()); }
  void run_forward(ForwardStepper<T>& s, int nt) override {
    this->begin_count();
    state_size_ = s.state_values();
    field_size_ = s.field_values();
    beside_ = s.field_beside_state();
    slot_size_ = state_size_ + (beside_ ? field_size_ : 0);  // (the field beside the state: ForwardStepper)
    states_.resize(slot_size_ * std::size_t(schedule_.checkpoints(nt)));
    schedule_.run_forward(
        nt,
        [&](int k) {
          s.save_state(state(k));
          if (beside_) s.copy_field(beside(k));
        },
        [&](int n) { this->step(s, n); });
    cache_.resize(field_size_ * std::size_t(schedule_.cache_fields()));
  }
  void field(ForwardStepper<T>& s, int n, std::span<T> out) override {
    int restored = -1;  // the checkpoint just restored, until the next step
    schedule_.recompute(
        n,
        [&](int k) {
          s.restore_state(state(k));
          restored = k;
        },
        [&](int m) {
          this->step(s, m);
          restored = -1;
        },
        [&](int slot) {
          if (beside_ && restored >= 0) {
            const auto in = beside(restored);
            std::copy(in.begin(), in.end(), cached(slot).begin());
          } else {
            s.copy_field(cached(slot));
          }
        });
    const auto in = cached(schedule_.cache_slot(n));
    std::copy(in.begin(), in.end(), out.begin());
  }
  std::size_t bytes() const override { return (states_.size() + cache_.size()) * sizeof(T); }

 private:
  std::span<T> state(int k) { return std::span<T>(states_).subspan(std::size_t(k) * slot_size_, state_size_); }
  std::span<T> beside(int k) {
    return std::span<T>(states_).subspan(std::size_t(k) * slot_size_ + state_size_, field_size_);
  }
  std::span<T> cached(int slot) { return std::span<T>(cache_).subspan(std::size_t(slot) * field_size_, field_size_); }
  SegmentSchedule schedule_;
  std::size_t state_size_ = 0, field_size_ = 0, slot_size_ = 0;
  bool beside_ = false;
  std::vector<T> states_, cache_;
};

// Binomial checkpointing: Griewank's optimal reversal schedule. Positions 0 .. l stand for the states u^0 .. u^l;
// the schedule must hand out the fields at l, l-1, ..., 0 in this order, starting from the state at 0 (saved
// in one of the s snapshots). Its cost is counted in forward steps. Taking the next checkpoint m steps ahead
// splits the problem in two: the positions m .. l with the s - 1 snapshots left, then 0 .. m-1 again with s, so
//     cost(l, s) = min over m of  m + cost(l - m, s - 1) + cost(m - 1, s),   cost(0, s) = 0,
// and Griewank (1992) gives the minimum in closed form (binomial_forward_steps). The schedule is computed once
// as a list of actions; the adjoint's field(n) calls play it up to the next delivery.
enum class Op { advance, store, drop, restore, deliver };
struct Action {
  Op op;
  int from, to;  // advance: from -> to; store, restore, deliver: `from`
};

class BinomialSchedule {
 public:
  BinomialSchedule(int nt, int snapshots) {
    actions_.push_back({Op::store, 0, 0});
    live_ = 0;
    reverse(0, nt, snapshots);
  }
  const std::vector<Action>& actions() const { return actions_; }

 private:
  // The fields at base + l .. base in reverse, the state at `base` being the newest snapshot. Each checkpoint taken
  // ahead nests a reversal with one snapshot fewer, as deep as the snapshots: an explicit stack, not recursion (a
  // long run with tens of thousands of snapshots would overflow the thread's stack).
  void reverse(int base, int l, int s) {
    struct Frame {
      int base, l, s;
      int drop = -1;  // the snapshot to drop once the nested reversal is done
    };
    std::vector<Frame> stack{{base, l, s}};
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.drop >= 0) {
        actions_.push_back({Op::drop, f.drop, f.drop});
        f.drop = -1;
      }
      if (f.s == 1 || f.l == 0) {
        for (int k = f.l; k >= 0; --k) advance_and_deliver(f.base, f.base + k);
        stack.pop_back();
        continue;
      }
      const int m = binomial_split(f.l, f.s);
      if (m == f.l) {  // no checkpoint ahead: the field at the end, then the rest with the same snapshots
        advance_and_deliver(f.base, f.base + f.l);
        --f.l;
        continue;
      }
      go(f.base, f.base + m);
      actions_.push_back({Op::store, f.base + m, f.base + m});
      const Frame nested{f.base + m, f.l - m, f.s - 1};
      f.drop = f.base + m;
      f.l = m - 1;
      stack.push_back(nested);  // (f is not used after this)
    }
  }
  void go(int base, int to) {
    if (live_ != base) actions_.push_back({Op::restore, base, base});
    if (to > base) actions_.push_back({Op::advance, base, to});
    live_ = to;
  }
  // After a delivery the live state counts as unknown: the adjoint runs between two field() calls, and the
  // next field always starts from a snapshot.
  void advance_and_deliver(int base, int to) {
    go(base, to);
    actions_.push_back({Op::deliver, to, to});
    live_ = -1;
  }
  std::vector<Action> actions_;
  int live_ = -1;
};

template <class T>
class BinomialCheckpoints final : public WavefieldHistory<T> {
 public:
  explicit BinomialCheckpoints(int snapshots) : snapshots_(snapshots) {
    if (snapshots < 1) throw std::invalid_argument("binomial checkpoints: snapshots must be >= 1");
  }
  std::string name() const override {
    return fmt::format("binomial checkpointing with {} snapshots", used_snapshots_ ? used_snapshots_ : snapshots_);
  }
  void run_forward(ForwardStepper<T>& s, int nt) override {
    this->begin_count();
    // More than nt snapshots never help: with nt the schedule is one forward pass.
    const int used = std::max(1, std::min(snapshots_, nt));
    if (!schedule_ || nt != nt_ || used != used_snapshots_) schedule_ = std::make_unique<BinomialSchedule>(nt, used);
    nt_ = nt;
    used_snapshots_ = used;
    state_size_ = s.state_values();
    field_size_ = s.field_values();
    beside_ = s.field_beside_state();
    slot_size_ = state_size_ + (beside_ ? field_size_ : 0);  // (the field beside the state: ForwardStepper)
    states_.resize(slot_size_ * std::size_t(used));
    last_.resize(field_size_);
    depth_ = 0;
    next_ = 0;
    pending_ = fresh_ = -1;
    // The forward pass is the schedule's way to the first delivery, u^nt; that field is kept, so the adjoint
    // may use the stepper before it asks for it.
    play(s, nt, last_, false);
  }
  void field(ForwardStepper<T>& s, int n, std::span<T> out) override {
    if (n == nt_ && delivered_last_) {
      std::copy(last_.begin(), last_.end(), out.begin());
      delivered_last_ = false;
      return;
    }
    play(s, n, out, false);
  }
  const T* view(ForwardStepper<T>& s, int n, std::span<T> scratch) override {
    if (n == nt_ && delivered_last_) {
      delivered_last_ = false;
      return last_.data();
    }
    return play(s, n, scratch, true);
  }
  std::size_t bytes() const override { return (states_.size() + last_.size()) * sizeof(T); }

 private:
  // Plays the actions up to the delivery of u^n, which must be the next one, into out. A restore is done when the
  // state is next needed (`pending_`); while the live state is a snapshot's and has not stepped (`fresh_`), a field
  // that lies beside the state comes from that snapshot: a delivery straight after a restore (half of the schedule's)
  // then copies no state at all, and `in_place` hands out the snapshot's field itself (else it goes to out).
  const T* play(ForwardStepper<T>& s, int n, std::span<T> out, bool in_place) {
    const auto& actions = schedule_->actions();
    const auto restore = [&] {
      if (pending_ >= 0) s.restore_state(state(pending_));
      pending_ = -1;
    };
    const auto copy_field = [&](std::span<T> to) {
      if (beside_ && fresh_ >= 0) {
        const auto in = beside(fresh_);
        std::copy(in.begin(), in.end(), to.begin());
      } else {
        restore();
        s.copy_field(to);
      }
    };
    for (; next_ < actions.size(); ++next_) {
      const Action& a = actions[next_];
      switch (a.op) {
        case Op::advance:
          restore();
          if (a.to > a.from) fresh_ = -1;
          for (int m = a.from; m < a.to; ++m) this->step(s, m);
          break;
        case Op::store:
          restore();
          s.save_state(state(depth_));
          if (beside_) copy_field(beside(depth_));
          ++depth_;
          break;
        case Op::drop:
          --depth_;
          if (pending_ >= depth_) pending_ = -1;
          if (fresh_ >= depth_) fresh_ = -1;
          break;
        case Op::restore: pending_ = fresh_ = depth_ - 1; break;
        case Op::deliver:
          if (a.from != n)
            throw std::logic_error(fmt::format("binomial checkpoints: field {} asked for, {} is next", n, a.from));
          ++next_;
          delivered_last_ = n == nt_;
          if (in_place && beside_ && fresh_ >= 0) return beside(fresh_).data();
          copy_field(out);
          return out.data();
      }
    }
    throw std::logic_error(fmt::format("binomial checkpoints: field {} asked for after the last", n));
  }
  std::span<T> state(int k) { return std::span<T>(states_).subspan(std::size_t(k) * slot_size_, state_size_); }
  std::span<T> beside(int k) {
    return std::span<T>(states_).subspan(std::size_t(k) * slot_size_ + state_size_, field_size_);
  }

  int snapshots_, used_snapshots_ = 0, nt_ = -1, depth_ = 0, pending_ = -1, fresh_ = -1;
  std::size_t next_ = 0, state_size_ = 0, field_size_ = 0, slot_size_ = 0;
  bool delivered_last_ = false, beside_ = false;
  std::unique_ptr<BinomialSchedule> schedule_;
  std::vector<T> states_, last_;
};

// Every field to a scratch file, one pwrite of a whole field a step, read back with pread in reverse.
template <class T>
class DiskFields final : public WavefieldHistory<T> {
 public:
  explicit DiskFields(std::string directory)
      : directory_(directory.empty() ? std::filesystem::temp_directory_path().string() : std::move(directory)) {}
  ~DiskFields() override {
    if (fd_ >= 0) ::close(fd_);
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  std::string name() const override {
    return fmt::format("every step on disk ({})", path_.empty() ? directory_ : path_);
  }
  void run_forward(ForwardStepper<T>& s, int nt) override {
    this->begin_count();
    field_size_ = s.field_values();
    field_bytes_ = field_size_ * sizeof(T);
    open(double(field_bytes_) * (nt + 1.0));
    buffer_.resize(field_size_);
    for (int n = 0; n < nt; ++n) {
      this->copy_and_step(s, n, buffer_);
      write(n);
    }
    s.copy_field(buffer_);
    write(nt);
  }
  void field(ForwardStepper<T>&, int n, std::span<T> out) override {
    std::size_t done = 0;
    char* p = reinterpret_cast<char*>(out.data());
    while (done < field_bytes_) {
      const ssize_t r = ::pread(fd_, p + done, field_bytes_ - done, off_t(std::size_t(n) * field_bytes_ + done));
      if (r <= 0)
        throw Error(ExitCode::input_error, fmt::format("reading field {} back from the scratch file {}: {}", n, path_,
                                                       r == 0 ? "unexpected end of file" : std::strerror(errno)));
      done += std::size_t(r);
    }
  }
  std::size_t bytes() const override { return buffer_.size() * sizeof(T); }

 private:
  void open(double needed) {
    namespace fs = std::filesystem;
    if (fd_ < 0) {
      std::error_code ec;
      fs::create_directories(directory_, ec);
      static std::atomic<int> counter{0};
      char host[256] = "host";
      gethostname(host, sizeof host - 1);
      path_ = (fs::path(directory_) / fmt::format("specwave-wavefields-{}-{}-{}.bin", host, ::getpid(), counter++))
                  .string();
      fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd_ < 0) {
        const std::string why = std::strerror(errno);
        path_.clear();
        throw Error(ExitCode::output_error,
                    fmt::format("cannot create the scratch file for the forward wavefields in {}: {}; set "
                                "inversion.scratch_directory to a writable folder",
                                directory_, why));
      }
    }
    // Space for what the file does not hold yet (a later shot overwrites the same bytes).
    struct stat st {};
    const double held = ::fstat(fd_, &st) == 0 ? double(st.st_size) : 0.0;
    const double free = free_disk_bytes(directory_);
    if (needed - held > free) throw Error(ExitCode::resources, disk_space_message(directory_, needed, free));
  }
  void write(int n) {
    std::size_t done = 0;
    const char* p = reinterpret_cast<const char*>(buffer_.data());
    while (done < field_bytes_) {
      const ssize_t w = ::pwrite(fd_, p + done, field_bytes_ - done, off_t(std::size_t(n) * field_bytes_ + done));
      if (w < 0)
        throw Error(errno == ENOSPC ? ExitCode::resources : ExitCode::output_error,
                    fmt::format("writing field {} to the scratch file {}: {}; free space there or set "
                                "inversion.scratch_directory to a larger file system",
                                n, path_, std::strerror(errno)));
      done += std::size_t(w);
    }
  }
  std::string directory_, path_;
  int fd_ = -1;
  std::size_t field_size_ = 0, field_bytes_ = 0;
  std::vector<T> buffer_;
};

}  // namespace

template <class T>
std::unique_ptr<WavefieldHistory<T>> make_all_steps_history() {
  return std::make_unique<AllSteps<T>>();
}

template <class T>
std::unique_ptr<WavefieldHistory<T>> make_segment_checkpoint_history(int segment) {
  return std::make_unique<SegmentCheckpoints<T>>(segment);
}

template <class T>
std::unique_ptr<WavefieldHistory<T>> make_binomial_history(int snapshots) {
  return std::make_unique<BinomialCheckpoints<T>>(snapshots);
}

template <class T>
std::unique_ptr<WavefieldHistory<T>> make_disk_history(std::string directory) {
  return std::make_unique<DiskFields<T>>(std::move(directory));
}

long long binomial_forward_steps(int nt, int snapshots) {
  if (snapshots < 1) throw std::invalid_argument("binomial_forward_steps: snapshots must be >= 1");
  if (nt <= 0) return 0;
  // l = nt + 1 states to hand out; r = the smallest repetition number with beta(s, r) = C(s + r, s) >= l.
  const long long l = nt + 1LL, s = snapshots;
  long long r = 0, beta = 1;
  while (beta < l) {
    ++r;
    beta = beta * (s + r) / r;  // C(s + r, s) from C(s + r - 1, s): exact
  }
  // r l - C(s + r, r - 1), and C(s + r, r - 1) = C(s + r, s) r / (s + 1).
  return r * l - beta * r / (s + 1);
}

int binomial_split(int l, int snapshots) {
  if (snapshots < 2 || l < 1) throw std::invalid_argument("binomial_split: needs l >= 1 and snapshots >= 2");
  // f(m) is convex in m (cost is convex piecewise linear in l, its slope the repetition number r): the first m
  // where f stops falling is a minimiser.
  const auto f = [&](int m) {
    return m + binomial_forward_steps(l - m, snapshots - 1) + binomial_forward_steps(m - 1, snapshots);
  };
  int lo = 1, hi = l;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (f(mid + 1) >= f(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

HistoryChoice all_steps_choice(int nt, double field_bytes) {
  HistoryChoice c;
  c.storage = WavefieldStorage::memory;
  c.memory_bytes = (nt + 1.0) * field_bytes;
  c.nt = nt;
  return c;
}

HistoryChoice segment_checkpoint_choice(int nt, int segment, double field_bytes, double state_bytes) {
  HistoryChoice c;
  c.storage = WavefieldStorage::checkpoints;
  c.segment = segment;
  c.snapshots = nt > 0 ? (nt - 1) / segment + 1 : 0;
  c.memory_bytes = c.snapshots * state_bytes + (segment + 1.0) * field_bytes;
  c.recompute_factor = nt > 0 ? 2 : 1;  // every segment replayed once
  c.nt = nt;
  return c;
}

HistoryChoice binomial_choice(int nt, int snapshots, double field_bytes, double state_bytes) {
  HistoryChoice c;
  c.storage = WavefieldStorage::binomial;
  c.snapshots = std::max(1, std::min(snapshots, nt));  // as BinomialCheckpoints uses them
  c.memory_bytes = c.snapshots * state_bytes + field_bytes;
  c.recompute_factor = nt > 0 ? double(binomial_forward_steps(nt, c.snapshots)) / nt : 1;
  c.nt = nt;
  return c;
}

HistoryChoice boundary_choice(int nt, double memory_bytes) {
  HistoryChoice c;
  c.storage = WavefieldStorage::boundary;
  c.memory_bytes = memory_bytes;
  c.recompute_factor = nt > 1 ? double(nt + nt - 1) / nt : 1;  // the forward pass, then nt - 1 reverse steps
  c.nt = nt;
  return c;
}

HistoryChoice disk_choice(int nt, double field_bytes, std::string scratch_directory) {
  HistoryChoice c;
  c.storage = WavefieldStorage::disk;
  c.memory_bytes = field_bytes;
  c.disk_bytes = (nt + 1.0) * field_bytes;
  c.nt = nt;
  c.scratch_directory = std::move(scratch_directory);
  return c;
}

std::string describe(const HistoryChoice& c) {
  const std::string tail = fmt::format("recompute factor {:.2f} (nt {}){}", c.recompute_factor, c.nt,
                                       c.tier == HistoryTier::pinned_host ? ", in pinned host memory (CUDA)" : "");
  switch (c.storage) {
    case WavefieldStorage::checkpoints:
      return fmt::format("segment checkpoints every {} steps: {} snapshots, {}, {}", c.segment, c.snapshots,
                         gib(c.memory_bytes), tail);
    case WavefieldStorage::binomial:
      return fmt::format("binomial checkpointing: {} snapshots, {}, {}", c.snapshots, gib(c.memory_bytes), tail);
    case WavefieldStorage::boundary:
      return fmt::format("boundary saving: the absorbing layer's values every step and two fields, {}, {}",
                         gib(c.memory_bytes), tail);
    case WavefieldStorage::disk:
      return fmt::format(
          "every step on disk in {}: {} on disk, {} in memory, {}",
          c.scratch_directory.empty() ? std::filesystem::temp_directory_path().string() : c.scratch_directory,
          gib(c.disk_bytes), gib(c.memory_bytes), tail);
    default: return fmt::format("every step in memory: {} fields, {}, {}", c.nt + 1, gib(c.memory_bytes), tail);
  }
}

double free_disk_bytes(const std::string& directory) {
  namespace fs = std::filesystem;
  fs::path p = directory.empty() ? fs::temp_directory_path() : fs::path(directory);
  std::error_code ec;
  p = fs::absolute(p, ec);
  while (!p.empty() && !fs::exists(p, ec) && p != p.parent_path()) p = p.parent_path();
  const fs::space_info s = fs::space(p, ec);
  return ec ? -1.0 : double(s.available);
}

HistoryChoice choose_history(WavefieldStorage requested, const HistoryRequest& q) {
  const int nt = q.nt;
  const double budget = q.budget_bytes;
  const HistoryChoice all = all_steps_choice(nt, q.field_bytes);
  // Binomial checkpointing: as many snapshots as fit beside its one field (more than nt never help).
  const double fit = std::floor((budget - q.field_bytes) / q.state_bytes);
  const int snapshots = int(std::clamp(fit, 0.0, double(std::max(nt, 1))));
  const auto disk = [&] {
    HistoryChoice d = disk_choice(nt, q.field_bytes, q.scratch_directory);
    if (q.disk_free_bytes >= 0 && d.disk_bytes > q.disk_free_bytes)
      throw Error(ExitCode::resources, disk_space_message(d.scratch_directory, d.disk_bytes, q.disk_free_bytes));
    return d;
  };
  switch (requested) {
    case WavefieldStorage::auto_select:
      // The first that fits, in this order of cost.
      if (all.memory_bytes <= budget) return all;
      if (q.boundary_bytes > 0 && q.boundary_bytes <= budget) return boundary_choice(nt, q.boundary_bytes);
      if (snapshots >= 2) return binomial_choice(nt, snapshots, q.field_bytes, q.state_bytes);
      if (q.scratch_directory_set) return disk();
      throw Error(
          ExitCode::resources,
          fmt::format("the forward wavefields need {} in memory ({} fields), and binomial checkpointing at least "
                      "{} (2 snapshots), above the budget of {}; raise inversion.wavefield_memory_gib, set "
                      "inversion.scratch_directory to keep them on disk, or shorten time.duration",
                      gib(all.memory_bytes), nt + 1, gib(2 * q.state_bytes + q.field_bytes), gib(budget)));
    case WavefieldStorage::memory:
      if (all.memory_bytes > budget)
        throw Error(
            ExitCode::resources,
            fmt::format("inversion.wavefield_storage = \"memory\" needs {} for the {} forward wavefields, above the "
                        "budget of {}; use wavefield_storage = \"binomial\", \"disk\" or \"auto\", or raise "
                        "inversion.wavefield_memory_gib",
                        gib(all.memory_bytes), nt + 1, gib(budget)));
      return all;
    case WavefieldStorage::checkpoints: {
      // Checkpoints + one segment of fields: (nt / s) state + (s + 1) field, smallest near s = sqrt(nt state / field).
      // Any segment length costs one extra forward pass in all: take the smallest footprint.
      const int segment =
          std::clamp(int(std::lround(std::sqrt(nt * q.state_bytes / q.field_bytes))), 1, std::max(nt, 1));
      const HistoryChoice c = segment_checkpoint_choice(nt, segment, q.field_bytes, q.state_bytes);
      if (c.memory_bytes > budget)
        throw Error(ExitCode::resources,
                    fmt::format("the forward wavefields need at least {} with checkpoints (every {} steps), above the "
                                "budget of {}; use wavefield_storage = \"binomial\" or \"disk\", raise "
                                "inversion.wavefield_memory_gib or shorten time.duration",
                                gib(c.memory_bytes), segment, gib(budget)));
      return c;
    }
    case WavefieldStorage::binomial:
      if (snapshots < 1)
        throw Error(
            ExitCode::resources,
            fmt::format("binomial checkpointing needs at least {} (one snapshot of the state and one field), above "
                        "the budget of {}; raise inversion.wavefield_memory_gib or use wavefield_storage = \"disk\"",
                        gib(q.state_bytes + q.field_bytes), gib(budget)));
      return binomial_choice(nt, snapshots, q.field_bytes, q.state_bytes);
    case WavefieldStorage::disk: return disk();
    case WavefieldStorage::boundary:
      if (!(q.boundary_bytes > 0))
        throw Error(
            ExitCode::invalid_case,
            "inversion.wavefield_storage = \"boundary\" needs a scheme that runs backwards (FDTD on the CPU); use "
            "\"auto\", \"memory\", \"binomial\", \"checkpoints\" or \"disk\"");
      if (q.boundary_bytes > budget)
        throw Error(
            ExitCode::resources,
            fmt::format("inversion.wavefield_storage = \"boundary\" needs {} for the absorbing layer's values of {} "
                        "steps and two fields, above the budget of {}; use wavefield_storage = \"binomial\" or "
                        "\"auto\", or raise inversion.wavefield_memory_gib",
                        gib(q.boundary_bytes), nt - 1, gib(budget)));
      return boundary_choice(nt, q.boundary_bytes);
  }
  throw std::logic_error("choose_history: unknown storage");
}

const char* to_string(HistoryTier tier) { return tier == HistoryTier::device ? "device memory" : "pinned host memory"; }

HistoryChoice choose_device_history(WavefieldStorage requested, int nt, double field_bytes, double state_bytes,
                                    double device_budget, double host_budget) {
  std::vector<WavefieldStorage> order = {requested};
  if (requested == WavefieldStorage::auto_select) order = {WavefieldStorage::memory, WavefieldStorage::checkpoints};
  if (requested != WavefieldStorage::auto_select && requested != WavefieldStorage::memory &&
      requested != WavefieldStorage::checkpoints)
    throw Error(
        ExitCode::invalid_case,
        fmt::format("inversion.wavefield_storage = \"{}\" is not available on the CUDA backend, which keeps the "
                    "history in device or pinned host memory; use \"auto\", \"memory\" or \"checkpoints\", or "
                    "run.backend = \"cpu\"",
                    to_string(requested)));
  for (const auto& [tier, budget] :
       {std::pair{HistoryTier::device, device_budget}, std::pair{HistoryTier::pinned_host, host_budget}})
    for (const WavefieldStorage storage : order) {
      try {
        HistoryRequest q;
        q.nt = nt, q.field_bytes = field_bytes, q.state_bytes = state_bytes, q.budget_bytes = budget;
        HistoryChoice choice = choose_history(storage, q);
        choice.tier = tier;
        return choice;
      } catch (const Error& e) {
        if (e.code() != ExitCode::resources) throw;
      }
    }
  HistoryRequest unlimited;
  unlimited.nt = nt, unlimited.field_bytes = field_bytes, unlimited.state_bytes = state_bytes,
  unlimited.budget_bytes = 1e300;
  const double least =
      std::min(choose_history(WavefieldStorage::checkpoints, unlimited).memory_bytes, (nt + 1.0) * field_bytes);
  throw Error(
      ExitCode::resources,
      fmt::format("the forward wavefields need at least {} on the GPU, above both the device budget of {} "
                  "(run.device_memory_fraction of the free GPU memory, less the propagator's own) and the pinned "
                  "host budget of {}; raise run.device_memory_fraction or inversion.wavefield_memory_gib, use "
                  "precision = \"fp32\", or shorten time.duration",
                  gib(least), gib(device_budget), gib(host_budget)));
}

template <class T>
std::unique_ptr<WavefieldHistory<T>> make_history(const HistoryChoice& choice) {
  switch (choice.storage) {
    case WavefieldStorage::checkpoints: return make_segment_checkpoint_history<T>(choice.segment);
    case WavefieldStorage::binomial: return make_binomial_history<T>(choice.snapshots);
    case WavefieldStorage::disk: return make_disk_history<T>(choice.scratch_directory);
    case WavefieldStorage::boundary: return make_boundary_history<T>();
    default: return make_all_steps_history<T>();
  }
}

#define SPECWAVE_HISTORY(T)                                                              \
  template std::unique_ptr<WavefieldHistory<T>> make_all_steps_history<T>();             \
  template std::unique_ptr<WavefieldHistory<T>> make_segment_checkpoint_history<T>(int); \
  template std::unique_ptr<WavefieldHistory<T>> make_binomial_history<T>(int);           \
  template std::unique_ptr<WavefieldHistory<T>> make_disk_history<T>(std::string);       \
  template std::unique_ptr<WavefieldHistory<T>> make_history<T>(const HistoryChoice&);
SPECWAVE_HISTORY(float)
SPECWAVE_HISTORY(double)
#undef SPECWAVE_HISTORY

}  // namespace specwave
