#include "sim/workload/layout.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/workload/sharding.hpp"

namespace strait::sim::workload {
namespace {

using topology::Cluster;
using topology::LinkClass;

/// Leaf switch node of each host (via GPU 0 -> PCIe -> NIC -> scale-out link), or -1.
std::vector<long> host_leaves(const Cluster& cluster) {
  std::vector<long> leaf(cluster.hosts().size(), -1);
  for (std::size_t h = 0; h < cluster.hosts().size(); ++h) {
    const auto& gpus = cluster.hosts()[h].gpus;
    if (gpus.empty()) continue;
    for (auto l : cluster.out_links(cluster.gpu(gpus.front()).node)) {
      if (cluster.link(l).link_class != LinkClass::kPcie) continue;
      for (auto l2 : cluster.out_links(cluster.link(l).dst)) {
        if (cluster.link(l2).link_class == LinkClass::kScaleOut) {
          leaf[h] = static_cast<long>(cluster.link(l2).dst);
          break;
        }
      }
      break;
    }
  }
  return leaf;
}

std::string level_name(PlacementLevel level) {
  return level == PlacementLevel::kRack ? "rack (leaf group)" : to_string(level);
}

/// Cuts 0..world-1 into blocks of spec.size; checks placement; appends groups.
GroupDimension make_dimension(const Cluster& cluster, int world, const GroupSpec& spec,
                              std::string_view size_key, const std::string& name,
                              std::vector<ProcessGroup>& groups) {
  GroupDimension dim;
  dim.size = spec.size == 0 ? world : spec.size;
  auto locate = [&](bool placement) {
    if (!spec.node) return ConfigNode(Json::object(), "<plan>");
    if (placement && spec.node->has("placement")) return spec.node->at("placement");
    return spec.node->has(size_key) ? spec.node->at(size_key) : *spec.node;
  };
  if (dim.size > world || world % dim.size != 0) {
    locate(false).fail(
        fmt::format("expected a group size that divides the {} ranks, got {}", world, dim.size));
  }
  const auto domain = domains(cluster, world, spec.level);
  std::map<int, int> domain_size;
  for (int d : domain) ++domain_size[d];
  int largest = 0;
  for (const auto& [d, n] : domain_size) largest = std::max(largest, n);
  if (dim.size > largest) {
    locate(true).fail(fmt::format(
        "a group of {} ranks does not fit in one {}: the largest {} holds {} of the {} ranks",
        dim.size, level_name(spec.level), to_string(spec.level), largest, world));
  }
  const int blocks = world / dim.size;
  dim.block.resize(static_cast<std::size_t>(world));
  dim.replica.assign(static_cast<std::size_t>(world), -1);
  for (int b = 0; b < blocks; ++b) {
    ProcessGroup g;
    g.name = blocks == 1 ? name : fmt::format("{}/{}", name, b);
    for (int i = 0; i < dim.size; ++i) {
      const int r = b * dim.size + i;
      if (domain[static_cast<std::size_t>(r)] != domain[static_cast<std::size_t>(b * dim.size)]) {
        locate(true).fail(
            fmt::format("a group of {} ranks does not fit in one {}: ranks {}-{} (GPUs in topology "
                        "order) span two {}s",
                        dim.size, level_name(spec.level), b * dim.size, (b + 1) * dim.size - 1,
                        to_string(spec.level)));
      }
      g.ranks.push_back(r);
      dim.block[static_cast<std::size_t>(r)] = static_cast<int>(groups.size());
    }
    groups.push_back(std::move(g));
  }
  if (blocks > 1) {
    for (int i = 0; i < dim.size; ++i) {
      ProcessGroup g;
      g.name = fmt::format("{}_replica/{}", name, i);
      for (int b = 0; b < blocks; ++b) {
        g.ranks.push_back(b * dim.size + i);
        dim.replica[static_cast<std::size_t>(b * dim.size + i)] = static_cast<int>(groups.size());
      }
      groups.push_back(std::move(g));
    }
  }
  return dim;
}

// TorchRec's TwRw/Grid pooled dist runs in two process groups per host-sized block of a
// model-parallel group: the block (intra-node) and the members at the same position of
// every block of the group (cross-node). The block size is ShardMap's.
void add_sparse_host_blocks(const Cluster& cluster, const ParallelPlan& plan, Layout& L) {
  bool blocks_needed = false;
  for (const auto& s : plan.sharding) {
    blocks_needed = blocks_needed || spans_host_block(s.type);
  }
  const int M = L.sparse.size;
  int hs = cluster.hosts().empty() ? 1 : static_cast<int>(cluster.hosts().front().gpus.size());
  hs = std::max(1, std::min(hs, M));
  if (M % hs != 0) hs = 1;
  L.sparse_host.block.assign(static_cast<std::size_t>(L.world), -1);
  L.sparse_host.replica.assign(static_cast<std::size_t>(L.world), -1);
  if (!blocks_needed || hs == 1) return;
  L.sparse_host.size = hs;
  const int per_group = M / hs;
  // A group of `count` ranks, rank_of(i) the i-th; index[rank] names it.
  auto add = [&](std::string name, int count, auto&& rank_of, std::vector<int>& index) {
    ProcessGroup group{std::move(name), {}};
    for (int i = 0; i < count; ++i) {
      const int r = rank_of(i);
      group.ranks.push_back(r);
      index[static_cast<std::size_t>(r)] = static_cast<int>(L.groups.size());
    }
    L.groups.push_back(std::move(group));
  };
  for (int g = 0; g < L.world / M; ++g) {
    for (int b = 0; b < per_group; ++b) {
      add(
          fmt::format("sparse_host/{}/{}", g, b), hs, [&](int k) { return g * M + b * hs + k; },
          L.sparse_host.block);
    }
    if (per_group == 1) continue;
    for (int k = 0; k < hs; ++k) {
      add(
          fmt::format("sparse_cross/{}/{}", g, k), per_group,
          [&](int b) { return g * M + b * hs + k; }, L.sparse_host.replica);
    }
  }
}

}  // namespace

std::vector<int> domains(const Cluster& cluster, int world, PlacementLevel level) {
  std::vector<int> out(static_cast<std::size_t>(world), 0);
  if (level == PlacementLevel::kCluster) return out;
  std::vector<long> leaves;
  if (level == PlacementLevel::kRack) leaves = host_leaves(cluster);
  std::map<long, int> ids;
  for (int r = 0; r < world; ++r) {
    const auto& g = cluster.gpu(r);
    long key = 0;
    if (level == PlacementLevel::kHost)
      key = g.host;
    else if (level == PlacementLevel::kDatacenter)
      key = g.datacenter;
    else
      key = leaves[static_cast<std::size_t>(g.host)] >= 0 ? leaves[static_cast<std::size_t>(g.host)]
                                                          : -1 - g.host;
    out[static_cast<std::size_t>(r)] = ids.emplace(key, static_cast<int>(ids.size())).first->second;
  }
  return out;
}

Layout Layout::build(const Cluster& cluster, const ParallelPlan& plan) {
  Layout L;
  L.world = plan.ranks == 0 ? cluster.gpu_count() : plan.ranks;
  if (L.world > cluster.gpu_count()) {
    plan.ranks_node->fail(fmt::format("expected at most the cluster's {} GPUs, got {}",
                                      cluster.gpu_count(), L.world));
  }
  ProcessGroup all{"all", {}};
  for (int r = 0; r < L.world; ++r) all.ranks.push_back(r);
  L.all = 0;
  L.groups.push_back(std::move(all));
  L.cp = make_dimension(cluster, L.world, plan.cp, "degree", "cp", L.groups);
  L.replicas = L.world / L.cp.size;
  if (plan.dense == DenseParallelism::kFsdp) {
    L.fsdp = make_dimension(cluster, L.world, plan.fsdp, "group_size", "fsdp", L.groups);
  }
  L.sparse = make_dimension(cluster, L.world, plan.sparse, "group_size", "sparse_mp", L.groups);
  if (plan.expert.size > 1)
    L.expert = make_dimension(cluster, L.world, plan.expert, "expert_parallel", "moe_ep", L.groups);
  add_sparse_host_blocks(cluster, plan, L);

  // Datacenter blocks for the overlapped cross-datacenter sync.
  L.rank_dc.resize(static_cast<std::size_t>(L.world));
  for (int r = 0; r < L.world; ++r)
    L.rank_dc[static_cast<std::size_t>(r)] = cluster.gpu(r).datacenter;
  if (plan.schedule.cross_dc == CrossDcSync::kOverlapped) {
    std::map<int, std::vector<int>> by_dc;
    for (int r = 0; r < L.world; ++r) by_dc[L.rank_dc[static_cast<std::size_t>(r)]].push_back(r);
    const std::size_t per_dc = by_dc.begin()->second.size();
    for (const auto& [dc, ranks] : by_dc) {
      if (ranks.size() != per_dc) {
        throw ConfigError(
            plan.file, "/schedule/cross_dc_sync",
            fmt::format("\"overlapped\" needs the same number of ranks in every datacenter, got {} "
                        "and {}",
                        per_dc, ranks.size()));
      }
    }
    L.dc_block.resize(static_cast<std::size_t>(L.world));
    L.dc_replica.resize(static_cast<std::size_t>(L.world));
    for (const auto& [dc, ranks] : by_dc) {
      L.groups.push_back(
          {fmt::format("dense_dc/{}", cluster.datacenters()[static_cast<std::size_t>(dc)].name),
           ranks});
      for (int r : ranks)
        L.dc_block[static_cast<std::size_t>(r)] = static_cast<int>(L.groups.size()) - 1;
    }
    for (std::size_t i = 0; i < per_dc; ++i) {
      ProcessGroup g{fmt::format("dense_xdc/{}", i), {}};
      for (const auto& [dc, ranks] : by_dc) {
        g.ranks.push_back(ranks[i]);
        L.dc_replica[static_cast<std::size_t>(ranks[i])] = static_cast<int>(L.groups.size());
      }
      L.groups.push_back(std::move(g));
    }
  }
  return L;
}

}  // namespace strait::sim::workload
