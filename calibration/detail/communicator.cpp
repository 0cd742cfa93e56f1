#include "calibration/detail/communicator.hpp"

#include <cstdlib>
#include <string>

#include "sim/core/mpi_launch.hpp"

#ifdef STRAIT_HAVE_MPI
#include <mpi.h>
#endif

namespace strait::calibration::detail {
namespace {

#ifdef STRAIT_HAVE_MPI
MPI_Comm g_world = MPI_COMM_NULL;

// Finalizes MPI when the process exits normally (MPI was initialised by us).
void finalize_mpi() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}
#endif

int local_rank_from_environment() {
  for (const char* var : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    if (const char* v = std::getenv(var)) return std::atoi(v);
  }
  return 0;
}

}  // namespace

Communicator& Communicator::world() {
  static Communicator world;
  return world;
}

Communicator::Communicator() {
#ifdef STRAIT_HAVE_MPI
  if (!launched_by_mpi()) return;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    std::atexit(finalize_mpi);
  }
  g_world = MPI_COMM_WORLD;
  mpi_comm_ = &g_world;
  MPI_Comm_rank(g_world, &rank_);
  MPI_Comm_size(g_world, &size_);
  local_rank_ = local_rank_from_environment();
#else
  local_rank_ = local_rank_from_environment();
#endif
}

void Communicator::barrier() {
#ifdef STRAIT_HAVE_MPI
  if (mpi_comm_ != nullptr) MPI_Barrier(g_world);
#endif
}

void Communicator::max_all(std::vector<double>& values) {
#ifdef STRAIT_HAVE_MPI
  if (mpi_comm_ != nullptr) {
    MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_MAX,
                  g_world);
  }
#else
  (void)values;
#endif
}

std::vector<double> Communicator::gather_all(const std::vector<double>& values) {
#ifdef STRAIT_HAVE_MPI
  if (mpi_comm_ != nullptr) {
    // Every rank contributes the same count in the suite; gather counts anyway.
    int mine = static_cast<int>(values.size());
    std::vector<int> counts(static_cast<std::size_t>(size_)), displs(counts.size());
    MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, g_world);
    int total = 0;
    for (std::size_t i = 0; i < counts.size(); ++i) {
      displs[i] = total;
      total += counts[i];
    }
    std::vector<double> out(static_cast<std::size_t>(total));
    MPI_Allgatherv(values.data(), mine, MPI_DOUBLE, out.data(), counts.data(), displs.data(),
                   MPI_DOUBLE, g_world);
    return out;
  }
#endif
  return values;
}

void Communicator::broadcast(void* bytes, std::int64_t size) {
#ifdef STRAIT_HAVE_MPI
  if (mpi_comm_ != nullptr) MPI_Bcast(bytes, static_cast<int>(size), MPI_BYTE, 0, g_world);
#else
  (void)bytes;
  (void)size;
#endif
}

}  // namespace strait::calibration::detail
