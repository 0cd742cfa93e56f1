#include "planner/launch_plan.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "sim/workload/layout.hpp"

namespace strait::planner {
namespace {

std::string hostname(const std::string& name) {
  std::string h = name;
  std::replace(h.begin(), h.end(), '/', '-');
  return h;
}

void fnv(std::uint64_t& h, std::string_view s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  h ^= 0xff;
  h *= 1099511628211ULL;
}

Json setting(std::string value, std::string reason) {
  return {{"value", std::move(value)}, {"reason", std::move(reason)}};
}

}  // namespace

std::string fingerprint(const sim::workload::TrainingScenario& sc, const Json& document) {
  std::uint64_t h = 14695981039346656037ULL;
  fnv(h, sc.cluster.name());
  fnv(h, std::to_string(sc.cluster.gpu_count()));
  for (const auto& host : sc.cluster.hosts())
    fnv(h, host.name + ":" + std::to_string(host.gpus.size()));
  for (const auto& l : sc.cluster.links())
    fnv(h, fmt::format("{}>{}@{}", l.src, l.dst, l.bandwidth));
  fnv(h, sc.model.name);
  for (const auto& t : sc.model.tables) fnv(h, fmt::format("{}:{}x{}", t.name, t.rows, t.dim));
  fnv(h, fmt::format("hstu {} {} moe {} {}", sc.model.hstu.layers, sc.model.hstu.model_dim,
                     sc.model.moe.layers, sc.model.moe.experts));
  fnv(h, fmt::format("data {} {} {} {}", sc.data.name, sc.data.batch_per_replica,
                     sc.data.global_batch, sc.data.max_length));
  fnv(h, document.dump());
  return fmt::format("fnv1a64:{:016x}", h);
}

Json launch_plan_json(const sim::workload::ParallelPlan& plan, const Json& document,
                      const sim::workload::TrainingScenario& sc) {
  const auto layout = sim::workload::Layout::build(sc.cluster, plan);
  const int world = layout.world;
  Json ranks = Json::array();
  std::vector<int> hosts;
  for (int r = 0; r < world; ++r) {
    const auto& g = sc.cluster.gpu(r);
    const auto& host = sc.cluster.hosts()[static_cast<std::size_t>(g.host)];
    if (hosts.empty() || hosts.back() != g.host) hosts.push_back(g.host);
    ranks.push_back(
        {{"rank", r},
         {"host", host.name},
         {"hostname", hostname(host.name)},
         {"local_rank", g.local_index},
         {"gpu", r},
         {"datacenter", sc.cluster.datacenters()[static_cast<std::size_t>(g.datacenter)].name}});
  }
  Json groups = Json::object();
  for (const auto& g : layout.groups) groups[g.name] = g.ranks;
  const int per_node =
      static_cast<int>(sc.cluster.hosts()[static_cast<std::size_t>(hosts.front())].gpus.size());
  const bool rails = sc.cluster.hosts().front().rail_optimized;
  Json system = {
      {"NCCL_SOCKET_IFNAME", setting("^lo,docker", "bootstrap over the hosts' Ethernet")},
      {"NCCL_IB_HCA", setting("mlx5", "scale-out NICs, one per GPU in the cluster file")},
      {"NCCL_CROSS_NIC",
       setting(rails ? "0" : "2", rails ? "rail-optimized fabric: keep each ring on its rail"
                                        : "no rail alignment to keep")}};
  Json tuning = Json::object();
  tuning["NCCL_PROTO"] = setting(
      "Simple", "strait priced collectives with the Simple protocol's bandwidth and latency");
  if (plan.schedule.cross_dc == sim::workload::CrossDcSync::kHierarchical) {
    tuning["NCCL_ALGO"] = setting("Tree", "the plan's cross-datacenter sync is hierarchical");
  }
  if (plan.schedule.sm_free) {
    tuning["TORCH_NCCL_USE_COMM_NONBLOCKING"] =
        setting("1", "the plan assumes SM-free (copy-engine) collectives overlapping compute");
  }
  const std::string fp = fingerprint(sc, document);
  const std::string master =
      hostname(sc.cluster.hosts()[static_cast<std::size_t>(hosts.front())].name);
  const std::string program = "train.py --plan plan.json --launch launch.json";
  Json torchrun = Json::array();
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    torchrun.push_back(fmt::format(
        "ssh {} torchrun --nnodes={} --nproc-per-node={} --node-rank={} --rdzv-backend=c10d "
        "--rdzv-endpoint={}:29500 --rdzv-id={} {}",
        hostname(sc.cluster.hosts()[static_cast<std::size_t>(hosts[i])].name), hosts.size(),
        per_node, i, master, fp.substr(8, 8), program));
  }
  std::string env_flags;
  for (const auto* block : {&system, &tuning}) {
    for (const auto& [k, v] : block->items())
      env_flags += fmt::format(" -x {}={}", k, v["value"].get<std::string>());
  }
  return {{"world_size", world},
          {"gpus_per_node", per_node},
          {"nodes", hosts.size()},
          {"ranks", ranks},
          {"process_groups", groups},
          {"env", {{"system", system}, {"tuning", tuning}}},
          {"launch",
           {{"torchrun", torchrun},
            {"srun", fmt::format("srun --nodes={} --ntasks-per-node={} --gpus-per-node={} "
                                 "--cpu-bind=none python {}",
                                 hosts.size(), per_node, per_node, program)},
            {"mpirun", fmt::format("mpirun -np {} --map-by ppr:{}:node --bind-to none{} python {}",
                                   world, per_node, env_flags, program)}}},
          {"fingerprint", fp}};
}

}  // namespace strait::planner
