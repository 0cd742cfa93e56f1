#include "sim/run/op_replay.hpp"

#include "sim/run/calibrated_cluster.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/engine/simulator.hpp"

namespace strait::sim::run {

Time RankAccount::exposed_comm_total() const {
  Time sum = Time::zero();
  for (const auto& t : exposed_comm) sum += t;
  return sum;
}

namespace {

using workload::Op;
using workload::OpKind;

constexpr std::int32_t kNone = -1;

struct RankState {
  const workload::RankOps* ops = nullptr;
  std::vector<std::int32_t> deps_left;
  std::vector<std::int32_t> succ_offsets, succ;       // CSR of successors
  std::vector<std::vector<std::int32_t>> stream_ops;  // op indices per stream, in order
  std::vector<std::size_t> stream_head;
  std::vector<char> stream_busy;
  std::vector<Time> op_start, op_end, collective_start;
  std::vector<std::int32_t> last_dep;  // the dependency that finished last
  struct Membership {
    std::int32_t group, position, calls;  // calls: collectives issued on the group so far
  };
  std::vector<Membership> groups;  // a rank is in a handful: searched linearly
  Time compute_idle_since;
  engine::ResourceId sm, hbm;
  const std::string* gpu_type = nullptr;
  RankAccount account;
  std::size_t ops_left = 0;
  bool traced = false;
};

struct Instance {
  int arrived = 0;
  std::vector<std::pair<std::int32_t, std::int32_t>> members;  // (rank, op) by group position
  std::vector<workload::SendRow> rows;                         // all_to_allv send rows
};

class Replayer {
 public:
  Replayer(const workload::OpGraph& graph, const topology::Cluster& cluster,
           const cost::CostModel& cost, const ReplayOptions& options)
      : graph_(graph), cluster_(cluster), cost_(cost), options_(options) {
    network::NetworkOptions net;
    net.mode = options.mode;
    net.calibration = collective_calibration(cluster, cost);
    net_ = network::make_network(sim_, cluster, net);
    compute_stream_ = kNone;
    for (std::size_t s = 0; s < graph.streams.size(); ++s) {
      if (graph.streams[s] == "compute") compute_stream_ = static_cast<std::int32_t>(s);
    }
    instances_.resize(graph.groups.size());
    ranks_.resize(graph.ranks.size());
    for (std::size_t g = 0; g < graph.groups.size(); ++g) {
      const auto& members = graph.groups[g].ranks;
      for (std::size_t i = 0; i < members.size(); ++i) {
        const auto m = static_cast<std::size_t>(members[i]);
        if (m >= ranks_.size()) continue;  // not a rank of the graph: never calls
        ranks_[m].groups.push_back({static_cast<std::int32_t>(g), static_cast<std::int32_t>(i), 0});
      }
    }
    result_.ranks.resize(graph.ranks.size());
    result_.step_end.assign(static_cast<std::size_t>(std::max(1, graph.steps)), Time::zero());
    std::vector<char> traced(graph.ranks.size(), options.trace_ranks.empty());
    for (int r : options.trace_ranks) {
      if (r >= 0 && static_cast<std::size_t>(r) < traced.size())
        traced[static_cast<std::size_t>(r)] = 1;
    }
    for (std::size_t r = 0; r < graph.ranks.size(); ++r)
      init_rank(static_cast<std::int32_t>(r), traced[r] != 0);
  }

  ReplayResult run() {
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      for (std::size_t s = 0; s < graph_.streams.size(); ++s)
        try_start(static_cast<std::int32_t>(r), static_cast<std::int32_t>(s));
    }
    sim_.run();
    Time makespan = Time::zero();
    for (const auto& t : result_.step_end) makespan = std::max(makespan, t);
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      auto& rank = ranks_[r];
      if (rank.ops_left > 0) {
        throw Error(
            fmt::format("simulation deadlocked: rank {} has {} ops that never ran (a collective "
                        "some group member never reached?)",
                        r, rank.ops_left));
      }
      account_tail(rank, makespan);
      result_.ranks[r] = rank.account;
    }
    result_.traffic = net_->traffic();
    for (int c = 0; c < workload::kCommClassCount; ++c)
      result_.class_traffic[static_cast<std::size_t>(c)] = net_->tagged(c);
    result_.events = sim_.events();
    return std::move(result_);
  }

 private:
  void init_rank(std::int32_t r, bool traced) {
    auto& rank = ranks_[static_cast<std::size_t>(r)];
    rank.ops = &graph_.ranks[static_cast<std::size_t>(r)];
    const auto& ops = rank.ops->ops;
    const auto n = ops.size();
    rank.deps_left.resize(n);
    rank.succ_offsets.assign(n + 1, 0);
    rank.stream_ops.resize(graph_.streams.size());
    rank.stream_head.assign(graph_.streams.size(), 0);
    rank.stream_busy.assign(graph_.streams.size(), 0);
    rank.op_start.assign(n, Time::zero());
    rank.op_end.assign(n, Time::zero());
    rank.collective_start.assign(n, Time::zero());
    rank.last_dep.assign(n, kNone);
    for (std::size_t i = 0; i < n; ++i) {
      rank.deps_left[i] = static_cast<std::int32_t>(ops[i].deps.size());
      for (auto d : ops[i].deps) {
        if (d < 0 || static_cast<std::size_t>(d) >= i) {
          throw Error(fmt::format(
              "op graph: rank {} op {} depends on op {}, which is not an earlier op", r, i, d));
        }
        ++rank.succ_offsets[static_cast<std::size_t>(d) + 1];
      }
      rank.stream_ops[static_cast<std::size_t>(ops[i].stream)].push_back(
          static_cast<std::int32_t>(i));
    }
    for (std::size_t i = 0; i < n; ++i) rank.succ_offsets[i + 1] += rank.succ_offsets[i];
    rank.succ.resize(static_cast<std::size_t>(rank.succ_offsets[n]));
    std::vector<std::int32_t> fill(rank.succ_offsets.begin(), rank.succ_offsets.end() - 1);
    for (std::size_t i = 0; i < n; ++i) {
      for (auto d : ops[i].deps)
        rank.succ[static_cast<std::size_t>(fill[static_cast<std::size_t>(d)]++)] =
            static_cast<std::int32_t>(i);
    }
    rank.ops_left = n;
    rank.traced = traced;
    const auto& gpu = cluster_.gpu(rank.ops->gpu);
    rank.gpu_type = &gpu.type;
    if (options_.mode == network::NetworkMode::kFlow) {
      rank.sm = sim_.fluid().add_resource(1.0);
      rank.hbm = sim_.fluid().add_resource(1.0);
    }
    if (traced && options_.timeline) {
      options_.timeline->set_rank_name(
          r, fmt::format("rank {} ({})", r, cluster_.nodes()[gpu.node].name));
    }
  }

  void try_start(std::int32_t r, std::int32_t s) {
    auto& rank = ranks_[static_cast<std::size_t>(r)];
    const auto su = static_cast<std::size_t>(s);
    if (rank.stream_busy[su] || rank.stream_head[su] >= rank.stream_ops[su].size()) return;
    const auto op = rank.stream_ops[su][rank.stream_head[su]];
    if (rank.deps_left[static_cast<std::size_t>(op)] > 0) return;
    start_op(r, op);
  }

  void start_op(std::int32_t r, std::int32_t index) {
    auto& rank = ranks_[static_cast<std::size_t>(r)];
    const Op& op = rank.ops->ops[static_cast<std::size_t>(index)];
    rank.stream_busy[static_cast<std::size_t>(op.stream)] = 1;
    rank.op_start[static_cast<std::size_t>(index)] = sim_.now();
    if (op.stream == compute_stream_) account_gap(rank, index);
    if (op.kind == OpKind::kCollective) {
      arrive(r, index);
      return;
    }
    const auto c = cost_.cost(op.kernel, *rank.gpu_type);
    rank.account.flops += op.kernel.flops;
    ++result_.kernels;
    if (options_.mode == network::NetworkMode::kAnalytical) {
      sim_.after(c.duration(), [this, r, index] { finish_op(r, index); });
      return;
    }
    auto start_activity = [this, r, index, compute = c.compute_seconds, memory = c.memory_seconds] {
      const auto& st = ranks_[static_cast<std::size_t>(r)];
      const engine::ResourceUse uses[] = {{st.sm, compute}, {st.hbm, memory}};
      engine::ActivitySpec spec;
      spec.work = 1.0;
      spec.priority = 1;
      spec.on_done = [this, r, index] { finish_op(r, index); };
      sim_.fluid().start(std::move(spec), uses);
    };
    if (c.launch_overhead > Time::zero()) {
      sim_.after(c.launch_overhead, std::move(start_activity));
    } else {
      start_activity();
    }
  }

  // After its last compute op a rank may still wait for its own collectives (e.g. a
  // replica sync), then for the slowest rank (see run::account_tail).
  void account_tail(RankState& rank, Time makespan) {
    const Time t = std::min(rank.compute_idle_since, makespan);
    const auto& ops = rank.ops->ops;
    std::vector<CollectiveSpan> spans;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind == OpKind::kCollective && rank.op_end[i] > t)
        spans.push_back({rank.collective_start[i], rank.op_end[i], ops[i].collective.comm_class});
    }
    run::account_tail(rank.account, t, makespan, std::move(spans));
  }

  // The compute stream was idle from compute_idle_since until now: say why.
  void account_gap(RankState& rank, std::int32_t index) {
    const Time gap_start = rank.compute_idle_since;
    const Time now = sim_.now();
    if (now <= gap_start) return;
    const OpTimes times{rank.ops->ops, rank.op_start, rank.collective_start, rank.op_end,
                        rank.stream_ops};
    run::account_wait(rank.account, gap_start, now, rank.last_dep[static_cast<std::size_t>(index)],
                      times);
  }

  void arrive(std::int32_t r, std::int32_t index) {
    auto& rank = ranks_[static_cast<std::size_t>(r)];
    const auto& call = rank.ops->ops[static_cast<std::size_t>(index)].collective;
    const auto g = call.group;
    if (g < 0 || static_cast<std::size_t>(g) >= graph_.groups.size()) {
      throw Error(fmt::format(
          "op graph: rank {} calls a collective on group {}, which does not exist", r, g));
    }
    RankState::Membership* member = nullptr;
    for (auto& m : rank.groups) {
      if (m.group == g) member = &m;
    }
    if (!member) {
      throw Error(
          fmt::format("op graph: rank {} calls a collective on group '{}' it is not a member of", r,
                      graph_.groups[static_cast<std::size_t>(g)].name));
    }
    const auto k = member->calls++;
    const auto& members = graph_.groups[static_cast<std::size_t>(g)].ranks;
    auto& inst = instances_[static_cast<std::size_t>(g)][k];
    if (inst.members.empty()) {
      inst.members.assign(members.size(), {kNone, kNone});
      if (call.op == network::CollectiveOp::kAllToAllV) inst.rows.resize(members.size());
    }
    const auto pos = static_cast<std::size_t>(member->position);
    inst.members[pos] = {r, index};
    if (!inst.rows.empty()) inst.rows[pos] = call.send_row;
    if (++inst.arrived < static_cast<int>(members.size())) return;
    launch_collective(g, k, r);
  }

  // `last` is the member whose arrival completed the group: in traces an arrow goes from it
  // to every other traced member, showing whom they waited for.
  void launch_collective(std::int32_t g, std::int32_t k, std::int32_t last) {
    auto node = instances_[static_cast<std::size_t>(g)].extract(k);
    auto inst = std::make_shared<Instance>(std::move(node.mapped()));
    const auto& first = ranks_[static_cast<std::size_t>(inst->members[0].first)];
    const auto& call = first.ops->ops[static_cast<std::size_t>(inst->members[0].second)].collective;
    network::CollectiveSpec spec;
    spec.op = call.op;
    spec.algorithm = call.algorithm;
    spec.bytes = call.bytes;
    spec.priority = call.priority;
    spec.traffic_tag = static_cast<int>(call.comm_class);
    const auto n = inst->members.size();
    spec.gpus.reserve(n);
    for (const auto& [rank, op] : inst->members)
      spec.gpus.push_back(ranks_[static_cast<std::size_t>(rank)].ops->gpu);
    if (call.op == network::CollectiveOp::kAllToAll) {
      // Compact all-to-all: members may each send a different (uniform) buffer.
      bool differ = false;
      for (const auto& [rank, op] : inst->members) {
        differ = differ || ranks_[static_cast<std::size_t>(rank)]
                                   .ops->ops[static_cast<std::size_t>(op)]
                                   .collective.bytes != call.bytes;
      }
      if (differ) {
        spec.send_bytes.reserve(n);
        for (const auto& [rank, op] : inst->members) {
          spec.send_bytes.push_back(ranks_[static_cast<std::size_t>(rank)]
                                        .ops->ops[static_cast<std::size_t>(op)]
                                        .collective.bytes);
        }
      }
    }
    if (!inst->rows.empty()) {
      spec.send_matrix.reserve(n * n);
      for (std::size_t i = 0; i < n; ++i) {
        if (inst->rows[i].size() != n) {
          throw Error(fmt::format(
              "op graph: all_to_allv on group '{}' has a send row of {} entries for {} members",
              graph_.groups[static_cast<std::size_t>(g)].name, inst->rows[i].size(), n));
        }
        spec.send_matrix.insert(spec.send_matrix.end(), inst->rows[i].begin(), inst->rows[i].end());
      }
    }
    std::vector<engine::ActivityId> holds;
    if (options_.mode == network::NetworkMode::kFlow && !call.sm_free) {
      for (const auto& [rank, op] : inst->members) {
        const auto& st = ranks_[static_cast<std::size_t>(rank)];
        const double fraction = cost_.comm_sm_fraction(*st.gpu_type);
        if (fraction <= 0) continue;
        engine::ActivitySpec hold;
        hold.work = std::numeric_limits<double>::infinity();
        hold.priority = 0;
        hold.max_rate = fraction;
        const engine::ResourceUse use[] = {{st.sm, 1.0}};
        holds.push_back(sim_.fluid().start(std::move(hold), use));
      }
    }
    for (const auto& [rank, op] : inst->members) {
      ranks_[static_cast<std::size_t>(rank)].collective_start[static_cast<std::size_t>(op)] =
          sim_.now();
    }
    if (options_.timeline && ranks_[static_cast<std::size_t>(last)].traced) {
      auto& tl = *options_.timeline;
      const auto& last_state = ranks_[static_cast<std::size_t>(last)];
      std::int32_t last_op = kNone;
      for (const auto& [rank, op] : inst->members) {
        if (rank == last) last_op = op;
      }
      const auto from_track = tl.track(graph_.streams[static_cast<std::size_t>(
          last_state.ops->ops[static_cast<std::size_t>(last_op)].stream)]);
      for (const auto& [rank, op] : inst->members) {
        const auto& st = ranks_[static_cast<std::size_t>(rank)];
        if (rank == last || !st.traced) continue;
        const auto to_track = tl.track(graph_.streams[static_cast<std::size_t>(
            st.ops->ops[static_cast<std::size_t>(op)].stream)]);
        tl.add_flow(next_flow_++, traces::FlowEnd{last, from_track, sim_.now()},
                    traces::FlowEnd{rank, to_track, sim_.now()}, "waited for", "collective");
      }
    }
    ++result_.collectives;
    net_->start_collective(spec, [this, inst, holds = std::move(holds)] {
      for (auto h : holds) sim_.fluid().cancel(h);
      for (const auto& [rank, op] : inst->members) finish_op(rank, op);
    });
  }

  void finish_op(std::int32_t r, std::int32_t index) {
    auto& rank = ranks_[static_cast<std::size_t>(r)];
    const auto i = static_cast<std::size_t>(index);
    const Op& op = rank.ops->ops[i];
    const Time now = sim_.now();
    rank.op_end[i] = now;
    const auto s = static_cast<std::size_t>(op.stream);
    rank.stream_busy[s] = 0;
    ++rank.stream_head[s];
    if (op.stream == compute_stream_) {
      if (op.kind == OpKind::kKernel) {
        rank.account.compute += now - rank.op_start[i];
      } else {
        // A collective on the compute stream itself: its wait and transfer are exposed.
        const Time started = rank.collective_start[i];
        rank.account.straggler_wait += started - rank.op_start[i];
        rank.account.exposed_comm[static_cast<std::size_t>(op.collective.comm_class)] +=
            now - started;
      }
      rank.compute_idle_since = now;
    }
    // A step ends with its last op on the compute stream: communication left running in
    // the background (overlapped syncs) belongs to the time of the steps it overlaps.
    if (op.stream == compute_stream_ || compute_stream_ == kNone) {
      auto& step_end = result_.step_end[static_cast<std::size_t>(
          std::clamp(op.step, 0, static_cast<int>(result_.step_end.size()) - 1))];
      step_end = std::max(step_end, now);
    }
    rank.account.end = std::max(rank.account.end, now);
    result_.drain_end = std::max(result_.drain_end, now);
    --rank.ops_left;
    if (rank.traced && options_.timeline) record(r, rank, index);
    for (auto k = rank.succ_offsets[i]; k < rank.succ_offsets[i + 1]; ++k) {
      const auto next = rank.succ[static_cast<std::size_t>(k)];
      rank.last_dep[static_cast<std::size_t>(next)] = index;
      if (--rank.deps_left[static_cast<std::size_t>(next)] == 0) {
        try_start(r, rank.ops->ops[static_cast<std::size_t>(next)].stream);
      }
    }
    try_start(r, op.stream);
    if (options_.progress && ++finished_ops_ % (1u << 16) == 0)
      options_.progress(now, finished_ops_);
  }

  void record(std::int32_t r, const RankState& rank, std::int32_t index) {
    auto& tl = *options_.timeline;
    const auto i = static_cast<std::size_t>(index);
    const Op& op = rank.ops->ops[i];
    const auto track = tl.track(graph_.streams[static_cast<std::size_t>(op.stream)]);
    const auto name = tl.name(graph_.names[static_cast<std::size_t>(op.name)]);
    if (op.kind == OpKind::kKernel) {
      tl.add_span(r, track, name, tl.name(cost::to_string(op.kernel.kind)), rank.op_start[i],
                  rank.op_end[i],
                  {traces::Arg("step", op.step), traces::Arg("flops", op.kernel.flops),
                   traces::Arg("hbm_bytes", op.kernel.hbm_bytes)});
    } else {
      const auto category = tl.name(workload::to_string(op.collective.comm_class));
      if (rank.collective_start[i] > rank.op_start[i]) {
        tl.add_span(r, track, tl.name("wait for peers"), category, rank.op_start[i],
                    rank.collective_start[i]);
      }
      const auto& group = graph_.groups[static_cast<std::size_t>(op.collective.group)];
      tl.add_span(
          r, track, name, category, rank.collective_start[i], rank.op_end[i],
          {traces::Arg("step", op.step), traces::Arg("bytes", op.collective.bytes),
           traces::Arg("op", network::to_string(op.collective.op)),
           traces::Arg("group", group.name), traces::Arg("group_size", group.ranks.size())});
    }
  }

  const workload::OpGraph& graph_;
  const topology::Cluster& cluster_;
  const cost::CostModel& cost_;
  const ReplayOptions& options_;
  engine::Simulator sim_;
  std::unique_ptr<network::Network> net_;
  std::int32_t compute_stream_ = kNone;
  std::vector<RankState> ranks_;
  std::vector<std::unordered_map<std::int32_t, Instance>> instances_;
  ReplayResult result_;
  std::uint64_t finished_ops_ = 0;
  std::uint64_t next_flow_ = 0;
};

}  // namespace

ReplayResult replay(const workload::OpGraph& graph, const topology::Cluster& cluster,
                    const cost::CostModel& cost, const ReplayOptions& options) {
  if (graph.ranks.empty()) throw Error("op graph: no ranks");
  if (has_link_factors(cluster, cost)) {
    const topology::Cluster calibrated = calibrated_cluster(cluster, cost);
    Replayer replayer(graph, calibrated, cost, options);
    return replayer.run();
  }
  Replayer replayer(graph, cluster, cost, options);
  return replayer.run();
}

void account_tail(RankAccount& a, Time from, Time makespan, std::vector<CollectiveSpan> spans) {
  if (makespan <= from) return;
  std::erase_if(spans, [&](const CollectiveSpan& s) {
    return s.end <= from || s.start >= makespan || s.end <= s.start;
  });
  std::vector<Time> cuts = {from, makespan};
  for (const auto& s : spans) {
    cuts.push_back(std::max(s.start, from));
    cuts.push_back(std::min(s.end, makespan));
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
    const Time lo = cuts[k], hi = cuts[k + 1];
    const CollectiveSpan* running = nullptr;
    for (const auto& s : spans) {
      if (s.start <= lo && s.end >= hi && (!running || s.end > running->end)) running = &s;
    }
    if (running) {
      a.exposed_comm[static_cast<std::size_t>(running->comm_class)] += hi - lo;
    } else {
      a.straggler_wait += hi - lo;
    }
  }
}

std::vector<std::vector<std::int32_t>> ops_by_stream(const std::vector<workload::Op>& ops) {
  std::vector<std::vector<std::int32_t>> out;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto s = static_cast<std::size_t>(ops[i].stream);
    if (s >= out.size()) out.resize(s + 1);
    out[s].push_back(static_cast<std::int32_t>(i));
  }
  return out;
}

void account_wait(RankAccount& a, Time idle_since, Time now, std::int32_t blocker,
                  const OpTimes& times) {
  if (now <= idle_since) return;
  const auto live_collective = [&](std::int32_t i) {
    const auto u = static_cast<std::size_t>(i);
    return i >= 0 && times.ops[u].kind == OpKind::kCollective && times.ended[u] > idle_since;
  };
  if (!live_collective(blocker)) {
    a.bubble += now - idle_since;
    return;
  }
  Time hi = now;
  for (std::int32_t b = blocker; live_collective(b) && hi > idle_since;) {
    const auto u = static_cast<std::size_t>(b);
    const Time started = std::clamp(times.started[u], idle_since, hi);
    a.exposed_comm[static_cast<std::size_t>(times.ops[u].collective.comm_class)] += hi - started;
    const Time issued = std::clamp(times.issued[u], idle_since, started);
    a.straggler_wait += started - issued;
    hi = issued;
    // The previous op on b's stream (its ops are in increasing index).
    const auto& on_stream = times.stream_ops[static_cast<std::size_t>(times.ops[u].stream)];
    const auto at = std::lower_bound(on_stream.begin(), on_stream.end(), b);
    std::int32_t next = at == on_stream.begin() ? kNone : *(at - 1);
    for (auto d : times.ops[u].deps) {
      if (next == kNone ||
          times.ended[static_cast<std::size_t>(d)] > times.ended[static_cast<std::size_t>(next)])
        next = d;
    }
    b = next;
  }
  a.straggler_wait += hi - idle_since;
}

RankAccount per_step(const RankAccount& a, std::int64_t steps) {
  RankAccount out = a;
  const std::int64_t k = std::max<std::int64_t>(1, steps);
  auto div = [k](Time t) { return Time::from_ps(t.ps() / k); };
  out.compute = div(a.compute);
  out.straggler_wait = div(a.straggler_wait);
  out.bubble = div(a.bubble);
  for (auto& t : out.exposed_comm) t = div(t);
  out.flops = a.flops / static_cast<double>(k);
  return out;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double pos = p * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(pos);
  const auto hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace strait::sim::run
