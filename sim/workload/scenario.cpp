#include "sim/workload/scenario.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "sim/workload/work_estimate.hpp"

namespace strait::sim::workload {
namespace {

/// The config a scenario key names: an inline object, or a file relative to the scenario.
ConfigNode resolve(const ConfigNode& scenario, std::string_view key) {
  const ConfigNode node = scenario.at(key);
  if (node.is_object()) return node;
  const auto base = std::filesystem::path(scenario.file()).parent_path();
  const std::string path = (base / node.as_string()).lexically_normal().string();
  if (!std::filesystem::exists(path))
    node.fail(fmt::format("{} file '{}' does not exist", key, path));
  return load_config(path);
}

}  // namespace

TrainingScenario TrainingScenario::load(const std::string& path) {
  return from_config(load_config(path));
}

ScenarioParts TrainingScenario::resolve_parts(const ConfigNode& node) {
  return {resolve(node, "cluster"), resolve(node, "model"), resolve(node, "data"),
          resolve(node, "plan")};
}

TrainingScenario TrainingScenario::from_config(const ConfigNode& node) {
  node.allow_only({"name", "description", "cluster", "model", "data", "plan", "steps", "seed",
                   "mode", "profiles", "hardware", "max_work"});
  return from_config(node, resolve_parts(node));
}

TrainingScenario TrainingScenario::from_config(const ConfigNode& node, const ScenarioParts& parts) {
  node.allow_only({"name", "description", "cluster", "model", "data", "plan", "steps", "seed",
                   "mode", "profiles", "hardware", "max_work"});
  const auto steps = node.integer_or("steps", 1);
  if (steps <= 0 || steps > 1000)
    node.at("steps").fail(fmt::format("expected 1..1000 steps, got {}", steps));
  const auto seed = node.integer_or("seed", 1);
  if (seed < 0) node.at("seed").fail("expected a seed >= 0");
  ModelConfig model = ModelConfig::from_config(parts.model);
  DataConfig data = DataConfig::from_config(parts.data, model);
  ParallelPlan plan = ParallelPlan::from_config(parts.plan, model);
  TrainingScenario s =
      from_parts(topology::Cluster::from_config(parts.cluster), std::move(model), std::move(data),
                 std::move(plan), static_cast<int>(steps), static_cast<std::uint64_t>(seed));
  s.file = node.file();
  s.parts = parts;
  s.name = node.string_or("name", std::filesystem::path(node.file()).stem().string());
  if (auto w = node.find("max_work")) {
    s.max_work = w->as_number();
    if (!valid_max_work(s.max_work))
      w->fail(fmt::format("expected a number of work items in [1, 1e15], got {}", s.max_work));
  }
  s.mode = read_enum_or(node, "mode", network::NetworkMode::kFlow);
  if (auto p = node.find("profiles")) {
    const auto base = std::filesystem::path(node.file()).parent_path();
    s.profiles_dir = (base / p->as_string()).lexically_normal().string();
    if (!std::filesystem::is_directory(s.profiles_dir)) {
      p->fail(fmt::format("profiles directory '{}' does not exist", s.profiles_dir));
    }
  }
  if (auto h = node.find("hardware")) {
    h->allow_only({"kernel_noise_sigma", "slow_ranks"});
    s.hardware.kernel_sigma = h->number_or("kernel_noise_sigma", 0);
    if (s.hardware.kernel_sigma < 0 || s.hardware.kernel_sigma > 2) {
      h->at("kernel_noise_sigma").fail("expected a sigma in [0, 2]");
    }
    if (auto slow = h->find("slow_ranks")) {
      for (const auto& e : slow->elements()) {
        e.allow_only({"rank", "slowdown"});
        SlowRank sr;
        const std::int64_t rank = e.integer("rank");
        if (rank < 0 || rank >= s.layout.world) {
          e.at("rank").fail(fmt::format("expected a rank in 0..{}", s.layout.world - 1));
        }
        sr.rank = static_cast<int>(rank);
        sr.slowdown = e.positive_number("slowdown");
        s.hardware.slow_ranks.push_back(sr);
      }
    }
  }
  return s;
}

TrainingScenario TrainingScenario::from_parts(topology::Cluster cluster, ModelConfig model,
                                              DataConfig data, ParallelPlan plan, int steps,
                                              std::uint64_t seed) {
  TrainingScenario s;
  s.name = model.name;
  s.layout = Layout::build(cluster, plan);
  data.batch_for(s.layout.replicas);  // a global batch must divide among the replicas
  s.cluster = std::move(cluster);
  s.model = std::move(model);
  s.data = std::move(data);
  s.plan = std::move(plan);
  s.steps = steps;
  s.seed = seed;
  return s;
}

}  // namespace strait::sim::workload
