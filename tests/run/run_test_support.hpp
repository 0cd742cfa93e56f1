#pragma once
// Helpers for run-layer tests: training scenarios from inline JSON on bundled clusters,
// and the bundled calibration profiles.

#include <string>

#include "sim/core/config_node.hpp"
#include "sim/cost/cost_model.hpp"
#include "sim/workload/scenario.hpp"

namespace strait::sim::run::testing_support {

inline std::string source(const std::string& path) {
  return std::string(STRAIT_SOURCE_DIR) + "/" + path;
}

inline workload::TrainingScenario scenario_of(const std::string& cluster, const std::string& model,
                                              const std::string& data, const std::string& plan,
                                              int steps = 1, std::uint64_t seed = 7) {
  auto m = workload::ModelConfig::from_config(ConfigNode(Json::parse(model), "model.json"));
  auto d = workload::DataConfig::from_config(ConfigNode(Json::parse(data), "data.json"), m);
  auto p = workload::ParallelPlan::from_config(ConfigNode(Json::parse(plan), "plan.json"), m);
  return workload::TrainingScenario::from_parts(
      topology::Cluster::load(source("configs/clusters/" + cluster)), std::move(m), std::move(d),
      std::move(p), steps, seed);
}

inline const cost::CostModel& bundled_cost() {
  static const cost::CostModel model(cost::load_profile_dir(source("configs/profiles")));
  return model;
}

}  // namespace strait::sim::run::testing_support
