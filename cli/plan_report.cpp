#include "cli/plan_report.hpp"

#include <fmt/format.h>

#include "sim/core/quantity.hpp"

namespace strait::cli {
namespace {

using planner::Estimate;
using planner::RankedPlan;
using sim::workload::CommClass;
constexpr double kGiB = 1024.0 * 1024 * 1024;

std::string exposed(const Estimate& e) {
  if (!e.report) return "-";
  std::string s;
  for (int c = 0; c < sim::workload::kCommClassCount; ++c) {
    const double ms = e.report->critical.exposed_comm[static_cast<std::size_t>(c)].to_ms();
    if (ms < 0.0005) continue;
    if (!s.empty()) s += " ";
    s += fmt::format("{} {:.2f}", sim::workload::to_string(static_cast<CommClass>(c)), ms);
  }
  return s.empty() ? "none" : s;
}

void row(std::ostream& out, const std::string& name, const RankedPlan& p) {
  const Estimate& e = p.best();
  if (!e.fits) {
    out << fmt::format("  {:<16} does not fit: rank {} needs {:.1f} GiB of {:.1f} GiB ({} binds)\n",
                       name, e.memory.rank, e.memory.total / kGiB, e.memory_capacity / kGiB,
                       e.memory.dominant);
    return;
  }
  out << fmt::format("  {:<16} {:>9.3f} {:>12.1f} {:>6.1f}% {:>7.1f} {:<22} {:>9.3f}  {}\n", name,
                     e.step_ms, e.samples_per_sec_per_gpu, e.report ? e.report->mfu * 100 : 0.0,
                     e.memory.total / kGiB, e.memory.dominant, e.cross_dc_bytes / kGiB, exposed(e));
}

// How well the closed form ordered the candidates it shares with an analytical simulation
// (the final one when the final mode is analytical).
std::string rank_agreement(const planner::SearchStats& s) {
  if (!s.closed_form_rank_correlation) {
    return fmt::format(
        "  closed form vs analytical: no rank correlation ({} candidates priced both ways)",
        s.rank_pairs);
  }
  return fmt::format("  closed form vs analytical: Spearman {:.2f} over {} candidates",
                     *s.closed_form_rank_correlation, s.rank_pairs);
}

// The header: scenario, objective, what the search did and why it stopped, exclusions.
void print_search(std::ostream& out, const planner::PlanOutcome& o,
                  const planner::PlanRequest& request) {
  const auto& s = o.stats;
  out << fmt::format(
      "strait plan: '{}' on cluster '{}' ({} GPUs), objective {}, final stage {} mode\n",
      request.base.name, request.base.cluster.name(), request.base.layout.world,
      planner::to_string(o.objective), sim::network::to_string(o.final_mode));
  const char* stop = s.stopped_by == planner::StopReason::kEvaluations ? "its evaluations spent"
                     : s.stopped_by == planner::StopReason::kExhausted
                         ? "every feasible candidate simulated"
                         : "the wall-clock budget reached: best so far, may vary by machine";
  out << fmt::format(
      "  search: {} dimensions, {:.3g} points, {} closed form ({} estimates), {} simulations "
      "({} in {} mode); stopped with {}\n",
      s.dimensions, s.space_size, s.exact ? "exhaustive" : "coordinate-descent", s.scored,
      s.simulated, s.evaluations, sim::network::to_string(o.final_mode), stop);
  out << rank_agreement(s) << "\n";
  for (const auto& x : o.excluded)
    out << fmt::format("  excluded by the constraints: {} ({})\n", x.label, x.reason);
}

// Why no plan was found: the unmet constraint, or the closest plan's memory.
void print_not_found(std::ostream& out, const planner::PlanOutcome& o,
                     const planner::PlanRequest& request) {
  if (!o.unmet.empty()) out << "  " << o.unmet << "\n";
  if (!o.closest) return;
  const auto& m = o.closest->best().memory;
  const auto& e = o.closest->best();
  if (!e.fits) {
    out << fmt::format(
        "  no plan fits in memory. Closest: {}\n    rank {} needs {:.2f} GiB, {:.2f} GiB more "
        "than the {:.2f} GiB usable{}; binding term: {} ({:.2f} GiB)\n",
        o.closest->label, m.rank, m.total / kGiB, m.excess / kGiB, (m.total - m.excess) / kGiB,
        request.constraints.memory_headroom > 0 ? " minus the headroom" : "", m.dominant,
        m.dominant_bytes / kGiB);
  }
}

// The top plans, the scenario's plan and the TorchRec-style one side by side, then labels.
void print_ranking(std::ostream& out, const planner::PlanOutcome& o) {
  out << fmt::format("  {:<16} {:>9} {:>12} {:>7} {:>7} {:<22} {:>9}  {}\n", "plan", "step ms",
                     "samples/s/GPU", "MFU", "GiB", "memory binds", "xDC GiB", "exposed comm (ms)");
  for (std::size_t i = 0; i < o.top.size(); ++i) row(out, fmt::format("#{}", i + 1), o.top[i]);
  if (o.baseline) row(out, "scenario plan", *o.baseline);
  if (o.torchrec) row(out, "torchrec-style", *o.torchrec);
  out << "\n";
  for (std::size_t i = 0; i < o.top.size(); ++i)
    out << fmt::format("  #{}: {}\n", i + 1, o.top[i].label);
}

// The best plan's speed-up over the scenario's plan and over the TorchRec-style plan.
void print_speedups(std::ostream& out, const planner::PlanOutcome& o) {
  const Estimate& best = o.top.front().best();
  if (o.baseline) {
    out << fmt::format("\n  best vs scenario plan:  {:.3f}x\n",
                       planner::speedup(o.objective, best, o.baseline->best()));
  }
  if (o.torchrec) {
    const double x = planner::speedup(o.objective, best, o.torchrec->best());
    out << (x > 0
                ? fmt::format("  best vs torchrec-style: {:.3f}x\n", x)
                : std::string("  best vs torchrec-style: the TorchRec-style plan does not fit\n"));
  }
}

// Which of the best plan's dimensions cross datacenters (nothing when none does).
void print_crossings(std::ostream& out, const planner::PlanOutcome& o,
                     const sim::workload::Layout& layout) {
  const auto crossings = planner::datacenter_crossings(o.top.front().plan, layout);
  if (crossings.empty()) return;
  out << "  crosses datacenters: ";
  for (std::size_t i = 0; i < crossings.size(); ++i) out << (i ? "; " : "") << crossings[i];
  out << "\n";
}

// "all", or the first four members and how many more.
std::string member_list(const planner::TableStat& t) {
  if (t.all_members) return "all";
  std::string members;
  for (std::size_t i = 0; i < t.members.size() && i < 4; ++i)
    members += fmt::format("{}{}", i ? "," : "", t.members[i]);
  if (t.members.size() > 4) members += fmt::format(",+{}", t.members.size() - 4);
  return members;
}

// Per-table figures of the best plan: sharding, members, lookup time, bytes moved.
void print_tables(std::ostream& out, const planner::PlanOutcome& o,
                  const planner::PlanRequest& request, const planner::TableCosts& costs,
                  const sim::workload::Layout& layout) {
  out << fmt::format("\n  tables of #1 (one model-parallel group of {} ranks)\n",
                     layout.sparse.size);
  out << fmt::format("    {:<16} {:<18} {:<14} {:>10} {:>11} {:>11} {:>11} {:>11}\n", "table",
                     "sharding", "members", "lookup ms", "input", "output", "gradient",
                     "per member");
  for (const auto& t :
       planner::table_stats(o.top.front().plan, layout, costs, planner::host_size(request.base))) {
    out << fmt::format("    {:<16} {:<18} {:<14} {:>10.3f} {:>11} {:>11} {:>11} {:>11}\n", t.table,
                       t.sharding, member_list(t), t.lookup_ms, format_bytes(t.input_bytes),
                       format_bytes(t.output_bytes), format_bytes(t.grad_bytes),
                       format_bytes(t.bytes_per_member));
  }
}

}  // namespace

void print_plan_report(std::ostream& out, const planner::PlanOutcome& o,
                       const planner::PlanRequest& request, const planner::TableCosts& costs) {
  print_search(out, o, request);
  out << "\n";
  if (o.status != planner::PlanStatus::kFound) {
    print_not_found(out, o, request);
    return;
  }
  print_ranking(out, o);
  print_speedups(out, o);
  const auto layout = sim::workload::Layout::build(request.base.cluster, o.top.front().plan);
  print_crossings(out, o, layout);
  print_tables(out, o, request, costs, layout);
}

}  // namespace strait::cli
