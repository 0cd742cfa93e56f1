#pragma once
// ScenarioHandle: a scenario as the Python module holds it (strait.Scenario): the scenario
// file's document and the edits made to it and its parts since, by the JSON pointers sweep
// files use (sweep/scenario_edit.hpp). It is built afresh for every run, its part files read
// then, as the command reads them, so an override is a value for the loaders to judge, as a
// sweep point's is.
//
// Unedited, it is built as `strait simulate` builds the file (the same errors, word for
// word); edited, as a sweep point with those edits. A collectives scenario takes edits of
// /scenario and /cluster only.

#include <string>
#include <string_view>
#include <vector>

#include "sim/run/collective_scenario.hpp"
#include "sim/workload/scenario.hpp"
#include "sweep/scenario_edit.hpp"

namespace strait::python {

class ScenarioHandle {
 public:
  /// Reads a scenario file and checks it as `strait simulate` would before running it.
  static ScenarioHandle load(const std::string& path);
  /// A scenario from its document (parts inline or as paths); `file` names it in errors and
  /// relative paths resolve from its folder.
  static ScenarioHandle from_document(Json document, const std::string& file);

  const std::string& file() const { return scenario_.file; }
  /// Whether it is a list of collectives rather than a training job.
  bool collectives() const { return collectives_; }
  const std::vector<sweep::Edit>& edits() const { return edits_; }

  /// Sets `value` at `pointer` ("/cluster/cross_dc/0/bandwidth", "/scenario/steps"). A pointer
  /// that does not lead into the document is a ConfigError at (file(), pointer); the value is
  /// judged when the scenario is built.
  void override(const std::string& pointer, Json value);

  /// The scenario's document with its edits and every part inline.
  Json to_document() const;
  /// The scenario file's own document with its /scenario edits (parts as it names them).
  Json scenario_document() const;
  /// Whether `part` is read unchanged from a file the scenario names (not inline, not edited).
  bool reads_file(std::string_view part) const;

  /// The training scenario, with `extra` edits after the handle's. Its `parts` hold the
  /// configs it was built from (the plan's document is the planner's baseline).
  sim::workload::TrainingScenario training(const std::vector<sweep::Edit>& extra = {}) const;
  sim::run::CollectiveScenario collective() const;

 private:
  ScenarioHandle(sweep::Document scenario, bool collectives);
  /// Builds it once, so that a bad file fails where it is loaded.
  void check() const;

  sweep::Document scenario_;
  bool collectives_ = false;
  std::vector<sweep::Edit> edits_;
};

}  // namespace strait::python
