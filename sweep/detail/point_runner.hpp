#pragma once
// PointRunner: one point of a sweep from edits to a finished CSV row and JSON line.
// Applies the point's edits to copies of the base scenario's documents, builds the
// scenario (TrainingScenario::from_config with the edited parts, so errors still name the
// part file and key), runs the planner when the point asks for it (point_planner.hpp; the
// best plan found replaces the point's), simulates it and formats the outcome. A point that
// fails (a bad value, a plan that does not fit the cluster, a plan search that finds
// nothing) becomes a row with its error, never an exception. Points that differ only in the
// network's performance share one expansion (expansion_cache.hpp). Safe to call from many
// threads at once.

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "sim/cost/cost_model.hpp"
#include "sim/run/training_run.hpp"
#include "sim/workload/scenario.hpp"
#include "sweep/detail/expansion_cache.hpp"
#include "sweep/sweep_spec.hpp"

namespace strait::sweep::detail {

/// The documents a point loads: the base scenario's, with `edits` applied as a point
/// applies them (edit_scenario, scenario_edit.hpp).
EditedScenario point_configs(const SweepSpec& spec, const std::vector<Edit>& edits);

/// A finished point, ready to be written.
struct PointOutcome {
  std::size_t index = 0;
  std::string csv_row;    // one CSV line, with its line break
  std::string json_line;  // one JSON Lines line, with its line break
  bool failed = false;
};

class PointRunner {
 public:
  PointRunner(const SweepSpec& spec, std::string default_profiles_dir,
              bool reuse_expansions = true);

  /// Runs point `index` of the spec; wall_s is measured around the whole point.
  PointOutcome run(std::size_t index) const;

 private:
  std::shared_ptr<const sim::cost::CostModel> cost_model(const std::string& dir) const;
  /// The point's simulation: from its own expansion, or from one it shares with points
  /// that differ from it only in the network's performance.
  sim::run::TrainingReport simulate(const Point& point,
                                    const sim::workload::TrainingScenario& scenario,
                                    const sim::cost::CostModel& cost) const;

  const SweepSpec& spec_;
  std::string default_profiles_dir_;
  mutable std::mutex mutex_;  // guards costs_
  mutable std::map<std::string, std::shared_ptr<const sim::cost::CostModel>> costs_;
  bool reuse_expansions_;
  mutable ExpansionCache expansions_;
};

}  // namespace strait::sweep::detail
