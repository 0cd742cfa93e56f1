#include "planner/detail/candidate_pool.hpp"

#include "planner/plan_document.hpp"
#include "sim/workload/sharding.hpp"

namespace strait::planner::detail {

using sim::workload::Layout;
using sim::workload::ParallelPlan;

CandidatePool::CandidatePool(const PlanRequest& request, const TableCosts& costs,
                             const SearchSpace& space, int host_size)
    : req_(request),
      costs_(costs),
      space_(space),
      world_(request.base.layout.world),
      host_(host_size) {}

void CandidatePool::build(Candidate& c, Json document, bool place) const {
  const auto& model = req_.base.model;
  if (world_ < req_.base.cluster.gpu_count()) document["ranks"] = world_;
  try {
    const int group = document.contains("sparse") && document["sparse"].contains("group_size")
                          ? document["sparse"]["group_size"].get<int>()
                          : world_;
    if (group >= world_ && document.contains("sparse")) {
      document["sparse"].erase("replica_sync_every");
      document["sparse"].erase("replica_sync_staleness");
    }
    ParallelPlan plan = parse_plan(document, "<candidate>", model);
    c.layout = Layout::build(req_.base.cluster, plan);
    req_.base.data.batch_for(c.layout.replicas);
    if (place) {
      place_tables(plan, costs_, c.layout.sparse.size, host_, c.layout.cp.size);
      set_tables(document, plan, model);
    }
    c.excluded = req_.constraints.violation(document, plan, c.layout, req_.base.cluster, model);
    c.ranked.plan = std::move(plan);
    c.ranked.document = std::move(document);
    c.valid = true;
  } catch (const ConfigError& e) {
    c.valid = false;
    c.error = e.what();
    c.ranked.document = std::move(document);
  }
}

/// Documents that run the same job are one candidate: the key is what the plan decides
/// (plan_summary: defaults written out, sizes resolved), with what the summary leaves out
/// and a simulation reads: the members that hold each placed table's slices, as the shard
/// map places them (an explicit owner and the greedy placement that picks the same one are
/// one plan), and the kernel implementations. Names, descriptions and a default sharding
/// against each table named make no difference.
std::string CandidatePool::key(const Candidate& c) const {
  if (!c.valid) return c.ranked.document.dump();
  const auto& model = req_.base.model;
  const auto& plan = c.ranked.plan;
  Json key = plan_summary(plan, c.layout, model);
  std::vector<std::vector<int>> owners(model.tables.size());
  bool placed = false;
  for (const auto& s : plan.sharding) placed = placed || sim::workload::placed_slices(s) > 0;
  if (placed) {
    const auto map = sim::workload::ShardMap::build(model, plan, c.layout.sparse.size, host_);
    for (std::size_t m = 0; m < map.member_shards.size(); ++m) {
      for (const auto& shard : map.member_shards[m]) {
        const auto t = static_cast<std::size_t>(shard.table);
        if (sim::workload::placed_slices(plan.sharding[t]) > 0)
          owners[t].push_back(static_cast<int>(m));
      }
    }
  }
  key["slice_owners"] = owners;
  if (const auto it = c.ranked.document.find("kernels"); it != c.ranked.document.end())
    key["kernels"] = *it;
  return key.dump();
}

std::size_t CandidatePool::insert(Candidate c) {
  const std::string key = this->key(c);
  if (auto it = by_document_.find(key); it != by_document_.end()) return it->second;
  all_.push_back(std::move(c));
  by_document_[key] = all_.size() - 1;
  return all_.size() - 1;
}

std::size_t CandidatePool::point(const std::vector<int>& point) {
  if (auto it = by_point_.find(point); it != by_point_.end()) return it->second;
  Candidate c;
  c.point = point;
  c.ranked.label = space_.describe(point);
  build(c, space_.compose(point), true);
  const std::size_t id = insert(std::move(c));
  by_point_[point] = id;
  return id;
}

std::size_t CandidatePool::document(Json document, std::string label, bool place) {
  Candidate c;
  c.ranked.label = std::move(label);
  build(c, std::move(document), place);
  return insert(std::move(c));
}

}  // namespace strait::planner::detail
