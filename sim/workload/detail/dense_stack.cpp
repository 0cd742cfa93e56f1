#include "sim/workload/detail/dense_stack.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace strait::sim::workload::detail {
namespace {

Kernel gemm(double m, double n, double k, Precision p) {
  Kernel g;
  g.kind = KernelKind::kGemm;
  g.precision = p;
  g.m = static_cast<std::int64_t>(m);
  g.n = static_cast<std::int64_t>(n);
  g.k = static_cast<std::int64_t>(k);
  g.flops = 2 * m * n * k;
  g.hbm_bytes = (m * k + k * n + m * n) * bytes_per_element(p);
  return g;
}

Kernel elementwise(double flops, double bytes, Precision p) {
  Kernel e;
  e.kind = KernelKind::kElementwise;
  e.precision = p;
  e.flops = flops;
  e.hbm_bytes = bytes;
  return e;
}

/// Backward of a forward kernel: `flop_factor` x flops, 2x bytes, same shape.
Kernel backward_of(Kernel k, double flop_factor) {
  k.flops *= flop_factor;
  k.hbm_bytes *= 2;
  return k;
}

WorkItem kernel_item(std::int32_t name, Kernel k) {
  WorkItem w;
  w.name = name;
  w.kernel = k;
  return w;
}

WorkItem comm_item(std::int32_t name, network::CollectiveOp op, CommClass c, CommGroup g,
                   double bytes) {
  WorkItem w;
  w.name = name;
  w.is_comm = true;
  w.op = op;
  w.comm_class = c;
  w.group = g;
  w.bytes = static_cast<Bytes>(bytes);
  return w;
}

}  // namespace

std::int32_t DenseStack::add_names(std::initializer_list<std::string_view> suffixes,
                                   const std::string& layer) {
  const auto first = static_cast<std::int32_t>(names_.size());
  for (auto s : suffixes) names_.push_back(fmt::format("{}/{}", layer, s));
  return first;
}

void DenseStack::add_linear(const std::string& name, int in, int out, bool per_token, Precision p) {
  Layer l{Type::kLinear, name, per_token, in, out, p, static_cast<double>(in) * out + out, 0};
  l.first_name = add_names({"fwd", "bwd"}, name);
  layers_.push_back(l);
}

DenseStack::DenseStack(const ModelConfig& model, const ParallelPlan& plan)
    : hstu_(model.hstu),
      moe_(model.moe),
      expert_parallel_(plan.expert.size),
      cp_degree_(plan.cp_degree),
      cp_mode_(plan.cp_mode) {
  int pooled_dims = 0, pooled_features = 0, sequence_dims = 0;
  for (const auto& t : model.tables) {
    if (t.pooling == Pooling::kSequence) {
      sequence_dims += t.dim;
    } else {
      pooled_dims += t.dim;
      ++pooled_features;
    }
  }
  int width = model.dense_features;
  for (std::size_t i = 0; i < model.bottom_mlp.layers.size(); ++i) {
    add_linear(fmt::format("bottom_mlp.{}", i), width, model.bottom_mlp.layers[i], false,
               model.bottom_mlp.precision);
    width = model.bottom_mlp.layers[i];
  }
  const bool hstu = model.has_hstu();
  int top_in = 0;
  if (hstu) {
    const int d = hstu_.model_dim;
    if (sequence_dims != d) add_linear("input_proj", sequence_dims, d, true, hstu_.precision);
    const double h = hstu_.heads, dqk = hstu_.head_dim, dv = hstu_.linear_dim;
    for (int i = 0; i < hstu_.layers; ++i) {
      Layer l{Type::kHstu, fmt::format("hstu.{}", i), true, d, d, hstu_.precision, 0, 0};
      l.params =
          d * h * (2 * dqk + 2 * dv) + h * dv * d + 2.0 * d + (hstu_.relative_bias ? h * 256 : 0);
      l.first_name =
          add_names({"norm_in", "uvqk", "cp_kv_all_gather", "cp_qkv_all_to_all", "attention",
                     "cp_out_all_to_all", "norm_out", "out", "out_bwd", "norm_out_bwd",
                     "cp_dout_all_to_all", "attention_bwd", "cp_dkv_reduce_scatter",
                     "cp_dqkv_all_to_all", "uvqk_bwd", "norm_in_bwd"},
                    l.name);
      layers_.push_back(l);
    }
    top_in = d;
  } else {
    const int features = pooled_features + (model.bottom_mlp.layers.empty() ? 0 : 1);
    const int concat =
        pooled_dims + (model.bottom_mlp.layers.empty() ? model.dense_features : width);
    switch (model.interaction.type) {
      case InteractionConfig::Type::kDot: {
        const int dim = model.bottom_mlp.layers.empty()
                            ? (pooled_features ? pooled_dims / pooled_features : 1)
                            : width;
        Layer l{Type::kDot, "interaction", false, features, dim, model.interaction.precision, 0, 0};
        l.first_name = add_names({"fwd", "bwd"}, l.name);
        layers_.push_back(l);
        top_in = dim + features * (features - 1) / 2;
        break;
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
          l.first_name = add_names({"fwd", "bwd"}, l.name);
          layers_.push_back(l);
        }
        top_in = concat;
        break;
      case InteractionConfig::Type::kNone:
        top_in = concat;
        break;
    }
  }
  for (int i = 0; i < moe_.layers; ++i) {
    Layer l{Type::kMoe, fmt::format("moe.{}", i), hstu, top_in, top_in, moe_.precision, 0, 0};
    l.params =
        static_cast<double>(moe_.experts) / expert_parallel_ * 2.0 * top_in * moe_.expert_hidden +
        static_cast<double>(top_in) * moe_.experts;
    l.first_name = add_names({"router", "dispatch", "experts", "combine", "combine_bwd",
                              "experts_bwd", "dispatch_bwd", "router_bwd"},
                             l.name);
    layers_.push_back(l);
  }
  int w = top_in;
  for (std::size_t i = 0; i < model.top_mlp.layers.size(); ++i) {
    add_linear(fmt::format("top_mlp.{}", i), w, model.top_mlp.layers[i], hstu,
               model.top_mlp.precision);
    w = model.top_mlp.layers[i];
  }
  Layer loss{hstu ? Type::kLossSoftmax : Type::kLossBce,       "loss", hstu, w, hstu_.negatives,
             hstu ? hstu_.precision : model.top_mlp.precision, 0,      0};
  loss.first_name = add_names({"fwd", "bwd"}, "loss");
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
      const Kernel f = gemm(rows, l.out, l.in, l.precision);
      w.forward.push_back(kernel_item(n0, f));
      w.backward.push_back(kernel_item(n0 + 1, backward_of(f, 2)));
      w.activation_bytes = rows * (l.in + l.out) * e;
      break;
    }
    case Type::kDot: {
      Kernel f = gemm(s.samples * l.in, l.in, l.out, l.precision);
      f.hbm_bytes = (s.samples * l.in * l.out + s.samples * l.in * l.in) * e;
      w.forward.push_back(kernel_item(n0, f));
      w.backward.push_back(kernel_item(n0 + 1, backward_of(f, 2)));
      w.activation_bytes = s.samples * l.in * (l.out + l.in) * e;
      break;
    }
    case Type::kDcn: {
      Kernel f = gemm(s.samples, l.out, l.in, l.precision);
      f.flops *= 2;  // V^T x then U (.)
      f.hbm_bytes = (3 * s.samples * l.in + 2.0 * l.in * l.out + s.samples * l.out) * e;
      w.forward.push_back(kernel_item(n0, f));
      w.backward.push_back(kernel_item(n0 + 1, backward_of(f, 2)));
      w.activation_bytes = s.samples * (3.0 * l.in + l.out) * e;
      break;
    }
    case Type::kHstu: {
      const double T = s.tokens, d = hstu_.model_dim, h = hstu_.heads, dqk = hstu_.head_dim,
                   dv = hstu_.linear_dim;
      const Kernel norm_in = elementwise(5 * T * d, 2 * T * d * e, l.precision);
      const Kernel uvqk = gemm(T, h * (2 * dqk + 2 * dv), d, l.precision);
      Kernel attn;
      attn.kind = hstu_.padded ? KernelKind::kPaddedAttention : KernelKind::kJaggedAttention;
      attn.precision = l.precision;
      attn.flops = 2 * h * (dqk + dv) * (hstu_.padded ? s.padded_pairs : s.pairs);
      // Q, K, V, U read and the output written, for every token the kernel touches: the
      // padded layout touches B x L_max of them.
      const double touched = hstu_.padded ? s.samples * s.max_length : T;
      attn.hbm_bytes = touched * h * (2 * dqk + 2 * dv) * e + touched * h * dv * e;
      // A padded kernel computes every sample at L_max: its efficiency is that length's.
      attn.mean_length = hstu_.padded ? s.max_length : s.mean_length;
      attn.heads = hstu_.heads;
      attn.head_dim = hstu_.head_dim;
      const Kernel norm_out = elementwise(8 * T * h * dv, 3 * T * h * dv * e, l.precision);
      const Kernel out = gemm(T, d, h * dv, l.precision);
      const int c = cp_degree_;
      const bool cp = c > 1, gather = cp_mode_ == CpMode::kAllGather;
      using network::CollectiveOp;
      const auto cls = CommClass::kContextParallel;
      const auto grp = CommGroup::kContextParallel;
      w.forward.push_back(kernel_item(n0, norm_in));
      w.forward.push_back(kernel_item(n0 + 1, uvqk));
      // all_gather: K and V of every CP rank (all-gather output = c x local).
      // all_to_all: Q, K, V re-split from sequence to heads, and the output back.
      if (cp && gather)
        w.forward.push_back(
            comm_item(n0 + 2, CollectiveOp::kAllGather, cls, grp, c * T * h * (dqk + dv) * e));
      if (cp && !gather)
        w.forward.push_back(
            comm_item(n0 + 3, CollectiveOp::kAllToAll, cls, grp, T * h * (2 * dqk + dv) * e));
      w.forward.push_back(kernel_item(n0 + 4, attn));
      if (cp && !gather)
        w.forward.push_back(comm_item(n0 + 5, CollectiveOp::kAllToAll, cls, grp, T * h * dv * e));
      w.forward.push_back(kernel_item(n0 + 6, norm_out));
      w.forward.push_back(kernel_item(n0 + 7, out));
      w.backward.push_back(kernel_item(n0 + 8, backward_of(out, 2)));
      w.backward.push_back(kernel_item(n0 + 9, backward_of(norm_out, 2)));
      if (cp && !gather)
        w.backward.push_back(comm_item(n0 + 10, CollectiveOp::kAllToAll, cls, grp, T * h * dv * e));
      Kernel attn_bwd = backward_of(attn, 2.5);
      attn_bwd.kind = cost::backward_kind(attn.kind);
      w.backward.push_back(kernel_item(n0 + 11, attn_bwd));
      if (cp && gather)
        w.backward.push_back(
            comm_item(n0 + 12, CollectiveOp::kReduceScatter, cls, grp, c * T * h * (dqk + dv) * e));
      if (cp && !gather)
        w.backward.push_back(
            comm_item(n0 + 13, CollectiveOp::kAllToAll, cls, grp, T * h * (2 * dqk + dv) * e));
      w.backward.push_back(kernel_item(n0 + 14, backward_of(uvqk, 2)));
      w.backward.push_back(kernel_item(n0 + 15, backward_of(norm_in, 2)));
      // Saved: input, normed input, U V Q K, attention output, normed output.
      w.activation_bytes = T * (2 * d + h * (2 * dqk + 2 * dv) + 2 * h * dv) * e;
      w.attention_bytes = s.squares * h * e;
      w.attention_padded_bytes = s.padded_squares * h * e;
      if (cp && gather) w.comm_buffer_bytes = c * T * h * (dqk + dv) * e;
      break;
    }
    case Type::kMoe: {
      const double d = l.in, k = moe_.top_k, H = moe_.expert_hidden, routed = rows * k;
      const Kernel router = gemm(rows, moe_.experts, d, l.precision);
      Kernel experts = gemm(routed, H, d, l.precision);
      experts.flops *= 2;  // up and down projections
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
      w.backward.push_back(kernel_item(n0 + 5, backward_of(experts, 2)));
      if (ep)
        w.backward.push_back(
            comm_item(n0 + 6, CollectiveOp::kAllToAll, CommClass::kMoe, CommGroup::kExpert, a2a));
      w.backward.push_back(kernel_item(n0 + 7, backward_of(router, 2)));
      w.activation_bytes = (rows * d + 2 * routed * d + routed * H) * e;
      w.comm_buffer_bytes = ep ? 2 * a2a : 0;
      break;
    }
    case Type::kLossBce: {
      const Kernel f = elementwise(10 * s.samples * l.in, 2 * s.samples * l.in * e, l.precision);
      w.forward.push_back(kernel_item(n0, f));
      w.backward.push_back(kernel_item(n0 + 1, backward_of(f, 1)));
      w.activation_bytes = s.samples * l.in * e;
      break;
    }
    case Type::kLossSoftmax: {
      const Kernel f = gemm(s.tokens, l.out, l.in, l.precision);
      w.forward.push_back(kernel_item(n0, f));
      w.backward.push_back(kernel_item(n0 + 1, backward_of(f, 2)));
      w.activation_bytes = s.tokens * (l.in + l.out) * e;
      break;
    }
  }
  return w;
}

}  // namespace strait::sim::workload::detail
