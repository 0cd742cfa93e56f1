#pragma once
// SweepSpec: a sweep file read and expanded into its points, before anything runs.
//
// A sweep names a base training scenario and axes; each axis sets one or more JSON
// pointers into the scenario's parts ("/cluster/...", "/model/...", "/data/...",
// "/plan/...") or the scenario file itself ("/scenario/mode", "/scenario/plan" for another
// plan file). Axes combine as a product (first axis slowest), or zipped in named groups;
// random and Latin-hypercube groups draw their samples from a seed. Filters drop points.
//
//   {"scenario": "../scenarios/hstu-3dc.json",
//    "set": {"/scenario/mode": "analytical"},
//    "axes": [{"name": "wan_gbps", "pointer": "/cluster/cross_dc/0/bandwidth",
//              "unit": "Gb/s", "values": [100, 400, 800]},
//             {"name": "wan_latency_ms", "pointer": "/cluster/cross_dc/0/latency", "unit": "ms",
//              "log": {"from": 1, "to": 100, "count": 5}},
//             {"group": "shape", "zip": [AXIS, AXIS]},
//             {"group": "noise", "latin_hypercube": {"count": 20, "seed": 7},
//              "axes": [{"name": "sigma", "pointer": "/scenario/hardware/kernel_noise_sigma",
//                        "from": 0, "to": 0.1}]}],
//    "filters": [{"axis": "wan_gbps", "op": ">=", "value": 200}],
//    "plan_search": {"evaluations": 8, "budget": "10s", "mode": "analytical", "top": 1,
//                    "constraints": "constraints.json", "when": FILTER}}
//
// "plan_search" (optional) runs the planner at each point (or at the points where its
// "when" filter holds), after the edits, with the point's plan as the baseline; the point
// then reports the best plan found (sweep.hpp).
//
// Every mistake in the file throws ConfigError naming the sweep file and the JSON pointer
// of the bad key; a pointer must lead into an existing object or array of the base
// scenario (only its last key may be new).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/config_node.hpp"
#include "sim/network/network.hpp"
#include "sweep/scenario_edit.hpp"

namespace strait::sweep {

/// One configuration of the sweep: its axis values (CSV columns) and the edits they make.
struct Point {
  std::size_t index = 0;     // position in the sweep's point order (after filters)
  std::vector<Json> values;  // one per axis, in SweepSpec::axis_names order
  std::vector<Edit> edits;   // the sweep's "set" edits first, then the axes', in axis order
  bool plan_search = false;  // the planner runs at this point (see PlanSearch)
};

/// One factor of the sweep's product as the file gives it: a lone axis, or a group whose
/// axes move together (zip, random, Latin hypercube). A point takes one row of each.
/// Kept apart from the points so that each value can be checked once, not once per point
/// (check_axis_values, sweep.hpp).
struct Factor {
  struct Axis {
    std::string name;
    std::string source;         // JSON pointer of its values in the sweep file:
                                // "/axes/1/values", "/axes/2/zip/0/log", "/axes/3/axes/0"
    bool listed = false;        // "values": row i's value is at source + "/" + i
    std::vector<Edit> targets;  // where it writes (values unset)
    std::string unit;           // "" or appended to numbers: 400 with "Gb/s" -> "400 Gb/s"
  };
  std::vector<Axis> axes;
  std::vector<std::vector<Json>> values;  // values[row][k]: axis k's value in that row

  /// The edits row `row` makes: each axis's targets in order, with its config value.
  std::vector<Edit> edits(std::size_t row) const;
};

/// The sweep's "plan_search" block: how `strait plan` runs at a point. One planner thread
/// per point, so a point's result does not depend on how the sweep runs.
struct PlanSearch {
  int evaluations = 8;    // final-mode simulations per point (the deterministic effort)
  double budget_s = 600;  // wall-clock upper bound per point, seconds
  std::optional<sim::network::NetworkMode> mode;  // final-stage mode; none: the point's
  int top = 1;                                    // best plans kept
  std::string constraints_file;  // path usable from the working directory; "" = none
};

class SweepSpec {
 public:
  /// Reads a sweep file and expands its points. Throws ConfigError/IoError.
  static SweepSpec load(const std::string& path);
  /// Same from a parsed document; `node.file()` locates relative paths and names errors.
  static SweepSpec from_config(const ConfigNode& node);

  const std::string& name() const { return name_; }
  const std::string& file() const { return file_; }
  /// The base scenario file, as a path usable from the working directory.
  const std::string& scenario_file() const { return scenario_file_; }
  /// Column names of the axes, in order (unique).
  const std::vector<std::string>& axis_names() const { return axis_names_; }
  const std::vector<Point>& points() const { return points_; }
  /// The base scenario file's document.
  const Document& scenario() const { return scenario_; }
  /// The plan search asked for, if any (Point::plan_search says where it runs).
  const std::optional<PlanSearch>& plan_search() const { return plan_search_; }
  /// Every part file a point may use (the base's and those an axis names), by path.
  const std::map<std::string, Document>& part_files() const { return part_files_; }
  /// The "set" block's edits (every point's first edits, in the file's key order).
  const std::vector<Edit>& set_edits() const { return set_; }
  /// The factors of the product, in the file's order (the first moves slowest).
  const std::vector<Factor>& factors() const { return factors_; }

 private:
  std::string name_, file_, scenario_file_;
  Document scenario_;
  std::map<std::string, Document> part_files_;
  std::optional<PlanSearch> plan_search_;
  std::vector<std::string> axis_names_;
  std::vector<Edit> set_;
  std::vector<Factor> factors_;
  std::vector<Point> points_;
};

/// The text of an axis value in the CSV and in resume keys: numbers in shortest
/// round-trip form (integers without a point), strings as they are, others as JSON.
std::string format_axis_value(const Json& value);

}  // namespace strait::sweep
