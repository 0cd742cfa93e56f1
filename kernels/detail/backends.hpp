#pragma once
// The two implementations behind each public kernel. Arguments are already validated
// by the public entry points (kernels/*.cpp); CUDA pointers are device pointers.

#include "kernels/hstu_attention.hpp"
#include "kernels/jagged.hpp"
#include "kernels/tbe.hpp"

namespace strait::kernels::detail {

void hstu_attention_forward_cpu(const HstuAttentionShape& s, const HstuAttentionForwardArgs& a);
void hstu_attention_backward_cpu(const HstuAttentionShape& s, const HstuAttentionBackwardArgs& a);
void tbe_forward_cpu(const TbeShape& s, const TbeForwardArgs& a);
void tbe_backward_cpu(const TbeShape& s, const TbeBackwardArgs& a);
void lengths_to_offsets_cpu(const std::int32_t* lengths, std::int32_t* offsets, int batch);
void jagged_to_padded_cpu(const JaggedShape& s, const void* values, const std::int32_t* offsets,
                          void* padded, float padding_value);
void padded_to_jagged_cpu(const JaggedShape& s, const void* padded, const std::int32_t* offsets,
                          void* values);
void jagged_dense_elementwise_cpu(const JaggedShape& s, ElementwiseOp op, const void* values,
                                  const std::int32_t* offsets, const void* dense, void* out);

#ifdef STRAIT_HAVE_CUDA
void hstu_attention_forward_cuda(const HstuAttentionShape& s, const HstuAttentionForwardArgs& a,
                                 void* stream);
void hstu_attention_backward_cuda(const HstuAttentionShape& s, const HstuAttentionBackwardArgs& a,
                                  void* stream);
void tbe_forward_cuda(const TbeShape& s, const TbeForwardArgs& a, void* stream);
void tbe_backward_cuda(const TbeShape& s, const TbeBackwardArgs& a, void* stream);
void lengths_to_offsets_cuda(const std::int32_t* lengths, std::int32_t* offsets, int batch,
                             void* stream);
void jagged_to_padded_cuda(const JaggedShape& s, const void* values, const std::int32_t* offsets,
                           void* padded, float padding_value, void* stream);
void padded_to_jagged_cuda(const JaggedShape& s, const void* padded, const std::int32_t* offsets,
                           void* values, void* stream);
void jagged_dense_elementwise_cuda(const JaggedShape& s, ElementwiseOp op, const void* values,
                                   const std::int32_t* offsets, const void* dense, void* out,
                                   void* stream);
#endif

}  // namespace strait::kernels::detail
