#include "cli/training_report.hpp"

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/core/quantity.hpp"

namespace strait::cli {
namespace {

using sim::run::RankAccount;
using sim::topology::LinkClass;
using sim::workload::CommClass;

constexpr LinkClass kClasses[] = {LinkClass::kNvlink, LinkClass::kPcie, LinkClass::kScaleOut,
                                  LinkClass::kCrossDc};
constexpr double kGiB = 1024.0 * 1024 * 1024;

// (name, ms) pairs of a breakdown, in report order; zero exposed classes are left out.
std::vector<std::pair<std::string, double>> categories(const RankAccount& a) {
  std::vector<std::pair<std::string, double>> out;
  out.emplace_back("compute", a.compute.to_ms());
  for (int c = 0; c < sim::workload::kCommClassCount; ++c) {
    const double ms = a.exposed_comm[static_cast<std::size_t>(c)].to_ms();
    if (ms > 0)
      out.emplace_back(
          fmt::format("exposed {}", sim::workload::to_string(static_cast<CommClass>(c))), ms);
  }
  out.emplace_back("straggler wait", a.straggler_wait.to_ms());
  out.emplace_back("bubble", a.bubble.to_ms());
  return out;
}

// The header: scenario, cluster, mode, the step times and their steady window.
void print_step_times(std::ostream& out, const sim::run::TrainingReport& r) {
  out << fmt::format(
      "strait simulate: scenario '{}' on cluster '{}' ({} GPUs, {} datacenters), {} mode, {} "
      "steps\n\n",
      r.scenario, r.cluster, r.gpus, r.datacenters, sim::network::to_string(r.mode), r.steps);
  out << fmt::format("  step time      mean {:.3f} ms   p50 {:.3f} ms   p99 {:.3f} ms   (steps:",
                     r.stats.mean_ms, r.stats.p50_ms, r.stats.p99_ms);
  for (double ms : r.step_ms) out << fmt::format(" {:.3f}", ms);
  out << ")\n";
  const auto& st = r.stats;
  const int last = static_cast<int>(r.step_ms.size()) - st.drain_steps - 1;
  out << (st.steady ? fmt::format("                 over the steady steps {}..{} (warm-up {}, "
                                  "drain {}; every step: mean {:.3f} ms)\n",
                                  st.warmup_steps, last, st.warmup_steps, st.drain_steps,
                                  st.all_steps_mean_ms)
                    : fmt::format("                 over every step: {} steps reach no steady "
                                  "state (warm-up {}, drain {}); simulate more steps\n",
                                  r.step_ms.size(), st.warmup_steps, st.drain_steps));
  out << fmt::format("  throughput     {:.0f} samples/s ({:.0f} samples per step)\n",
                     r.samples_per_sec, r.samples_per_step);
  out << fmt::format("  MFU            {:.1f}% of bf16 peak\n", r.mfu * 100);
}

// Which kernels the durations describe: each implementation with its families.
void print_kernel_implementations(std::ostream& out, const sim::run::TrainingReport& r) {
  for (const auto& [gpu, families] : r.kernel_implementations) {
    std::map<std::string, std::vector<std::string>> by_name;
    for (const auto& [family, name] : families) by_name[name].push_back(family);
    const std::string head = fmt::format("  kernels        {}: ", gpu);
    bool first = true;
    for (const auto& [name, list] : by_name) {
      out << fmt::format("{:<{}}{} ({})\n", first ? head : "", head.size(), name,
                         fmt::join(list, ", "));
      first = false;
    }
  }
}

// Where a step goes on the critical and the average rank, then the top stragglers.
void print_breakdown(std::ostream& out, const sim::run::TrainingReport& r) {
  const auto crit = categories(r.critical);
  const auto avg = categories(r.average);
  out << fmt::format(
      "  where a step goes (ms)     {:>16} {:>14}   (critical: the rank that waits least)\n",
      fmt::format("critical rank {}", r.critical_rank), "average rank");
  for (std::size_t i = 0; i < crit.size(); ++i) {
    double average = 0;
    for (const auto& [name, ms] : avg) {
      if (name == crit[i].first) average = ms;
    }
    out << fmt::format("    {:<24} {:>16.3f} {:>14.3f}\n", crit[i].first, crit[i].second, average);
  }
  for (const auto& [name, ms] : avg) {
    bool listed = false;
    for (const auto& c : crit) listed = listed || c.first == name;
    if (!listed) out << fmt::format("    {:<24} {:>16.3f} {:>14.3f}\n", name, 0.0, ms);
  }
  out << "\n  top stragglers (compute per step):";
  for (const auto& s : r.top_stragglers)
    out << fmt::format("  rank {} {:.3f} ms", s.rank, s.compute_ms);
  out << fmt::format("  (average {:.3f} ms)\n\n", r.average.compute.to_ms());
}

// The peak memory, whether it fits, and its terms on the peak rank.
void print_peak_memory(std::ostream& out, const sim::run::TrainingReport& r) {
  const auto& peak_rank = r.memory.ranks.at(static_cast<std::size_t>(r.fit.rank));
  out << fmt::format("  peak memory    {:.2f} GiB on rank {} of {:.2f} GiB usable: {}\n",
                     r.fit.total / kGiB, r.fit.rank, r.memory_capacity / kGiB,
                     r.fit.fits ? "fits"
                                : fmt::format("DOES NOT FIT by {:.2f} GiB, mostly {}",
                                              r.fit.excess / kGiB, r.fit.dominant));
  for (const auto& t : peak_rank.terms) {
    if (t.bytes > 0) out << fmt::format("    {:<24} {:>10.3f} GiB\n", t.name, t.bytes / kGiB);
  }
}

// Traffic per link class, then the cross-datacenter traffic by purpose (no newline after).
void print_traffic(std::ostream& out, const sim::run::TrainingReport& r) {
  out << "\n  traffic over links:";
  for (auto c : kClasses) {
    out << fmt::format("  {} {}", sim::topology::to_string(c), format_bytes(r.traffic.bytes(c)));
  }
  out << "\n  cross-datacenter traffic by purpose:";
  bool any = false;
  for (int c = 0; c < sim::workload::kCommClassCount; ++c) {
    const double b = r.class_traffic[static_cast<std::size_t>(c)].bytes(LinkClass::kCrossDc);
    if (b <= 0) continue;
    any = true;
    out << fmt::format("  {} {}", sim::workload::to_string(static_cast<CommClass>(c)),
                       format_bytes(b));
  }
  if (!any) out << "  none";
}

// What the simulation itself took: ops, events, build and replay wall times.
void print_simulation_cost(std::ostream& out, const sim::run::TrainingReport& r) {
  out << fmt::format(
      "\n  simulation     {} ops, {} events; build {:.3f} s, replay {:.3f} s ({:.2f} M events/s)\n",
      r.ops, r.events, r.build_wall_s, r.sim_wall_s,
      r.sim_wall_s > 0 ? static_cast<double>(r.events) / r.sim_wall_s / 1e6 : 0.0);
}

}  // namespace

void print_training_report(std::ostream& out, const sim::run::TrainingReport& r) {
  print_step_times(out, r);
  print_kernel_implementations(out, r);
  out << "\n";
  print_breakdown(out, r);
  print_peak_memory(out, r);
  print_traffic(out, r);
  print_simulation_cost(out, r);
}

}  // namespace strait::cli
