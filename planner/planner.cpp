#include "planner/planner.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>

#include <fmt/format.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "planner/plan_document.hpp"
#include "planner/search_space.hpp"
#include "planner/table_placement.hpp"

namespace strait::planner {
namespace {

using Clock = std::chrono::steady_clock;
using sim::workload::Layout;
using sim::workload::ParallelPlan;
using sim::workload::TrainingScenario;

struct Candidate {
  std::vector<int> point;
  RankedPlan ranked;
  Layout layout;
  bool valid = false;
  std::string error;  // why the plan cannot be built (invalid)
};

/// The start point: the baseline plan, or without one TorchRec-style sharding over all
/// ranks (a far better start than the default all-row-wise plan).
Json start_document(const PlanRequest& request, const TableCosts& costs, int world, int host) {
  if (request.has_baseline) return request.baseline_document;
  ParallelPlan plan = request.base.plan;
  torchrec_style_sharding(plan, costs, world, host, request.base.layout.cp.size);
  Json doc = Json::object();
  set_tables(doc, plan, request.base.model);
  return doc;
}

/// Lexicographic rank of an estimate: feasible first, then by objective; infeasible ones
/// by how far they miss (memory excess, then cross-DC excess).
struct Score {
  int tier = 2;  // 0 feasible, 1 misses the cross-DC limit, 2 does not fit, 3 invalid
  double value = std::numeric_limits<double>::infinity();
  bool operator<(const Score& o) const { return tier != o.tier ? tier < o.tier : value < o.value; }
};

class Search {
 public:
  Search(const PlanRequest& request, const sim::cost::CostModel& kernels,
         const PlannerOptions& options)
      : req_(request),
        kernels_(kernels),
        opt_(options),
        world_(request.base.layout.world),
        host_(request.base.cluster.hosts().empty()
                  ? 1
                  : static_cast<int>(request.base.cluster.hosts().front().gpus.size())),
        costs_(request.base, kernels),
        space_(request.base.cluster, world_, request.base.model, request.constraints,
               start_document(request, costs_, world_, host_)),
        closed_form_(make_closed_form_cost(kernels)),
        analytical_(make_simulation_cost(kernels, sim::network::NetworkMode::kAnalytical)),
        final_(make_simulation_cost(kernels, options.final_mode)),
        scenarios_([&] { return request.base; }),
        arena_(std::max(1, options.threads)),
        start_(Clock::now()) {}

  PlanOutcome run();

 private:
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  bool over(double share) const { return elapsed() > share * opt_.budget_s; }
  std::size_t candidate(const std::vector<int>& point);
  std::size_t add_document(Json document, std::string label, bool place);
  void build(Candidate& c, Json document, bool place) const;
  Estimate price(const CostModel& model, const Candidate& c);
  void price_closed_form(const std::vector<std::size_t>& ids);
  void price_stage(const std::vector<std::size_t>& ids, bool final_stage);
  Score score(const Estimate& e) const;
  Score score(const Candidate& c) const;
  void descend();
  void enumerate();
  void add_references();
  void refine(std::vector<std::size_t>& finals);
  std::vector<std::size_t> neighbours(std::size_t id);
  bool room_for_simulation() const;
  std::optional<RankedPlan> reference(std::optional<std::size_t> id, std::string label) const;

  const PlanRequest& req_;
  const sim::cost::CostModel& kernels_;
  const PlannerOptions& opt_;
  int world_, host_;
  TableCosts costs_;
  SearchSpace space_;
  std::unique_ptr<CostModel> closed_form_, analytical_, final_;
  tbb::enumerable_thread_specific<TrainingScenario> scenarios_;
  tbb::task_arena arena_;
  Clock::time_point start_;
  std::vector<Candidate> all_;
  std::map<std::string, std::size_t> by_document_;
  std::map<std::vector<int>, std::size_t> by_point_;
  std::size_t start_id_ = 0;
  std::optional<std::size_t> baseline_id_, torchrec_id_;  // the references as candidates
  double final_seconds_ = 0;                              // wall time of final-mode pricing
  int finals_priced_ = 0;
  SearchStats stats_;
};

void Search::build(Candidate& c, Json document, bool place) const {
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
    c.ranked.plan = std::move(plan);
    c.ranked.document = std::move(document);
    c.valid = true;
  } catch (const ConfigError& e) {
    c.valid = false;
    c.error = e.what();
    c.ranked.document = std::move(document);
  }
}

std::size_t Search::candidate(const std::vector<int>& point) {
  if (auto it = by_point_.find(point); it != by_point_.end()) return it->second;
  Candidate c;
  c.point = point;
  c.ranked.label = space_.describe(point);
  build(c, space_.compose(point), true);
  const std::string key = c.ranked.document.dump();
  if (auto it = by_document_.find(key); it != by_document_.end()) {
    by_point_[point] = it->second;
    return it->second;
  }
  all_.push_back(std::move(c));
  by_document_[key] = all_.size() - 1;
  by_point_[point] = all_.size() - 1;
  return all_.size() - 1;
}

std::size_t Search::add_document(Json document, std::string label, bool place) {
  Candidate c;
  c.ranked.label = std::move(label);
  build(c, std::move(document), place);
  const std::string key = c.ranked.document.dump();
  if (auto it = by_document_.find(key); it != by_document_.end()) return it->second;
  all_.push_back(std::move(c));
  by_document_[key] = all_.size() - 1;
  return all_.size() - 1;
}

Estimate Search::price(const CostModel& model, const Candidate& c) {
  TrainingScenario& sc = scenarios_.local();
  sc.plan = c.ranked.plan;
  sc.layout = c.layout;
  Estimate e = model.estimate(sc);
  const double headroom = req_.constraints.memory_headroom;
  e.memory.excess += headroom;
  e.fits = e.memory.excess <= 0;
  return e;
}

void Search::price_closed_form(const std::vector<std::size_t>& ids) {
  std::vector<std::size_t> todo;
  for (auto i : ids) {
    if (all_[i].valid && !all_[i].ranked.closed_form) todo.push_back(i);
  }
  std::vector<Estimate> out(todo.size());
  std::vector<std::string> errors(todo.size());
  arena_.execute([&] {
    tbb::parallel_for(std::size_t{0}, todo.size(), [&](std::size_t k) {
      try {
        out[k] = price(*closed_form_, all_[todo[k]]);
      } catch (const ConfigError& e) {
        errors[k] = e.what();  // e.g. a balancing method too large for its scope
      }
    });
  });
  for (std::size_t k = 0; k < todo.size(); ++k) {
    auto& c = all_[todo[k]];
    if (!errors[k].empty()) {
      c.valid = false;
      c.error = errors[k];
    } else {
      c.ranked.closed_form = out[k];
    }
  }
  stats_.scored += static_cast<int>(todo.size());
  if (opt_.progress) {
    double best = std::numeric_limits<double>::infinity();
    for (const auto& c : all_) {
      if (c.ranked.closed_form && score(c).tier == 0)
        best = std::min(best, score(*c.ranked.closed_form).value);
    }
    opt_.progress(stats_.scored, best, opt_.budget_s - elapsed());
  }
}

void Search::price_stage(const std::vector<std::size_t>& ids, bool final_stage) {
  const CostModel& model = final_stage ? *final_ : *analytical_;
  const auto t0 = Clock::now();
  std::vector<Estimate> out(ids.size());
  arena_.execute([&] {
    tbb::parallel_for(std::size_t{0}, ids.size(),
                      [&](std::size_t k) { out[k] = price(model, all_[ids[k]]); });
  });
  for (std::size_t k = 0; k < ids.size(); ++k) {
    auto& r = all_[ids[k]].ranked;
    (final_stage ? r.final_estimate : r.analytical) = std::move(out[k]);
  }
  stats_.simulated += static_cast<int>(ids.size());
  if (final_stage) {
    final_seconds_ += std::chrono::duration<double>(Clock::now() - t0).count();
    finals_priced_ += static_cast<int>(ids.size());
  }
}

Score Search::score(const Estimate& e) const {
  if (!e.fits) return {2, e.memory.excess};
  const double limit = req_.constraints.max_cross_dc_bytes;
  if (limit >= 0 && e.cross_dc_bytes > limit) return {1, e.cross_dc_bytes - limit};
  return {0, objective_value(req_.constraints.objective, e)};
}

Score Search::score(const Candidate& c) const {
  if (!c.valid) return {3, 0};
  if (!c.ranked.closed_form) return {};
  return score(c.ranked.best());
}

void Search::enumerate() {
  const auto& dims = space_.dimensions();
  start_id_ = candidate(space_.start());
  std::vector<int> point(dims.size(), 0);
  std::vector<std::size_t> ids;
  for (;;) {
    ids.push_back(candidate(point));
    std::size_t d = 0;
    while (d < dims.size() && ++point[d] == static_cast<int>(dims[d].choices.size())) {
      point[d++] = 0;
    }
    if (d == dims.size()) break;
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  price_closed_form(ids);
  stats_.space_scored = stats_.scored;
  stats_.exact = true;
}

void Search::descend() {
  const auto& dims = space_.dimensions();
  std::vector<int> cur = space_.start();
  std::size_t cur_id = candidate(cur);
  start_id_ = cur_id;
  price_closed_form({cur_id});
  for (int round = 0; round < 8; ++round) {
    bool changed = false;
    for (std::size_t d = 0; d < dims.size(); ++d) {
      if (dims[d].choices.size() < 2) continue;
      if (over(0.3)) {
        stats_.budget_reached = true;
        stats_.space_scored = stats_.scored;
        return;
      }
      std::vector<std::size_t> ids;
      std::vector<std::vector<int>> points;
      for (int c = 0; c < static_cast<int>(dims[d].choices.size()); ++c) {
        auto p = cur;
        p[d] = c;
        ids.push_back(candidate(p));
        points.push_back(std::move(p));
      }
      price_closed_form(ids);
      std::size_t best = cur_id;
      std::vector<int> best_point = cur;
      for (std::size_t k = 0; k < ids.size(); ++k) {
        if (score(all_[ids[k]]) < score(all_[best])) best = ids[k], best_point = points[k];
      }
      if (best != cur_id) {
        cur_id = best;
        cur = best_point;
        changed = true;
      }
    }
    if (!changed) break;
  }
  stats_.space_scored = stats_.scored;
}

void Search::add_references() {
  if (!opt_.references) return;
  std::vector<std::size_t> ids;
  if (req_.has_baseline) {
    baseline_id_ = add_document(req_.baseline_document, "scenario plan", false);
    ids.push_back(*baseline_id_);
  }
  // TorchRec's planner over the baseline's model-parallel group (its sharding group under
  // 2D parallelism, TorchRec's DMPCollection), the rest of the baseline unchanged.
  ParallelPlan tr = req_.base.plan;
  torchrec_style_sharding(tr, costs_, req_.base.layout.sparse.size, host_,
                          req_.base.layout.cp.size);
  Json doc = req_.has_baseline ? req_.baseline_document : Json::object();
  doc["name"] = "torchrec-style";
  doc.erase("description");
  set_tables(doc, tr, req_.base.model);
  torchrec_id_ = add_document(doc, "TorchRec-style sharding", false);
  ids.push_back(*torchrec_id_);
  price_closed_form(ids);
}

std::optional<RankedPlan> Search::reference(std::optional<std::size_t> id,
                                            std::string label) const {
  if (!id || !all_[*id].valid) return std::nullopt;
  RankedPlan r = all_[*id].ranked;
  r.label = std::move(label);
  return r;
}

bool Search::room_for_simulation() const {
  const double each = finals_priced_ > 0 ? final_seconds_ / finals_priced_ : 0;
  return elapsed() + 1.5 * each < 0.9 * opt_.budget_s;
}

/// One-dimension neighbours of a candidate's document: every other choice of every
/// dimension; a table keeps the other tables' placement, a new group size or context
/// degree places every table again.
std::vector<std::size_t> Search::neighbours(std::size_t id) {
  std::vector<std::size_t> out;
  for (const auto& d : space_.dimensions()) {
    const bool replace = d.name == "sparse_group" || d.name == "context_parallel";
    for (const auto& choice : d.choices) {
      Json doc = all_[id].ranked.document;
      for (const auto& [ptr, v] : choice.values) {
        const Json::json_pointer p(ptr);
        if (!v.is_null()) {
          doc[p] = v;
        } else if (doc.contains(p)) {
          doc.at(p.parent_pointer()).erase(p.back());
        }
      }
      if (replace && doc.contains("sparse") && doc["sparse"].contains("tables")) {
        for (auto& [name, t] : doc["sparse"]["tables"].items()) {
          if (t.is_object()) t.erase("ranks");
        }
      }
      const std::size_t n = add_document(
          std::move(doc), all_[id].ranked.label + ", " + d.name + "=" + choice.label, true);
      if (n != id) out.push_back(n);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

/// Local search from the best plan of the final stage, each step simulated in the final
/// mode: table slices moved or swapped off the member the simulation found slowest, and
/// the one-dimension neighbours the closed form ranks best. Stops at a round that finds
/// nothing better or when the budget has no room for another simulation.
void Search::refine(std::vector<std::size_t>& finals) {
  auto by_score = [&](std::size_t a, std::size_t b) {
    const Score sa = score(all_[a]), sb = score(all_[b]);
    return sa < sb || (!(sb < sa) && a < b);
  };
  constexpr int kPlacementMoves = 2, kNeighbours = 2;
  for (int round = 0; round < 8; ++round) {
    std::sort(finals.begin(), finals.end(), by_score);
    const std::size_t best = finals.front();
    if (score(all_[best]).tier != 0 || !room_for_simulation()) return;
    std::vector<std::size_t> trial;
    const auto& c = all_[best];
    const auto& report = c.ranked.final_estimate->report;
    const int group = c.layout.sparse.size;
    if (report && static_cast<int>(report->rank_compute_ms.size()) >= group && group > 1) {
      // Simulated compute per step of each group member, over the groups.
      std::vector<double> member(static_cast<std::size_t>(group), 0.0);
      const auto& ms = report->rank_compute_ms;
      for (std::size_t r = 0; r < ms.size(); ++r)
        member[r % static_cast<std::size_t>(group)] += ms[r] * 1e-3;
      for (const auto& plan : placement_moves(c.ranked.plan, costs_, member, host_,
                                              c.layout.cp.size, kPlacementMoves)) {
        Json doc = c.ranked.document;
        set_tables(doc, plan, req_.base.model);
        trial.push_back(
            add_document(std::move(doc), c.ranked.label + ", slice off the slowest member", false));
      }
      price_closed_form(trial);
    }
    if (!stats_.exact && !over(0.85)) {  // exact: every neighbour was scored already
      auto near = neighbours(best);
      // In chunks, so that the estimates never eat the simulations' share of the budget.
      const std::size_t chunk = 4 * static_cast<std::size_t>(std::max(1, opt_.threads));
      for (std::size_t k = 0; k < near.size() && !over(0.8); k += chunk) {
        price_closed_form(
            {near.begin() + static_cast<std::ptrdiff_t>(k),
             near.begin() + static_cast<std::ptrdiff_t>(std::min(near.size(), k + chunk))});
      }
      near.erase(std::remove_if(near.begin(), near.end(),
                                [&](std::size_t i) { return !all_[i].ranked.closed_form; }),
                 near.end());
      std::sort(near.begin(), near.end(), by_score);
      int taken = 0;
      for (auto i : near) {
        if (taken >= kNeighbours || score(all_[i]).tier != 0) break;
        if (all_[i].ranked.final_estimate) continue;
        trial.push_back(i);
        ++taken;
      }
    }
    for (auto i : trial) {
      if (!all_[i].valid || all_[i].ranked.final_estimate || score(all_[i]).tier != 0) continue;
      if (!room_for_simulation()) {
        stats_.budget_reached = true;
        break;
      }
      price_stage({i}, true);
      finals.push_back(i);
    }
    std::sort(finals.begin(), finals.end(), by_score);
    if (finals.front() == best) return;
  }
}

PlanOutcome Search::run() {
  PlanOutcome out;
  out.objective = req_.constraints.objective;
  out.final_mode = opt_.final_mode;
  stats_.space_size = space_.size();
  stats_.dimensions = static_cast<int>(space_.dimensions().size());
  if (space_.size() <= opt_.exact_limit)
    enumerate();
  else
    descend();
  add_references();

  // Every candidate unbuildable: a fixed value the cluster cannot take.
  if (std::none_of(all_.begin(), all_.end(), [](const Candidate& c) { return c.valid; })) {
    throw ConfigError(req_.constraints.file.empty() ? "<constraints>" : req_.constraints.file,
                      "/fix",
                      fmt::format("no plan can be built with these constraints: {}",
                                  all_.empty() ? "empty search space" : all_.front().error));
  }
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < all_.size(); ++i) {
    if (all_[i].ranked.closed_form) order.push_back(i);
  }
  auto by_score = [&](std::size_t a, std::size_t b) {
    const Score sa = score(all_[a]), sb = score(all_[b]);
    return sa < sb || (!(sb < sa) && a < b);
  };
  std::sort(order.begin(), order.end(), by_score);
  if (order.empty() || score(all_[order.front()]).tier != 0) {
    out.status = order.empty() || score(all_[order.front()]).tier >= 2
                     ? PlanStatus::kNothingFits
                     : PlanStatus::kConstraintUnmet;
    if (!order.empty()) out.closest = all_[order.front()].ranked;
    if (out.status == PlanStatus::kConstraintUnmet) {
      out.unmet = fmt::format(
          "{}: /max_cross_dc_bytes_per_step: no plan that fits moves at most {:.3g} GiB across "
          "datacenters per step; the closest moves {:.3g} GiB",
          req_.constraints.file, req_.constraints.max_cross_dc_bytes / (1 << 30),
          all_[order.front()].ranked.closed_form->cross_dc_bytes / (1 << 30));
    }
    stats_.wall_s = elapsed();
    out.stats = stats_;
    return out;
  }
  // Stage 2: the best feasible closed-form candidates in analytical simulation.
  // The start point (the baseline's values) and the references (the scenario's plan, the
  // TorchRec-style baseline) always go on: the search keeps the best found so far, and
  // they are found, so the plan found is never slower than them in the final mode.
  std::vector<std::size_t> must;
  for (auto id : {std::optional<std::size_t>(start_id_), baseline_id_, torchrec_id_}) {
    if (id && score(all_[*id]).tier == 0 && std::find(must.begin(), must.end(), *id) == must.end())
      must.push_back(*id);
  }
  std::vector<std::size_t> stage2 = must;
  for (auto i : order) {
    if (score(all_[i]).tier != 0) break;
    if (stage2.size() >= static_cast<std::size_t>(opt_.analytical_k) + must.size()) break;
    if (std::find(must.begin(), must.end(), i) == must.end()) stage2.push_back(i);
  }
  const bool two_stages = opt_.final_mode == sim::network::NetworkMode::kAnalytical;
  if (!two_stages) {
    std::vector<std::size_t> done;
    for (auto i : stage2) {
      const bool required = std::find(must.begin(), must.end(), i) != must.end();
      if (!required && !done.empty() && over(0.5)) {
        stats_.budget_reached = true;
        continue;
      }
      price_stage({i}, false);
      done.push_back(i);
    }
    stage2 = done;
    std::sort(stage2.begin(), stage2.end(), by_score);
  }
  // Stage 3: the best in the final mode, and the required ones.
  std::vector<std::size_t> finals;
  for (auto i : stage2) {
    const bool required = std::find(must.begin(), must.end(), i) != must.end();
    if (!required) {
      if (static_cast<int>(finals.size()) >= std::max(1, opt_.top)) continue;
      if (!finals.empty() && over(0.6)) {
        stats_.budget_reached = true;
        continue;
      }
    }
    price_stage({i}, true);
    finals.push_back(i);
  }
  refine(finals);
  // References that did not fit still get their final-mode verdict for the report.
  for (auto id : {baseline_id_, torchrec_id_}) {
    if (id && all_[*id].valid && !all_[*id].ranked.final_estimate) price_stage({*id}, true);
  }
  std::sort(finals.begin(), finals.end(), by_score);
  if (finals.empty()) {
    out.status = PlanStatus::kNothingFits;
    out.closest = all_[order.front()].ranked;
  } else {
    if (static_cast<int>(finals.size()) > std::max(1, opt_.top))
      finals.resize(std::max(1, opt_.top));
    for (auto i : finals) {
      if (score(all_[i]).tier == 0) out.top.push_back(all_[i].ranked);
    }
    if (out.top.empty()) {
      out.status = PlanStatus::kNothingFits;
      out.closest = all_[finals.front()].ranked;
    }
  }
  out.baseline = reference(baseline_id_, "scenario plan");
  out.torchrec = reference(torchrec_id_, "TorchRec-style sharding");
  stats_.wall_s = elapsed();
  out.stats = stats_;
  return out;
}

}  // namespace

const Estimate& RankedPlan::best() const {
  if (final_estimate) return *final_estimate;
  if (analytical) return *analytical;
  return *closed_form;
}

double objective_value(Objective objective, const Estimate& e) {
  return objective == Objective::kStepTime ? e.step_ms : -e.samples_per_sec_per_gpu;
}

PlanOutcome find_plan(const PlanRequest& request, const sim::cost::CostModel& kernels,
                      const PlannerOptions& options) {
  Search search(request, kernels, options);
  return search.run();
}

TrainingScenario scenario_for(const TrainingScenario& base, const ParallelPlan& plan) {
  TrainingScenario sc = base;
  sc.plan = plan;
  sc.layout = Layout::build(sc.cluster, plan);
  sc.data.batch_for(sc.layout.replicas);
  return sc;
}

}  // namespace strait::planner
