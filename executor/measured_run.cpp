#include "executor/measured_run.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/statistics.hpp"
#include "sim/run/training_report_json.hpp"
#include "sim/workload/collective_calls.hpp"

namespace strait::executor {
namespace {

using sim::run::per_step;
using sim::run::RankAccount;
using sim::workload::CommClass;
using sim::workload::OpKind;

std::int32_t compute_stream(const sim::workload::OpGraph& graph) {
  const auto it = std::find(graph.streams.begin(), graph.streams.end(), "compute");
  return it == graph.streams.end() ? -1 : static_cast<std::int32_t>(it - graph.streams.begin());
}

nlohmann::json breakdown(const RankAccount& a) {
  nlohmann::json b = nlohmann::json::object();
  b["compute"] = a.compute.to_ms();
  for (int c = 0; c < sim::workload::kCommClassCount; ++c) {
    b[fmt::format("exposed_{}", sim::workload::to_string(static_cast<CommClass>(c)))] =
        a.exposed_comm[static_cast<std::size_t>(c)].to_ms();
  }
  b["straggler_wait"] = a.straggler_wait.to_ms();
  b["bubble"] = a.bubble.to_ms();
  return b;
}

}  // namespace

std::vector<Time> step_ends(const MeasuredRun& run) {
  const auto& graph = *run.graph;
  const auto compute = compute_stream(graph);
  std::vector<Time> ends(static_cast<std::size_t>(std::max(0, graph.steps)), Time::zero());
  for (std::size_t r = 0; r < graph.ranks.size(); ++r) {
    const auto& ops = graph.ranks[r].ops;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const auto s = static_cast<std::size_t>(ops[i].step);
      if (ops[i].stream != compute || s >= ends.size()) continue;
      ends[s] = std::max(ends[s], run.ranks[r].end[i]);
    }
  }
  // A step whose compute ended before the previous one's (pipelining) ends with it.
  for (std::size_t s = 1; s < ends.size(); ++s) ends[s] = std::max(ends[s], ends[s - 1]);
  return ends;
}

std::vector<std::vector<Time>> collective_starts(const MeasuredRun& run) {
  const auto& graph = *run.graph;
  const sim::workload::GroupCalls calls(graph);
  std::vector<std::vector<Time>> starts;
  for (std::size_t r = 0; r < graph.ranks.size(); ++r) {
    const auto& ops = graph.ranks[r].ops;
    auto out = run.ranks[r].start;
    const auto numbers = sim::workload::call_numbers(ops);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind != OpKind::kCollective) continue;
      // A call starts when its last member issued it (members that make fewer calls: none).
      const auto g = static_cast<std::size_t>(ops[i].collective.group);
      for (std::size_t j = 0; j < calls.members(g); ++j) {
        const auto op = calls.op(g, j, numbers[i]);
        if (op == sim::workload::kNotACall) continue;
        const auto member = static_cast<std::size_t>(graph.groups[g].ranks[j]);
        out[i] = std::max(out[i], run.ranks[member].start[static_cast<std::size_t>(op)]);
      }
      out[i] = std::min(out[i], run.ranks[r].end[i]);
    }
    starts.push_back(std::move(out));
  }
  return starts;
}

RankAccount rank_account(const MeasuredRun& run, int r, Time makespan) {
  return rank_account(run, r, makespan, collective_starts(run));
}

RankAccount rank_account(const MeasuredRun& run, int r, Time makespan,
                         const std::vector<std::vector<Time>>& starts) {
  const auto& graph = *run.graph;
  const auto& started = starts[static_cast<std::size_t>(r)];
  const auto compute = compute_stream(graph);
  const auto& ops = graph.ranks[static_cast<std::size_t>(r)].ops;
  const auto& times = run.ranks[static_cast<std::size_t>(r)];
  const auto stream_ops = sim::run::ops_by_stream(ops);
  RankAccount a;
  Time idle_since = Time::zero();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    if (op.kind == OpKind::kKernel) a.flops += op.kernel.flops;
    if (op.stream != compute) continue;
    const Time start = times.start[i], end = times.end[i];
    if (start > idle_since) {
      std::int32_t blocker = -1;
      for (auto d : op.deps) {
        if (blocker < 0 ||
            times.end[static_cast<std::size_t>(d)] > times.end[static_cast<std::size_t>(blocker)])
          blocker = d;
      }
      sim::run::account_wait(a, idle_since, start, blocker,
                             {ops, times.start, started, times.end, stream_ops});
    }
    if (op.kind == OpKind::kKernel) {
      a.compute += end - start;
    } else {
      // A collective on the compute stream itself: its wait and transfer are exposed.
      const Time begun = std::clamp(started[i], start, end);
      a.straggler_wait += begun - start;
      a.exposed_comm[static_cast<std::size_t>(op.collective.comm_class)] += end - begun;
    }
    idle_since = std::max(idle_since, end);
  }
  a.end = idle_since;
  // After the last compute-stream op: the rank's own collectives still running, then the
  // slowest rank (the simulator's rule, sim/run/rank_account.hpp).
  std::vector<sim::run::CollectiveSpan> spans;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind == OpKind::kCollective && times.end[i] > idle_since)
      spans.push_back({started[i], times.end[i], ops[i].collective.comm_class});
  }
  sim::run::account_tail(a, idle_since, makespan, std::move(spans));
  return a;
}

double kernel_spread_percent(const MeasuredRun& run) {
  const auto& graph = *run.graph;
  // Per rank and kernel (name, occurrence in its step): its times over the steps.
  std::map<std::tuple<std::size_t, std::int32_t, int>, std::vector<double>> times;
  for (std::size_t r = 0; r < run.ranks.size(); ++r) {
    std::map<std::pair<std::int64_t, std::int32_t>, int> seen;
    const auto& ops = graph.ranks[r].ops;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].kind != sim::workload::OpKind::kKernel) continue;
      const int k = seen[{ops[i].step, ops[i].name}]++;
      times[{r, ops[i].name, k}].push_back((run.ranks[r].end[i] - run.ranks[r].start[i]).to_us());
    }
  }
  std::vector<double> spreads;
  for (auto& [key, t] : times) {
    const double mid = percentile(t, 0.5);
    if (t.size() < 3 || mid < 10) continue;  // too few steps, or near the timer's resolution
    spreads.push_back(100 * (percentile(t, 0.75) - percentile(t, 0.25)) / mid);
  }
  return spreads.empty() ? 0.0 : percentile(spreads, 0.5);
}

nlohmann::json measured_report_json(const MeasuredRun& run) {
  const auto& graph = *run.graph;
  const auto ends = step_ends(run);
  std::vector<double> step_ms;
  Time previous = Time::zero();
  for (const auto& e : ends) {
    step_ms.push_back((e - previous).to_ms());
    previous = e;
  }
  const Time makespan = previous;
  const auto stats = sim::run::step_statistics(step_ms, run.phases);
  const auto n = graph.ranks.size();
  const auto starts = collective_starts(run);
  std::vector<RankAccount> accounts;
  for (std::size_t r = 0; r < n; ++r)
    accounts.push_back(rank_account(run, static_cast<int>(r), makespan, starts));
  std::size_t critical = 0;
  for (std::size_t r = 1; r < n; ++r) {
    if (accounts[r].straggler_wait < accounts[critical].straggler_wait) critical = r;
  }
  RankAccount sum;
  double samples = 0;
  nlohmann::json rank_compute = nlohmann::json::array();
  nlohmann::json by_rank = nlohmann::json::array();
  std::vector<std::pair<double, int>> by_compute;
  for (std::size_t r = 0; r < n; ++r) {
    const auto& a = accounts[r];
    sum.compute += a.compute;
    sum.straggler_wait += a.straggler_wait;
    sum.bubble += a.bubble;
    for (std::size_t c = 0; c < sum.exposed_comm.size(); ++c)
      sum.exposed_comm[c] += a.exposed_comm[c];
    samples += static_cast<double>(graph.ranks[r].samples);
    const auto mine = per_step(a, graph.steps);
    rank_compute.push_back(mine.compute.to_ms());
    by_rank.push_back(breakdown(mine));
    by_compute.emplace_back(-mine.compute.to_ms(), static_cast<int>(r));
  }
  // The five ranks with the most compute per step, as the simulator lists them.
  std::sort(by_compute.begin(), by_compute.end());
  nlohmann::json stragglers = nlohmann::json::array();
  for (std::size_t i = 0; i < std::min<std::size_t>(5, by_compute.size()); ++i)
    stragglers.push_back({{"rank", by_compute[i].second}, {"compute_ms", -by_compute[i].first}});
  nlohmann::json out = {
      {"scenario", run.scenario},
      {"cluster", run.cluster},
      {"gpus", static_cast<int>(n)},
      {"mode", "measured"},
      {"backend", run.backend},
      {"steps", graph.steps},
      {"step_time_ms", stats.mean_ms},
      {"step_time_p50_ms", stats.p50_ms},
      {"step_time_p99_ms", stats.p99_ms},
      {"step_times_ms", step_ms},
      {"steady_state", sim::run::steady_state_json(stats)},
      {"samples_per_sec", stats.mean_ms > 0 ? samples / (stats.mean_ms * 1e-3) : 0.0},
      {"critical_rank", static_cast<int>(critical)},
      {"breakdown_ms", breakdown(per_step(sum, static_cast<std::int64_t>(graph.steps) *
                                                   static_cast<std::int64_t>(n)))},
      {"breakdown_critical_ms", breakdown(per_step(accounts[critical], graph.steps))},
      {"top_stragglers", stragglers},
      {"rank_compute_ms", rank_compute},
      {"breakdown_by_rank_ms", by_rank},
      {"ops", std::accumulate(graph.ranks.begin(), graph.ranks.end(), std::uint64_t{0},
                              [](std::uint64_t s, const sim::workload::RankOps& r) {
                                return s + r.ops.size();
                              })},
      {"warmup_runs", run.warmup_runs},
      {"kernel_spread_percent", kernel_spread_percent(run)},
      {"exec_wall_s", run.wall_s}};
  if (run.other_busy_cores >= 0) {
    out["machine"] = {{"cores", run.machine_cores}, {"other_busy_cores", run.other_busy_cores}};
  }
  return out;
}

void add_to_timeline(const MeasuredRun& run, traces::Timeline& tl) {
  const auto& graph = *run.graph;
  const auto starts = collective_starts(run);
  for (std::size_t r = 0; r < graph.ranks.size(); ++r) {
    const int rank = static_cast<int>(r);
    tl.set_rank_name(rank, fmt::format("rank {} (measured, {})", rank, run.backend));
    const auto& ops = graph.ranks[r].ops;
    const auto& times = run.ranks[r];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const auto& op = ops[i];
      const auto track = tl.track(graph.streams[static_cast<std::size_t>(op.stream)]);
      const auto name = tl.name(graph.names[static_cast<std::size_t>(op.name)]);
      if (op.kind == OpKind::kKernel) {
        tl.add_span(rank, track, name, tl.name(sim::cost::to_string(op.kernel.kind)),
                    times.start[i], times.end[i],
                    {traces::Arg("step", op.step), traces::Arg("flops", op.kernel.flops),
                     traces::Arg("hbm_bytes", op.kernel.hbm_bytes)});
      } else {
        const auto category = tl.name(sim::workload::to_string(op.collective.comm_class));
        const Time begun = starts[r][i];
        if (begun > times.start[i])
          tl.add_span(rank, track, tl.name("wait for peers"), category, times.start[i], begun);
        tl.add_span(rank, track, name, category, begun, times.end[i],
                    {traces::Arg("step", op.step), traces::Arg("bytes", op.collective.bytes),
                     traces::Arg("op", sim::network::to_string(op.collective.op))});
      }
    }
  }
}

}  // namespace strait::executor
