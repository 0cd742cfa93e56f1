#pragma once
// CollectiveFactors: what `strait calibrate fit` learned about a device's communication,
// the optional "collectives" section of a calibration profile:
//   "collectives": {
//     "link_classes": {"nvlink": {"bandwidth_efficiency": 0.62, "latency": "1.4 us"}},
//     "ops": {"all_reduce": {"base_latency": "3.1 us",
//                            "bandwidth_scale": {"key": "bytes", "points": [[4096, 0.3], ...]}}}}
// Link classes ("nvlink", "pcie", "scale_out", "cross_dc"): the achieved fraction of the
// cluster file's bandwidth and the latency measured per transfer (replacing the file's).
// Ops (collective names of `strait collective`): a start-up latency and the achieved
// fraction of the link model's bandwidth by message size, a number or a table keyed
// "bytes" like the efficiency tables (see network::OpCalibration).
// The run layer applies them (sim/run/calibrated_cluster.hpp): link factors to the links
// inside hosts of this GPU type, op factors to collectives on clusters of this type only.

#include <array>
#include <optional>

#include "sim/core/config_node.hpp"
#include "sim/core/units.hpp"
#include "sim/cost/efficiency_table.hpp"
#include "sim/network/collective.hpp"
#include "sim/topology/cluster.hpp"

namespace strait::sim::cost {

struct LinkClassFactors {
  double bandwidth_efficiency = 1.0;  // in (0, 1]
  Time latency;                       // >= 0, replaces the link's own
};

struct CollectiveFactors {
  std::array<std::optional<LinkClassFactors>, topology::kLinkClassCount> link_classes{};
  network::CollectiveCalibration ops{};
  bool present = false;  // the profile had a "collectives" section

  /// Reads the section; names and ranges are checked, errors name file and pointer.
  static CollectiveFactors from_config(const ConfigNode& node);
};

/// The section as a profile file writes it.
Json to_json(const CollectiveFactors& f);

}  // namespace strait::sim::cost
