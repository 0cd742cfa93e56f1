#pragma once
// DenseStack: the dense part of a model as layers, each turning a rank's batch shape
// into forward and backward work items (kernels with FLOPs and HBM bytes, and the
// collectives inside the layer: context parallel, MoE). Shared by the op-graph builder
// and the memory model. GEMM, attention and their backward are costed by the kernel
// formulas of sim/cost/kernel_shapes.hpp (the ones calibration and the executor use);
// here, the shapes each layer gives them and the layers' own kernels (e = bytes per
// element of the layer's precision):
//   linear (m rows, in -> out)   GEMM m x out x in
//   dot interaction (F feats, D) batched GEMM m = B F, n = F, k = D (2 B F^2 D flops);
//                                bytes (B F D + B F^2) e (X read once, Z written)
//   DCNv2 cross (in, rank r)     two GEMMs B x r x in (U and V^T fused in one op: 4 B in r
//                                flops), bytes (3 B in + 2 in r + B r) e
//   HSTU layer (T tokens, P = sum L(L+1)/2 pairs, S = sum L^2, d, h, dqk, dv, W = h (2 dqk +
//   2 dv); detail/hstu_layer.cpp), forward in order:
//     norm_in   layer norm, 5 T d flops, 2 T d e bytes
//     uvqk      GEMM m = T, k = d, n = W
//     silu      SiLU on U V Q K, 4 T W flops, 2 T W e bytes
//     rel_bias  fused: bucket ids of positions and timestamps, 16 T bytes (the bias is added
//               in the kernel); unfused: the bias matrix written, 8 T + S' e bytes
//     jagged_to_padded / padded_to_jagged (padded attention only): Q K V in, output out,
//               (T + B L_max) h (2 dqk + dv) e and (T + B L_max) h dv e bytes
//     attention over T' tokens touched (T jagged, B L_max padded), P pairs (padded:
//               B L_max (L_max + 1) / 2) and, unfused, S' scores per head (S jagged,
//               B L_max^2 padded)
//     norm_out  norm(AV) * U, 8 T h dv flops, 3 T h dv e bytes
//     dropout   (ratio > 0) 2 T h dv flops, (2 e + 1) T h dv bytes (one-byte mask)
//     out       GEMM m = T, k = h dv, n = d
//     residual  x + out, T d flops, 3 T d e bytes
//   Backward: as below; dropout and residual their forward's bytes; SiLU 1.5x flops, 2x
//   bytes; conversions the opposite conversion; the unfused bias gradient 2x bytes (fused:
//   inside the attention backward). Attention scores kept: fused none (O(L) state), unfused
//   S' h e.
//   MoE (m rows, d, E experts, top k, hidden H): router GEMM m x E x d, experts two GEMMs
//     (m k) x H x d (up and down: 4 (m k) d H flops), bytes (2 m k d + 2 m k H + 2 E/ep d H) e;
//     dispatch and combine all-to-all of m k d e bytes each.
//   loss: DLRM BCE elementwise on B. HSTU sampled softmax over R negatives:
//     shared (the default, in-batch negatives for the whole batch): negatives_gather
//     2 (T + R) d e bytes (positives and negatives gathered, L2-normalized), logits GEMM
//     m = T, k = d, n = R, softmax 8 T (R+1) bytes; backward the softmax, the GEMM's, and
//     gather 3 (T + R) d e bytes. per_token ([T, R+1, d] gathered): negatives_gather
//     2 T (R+1) d e bytes, logits (batched GEMV) 2 T (R+1) d flops, T (R+1) d e + T d e +
//     4 T (R+1) bytes, softmax 8 T (R+1) bytes; backward softmax the same, logits
//     4 T (R+1) + 2 T (R+1) d e + 2 T d e bytes, gather 3 T (R+1) d e.
// Backward: GEMMs 2x forward flops and bytes (dgrad + wgrad in one op), attention 2.5x
// flops and 2x bytes (sim/cost); elementwise kernels 2x bytes and their layer's factor of
// flops. With context parallel degree c, T and P are the rank's 1/c share.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/workload/model.hpp"
#include "sim/workload/op_graph.hpp"
#include "sim/workload/plan.hpp"

namespace strait::sim::workload::detail {

/// One rank's share of a batch, what the dense layers see.
struct BatchShape {
  double samples = 0;         // rows of per-sample layers
  double tokens = 0;          // rows of per-token layers (HSTU), this rank's share
  double pairs = 0;           // causal attention pairs, this rank's share
  double squares = 0;         // sum L^2, this rank's share (attention scores)
  double padded_pairs = 0;    // B L_max (L_max + 1) / 2 / c (attended_pairs in a window)
  double padded_squares = 0;  // B L_max^2 / c (score_elements in a window)
  double mean_length = 0;     // tokens per sample of the whole sequences
  double max_length = 0;      // L_max, the length every padded sample computes
  // Attention tile quantization per query tile (cost::attention_tile_factors) of the
  // lengths the kernel computes: the samples' (jagged) or L_max (padded).
  std::array<double, cost::kAttentionTileCount> tile_factor = {1, 1, 1, 1, 1};
  std::array<double, cost::kAttentionTileCount> padded_tile_factor = {1, 1, 1, 1, 1};
  bool operator==(const BatchShape&) const = default;
};

enum class CommGroup { kContextParallel, kExpert };

struct WorkItem {
  std::int32_t name = 0;  // index into DenseStack::names()
  bool is_comm = false;
  Kernel kernel;
  network::CollectiveOp op = network::CollectiveOp::kAllGather;
  CommClass comm_class = CommClass::kContextParallel;
  CommGroup group = CommGroup::kContextParallel;
  Bytes bytes = 0;
};

struct LayerWork {
  std::vector<WorkItem> forward, backward;  // in execution order
  double activation_bytes = 0;              // saved for backward, excluding attention scores
  double attention_bytes = 0;               // attention scores saved by this layer's kernel
  double attention_unfused_bytes = 0;       // sum L^2 h e: what an unfused jagged kernel keeps
  double attention_padded_bytes = 0;        // B L_max^2 h e: what an unfused padded one keeps
  double comm_buffer_bytes = 0;             // gathered K/V, MoE dispatch buffers
};

class DenseStack {
 public:
  DenseStack(const ModelConfig& model, const ParallelPlan& plan);

  int layers() const { return static_cast<int>(layers_.size()); }
  const std::string& layer_name(int i) const { return layers_[static_cast<std::size_t>(i)].name; }
  /// Parameters of layer i held by each rank (experts divided by expert parallelism).
  double layer_params(int i) const { return layers_[static_cast<std::size_t>(i)].params; }
  /// True when layer i's parameters sync over the expert replica group, not all ranks.
  bool expert_layer(int i) const {
    return layers_[static_cast<std::size_t>(i)].type == Type::kMoe && expert_parallel_ > 1;
  }
  double total_params() const;
  LayerWork work(int i, const BatchShape& shape) const;
  const std::vector<std::string>& names() const { return names_; }

 private:
  enum class Type { kLinear, kDot, kDcn, kHstu, kMoe, kLossBce, kLossSoftmax };
  struct Layer {
    Type type;
    std::string name;
    bool per_token = false;  // rows are tokens (else samples)
    int in = 0, out = 0;     // linear; dot: in = features, out = dim; dcn: in, out = rank
    Precision precision = Precision::kBf16;
    double params = 0;
    std::int32_t first_name = 0;  // names_ index of its first work item
  };
  std::int32_t add_names(std::initializer_list<std::string_view> suffixes,
                         const std::string& layer);
  /// A GEMM layer's op names: fwd, bwd, and with FP8 its casts (fp8_cast, fp8_cast_bwd).
  std::int32_t add_gemm_names(Precision p, const std::string& layer);
  void add_linear(const std::string& name, int in, int out, bool per_token, Precision p);
  // The layers in the order they run; those that change the width return the width they
  // hand on.
  int add_bottom_mlp(const ModelConfig& model);
  int add_hstu_layers(int sequence_dims);
  int add_interaction(const ModelConfig& model, int pooled_dims, int pooled_features, int width);
  void add_moe_layers(int top_in, bool per_token);
  int add_top_mlp(const ModelConfig& model, int top_in, bool per_token);
  void add_loss(const ModelConfig& model, int in, bool hstu);
  void hstu_layer(std::int32_t n0, Precision p, const BatchShape& s, LayerWork& w) const;
  void sampled_softmax(std::int32_t n0, int d, int negatives, Precision p, const BatchShape& s,
                       LayerWork& w) const;

  std::vector<Layer> layers_;
  std::vector<std::string> names_;
  HstuConfig hstu_;
  MoeConfig moe_;
  int expert_parallel_ = 1;
  int cp_degree_ = 1;
  CpMode cp_mode_ = CpMode::kAllGather;
};

/// Every layer's work for one batch shape, kept for the next caller with the same shape:
/// the ranks of a context-parallel group are built one after the other and share their
/// replica's batch, so each shape's layers would otherwise be worked out cp times (at
/// 131,072 ranks, HSTU layers' work was a tenth of the run).
class LayerWorkMemo {
 public:
  const std::vector<LayerWork>& of(const DenseStack& stack, const BatchShape& shape) {
    if (!valid_ || !(shape == shape_)) {
      work_.clear();
      for (int i = 0; i < stack.layers(); ++i) work_.push_back(stack.work(i, shape));
      shape_ = shape;
      valid_ = true;
    }
    return work_;
  }

 private:
  bool valid_ = false;
  BatchShape shape_;
  std::vector<LayerWork> work_;
};

}  // namespace strait::sim::workload::detail

#include "sim/workload/batch.hpp"

namespace strait::sim::workload::detail {

/// A rank's share of its replica's batch under context parallel degree `cp`.
inline BatchShape shape_of(const ReplicaBatch& b, int cp) {
  BatchShape s;
  const double c = cp, n = static_cast<double>(b.samples), lmax = b.max_length;
  s.samples = n / c;
  s.tokens = b.tokens / c;
  s.pairs = b.pairs / c;
  s.squares = b.squares / c;
  s.padded_pairs = b.padded_pairs / c;
  s.padded_squares = b.padded_squares / c;
  s.mean_length = n > 0 ? b.tokens / n : 0;
  s.max_length = lmax;
  s.tile_factor = b.tile_factor;
  const std::int32_t longest[] = {b.max_length};
  if (b.max_length > 0) s.padded_tile_factor = cost::attention_tile_factors(longest);
  return s;
}

}  // namespace strait::sim::workload::detail
