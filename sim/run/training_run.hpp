#pragma once
// TrainingRun: one training scenario simulated end to end — op graph, replay on engine,
// network and cost model, memory model — and summarized the way its users read a step:
// step time, throughput, MFU, where the time went, stragglers, memory, traffic.
//
// Conventions
//   - Step s ends when its last compute-stream op ends on any rank; step times are the differences
//     (step 0 includes filling the train pipeline).
//   - Breakdowns are per step (a rank's totals divided by the steps) and add up, for
//     every rank, to the mean over every step (stats.all_steps_mean_ms): compute + exposed
//     communication (by class) + straggler wait + bubble (see rank_account.hpp for how idle
//     time is attributed).
//   - The critical rank is the one with the least straggler wait: the others wait for it.
//   - MFU = kernel FLOPs of all ranks / (makespan x sum of the GPUs' bf16 peaks).
//   - Steady state (steady_state()): the first replica_sync_staleness steps warm up (step 0
//     fills the train pipeline, and up to S replica syncs come to be in flight), the last
//     pipeline_depth - 1 drain (no batch is left to prefetch, so they are shorter); the
//     steps between are steady. Step-time statistics (mean, p50, p99) and samples/s are
//     over the steady steps; a run too short to have one gives them over every step and
//     says so (steady = false). MFU and the breakdowns are over the whole run.

#include <map>
#include <string>
#include <vector>

#include "sim/core/error.hpp"
#include "sim/cost/cost_model.hpp"
#include "sim/run/op_replay.hpp"
#include "sim/run/training_expansion.hpp"
#include "sim/workload/batch_cache.hpp"
#include "sim/workload/memory_model.hpp"
#include "sim/workload/scenario.hpp"
#include "sim/workload/work_estimate.hpp"

namespace strait::sim::run {

/// Steps of a run that warm up and drain (see the conventions above).
struct SteadyState {
  int warmup = 1;
  int drain = 0;
  /// Steps a run needs for `steady` steady steps.
  int steps_for(int steady) const { return warmup + drain + steady; }
};
SteadyState steady_state(const workload::ParallelPlan& plan);

/// Step-time statistics of a run's steps (simulated or measured) under `phases`: mean,
/// p50 and p99 over the steady steps, or over every step when there is none.
struct StepStatistics {
  double mean_ms = 0, p50_ms = 0, p99_ms = 0;
  int warmup_steps = 0, drain_steps = 0;
  bool steady = false;  // some step is neither warm-up nor drain
  double all_steps_mean_ms = 0;
  /// The steps the mean is over, and the mean's 95% confidence interval: mean -+
  /// t(0.975, n - 1) s / sqrt(n) (Student's t, s the steps' sample deviation); the mean
  /// itself for fewer than two steps.
  int counted_steps = 0;
  double mean_ci95_low_ms = 0, mean_ci95_high_ms = 0;
};
StepStatistics step_statistics(const std::vector<double>& step_ms, SteadyState phases);

struct Straggler {
  int rank = 0;
  double compute_ms = 0;  // per step
};

struct TrainingReport {
  std::string scenario;
  std::string cluster;
  int gpus = 0;  // GPUs the job runs on (the plan's ranks; may be fewer than the cluster's)
  int datacenters = 0;
  network::NetworkMode mode = network::NetworkMode::kFlow;
  int steps = 0;
  std::vector<double> step_ms;  // every step
  StepStatistics stats;         // step time over the steady steps (see the conventions)
  double samples_per_step = 0;
  double samples_per_sec = 0;
  double mfu = 0;
  int critical_rank = 0;
  RankAccount critical;  // per step
  RankAccount average;   // per step
  std::vector<Straggler> top_stragglers;
  std::vector<double> rank_compute_ms;  // per step, by rank
  workload::MemoryReport memory;
  workload::MemoryFit fit;
  double memory_capacity = 0;  // bytes per GPU of the critical GPU type
  network::TrafficStats traffic;
  std::array<network::TrafficStats, workload::kCommClassCount> class_traffic;  // by CommClass
  /// Per GPU type of the job, each kernel family's implementation as its profile names it
  /// (families without a name are left out).
  std::map<std::string, std::map<std::string, std::string>> kernel_implementations;
  std::uint64_t events = 0;
  std::uint64_t ops = 0;
  double build_wall_s = 0;  // op graph and memory model
  double sim_wall_s = 0;    // replay
};

struct TrainingRunOptions {
  std::optional<network::NetworkMode> mode;  // overrides the scenario's
  TraceSink* timeline = nullptr;
  std::vector<int> trace_ranks;
  std::function<void(Time, std::uint64_t)> progress;
  /// Sampled batches shared with other runs of the same base scenario (the planner's
  /// candidates); null: sampled for this run.
  workload::BatchCache* batches = nullptr;
};

/// The profiles a scenario uses: its "profiles" directory, else `default_dir`.
cost::CostModel load_cost_model(const workload::TrainingScenario& scenario,
                                const std::string& default_dir);

/// `profiles` with the kernel implementations the scenario's plan chooses ("kernels") in
/// use; ConfigError at the plan's /kernels/<family> for one the job's GPU types lack.
cost::CostModel with_plan_kernels(const cost::CostModel& profiles,
                                  const workload::TrainingScenario& scenario);

/// A result that breaks a physical bound (model FLOPs above the GPUs' highest peak, a rank
/// computing longer than the run lasted): a defect, never a report.
class PhysicalBoundError : public Error {
 public:
  using Error::Error;
};

/// Throws PhysicalBoundError when `flops` in `makespan` pass `peak` (FLOP/s: every GPU at
/// its highest precision's peak) or a rank computes longer than `makespan`. `run` names it.
void check_physical_bounds(const std::string& run, double flops, double peak, Time makespan,
                           const std::vector<RankAccount>& ranks);

/// Runs the scenario; costs the kernels its plan chooses (with_plan_kernels). Throws
/// workload::WorkLimitError past the scenario's work limit, PhysicalBoundError (above).
TrainingReport run_training(const workload::TrainingScenario& scenario, const cost::CostModel& cost,
                            const TrainingRunOptions& options);

/// What run_training builds before it replays (training_expansion.hpp), for the network
/// mode options.mode (else the scenario's) and the ranks options trace.
TrainingExpansion expand_training(const workload::TrainingScenario& scenario,
                                  const cost::CostModel& profiles,
                                  const TrainingRunOptions& options);

/// Replays `expansion` on `scenario`'s cluster: run_training(scenario, ...) for a scenario
/// that differs from the one expanded at most in its links' bandwidths and latencies (the
/// caller's promise; a test checks the results are the same on every bundled scenario).
/// Throws Error when `expansion` was built for another network mode or with a timeline.
TrainingReport run_training(const TrainingExpansion& expansion,
                            const workload::TrainingScenario& scenario,
                            const cost::CostModel& profiles, const TrainingRunOptions& options);

}  // namespace strait::sim::run
