// What strait-mpi's commands share (cli/mpi_program.hpp).

#include "cli/mpi_program.hpp"

#include <malloc.h>

namespace strait::cli {

void keep_freed_memory() {
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, -1);
}

}  // namespace strait::cli
