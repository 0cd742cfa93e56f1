#pragma once
// Helpers shared by the workload tests: scenarios from inline JSON and bundled files.

#include <functional>
#include <string>

#include "sim/core/config_node.hpp"
#include "sim/core/error.hpp"
#include "sim/workload/scenario.hpp"

namespace strait::sim::workload::testing_support {

inline std::string source(const std::string& path) {
  return std::string(STRAIT_SOURCE_DIR) + "/" + path;
}

/// A scenario from inline model, data and plan JSON on a bundled cluster file.
inline TrainingScenario scenario_of(const std::string& cluster, const std::string& model,
                                    const std::string& data, const std::string& plan, int steps = 1,
                                    std::uint64_t seed = 7) {
  auto m = ModelConfig::from_config(ConfigNode(Json::parse(model), "model.json"));
  auto d = DataConfig::from_config(ConfigNode(Json::parse(data), "data.json"), m);
  auto p = ParallelPlan::from_config(ConfigNode(Json::parse(plan), "plan.json"), m);
  return TrainingScenario::from_parts(
      topology::Cluster::load(source("configs/clusters/" + cluster)), std::move(m), std::move(d),
      std::move(p), steps, seed);
}

/// The message of the ConfigError `f` throws, or "no error".
inline std::string config_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

/// A small HSTU model: 2 layers, d = 64, 2 heads of 32, one sequence table.
inline const char* kSmallHstu =
    R"({"embedding": {"tables": [{"name": "item", "rows": 1000000, "dim": 64, "pooling": "sequence"}]},
  "dense": {"hstu": {"layers": 2, "model_dim": 64, "heads": 2, "head_dim": 32, "negatives": 16}}})";

/// kSmallHstu with `keys` ("key": value, ...) set in its hstu block, before "negatives".
inline std::string small_hstu_with(const std::string& keys) {
  std::string m = kSmallHstu;
  return m.replace(m.find("\"negatives\""), 0, keys + ", ");
}

}  // namespace strait::sim::workload::testing_support
