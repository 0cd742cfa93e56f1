#include "sim/run/detail/replay_ranks.hpp"

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/run/detail/replay_trace.hpp"

namespace strait::sim::run::detail {

ReplayRanks::ReplayRanks(const ReplayGraph& graph, const topology::Cluster& cluster,
                         const ReplayOptions& options, cost::GpuModel& gpus, ReplayTrace* trace) {
  const auto n = graph.ranks().size();
  ranks_.resize(n);
  for (std::size_t g = 0; g < graph.groups().size(); ++g) {
    const auto& members = graph.groups()[g].ranks;
    for (std::size_t i = 0; i < members.size(); ++i) {
      const auto m = static_cast<std::size_t>(members[i]);
      if (m >= ranks_.size()) continue;  // not a rank of the graph: never calls
      ranks_[m].groups.push_back({static_cast<std::int32_t>(g), static_cast<std::int32_t>(i)});
    }
  }
  op_ends_.assign(graph.replay_ops(), kNotEnded);  // one pass over it (tens of MB at 16k)
  std::size_t collectives = 0;
  for (const auto& r : graph.ranks()) {
    if (r.shape >= 0) collectives += graph.shape(r).collectives.size();
  }
  collective_starts_.resize(collectives);
  std::vector<char> traced(n, options.trace_ranks.empty());
  for (int r : options.trace_ranks) {
    if (r >= 0 && static_cast<std::size_t>(r) < traced.size())
      traced[static_cast<std::size_t>(r)] = 1;
  }
  for (std::size_t r = 0; r < n; ++r)
    init_rank(r, traced[r] != 0, graph, cluster, options, gpus, trace);
}

void ReplayRanks::init_rank(std::size_t r, bool traced, const ReplayGraph& graph,
                            const topology::Cluster& cluster, const ReplayOptions& options,
                            cost::GpuModel& gpus, ReplayTrace* trace) {
  auto& rank = ranks_[r];
  rank.info = &graph.ranks()[r];
  rank.shape = rank.info->shape >= 0 ? &graph.shape(*rank.info) : &empty_shape_;
  const auto n = rank.shape->ops();
  rank.ends = op_ends_.data() + rank.info->op_base;
  rank.started_at = collective_starts_.data() + rank.info->collective_base;
  rank.streams.resize(graph.streams().size());
  if (graph.mode() == network::NetworkMode::kAnalytical)
    rank.durations = graph.kernel_durations(*rank.info);
  else if (n > 0)
    rank.kernels = graph.flow_kernels(*rank.info);
  rank.account.flops = rank.info->flops;
  rank.ops_left = static_cast<std::uint32_t>(n);
  rank.traced = traced;
  const auto id = static_cast<int>(r);
  if (traced && trace && !graph.kept_ops(id) && n > 0)
    throw Error(fmt::format("replay: rank {} is traced but its ops were not kept", r));
  const auto& gpu = cluster.gpu(rank.info->gpu);
  rank.gpu_type = &gpu.type;
  if (options.mode == network::NetworkMode::kFlow) rank.gpu = gpus.add_gpu();
  if (traced && trace) trace->name_rank(id, cluster.nodes()[gpu.node].name);
}

void ReplayRanks::close_accounts(Time makespan, std::vector<RankAccount>& accounts) {
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    auto& rank = ranks_[r];
    if (rank.ops_left > 0) {
      throw Error(
          fmt::format("simulation deadlocked: rank {} has {} ops that never ran (a collective "
                      "some group member never reached?)",
                      r, rank.ops_left));
    }
    account_rank_tail(rank, makespan);
    accounts[r] = rank.account;
  }
}

std::vector<std::uint8_t> ReplayRanks::host_progressed(const cost::CostModel& cost) const {
  std::vector<std::uint8_t> host(ranks_.size(), 0);
  const std::string* type = nullptr;  // ranks share a few type strings: one lookup each run
  bool on = false;
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    if (ranks_[r].gpu_type != type) {
      type = ranks_[r].gpu_type;
      on = type && cost.device(*type).collective_progress == cost::CollectiveProgress::kHost;
    }
    host[r] = on;
  }
  return host;
}

}  // namespace strait::sim::run::detail
