#pragma once
// Helpers shared by the topology tests.

#include <array>
#include <functional>
#include <string>

#include "sim/core/config_node.hpp"
#include "sim/core/error.hpp"
#include "sim/topology/cluster.hpp"

namespace strait::sim::topology::testing_support {

inline std::string bundled(const std::string& file) {
  return std::string(STRAIT_SOURCE_DIR) + "/configs/clusters/" + file;
}

/// A cluster from inline JSON, reported as "cluster.json" in errors.
inline Cluster inline_cluster(const std::string& text) {
  return Cluster::from_config(ConfigNode(Json::parse(text), "cluster.json"));
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

/// Links of `cluster` per class, indexed by LinkClass.
inline std::array<int, kLinkClassCount> links_per_class(const Cluster& cluster) {
  std::array<int, kLinkClassCount> count{};
  for (const Link& l : cluster.links()) ++count[static_cast<std::size_t>(l.link_class)];
  return count;
}

}  // namespace strait::sim::topology::testing_support
