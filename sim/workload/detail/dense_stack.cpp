#include "sim/workload/detail/dense_stack.hpp"

#include "sim/workload/detail/work_items.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace strait::sim::workload::detail {

std::int32_t DenseStack::add_names(std::initializer_list<std::string_view> suffixes,
                                   const std::string& layer) {
  const auto first = static_cast<std::int32_t>(names_.size());
  for (auto s : suffixes) names_.push_back(fmt::format("{}/{}", layer, s));
  return first;
}

void DenseStack::add_linear(const std::string& name, int in, int out, bool per_token, Precision p) {
  Layer l{Type::kLinear, name, per_token, in, out, p, static_cast<double>(in) * out + out, 0};
  l.first_name = add_gemm_names(p, name);
  layers_.push_back(l);
}

std::int32_t DenseStack::add_gemm_names(Precision p, const std::string& layer) {
  return p == Precision::kFp8 ? add_names({"fwd", "bwd", "fp8_cast", "fp8_cast_bwd"}, layer)
                              : add_names({"fwd", "bwd"}, layer);
}

namespace {

// FP8 GEMM layers as LoKA (Meta, 2026) and Transformer Engine run them: the GEMM reads FP8
// operands, and around it the casts with tensorwise current scaling (an amax pass, then
// scale and convert), each its own memory-bound kernel, at 4 flops per element:
//   forward   each input A [m, k], bf16 from the layer before: read twice (2 + 2 B), written
//             as FP8 and as the FP8 transpose the weight gradient reads (1 + 1 B): 6 m k B;
//             each weight [k, n], fp32 master weights that change every step: 4 + 4 B read,
//             1 + 1 B written: 10 k n B
//   backward  each output gradient dY [m, n], bf16: 6 m n B
// so a small GEMM (few rows, or a narrow layer) can take longer in FP8 than in bf16.
Kernel fp8_forward_casts(double input_elements, double weight_elements) {
  return elementwise(4 * (input_elements + weight_elements),
                     6 * input_elements + 10 * weight_elements, Precision::kBf16);
}

Kernel fp8_backward_casts(double gradient_elements) {
  return elementwise(4 * gradient_elements, 6 * gradient_elements, Precision::kBf16);
}

/// A GEMM layer's forward `f` (name n0) and its backward (n0 + 1); in FP8 each with its
/// casts before it (n0 + 2, n0 + 3: add_gemm_names) over the GEMMs' input, weight and
/// output-gradient elements.
void add_gemm_items(std::int32_t n0, const Kernel& f, double inputs, double weights,
                    double gradients, LayerWork& w) {
  const bool fp8 = f.precision == Precision::kFp8;
  if (fp8) w.forward.push_back(kernel_item(n0 + 2, fp8_forward_casts(inputs, weights)));
  w.forward.push_back(kernel_item(n0, f));
  if (fp8) w.backward.push_back(kernel_item(n0 + 3, fp8_backward_casts(gradients)));
  w.backward.push_back(kernel_item(n0 + 1, cost::gemm_backward_work(f)));
}

// Widths the model's embedding tables feed the dense stack.
struct TableWidths {
  int pooled_dims = 0;      // summed dims of the pooled tables
  int pooled_features = 0;  // pooled tables
  int sequence_dims = 0;    // summed dims of the sequence tables (HSTU's input)
};

TableWidths table_widths(const ModelConfig& model) {
  TableWidths w;
  for (const auto& t : model.tables) {
    if (t.pooling == Pooling::kSequence) {
      w.sequence_dims += t.dim;
    } else {
      w.pooled_dims += t.dim;
      ++w.pooled_features;
    }
  }
  return w;
}

}  // namespace

DenseStack::DenseStack(const ModelConfig& model, const ParallelPlan& plan)
    : hstu_(model.hstu),
      moe_(model.moe),
      expert_parallel_(plan.expert.size),
      cp_degree_(plan.cp_degree),
      cp_mode_(plan.cp_mode) {
  const TableWidths tables = table_widths(model);
  const int width = add_bottom_mlp(model);
  const bool hstu = model.has_hstu();
  const int top_in =
      hstu ? add_hstu_layers(tables.sequence_dims)
           : add_interaction(model, tables.pooled_dims, tables.pooled_features, width);
  add_moe_layers(top_in, hstu);
  const int w = add_top_mlp(model, top_in, hstu);
  add_loss(model, w, hstu);
}

int DenseStack::add_bottom_mlp(const ModelConfig& model) {
  int width = model.dense_features;
  for (std::size_t i = 0; i < model.bottom_mlp.layers.size(); ++i) {
    add_linear(fmt::format("bottom_mlp.{}", i), width, model.bottom_mlp.layers[i], false,
               model.bottom_mlp.precision);
    width = model.bottom_mlp.layers[i];
  }
  return width;
}

int DenseStack::add_hstu_layers(int sequence_dims) {
  const int d = hstu_.model_dim;
  if (sequence_dims != d) add_linear("input_proj", sequence_dims, d, true, hstu_.precision);
  const double h = hstu_.heads, dqk = hstu_.head_dim, dv = hstu_.linear_dim;
  for (int i = 0; i < hstu_.layers; ++i) {
    Layer l{Type::kHstu, fmt::format("hstu.{}", i), true, d, d, hstu_.precision, 0, 0};
    l.params =
        d * h * (2 * dqk + 2 * dv) + h * dv * d + 2.0 * d + (hstu_.relative_bias ? h * 256 : 0);
    l.first_name = add_names({"norm_in",
                              "uvqk",
                              "silu",
                              "rel_bias",
                              "jagged_to_padded",
                              "cp_kv_all_gather",
                              "cp_qkv_all_to_all",
                              "attention",
                              "padded_to_jagged",
                              "cp_out_all_to_all",
                              "norm_out",
                              "dropout",
                              "out",
                              "residual",
                              "out_bwd",
                              "dropout_bwd",
                              "norm_out_bwd",
                              "cp_dout_all_to_all",
                              "padded_to_jagged_bwd",
                              "attention_bwd",
                              "jagged_to_padded_bwd",
                              "cp_dkv_reduce_scatter",
                              "cp_dqkv_all_to_all",
                              "rel_bias_bwd",
                              "silu_bwd",
                              "uvqk_bwd",
                              "norm_in_bwd",
                              "residual_bwd"},
                             l.name);
    layers_.push_back(l);
  }
  return d;
}

int DenseStack::add_interaction(const ModelConfig& model, int pooled_dims, int pooled_features,
                                int width) {
  const int features = pooled_features + (model.bottom_mlp.layers.empty() ? 0 : 1);
  const int concat = pooled_dims + (model.bottom_mlp.layers.empty() ? model.dense_features : width);
  switch (model.interaction.type) {
    case InteractionConfig::Type::kDot: {
      const int dim = model.bottom_mlp.layers.empty()
                          ? (pooled_features ? pooled_dims / pooled_features : 1)
                          : width;
      Layer l{Type::kDot, "interaction", false, features, dim, model.interaction.precision, 0, 0};
      l.first_name = add_names({"fwd", "bwd"}, l.name);
      layers_.push_back(l);
      return dim + features * (features - 1) / 2;
    }
    case InteractionConfig::Type::kDcn:
      for (int i = 0; i < model.interaction.layers; ++i) {
        Layer l{Type::kDcn,
                fmt::format("dcn.{}", i),
                false,
                concat,
                model.interaction.low_rank,
                model.interaction.precision,
                2.0 * concat * model.interaction.low_rank + concat,
                0};
        l.first_name = add_gemm_names(l.precision, l.name);
        layers_.push_back(l);
      }
      return concat;
    case InteractionConfig::Type::kNone:
      return concat;
  }
  return 0;
}

void DenseStack::add_moe_layers(int top_in, bool per_token) {
  for (int i = 0; i < moe_.layers; ++i) {
    Layer l{Type::kMoe, fmt::format("moe.{}", i), per_token, top_in, top_in, moe_.precision, 0, 0};
    l.params =
        static_cast<double>(moe_.experts) / expert_parallel_ * 2.0 * top_in * moe_.expert_hidden +
        static_cast<double>(top_in) * moe_.experts;
    l.first_name = add_names({"router", "dispatch", "experts", "combine", "combine_bwd",
                              "experts_bwd", "dispatch_bwd", "router_bwd"},
                             l.name);
    layers_.push_back(l);
  }
}

int DenseStack::add_top_mlp(const ModelConfig& model, int top_in, bool per_token) {
  int w = top_in;
  for (std::size_t i = 0; i < model.top_mlp.layers.size(); ++i) {
    add_linear(fmt::format("top_mlp.{}", i), w, model.top_mlp.layers[i], per_token,
               model.top_mlp.precision);
    w = model.top_mlp.layers[i];
  }
  return w;
}

void DenseStack::add_loss(const ModelConfig& model, int in, bool hstu) {
  Layer loss{hstu ? Type::kLossSoftmax : Type::kLossBce,       "loss", hstu, in, hstu_.negatives,
             hstu ? hstu_.precision : model.top_mlp.precision, 0,      0};
  loss.first_name = hstu ? add_names({"negatives_gather", "logits", "softmax", "softmax_bwd",
                                      "logits_bwd", "negatives_gather_bwd"},
                                     "loss")
                         : add_names({"fwd", "bwd"}, "loss");
  layers_.push_back(loss);
}

double DenseStack::total_params() const {
  double p = 0;
  for (const auto& l : layers_) p += l.params;
  return p;
}

LayerWork DenseStack::work(int i, const BatchShape& s) const {
  const Layer& l = layers_[static_cast<std::size_t>(i)];
  const double e = bytes_per_element(l.precision);
  const double rows = l.per_token ? s.tokens : s.samples;
  const std::int32_t n0 = l.first_name;
  LayerWork w;
  switch (l.type) {
    case Type::kLinear: {
      const double in = l.in, out = l.out;
      add_gemm_items(n0, gemm(rows, out, in, l.precision), rows * in, in * out, rows * out, w);
      w.activation_bytes = rows * (l.in + l.out) * e;
      break;
    }
    case Type::kDot: {
      // A batched GEMM of X X^T: X read once, Z written.
      Kernel f = gemm(s.samples * l.in, l.in, l.out, l.precision);
      f.hbm_bytes = (s.samples * l.in * l.out + s.samples * l.in * l.in) * e;
      w.forward.push_back(kernel_item(n0, f));
      w.backward.push_back(kernel_item(n0 + 1, cost::gemm_backward_work(f)));
      w.activation_bytes = s.samples * l.in * (l.out + l.in) * e;
      break;
    }
    case Type::kDcn: {
      // V^T x then U (.): two GEMMs of this shape in one op, the cross layer's bytes.
      Kernel f = gemm(s.samples, l.out, l.in, l.precision, 2);
      f.hbm_bytes = (3 * s.samples * l.in + 2.0 * l.in * l.out + s.samples * l.out) * e;
      // FP8: the inputs x [m, in] and V^T x [m, r], the weights V and U (in r each); the
      // output gradients of both GEMMs, [m, r] and [m, in].
      const double m = s.samples, in = l.in, r = l.out;
      add_gemm_items(n0, f, m * (in + r), 2 * in * r, m * (in + r), w);
      w.activation_bytes = s.samples * (3.0 * l.in + l.out) * e;
      break;
    }
    case Type::kHstu:
      hstu_layer(n0, l.precision, s, w);
      break;
    case Type::kMoe: {
      const double d = l.in, k = moe_.top_k, H = moe_.expert_hidden, routed = rows * k;
      const Kernel router = gemm(rows, moe_.experts, d, l.precision);
      Kernel experts = gemm(routed, H, d, l.precision, 2);  // up and down projections
      experts.hbm_bytes =
          (2 * routed * d + 2 * routed * H + 2.0 * moe_.experts / expert_parallel_ * d * H) * e;
      const double a2a = routed * d * e;
      using network::CollectiveOp;
      const bool ep = expert_parallel_ > 1;
      w.forward.push_back(kernel_item(n0, router));
      if (ep)
        w.forward.push_back(
            comm_item(n0 + 1, CollectiveOp::kAllToAll, CommClass::kMoe, CommGroup::kExpert, a2a));
      w.forward.push_back(kernel_item(n0 + 2, experts));
      if (ep)
        w.forward.push_back(
            comm_item(n0 + 3, CollectiveOp::kAllToAll, CommClass::kMoe, CommGroup::kExpert, a2a));
      if (ep)
        w.backward.push_back(
            comm_item(n0 + 4, CollectiveOp::kAllToAll, CommClass::kMoe, CommGroup::kExpert, a2a));
      w.backward.push_back(kernel_item(n0 + 5, cost::gemm_backward_work(experts)));
      if (ep)
        w.backward.push_back(
            comm_item(n0 + 6, CollectiveOp::kAllToAll, CommClass::kMoe, CommGroup::kExpert, a2a));
      w.backward.push_back(kernel_item(n0 + 7, cost::gemm_backward_work(router)));
      w.activation_bytes = (rows * d + 2 * routed * d + routed * H) * e;
      w.comm_buffer_bytes = ep ? 2 * a2a : 0;
      break;
    }
    case Type::kLossBce: {
      const Kernel f = elementwise(10 * s.samples * l.in, 2 * s.samples * l.in * e, l.precision);
      w.forward.push_back(kernel_item(n0, f));
      w.backward.push_back(kernel_item(n0 + 1, cost::elementwise_backward_work(f, 1)));
      w.activation_bytes = s.samples * l.in * e;
      break;
    }
    case Type::kLossSoftmax:
      sampled_softmax(n0, l.in, l.out, l.precision, s, w);
      break;
  }
  return w;
}

}  // namespace strait::sim::workload::detail
