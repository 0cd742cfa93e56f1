#include "sim/workload/op_graph_builder.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "sim/workload/batch.hpp"
#include "sim/workload/detail/dense_stack.hpp"
#include "sim/workload/detail/rank_builder.hpp"
#include "sim/workload/detail/rank_memory.hpp"
#include "sim/workload/detail/sparse_traffic.hpp"
#include "sim/workload/representative.hpp"
#include "sim/workload/work_estimate.hpp"

namespace strait::sim::workload {
namespace {

using detail::DenseStack;
using detail::GraphBuild;
using detail::GraphStreams;
using detail::OpNames;
using detail::RankBuilder;
using detail::SparseTraffic;

OpNames intern_names(OpGraph& g, const DenseStack& stack, int buckets) {
  OpNames nm;
  nm.input_dist = g.intern("emb/input_dist");
  nm.lookup = g.intern("emb/lookup");
  nm.output_dist = g.intern("emb/output_dist");
  nm.grad_dist = g.intern("emb/grad_dist");
  nm.output_dist_host = g.intern("emb/output_dist/host_reduce_scatter");
  nm.output_dist_cross = g.intern("emb/output_dist/cross_host");
  nm.grad_dist_cross = g.intern("emb/grad_dist/cross_host");
  nm.grad_dist_host = g.intern("emb/grad_dist/host_all_gather");
  nm.update = g.intern("emb/update");
  nm.replica_sync = g.intern("emb/replica_sync");
  nm.optimizer = g.intern("optimizer");
  nm.expert_sync = g.intern("moe/expert_grad_all_reduce");
  nm.dp_tables_sync = g.intern("emb/data_parallel_grad_all_reduce");
  for (const auto& s : stack.names()) nm.stack.push_back(g.intern(s));
  for (int b = 0; b < buckets; ++b) {
    nm.ddp.push_back(g.intern(fmt::format("ddp/bucket.{}", b)));
    nm.rs.push_back(g.intern(fmt::format("ddp/bucket.{}/dc_reduce_scatter", b)));
    nm.xdc.push_back(g.intern(b == 0 ? std::string("ddp/cross_dc_all_reduce")
                                     : fmt::format("ddp/bucket.{}/cross_dc_all_reduce", b)));
    nm.ag.push_back(g.intern(fmt::format("ddp/bucket.{}/dc_all_gather", b)));
  }
  for (int i = 0; i < stack.layers(); ++i) {
    nm.fsdp_ag_fwd.push_back(g.intern(stack.layer_name(i) + "/fsdp_all_gather"));
    nm.fsdp_ag_bwd.push_back(g.intern(stack.layer_name(i) + "/fsdp_all_gather_bwd"));
    nm.fsdp_rs.push_back(g.intern(stack.layer_name(i) + "/fsdp_reduce_scatter"));
    nm.fsdp_ar.push_back(g.intern(stack.layer_name(i) + "/fsdp_replica_all_reduce"));
  }
  return nm;
}

/// GPUs per host of the scenario's cluster (1 without hosts).
int host_gpus(const TrainingScenario& sc) {
  return sc.cluster.hosts().empty() ? 1 : static_cast<int>(sc.cluster.hosts().front().gpus.size());
}

/// Datacenters among the ranks.
int datacenters_of(const TrainingScenario& sc) {
  std::vector<bool> seen(sc.cluster.datacenters().size(), false);
  int dcs = 0;
  for (int dc : sc.layout.rank_dc) {
    if (!seen[static_cast<std::size_t>(dc)]) ++dcs;
    seen[static_cast<std::size_t>(dc)] = true;
  }
  return dcs;
}

/// Opens the graph's streams: compute, the embedding, dense and context-parallel comm
/// streams, then those the plan needs (host-reduced dists, replica syncs, pipelined sparse
/// forward, overlapped cross-datacenter sync).
GraphStreams open_streams(OpGraph& g, const GraphBuild& sh) {
  const auto& plan = sh.sc.plan;
  GraphStreams st{};
  st.compute = g.stream("compute");
  st.embedding_comm = g.stream("embedding_comm");
  st.dense_comm = g.stream("dense_comm");
  st.cp_comm = g.stream("cp_comm");
  st.host_comm = sh.host_reduced ? g.stream("embedding_host_comm") : st.embedding_comm;
  for (int k = 0; k < plan.replica_sync_staleness; ++k) {
    st.replica_comm.push_back(g.stream(plan.replica_sync_staleness == 1
                                           ? std::string("replica_comm")
                                           : fmt::format("replica_comm/{}", k)));
  }
  st.sparse_compute = sh.lookahead > 0 && plan.schedule.pipelined == Pipelined::kSparseForward
                          ? g.stream("sparse_compute")
                          : st.compute;
  st.xdc_comm =
      plan.schedule.cross_dc == CrossDcSync::kOverlapped ? g.stream("xdc_comm") : st.dense_comm;
  return st;
}

/// How many DDP buckets' names to intern: the fp32 gradients of the dense stack, the
/// data-parallel tables and the hot rows, in buckets, and two more.
double bucket_bound(const GraphBuild& sh) {
  const double grad_bytes = sh.stack.total_params() * 4 + 1;
  const double dp_table_bytes = detail::data_parallel_bytes(sh.map, sh.sc.model, 4);
  return std::floor((grad_bytes + dp_table_bytes) / static_cast<double>(sh.sc.plan.bucket_size)) +
         2;
}

/// Each rank's kernel slowdown (1 but for the scenario's slow ranks).
std::vector<double> rank_slowdowns(const TrainingScenario& sc) {
  std::vector<double> slowdown(static_cast<std::size_t>(sc.layout.world), 1.0);
  for (const auto& s : sc.hardware.slow_ranks)
    slowdown[static_cast<std::size_t>(s.rank)] *= s.slowdown;
  return slowdown;
}

/// The caller's batches when they cover the steps, else the steps sampled here.
void take_batches(GraphBuild& sh, const OpGraphOptions& options) {
  if (options.batches && static_cast<int>(options.batches->size()) >= sh.steps) {
    sh.batches = options.batches;
  } else {
    sh.sampled = sample_steps(sh.sc, sh.steps);
  }
}

/// Every rank's rank, GPU and samples (of its replica's first batch, its 1/cp share).
void name_ranks(OpGraph& g, const GraphBuild& sh) {
  const Layout& L = sh.layout;
  g.ranks.resize(static_cast<std::size_t>(L.world));
  for (int r = 0; r < L.world; ++r) {
    RankOps& ro = g.ranks[static_cast<std::size_t>(r)];
    ro.rank = ro.gpu = r;
    ro.samples = sh.batches->front()[static_cast<std::size_t>(r / L.cp.size)].samples / L.cp.size;
  }
}

/// The ops of every rank of the representative blocks (all blocks by default), block by
/// block, into the graph or, with a sink, to the sink; with options.memory, each rank's
/// memory report as well.
void build_ranks(OpGraph& g, const GraphBuild& sh, const OpGraphOptions& options,
                 const RankSink& sink) {
  const TrainingScenario& sc = sh.sc;
  const Layout& L = sh.layout;
  const int M = L.sparse.size;
  std::size_t reserve = 0;
  RankOps scratch;  // with a sink: every rank is built here in turn
  std::optional<detail::RankMemoryModel> memory;
  if (options.memory) {
    memory.emplace(sc, sh.stack, sh.map, sh.steps);
    options.memory->ranks.assign(static_cast<std::size_t>(L.world), {});
    for (int r = 0; r < L.world; ++r) options.memory->ranks[static_cast<std::size_t>(r)].rank = r;
  }
  for (const auto& [block, members] :
       representative_ranks(sc, sh.batches->front(), sh.map, options.representative_ranks)) {
    // Embedding traffic of this model-parallel group, per step.
    const auto owned = detail::group_traffic(sc, sh.map, *sh.batches, sh.steps, block);
    std::vector<const SparseTraffic*> traffic;
    traffic.reserve(owned.size());
    for (const auto& t : owned) traffic.push_back(t.get());
    std::vector<double> buffers;
    if (memory) buffers = memory->output_buffers(traffic, members);
    for (const int i : members) {
      const int rank = block * M + i;
      RankOps& whole = g.ranks[static_cast<std::size_t>(rank)];
      if (sink) {
        scratch.rank = whole.rank;
        scratch.gpu = whole.gpu;
        scratch.samples = whole.samples;
        scratch.ops.clear();
      }
      RankOps& ro = sink ? scratch : whole;
      ro.ops.reserve(reserve);
      RankBuilder(sh, ro, traffic, i).build();
      reserve = std::max(reserve, ro.ops.size());
      if (memory) {
        // Right after the rank's ops: its layers' work is still in sh.layer_work.
        options.memory->ranks[static_cast<std::size_t>(rank)] =
            memory->rank(rank, i, buffers[static_cast<std::size_t>(i)], *sh.batches, sh.layer_work);
      }
      if (sink) sink(ro);
    }
  }
}

}  // namespace

OpGraph build_op_graph(const TrainingScenario& sc, const OpGraphOptions& options) {
  return build_op_graph(sc, options, nullptr);
}

OpGraph build_op_graph(const TrainingScenario& sc, const OpGraphOptions& options,
                       const RankSink& sink) {
  const int steps = options.steps > 0 ? options.steps : sc.steps;
  // Refused before the dense stack and the shard map are built.
  check_work(sc, steps);
  GraphBuild sh(sc, host_gpus(sc));
  sh.flat_output = sh.map.any_flat_output(sc.model);
  sh.host_reduced = sh.map.any_host_reduced(sc.model);
  sh.steps = steps;
  sh.lookahead = sc.plan.schedule.pipeline_depth - 1;
  sh.dcs = datacenters_of(sc);
  OpGraph g;
  g.steps = sh.steps;
  g.groups = sc.layout.groups;
  sh.st = open_streams(g, sh);
  const double bucket_count = bucket_bound(sh);
  check_buckets(sc, sh.steps, bucket_count);
  sh.nm = intern_names(g, sh.stack, static_cast<int>(bucket_count));
  sh.slowdown = rank_slowdowns(sc);
  take_batches(sh, options);
  sh.layer_work.resize(static_cast<std::size_t>(sh.steps));
  name_ranks(g, sh);
  build_ranks(g, sh, options, sink);
  return g;
}

}  // namespace strait::sim::workload
