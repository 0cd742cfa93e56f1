#pragma once
// CandidatePool: every plan the search has built, each once. A candidate is a plan
// document (a search-space point composed, a reference, a neighbour), parsed and laid out
// on the cluster, checked against the constraints, and priced at up to three fidelities
// (RankedPlan). Two routes to the same plan give the same candidate (the first route's
// label and document), so nothing is priced twice: the scenario's plan is usually the
// start point too. Ids are insertion order, which is what ties break by.

#include <map>
#include <string>
#include <vector>

#include "planner/planner.hpp"
#include "planner/search_space.hpp"
#include "planner/table_placement.hpp"
#include "sim/workload/layout.hpp"

namespace strait::planner::detail {

struct Candidate {
  std::vector<int> point;  // empty for documents from outside the space
  RankedPlan ranked;
  sim::workload::Layout layout;
  bool valid = false;
  std::string error;     // why the plan cannot be built (invalid)
  std::string excluded;  // the constraint it breaks (a valid plan the constraints rule out)
  bool usable() const { return valid && excluded.empty(); }
};

class CandidatePool {
 public:
  CandidatePool(const PlanRequest& request, const TableCosts& costs, const SearchSpace& space,
                int host_size);

  /// The candidate of a search-space point.
  std::size_t point(const std::vector<int>& point);
  /// The candidate of a plan document; `place` sets every slice's owner first.
  std::size_t document(Json document, std::string label, bool place);

  Candidate& operator[](std::size_t id) { return all_[id]; }
  const Candidate& operator[](std::size_t id) const { return all_[id]; }
  std::size_t size() const { return all_.size(); }

 private:
  void build(Candidate& c, Json document, bool place) const;
  std::size_t insert(Candidate c);
  std::string key(const Candidate& c) const;

  const PlanRequest& req_;
  const TableCosts& costs_;
  const SearchSpace& space_;
  int world_, host_;
  std::vector<Candidate> all_;
  std::map<std::string, std::size_t> by_document_;
  std::map<std::vector<int>, std::size_t> by_point_;
};

}  // namespace strait::planner::detail
