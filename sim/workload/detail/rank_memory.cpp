#include "sim/workload/detail/rank_memory.hpp"

#include <algorithm>

namespace strait::sim::workload::detail {

std::vector<std::unique_ptr<SparseTraffic>> group_traffic(
    const TrainingScenario& sc, const ShardMap& map,
    const std::vector<std::vector<ReplicaBatch>>& batches, int steps, int block) {
  const Layout& L = sc.layout;
  const int M = L.sparse.size;
  std::vector<std::unique_ptr<SparseTraffic>> out;
  for (int s = 0; s < steps; ++s) {
    std::vector<std::vector<double>> ids(static_cast<std::size_t>(M));
    std::vector<double> samples(static_cast<std::size_t>(M));
    for (int i = 0; i < M; ++i) {
      const auto& b = batches[static_cast<std::size_t>(s)]
                             [static_cast<std::size_t>((block * M + i) / L.cp.size)];
      for (double x : b.ids) ids[static_cast<std::size_t>(i)].push_back(x / L.cp.size);
      samples[static_cast<std::size_t>(i)] = static_cast<double>(b.samples) / L.cp.size;
    }
    out.push_back(std::make_unique<SparseTraffic>(sc.model, sc.data, map, std::move(ids),
                                                  std::move(samples), sc.plan.comm_precision));
  }
  return out;
}

RankMemoryModel::RankMemoryModel(const TrainingScenario& sc, const DenseStack& stack,
                                 const ShardMap& map, int steps)
    : sc_(sc), stack_(stack), map_(map), steps_(steps) {
  const ModelConfig& model = sc.model;
  params_ = stack.total_params();
  for (int i = 0; i < stack.layers(); ++i)
    largest_layer_ = std::max(largest_layer_, stack.layer_params(i));
  for (int t : map.data_parallel_tables) {
    dp_elems_ += static_cast<double>(model.tables[static_cast<std::size_t>(t)].rows) *
                 model.tables[static_cast<std::size_t>(t)].dim;
    dp_rows_ += static_cast<double>(model.tables[static_cast<std::size_t>(t)].rows);
  }
  for (std::size_t t = 0; t < map.hot_rows.size(); ++t) {
    dp_elems_ += static_cast<double>(map.hot_rows[t]) * model.tables[t].dim;
    dp_rows_ += static_cast<double>(map.hot_rows[t]);
  }
}

std::vector<double> RankMemoryModel::output_buffers(
    const std::vector<const SparseTraffic*>& traffic, const std::vector<int>& members) const {
  const int M = sc_.layout.sparse.size;
  std::vector<double> out(static_cast<std::size_t>(M), 0.0);
  if (M <= 1 || !map_.has_sharded()) return out;
  for (const SparseTraffic* t : traffic) {
    for (const int i : members) {
      out[static_cast<std::size_t>(i)] =
          std::max(out[static_cast<std::size_t>(i)], t->output_buffer_bytes(i));
    }
  }
  return out;
}

RankMemory RankMemoryModel::rank(int rank, int member, double output_buffer,
                                 const std::vector<std::vector<ReplicaBatch>>& batches,
                                 std::vector<LayerWorkMemo>& layer_work) const {
  const Layout& L = sc_.layout;
  const ModelConfig& model = sc_.model;
  const ParallelPlan& plan = sc_.plan;
  const double e_param = bytes_per_element(model.param_dtype);
  const double e_w = bytes_per_element(model.embedding_dtype);
  const int e_opt = bytes_per_element(model.embedding_optimizer_dtype);
  const bool fsdp = plan.dense == DenseParallelism::kFsdp;
  const double shard = fsdp ? 1.0 / L.fsdp.size : 1.0;

  RankMemory rm;
  rm.rank = rank;
  const double elems = map_.weight_elements(model, member) + dp_elems_;
  const double rows = std::max(1.0, map_.rows(model, member) + dp_rows_);
  double act = 0, scores = 0, jagged = 0, padded = 0, emb_act = 0, layer_buffer = 0, ids_bytes = 0;
  for (int s = 0; s < steps_; ++s) {
    const auto& b =
        batches[static_cast<std::size_t>(s)][static_cast<std::size_t>(rank / L.cp.size)];
    const auto shape = shape_of(b, L.cp.size);
    const auto& work = layer_work[static_cast<std::size_t>(s)].of(stack_, shape);
    double a = 0, sc_b = 0, sc_j = 0, sc_p = 0, buf = 0;
    for (int l = 0; l < stack_.layers(); ++l) {
      const auto& w = work[static_cast<std::size_t>(l)];
      a += w.activation_bytes;
      sc_b += w.attention_bytes;
      sc_j += w.attention_unfused_bytes;
      sc_p += w.attention_padded_bytes;
      buf = std::max(buf, w.comm_buffer_bytes);
    }
    double e = 0, idb = 0;
    for (std::size_t t = 0; t < model.tables.size(); ++t) {
      const bool seq = model.tables[t].pooling == Pooling::kSequence;
      e += (seq ? shape.tokens : shape.samples) * model.tables[t].dim * e_w;
      idb += b.ids[t] / L.cp.size * 8;
    }
    act = std::max(act, a);
    scores = std::max(scores, sc_b);
    jagged = std::max(jagged, sc_j);
    padded = std::max(padded, sc_p);
    layer_buffer = std::max(layer_buffer, buf);
    emb_act = std::max(emb_act, e);
    ids_bytes = std::max(ids_bytes, idb);
  }
  const double dense_params = params_ * e_param * shard + (fsdp ? largest_layer_ * e_param : 0);
  // DDP copies gradients into buckets, two in flight; grouped sync all-reduces the
  // gradients where they lie (one contiguous buffer, HugeCTR's grouped wgrad).
  const double ddp_buffers =
      fsdp || plan.grad_sync == GradSync::kGrouped
          ? 0
          : 2.0 * std::min(static_cast<double>(plan.bucket_size), params_ * e_param);
  rm.terms = {
      {"dense_params", dense_params},
      {"dense_grads", params_ * e_param * shard},
      {"dense_optimizer", optimizer_state_bytes(model.dense_optimizer, params_ * shard, 1, 4)},
      {"embedding_weights", elems * e_w},
      {"embedding_optimizer",
       optimizer_state_bytes(model.embedding_optimizer, rows, elems / rows, e_opt)},
      {"embedding_activations", emb_act},
      {"activations", act},
      {"attention_scores", scores},
      {"comm_buffers", output_buffer + ddp_buffers + layer_buffer},
      {"pipeline_buffers",
       (plan.schedule.pipeline_depth - 1) *
           (ids_bytes + (plan.schedule.pipelined == Pipelined::kInputDist ? 0 : emb_act))},
  };
  rm.attention_jagged_bytes = jagged;
  rm.attention_padded_bytes = padded;
  return rm;
}

}  // namespace strait::sim::workload::detail
