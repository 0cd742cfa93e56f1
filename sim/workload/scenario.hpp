#pragma once
// TrainingScenario: one training job to simulate: a cluster, a model, its data and a
// parallel plan, plus run settings. A scenario file (a "collectives" list instead of
// "model" is the other kind, see sim/run/collective_scenario.hpp):
//
//   {"name": "hstu-3dc", "cluster": "../clusters/scale-across-3dc.json",
//    "model": "../models/hstu-large.json", "data": "../data/hstu-lognormal.json",
//    "plan": "../plans/hstu-3dc-2d.json",          each a path relative to this file,
//                                                  or an inline object
//    "steps": 2, "seed": 1, "mode": "flow" | "analytical", "profiles": "../calibration",
//    "max_work": 2e8,                              work items a run may take (work_estimate.hpp)
//    "hardware": {"kernel_noise_sigma": 0.03,
//                 "slow_ranks": [{"rank": 17, "slowdown": 1.25}]}}
//
// Hardware noise and slow ranks scale kernel work: every kernel's flops and hbm_bytes are
// multiplied by slowdown(rank) x exp(sigma N - sigma^2/2) (a mean-1 lognormal drawn per
// kernel from Rng(seed) forked by rank and step), so the cost model's time scales alike.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/network/network.hpp"
#include "sim/topology/cluster.hpp"
#include "sim/workload/data.hpp"
#include "sim/workload/layout.hpp"
#include "sim/workload/model.hpp"
#include "sim/workload/plan.hpp"

namespace strait::sim::workload {

struct SlowRank {
  int rank = 0;
  double slowdown = 1.0;  // kernel work multiplier, >= 1 slows
};

struct HardwareNoise {
  double kernel_sigma = 0;  // lognormal sigma of the per-kernel multiplier
  std::vector<SlowRank> slow_ranks;
};

/// The four configs a scenario is made of, each located in its own file (relative paths
/// inside them resolve from there). Sweeps edit them in memory before building.
struct ScenarioParts {
  ConfigNode cluster, model, data, plan;
};

struct TrainingScenario {
  std::string name;
  std::string file;
  topology::Cluster cluster;
  ModelConfig model;
  DataConfig data;
  ParallelPlan plan;
  Layout layout;  // ranks and process groups, checked against the cluster
  int steps = 1;
  std::uint64_t seed = 1;
  network::NetworkMode mode = network::NetworkMode::kFlow;
  std::string profiles_dir;  // "" = none; absolute or relative to the working directory
  HardwareNoise hardware;
  /// Work items a run may build and replay ("max_work"; work_estimate.hpp).
  double max_work = 2e8;
  /// The configs it was read from (from_config), kept for the launch plan's fingerprint;
  /// empty when built from parts already parsed (from_parts).
  std::optional<ScenarioParts> parts;

  /// Loads a scenario and every file it names. Throws ConfigError/IoError.
  static TrainingScenario load(const std::string& path);
  static TrainingScenario from_config(const ConfigNode& node);
  /// As above with the parts given; `node`'s own cluster/model/data/plan keys are not read.
  static TrainingScenario from_config(const ConfigNode& node, const ScenarioParts& parts);
  /// The parts `node` names: inline objects, or files relative to the scenario file.
  static ScenarioParts resolve_parts(const ConfigNode& node);
  /// Builds from parts already loaded (tests, sweeps); validates the layout.
  static TrainingScenario from_parts(topology::Cluster cluster, ModelConfig model, DataConfig data,
                                     ParallelPlan plan, int steps, std::uint64_t seed);
};

}  // namespace strait::sim::workload
