#pragma once
// Helpers for planner tests: small models, data and clusters inline, the bundled profiles,
// and a planner run with test-sized stages.

#include <functional>
#include <string>

#include "planner/planner.hpp"
#include "sim/core/config_node.hpp"
#include "sim/cost/cost_model.hpp"
#include "sim/workload/scenario.hpp"

namespace strait::planner::testing_support {

inline std::string source(const std::string& path) {
  return std::string(STRAIT_SOURCE_DIR) + "/" + path;
}

inline const sim::cost::CostModel& bundled_cost() {
  static const sim::cost::CostModel model(sim::cost::load_profile_dir(source("configs/profiles")));
  return model;
}

// Four pooled tables of dim 64 (column_wise x2 is the only column split), a DLRM dense part.
inline const char* kSmallDlrm = R"({"name": "small-dlrm",
  "embedding": {"tables": [
    {"name": "big", "rows": 4000000, "dim": 64}, {"name": "wide", "rows": 2000000, "dim": 64},
    {"name": "mid", "rows": 200000, "dim": 64}, {"name": "tiny", "rows": 1000, "dim": 64}]},
  "dense": {"dense_features": 13, "bottom_mlp": {"layers": [256, 64]},
            "interaction": {"type": "dot"}, "top_mlp": {"layers": [256, 1]}}})";
inline const char* kSmallDlrmData = R"({"name": "small-data", "batch_size": {"per_rank": 1024},
  "pooling_factors": {"big": {"distribution": "fixed", "value": 20},
                      "wide": {"distribution": "fixed", "value": 50},
                      "mid": {"distribution": "fixed", "value": 5},
                      "tiny": {"distribution": "fixed", "value": 1}}})";

/// A cluster of 8-GPU rail-optimized HGX H100 hosts in `datacenters` (the cluster file's
/// list of {"name", "hosts"}), joined by `cross_dc` (its list of long-haul links).
inline std::string hgx_datacenters(const std::string& name, const std::string& datacenters,
                                   const std::string& cross_dc) {
  return R"({"name": ")" + name + R"(",
  "defaults": {"host": {"gpus": 8, "gpu_type": "H100-SXM",
                        "nvlink": {"bandwidth": "450 GB/s", "latency": "1 us"},
                        "nics": 8, "nic": {"bandwidth": "400 Gb/s", "latency": "1 us"},
                        "pcie": {"bandwidth": "64 GB/s", "latency": "0.5 us"},
                        "rail_optimized": true},
               "network": {"hosts_per_leaf": 16, "link_latency": "1 us"}},
  "datacenters": )" +
         datacenters + R"(, "cross_dc": )" + cross_dc + "}";
}

// Three datacenters of two 8-GPU hosts joined by slow long-haul links.
inline const std::string kThreeDc = hgx_datacenters(
    "mini-3dc",
    R"([{"name": "a", "hosts": 2}, {"name": "b", "hosts": 2}, {"name": "c", "hosts": 2}])",
    R"([{"between": ["a", "b"], "bandwidth": "100 Gb/s", "latency": "5 ms", "count": 2},
        {"between": ["b", "c"], "bandwidth": "100 Gb/s", "latency": "5 ms", "count": 2},
        {"between": ["a", "c"], "bandwidth": "100 Gb/s", "latency": "10 ms", "count": 2}])");

// Two datacenters of two 8-GPU rail-optimized hosts, joined by a slow long-haul link.
inline const std::string kTwoDcCluster = hgx_datacenters(
    "mini-2dc", R"([{"name": "west", "hosts": 2}, {"name": "east", "hosts": 2}])",
    R"([{"between": ["west", "east"], "bandwidth": "100 Gb/s", "latency": "5 ms", "count": 2}])");

/// The message of the ConfigError `f` throws ("no ConfigError" when it throws none).
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no ConfigError";
}

inline sim::topology::Cluster cluster_of(const std::string& json_or_file) {
  if (!json_or_file.empty() && json_or_file.front() == '{')
    return sim::topology::Cluster::from_config(
        ConfigNode(Json::parse(json_or_file), "cluster.json"));
  return sim::topology::Cluster::load(source("configs/clusters/" + json_or_file));
}

/// A plan request on `cluster` with the default plan (no baseline) and `constraints`.
inline PlanRequest request_of(const std::string& cluster, const std::string& model,
                              const std::string& data, const std::string& constraints = "{}",
                              int steps = 1) {
  auto m = sim::workload::ModelConfig::from_config(ConfigNode(Json::parse(model), "model.json"));
  auto d = sim::workload::DataConfig::from_config(ConfigNode(Json::parse(data), "data.json"), m);
  auto p = sim::workload::ParallelPlan::from_config(ConfigNode(Json::object(), "plan.json"), m);
  PlanRequest r;
  r.base = sim::workload::TrainingScenario::from_parts(cluster_of(cluster), std::move(m),
                                                       std::move(d), std::move(p), steps, 7);
  r.constraints = Constraints::from_config(ConfigNode(Json::parse(constraints), "constraints.json"),
                                           r.base.model);
  return r;
}

/// A plan request from a bundled scenario file (configs/scenarios/...), its plan the
/// baseline, as `strait plan SCENARIO` builds it.
inline PlanRequest scenario_request(const std::string& scenario,
                                    const std::string& constraints = "{}") {
  const auto config = load_config(source("configs/scenarios/" + scenario));
  PlanRequest r;
  r.base = sim::workload::TrainingScenario::from_config(config);
  r.has_baseline = true;
  r.baseline_document = sim::workload::TrainingScenario::resolve_parts(config).plan.json();
  r.constraints = Constraints::from_config(ConfigNode(Json::parse(constraints), "constraints.json"),
                                           r.base.model);
  return r;
}

/// A scenario of inline cluster, model, data and plan configs, read as `strait simulate`
/// reads a scenario's parts (kept for the fingerprint) from files in `folder`.
inline sim::workload::TrainingScenario scenario_of(const Json& cluster, const Json& model,
                                                   const Json& data, const Json& plan,
                                                   const std::string& folder = ".") {
  const sim::workload::ScenarioParts parts{
      ConfigNode(cluster, folder + "/cluster.json"), ConfigNode(model, folder + "/model.json"),
      ConfigNode(data, folder + "/data.json"), ConfigNode(plan, folder + "/plan.json")};
  return sim::workload::TrainingScenario::from_config(
      ConfigNode(Json{{"steps", 1}, {"seed", 7}}, folder + "/scenario.json"), parts);
}

/// A model of `tables` (JSON objects) with a one-layer top MLP, and data of `per_rank`
/// samples with each table's fixed pooling factor in `pooling` (name -> ids per sample).
inline PlanRequest tables_request(const std::string& tables, const std::string& pooling,
                                  int per_rank) {
  const std::string model = R"({"name": "m", "embedding": {"tables": [)" + tables +
                            R"(]}, "dense": {"top_mlp": {"layers": [1]}}})";
  const std::string data = R"({"name": "d", "batch_size": {"per_rank": )" +
                           std::to_string(per_rank) + R"(}, "pooling_factors": {)" + pooling + "}}";
  return request_of("hgx-h100-8.json", model, data);
}

inline std::string fixed(const char* table, int value) {
  return std::string("\"") + table + R"(": {"distribution": "fixed", "value": )" +
         std::to_string(value) + "}";
}

inline PlannerOptions test_options() {
  PlannerOptions o;
  o.budget_s = 1e6;  // never reached: the effort is the evaluations
  o.evaluations = 8;
  o.top = 2;
  o.final_mode = sim::network::NetworkMode::kAnalytical;
  o.references = false;
  return o;
}

}  // namespace strait::planner::testing_support
