#include "kernels/jagged.hpp"

#include <fmt/format.h>

#include "kernels/detail/backends.hpp"
#include "kernels/detail/require.hpp"

namespace strait::kernels {
namespace {

using detail::require;

void check_shape(const char* kernel, Device device, const JaggedShape& s,
                 const std::int32_t* offsets) {
  require(s.batch >= 0 && s.max_len >= 0 && s.dim >= 1 && s.total >= 0, kernel, "shape",
          fmt::format("expected batch >= 0, max_len >= 0, dim >= 1, total >= 0, got {}, {}, {}, {}",
                      s.batch, s.max_len, s.dim, s.total));
  require(offsets != nullptr, kernel, "offsets", "expected a non-null pointer");
  if (device != Device::kCpu) return;
  require(offsets[0] == 0 && offsets[s.batch] == s.total, kernel, "offsets",
          fmt::format("expected offsets[0] = 0 and offsets[batch] = total = {}, got {} and {}",
                      s.total, offsets[0], offsets[s.batch]));
  for (int b = 0; b < s.batch; ++b)
    require(offsets[b + 1] >= offsets[b], kernel, "offsets",
            fmt::format("expected non-decreasing offsets, got offsets[{}] = {} > offsets[{}] = {}",
                        b, offsets[b], b + 1, offsets[b + 1]));
}

}  // namespace

void lengths_to_offsets(Device device, const std::int32_t* lengths, std::int32_t* offsets,
                        int batch, void* stream) {
  constexpr const char* kName = "lengths_to_offsets";
  require(batch >= 0, kName, "batch", fmt::format("expected >= 0, got {}", batch));
  require(offsets != nullptr && (lengths != nullptr || batch == 0), kName, "lengths/offsets",
          "expected non-null pointers");
  if (device == Device::kCpu) {
    for (int b = 0; b < batch; ++b)
      require(lengths[b] >= 0, kName, "lengths",
              fmt::format("expected >= 0, got lengths[{}] = {}", b, lengths[b]));
    detail::lengths_to_offsets_cpu(lengths, offsets, batch);
    return;
  }
#ifdef STRAIT_HAVE_CUDA
  detail::lengths_to_offsets_cuda(lengths, offsets, batch, stream);
#else
  (void)stream;
  detail::no_cuda(kName);
#endif
}

void jagged_to_padded(Device device, const JaggedShape& s, const void* values,
                      const std::int32_t* offsets, void* padded, float padding_value,
                      void* stream) {
  constexpr const char* kName = "jagged_to_padded";
  check_shape(kName, device, s, offsets);
  if (device == Device::kCpu) {
    detail::jagged_to_padded_cpu(s, values, offsets, padded, padding_value);
    return;
  }
#ifdef STRAIT_HAVE_CUDA
  detail::jagged_to_padded_cuda(s, values, offsets, padded, padding_value, stream);
#else
  (void)stream;
  detail::no_cuda(kName);
#endif
}

void padded_to_jagged(Device device, const JaggedShape& s, const void* padded,
                      const std::int32_t* offsets, void* values, void* stream) {
  constexpr const char* kName = "padded_to_jagged";
  check_shape(kName, device, s, offsets);
  if (device == Device::kCpu) {
    detail::padded_to_jagged_cpu(s, padded, offsets, values);
    return;
  }
#ifdef STRAIT_HAVE_CUDA
  detail::padded_to_jagged_cuda(s, padded, offsets, values, stream);
#else
  (void)stream;
  detail::no_cuda(kName);
#endif
}

void jagged_dense_elementwise(Device device, const JaggedShape& s, ElementwiseOp op,
                              const void* values, const std::int32_t* offsets, const void* dense,
                              void* out, void* stream) {
  constexpr const char* kName = "jagged_dense_elementwise";
  check_shape(kName, device, s, offsets);
  if (device == Device::kCpu) {
    detail::jagged_dense_elementwise_cpu(s, op, values, offsets, dense, out);
    return;
  }
#ifdef STRAIT_HAVE_CUDA
  detail::jagged_dense_elementwise_cuda(s, op, values, offsets, dense, out, stream);
#else
  (void)stream;
  detail::no_cuda(kName);
#endif
}

}  // namespace strait::kernels
