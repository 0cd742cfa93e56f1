#pragma once
// Communicator: the suite's view of the job's ranks. With MPI built in and the process
// started by mpirun it is MPI_COMM_WORLD (MPI initialised on first use and finalised at
// exit); otherwise a world of one rank.

#include <cstdint>
#include <vector>

namespace strait::calibration::detail {

class Communicator {
 public:
  /// The process's world (created once).
  static Communicator& world();

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Rank among the processes on this host (GPU selection).
  int local_rank() const { return local_rank_; }
  void barrier();
  /// Element-wise maximum of `values` over all ranks, on every rank.
  void max_all(std::vector<double>& values);
  /// Concatenation of every rank's `values` in rank order, on every rank.
  std::vector<double> gather_all(const std::vector<double>& values);
  /// Rank 0's `bytes` on every rank (the NCCL unique id).
  void broadcast(void* bytes, std::int64_t size);
  /// Address of the MPI_Comm (an `MPI_Comm*`; nullptr when not under MPI), for the MPI
  /// collectives backend.
  void* mpi_comm() const { return mpi_comm_; }

 private:
  Communicator();
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  void* mpi_comm_ = nullptr;
};

}  // namespace strait::calibration::detail
