// Collectives through MPI (the CPU backend's "NCCL"): MPI_Allreduce, MPI_Allgather,
// MPI_Reduce_scatter_block, MPI_Alltoall, MPI_Alltoallv and a blocking send/recv from
// rank 0 to rank 1, on f32 data. Sizes follow nccl-tests (see CollectiveCase); every
// per-rank block holds at least one element, so tiny sizes are rounded up to that.
// Each sample starts with the send and receive buffers evicted from the caches: a step
// reaches its collectives with buffers it last touched many kernels ago. Timed with warm
// buffers, the fitted all-to-alls were 2-3x faster than inside strait exec's steps
// (dlrm-tiny-cpu's output_dist: 79 us simulated, 251 us measured); evicted, 2-3x slower
// than warm at 64 KiB - 4 MiB, and the exposed all-to-all time simulated for dlrm-tiny-cpu
// went from 20% to 47% of the measured (bench/README.md, "The CPU trust loop").

#include <mpi.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "calibration/detail/backends.hpp"
#include "calibration/detail/cache_flush.hpp"
#include "calibration/detail/communicator.hpp"
#include "sim/core/error.hpp"

namespace strait::calibration::detail {
namespace {

using sim::network::CollectiveOp;

// Value every rank `r` puts at element `i` of its send buffer (small integers: sums of
// them are exact in f32).
float input_value(int r, std::size_t i) { return static_cast<float>(r + 1 + (i % 7)); }

class MpiCollectives final : public CollectiveBackend {
 public:
  explicit MpiCollectives(Communicator& comm)
      : comm_(comm), mpi_(*static_cast<MPI_Comm*>(comm.mpi_comm())) {}

  std::string device() const override {
    return fmt::format("{} MPI ranks on one host", comm_.size());
  }

  std::map<std::string, std::string> versions() const override {
    char text[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(text, &length);
    std::string version(text, static_cast<std::size_t>(length));
    version = version.substr(0, version.find_first_of(",\n"));
    return {{"mpi", version}};
  }

  std::vector<double> time(const CollectiveCase& c, int warmup, int repetitions,
                           bool* check_ok) override {
    prepare(c);
    for (int i = 0; i < warmup; ++i) run_once(c);
    std::vector<double> samples;
    for (int i = 0; i < repetitions; ++i) {
      evict(send_.data(), send_.size() * sizeof(float));
      evict(recv_.data(), recv_.size() * sizeof(float));
      MPI_Barrier(mpi_);
      const auto start = std::chrono::steady_clock::now();
      run_once(c);
      samples.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
              .count());
    }
    comm_.max_all(samples);
    int ok = check(c) ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, mpi_);
    *check_ok = ok == 1;
    return samples;
  }

 private:
  // Element counts per peer block for `c` on n ranks.
  void prepare(const CollectiveCase& c) {
    const int n = comm_.size(), me = comm_.rank();
    const auto elems = static_cast<std::size_t>(std::max<std::int64_t>(c.bytes / 4, 1));
    const auto un = static_cast<std::size_t>(n);
    std::size_t send = elems, recv = elems;
    send_counts_.assign(un, 0);
    recv_counts_.assign(un, 0);
    switch (c.op) {
      case CollectiveOp::kAllReduce:
      case CollectiveOp::kSendRecv:
        break;
      case CollectiveOp::kAllGather:  // bytes = output
        block_ = std::max<std::size_t>(elems / un, 1);
        send = block_;
        recv = block_ * un;
        break;
      case CollectiveOp::kReduceScatter:  // bytes = input
      case CollectiveOp::kAllToAll:       // bytes = per-rank send buffer
        block_ = std::max<std::size_t>(elems / un, 1);
        send = recv = block_ * un;
        break;
      case CollectiveOp::kAllToAllV: {
        // Symmetric sizes (what r sends to j equals what j sends to r): receive counts are
        // known locally.
        matrix_ = all_to_allv_matrix(n, c.bytes);
        send = recv = 0;
        for (std::size_t j = 0; j < un; ++j) {
          send_counts_[j] = static_cast<int>(matrix_[static_cast<std::size_t>(me) * un + j] / 4);
          recv_counts_[j] = static_cast<int>(matrix_[j * un + static_cast<std::size_t>(me)] / 4);
          send += static_cast<std::size_t>(send_counts_[j]);
          recv += static_cast<std::size_t>(recv_counts_[j]);
        }
        break;
      }
      default:
        throw Error(fmt::format("calibrate: the MPI backend does not run {}",
                                sim::network::to_string(c.op)));
    }
    send_.resize(send);
    recv_.assign(recv, 0.0f);
    for (std::size_t i = 0; i < send; ++i) send_[i] = input_value(me, i);
    send_displs_.assign(un, 0);
    recv_displs_.assign(un, 0);
    for (std::size_t j = 1; j < un; ++j) {
      send_displs_[j] = send_displs_[j - 1] + send_counts_[j - 1];
      recv_displs_[j] = recv_displs_[j - 1] + recv_counts_[j - 1];
    }
  }

  void run_once(const CollectiveCase& c) {
    const int count = static_cast<int>(send_.size());
    switch (c.op) {
      case CollectiveOp::kAllReduce:
        MPI_Allreduce(send_.data(), recv_.data(), count, MPI_FLOAT, MPI_SUM, mpi_);
        break;
      case CollectiveOp::kAllGather:
        MPI_Allgather(send_.data(), count, MPI_FLOAT, recv_.data(), count, MPI_FLOAT, mpi_);
        break;
      case CollectiveOp::kReduceScatter:
        MPI_Reduce_scatter_block(send_.data(), recv_.data(), static_cast<int>(block_), MPI_FLOAT,
                                 MPI_SUM, mpi_);
        break;
      case CollectiveOp::kAllToAll:
        MPI_Alltoall(send_.data(), static_cast<int>(block_), MPI_FLOAT, recv_.data(),
                     static_cast<int>(block_), MPI_FLOAT, mpi_);
        break;
      case CollectiveOp::kAllToAllV:
        MPI_Alltoallv(send_.data(), send_counts_.data(), send_displs_.data(), MPI_FLOAT,
                      recv_.data(), recv_counts_.data(), recv_displs_.data(), MPI_FLOAT, mpi_);
        break;
      case CollectiveOp::kSendRecv:
        if (comm_.rank() == 0) MPI_Send(send_.data(), count, MPI_FLOAT, 1, 0, mpi_);
        if (comm_.rank() == 1) {
          MPI_Recv(recv_.data(), count, MPI_FLOAT, 0, 0, mpi_, MPI_STATUS_IGNORE);
        }
        break;
      default:
        break;
    }
  }

  // Whether this rank's output is what the operation must give.
  bool check(const CollectiveCase& c) const {
    const int n = comm_.size(), me = comm_.rank();
    const auto expect_at = [&](std::size_t i) -> float {
      switch (c.op) {
        case CollectiveOp::kAllReduce:
        case CollectiveOp::kReduceScatter: {
          const std::size_t src =
              c.op == CollectiveOp::kAllReduce ? i : static_cast<std::size_t>(me) * block_ + i;
          float sum = 0;
          for (int r = 0; r < n; ++r) sum += input_value(r, src);
          return sum;
        }
        case CollectiveOp::kAllGather:
          return input_value(static_cast<int>(i / block_), i % block_);
        case CollectiveOp::kAllToAll: {
          const std::size_t from = i / block_;
          return input_value(static_cast<int>(from),
                             static_cast<std::size_t>(me) * block_ + i % block_);
        }
        case CollectiveOp::kAllToAllV: {
          std::size_t from = 0;
          while (from + 1 < recv_displs_.size() &&
                 i >= static_cast<std::size_t>(recv_displs_[from + 1])) {
            ++from;
          }
          // Peer `from` sent its block for this rank, which starts at its own displacement
          // for `me`: the sum of its sizes for the ranks below `me`.
          std::size_t offset = 0;
          for (int j = 0; j < me; ++j) {
            offset += static_cast<std::size_t>(
                matrix_[from * static_cast<std::size_t>(n) + static_cast<std::size_t>(j)] / 4);
          }
          return input_value(static_cast<int>(from),
                             offset + (i - static_cast<std::size_t>(recv_displs_[from])));
        }
        case CollectiveOp::kSendRecv:
          return input_value(0, i);
        default:
          return 0;
      }
    };
    if (c.op == CollectiveOp::kSendRecv && me != 1) return true;
    const std::size_t count = c.op == CollectiveOp::kReduceScatter ? block_ : recv_.size();
    for (std::size_t i = 0; i < count; ++i) {
      if (recv_[i] != expect_at(i)) return false;
    }
    return true;
  }

  Communicator& comm_;
  MPI_Comm mpi_;
  std::vector<float> send_, recv_;
  std::vector<int> send_counts_, recv_counts_, send_displs_, recv_displs_;
  std::size_t block_ = 1;
  std::vector<std::int64_t> matrix_;  // all-to-all-v bytes [i * n + j]
};

}  // namespace

std::unique_ptr<CollectiveBackend> make_mpi_collectives(Communicator& comm) {
  if (comm.mpi_comm() == nullptr || comm.size() < 2) {
    throw Error(
        "strait calibrate: collectives need at least 2 ranks started by mpirun "
        "(e.g. mpirun -np 2 strait calibrate run --backend cpu ...)");
  }
  return std::make_unique<MpiCollectives>(comm);
}

}  // namespace strait::calibration::detail
