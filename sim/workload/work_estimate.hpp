#pragma once
// WorkEstimate: what a training run will build and replay, estimated from its configs
// before anything is built, so that a run too large for the machine is refused in
// milliseconds with its figures instead of running out of memory or time (a model of
// 10^6 layers, 100k tables on 16k GPUs, a batch of 2^34 sequences).
//
// Work is counted in items that each cost about the same memory (tens of bytes) and time
// (tens of nanoseconds) to build and replay:
//   ops       ranks x steps x ops per rank and step, an upper estimate: kOpsPerStep for
//             the step's fixed ops (embedding, input, loss, optimizer, syncs; a rank's
//             lookups are one op whatever its tables), per dense layer its kernels and
//             collectives forward and backward (kOpsPerLinearLayer for MLP, DCN and dot
//             layers, kOpsPerBlockLayer for HSTU and MoE layers, whose elementwise kernels
//             and context-parallel exchanges are each an op); the DDP buckets are added
//             once the dense stack is built (check_buckets)
//   samples   values drawn: a sequence length per sample of the global batch and step
//             when the model has sequences; pooling factors else, at most 256 per table,
//             replica and step
//   placements tables x ranks: the sharding and traffic tables kept per table and rank
// An item takes about 15-50 bytes and 0.2-1 us (measured: hstu-131k-4dc analytical, 6.2e7
// items, 0.8 GiB, 13 s; hstu-16k-4dc, 7.7e6 items, 0.3 GiB, 2 s; hstu-3dc in flow mode, 2.7e6
// items, 2.9 s); one rank's ops are held whole while it is built, at about 200 bytes each
// (kWholeRankWeight). The limit (TrainingScenario::max_work, default 2e8 items: 3x the
// largest bundled job) is the scenario's "max_work" key or the commands' --max-work option. The
// estimate is checked by tests against the op counts of the bundled scenarios (an upper bound
// within 4x).

#include <string>

#include "sim/core/error.hpp"
#include "sim/workload/scenario.hpp"

namespace strait::sim::workload {

/// A run past its work limit: the message gives the estimate and how to lift the limit.
class WorkLimitError : public Error {
 public:
  using Error::Error;
};

inline constexpr double kWholeRankWeight = 4;

struct WorkEstimate {
  double ranks = 0, steps = 0;
  double ops_per_rank_step = 0;
  double samples = 0;
  double placements = 0;

  double ops() const { return ranks * steps * ops_per_rank_step; }
  /// One rank's ops are held whole while it is built, at about kWholeRankWeight times an
  /// op's share of the compact replay graph.
  double whole_rank() const { return kWholeRankWeight * steps * ops_per_rank_step; }
  double total() const { return ops() + whole_rank() + samples + placements; }
  /// One line with the figures, e.g. "2.1e+10 items (16 ranks x 5 steps x ~2.6e+08 ops,
  /// 0 sampled lengths, 416 table placements)".
  std::string describe() const;
};

/// Whether `items` is a valid work limit (1 .. 1e15), for "max_work" and --max-work.
inline bool valid_max_work(double items) { return items >= 1 && items <= 1e15; }

/// The estimate for `steps` steps of `scenario`, from its configs alone (O(layers + tables)).
WorkEstimate estimate_work(const TrainingScenario& scenario, int steps);

/// Throws WorkLimitError when estimate_work(scenario, steps) passes scenario.max_work.
void check_work(const TrainingScenario& scenario, int steps);

/// Throws WorkLimitError when `buckets` DDP buckets per step, on top of the estimate, pass
/// the limit (the bucket count needs the dense stack's parameters).
void check_buckets(const TrainingScenario& scenario, int steps, double buckets);

}  // namespace strait::sim::workload
