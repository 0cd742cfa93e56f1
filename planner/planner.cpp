// Over 400 lines: the Search class: its stages (closed form, references, best first,
// neighbours) share the candidate pool and counted effort.

#include "planner/planner.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <tuple>
#include <utility>

#include <fmt/format.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "planner/detail/candidate_pool.hpp"
#include "planner/plan_document.hpp"
#include "planner/search_space.hpp"
#include "planner/table_placement.hpp"
#include "planner/torchrec_style.hpp"
#include "sim/core/statistics.hpp"
#include "sim/run/training_run.hpp"
#include "sim/workload/work_estimate.hpp"

namespace strait::planner {
namespace {

using Clock = std::chrono::steady_clock;
using detail::Candidate;
using sim::workload::ParallelPlan;
using sim::workload::TrainingScenario;

/// Candidates priced together in the best-first stage. A constant, not the thread count,
/// so that the order of the search, and with it the plan, never depends on the machine.
constexpr std::size_t kBatch = 4;

/// The search trusts the closed form's order only as far as it ranks like simulation: with
/// at least kRankPairsToJudge candidates priced both ways, a Spearman correlation below
/// kTrustedRankCorrelation puts every candidate with an analytical time before those with
/// a closed form only. Fewer pairs say too little (with 5, one swap of neighbours moves
/// rho by 0.1). At 0.5 the closed form orders about two pairs of candidates in three as
/// the simulation does (for normally spread scores, Kendall's tau is about 0.35 there),
/// against one in two for a coin: below it an analytical time is the better guide.
constexpr std::size_t kRankPairsToJudge = 5;
constexpr double kTrustedRankCorrelation = 0.5;

/// Whether the closed form's order may rank candidates beside simulated ones, judged on
/// `pairs` (closed form, simulated). No figure (a constant side) is no evidence against it.
bool closed_form_trusted(const std::vector<std::pair<double, double>>& pairs) {
  if (pairs.size() < kRankPairsToJudge) return true;
  const auto rho = spearman_rank_correlation(pairs);
  return !rho || *rho >= kTrustedRankCorrelation;
}

/// The median ratio of simulated to closed-form values over `pairs` (closed form,
/// simulated): the factor that puts closed forms on the simulation's scale (1 without).
double median_ratio(const std::vector<std::pair<double, double>>& pairs) {
  std::vector<double> ratios;
  for (const auto& [closed, simulated] : pairs) {
    if (closed != 0 && simulated / closed > 0) ratios.push_back(simulated / closed);
  }
  if (ratios.empty()) return 1;
  std::nth_element(ratios.begin(), ratios.begin() + static_cast<std::ptrdiff_t>(ratios.size() / 2),
                   ratios.end());
  return ratios[ratios.size() / 2];
}

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
  int tier = 2;  // 0 feasible, 1 misses the cross-DC limit, 2 does not fit, 3 unusable
  double value = std::numeric_limits<double>::infinity();
  bool operator<(const Score& o) const { return tier != o.tier ? tier < o.tier : value < o.value; }
};

class Search {
 public:
  Search(const PlanRequest& request, const sim::cost::CostModel& kernels,
         const PlannerOptions& options)
      : req_(request),
        opt_(options),
        world_(request.base.layout.world),
        host_(request.base.cluster.hosts().empty()
                  ? 1
                  : static_cast<int>(request.base.cluster.hosts().front().gpus.size())),
        costs_(request.base, kernels),
        space_(request.base.cluster, world_, request.base.model, request.constraints,
               start_document(request, costs_, world_, host_)),
        pool_(request, costs_, space_, host_),
        batches_(std::make_shared<sim::workload::BatchCache>()),
        closed_form_(make_closed_form_cost(kernels, batches_)),
        analytical_(
            make_simulation_cost(kernels, sim::network::NetworkMode::kAnalytical, batches_)),
        final_(make_simulation_cost(kernels, options.final_mode, batches_)),
        scenarios_([&] { return request.base; }),
        arena_(std::max(1, options.threads)),
        start_(Clock::now()),
        analytical_allowance_(options.evaluations *
                              std::max(0, options.analytical_per_evaluation)) {}

  PlanOutcome run();

 private:
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  bool out_of_time(double share = 1.0) const { return elapsed() > share * opt_.budget_s; }
  bool flow_final() const { return opt_.final_mode != sim::network::NetworkMode::kAnalytical; }
  Estimate price(const CostModel& model, const Candidate& c);
  void price_closed_form(const std::vector<std::size_t>& ids);
  void simulate(const std::vector<std::size_t>& ids, bool final_stage);
  void report_progress(const char* stage) const;
  Score score(const Estimate& e) const;
  Score score(const Candidate& c) const;
  bool better(std::size_t a, std::size_t b) const;
  void enumerate();
  void descend();
  void descend_from(std::vector<int> start);
  void add_references();
  void best_first();
  std::vector<std::size_t> next_batch() const;
  std::vector<std::pair<double, double>> closed_form_pairs() const;
  void record_rank_correlation();
  void expand(std::size_t best);
  std::vector<std::pair<std::size_t, std::size_t>> neighbours(std::size_t id);
  std::optional<RankedPlan> reference(std::optional<std::size_t> id, std::string label) const;
  void unusable_space_error() const;

  const PlanRequest& req_;
  const PlannerOptions& opt_;
  int world_, host_;
  TableCosts costs_;
  SearchSpace space_;
  detail::CandidatePool pool_;
  // One sampling per sampling key for every stage's candidates (all share the base).
  std::shared_ptr<sim::workload::BatchCache> batches_;
  std::unique_ptr<CostModel> closed_form_, analytical_, final_;
  tbb::enumerable_thread_specific<TrainingScenario> scenarios_;
  tbb::task_arena arena_;
  Clock::time_point start_;
  std::size_t start_id_ = 0;
  std::optional<std::size_t> baseline_id_, torchrec_id_;  // the references as candidates
  std::vector<std::size_t> finals_;                       // simulated in the final mode
  std::vector<std::size_t> promoted_;                     // neighbours of a best final plan
  int analytical_runs_ = 0;
  int analytical_allowance_ = 0;  // analytical simulations the effort allows
  SearchStats stats_;
  std::vector<ExcludedPlan> excluded_;
};

Estimate Search::price(const CostModel& model, const Candidate& c) {
  TrainingScenario& sc = scenarios_.local();
  sc.plan = c.ranked.plan;
  sc.layout = c.layout;
  Estimate e = model.estimate(sc);
  e.memory.excess += req_.constraints.memory_headroom;
  e.fits = e.memory.excess <= 0;
  return e;
}

void Search::price_closed_form(const std::vector<std::size_t>& ids) {
  std::vector<std::size_t> todo;
  for (auto i : ids) {
    if (pool_[i].usable() && !pool_[i].ranked.closed_form) todo.push_back(i);
  }
  std::vector<Estimate> out(todo.size());
  std::vector<std::string> errors(todo.size());
  arena_.execute([&] {
    tbb::parallel_for(std::size_t{0}, todo.size(), [&](std::size_t k) {
      try {
        out[k] = price(*closed_form_, pool_[todo[k]]);
      } catch (const ConfigError& e) {
        errors[k] = e.what();  // e.g. a balancing method too large for its scope
      }
    });
  });
  for (std::size_t k = 0; k < todo.size(); ++k) {
    auto& c = pool_[todo[k]];
    if (!errors[k].empty()) {
      c.valid = false;
      c.error = errors[k];
    } else {
      c.ranked.closed_form = out[k];
    }
  }
  stats_.scored += static_cast<int>(todo.size());
  report_progress("closed form");
}

void Search::report_progress(const char* stage) const {
  if (!opt_.progress) return;
  PlanProgress p;
  p.stage = stage;
  p.scored = stats_.scored;
  p.simulated = stats_.simulated;
  p.evaluations = stats_.evaluations;
  p.evaluation_limit = opt_.evaluations;
  p.seconds_left = std::max(0.0, opt_.budget_s - elapsed());
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < pool_.size(); ++i) {
    if (score(pool_[i]).tier == 0 && (!best || better(i, *best))) best = i;
  }
  if (best) {
    const auto& r = pool_[*best].ranked;
    p.best_step_ms = r.best().step_ms;
    p.best_by = r.final_estimate ? sim::network::to_string(opt_.final_mode)
                : r.analytical   ? sim::network::to_string(sim::network::NetworkMode::kAnalytical)
                                 : "closed form";
  }
  opt_.progress(p);
}

void Search::simulate(const std::vector<std::size_t>& ids, bool final_stage) {
  const CostModel& model = final_stage ? *final_ : *analytical_;
  std::vector<Estimate> out(ids.size());
  arena_.execute([&] {
    tbb::parallel_for(std::size_t{0}, ids.size(),
                      [&](std::size_t k) { out[k] = price(model, pool_[ids[k]]); });
  });
  for (std::size_t k = 0; k < ids.size(); ++k) {
    auto& r = pool_[ids[k]].ranked;
    (final_stage ? r.final_estimate : r.analytical) = std::move(out[k]);
    if (final_stage) finals_.push_back(ids[k]);
  }
  stats_.simulated += static_cast<int>(ids.size());
  if (final_stage)
    stats_.evaluations += static_cast<int>(ids.size());
  else
    analytical_runs_ += static_cast<int>(ids.size());
  report_progress(sim::network::to_string(final_stage ? opt_.final_mode
                                                      : sim::network::NetworkMode::kAnalytical));
}

Score Search::score(const Estimate& e) const {
  if (!e.fits) return {2, e.memory.excess};
  const double limit = req_.constraints.max_cross_dc_bytes;
  if (limit >= 0 && e.cross_dc_bytes > limit) return {1, e.cross_dc_bytes - limit};
  return {0, objective_value(req_.constraints.objective, e)};
}

Score Search::score(const Candidate& c) const {
  if (!c.usable()) return {3, 0};
  if (!c.ranked.closed_form) return {};
  return score(c.ranked.best());
}

bool Search::better(std::size_t a, std::size_t b) const {
  const Score sa = score(pool_[a]), sb = score(pool_[b]);
  return sa < sb || (!(sb < sa) && a < b);
}

void Search::enumerate() {
  const auto& dims = space_.dimensions();
  start_id_ = pool_.point(space_.start());
  std::vector<int> point(dims.size(), 0);
  std::vector<std::size_t> ids;
  for (;;) {
    ids.push_back(pool_.point(point));
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

/// Coordinate descent from the start point, then again from the start with every table
/// row-wise (where allowed): the plan that needs least memory for most models, so a space
/// where little fits is still searched from a point that fits, and the nearest miss is
/// near the least memory any plan needs.
void Search::descend() {
  start_id_ = pool_.point(space_.start());
  descend_from(space_.start());
  std::vector<int> row_wise = space_.start();
  const auto& dims = space_.dimensions();
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (dims[d].name.rfind("table:", 0) != 0) continue;
    for (std::size_t c = 0; c < dims[d].choices.size(); ++c) {
      if (dims[d].choices[c].label == name_of(sim::workload::ShardingType::kRowWise))
        row_wise[d] = static_cast<int>(c);
    }
  }
  if (row_wise != space_.start()) descend_from(row_wise);
  stats_.space_scored = stats_.scored;
}

void Search::descend_from(std::vector<int> cur) {
  const auto& dims = space_.dimensions();
  std::size_t cur_id = pool_.point(cur);
  price_closed_form({cur_id});
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t d = 0; d < dims.size(); ++d) {
      if (dims[d].choices.size() < 2) continue;
      if (out_of_time(0.5)) {  // leave the simulations half of the wall-clock bound
        stats_.budget_reached = true;
        return;
      }
      std::vector<std::size_t> ids;
      std::vector<std::vector<int>> points;
      for (int c = 0; c < static_cast<int>(dims[d].choices.size()); ++c) {
        auto p = cur;
        p[d] = c;
        ids.push_back(pool_.point(p));
        points.push_back(std::move(p));
      }
      price_closed_form(ids);
      std::size_t best = cur_id;
      std::vector<int> best_point = cur;
      for (std::size_t k = 0; k < ids.size(); ++k) {
        if (score(pool_[ids[k]]) < score(pool_[best])) best = ids[k], best_point = points[k];
      }
      if (best != cur_id) {
        cur_id = best;
        cur = best_point;
        changed = true;
      }
    }
  }
}

void Search::add_references() {
  if (!opt_.references) return;
  std::vector<std::size_t> ids;
  if (req_.has_baseline) {
    baseline_id_ = pool_.document(req_.baseline_document, "scenario plan", false);
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
  torchrec_id_ = pool_.document(doc, "TorchRec-style sharding", false);
  ids.push_back(*torchrec_id_);
  for (auto [id, label] : {std::pair{baseline_id_, "scenario plan"},
                           std::pair{torchrec_id_, "TorchRec-style sharding"}}) {
    if (id && pool_[*id].valid && !pool_[*id].excluded.empty())
      excluded_.push_back({label, pool_[*id].excluded});
  }
  price_closed_form(ids);
}

void Search::unusable_space_error() const {
  std::string why = "empty search space";
  for (std::size_t i = 0; i < pool_.size(); ++i) {
    if (!pool_[i].valid || !pool_[i].excluded.empty()) {
      why = pool_[i].valid ? pool_[i].excluded : pool_[i].error;
      break;
    }
  }
  throw ConfigError(req_.constraints.file.empty() ? "<constraints>" : req_.constraints.file, "/fix",
                    fmt::format("no plan keeps these constraints: {}", why));
}

std::optional<RankedPlan> Search::reference(std::optional<std::size_t> id,
                                            std::string label) const {
  if (!id || !pool_[*id].usable()) return std::nullopt;
  RankedPlan r = pool_[*id].ranked;
  r.label = std::move(label);
  return r;
}

/// The candidates of a candidate's one-dimension neighbours, each with its dimension.
std::vector<std::pair<std::size_t, std::size_t>> Search::neighbours(std::size_t id) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (auto& n : space_.neighbours(pool_[id].ranked.document)) {
    const std::size_t c =
        pool_.document(std::move(n.document), pool_[id].ranked.label + ", " + n.label, true);
    if (c != id) out.emplace_back(c, n.dimension);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

/// The neighbours of a new best final plan join the ranking: slices moved or swapped off
/// the group member its simulation finds slowest, and every one-dimension change. Up to
/// `evaluations` of them are promoted (see below): a promoted candidate is simulated
/// analytically before the closed form's favourites, so the search looks around the best
/// plan with simulations, not only where the closed form points (it mis-ranks what only a
/// simulation sees: contention, overlap).
void Search::expand(std::size_t best) {
  constexpr int kPlacementMoves = 2;
  std::vector<std::size_t> near;
  const auto& c = pool_[best];
  const auto& report = c.ranked.final_estimate->report;
  const int group = c.layout.sparse.size;
  if (report && static_cast<int>(report->rank_compute_ms.size()) >= group && group > 1) {
    // Simulated compute per step of each group member, over the groups.
    std::vector<double> member(static_cast<std::size_t>(group), 0.0);
    const auto& ms = report->rank_compute_ms;
    for (std::size_t r = 0; r < ms.size(); ++r)
      member[r % static_cast<std::size_t>(group)] += ms[r] * 1e-3;
    for (const auto& plan :
         placement_moves(c.ranked.plan, costs_, member, host_, c.layout.cp.size, kPlacementMoves)) {
      Json doc = pool_[best].ranked.document;
      set_tables(doc, plan, req_.base.model);
      near.push_back(pool_.document(
          std::move(doc), pool_[best].ranked.label + ", slice off the slowest member", false));
    }
  }
  const auto more = neighbours(best);
  for (const auto& [id, dim] : more) near.push_back(id);
  price_closed_form(near);
  // At most `evaluations` of them promoted (a model of 100 tables has some 600 neighbours,
  // whose analytical runs would eat the effort): the slice moves, then the closed form's
  // best change of each dimension, the plan-wide ones before the tables' (the closed
  // form misjudges most what changes the whole step: groups, replica sync, schedule),
  // then the closed form's best of the rest.
  const std::size_t moves = near.size() - more.size();
  std::vector<std::size_t> first(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(moves));
  std::vector<std::size_t> best_of_dim(space_.dimensions().size(), pool_.size());
  for (const auto& [id, dim] : more) {
    if (best_of_dim[dim] == pool_.size() || better(id, best_of_dim[dim])) best_of_dim[dim] = id;
  }
  const auto is_table = [&](std::size_t dim) {
    return space_.dimensions()[dim].name.rfind("table:", 0) == 0;
  };
  for (int tables = 0; tables < 2; ++tables) {
    std::vector<std::size_t> pick;
    for (std::size_t d = 0; d < best_of_dim.size(); ++d) {
      if (best_of_dim[d] < pool_.size() && is_table(d) == (tables == 1))
        pick.push_back(best_of_dim[d]);
    }
    std::sort(pick.begin(), pick.end(), [&](std::size_t a, std::size_t b) { return better(a, b); });
    first.insert(first.end(), pick.begin(), pick.end());
  }
  std::vector<std::size_t> rest;
  rest.reserve(more.size());
  for (const auto& [id, dim] : more) rest.push_back(id);
  std::sort(rest.begin(), rest.end(), [&](std::size_t a, std::size_t b) { return better(a, b); });
  first.insert(first.end(), rest.begin(), rest.end());
  std::vector<std::size_t> promoted;
  for (auto id : first) {
    if (promoted.size() >= static_cast<std::size_t>(std::max(1, opt_.evaluations))) break;
    if (std::find(promoted.begin(), promoted.end(), id) == promoted.end()) promoted.push_back(id);
  }
  promoted_.insert(promoted_.end(), promoted.begin(), promoted.end());
}

/// The next candidates to simulate: the usable, feasible ones not yet simulated in the
/// final mode, best first by their most faithful estimate (analytical, else the closed
/// form on the analytical scale; after those with an analytical time while the closed
/// form ranks unlike the simulations: closed_form_trusted), at most kBatch.
std::vector<std::size_t> Search::next_batch() const {
  // Promoted neighbours of the best plan without an analytical time come first.
  if (flow_final() && analytical_runs_ < analytical_allowance_) {
    std::vector<std::size_t> out;
    for (auto i : promoted_) {
      const auto& r = pool_[i].ranked;
      if (!pool_[i].usable() || !r.closed_form || r.analytical || r.final_estimate) continue;
      if (score(*r.closed_form).tier != 0) continue;
      if (std::find(out.begin(), out.end(), i) == out.end()) out.push_back(i);
      if (out.size() == kBatch) break;
    }
    if (!out.empty()) return out;
  }
  const auto pairs = closed_form_pairs();
  const double ratio = median_ratio(pairs);
  const bool trusted = closed_form_trusted(pairs);
  // (0: an analytical time or a trusted closed form, 1: an untrusted one; value; index)
  std::vector<std::tuple<int, double, std::size_t>> ranked;
  for (std::size_t i = 0; i < pool_.size(); ++i) {
    const auto& r = pool_[i].ranked;
    if (!pool_[i].usable() || !r.closed_form || r.final_estimate) continue;
    if (r.analytical) {
      if (score(*r.analytical).tier == 0) ranked.emplace_back(0, score(*r.analytical).value, i);
    } else if (score(*r.closed_form).tier == 0) {
      ranked.emplace_back(trusted ? 0 : 1, score(*r.closed_form).value * ratio, i);
    }
  }
  const std::size_t n = std::min(kBatch, ranked.size());
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(n), ranked.end());
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < n; ++k) out.push_back(std::get<2>(ranked[k]));
  return out;
}

/// The objective values (closed form, simulated) of every usable candidate priced both
/// ways, both feasible; the simulation is the analytical one when the final mode is flow,
/// else the final one. In pool order, so nothing here depends on threads.
std::vector<std::pair<double, double>> Search::closed_form_pairs() const {
  std::vector<std::pair<double, double>> pairs;
  for (std::size_t i = 0; i < pool_.size(); ++i) {
    const auto& r = pool_[i].ranked;
    const auto& sim = flow_final() ? r.analytical : r.final_estimate;
    if (!pool_[i].usable() || !r.closed_form || !sim) continue;
    const Score closed = score(*r.closed_form), simulated = score(*sim);
    if (closed.tier == 0 && simulated.tier == 0) pairs.emplace_back(closed.value, simulated.value);
  }
  return pairs;
}

void Search::record_rank_correlation() {
  const auto pairs = closed_form_pairs();
  stats_.rank_pairs = static_cast<int>(pairs.size());
  stats_.closed_form_rank_correlation = spearman_rank_correlation(pairs);
}

void Search::best_first() {
  // The references first: the plan found is never slower than them in the final mode.
  std::vector<std::size_t> must;
  for (auto id : {std::optional<std::size_t>(start_id_), baseline_id_, torchrec_id_}) {
    if (id && score(pool_[*id]).tier == 0 && std::find(must.begin(), must.end(), *id) == must.end())
      must.push_back(*id);
  }
  if (flow_final()) simulate(must, false);
  simulate(must, true);
  std::optional<std::size_t> best;
  for (auto i : finals_) {
    if (score(pool_[i]).tier == 0 && (!best || better(i, *best))) best = i;
  }
  if (best) expand(*best);
  stats_.stopped_by = StopReason::kExhausted;
  while (stats_.evaluations < opt_.evaluations) {
    if (out_of_time()) {
      stats_.stopped_by = StopReason::kWallClock;
      stats_.budget_reached = true;
      return;
    }
    auto batch = next_batch();
    if (batch.empty()) return;  // every feasible candidate simulated: exhausted
    std::vector<std::size_t> analytical, final_stage;
    for (auto i : batch) {
      const bool needs_analytical =
          flow_final() && !pool_[i].ranked.analytical &&
          analytical_runs_ + static_cast<int>(analytical.size()) < analytical_allowance_;
      (needs_analytical ? analytical : final_stage).push_back(i);
    }
    if (!analytical.empty()) {
      simulate(analytical, false);
      continue;  // re-rank with the simulated times before spending an evaluation
    }
    final_stage.resize(std::min(final_stage.size(),
                                static_cast<std::size_t>(opt_.evaluations - stats_.evaluations)));
    simulate(final_stage, true);
    std::optional<std::size_t> now = best;
    for (auto i : final_stage) {
      if (score(pool_[i]).tier == 0 && (!now || better(i, *now))) now = i;
    }
    if (now != best) {
      best = now;
      expand(*best);
    }
  }
  stats_.stopped_by = StopReason::kEvaluations;
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
  out.excluded = excluded_;

  bool any = false;
  for (std::size_t i = 0; i < pool_.size(); ++i) any = any || pool_[i].usable();
  if (!any) unusable_space_error();
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < pool_.size(); ++i) {
    if (pool_[i].usable() && pool_[i].ranked.closed_form) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return better(a, b); });
  if (order.empty() || score(pool_[order.front()]).tier != 0) {
    out.status = order.empty() || score(pool_[order.front()]).tier >= 2
                     ? PlanStatus::kNothingFits
                     : PlanStatus::kConstraintUnmet;
    if (!order.empty()) out.closest = pool_[order.front()].ranked;
    if (out.status == PlanStatus::kConstraintUnmet) {
      out.unmet = fmt::format(
          "{}: /max_cross_dc_bytes_per_step: no plan that fits moves at most {:.3g} GiB across "
          "datacenters per step; the closest moves {:.3g} GiB",
          req_.constraints.file, req_.constraints.max_cross_dc_bytes / (1 << 30),
          pool_[order.front()].ranked.closed_form->cross_dc_bytes / (1 << 30));
    }
    record_rank_correlation();
    stats_.wall_s = elapsed();
    out.stats = stats_;
    return out;
  }
  best_first();
  if (stats_.budget_reached) stats_.stopped_by = StopReason::kWallClock;
  // References that did not fit still get their final-mode verdict for the report.
  for (auto id : {baseline_id_, torchrec_id_}) {
    if (id && pool_[*id].usable() && !pool_[*id].ranked.final_estimate) simulate({*id}, true);
  }
  std::vector<std::size_t> finals;
  for (auto i : finals_) {
    if (score(pool_[i]).tier == 0) finals.push_back(i);
  }
  std::sort(finals.begin(), finals.end(),
            [&](std::size_t a, std::size_t b) { return better(a, b); });
  finals.erase(std::unique(finals.begin(), finals.end()), finals.end());
  if (finals.empty()) {
    out.status = PlanStatus::kNothingFits;
    out.closest = pool_[order.front()].ranked;
  }
  if (static_cast<int>(finals.size()) > std::max(1, opt_.top)) finals.resize(std::max(1, opt_.top));
  for (auto i : finals) out.top.push_back(pool_[i].ranked);
  out.baseline = reference(baseline_id_, "scenario plan");
  out.torchrec = reference(torchrec_id_, "TorchRec-style sharding");
  record_rank_correlation();
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
  // A job past its work limit is refused before the space is built (a candidate of the
  // same job is as large as its baseline within a small factor).
  sim::workload::check_work(request.base, request.base.steps);
  // The baseline plan's kernel implementations price every candidate (the candidates keep
  // its "kernels" too, so simulations and closed forms cost the same kernels).
  if (!request.base.plan.kernels.empty()) {
    const sim::cost::CostModel chosen = sim::run::with_plan_kernels(kernels, request.base);
    Search search(request, chosen, options);
    return search.run();
  }
  Search search(request, kernels, options);
  return search.run();
}

TrainingScenario scenario_for(const TrainingScenario& base, const ParallelPlan& plan) {
  TrainingScenario sc = base;
  sc.plan = plan;
  sc.steps = compared_steps(base.steps, plan);
  sc.layout = sim::workload::Layout::build(sc.cluster, plan);
  sc.data.batch_for(sc.layout.replicas);
  return sc;
}

}  // namespace strait::planner
