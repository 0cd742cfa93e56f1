#pragma once
// SearchSpace: the plan dimensions the planner searches, each a short list of choices,
// every choice a fragment of a plan file (plan.hpp) set at JSON pointers. A point (one
// choice index per dimension) composes into a plan document, so a candidate is always
// a plan file that `strait simulate` reads back as is.
//
// Dimensions (only those that can change anything for the model and cluster):
//   sparse_group     model-parallel group size at the smallest level that holds it
//   replica_sync     every K steps and staleness S (2D sparse only)
//   table:<name>     sharding type (column shard count included) per table
//   context_parallel degree, mode, placement (HSTU)
//   dense            DDP bucket size, FSDP/HSDP group and placement
//   moe              expert-parallel size (MoE models)
//   pipeline_depth, priorities, sm_free_comm, cross_dc_sync (several datacenters),
//   load_balance     method and scope (sequence models)
// Constraints pin a dimension to the fixed value (one choice) or drop forbidden choices;
// a baseline plan adds its own value to each dimension and is the starting point.

#include <string>
#include <vector>

#include "planner/constraints.hpp"
#include "sim/core/config_node.hpp"
#include "sim/topology/cluster.hpp"
#include "sim/workload/model.hpp"

namespace strait::planner {

struct Choice {
  std::string label;
  std::vector<std::pair<std::string, Json>> values;  // JSON pointer -> value (null = absent)
};

struct Dimension {
  std::string name;
  std::vector<Choice> choices;
  int start = 0;  // the baseline's choice
};

/// A plan document one dimension away from another (SearchSpace::neighbours).
struct Neighbour {
  Json document;
  std::size_t dimension = 0;  // index into SearchSpace::dimensions()
  std::string label;          // "dimension=choice"
};

class SearchSpace {
 public:
  /// The dimensions for `model` on the first `world` GPUs of `cluster` under
  /// `constraints`; `baseline` (a plan document, may be null) seeds the start point.
  SearchSpace(const sim::topology::Cluster& cluster, int world,
              const sim::workload::ModelConfig& model, const Constraints& constraints,
              const Json& baseline);

  const std::vector<Dimension>& dimensions() const { return dims_; }
  std::vector<int> start() const;
  /// Number of points (saturates at 2^62).
  double size() const;
  /// The plan document of `point`.
  Json compose(const std::vector<int>& point) const;
  /// Every other choice of every dimension set in `document` (a plan file): a table's
  /// change keeps the other tables' slice owners; a new group size or context degree drops
  /// every owner (they are placed again). May repeat `document` itself.
  std::vector<Neighbour> neighbours(const Json& document) const;
  /// "dimension=choice" for the choices of `point` that differ from the start.
  std::string describe(const std::vector<int>& point) const;

 private:
  void add(Dimension d, const Json& baseline, const Constraints& constraints);
  std::vector<Dimension> dims_;
  Json fixed_;  // constraint fix document (object)
};

}  // namespace strait::planner
