#include "kernels/tbe.hpp"

#include <fmt/format.h>

#include "kernels/detail/backends.hpp"
#include "kernels/detail/require.hpp"

namespace strait::kernels {
namespace {

using detail::require;

void check_shape(const char* kernel, const TbeShape& s) {
  require(s.tables >= 1, kernel, "tables", fmt::format("expected >= 1, got {}", s.tables));
  require(s.batch >= 0, kernel, "batch", fmt::format("expected >= 0, got {}", s.batch));
  require(s.dim >= 1, kernel, "dim", fmt::format("expected >= 1, got {}", s.dim));
  require(s.total_rows >= 0, kernel, "total_rows",
          fmt::format("expected >= 0, got {}", s.total_rows));
  require(s.num_indices >= 0, kernel, "num_indices",
          fmt::format("expected >= 0, got {}", s.num_indices));
}

// Host-side checks of offsets and indices (CPU path only: CUDA data stays on the device).
void check_host_indices(const char* kernel, const TbeShape& s, const std::int64_t* table_rows,
                        const std::int64_t* indices, const std::int64_t* offsets) {
  require(table_rows[0] == 0 && table_rows[s.tables] == s.total_rows, kernel, "table_row_offsets",
          fmt::format("expected to start at 0 and end at total_rows = {}, got {} .. {}",
                      s.total_rows, table_rows[0], table_rows[s.tables]));
  const std::int64_t bags = static_cast<std::int64_t>(s.tables) * s.batch;
  require(
      offsets[0] == 0 && offsets[bags] == s.num_indices, kernel, "offsets",
      fmt::format(
          "expected offsets[0] = 0 and offsets[tables * batch] = num_indices = {}, got {} and {}",
          s.num_indices, offsets[0], offsets[bags]));
  for (std::int64_t bag = 0; bag < bags; ++bag) {
    require(offsets[bag + 1] >= offsets[bag], kernel, "offsets",
            fmt::format("expected non-decreasing offsets, got offsets[{}] = {} > offsets[{}] = {}",
                        bag, offsets[bag], bag + 1, offsets[bag + 1]));
    const auto t = static_cast<int>(bag / s.batch);
    const std::int64_t rows = table_rows[t + 1] - table_rows[t];
    for (std::int64_t k = offsets[bag]; k < offsets[bag + 1]; ++k)
      require(indices[k] >= 0 && indices[k] < rows, kernel, "indices",
              fmt::format("expected indices of table {} in [0, {}), got indices[{}] = {}", t, rows,
                          k, indices[k]));
  }
}

}  // namespace

void tbe_forward(Device device, const TbeShape& s, const TbeForwardArgs& a, void* stream) {
  constexpr const char* kName = "tbe_forward";
  check_shape(kName, s);
  require(a.weights != nullptr || s.total_rows == 0, kName, "weights",
          "expected a non-null pointer");
  require(a.table_row_offsets != nullptr && a.offsets != nullptr, kName,
          "table_row_offsets/offsets", "expected non-null pointers");
  require(a.indices != nullptr || s.num_indices == 0, kName, "indices",
          "expected a non-null pointer");
  require(a.output != nullptr, kName, "output", "expected a non-null pointer");
  require(a.per_sample_weights == nullptr || s.pooling != PoolingMode::kMean, kName,
          "per_sample_weights",
          "expected none with mean pooling (FBGEMM allows them only with sum or no pooling)");
  if (device == Device::kCpu) {
    check_host_indices(kName, s, a.table_row_offsets, a.indices, a.offsets);
    detail::tbe_forward_cpu(s, a);
    return;
  }
#ifdef STRAIT_HAVE_CUDA
  detail::tbe_forward_cuda(s, a, stream);
#else
  (void)stream;
  detail::no_cuda(kName);
#endif
}

void tbe_backward(Device device, const TbeShape& s, const TbeBackwardArgs& a, void* stream) {
  constexpr const char* kName = "tbe_backward";
  check_shape(kName, s);
  require(a.weights != nullptr || s.total_rows == 0, kName, "weights",
          "expected a non-null pointer");
  require(a.table_row_offsets != nullptr && a.offsets != nullptr, kName,
          "table_row_offsets/offsets", "expected non-null pointers");
  require(a.indices != nullptr || s.num_indices == 0, kName, "indices",
          "expected a non-null pointer");
  require(a.grad_output != nullptr, kName, "grad_output", "expected a non-null pointer");
  require(a.optimizer != EmbeddingOptimizer::kRowWiseAdagrad || a.momentum != nullptr, kName,
          "momentum", "expected a [total_rows] f32 state for row-wise AdaGrad");
  require(a.per_sample_weights == nullptr || s.pooling != PoolingMode::kMean, kName,
          "per_sample_weights", "expected none with mean pooling");
  require(a.learning_rate >= 0.0f && a.eps > 0.0f, kName, "learning_rate/eps",
          fmt::format("expected learning_rate >= 0 and eps > 0, got {} and {}", a.learning_rate,
                      a.eps));
  if (device == Device::kCpu) {
    check_host_indices(kName, s, a.table_row_offsets, a.indices, a.offsets);
    detail::tbe_backward_cpu(s, a);
    return;
  }
#ifdef STRAIT_HAVE_CUDA
  detail::tbe_backward_cuda(s, a, stream);
#else
  (void)stream;
  detail::no_cuda(kName);
#endif
}

}  // namespace strait::kernels
