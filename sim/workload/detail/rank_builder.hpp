#pragma once
// RankBuilder: the ops of one rank for every step of the scenario, in the order the rank
// issues them, with what every rank shares while a graph is built (GraphBuild: the dense
// stack, the shard map, streams, interned names, the sampled batches).
// build_op_graph (op_graph_builder.cpp) runs one per rank. Its embedding side (dists,
// lookup, update, replica sync) is in rank_builder_sparse.cpp, the step and its dense side
// (layers, gradient syncs, optimizer) in rank_builder.cpp; the op primitives below stay
// inline (36 million ops at 131,072 ranks go through them).

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "sim/core/rng.hpp"
#include "sim/workload/batch.hpp"
#include "sim/workload/detail/dense_stack.hpp"
#include "sim/workload/detail/sparse_traffic.hpp"
#include "sim/workload/op_graph.hpp"
#include "sim/workload/scenario.hpp"
#include "sim/workload/sharding.hpp"

namespace strait::sim::workload::detail {

using network::Algorithm;
using network::CollectiveOp;

struct GraphStreams {
  std::int32_t compute, sparse_compute, embedding_comm, dense_comm, cp_comm, xdc_comm;
  std::int32_t host_comm;  // host-reduced embedding dists (their own process groups)
  std::vector<std::int32_t> replica_comm;  // one stream per sync that may be in flight
};

struct OpNames {
  std::int32_t input_dist, lookup, output_dist, grad_dist, update, replica_sync, optimizer;
  std::int32_t output_dist_host, output_dist_cross, grad_dist_cross, grad_dist_host;
  std::int32_t expert_sync, dp_tables_sync;
  std::vector<std::int32_t> stack;             // DenseStack name -> graph name
  std::vector<std::int32_t> ddp, rs, xdc, ag;  // per bucket
  std::vector<std::int32_t> fsdp_ag_fwd, fsdp_ag_bwd, fsdp_rs, fsdp_ar;  // per layer
};

/// Everything shared by all ranks.
struct GraphBuild {
  GraphBuild(const TrainingScenario& scenario, int host_size)
      : sc(scenario),
        layout(scenario.layout),
        sched(scenario.plan.schedule),
        stack(scenario.model, scenario.plan),
        map(ShardMap::build(scenario.model, scenario.plan, scenario.layout.sparse.size,
                            host_size)) {}

  const TrainingScenario& sc;
  const Layout& layout;
  const Schedule& sched;
  DenseStack stack;
  ShardMap map;
  GraphStreams st{};
  OpNames nm;
  int steps = 1;
  int lookahead = 0;
  int dcs = 1;                                     // datacenters among the ranks
  std::vector<std::vector<ReplicaBatch>> sampled;  // [step][replica], when sampled here
  // The steps' batches ([step][replica]): `sampled` or the caller's (OpGraphOptions).
  const std::vector<std::vector<ReplicaBatch>>* batches = &sampled;
  mutable std::vector<detail::LayerWorkMemo> layer_work;  // [step]: the last shape's layers
  std::vector<double> slowdown;                           // per rank
  bool flat_output = true;    // some sharded table's output takes the group-wide dist
  bool host_reduced = false;  // some table's output is reduced inside host blocks first
};

/// Gradient bytes of the data-parallel tables and of the hybrid tables' hot rows, at
/// `bytes_per_element` each: what joins the dense gradients' sync.
double data_parallel_bytes(const ShardMap& map, const ModelConfig& model, double bytes_per_element);

/// Builds the ops of rank `out.rank`, member `member` of its model-parallel group, whose
/// embedding traffic per step is `traffic`.
class RankBuilder {
 public:
  RankBuilder(const GraphBuild& sh, RankOps& out, const std::vector<const SparseTraffic*>& traffic,
              int member)
      : sh_(sh), out_(out), traffic_(traffic), member_(member), rank_(out.rank) {}

  void build();

 private:
  // A new op at the end of the rank's ops (built in place: 36 million at 131,072 ranks).
  Op& add(OpKind kind, std::int32_t name, std::int32_t stream, int step, StepPhase phase,
          std::initializer_list<std::int32_t> deps) {
    Op& op = out_.ops.emplace_back();
    op.kind = kind;
    op.name = name;
    op.stream = stream;
    op.step = step;
    op.phase = phase;
    for (auto d : deps) {
      if (d >= 0) op.deps.push_back(d);
    }
    return op;
  }
  std::int32_t last_index() const { return static_cast<std::int32_t>(out_.ops.size()) - 1; }

  std::int32_t kernel(const Kernel& k, std::int32_t name, std::int32_t stream, int step,
                      StepPhase phase, std::initializer_list<std::int32_t> deps) {
    double m = sh_.slowdown[static_cast<std::size_t>(rank_)];
    const double sigma = sh_.sc.hardware.kernel_sigma;
    if (sigma > 0) m *= noise_.lognormal(-sigma * sigma / 2, sigma);
    Kernel& work = add(OpKind::kKernel, name, stream, step, phase, deps).kernel;
    work = k;
    // Scaled from `k`, not from the copy just stored (a load straddling two fresh stores
    // stalls store forwarding: a fifth of this function's time at 131,072 ranks).
    work.flops = k.flops * m;
    work.hbm_bytes = k.hbm_bytes * m;
    return last_index();
  }

  std::int32_t collective(CollectiveOp cop, int group, Bytes bytes, CommClass cls,
                          std::int32_t name, std::int32_t stream, int step, StepPhase phase,
                          std::initializer_list<std::int32_t> deps,
                          Algorithm algo = Algorithm::kAuto, SendRow row = {}) {
    CollectiveCall& c = add(OpKind::kCollective, name, stream, step, phase, deps).collective;
    c.op = cop;
    c.algorithm = algo;
    c.group = group;
    c.bytes = bytes;
    c.comm_class = cls;
    c.priority = sh_.sched.priority[static_cast<std::size_t>(cls)];
    c.sm_free = sh_.sched.sm_free;
    if (!row.empty()) {
      bool uniform = true;
      for (auto b : row) uniform &= b == row.front();
      Bytes total = 0;
      for (auto b : row) total += b;
      c.bytes = total;
      if (uniform) {
        c.op = CollectiveOp::kAllToAll;
      } else {
        c.op = CollectiveOp::kAllToAllV;
        c.send_row = std::move(row);  // shared with the group's members that send the same
      }
    }
    return last_index();
  }

  int sparse_group() const { return sh_.layout.sparse.block[static_cast<std::size_t>(rank_)]; }
  bool sparse_comm() const { return sh_.layout.sparse.size > 1 && sh_.map.has_sharded(); }

  static constexpr std::int32_t kNotIssued = -2;

  /// The ids' all-to-all of `step` after `after`; -1 when there is none.
  std::int32_t input_dist(int step, std::int32_t after);

  /// Input dist (unless `input` was issued ahead), lookup, output dist of `step`; returns
  /// the op the dense forward waits on.
  std::int32_t sparse_forward(int step, std::int32_t after = -1, std::int32_t input = kNotIssued);

  /// Gradient dists of `step` after `last`: the group-wide one and the host-reduced
  /// tables' (cross-host all-to-all, then all-gather in the host), each -1 when absent.
  std::pair<std::int32_t, std::int32_t> grad_dist(int step, std::int32_t last);

  /// Emits one layer's work items chained after `last`; returns the new last op.
  std::int32_t emit_items(const std::vector<detail::WorkItem>& items, std::int32_t last, int step,
                          StepPhase phase, std::int32_t extra_dep, std::int32_t extra_dep2 = -1,
                          std::int32_t extra_dep3 = -1);

  // One all-reduce across datacenters for the shards of every bucket of this step.
  void flush_cross_dc(int step, std::vector<std::int32_t>& xdc);

  /// Dense sync of one DDP bucket; appends the ops the optimizer waits on.
  void sync_bucket(int b, Bytes bytes, std::int32_t ready, int step,
                   std::vector<std::int32_t>& waits, std::vector<std::int32_t>& xdc);

  /// What a step's gradient syncs leave for its optimizer.
  struct GradientSyncs {
    std::vector<std::int32_t> waits;  // what the optimizer waits on
    std::vector<std::int32_t> xdc;    // this step's cross-datacenter syncs
    double bucket = 0;                // gradient bytes of the DDP bucket being filled
    int buckets = 0;                  // DDP buckets synced so far
  };

  /// The forward, backward, embedding update, gradient syncs and optimizer of step `s`;
  /// returns the optimizer op. `pending_xdc`: the overlapped cross-datacenter syncs of the
  /// step before, waited on by this step's optimizer, then this step's.
  std::int32_t dense_step(int s, std::int32_t sparse_ready, std::int32_t prev_opt,
                          std::vector<std::int32_t>& pending_xdc);

  /// True when the dense parameters are sharded (FSDP), not replicated (DDP).
  bool fsdp() const { return sh_.sc.plan.dense == DenseParallelism::kFsdp; }

  /// FSDP's all-gather of layer i's parameters after `after`.
  std::int32_t fsdp_all_gather(int s, int i, std::int32_t name, StepPhase phase, std::int32_t after,
                               double e_param);

  /// The dense layers' forward of step `s` (under FSDP each after its all-gather); the
  /// first layer waits on the sparse forward, the host-reduced output dist and `prev_opt`.
  /// Returns the forward's last op.
  std::int32_t dense_forward(int s, const std::vector<detail::LayerWork>& work,
                             std::int32_t sparse_ready, std::int32_t prev_opt, double e_param);

  /// The dense layers' backward of step `s` after `last`, last layer first, each layer's
  /// gradients synced as they are ready: FSDP per layer, experts over their replicas, the
  /// others in DDP buckets (but the last, sync_last_bucket). Returns the backward's last op.
  std::int32_t dense_backward(int s, const std::vector<detail::LayerWork>& work, std::int32_t last,
                              double e_param, double e_grad, GradientSyncs& sync);

  /// FSDP's sync of layer i's `grad` bytes after `last`: reduce-scatter in the FSDP group,
  /// then all-reduce of the shard across its replicas; returns the op the optimizer waits on.
  std::int32_t fsdp_grad_sync(int s, int i, double grad, std::int32_t last);

  /// The embedding backward of step `s` after the dense backward's `last`: gradient dists,
  /// then the update, which also waits for the replica sync due; returns the update.
  std::int32_t embedding_backward(int s, std::int32_t last);

  /// The last DDP bucket's sync, which the data-parallel tables' gradients and the hot
  /// rows' join (under FSDP they sync alone).
  void sync_last_bucket(int s, std::int32_t update, std::int32_t last, double e_tables,
                        GradientSyncs& sync);

  /// Replica sync every K steps is spread over the steps: each step all-reduces a
  /// rotating 1/K slice of the shard (weights and optimizer state) on its own stream,
  /// overlapped with the next step, whose embedding update waits for it (one step of
  /// staleness, as streaming synchronization across datacenters does). Every step thus
  /// carries the time-averaged cost and a short simulation still sees it.
  void replica_sync(int s, std::int32_t update);

  /// Dense optimizer: reads parameters, gradients and state, writes parameters and state
  /// (Adam in fp32: 7 x 4 bytes per parameter). It waits on the embedding update, the
  /// step's gradient syncs, the step before's overlapped cross-datacenter syncs (this
  /// step's become pending) and the backward's `last` op.
  std::int32_t dense_optimizer(int s, std::int32_t update, std::int32_t last, double e_param,
                               GradientSyncs& sync, std::vector<std::int32_t>& pending_xdc);

  const GraphBuild& sh_;
  RankOps& out_;
  const std::vector<const SparseTraffic*>& traffic_;
  int member_;
  int rank_;
  std::vector<std::int32_t> host_ready_;  // per step: host-reduced output dist's last op
  Rng noise_{0};
  Bytes xdc_bytes_ = 0;                  // this step's bucket shards still to sync across DCs
  std::vector<std::int32_t> xdc_after_;  // their in-datacenter reduce-scatters
  // Replica syncs by step; step s's embedding update waits for the one of s - staleness.
  std::vector<std::int32_t> replica_syncs_ = std::vector<std::int32_t>(64, -1);
  std::int32_t replica_due(int s);
};

}  // namespace strait::sim::workload::detail
