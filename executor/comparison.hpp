#pragma once
// Comparison: how far a simulated run (`strait simulate --json`, `--trace`) is from a
// measured one (`strait exec --out`, `--trace`), key by key and op by op.
//
//   - error = simulated / measured - 1 (0.10 = the simulator says 10% slower); null in JSON
//     where the measured figure is 0 and the simulated one is not.
//   - Step time (mean, p50, p99) and breakdown_ms: the keys both results have.
//   - From the traces (same layout, pid = rank): spans whose category is a kernel kind
//     (sim/cost) or a communication class (sim/workload), with a "step" arg; "wait for
//     peers" spans are not op time. Kernel kinds map to families (gemm, attention_fwd,
//     attention_bwd, embedding_lookup, embedding_update, elementwise, optimizer). A figure
//     is the time of a typical step, all traced ranks summed: each op (rank, name,
//     occurrence in its step) counts its median over the steps (0 in steps without it),
//     so a step the machine disturbed does not move it. MAPE = mean |error| in percent over the
//     figures with measured time > 0.
//   - Ops are matched by (rank, step, name, occurrence of that name in the step).
//   - Kineto mode (compare_with_kineto; the measured side read by kineto_measured.hpp):
//     measured step k is the trace's k-th ProfilerStep (the first K, K = the simulated
//     trace's steps), the job's step time the largest over ranks of the step's GPU time;
//     breakdown: "compute" only (kernel time of the average rank per step, NCCL excluded);
//     communication per collective op ("all_reduce", "all_to_all(v)", ...: a real trace has
//     no purposes), the simulated side from its spans' "op" arg; ops are matched by (rank,
//     step, family or collective op, occurrence of it in the step), labelled with both names.
// Limits: traces must hold the same ranks (the simulator traces ranks 0-7 by default).
// The CPU executor polls MPI only between kernels, so a measured collective ends after the
// kernel it overlapped: per-purpose measured time is in-flight time, an upper bound.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "executor/kineto_measured.hpp"
#include "sim/core/config_node.hpp"
#include "traces/timeline.hpp"

namespace strait::executor {

/// One figure, simulated against measured, in milliseconds.
struct ComparedFigure {
  std::string name;
  double simulated_ms = 0;
  double measured_ms = 0;
  /// simulated / measured - 1; nullopt when measured is 0 and simulated is not.
  std::optional<double> error() const;
};

/// One op of both timelines (matched by rank, step, name, occurrence; in Kineto mode `name`
/// is the family or collective op until the rows are labelled).
struct ComparedOp {
  int rank = 0;
  std::int64_t step = 0;
  std::string name;
  int occurrence = 0;
  std::string measured_name;  // Kineto mode: the measured kernel (`name` is the simulated op)
  double simulated_ms = 0;
  double measured_ms = 0;
};

struct Comparison {
  std::string simulated_file, measured_file;
  std::string scenario;
  int ranks = 0;
  std::vector<ComparedFigure> step_time;  // mean, p50, p99 (the keys both have)
  std::vector<ComparedFigure> breakdown;  // breakdown_ms: average rank per step
  bool has_traces = false;
  std::vector<ComparedFigure> families;  // per step, summed over ranks
  std::vector<ComparedFigure> purposes;  // communication classes (collective ops), likewise
  bool comm_by_op = false;               // Kineto mode: `purposes` are collective ops
  std::vector<ComparedOp> top_ops;       // largest |simulated - measured| first, at most 10
  std::size_t matched_ops = 0, unmatched_ops = 0;
  /// The measured run's kernel_spread_percent (measured_run.hpp), when it has one: how
  /// steady the machine was.
  std::optional<double> measured_kernel_spread_percent;
  /// The measured mean step's 95% interval and the steps it is over (steady_state's
  /// mean_ci95_ms and counted_steps), when the measured result has them.
  std::optional<std::pair<double, double>> measured_mean_ci95_ms;
  int measured_counted_steps = 0;
  std::vector<std::string> notes;  // what was left out or trimmed (Kineto mode)
};

/// Figures below this (simulated and measured, ms per step) are at the resolution of
/// per-op timing (two clock reads and a call around a 1-2 us op) and stay out of MAPE.
inline constexpr double kMapeFloorMs = 0.010;

/// Whether `f` counts in MAPE: measured time > 0 and either side at least kMapeFloorMs.
bool in_mape(const ComparedFigure& f);

/// Mean |error| in percent over the figures in_mape; nullopt if none.
std::optional<double> mape_percent(const std::vector<ComparedFigure>& figures);

/// Compares two results in the `strait simulate --json` shape; ConfigError names the file
/// and key that is missing or disagrees (scenario, gpus).
Comparison compare_results(const ConfigNode& simulated, const ConfigNode& measured);

/// Adds the per-family, per-purpose and per-op figures of two traces to `into`; throws
/// ConfigError naming `measured_file` when the traces hold different ranks.
void compare_traces(const traces::Timeline& simulated, const std::string& simulated_file,
                    const traces::Timeline& measured, const std::string& measured_file,
                    Comparison& into);

/// Compares `simulated` (`strait simulate --json`) and its trace with a real job's Kineto
/// traces (Kineto mode above); ConfigError names the trace files when a rank the simulated
/// trace holds has no trace.
Comparison compare_with_kineto(const ConfigNode& simulated, const traces::Timeline& sim_trace,
                               const std::string& sim_trace_file, const KinetoRun& measured);

/// The comparison as JSON (the figures of the text report; errors as fractions).
nlohmann::json comparison_json(const Comparison& comparison);

/// One timeline with both runs as sibling processes: simulated rank r as process r named
/// "simulated: ...", measured rank r as process r + the simulated ranks' end, "measured: ...".
traces::Timeline side_by_side(const traces::Timeline& simulated, const traces::Timeline& measured);

}  // namespace strait::executor
