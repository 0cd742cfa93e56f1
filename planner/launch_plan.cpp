#include "planner/launch_plan.hpp"

#include <algorithm>
#include <map>
#include <vector>

#include "planner/launch_lines.hpp"
#include "planner/torchrec_settings.hpp"
#include "sim/workload/layout.hpp"

namespace strait::planner {
namespace {

using sim::topology::Cluster;
using sim::topology::Host;

std::string hostname(const std::string& name) {
  std::string h = name;
  std::replace(h.begin(), h.end(), '/', '-');
  return h;
}

Json setting(std::string value, std::string reason) {
  return {{"value", std::move(value)}, {"reason", std::move(reason)}};
}

struct PlanHost {
  int host = 0;   // global host index
  int ranks = 0;  // the plan's ranks on it
};

/// The hosts of the first `world` GPUs (the plan's ranks), in rank order.
std::vector<PlanHost> plan_hosts(const Cluster& cluster, int world) {
  std::vector<PlanHost> hosts;
  for (int r = 0; r < world; ++r) {
    const int h = cluster.gpu(r).host;
    if (hosts.empty() || hosts.back().host != h) hosts.push_back({h, 0});
    ++hosts.back().ranks;
  }
  return hosts;
}

// NCCL_CROSS_NIC (NCCL user guide, Environment Variables): 0 "always use the same NIC for
// the same ring/tree, to avoid crossing network rails", suited for networks with per-NIC
// switches (rails); 2, the default, may cross them. A rail-optimized host in the cluster
// file is that network (NIC r on rail r's leaf), and strait routes each ring on its rail.
// Nothing else is set: NCCL_SOCKET_IFNAME and NCCL_IB_HCA name interfaces the cluster file
// does not know, and NCCL_PROTO / NCCL_ALGO would force one protocol or algorithm on every
// size where strait, like NCCL's tuner, picks per size.
Json system_env(const Cluster& cluster, const std::vector<PlanHost>& hosts) {
  Json env = Json::object();
  const bool rails = std::all_of(hosts.begin(), hosts.end(), [&](const PlanHost& h) {
    const Host& host = cluster.hosts()[static_cast<std::size_t>(h.host)];
    return host.rail_optimized && host.nics > 1;
  });
  if (rails) {
    env["NCCL_CROSS_NIC"] = setting(
        "0",
        "always use the same NIC for the same ring/tree, to avoid crossing network "
        "rails: the hosts are rail-optimized (NIC r on rail r's leaf), as strait routes them");
  }
  return env;
}

Json notes(const sim::workload::ParallelPlan& plan, const sim::workload::TrainingScenario& sc) {
  Json out = Json::array();
  out.push_back(
      "torchrun sets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT for the "
      "program; under srun or mpirun it reads its rank from SLURM_PROCID / "
      "OMPI_COMM_WORLD_RANK (local rank: SLURM_LOCALID / OMPI_COMM_WORLD_LOCAL_RANK) and sets "
      "up its process group itself");
  out.push_back(
      "NCCL_SOCKET_IFNAME and NCCL_IB_HCA are not set: the cluster file does not name the "
      "hosts' interfaces (NCCL's own choice skips lo and docker interfaces); set them where "
      "the hosts have NICs that must not carry the job");
  // NCCL user guide, "User Buffer Registration" > "Zero-CTA Optimization" (2.28+) and the
  // CTA policy flags: no environment variable makes collectives leave the SMs alone.
  if (plan.schedule.sm_free) {
    out.push_back(
        "the plan's SM-free communication needs the program to use NCCL's zero-CTA (copy "
        "engine) collectives, NCCL 2.28+ and CUDA driver 12.5+: communicators created with "
        "ncclCommInitRankConfig and ncclConfig_t.CTAPolicy = NCCL_CTA_POLICY_ZERO, buffers "
        "registered with ncclCommWindowRegister(..., NCCL_WIN_COLL_SYMMETRIC); NCCL then runs "
        "AlltoAll, AllGather, Scatter and Gather inside one NVLink domain on copy engines, "
        "other collectives and network traffic on SMs");
  }
  if (plan.schedule.cross_dc == sim::workload::CrossDcSync::kHierarchical) {
    out.push_back(
        "the plan's hierarchical cross-datacenter sync is an all-reduce level by level "
        "(inside hosts, across the hosts of a datacenter, then one exchange across "
        "datacenters), which no NCCL_ALGO value selects: the program runs it on its own "
        "process groups");
  }
  if (!sc.parts) {
    out.push_back(
        "the fingerprint covers the plan document only: the cluster, model and data were not "
        "read from config files");
  }
  return out;
}

}  // namespace

Json launch_plan_json(const sim::workload::ParallelPlan& plan, const Json& document,
                      const sim::workload::TrainingScenario& sc, const LaunchOptions& options) {
  const Cluster& cluster = sc.cluster;
  const auto layout = sim::workload::Layout::build(cluster, plan);
  const auto hosts = plan_hosts(cluster, layout.world);
  const auto dc_name = [&](int dc) {
    return cluster.datacenters()[static_cast<std::size_t>(dc)].name;
  };
  Json ranks = Json::array();
  for (int r = 0; r < layout.world; ++r) {
    const auto& g = cluster.gpu(r);
    const Host& host = cluster.hosts()[static_cast<std::size_t>(g.host)];
    ranks.push_back({{"rank", r},
                     {"host", host.name},
                     {"hostname", hostname(host.name)},
                     {"local_rank", g.local_index},
                     {"gpu", r},
                     {"datacenter", dc_name(g.datacenter)}});
  }
  Json host_list = Json::array();
  std::vector<LaunchHost> launch_hosts;
  int first = 0;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const Host& host = cluster.hosts()[static_cast<std::size_t>(hosts[i].host)];
    launch_hosts.push_back(
        {hostname(host.name), hosts[i].ranks, static_cast<int>(host.gpus.size())});
    host_list.push_back({{"hostname", hostname(host.name)},
                         {"host", host.name},
                         {"datacenter", dc_name(host.datacenter)},
                         {"node_rank", i},
                         {"first_rank", first},
                         {"ranks", hosts[i].ranks},
                         {"gpus", host.gpus.size()}});
    first += hosts[i].ranks;
  }
  Json groups = Json::object();
  for (const auto& g : layout.groups) groups[g.name] = g.ranks;
  const Json env = {{"system", system_env(cluster, hosts)}, {"tuning", Json::object()}};
  std::map<std::string, std::string> vars;
  for (const auto& block : env) {
    for (const auto& [name, s] : block.items()) vars[name] = s["value"].get<std::string>();
  }
  const auto lines = launch_lines(launch_hosts, vars, options.entrypoint);
  Json out = Json::object();
  out["world_size"] = layout.world;
  out["nodes"] = hosts.size();
  out["hosts"] = host_list;
  out["ranks"] = ranks;
  out["process_groups"] = groups;
  out["env"] = env;
  out["entrypoint"] = options.entrypoint;
  out["launch"] = {{"torchrun", lines.torchrun}, {"mpirun", lines.mpirun}};
  if (lines.srun)
    out["launch"]["srun"] = *lines.srun;
  else
    out["launch_refused"] = {{"srun", lines.srun_refused}};
  out["files"] = lines.files;
  out["torchrec"] = torchrec_settings(plan, sc.model);
  out["notes"] = notes(plan, sc);
  out["fingerprint"] = fingerprint(sc, document);
  return out;
}

}  // namespace strait::planner
