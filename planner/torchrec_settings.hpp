#pragma once
// The TorchRec and PyTorch settings that realise a plan's schedule, for the launch plan's
// "torchrec" section:
//
//   {"train_pipeline": {"value": "torchrec.distributed.train_pipeline.TrainPipelineSparseDist",
//                       "reason": "..."},
//    "qcomms_config": {"value": {"forward_precision": "FP16", "backward_precision": "FP32"},
//                      "reason": "..."},
//    "fused_params": {"value": {"optimizer": "EXACT_ROWWISE_ADAGRAD"}, "reason": "..."},
//    "ddp": {"value": {"bucket_cap_mb": 25, "comm_hook": "fp16_compress_hook"}, "reason": "..."},
//    "unmatched": ["what of the plan no TorchRec setting realises", ...]}
//
// Each value names the class, enum or argument as TorchRec, FBGEMM or PyTorch spell it
// (the reason says where); a plan choice with no equivalent goes to "unmatched" with what
// the program must do instead, never to a setting that would mean something else.

#include "sim/core/config_node.hpp"
#include "sim/workload/model.hpp"
#include "sim/workload/plan.hpp"

namespace strait::planner {

Json torchrec_settings(const sim::workload::ParallelPlan& plan,
                       const sim::workload::ModelConfig& model);

}  // namespace strait::planner
