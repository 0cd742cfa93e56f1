#include "planner/detail/closed_form_cost.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "sim/engine/simulator.hpp"
#include "sim/workload/collective_calls.hpp"
#include "sim/workload/op_graph_builder.hpp"

namespace strait::planner::detail {
namespace {

using sim::network::CollectiveOp;
using sim::network::CollectiveSpec;
using sim::workload::CommClass;
using sim::workload::OpGraph;
using sim::workload::OpKind;
using sim::workload::StepPhase;

constexpr auto kClasses = static_cast<std::size_t>(sim::workload::kCommClassCount);

/// The k-th collective issued on a group (sim/workload/collective_calls.hpp): every
/// member's part, merged into one spec.
struct Instance {
  CollectiveSpec spec;
  std::vector<sim::workload::SendRow> rows;  // all_to_allv send rows by member (shared)
  std::vector<Bytes> send_bytes;             // all_to_all per-member buffers
  std::vector<char> built;                   // per member: its rank was built
  int group = 0;
  double seconds = 0;
  double cross_dc_bytes = 0;
};

struct RankSums {
  double fwd = 0, bwd = 0, opt = 0, xdc = 0;
  std::array<double, kClasses> comm{};
  int dense_calls = 0;
};

/// An all-to-all(v) of a group whose members were not all built (representative members
/// of a block above 1,024 ranks, or the cross-block groups of representative blocks) runs
/// among the built members only. Each built sender keeps what it sends the others, apart
/// for receivers on its own host (NVLink) and on others (its NIC): each part spread over
/// the built receivers of its kind as its row spreads it (evenly when its row sends them
/// nothing; dropped when no built member is of that kind). So each built member's NIC and
/// NVLink carry its own volumes, and evenly spaced members keep the share that crosses
/// each level. Returns how many times the group's traffic exceeds the sub-group's (members
/// / built members); 1 when nothing changes.
double keep_built_members(const sim::topology::Cluster& cluster, Instance& inst) {
  const bool all_to_all =
      inst.spec.op == CollectiveOp::kAllToAll || inst.spec.op == CollectiveOp::kAllToAllV;
  const auto n = inst.built.size();
  std::vector<std::size_t> kept;
  for (std::size_t m = 0; m < n; ++m) {
    if (inst.built[m]) kept.push_back(m);
  }
  if (!all_to_all || kept.size() == n || kept.size() < 2) return 1.0;
  std::vector<int> gpus(kept.size());
  for (std::size_t q = 0; q < kept.size(); ++q) gpus[q] = inst.spec.gpus[kept[q]];
  if (inst.spec.op == CollectiveOp::kAllToAll) {
    std::vector<Bytes> send(kept.size());
    for (std::size_t q = 0; q < kept.size(); ++q) send[q] = inst.send_bytes[kept[q]];
    inst.send_bytes = std::move(send);
  } else {
    std::vector<int> host(n);
    for (std::size_t m = 0; m < n; ++m) host[m] = cluster.gpu(inst.spec.gpus[m]).host;
    std::vector<sim::workload::SendRow> rows;
    for (auto a : kept) {
      const auto& row = inst.rows[a].bytes();
      std::vector<Bytes> out(kept.size(), 0);
      if (row.size() == n) {
        // [0]: receivers on a's host, [1]: on others; the row's total, the built
        // receivers' part of it, and how many built receivers.
        std::array<double, 2> total{}, seen{}, count{};
        const auto kind = [&](std::size_t j) { return host[j] == host[a] ? 0 : 1; };
        for (std::size_t j = 0; j < n; ++j) {
          if (j != a) total[kind(j)] += static_cast<double>(row[j]);
        }
        for (auto b : kept) {
          if (b != a) seen[kind(b)] += static_cast<double>(row[b]), ++count[kind(b)];
        }
        for (std::size_t q = 0; q < kept.size(); ++q) {
          const auto b = kept[q];
          const int k = kind(b);
          const double bytes = b == a        ? static_cast<double>(row[b])
                               : seen[k] > 0 ? static_cast<double>(row[b]) * total[k] / seen[k]
                                             : total[k] / count[k];
          out[q] = static_cast<Bytes>(std::llround(bytes));
        }
      }
      rows.emplace_back(std::move(out));
    }
    inst.rows = std::move(rows);
  }
  inst.spec.gpus = std::move(gpus);
  return static_cast<double>(n) / static_cast<double>(kept.size());
}

/// Prices every collective instance alone on an analytical network, with the
/// cross-datacenter bytes each moves.
void price_instances(const sim::topology::Cluster& cluster, std::vector<Instance>& instances) {
  sim::engine::Simulator sim;
  sim::network::NetworkOptions options;
  options.mode = sim::network::NetworkMode::kAnalytical;
  auto network = sim::network::make_network(sim, cluster, options);
  // The same collective on the same group (DDP buckets of one size, repeated layers)
  // costs the same: priced once.
  std::map<std::tuple<int, int, int, Bytes>, const Instance*> priced;
  // One matrix buffer for every all_to_allv instance: at 16,384 members a matrix is 2 GiB,
  // and a fresh one each time costs more in page faults than the pricing.
  std::vector<Bytes> matrix;
  for (auto& inst : instances) {
    const double scale = keep_built_members(cluster, inst);
    const auto n = inst.spec.gpus.size();
    if (inst.spec.op == CollectiveOp::kAllToAllV) {
      matrix.clear();
      inst.spec.send_matrix.swap(matrix);
      inst.spec.send_matrix.reserve(n * n);
      for (const auto& row : inst.rows) {
        if (row.size() != n)
          inst.spec.send_matrix.insert(inst.spec.send_matrix.end(), n, 0);
        else
          inst.spec.send_matrix.insert(inst.spec.send_matrix.end(), row.begin(), row.end());
      }
    } else if (inst.spec.op == CollectiveOp::kAllToAll) {
      bool uniform = true;
      for (Bytes b : inst.send_bytes) uniform = uniform && b == inst.send_bytes.front();
      if (!uniform) inst.spec.send_bytes = inst.send_bytes;
    }
    const bool plain = inst.spec.send_matrix.empty() && inst.spec.send_bytes.empty();
    const auto key = std::make_tuple(inst.group, static_cast<int>(inst.spec.op),
                                     static_cast<int>(inst.spec.algorithm), inst.spec.bytes);
    if (plain) {
      if (const auto it = priced.find(key); it != priced.end()) {
        inst.seconds = it->second->seconds;
        inst.cross_dc_bytes = it->second->cross_dc_bytes;  // scaled as the first
        continue;
      }
    }
    const Time start = sim.now();
    Time done = start;
    const double xdc_before = network->traffic().bytes(sim::topology::LinkClass::kCrossDc);
    network->start_collective(inst.spec, [&] { done = sim.now(); });
    sim.run();
    inst.seconds = (done - start).to_s();
    inst.cross_dc_bytes =
        scale * (network->traffic().bytes(sim::topology::LinkClass::kCrossDc) - xdc_before);
    if (plain) priced.emplace(key, &inst);
    // Priced: its matrix goes back to the buffer, its rows go.
    if (inst.spec.op == CollectiveOp::kAllToAllV) inst.spec.send_matrix.swap(matrix);
    std::vector<sim::workload::SendRow>().swap(inst.rows);
  }
}

/// Every collective instance of `graph`, in the order ranks first issue them; out: the
/// instance of each rank's collectives, in op order.
std::vector<Instance> collect_instances(const OpGraph& graph,
                                        std::vector<std::vector<std::size_t>>& rank_instances) {
  std::vector<Instance> instances;
  std::map<std::pair<int, int>, std::size_t> index;  // (group, call number) -> instance
  for (std::size_t r = 0; r < graph.ranks.size(); ++r) {
    const int rank = graph.ranks[r].rank;
    const auto& ops = graph.ranks[r].ops;
    const auto calls = sim::workload::call_numbers(ops);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind != OpKind::kCollective) continue;
      const auto& call = ops[i].collective;
      const auto& group = graph.groups[static_cast<std::size_t>(call.group)];
      const auto [it, added] =
          index.emplace(std::make_pair(call.group, static_cast<int>(calls[i])), instances.size());
      if (added) {
        Instance inst;
        inst.spec.op = call.op;
        inst.spec.algorithm = call.algorithm;
        inst.spec.bytes = call.bytes;
        inst.group = call.group;
        for (int m : group.ranks)
          inst.spec.gpus.push_back(graph.ranks[static_cast<std::size_t>(m)].gpu);
        inst.rows.resize(group.ranks.size());
        inst.send_bytes.assign(group.ranks.size(), call.bytes);
        inst.built.assign(group.ranks.size(), 0);
        instances.push_back(std::move(inst));
      }
      auto& inst = instances[it->second];
      const auto pos = static_cast<std::size_t>(
          std::find(group.ranks.begin(), group.ranks.end(), rank) - group.ranks.begin());
      if (pos < inst.rows.size()) {
        inst.built[pos] = 1;
        if (call.op == CollectiveOp::kAllToAllV) inst.rows[pos] = call.send_row;
        if (call.op == CollectiveOp::kAllToAll) inst.send_bytes[pos] = call.bytes;
      }
      rank_instances[r].push_back(it->second);
    }
  }
  return instances;
}

/// Cross-datacenter bytes of a step: instances of groups of one kind ("dp", "sparse_mp",
/// ... the name before '/') stand for all groups of that kind when only representative
/// ranks were built.
double cross_dc_bytes(const OpGraph& graph, const std::vector<Instance>& instances) {
  auto kind = [&](int g) {
    const auto& name = graph.groups[static_cast<std::size_t>(g)].name;
    return name.substr(0, name.find('/'));
  };
  std::map<std::string, int> groups;
  for (std::size_t g = 0; g < graph.groups.size(); ++g) ++groups[kind(static_cast<int>(g))];
  std::map<std::string, std::pair<double, std::vector<int>>> seen;  // bytes, groups priced
  for (const auto& inst : instances) {
    auto& [bytes, priced] = seen[kind(inst.group)];
    bytes += inst.cross_dc_bytes;
    priced.push_back(inst.group);
  }
  double total = 0;
  for (auto& [k, v] : seen) {
    auto& [bytes, priced] = v;
    std::sort(priced.begin(), priced.end());
    priced.erase(std::unique(priced.begin(), priced.end()), priced.end());
    total += bytes * groups[k] / static_cast<double>(priced.size());
  }
  return total;
}

}  // namespace

Estimate ClosedFormCost::estimate(const sim::workload::TrainingScenario& sc) const {
  Estimate e;
  e.memory_capacity = memory_capacity(sc, kernels_);
  // The batches are sampled once (or taken from the cache): the memory model reads every
  // step's, the one-step op graph the first's (sample_steps draws each step from its own
  // stream).
  const auto batches = sim::workload::batches_for(sc, sc.steps, batches_.get());
  e.memory =
      sim::workload::memory_per_rank(sc, *batches, representative_ranks_).fits(e.memory_capacity);
  e.fits = e.memory.fits;
  if (!e.fits) return e;

  const OpGraph graph = sim::workload::build_op_graph(
      sc, {.steps = 1, .representative_ranks = representative_ranks_, .batches = batches.get()});
  const auto xdc_stream = std::find(graph.streams.begin(), graph.streams.end(), "xdc_comm");
  const auto xdc = static_cast<std::int32_t>(xdc_stream - graph.streams.begin());

  std::vector<std::vector<std::size_t>> rank_instances(graph.ranks.size());
  std::vector<Instance> instances = collect_instances(graph, rank_instances);
  price_instances(sc.cluster, instances);
  const double xdc_bytes = cross_dc_bytes(graph, instances);

  const auto& sched = sc.plan.schedule;
  double worst = 0;
  for (std::size_t r = 0; r < graph.ranks.size(); ++r) {
    const auto& ranks = graph.ranks[r];
    const auto& type = sc.cluster.gpu(ranks.gpu).type;
    const auto& profile = kernels_.profile(type);
    RankSums s;
    std::size_t k = 0;
    for (const auto& op : ranks.ops) {
      if (op.kind == OpKind::kKernel) {
        const double t = sim::cost::CostModel::cost(op.kernel, profile).duration().to_s();
        if (op.phase == StepPhase::kOptimizer)
          s.opt += t;
        else if (op.phase == StepPhase::kBackward)
          s.bwd += t;
        else
          s.fwd += t;
        continue;
      }
      const double t = instances[rank_instances[r][k++]].seconds;
      if (op.stream == xdc) {
        s.xdc += t;
        continue;
      }
      s.comm[static_cast<std::size_t>(op.collective.comm_class)] += t;
      if (op.collective.comm_class == CommClass::kDenseSync) ++s.dense_calls;
    }
    auto c = [&](CommClass cls) { return s.comm[static_cast<std::size_t>(cls)]; };
    const double compute = s.fwd + s.bwd + s.opt;
    const double emb = c(CommClass::kInputDist) + c(CommClass::kOutputDist);
    const double emb_exposed = sched.pipeline_depth > 1 ? std::max(0.0, emb - s.fwd) : emb;
    const double dense = c(CommClass::kDenseSync);
    const double dense_exposed =
        dense > 0 ? std::max(dense / std::max(1, s.dense_calls), dense - s.bwd) : 0.0;
    const double xdc_exposed = std::max(0.0, s.xdc - compute);
    const double rs = c(CommClass::kReplicaSync) / std::max(1, sc.plan.replica_sync_staleness);
    const double rs_exposed = std::max(0.0, rs - (s.fwd + s.bwd));
    const double exposed = emb_exposed + c(CommClass::kGradDist) + dense_exposed + xdc_exposed +
                           c(CommClass::kContextParallel) + c(CommClass::kMoe) + rs_exposed;
    const double hidden =
        (emb - emb_exposed) + (dense - dense_exposed) + (s.xdc - xdc_exposed) + (rs - rs_exposed);
    const double stolen =
        sched.sm_free ? 0.0 : kernels_.comm_sm_fraction(type) * std::min(hidden, compute);
    worst = std::max(worst, compute + stolen + exposed);
  }
  double samples = 0;
  for (const auto& r : graph.ranks) samples += static_cast<double>(r.samples);
  e.step_ms = worst * 1e3;
  e.samples_per_sec = worst > 0 ? samples / worst : 0;
  e.samples_per_sec_per_gpu = e.samples_per_sec / std::max<std::size_t>(1, graph.ranks.size());
  e.cross_dc_bytes = xdc_bytes;
  return e;
}

}  // namespace strait::planner::detail
