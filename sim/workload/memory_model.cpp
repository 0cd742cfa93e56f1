#include "sim/workload/memory_model.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/core/error.hpp"

#include "sim/workload/batch.hpp"
#include "sim/workload/detail/dense_stack.hpp"
#include "sim/workload/detail/sparse_traffic.hpp"
#include "sim/workload/sharding.hpp"

namespace strait::sim::workload {

double RankMemory::total() const {
  double t = 0;
  for (const auto& x : terms) t += x.bytes;
  return t;
}

const MemoryTerm& RankMemory::dominant() const {
  return *std::max_element(
      terms.begin(), terms.end(),
      [](const MemoryTerm& a, const MemoryTerm& b) { return a.bytes < b.bytes; });
}

double RankMemory::term(const std::string& name) const {
  for (const auto& x : terms) {
    if (x.name == name) return x.bytes;
  }
  return 0;
}

MemoryFit MemoryReport::fits(double capacity) const {
  MemoryFit f;
  if (ranks.empty()) return f;
  const auto worst = std::max_element(
      ranks.begin(), ranks.end(),
      [](const RankMemory& a, const RankMemory& b) { return a.total() < b.total(); });
  f.rank = worst->rank;
  f.total = worst->total();
  f.excess = f.total - capacity;
  f.fits = f.excess <= 0;
  if (worst->terms.empty()) return f;
  f.dominant = worst->dominant().name;
  f.dominant_bytes = worst->dominant().bytes;
  return f;
}

MemoryReport memory_per_rank(const TrainingScenario& sc, int representative_ranks) {
  return memory_per_rank(sc, sample_steps(sc, sc.steps), representative_ranks);
}

MemoryReport memory_per_rank(const TrainingScenario& sc,
                             const std::vector<std::vector<ReplicaBatch>>& batches,
                             int representative_ranks) {
  const Layout& L = sc.layout;
  const ModelConfig& model = sc.model;
  const ParallelPlan& plan = sc.plan;
  const int host_size =
      sc.cluster.hosts().empty() ? 1 : static_cast<int>(sc.cluster.hosts().front().gpus.size());
  const detail::DenseStack stack(model, plan);
  const ShardMap map = ShardMap::build(model, plan, L.sparse.size, host_size);
  if (static_cast<int>(batches.size()) < sc.steps)
    throw Error(fmt::format("memory: {} steps' batches for a scenario of {} steps", batches.size(),
                            sc.steps));
  std::vector<detail::LayerWorkMemo> layer_work(static_cast<std::size_t>(sc.steps));

  const double e_param = bytes_per_element(model.param_dtype);
  const double e_w = bytes_per_element(model.embedding_dtype);
  const int e_opt = bytes_per_element(model.embedding_optimizer_dtype);
  const bool fsdp = plan.dense == DenseParallelism::kFsdp;
  double params = stack.total_params(), largest_layer = 0;
  for (int i = 0; i < stack.layers(); ++i)
    largest_layer = std::max(largest_layer, stack.layer_params(i));
  const double shard = fsdp ? 1.0 / L.fsdp.size : 1.0;
  double dp_elems = 0, dp_rows = 0;
  for (int t : map.data_parallel_tables) {
    dp_elems += static_cast<double>(model.tables[static_cast<std::size_t>(t)].rows) *
                model.tables[static_cast<std::size_t>(t)].dim;
    dp_rows += static_cast<double>(model.tables[static_cast<std::size_t>(t)].rows);
  }
  for (std::size_t t = 0; t < map.hot_rows.size(); ++t) {  // hybrid tables' hot rows
    dp_elems += static_cast<double>(map.hot_rows[t]) * model.tables[t].dim;
    dp_rows += static_cast<double>(map.hot_rows[t]);
  }

  MemoryReport report;
  report.ranks.resize(static_cast<std::size_t>(L.world));
  const int M = L.sparse.size;
  for (int r = 0; r < L.world; ++r) report.ranks[static_cast<std::size_t>(r)].rank = r;
  for (int block : representative_blocks(sc, batches.front(), representative_ranks)) {
    std::vector<double> out_buffers(static_cast<std::size_t>(M), 0.0);
    for (int s = 0; s < sc.steps; ++s) {
      std::vector<std::vector<double>> ids(static_cast<std::size_t>(M));
      std::vector<double> samples(static_cast<std::size_t>(M));
      for (int i = 0; i < M; ++i) {
        const auto& b = batches[static_cast<std::size_t>(s)]
                               [static_cast<std::size_t>((block * M + i) / L.cp.size)];
        for (double x : b.ids) ids[static_cast<std::size_t>(i)].push_back(x / L.cp.size);
        samples[static_cast<std::size_t>(i)] = static_cast<double>(b.samples) / L.cp.size;
      }
      const detail::SparseTraffic traffic(model, sc.data, map, std::move(ids), std::move(samples),
                                          plan.comm_precision);
      if (M > 1 && map.has_sharded()) {
        for (int i = 0; i < M; ++i) {
          out_buffers[static_cast<std::size_t>(i)] =
              std::max(out_buffers[static_cast<std::size_t>(i)], traffic.output_buffer_bytes(i));
        }
      }
    }
    for (int i = 0; i < M; ++i) {
      const int rank = block * M + i;
      RankMemory& rm = report.ranks[static_cast<std::size_t>(rank)];
      rm.rank = rank;
      const double elems = map.weight_elements(model, i) + dp_elems;
      const double rows = std::max(1.0, map.rows(model, i) + dp_rows);
      double act = 0, scores = 0, jagged = 0, padded = 0, emb_act = 0, layer_buffer = 0,
             ids_bytes = 0;
      std::vector<MemoryTerm> layers(static_cast<std::size_t>(stack.layers()));
      for (int s = 0; s < sc.steps; ++s) {
        const auto& b =
            batches[static_cast<std::size_t>(s)][static_cast<std::size_t>(rank / L.cp.size)];
        const auto shape = detail::shape_of(b, L.cp.size);
        const auto& work = layer_work[static_cast<std::size_t>(s)].of(stack, shape);
        double a = 0, sc_b = 0, sc_j = 0, sc_p = 0, buf = 0;
        for (int l = 0; l < stack.layers(); ++l) {
          const auto& w = work[static_cast<std::size_t>(l)];
          a += w.activation_bytes;
          sc_b += w.attention_bytes;
          sc_j += w.attention_unfused_bytes;
          sc_p += w.attention_padded_bytes;
          buf = std::max(buf, w.comm_buffer_bytes);
          auto& lt = layers[static_cast<std::size_t>(l)];
          lt.name = stack.layer_name(l);
          lt.bytes = std::max(lt.bytes, w.activation_bytes + w.attention_bytes);
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
      const double dense_params = params * e_param * shard + (fsdp ? largest_layer * e_param : 0);
      const double ddp_buffers =
          fsdp ? 0 : 2.0 * std::min(static_cast<double>(plan.bucket_size), params * e_param);
      rm.terms = {
          {"dense_params", dense_params},
          {"dense_grads", params * e_param * shard},
          {"dense_optimizer", optimizer_state_bytes(model.dense_optimizer, params * shard, 1, 4)},
          {"embedding_weights", elems * e_w},
          {"embedding_optimizer",
           optimizer_state_bytes(model.embedding_optimizer, rows, elems / rows, e_opt)},
          {"embedding_activations", emb_act},
          {"activations", act},
          {"attention_scores", scores},
          {"comm_buffers", out_buffers[static_cast<std::size_t>(i)] + ddp_buffers + layer_buffer},
          {"pipeline_buffers", (plan.schedule.pipeline_depth - 1) * (ids_bytes + emb_act)},
      };
      rm.layer_activations = std::move(layers);
      rm.attention_jagged_bytes = jagged;
      rm.attention_padded_bytes = padded;
    }
  }
  return report;
}

}  // namespace strait::sim::workload
