#pragma once
// The kernels' own CUDA helper beside the public check macro (kernels/cuda_check.hpp,
// included here for the sources that include this header). Include only from
// CUDA-enabled sources.

#include "kernels/cuda_check.hpp"

namespace strait::kernels::detail {

/// Keeps what the kernels' stream-ordered scratch (cudaMallocAsync) frees mapped in the
/// current device's default pool (release threshold: no limit), as a framework's caching
/// allocator keeps its blocks: otherwise every synchronization hands it back to the driver
/// and the next call maps it again, a cost no production kernel pays. Idempotent.
void keep_freed_scratch_mapped();

}  // namespace strait::kernels::detail
