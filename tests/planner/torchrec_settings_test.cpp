// planner/torchrec_settings.hpp: the TorchRec and PyTorch settings that realise a plan's
// schedule, and what no setting realises.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "planner/plan_document.hpp"
#include "planner/torchrec_settings.hpp"
#include "planner_test_support.hpp"

namespace strait::planner {
namespace {

using namespace testing_support;

/// The settings of plan document `plan` for `model` (the small DLRM by default).
Json settings_of(const std::string& plan, const std::string& model = kSmallDlrm) {
  const auto m =
      sim::workload::ModelConfig::from_config(ConfigNode(Json::parse(model), "model.json"));
  return torchrec_settings(parse_plan(Json::parse(plan), "plan.json", m), m);
}

/// The small DLRM with `embedding` (JSON members) added to its embedding block.
std::string dlrm_with(const std::string& embedding) {
  std::string model = kSmallDlrm;
  model.replace(model.find(R"("embedding": {)") + 14, 0, embedding + ", ");
  return model;
}

std::vector<std::string> keys(const Json& j) {
  std::vector<std::string> out;
  for (const auto& [key, value] : j.items()) out.push_back(key);
  return out;
}

// The section names the TorchRec and DDP settings of the schedule. The small DLRM's
// embeddings train with row-wise AdaGrad in fp32 (the model's defaults).
TEST(TorchRecSettings, NamesTheSettingsOfTheSchedule) {
  const auto plain = settings_of("{}");
  EXPECT_EQ(keys(plain),
            (std::vector<std::string>{"ddp", "fused_params", "train_pipeline", "unmatched"}));
  EXPECT_EQ(plain["train_pipeline"]["value"],
            "torchrec.distributed.train_pipeline.TrainPipelineBase");
  EXPECT_FALSE(plain.contains("qcomms_config"));
  EXPECT_EQ(plain["fused_params"]["value"],
            Json::parse(R"({"optimizer": "EXACT_ROWWISE_ADAGRAD"})"));
  EXPECT_NE(plain["fused_params"]["reason"].get<std::string>().find("(rowwise_adagrad)"),
            std::string::npos);
  EXPECT_EQ(plain["ddp"]["value"], Json::parse(R"({"bucket_cap_mb": 25.0})"));
  EXPECT_EQ(plain["unmatched"], Json::array());

  const auto hugectr = settings_of(R"({
      "dense": {"grad_sync": "grouped", "comm_precision": "fp16"},
      "sparse": {"comm_precision": {"forward": "fp16"}},
      "schedule": {"pipeline_depth": 2, "pipelined": "input_dist"}})");
  EXPECT_EQ(hugectr["train_pipeline"]["value"],
            "torchrec.distributed.train_pipeline.TrainPipelineSparseDist");
  EXPECT_EQ(hugectr["qcomms_config"]["value"],
            Json::parse(R"({"forward_precision": "FP16", "backward_precision": "FP32"})"));
  EXPECT_EQ(hugectr["ddp"]["value"], Json::parse(R"({"bucket_cap_mb": null, "comm_hook":
              "torch.distributed.algorithms.ddp_comm_hooks.default_hooks.fp16_compress_hook"})"));

  const auto deep = settings_of(R"({"dense": {"comm_precision": "fp8"},
      "schedule": {"pipeline_depth": 3}})");
  EXPECT_EQ(deep["train_pipeline"]["value"],
            "torchrec.distributed.train_pipeline.TrainPipelineSemiSync");
  ASSERT_EQ(deep["unmatched"].size(), 2u);
  EXPECT_NE(deep["unmatched"][0].get<std::string>().find("two batches ahead"), std::string::npos);
  EXPECT_NE(deep["unmatched"][1].get<std::string>().find("fp16 or bf16 only"), std::string::npos);
}

// Each embedding optimizer is FBGEMM's EmbOptimType of the same update.
TEST(TorchRecSettings, EmbeddingOptimizersAreFbgemmsEmbOptimTypes) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"rowwise_adagrad", "EXACT_ROWWISE_ADAGRAD"},
      {"adagrad", "EXACT_ADAGRAD"},
      {"adam", "ADAM"},
      {"sgd", "EXACT_SGD"}};
  for (const auto& [optimizer, emb_optim_type] : cases) {
    const auto s = settings_of("{}", dlrm_with(R"("optimizer": ")" + optimizer + "\""));
    EXPECT_EQ(s["fused_params"]["value"]["optimizer"], emb_optim_type) << optimizer;
  }
}

// An unset direction of the embeddings' comm precision is the weights' dtype: FP32 for
// fp32 weights, FP16 for fp16 weights.
TEST(TorchRecSettings, QcommsPrecisionDefaultsToTheWeightsDtype) {
  const char* backward_bf16 = R"({"sparse": {"comm_precision": {"backward": "bf16"}}})";
  EXPECT_EQ(settings_of(backward_bf16)["qcomms_config"]["value"],
            Json::parse(R"({"forward_precision": "FP32", "backward_precision": "BF16"})"));
  EXPECT_EQ(
      settings_of(backward_bf16, dlrm_with(R"("weight_dtype": "fp16")"))["qcomms_config"]["value"],
      Json::parse(R"({"forward_precision": "FP16", "backward_precision": "BF16"})"));
}

// DDP's bucket is the plan's in MiB; bf16 gradients take the bf16 hook, fp32 none and
// nothing unmatched; FSDP has no DDP settings at all.
TEST(TorchRecSettings, DdpBucketAndCommHookFollowTheDensePlan) {
  const auto bf16 =
      settings_of(R"({"dense": {"bucket_size": "100 MiB", "comm_precision": "bf16"}})");
  EXPECT_EQ(bf16["ddp"]["value"], Json::parse(R"({"bucket_cap_mb": 100.0, "comm_hook":
              "torch.distributed.algorithms.ddp_comm_hooks.default_hooks.bf16_compress_hook"})"));
  const auto fp32 = settings_of(R"({"dense": {"comm_precision": "fp32"}})");
  EXPECT_EQ(fp32["ddp"]["value"], Json::parse(R"({"bucket_cap_mb": 25.0})"));
  EXPECT_EQ(fp32["unmatched"], Json::array());
  const auto fsdp = settings_of(R"({"dense": {"parallelism": "fsdp"}})");
  EXPECT_FALSE(fsdp.contains("ddp"));
}

// Depth 3 with only the input dist pipelined: TrainPipelineSparseDist runs it one batch
// ahead, not two, which "unmatched" says.
TEST(TorchRecSettings, ADeeperInputDistPipelineIsUnmatched) {
  const auto s = settings_of(R"({"schedule": {"pipeline_depth": 3, "pipelined": "input_dist"}})");
  EXPECT_EQ(s["train_pipeline"]["value"],
            "torchrec.distributed.train_pipeline.TrainPipelineSparseDist");
  ASSERT_EQ(s["unmatched"].size(), 1u);
  EXPECT_EQ(s["unmatched"][0],
            "pipeline_depth 3 with \"pipelined\": \"input_dist\": TrainPipelineSparseDist starts "
            "the input dist one batch ahead, not two");
}

}  // namespace
}  // namespace strait::planner
