#include "sim/workload/work_estimate.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace strait::sim::workload {
namespace {

// Upper estimates of the ops a rank builds per step (see the header; checked against the
// bundled scenarios' op counts by tests/workload/work_estimate_test.cpp).
constexpr double kOpsPerStep = 24;
constexpr double kOpsPerLinearLayer = 2;
constexpr double kOpsPerBlockLayer = 24;
// Pooled tables draw their samples one by one up to this many (batch.hpp), then at once.
constexpr double kPooledDraws = 256;

[[noreturn]] void refuse(const TrainingScenario& scenario, const std::string& figures) {
  const std::string where = scenario.file.empty() ? "scenario" : scenario.file;
  throw WorkLimitError(fmt::format(
      "{}: the run is estimated at {}, past the work limit of {:.3g} items (an item takes about "
      "15-50 bytes and 0.2-1 us to build and replay); lift it with --max-work or the scenario's "
      "\"max_work\", or run fewer steps, ranks or layers",
      where, figures, scenario.max_work));
}

}  // namespace

std::string WorkEstimate::describe() const {
  return fmt::format(
      "{:.3g} items ({:.0f} ranks x {:.0f} steps x ~{:.3g} ops, one rank's {:.3g} held whole, "
      "{:.3g} values drawn, {:.3g} table placements)",
      total(), ranks, steps, ops_per_rank_step, whole_rank(), samples, placements);
}

WorkEstimate estimate_work(const TrainingScenario& scenario, int steps) {
  const ModelConfig& m = scenario.model;
  WorkEstimate w;
  w.ranks = scenario.layout.world;
  w.steps = steps;
  const double linear_layers = static_cast<double>(m.bottom_mlp.layers.size()) +
                               static_cast<double>(m.top_mlp.layers.size()) + m.interaction.layers +
                               1;
  const double block_layers = static_cast<double>(m.hstu.layers) + m.moe.layers;
  const double tables = static_cast<double>(m.tables.size());
  w.ops_per_rank_step =
      kOpsPerStep + kOpsPerLinearLayer * linear_layers + kOpsPerBlockLayer * block_layers;
  const double replicas = std::max(1, scenario.layout.replicas);
  const double batch =
      static_cast<double>(scenario.data.batch_for(std::max(1, scenario.layout.replicas)));
  const double per_step =
      m.has_hstu() ? replicas * batch : tables * replicas * std::min(batch, kPooledDraws);
  w.samples = per_step * steps;
  w.placements = tables * w.ranks;
  return w;
}

void check_work(const TrainingScenario& scenario, int steps) {
  const WorkEstimate w = estimate_work(scenario, steps);
  if (w.total() > scenario.max_work) refuse(scenario, w.describe());
}

void check_buckets(const TrainingScenario& scenario, int steps, double buckets) {
  WorkEstimate w = estimate_work(scenario, steps);
  w.ops_per_rank_step += buckets;
  if (w.total() > scenario.max_work)
    refuse(scenario, fmt::format("{} with {:.3g} DDP buckets per step", w.describe(), buckets));
}

}  // namespace strait::sim::workload
