#pragma once
// CollectiveScenario: a list of collectives on a cluster, each starting at a given time
// and/or after others finish, simulated together so they contend for links. This is what
// `strait simulate` runs for a scenario file with a "collectives" list (recommendation
// training workloads build on the same engine and network).
//
// File format (paths are relative to the scenario file):
//   { "name": "...", "cluster": "../clusters/x.json" | {inline cluster},
//     "mode": "flow" | "analytical",
//     "collectives": [ { "name": "grads", "op": "all_reduce", "algorithm": "auto",
//                        "bytes": "64 MiB", "ranks": "all", "start": "0 us",
//                        "after": ["other"], "priority": 0 } ] }

#include <optional>
#include <string>
#include <vector>

#include "sim/core/config_node.hpp"
#include "sim/core/trace_sink.hpp"
#include "sim/network/network.hpp"
#include "sim/topology/cluster.hpp"

namespace strait::sim::run {

struct ScenarioCollective {
  std::string name;
  network::CollectiveSpec spec;
  Time start;              // earliest start
  std::vector<int> after;  // indices of collectives that must finish first
};

struct CollectiveScenario {
  std::string name;
  std::string file;
  topology::Cluster cluster;
  network::NetworkMode mode = network::NetworkMode::kFlow;
  std::vector<ScenarioCollective> collectives;

  /// Loads and validates a scenario file. Throws ConfigError/IoError.
  static CollectiveScenario load(const std::string& path);
  static CollectiveScenario from_config(const ConfigNode& config);
  /// As above on `cluster` (already loaded); `config`'s own "cluster" key is not read.
  static CollectiveScenario from_config(const ConfigNode& config, topology::Cluster cluster);
};

struct CollectiveOutcome {
  std::string name;
  network::Algorithm algorithm = network::Algorithm::kRing;
  int ranks = 0;
  Bytes bytes = 0;
  Time start;
  Time end;
};

struct ScenarioResult {
  std::vector<CollectiveOutcome> collectives;
  Time makespan;
  network::TrafficStats traffic;
  std::uint64_t events = 0;
  double wall_s = 0;
};

struct RunOptions {
  std::optional<network::NetworkMode> mode;  // overrides the scenario's
  TraceSink* timeline = nullptr;             // when set, record spans of these ranks
  std::vector<int> trace_ranks;              // empty = all ranks
};

/// Simulates every collective of `scenario` together.
ScenarioResult run_collective_scenario(const CollectiveScenario& scenario,
                                       const RunOptions& options);

}  // namespace strait::sim::run
