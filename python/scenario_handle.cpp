#include "python/scenario_handle.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace strait::python {
namespace {

using sim::workload::TrainingScenario;

// Part files are read when a scenario is built, as the CLI reads them at every run.
const std::map<std::string, sweep::Document> kReadWhenBuilt;

bool edits_part(const std::vector<sweep::Edit>& edits, std::string_view part) {
  return std::any_of(edits.begin(), edits.end(), [&](const auto& e) { return e.part == part; });
}

}  // namespace

ScenarioHandle::ScenarioHandle(sweep::Document scenario, bool collectives)
    : scenario_(std::move(scenario)), collectives_(collectives) {}

ScenarioHandle ScenarioHandle::load(const std::string& path) {
  const ConfigNode node = load_config(path);
  ScenarioHandle handle({node.json(), path}, node.is_object() && node.has("collectives"));
  handle.check();
  return handle;
}

ScenarioHandle ScenarioHandle::from_document(Json document, const std::string& file) {
  const bool collectives = document.is_object() && document.contains("collectives");
  ScenarioHandle handle({std::move(document), file}, collectives);
  handle.check();
  return handle;
}

void ScenarioHandle::check() const {
  if (collectives_) {
    (void)collective();
  } else {
    (void)training();
  }
}

void ScenarioHandle::override(const std::string& pointer, Json value) {
  const sweep::EditSource source{scenario_.file, pointer};
  sweep::Edit edit = sweep::parse_edit(pointer, source);
  edit.value = std::move(value);
  if (collectives_ && edit.part != "scenario" && edit.part != "cluster") {
    source.fail(fmt::format(
        "a collectives scenario has no {}: expected a pointer into /scenario or /cluster",
        edit.part));
  }
  if (sweep::picks_part(edit))
    (void)sweep::part_file_path(edit.pointer.substr(1), edit.value, scenario_.file, source);
  const ConfigNode node = sweep::edited_scenario_node(scenario_, edits_);
  if (edit.part == "scenario") {
    sweep::check_edit_target(edit, node.json(), node.file(), source);
  } else {
    const ConfigNode part = sweep::edited_part(node, kReadWhenBuilt, edits_, edit.part);
    const std::string file = node.at(edit.part).is_object()
                                 ? fmt::format("{} (inline {})", node.file(), edit.part)
                                 : part.file();
    sweep::check_edit_target(edit, part.json(), file, source);
  }
  edits_.push_back(std::move(edit));
}

Json ScenarioHandle::to_document() const {
  const ConfigNode node = sweep::edited_scenario_node(scenario_, edits_);
  Json out = node.json();
  for (const char* part : {"cluster", "model", "data", "plan"}) {
    if (collectives_ && std::string_view(part) != "cluster") continue;
    if (out.is_object() && out.contains(part))
      out[part] = sweep::edited_part(node, kReadWhenBuilt, edits_, part).json();
  }
  return out;
}

Json ScenarioHandle::scenario_document() const {
  return sweep::edited_scenario_node(scenario_, edits_).json();
}

bool ScenarioHandle::reads_file(std::string_view part) const {
  const Json document = scenario_document();
  return document.is_object() && document.contains(part) && document.at(part).is_string() &&
         !edits_part(edits_, part);
}

TrainingScenario ScenarioHandle::training(const std::vector<sweep::Edit>& extra) const {
  if (edits_.empty() && extra.empty())
    return TrainingScenario::from_config(ConfigNode(scenario_.json, scenario_.file));
  auto edits = edits_;
  edits.insert(edits.end(), extra.begin(), extra.end());
  const auto configs = sweep::edit_scenario(scenario_, kReadWhenBuilt, edits);
  return TrainingScenario::from_config(configs.scenario, configs.parts);
}

sim::run::CollectiveScenario ScenarioHandle::collective() const {
  const ConfigNode node = sweep::edited_scenario_node(scenario_, edits_);
  if (!edits_part(edits_, "cluster")) return sim::run::CollectiveScenario::from_config(node);
  return sim::run::CollectiveScenario::from_config(
      node, sim::topology::Cluster::from_config(
                sweep::edited_part(node, kReadWhenBuilt, edits_, "cluster")));
}

}  // namespace strait::python
