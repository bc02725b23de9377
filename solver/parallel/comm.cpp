#include "solver/parallel/comm.hpp"

#include <fmt/format.h>
#include <chrono>
#include <thread>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(SPECWAVE_HAVE_MPI)
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's extensions: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif
#endif

namespace specwave {
namespace {

void check_layout(std::size_t span_size, std::span<const int> counts, std::span<const int> offsets, int ranks,
                  const char* what) {
  if (int(counts.size()) != ranks || int(offsets.size()) != ranks)
    throw std::invalid_argument(fmt::format("alltoallv: {} counts/offsets have {}/{} entries for {} ranks", what,
                                            counts.size(), offsets.size(), ranks));
  for (int q = 0; q < ranks; ++q)
    if (counts[q] < 0 || offsets[q] < 0 || std::size_t(offsets[q]) + std::size_t(counts[q]) > span_size)
      throw std::invalid_argument(
          fmt::format("alltoallv: {} block of rank {} ([{}, +{})) outside the {} elements given", what, q, offsets[q],
                      counts[q], span_size));
}

void print_line(std::string_view line) {
  std::fflush(stdout);
  std::fprintf(stderr, "%.*s\n", int(line.size()), line.data());
  std::fflush(stderr);
}

#if defined(SPECWAVE_HAVE_MPI)
bool mpi_running() {
  int initialised = 0, finalised = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalised);
  return initialised && !finalised;
}

// MPI_Comm is a pointer in Open MPI and an int in MPICH: store it as an integer either way.
// (Templates, so that the branch not taken is not compiled.)
template <class Handle = MPI_Comm>
Handle to_mpi(std::intptr_t h) {
  if constexpr (std::is_pointer_v<Handle>)
    return reinterpret_cast<Handle>(h);
  else
    return static_cast<Handle>(h);
}
template <class Handle = MPI_Comm>
std::intptr_t from_mpi(Handle c) {
  if constexpr (std::is_pointer_v<Handle>)
    return reinterpret_cast<std::intptr_t>(c);
  else
    return static_cast<std::intptr_t>(c);
}

template <class T>
MPI_Datatype datatype() {
  if constexpr (std::is_same_v<T, int>)
    return MPI_INT;
  else if constexpr (std::is_same_v<T, long long>)
    return MPI_LONG_LONG;
  else if constexpr (std::is_same_v<T, float>)
    return MPI_FLOAT;
  else if constexpr (std::is_same_v<T, double>)
    return MPI_DOUBLE;
  else if constexpr (std::is_same_v<T, std::complex<float>>)
    return MPI_C_FLOAT_COMPLEX;
  else
    return MPI_C_DOUBLE_COMPLEX;
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return MPI_SUM;
    case ReduceOp::min: return MPI_MIN;
    case ReduceOp::max: return MPI_MAX;
  }
  return MPI_SUM;
}

// MPI errors return codes (MPI_ERRORS_RETURN is set on every communicator used here) and become exceptions.
void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw std::runtime_error(fmt::format("{} failed: {}", call, std::string_view(text, len)));
}
#endif

}  // namespace

bool mpi_launched() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

bool mpi_compiled() {
#if defined(SPECWAVE_HAVE_MPI)
  return true;
#else
  return false;
#endif
}

bool mpi_accepts_device_buffers() {
  if (const char* v = std::getenv("SPECWAVE_CUDA_AWARE_MPI")) return std::string(v) == "1";
#if defined(SPECWAVE_HAVE_MPI) && defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

MpiSession::MpiSession([[maybe_unused]] int& argc, [[maybe_unused]] char**& argv, [[maybe_unused]] bool start) {
#if defined(SPECWAVE_HAVE_MPI)
  if (!start) return;
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised) return;
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    throw std::runtime_error("MPI_Init_thread failed");
  owns_ = true;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
#endif
}

MpiSession::~MpiSession() {
#if defined(SPECWAVE_HAVE_MPI)
  if (owns_ && mpi_running()) MPI_Finalize();
#endif
}

Comm::Comm(std::intptr_t handle, bool owned) : handle_(handle), owned_(owned), serial_(false) {
#if defined(SPECWAVE_HAVE_MPI)
  MPI_Comm_rank(to_mpi(handle_), &rank_);
  MPI_Comm_size(to_mpi(handle_), &size_);
#endif
}

Comm Comm::world() {
#if defined(SPECWAVE_HAVE_MPI)
  if (mpi_running()) return Comm(from_mpi(MPI_COMM_WORLD), false);
#endif
  return Comm();
}

Comm::Comm(Comm&& other) noexcept
    : handle_(other.handle_), owned_(other.owned_), serial_(other.serial_), rank_(other.rank_), size_(other.size_) {
  other.owned_ = false;
}

Comm& Comm::operator=(Comm&& other) noexcept {
  Comm old(std::move(other));  // frees what this held when it goes out of scope
  std::swap(handle_, old.handle_);
  std::swap(owned_, old.owned_);
  std::swap(serial_, old.serial_);
  std::swap(rank_, old.rank_);
  std::swap(size_, old.size_);
  return *this;
}

Comm::~Comm() {
#if defined(SPECWAVE_HAVE_MPI)
  if (owned_ && mpi_running()) {
    MPI_Comm c = to_mpi(handle_);
    MPI_Comm_free(&c);
  }
#endif
  owned_ = false;
}

void Comm::barrier() const {
  if (serial_) return;
#if defined(SPECWAVE_HAVE_MPI)
  check(MPI_Barrier(to_mpi(handle_)), "MPI_Barrier");
#endif
}

Comm Comm::split([[maybe_unused]] int color, [[maybe_unused]] int key) const {
  if (serial_) return Comm();
#if defined(SPECWAVE_HAVE_MPI)
  MPI_Comm c = MPI_COMM_NULL;
  check(MPI_Comm_split(to_mpi(handle_), color, key, &c), "MPI_Comm_split");
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  return Comm(from_mpi(c), true);
#else
  return Comm();
#endif
}

Comm Comm::split_node() const {
  if (serial_) return Comm();
#if defined(SPECWAVE_HAVE_MPI)
  MPI_Comm c = MPI_COMM_NULL;
  check(MPI_Comm_split_type(to_mpi(handle_), MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &c), "MPI_Comm_split_type");
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  return Comm(from_mpi(c), true);
#else
  return Comm();
#endif
}

template <CommValue T>
T Comm::allreduce(T value, ReduceOp op) const {
  allreduce_in_place(std::span<T>(&value, 1), op);
  return value;
}

template <CommValue T>
void Comm::allreduce_in_place([[maybe_unused]] std::span<T> values, [[maybe_unused]] ReduceOp op) const {
  if (serial_) return;
#if defined(SPECWAVE_HAVE_MPI)
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
    if (op != ReduceOp::sum) throw std::invalid_argument("allreduce: complex values have no min or max");
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), int(values.size()), datatype<T>(), mpi_op(op), to_mpi(handle_)),
        "MPI_Allreduce");
#endif
}

template <CommValue T>
void Comm::alltoallv(std::span<const T> send, std::span<const int> send_counts, std::span<const int> send_offsets,
                     std::span<T> recv, std::span<const int> recv_counts, std::span<const int> recv_offsets) const {
  check_layout(send.size(), send_counts, send_offsets, size_, "send");
  check_layout(recv.size(), recv_counts, recv_offsets, size_, "receive");
  if (serial_) {
    if (send_counts[0] != recv_counts[0])
      throw std::invalid_argument(fmt::format("alltoallv: one rank sends {} elements to itself but expects {}",
                                              send_counts[0], recv_counts[0]));
    std::copy_n(send.data() + send_offsets[0], send_counts[0], recv.data() + recv_offsets[0]);
    return;
  }
#if defined(SPECWAVE_HAVE_MPI)
  check(MPI_Alltoallv(send.data(), send_counts.data(), send_offsets.data(), datatype<T>(), recv.data(),
                      recv_counts.data(), recv_offsets.data(), datatype<T>(), to_mpi(handle_)),
        "MPI_Alltoallv");
#endif
}

template <CommValue T>
void Comm::broadcast([[maybe_unused]] std::span<T> values, [[maybe_unused]] int root) const {
  if (serial_) return;
#if defined(SPECWAVE_HAVE_MPI)
  check(MPI_Bcast(values.data(), int(values.size()), datatype<T>(), root, to_mpi(handle_)), "MPI_Bcast");
#endif
}

struct Exchange::Impl {
  std::intptr_t comm = 0;
  bool serial = true;
#if defined(SPECWAVE_HAVE_MPI)
  std::vector<MPI_Request> requests;
#endif
  ~Impl() {
#if defined(SPECWAVE_HAVE_MPI)
    if (mpi_running())
      for (auto& r : requests)
        if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
#endif
  }
};

Exchange::Exchange(std::intptr_t comm, bool serial) : impl_(std::make_unique<Impl>()) {
  impl_->comm = comm;
  impl_->serial = serial;
}
Exchange::~Exchange() = default;
Exchange::Exchange(Exchange&&) noexcept = default;
Exchange& Exchange::operator=(Exchange&&) noexcept = default;

template <CommValue T>
void Exchange::add_send([[maybe_unused]] std::span<const T> buffer, [[maybe_unused]] int peer,
                        [[maybe_unused]] int tag) {
  if (impl_->serial) throw std::logic_error("Exchange::add_send on a single-rank communicator");
#if defined(SPECWAVE_HAVE_MPI)
  MPI_Request r = MPI_REQUEST_NULL;
  check(MPI_Send_init(buffer.data(), int(buffer.size()), datatype<T>(), peer, tag, to_mpi(impl_->comm), &r),
        "MPI_Send_init");
  impl_->requests.push_back(r);
#endif
}

template <CommValue T>
void Exchange::add_receive([[maybe_unused]] std::span<T> buffer, [[maybe_unused]] int peer, [[maybe_unused]] int tag) {
  if (impl_->serial) throw std::logic_error("Exchange::add_receive on a single-rank communicator");
#if defined(SPECWAVE_HAVE_MPI)
  MPI_Request r = MPI_REQUEST_NULL;
  check(MPI_Recv_init(buffer.data(), int(buffer.size()), datatype<T>(), peer, tag, to_mpi(impl_->comm), &r),
        "MPI_Recv_init");
  impl_->requests.push_back(r);
#endif
}

void Exchange::start() {
#if defined(SPECWAVE_HAVE_MPI)
  if (!impl_->requests.empty())
    check(MPI_Startall(int(impl_->requests.size()), impl_->requests.data()), "MPI_Startall");
#endif
}

void Exchange::wait() {
#if defined(SPECWAVE_HAVE_MPI)
  if (!impl_->requests.empty())
    check(MPI_Waitall(int(impl_->requests.size()), impl_->requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
#endif
}

std::size_t Exchange::messages() const {
#if defined(SPECWAVE_HAVE_MPI)
  return impl_->requests.size();
#else
  return 0;
#endif
}

Exchange Comm::exchange() const { return Exchange(handle_, serial_); }

void Comm::abort(std::string_view line, int exit_code) const {
  // The rank in the message is the world rank: that is what mpirun's own report names.
  const Comm w = world();
  if (w.size() > 1) {
    // One error line, not one per rank: an error that every rank meets at once (a collective write to a full
    // disk, an input all ranks read) is printed by rank 0, whose MPI_Abort ends the others before their delay is
    // over; an error of another rank alone is printed by it after the delay. 2 s was too short on a loaded machine
    // (mpirun took longer to end the other ranks, which then printed too: full_disk_np2 in a clean clone).
    if (w.rank() != 0) std::this_thread::sleep_for(std::chrono::seconds(10));
    print_line(fmt::format("[rank {} of {}] {}", w.rank(), w.size(), line));
  } else {
    print_line(line);
  }
#if defined(SPECWAVE_HAVE_MPI)
  if (mpi_running()) MPI_Abort(MPI_COMM_WORLD, exit_code);
#endif
  std::exit(exit_code);
}

int fatal_error(std::string_view line, int exit_code) {
  const Comm w = Comm::world();
  if (w.size() > 1) w.abort(line, exit_code);
  print_line(line);
  return exit_code;
}

#define SPECWAVE_COMM_INSTANTIATE(T)                                                                             \
  template T Comm::allreduce<T>(T, ReduceOp) const;                                                              \
  template void Comm::allreduce_in_place<T>(std::span<T>, ReduceOp) const;                                       \
  template void Comm::alltoallv<T>(std::span<const T>, std::span<const int>, std::span<const int>, std::span<T>, \
                                   std::span<const int>, std::span<const int>) const;                            \
  template void Comm::broadcast<T>(std::span<T>, int) const;                                                     \
  template void Exchange::add_send<T>(std::span<const T>, int, int);                                             \
  template void Exchange::add_receive<T>(std::span<T>, int, int);
SPECWAVE_COMM_INSTANTIATE(int)
SPECWAVE_COMM_INSTANTIATE(long long)
SPECWAVE_COMM_INSTANTIATE(float)
SPECWAVE_COMM_INSTANTIATE(double)
SPECWAVE_COMM_INSTANTIATE(std::complex<float>)
SPECWAVE_COMM_INSTANTIATE(std::complex<double>)
#undef SPECWAVE_COMM_INSTANTIATE

}  // namespace specwave
