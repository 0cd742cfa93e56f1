#pragma once
// Kernel names: what a GPU kernel is, read from the name a profiler (Kineto, nsys) gives it.
// One rule, used by `strait calibrate import-kineto` (calibration/kineto_import.hpp) and by
// `strait compare --kineto` (executor/kineto_measured.hpp).
//
// Rules (case-insensitive substrings, first match wins):
//   nccl             ncclKernel_* (NCCL < 2.19) and ncclDevKernel_* (NCCL >= 2.19)
//   optimizer        *multi_tensor_apply*, *adam*
//   embedding update *embedding_backward*, *embedding*codegen_backward*
//   embedding lookup *embedding_forward*, *EmbeddingBag_updateOutput*,
//                    *split_embedding*codegen_forward*
//   attention        *hstu*, *attention*, *flash*; backward if also *bwd* or *backward*
//   gemm             *gemm*, *cutlass*, *xmma*, *cublasLt*, *nvjet*
//   elementwise      *elementwise_kernel*, *reduce_kernel*, *layer_norm*
// Limits: names only; a kernel the rules miss (a custom Triton kernel) is kUnknown.

#include <optional>
#include <string_view>

#include "sim/network/collective.hpp"

namespace strait::calibration {

enum class KernelNameFamily {
  kUnknown,
  kGemm,
  kAttentionForward,
  kAttentionBackward,
  kEmbeddingLookup,
  kEmbeddingUpdate,
  kElementwise,
  kOptimizer,
  kNccl,
};

/// The family of the GPU kernel named `kernel_name` (kUnknown if no rule matches).
KernelNameFamily kernel_family_of_name(std::string_view kernel_name);

/// The collective of an NCCL kernel from its name: ncclKernel_AllReduce_RING_LL_Sum_float
/// and ncclDevKernel_AllReduce_Sum_f32_RING_LL are all-reduce, *_SendRecv* send/recv.
std::optional<sim::network::CollectiveOp> nccl_kernel_op(std::string_view kernel_name);

/// The collective c10d names ("allreduce", "_allgather_base", "all_to_allv", "send", ...,
/// as record_param_comms' "Collective name"); nullopt for "barrier", "wait" and the like.
std::optional<sim::network::CollectiveOp> collective_name_op(std::string_view c10d_name);

}  // namespace strait::calibration
