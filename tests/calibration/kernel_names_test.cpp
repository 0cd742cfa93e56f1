// Kernel names: the family and collective of kernels as real profiler traces name them.

#include "calibration/kernel_names.hpp"

#include <gtest/gtest.h>

namespace strait::calibration {
namespace {

using sim::network::CollectiveOp;

TEST(KernelNames, ClassifiesTheKernelsOfATrainingStep) {
  const std::pair<const char*, KernelNameFamily> cases[] = {
      {"ampere_sgemm_128x64_tn", KernelNameFamily::kGemm},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", KernelNameFamily::kGemm},
      {"nvjet_hsh_128x256_64x4_1x2_h_bz_coopA_TNT", KernelNameFamily::kGemm},
      {"void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 64, 4>, true>()",
       KernelNameFamily::kAttentionForward},
      {"void pytorch_flash::flash_bwd_dq_dk_dv_loop_kernel<Flash_bwd_kernel_traits<64>>()",
       KernelNameFamily::kAttentionBackward},
      {"void fbgemm_gpu::split_embedding_codegen_forward_unweighted_kernel<float>()",
       KernelNameFamily::kEmbeddingLookup},
      {"void fbgemm_gpu::split_embedding_backward_codegen_sgd_unweighted_kernel<float>()",
       KernelNameFamily::kEmbeddingUpdate},
      {"void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>()",
       KernelNameFamily::kElementwise},
      {"void at::native::multi_tensor_apply_kernel<TensorListMetadata<4>, "
       "FusedAdamMathFunctor<float, 4>>()",
       KernelNameFamily::kOptimizer},
      {"ncclKernel_AllReduce_RING_LL_Sum_float", KernelNameFamily::kNccl},
      {"ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", KernelNameFamily::kNccl},
      {"triton_poi_fused_add_mul_0", KernelNameFamily::kUnknown},
  };
  for (const auto& [name, family] : cases) EXPECT_EQ(kernel_family_of_name(name), family) << name;
}

TEST(KernelNames, ReadsTheCollectiveOfOldAndNewNcclKernelNames) {
  EXPECT_EQ(nccl_kernel_op("ncclKernel_AllReduce_RING_LL_Sum_float"), CollectiveOp::kAllReduce);
  EXPECT_EQ(nccl_kernel_op("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            CollectiveOp::kAllGather);
  EXPECT_EQ(nccl_kernel_op("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"),
            CollectiveOp::kSendRecv);
  EXPECT_EQ(nccl_kernel_op("ampere_sgemm_128x64_tn"), std::nullopt);
  EXPECT_EQ(collective_name_op("all_to_allv"), CollectiveOp::kAllToAllV);
  EXPECT_EQ(collective_name_op("_allgather_base"), CollectiveOp::kAllGather);
  EXPECT_EQ(collective_name_op("barrier"), std::nullopt);
}

}  // namespace
}  // namespace strait::calibration
