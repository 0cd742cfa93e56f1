#pragma once
// ModelConfig: a recommendation model as a model file describes it: embedding tables
// (pooled or sequence) and a dense part (bottom/top MLPs, dot or DCNv2 interaction, an
// HSTU stack, MoE layers), with the precision of each component for what-if studies.
//
//   {"name": "...",
//    "embedding": {"weight_dtype": "fp32", "optimizer": "rowwise_adagrad" | "adam" | "sgd",
//                  "optimizer_dtype": "fp32",
//                  "tables": [{"name": "t0", "rows": 40000000, "dim": 128,
//                              "pooling": "sum" | "mean" | "sequence"}]},
//    "dense": {"param_dtype": "fp32", "optimizer": "adam" | "adagrad" | "sgd",
//              "precision": "bf16",                       compute precision (default)
//              "dense_features": 13,
//              "bottom_mlp": {"layers": [512, 256, 128], "precision": "fp8"},
//              "interaction": {"type": "dot"} | {"type": "dcn", "layers": 3, "low_rank": 512},
//              "top_mlp": {"layers": [1024, 512, 1]},
//              "hstu": {"layers": 8, "model_dim": 512, "heads": 4, "head_dim": 128,
//                       "linear_dim": 128, "relative_bias": true, "attention": "jagged",
//                       "attention_kernel": "fused" | "unfused", "dropout": 0.3,
//                       "negatives": 512, "negative_sampling": "shared" | "per_token"},
//              "moe": {"layers": 2, "experts": 8, "top_k": 2, "expert_hidden": 2048}}}
// Every key except names, rows and dims has a default; see model.cpp.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/config_node.hpp"
#include "sim/core/enum_names.hpp"
#include "sim/workload/op_graph.hpp"

namespace strait::sim::workload {

// Each enum's names, as model files spell them, next to it (sim/core/enum_names.hpp).
enum class Pooling { kSum, kMean, kSequence };
constexpr auto enum_names(Pooling) {
  return std::to_array<EnumName<Pooling>>(
      {{Pooling::kSum, "sum"}, {Pooling::kMean, "mean"}, {Pooling::kSequence, "sequence"}});
}
enum class Optimizer { kRowWiseAdagrad, kAdagrad, kAdam, kSgd };
constexpr auto enum_names(Optimizer) {
  return std::to_array<EnumName<Optimizer>>({{Optimizer::kRowWiseAdagrad, "rowwise_adagrad"},
                                             {Optimizer::kAdagrad, "adagrad"},
                                             {Optimizer::kAdam, "adam"},
                                             {Optimizer::kSgd, "sgd"}});
}
inline const char* to_string(Optimizer o) { return name_of(o); }

/// Optimizer state in bytes for a parameter block of rows x dim elements (state in
/// `state_bytes`-byte elements): row-wise AdaGrad one value per row, AdaGrad one per
/// element, Adam two per element, SGD none.
double optimizer_state_bytes(Optimizer o, double rows, double dim, int state_bytes);

struct EmbeddingTable {
  std::string name;
  std::int64_t rows = 0;
  int dim = 0;
  Pooling pooling = Pooling::kSum;
};

struct MlpConfig {
  std::vector<int> layers;  // output widths; empty = absent
  Precision precision = Precision::kBf16;
};

struct InteractionConfig {
  enum class Type { kNone, kDot, kDcn } type = Type::kNone;
  int layers = 0;    // dcn cross layers
  int low_rank = 0;  // dcn low rank r (U: in x r, V: r x in)
  Precision precision = Precision::kBf16;
};

struct HstuConfig {
  int layers = 0;  // 0 = absent
  int model_dim = 0, heads = 0, head_dim = 0, linear_dim = 0;
  bool relative_bias = true;
  bool padded = false;  // what-if: padded attention instead of jagged
  // Fused attention (FlashAttention-style, the HSTU Triton/CUTLASS kernels) keeps no L x L
  // scores or relative-bias matrix; unfused (PyTorch reference) materializes both.
  bool fused_attention = true;
  // Sliding-window attention (Kunlun, Meta 2026; Longformer's local attention): each token
  // attends to itself and the W - 1 before it; 0 = the whole causal prefix. Per sample of
  // length L: L(L + 1)/2 pairs when L <= W, else W(W + 1)/2 + (L - W) W; an unfused kernel
  // keeps L min(L, W) scores.
  int attention_window = 0;
  // Dropout on the gated attention output; 0 = no dropout op. Default 0.3: the
  // generative-recommenders STULayerConfig's output_dropout_ratio.
  double dropout = 0.3;
  int negatives = 512;  // sampled-softmax negatives per token in the loss
  // shared (default): one set of in-batch negatives for the whole batch, logits a GEMM;
  // per_token: every token gathers its own negatives' embeddings ([T, negatives, d], the
  // generative-recommenders research samplers), memory-bound and far costlier at scale.
  bool shared_negatives = true;
  Precision precision = Precision::kBf16;
};

struct MoeConfig {
  int layers = 0;  // 0 = absent
  int experts = 0, top_k = 0, expert_hidden = 0;
  Precision precision = Precision::kBf16;
};

struct ModelConfig {
  std::string name;
  std::string file;
  std::vector<EmbeddingTable> tables;
  Precision embedding_dtype = Precision::kFp32;
  Optimizer embedding_optimizer = Optimizer::kRowWiseAdagrad;
  Precision embedding_optimizer_dtype = Precision::kFp32;
  Precision param_dtype = Precision::kFp32;
  Optimizer dense_optimizer = Optimizer::kAdam;
  int dense_features = 0;
  MlpConfig bottom_mlp, top_mlp;
  InteractionConfig interaction;
  HstuConfig hstu;
  MoeConfig moe;

  static ModelConfig load(const std::string& path);
  static ModelConfig from_config(const ConfigNode& node);

  /// Index of the table named `name`, or -1.
  int table_index(const std::string& table) const;
  std::vector<std::string> table_names() const;
  bool has_hstu() const { return hstu.layers > 0; }
};

/// Parses "fp32" | "tf32" | "bf16" | "fp16" | "fp8" at `key` of `node`, or `fallback`.
Precision precision_or(const ConfigNode& node, std::string_view key, Precision fallback);

}  // namespace strait::sim::workload
