#pragma once
// MPI behind one small wrapper: the engine's MPI calls go through it (besides io/hdf5.cpp's MPI-IO file
// access and what `specwave info` and the MPI FFT benchmark ask the library). The same interface
// compiles without MPI (SPECWAVE_HAVE_MPI undefined) to a single rank, and a build with MPI run without
// MPI_Init (a test program, a library user) also sees one rank, so callers never need #ifdef.
//
//   int main(int argc, char** argv) {
//     specwave::MpiSession mpi(argc, argv);        // MPI_Init_thread / MPI_Finalize (no mpirun needed)
//     try { ... } catch (const std::exception& e) { return specwave::fatal_error(std::string("prog: error: ") +
//     e.what(), 1); }
//   }
#include <complex>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace specwave {

// Element types the typed collectives accept (explicitly instantiated in comm.cpp).
template <class T>
concept CommValue = std::is_same_v<T, int> || std::is_same_v<T, long long> || std::is_same_v<T, float> ||
    std::is_same_v<T, double> || std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

enum class ReduceOp { sum, min, max };

// True when this build has MPI (then the Comm calls are MPI calls once MPI is initialised).
bool mpi_compiled();

// True when MPI can send from and receive into GPU memory (a CUDA-aware Open MPI, asked at run time through
// MPIX_Query_cuda_support); the environment variable SPECWAVE_CUDA_AWARE_MPI=0 or 1 overrides the answer.
// When false, GPU halo exchanges stage through pinned host buffers.
bool mpi_accepts_device_buffers();

// Whether an MPI launcher (mpirun, mpiexec, srun) started this process: its environment variables are set.
bool mpi_launched();

// RAII: initialises MPI (MPI_THREAD_FUNNELED: OpenMP threads, MPI calls from the main thread only) unless it
// is already, and finalises it on destruction if it initialised it. Without mpirun Open MPI starts as a
// singleton (one rank). A no-op without MPI. Make one, first thing in main, and let every Comm die before it.
// With `start` false it initialises nothing and Comm::world() is one serial rank.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv, bool start = true);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

 private:
  bool owns_ = false;
};

class Comm;

// Persistent point-to-point messages (MPI_Send_init / MPI_Recv_init) on buffers fixed for the exchange's life,
// started together and completed together every step: the halo exchange of a domain-decomposed propagator.
// Made by Comm::exchange(); the buffers must outlive it. Without MPI (or one rank) it holds no messages, and
// start()/wait() do nothing.
class Exchange {
 public:
  ~Exchange();
  Exchange(Exchange&&) noexcept;
  Exchange& operator=(Exchange&&) noexcept;
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  template <CommValue T>
  void add_send(std::span<const T> buffer, int peer, int tag);
  template <CommValue T>
  void add_receive(std::span<T> buffer, int peer, int tag);
  void start();  // MPI_Startall: every message of the exchange
  void wait();   // MPI_Waitall
  std::size_t messages() const;

 private:
  friend class Comm;
  struct Impl;
  explicit Exchange(std::intptr_t comm, bool serial);
  std::unique_ptr<Impl> impl_;
};

// A communicator: rank, size and the few collectives specwave uses. Move-only; a Comm made by split() owns its
// MPI communicator and frees it on destruction. All members but rank(), size() and abort() are collective.
class Comm {
 public:
  // MPI_COMM_WORLD, or a single rank when MPI is not compiled in or not initialised.
  static Comm world();
  // One rank that makes no MPI calls (a serial run's "domain", whatever MPI's state).
  static Comm self() { return Comm(); }

  Comm(Comm&& other) noexcept;
  Comm& operator=(Comm&& other) noexcept;
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  ~Comm();

  int rank() const { return rank_; }
  int size() const { return size_; }
  void barrier() const;

  // An empty persistent exchange on this communicator (peers are ranks of this communicator).
  Exchange exchange() const;

  // MPI_Bcast of `values` from `root`.
  template <CommValue T>
  void broadcast(std::span<T> values, int root) const;

  // The MPI_Comm as an integer (for parallel HDF5, io/hdf5.cpp); 0 for a serial communicator.
  std::intptr_t native_handle() const { return serial_ ? 0 : handle_; }
  bool serial() const { return serial_; }

  // The ranks of this communicator that share this node's memory (MPI_Comm_split_type SHARED): the node-local
  // rank picks the GPU.
  Comm split_node() const;

  // MPI_Comm_split: ranks with the same colour form a new communicator, ordered by key (ties: by rank here).
  Comm split(int color, int key) const;

  template <CommValue T>
  T allreduce(T value, ReduceOp op) const;
  template <CommValue T>
  void allreduce_in_place(std::span<T> values, ReduceOp op) const;

  // MPI_Alltoallv: rank r sends send[send_offsets[q] .. + send_counts[q]) to each rank q, which receives it at
  // recv[recv_offsets[r] .. + recv_counts[r]). Counts and offsets are in elements, one per rank; spans too
  // short for them throw std::invalid_argument.
  template <CommValue T>
  void alltoallv(std::span<const T> send, std::span<const int> send_counts, std::span<const int> send_offsets,
                 std::span<T> recv, std::span<const int> recv_counts, std::span<const int> recv_offsets) const;

  // Prints `line` on stderr, prefixed with "[rank r of n] " when several ranks run, and ends every rank of
  // MPI_COMM_WORLD with exit code `exit_code` (MPI_Abort); without MPI running, std::exit(exit_code).
  [[noreturn]] void abort(std::string_view line, int exit_code) const;

 private:
  Comm() = default;  // one rank, no MPI
  Comm(std::intptr_t handle, bool owned);
  std::intptr_t handle_ = 0;  // the MPI_Comm, stored as an integer so that this header needs no <mpi.h>
  bool owned_ = false;        // MPI_Comm_free on destruction
  bool serial_ = true;        // one rank, no MPI calls
  int rank_ = 0;
  int size_ = 1;
};

// For main's catch blocks. With several ranks: Comm::world().abort(line, exit_code), since the other ranks may
// wait in a collective that will never complete. With one rank: prints `line` on stderr and returns exit_code,
// for main to return (MpiSession then finalises normally).
int fatal_error(std::string_view line, int exit_code);

}  // namespace specwave
