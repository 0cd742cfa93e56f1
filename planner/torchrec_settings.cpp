#include "planner/torchrec_settings.hpp"

#include <string>

namespace strait::planner {
namespace {

using sim::workload::Optimizer;
using sim::workload::ParallelPlan;
using sim::workload::Pipelined;

Json setting(Json value, std::string reason) {
  return {{"value", std::move(value)}, {"reason", std::move(reason)}};
}

// torchrec/distributed/train_pipeline/train_pipelines.py: TrainPipelineBase runs each batch
// whole; TrainPipelineSparseDist starts batch i+1's input dist (the ids' all-to-all) during
// batch i; TrainPipelineSemiSync also runs batch i+1's embedding lookup and output dist
// during batch i, on weights one update older.
Json train_pipeline(const ParallelPlan& plan, Json& unmatched) {
  const std::string base = "torchrec.distributed.train_pipeline.";
  const int depth = plan.schedule.pipeline_depth;
  if (depth == 1) {
    return setting(base + "TrainPipelineBase",
                   "pipeline_depth 1: each batch's input dist, lookup and dense step in turn");
  }
  if (plan.schedule.pipelined == Pipelined::kInputDist) {
    if (depth > 2)
      unmatched.push_back(
          "pipeline_depth 3 with \"pipelined\": \"input_dist\": TrainPipelineSparseDist starts "
          "the input dist one batch ahead, not two");
    return setting(base + "TrainPipelineSparseDist",
                   "\"pipelined\": \"input_dist\": the next batch's input dist runs during this "
                   "batch, its lookup after this batch's optimizer step (train_pipelines.py)");
  }
  if (depth > 2)
    unmatched.push_back(
        "pipeline_depth 3: no TorchRec train pipeline runs the sparse forward two batches "
        "ahead; TrainPipelineSemiSync runs it one batch ahead");
  return setting(base + "TrainPipelineSemiSync",
                 "\"pipelined\": \"sparse_forward\": the next batch's input dist, lookup and "
                 "output dist run during this batch, on weights one update older "
                 "(train_pipelines.py)");
}

// fbgemm_gpu/split_embedding_configs.py, EmbOptimType; TorchRec passes it as
// fused_params["optimizer"] to its sharders.
std::string emb_optim_type(Optimizer o) {
  switch (o) {
    case Optimizer::kRowWiseAdagrad:
      return "EXACT_ROWWISE_ADAGRAD";
    case Optimizer::kAdagrad:
      return "EXACT_ADAGRAD";
    case Optimizer::kAdam:
      return "ADAM";
    case Optimizer::kSgd:
      return "EXACT_SGD";
  }
  return "EXACT_SGD";
}

// torchrec/distributed/fbgemm_qcomm_codec.py: QCommsConfig(forward_precision,
// backward_precision), CommType FP32 / FP16 / BF16 / FP8 / INT8.
std::string comm_type(sim::cost::Precision p) {
  switch (p) {
    case sim::cost::Precision::kFp16:
      return "FP16";
    case sim::cost::Precision::kBf16:
      return "BF16";
    case sim::cost::Precision::kFp8:
      return "FP8";
    case sim::cost::Precision::kFp32:
    case sim::cost::Precision::kTf32:
      return "FP32";
  }
  return "FP32";
}

}  // namespace

Json torchrec_settings(const ParallelPlan& plan, const sim::workload::ModelConfig& model) {
  Json unmatched = Json::array();
  Json out = Json::object();
  out["train_pipeline"] = train_pipeline(plan, unmatched);
  const auto& c = plan.comm_precision;
  if (c.forward || c.backward) {
    const auto weights = comm_type(model.embedding_dtype);
    out["qcomms_config"] = setting(
        {{"forward_precision", c.forward ? comm_type(*c.forward) : weights},
         {"backward_precision", c.backward ? comm_type(*c.backward) : weights}},
        "the plan's sparse comm_precision: torchrec.distributed.fbgemm_qcomm_codec.QCommsConfig, "
        "given to the sharders as qcomm_codecs_registry=get_qcomm_codecs_registry(...)");
  }
  out["fused_params"] = setting(
      {{"optimizer", emb_optim_type(model.embedding_optimizer)}},
      std::string("the model's embedding optimizer (") + to_string(model.embedding_optimizer) +
          "), fused into the embedding backward: fbgemm_gpu EmbOptimType, "
          "fused_params[\"optimizer\"] of TorchRec's sharders");
  if (plan.dense == sim::workload::DenseParallelism::kDdp) {
    Json ddp = Json::object();
    std::string reason;
    if (plan.grad_sync == sim::workload::GradSync::kGrouped) {
      // One bucket as large as every gradient: DDP all-reduces it when the backward is done.
      ddp["bucket_cap_mb"] = nullptr;
      reason =
          "\"grad_sync\": \"grouped\": one all-reduce after the backward; give "
          "DistributedDataParallel a bucket_cap_mb at least the dense gradients' size";
    } else {
      ddp["bucket_cap_mb"] = static_cast<double>(plan.bucket_size) / (1 << 20);
      reason = "the plan's bucket_size: DistributedDataParallel(bucket_cap_mb=...)";
    }
    if (const auto& p = plan.grad_comm_precision) {
      using sim::cost::Precision;
      if (*p == Precision::kFp16 || *p == Precision::kBf16) {
        ddp["comm_hook"] = *p == Precision::kFp16
                               ? "torch.distributed.algorithms.ddp_comm_hooks.default_hooks."
                                 "fp16_compress_hook"
                               : "torch.distributed.algorithms.ddp_comm_hooks.default_hooks."
                                 "bf16_compress_hook";
        reason += "; the dense comm_precision: DDP's register_comm_hook";
      } else if (*p != Precision::kFp32 && *p != Precision::kTf32) {
        unmatched.push_back(std::string("dense comm_precision ") + to_string(*p) +
                            ": PyTorch's DDP comm hooks compress to fp16 or bf16 only");
      }
    }
    out["ddp"] = setting(std::move(ddp), std::move(reason));
  }
  out["unmatched"] = std::move(unmatched);
  return out;
}

}  // namespace strait::planner
