#pragma once
// MeasuredRun: the measured timeline of an executed op graph (every rank's op start and
// end, relative to a common start after a barrier) and what it says in the simulator's
// terms: step times, per-rank accounts, the --json result and the Chrome/Perfetto trace.
//
// Conventions, the simulator's (sim/run/training_run.hpp, rank_account.hpp) where it can be
// measured:
//   - Step s ends when its last compute-stream op ends on any rank; step times are the
//     differences.
//   - A rank's compute-stream time: busy with kernels = compute; idle before an op whose
//     latest-finishing dependency is a collective that ended inside the gap = exposed
//     communication of that collective's class; other idle = bubble; idle after the rank's
//     last compute op until the makespan = straggler wait. Idle behind a collective is
//     straggler wait until the collective started (the last member issued it: the
//     matching calls' latest start, all ranks sharing one steady clock on one host), then
//     exposed communication of its class.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/units.hpp"
#include "sim/run/rank_account.hpp"
#include "sim/run/training_run.hpp"
#include "sim/workload/op_graph.hpp"
#include "traces/timeline.hpp"

namespace strait::executor {

/// When each op of one rank started and ended (index = op index).
struct OpTimes {
  std::vector<Time> start, end;
};

struct MeasuredRun {
  std::string scenario;
  std::string cluster;
  std::string backend = "cpu";
  const sim::workload::OpGraph* graph = nullptr;
  std::vector<OpTimes> ranks;  // by rank
  double wall_s = 0;           // the executed steps, end to end
  int warmup_runs = 0;         // untimed runs of the whole graph before the measured one
  /// Which measured steps warm up and drain (the plan's, as the simulator counts them).
  sim::run::SteadyState phases;
  /// Cores of the machine and how many of them other processes kept busy on average during
  /// the measured run (-1: unknown, e.g. ranks on several machines).
  int machine_cores = 0;
  double other_busy_cores = -1;
};

/// When each step ended (the last compute-stream op of the step on any rank).
std::vector<Time> step_ends(const MeasuredRun& run);
/// When each op's collective started: the latest start of the matching call (the k-th on
/// its group) over the group's members; kernels: their own start. By rank, then op.
std::vector<std::vector<Time>> collective_starts(const MeasuredRun& run);
/// Rank `r`'s account of its compute stream over the whole run (not per step).
sim::run::RankAccount rank_account(const MeasuredRun& run, int r, Time makespan);
/// The same with collective_starts(run) computed once.
sim::run::RankAccount rank_account(const MeasuredRun& run, int r, Time makespan,
                                   const std::vector<std::vector<Time>>& starts);
/// How steady the machine was: for every kernel of every rank (by name and occurrence in
/// its step) its interquartile range over the steps in percent of its median; the median
/// of those. Kernels under 10 us and runs under 3 steps are left out (0 when none is left).
/// A quiet machine gives a few percent; tens of percent mean the run was disturbed.
double kernel_spread_percent(const MeasuredRun& run);
/// The result in the keys of `strait simulate --json` that can be measured (step times,
/// samples/s, critical rank, breakdown_ms, breakdown_critical_ms, top_stragglers, ops),
/// plus rank_compute_ms and breakdown_by_rank_ms (per step, by rank), backend, warmup_runs,
/// kernel_spread_percent, machine (cores, other_busy_cores; when known), exec_wall_s.
nlohmann::json measured_report_json(const MeasuredRun& run);
/// Adds every rank's ops to `timeline` as the simulator lays them out (a process per rank,
/// a track per stream, kernels by family, collectives by communication class).
void add_to_timeline(const MeasuredRun& run, traces::Timeline& timeline);

}  // namespace strait::executor
