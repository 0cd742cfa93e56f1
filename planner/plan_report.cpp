#include "planner/plan_report.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/workload/sharding.hpp"

namespace strait::planner {
namespace {

using sim::workload::CommClass;
using sim::workload::Layout;
using sim::workload::ShardingType;
constexpr double kGiB = 1024.0 * 1024 * 1024;

// Whether some group of `groups` (indices into L.groups, -1: none) holds ranks of two
// datacenters.
bool spans(const Layout& L, const std::vector<int>& groups) {
  std::vector<bool> seen(L.groups.size(), false);
  for (const int index : groups) {
    if (index < 0 || seen[static_cast<std::size_t>(index)]) continue;
    seen[static_cast<std::size_t>(index)] = true;
    const auto& g = L.groups[static_cast<std::size_t>(index)];
    for (const int r : g.ranks) {
      if (L.rank_dc[static_cast<std::size_t>(r)] !=
          L.rank_dc[static_cast<std::size_t>(g.ranks.front())])
        return true;
    }
  }
  return false;
}

bool spans(const Layout& L, const sim::workload::GroupDimension& dim) {
  return spans(L, dim.block);
}

// Spearman's rho of the closed form against simulation; null without a figure.
Json rank_correlation_json(const SearchStats& stats) {
  return stats.closed_form_rank_correlation ? Json(*stats.closed_form_rank_correlation)
                                            : Json(nullptr);
}

}  // namespace

int host_size(const sim::workload::TrainingScenario& scenario) {
  return scenario.cluster.hosts().empty()
             ? 1
             : static_cast<int>(scenario.cluster.hosts().front().gpus.size());
}

std::vector<TableStat> table_stats(const sim::workload::ParallelPlan& plan, const Layout& layout,
                                   const TableCosts& costs, int host_size) {
  const auto& model = costs.model();
  const int M = layout.sparse.size, cp = layout.cp.size;
  const double e = sim::workload::bytes_per_element(model.embedding_dtype);
  std::vector<TableStat> out;
  for (std::size_t t = 0; t < model.tables.size(); ++t) {
    const auto& s = plan.sharding[t];
    const auto& tb = model.tables[t];
    TableStat st;
    st.table = tb.name;
    st.sharding = sim::workload::to_string(s.type);
    if (s.type == ShardingType::kColumnWise || s.type == ShardingType::kGrid)
      st.sharding += fmt::format(" x{}", s.column_shards);
    const int ti = static_cast<int>(t);
    const double group_ids = M * costs.ids_per_replica(ti) / cp;
    const double samples = M * costs.samples_per_replica() / cp;
    const bool seq = tb.pooling == sim::workload::Pooling::kSequence;
    switch (s.type) {
      case ShardingType::kDataParallel:
        st.all_members = true;
        st.lookup_ms = costs.slice_seconds(ti, 1, 1, 1, cp) * 1e3;
        st.bytes_per_member = costs.slice_bytes(ti, 1, 1);
        break;
      case ShardingType::kRowWise:
        st.all_members = true;
        st.lookup_ms = M * costs.slice_seconds(ti, 1, 1.0 / M, M, cp) * 1e3;
        st.bytes_per_member = costs.slice_bytes(ti, 1, 1.0 / M);
        break;
      default: {
        const int width = sim::workload::spans_host_block(s.type)
                              ? sim::workload::host_block_size(host_size, M)
                              : 1;
        const double f = sim::workload::slice_column_fraction(s);
        for (int m : s.ranks) {
          for (int j = 0; j < width; ++j) st.members.push_back(m + j);
        }
        const int slices = static_cast<int>(std::max<std::size_t>(1, s.ranks.size()));
        // A table_row_wise table over several blocks: each holds 1/slices of its rows.
        const double rows = s.type == ShardingType::kTableRowWise ? 1.0 / slices : 1.0;
        st.lookup_ms = slices * costs.slice_seconds(ti, f, rows, M, cp) * 1e3;
        st.bytes_per_member = costs.slice_bytes(ti, f, rows / width);
      }
    }
    if (s.type != ShardingType::kDataParallel && M > 1) {
      st.input_bytes = group_ids * 8;
      st.output_bytes = (seq ? group_ids : samples) * tb.dim * e;
      st.grad_bytes = st.output_bytes;
    }
    out.push_back(std::move(st));
  }
  return out;
}

std::vector<std::string> datacenter_crossings(const sim::workload::ParallelPlan& plan,
                                              const Layout& L) {
  std::vector<std::string> out;
  if (std::all_of(L.rank_dc.begin(), L.rank_dc.end(),
                  [&](int dc) { return dc == L.rank_dc.front(); }))
    return out;
  if (spans(L, L.sparse)) out.emplace_back("sparse all-to-alls (model-parallel group)");
  if (spans(L, L.sparse.replica)) {
    out.emplace_back(fmt::format("embedding replica sync (every {} steps, staleness {})",
                                 plan.replica_sync_every, plan.replica_sync_staleness));
  }
  if (L.cp.size > 1 && spans(L, L.cp)) out.emplace_back("context parallel");
  if (plan.dense == sim::workload::DenseParallelism::kFsdp && spans(L, L.fsdp))
    out.emplace_back("FSDP shard group");
  if (L.expert.size > 1 && spans(L, L.expert)) out.emplace_back("MoE expert group");
  const char* sync = plan.schedule.cross_dc == sim::workload::CrossDcSync::kOverlapped
                         ? "dense gradient sync (overlapped: background, one step late)"
                     : plan.schedule.cross_dc == sim::workload::CrossDcSync::kHierarchical
                         ? "dense gradient sync (hierarchical, in the step)"
                         : "dense gradient sync (flat, in the step)";
  out.emplace_back(sync);
  return out;
}

double speedup(Objective objective, const Estimate& best, const Estimate& reference) {
  if (!reference.fits || !best.fits) return 0;
  if (objective == Objective::kStepTime)
    return best.step_ms > 0 ? reference.step_ms / best.step_ms : 0;
  return reference.samples_per_sec_per_gpu > 0
             ? best.samples_per_sec_per_gpu / reference.samples_per_sec_per_gpu
             : 0;
}

Json ranked_json(const RankedPlan& p, const PlanRequest& request) {
  const Estimate& e = p.best();
  Json j = {{"label", p.label}, {"fits", e.fits}};
  if (p.closed_form) j["closed_form_step_ms"] = p.closed_form->step_ms;
  if (p.analytical) j["analytical_step_ms"] = p.analytical->step_ms;
  if (p.final_estimate) j["final_step_ms"] = p.final_estimate->step_ms;
  j["step_time_ms"] = e.step_ms;
  j["samples_per_sec"] = e.samples_per_sec;
  j["samples_per_sec_per_gpu"] = e.samples_per_sec_per_gpu;
  j["peak_memory_gib"] = e.memory.total / kGiB;
  j["peak_memory_rank"] = e.memory.rank;
  j["memory_capacity_gib"] = e.memory_capacity / kGiB;
  j["memory_binding_term"] = e.memory.dominant;
  j["cross_dc_gib_per_step"] = e.cross_dc_bytes / kGiB;
  if (e.report) {
    // step_time_ms is the mean of the steady steps of a run of `simulated_steps`.
    j["simulated_steps"] = e.report->steps;
    j["mfu"] = e.report->mfu;
    Json exposed = Json::object();
    for (int c = 0; c < sim::workload::kCommClassCount; ++c) {
      exposed[sim::workload::to_string(static_cast<CommClass>(c))] =
          e.report->critical.exposed_comm[static_cast<std::size_t>(c)].to_ms();
    }
    j["exposed_comm_ms"] = exposed;
    j["straggler_wait_ms"] = e.report->critical.straggler_wait.to_ms();
    j["compute_ms"] = e.report->critical.compute.to_ms();
  }
  try {
    const auto layout = sim::workload::Layout::build(request.base.cluster, p.plan);
    j["crosses_datacenters"] = datacenter_crossings(p.plan, layout);
  } catch (const ConfigError&) {
  }
  j["plan"] = p.document;
  return j;
}

Json outcome_json(const PlanOutcome& o, const PlanRequest& request, const TableCosts& costs) {
  const char* status = o.status == PlanStatus::kFound         ? "found"
                       : o.status == PlanStatus::kNothingFits ? "nothing_fits"
                                                              : "constraint_unmet";
  Json j = {{"status", status},
            {"objective", to_string(o.objective)},
            {"final_mode", sim::network::to_string(o.final_mode)},
            {"scenario", request.base.name},
            {"cluster", request.base.cluster.name()},
            {"gpus", request.base.layout.world},
            {"search",
             {{"dimensions", o.stats.dimensions},
              {"space_size", o.stats.space_size},
              {"exact", o.stats.exact},
              {"scored_closed_form", o.stats.scored},
              {"simulated", o.stats.simulated},
              {"evaluations", o.stats.evaluations},
              {"stopped_by", to_string(o.stats.stopped_by)},
              {"budget_reached", o.stats.budget_reached},
              {"closed_form_rank_correlation", rank_correlation_json(o.stats)},
              {"rank_pairs", o.stats.rank_pairs}}}};
  Json excluded = Json::array();
  for (const auto& x : o.excluded) excluded.push_back({{"plan", x.label}, {"reason", x.reason}});
  j["excluded_references"] = excluded;
  Json top = Json::array();
  for (const auto& p : o.top) top.push_back(ranked_json(p, request));
  j["top"] = top;
  if (o.baseline) j["scenario_plan"] = ranked_json(*o.baseline, request);
  if (o.torchrec) j["torchrec_style"] = ranked_json(*o.torchrec, request);
  if (!o.top.empty()) {
    const Estimate& best = o.top.front().best();
    if (o.baseline) j["speedup_vs_scenario_plan"] = speedup(o.objective, best, o.baseline->best());
    if (o.torchrec) j["speedup_vs_torchrec_style"] = speedup(o.objective, best, o.torchrec->best());
    const auto layout = sim::workload::Layout::build(request.base.cluster, o.top.front().plan);
    Json tables = Json::array();
    for (const auto& s : table_stats(o.top.front().plan, layout, costs, host_size(request.base))) {
      tables.push_back({{"table", s.table},
                        {"sharding", s.sharding},
                        {"members", s.all_members ? Json("all") : Json(s.members)},
                        {"lookup_ms", s.lookup_ms},
                        {"input_dist_bytes", s.input_bytes},
                        {"output_dist_bytes", s.output_bytes},
                        {"grad_dist_bytes", s.grad_bytes},
                        {"bytes_per_member", s.bytes_per_member}});
    }
    j["tables"] = tables;
  }
  if (o.closest) {
    const auto& m = o.closest->best().memory;
    j["closest"] = ranked_json(*o.closest, request);
    j["closest_memory"] = {{"rank", m.rank},
                           {"shortfall_gib", m.excess / kGiB},
                           {"binding_term", m.dominant},
                           {"binding_term_gib", m.dominant_bytes / kGiB}};
  }
  if (!o.unmet.empty()) j["unmet"] = o.unmet;
  return j;
}

}  // namespace strait::planner
