#include "sim/run/training_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <optional>

#include <fmt/format.h>
#include <boost/math/distributions/students_t.hpp>

#include "sim/core/statistics.hpp"
#include "sim/workload/op_graph_builder.hpp"

namespace strait::sim::run {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

void check_physical_bounds(const std::string& run, double flops, double peak, Time makespan,
                           const std::vector<RankAccount>& ranks) {
  // A defect somewhere (a profile, a cost formula, the replay) must not reach a user as a
  // confident number: an MFU of 10^15 % was once reported with exit 0.
  const double seconds = makespan.to_s();
  if (flops > 0 && !(flops <= seconds * peak * (1 + 1e-9))) {
    throw PhysicalBoundError(fmt::format(
        "{}: the result breaks a physical bound: {:.4g} model FLOPs in {:.4g} s is {:.4g}% of "
        "the GPUs' highest peak; not reported (a defect: please report it with the scenario)",
        run, flops, seconds, 100 * flops / (seconds * peak)));
  }
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (ranks[r].compute > makespan) {
      throw PhysicalBoundError(fmt::format(
          "{}: the result breaks a physical bound: rank {} computes for {:.6g} ms in a run of "
          "{:.6g} ms; not reported (a defect: please report it with the scenario)",
          run, r, ranks[r].compute.to_ms(), makespan.to_ms()));
    }
  }
}

SteadyState steady_state(const workload::ParallelPlan& plan) {
  return {std::max(1, plan.replica_sync_staleness), plan.schedule.pipeline_depth - 1};
}

StepStatistics step_statistics(const std::vector<double>& step_ms, SteadyState phases) {
  StepStatistics s;
  const int steps = static_cast<int>(step_ms.size());
  s.all_steps_mean_ms = std::accumulate(step_ms.begin(), step_ms.end(), 0.0) /
                        static_cast<double>(std::max(1, steps));
  s.warmup_steps = std::min(phases.warmup, steps);
  s.drain_steps = std::min(phases.drain, steps - s.warmup_steps);
  s.steady = s.warmup_steps + s.drain_steps < steps;
  const std::vector<double> steady =
      s.steady
          ? std::vector<double>(step_ms.begin() + s.warmup_steps, step_ms.end() - s.drain_steps)
          : step_ms;
  s.mean_ms = std::accumulate(steady.begin(), steady.end(), 0.0) /
              static_cast<double>(std::max<std::size_t>(1, steady.size()));
  s.p50_ms = percentile(steady, 0.50);
  s.p99_ms = percentile(steady, 0.99);
  s.counted_steps = static_cast<int>(steady.size());
  s.mean_ci95_low_ms = s.mean_ci95_high_ms = s.mean_ms;
  if (steady.size() >= 2) {
    double ss = 0;
    for (const double x : steady) ss += (x - s.mean_ms) * (x - s.mean_ms);
    const double n = static_cast<double>(steady.size());
    const double t = boost::math::quantile(boost::math::students_t(n - 1), 0.975);
    const double half = t * std::sqrt(ss / (n - 1)) / std::sqrt(n);
    s.mean_ci95_low_ms = s.mean_ms - half;
    s.mean_ci95_high_ms = s.mean_ms + half;
  }
  return s;
}

cost::CostModel load_cost_model(const workload::TrainingScenario& scenario,
                                const std::string& default_dir) {
  return cost::CostModel(
      cost::load_profile_dir(scenario.profiles_dir.empty() ? default_dir : scenario.profiles_dir));
}

cost::CostModel with_plan_kernels(const cost::CostModel& profiles,
                                  const workload::TrainingScenario& scenario) {
  // One family at a time, so that an error names the family's key.
  const auto types = scenario.cluster.gpu_types();
  cost::CostModel chosen = profiles;
  for (const auto& [kind, name] : scenario.plan.kernels) {
    try {
      chosen = chosen.with_choice({{kind, name}}, types);
    } catch (const cost::CostError& e) {
      throw ConfigError(scenario.plan.file, std::string("/kernels/") + cost::to_string(kind),
                        e.what());
    }
  }
  return chosen;
}

namespace {

// The profiles, or where the plan names kernel implementations, `chosen`: a copy with them.
const cost::CostModel& plan_cost(const cost::CostModel& profiles,
                                 const workload::TrainingScenario& scenario,
                                 std::optional<cost::CostModel>& chosen) {
  if (scenario.plan.kernels.empty()) return profiles;
  return chosen.emplace(with_plan_kernels(profiles, scenario));
}

// A time that overflowed is formed deep in a cost or network model, which does not know
// the run's file: name it here.
template <typename Run>
auto naming_the_run(const workload::TrainingScenario& scenario, Run&& run) {
  try {
    return run();
  } catch (const TimeOverflow& e) {
    throw Error(
        fmt::format("{}: {}", scenario.file.empty() ? scenario.name : scenario.file, e.what()));
  }
}

ReplayOptions replay_options(network::NetworkMode mode, const TrainingRunOptions& options,
                             const workload::TrainingScenario& scenario,
                             const cost::CostModel& cost) {
  ReplayOptions replay_options;
  replay_options.mode = mode;
  replay_options.timeline = options.timeline;
  replay_options.trace_ranks = options.trace_ranks;
  replay_options.progress = options.progress;
  return with_host_progress(std::move(replay_options), scenario.cluster, cost);
}

TrainingExpansion expand(const workload::TrainingScenario& scenario, const cost::CostModel& cost,
                         const ReplayOptions& replay_options, workload::BatchCache* cache) {
  const auto build_start = std::chrono::steady_clock::now();
  // Each rank's ops go into the compact replay graph as soon as they are built: the whole
  // OpGraph of 131,072 ranks would take 7 GiB (replay_graph.hpp). The dataflow replay
  // (analytical, untraced) takes runs of kernels merged.
  TrainingExpansion x(replay_options.mode, runs_in_dataflow_order(replay_options));
  x.traced = replay_options.timeline != nullptr;
  // The batches are sampled once (or taken from the cache); the builder fills the memory
  // report as it goes.
  const auto batches = workload::batches_for(scenario, scenario.steps, cache);
  workload::OpGraphOptions graph_options;
  graph_options.batches = batches.get();
  graph_options.memory = &x.memory;
  x.graph = workload::build_op_graph(scenario, graph_options, [&](const workload::RankOps& rank) {
    const bool first = x.replay_graph.ranks().empty();
    x.replay_graph.add_rank(rank.rank, rank, cost.profile(scenario.cluster.gpu(rank.gpu).type),
                            traced_rank(replay_options, rank.rank));
    // Room for the other ranks at the first one's size, once (no regrowth of the arrays).
    if (first) x.replay_graph.reserve(scenario.layout.world, rank.ops.size());
  });
  x.replay_graph.finish(x.graph);
  // The job's GPUs: a plan may use only the first N of the cluster's.
  for (const auto& r : x.graph.ranks) {
    const std::string& type = scenario.cluster.gpu(r.gpu).type;
    if (x.kernel_implementations.count(type)) continue;
    auto& named = x.kernel_implementations[type];
    const cost::CalibrationProfile& profile = cost.profile(type);
    for (int k = 0; k < cost::kKernelKindCount; ++k) {
      const auto& name = profile.kernels[static_cast<std::size_t>(k)].implementation;
      if (!name.empty()) named[cost::to_string(static_cast<cost::KernelKind>(k))] = name;
    }
  }
  x.build_wall_s = seconds_since(build_start);
  return x;
}

// Samples per step, MFU and the physical bounds, from the replay's ranks.
void account_throughput(TrainingReport& report, const TrainingExpansion& x,
                        const workload::TrainingScenario& scenario, const cost::CostModel& cost,
                        const ReplayResult& result, Time makespan) {
  // peak: bf16, MFU's reference; highest: each GPU's highest peak in any precision, the
  // physical bound.
  double samples = 0, flops = 0, peak = 0, highest = 0;
  for (const auto& r : x.graph.ranks) {
    samples += static_cast<double>(r.samples);
    const auto& device = cost.device(scenario.cluster.gpu(r.gpu).type);
    peak += device.peak(cost::Precision::kBf16).value_or(0);
    double best = 0;
    for (int p = 0; p < cost::kPrecisionCount; ++p)
      best = std::max(best, device.peak(static_cast<cost::Precision>(p)).value_or(0));
    highest += best;
  }
  for (const auto& a : result.ranks) flops += a.flops;
  report.samples_per_step = samples;
  const double seconds = makespan.to_s();
  report.samples_per_sec = report.stats.mean_ms > 0 ? samples / (report.stats.mean_ms * 1e-3) : 0;
  report.mfu = seconds > 0 && peak > 0 ? flops / (seconds * peak) : 0;
  check_physical_bounds(scenario.file.empty() ? scenario.name : scenario.file, flops, highest,
                        makespan, result.ranks);
}

// The critical rank, the average rank and the ranks that compute longest.
void account_ranks(TrainingReport& report, const ReplayResult& result, int steps) {
  const auto n = result.ranks.size();
  std::size_t critical = 0;
  for (std::size_t r = 1; r < n; ++r) {
    if (result.ranks[r].straggler_wait < result.ranks[critical].straggler_wait) critical = r;
  }
  report.critical_rank = static_cast<int>(critical);
  report.critical = per_step(result.ranks[critical], steps);
  RankAccount sum;
  for (const auto& a : result.ranks) {
    sum.compute += a.compute;
    sum.straggler_wait += a.straggler_wait;
    sum.bubble += a.bubble;
    for (std::size_t c = 0; c < sum.exposed_comm.size(); ++c)
      sum.exposed_comm[c] += a.exposed_comm[c];
    sum.flops += a.flops;
  }
  report.average = per_step(sum, static_cast<std::int64_t>(steps) * static_cast<std::int64_t>(n));

  std::vector<Straggler> by_compute;
  by_compute.reserve(n);
  for (std::size_t r = 0; r < n; ++r)
    by_compute.push_back({static_cast<int>(r), per_step(result.ranks[r], steps).compute.to_ms()});
  report.rank_compute_ms.reserve(n);
  for (const auto& s : by_compute) report.rank_compute_ms.push_back(s.compute_ms);
  const auto top = std::min<std::size_t>(5, by_compute.size());
  std::partial_sort(by_compute.begin(), by_compute.begin() + static_cast<std::ptrdiff_t>(top),
                    by_compute.end(), [](const Straggler& a, const Straggler& b) {
                      return a.compute_ms != b.compute_ms ? a.compute_ms > b.compute_ms
                                                          : a.rank < b.rank;
                    });
  by_compute.resize(top);
  report.top_stragglers = std::move(by_compute);
}

TrainingReport replay_expansion(const TrainingExpansion& x,
                                const workload::TrainingScenario& scenario,
                                const cost::CostModel& cost, const ReplayOptions& replay_options) {
  TrainingReport report;
  report.scenario = scenario.name;
  report.cluster = scenario.cluster.name();
  report.datacenters = static_cast<int>(scenario.cluster.datacenters().size());
  report.mode = x.mode;
  report.steps = scenario.steps;
  report.gpus = static_cast<int>(x.graph.ranks.size());
  report.memory = x.memory;
  report.kernel_implementations = x.kernel_implementations;
  report.build_wall_s = x.build_wall_s;

  const auto sim_start = std::chrono::steady_clock::now();
  const auto result = replay(x.replay_graph, scenario.cluster, cost, replay_options);
  report.sim_wall_s = seconds_since(sim_start);
  report.events = result.events;
  report.traffic = result.traffic;
  report.class_traffic = result.class_traffic;
  report.ops = x.replay_graph.total_ops();

  Time previous = Time::zero();
  for (const auto& end : result.step_end) {
    report.step_ms.push_back((end - previous).to_ms());
    previous = end;
  }
  report.stats = step_statistics(report.step_ms, steady_state(scenario.plan));
  account_throughput(report, x, scenario, cost, result, previous);
  account_ranks(report, result, scenario.steps);

  // Memory against the GPU with the least capacity among the ranks that do not fit best.
  double capacity = 0;
  for (const auto& r : x.graph.ranks) {
    const auto& d = cost.device(scenario.cluster.gpu(r.gpu).type);
    const double usable = static_cast<double>(d.hbm_capacity - d.memory_reserved);
    capacity = capacity == 0 ? usable : std::min(capacity, usable);
  }
  report.memory_capacity = capacity;
  report.fit = report.memory.fits(capacity);
  return report;
}

}  // namespace

TrainingReport run_training(const workload::TrainingScenario& scenario,
                            const cost::CostModel& profiles, const TrainingRunOptions& options) {
  return naming_the_run(scenario, [&] {
    std::optional<cost::CostModel> chosen;
    const auto& cost = plan_cost(profiles, scenario, chosen);
    const auto replay_opts =
        replay_options(options.mode.value_or(scenario.mode), options, scenario, cost);
    const auto expansion = expand(scenario, cost, replay_opts, options.batches);
    return replay_expansion(expansion, scenario, cost, replay_opts);
  });
}

TrainingExpansion expand_training(const workload::TrainingScenario& scenario,
                                  const cost::CostModel& profiles,
                                  const TrainingRunOptions& options) {
  return naming_the_run(scenario, [&] {
    std::optional<cost::CostModel> chosen;
    const auto& cost = plan_cost(profiles, scenario, chosen);
    return expand(scenario, cost,
                  replay_options(options.mode.value_or(scenario.mode), options, scenario, cost),
                  options.batches);
  });
}

TrainingReport run_training(const TrainingExpansion& expansion,
                            const workload::TrainingScenario& scenario,
                            const cost::CostModel& profiles, const TrainingRunOptions& options) {
  const auto mode = options.mode.value_or(scenario.mode);
  if (mode != expansion.mode || expansion.traced || options.timeline)
    throw Error(
        fmt::format("{}: an expansion is replayed in the network mode it was built for "
                    "({}, not {}) and without a timeline",
                    scenario.name, network::to_string(expansion.mode), network::to_string(mode)));
  return naming_the_run(scenario, [&] {
    std::optional<cost::CostModel> chosen;
    const auto& cost = plan_cost(profiles, scenario, chosen);
    return replay_expansion(expansion, scenario, cost,
                            replay_options(mode, options, scenario, cost));
  });
}

}  // namespace strait::sim::run
