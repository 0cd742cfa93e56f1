#include "sim/run/training_report_json.hpp"

#include <fmt/format.h>

namespace strait::sim::run {
namespace {

using topology::LinkClass;
using workload::CommClass;

constexpr LinkClass kClasses[] = {LinkClass::kNvlink, LinkClass::kPcie, LinkClass::kScaleOut,
                                  LinkClass::kCrossDc};
constexpr double kGiB = 1024.0 * 1024 * 1024;

}  // namespace

nlohmann::json steady_state_json(const StepStatistics& s) {
  return {{"steady", s.steady},
          {"warmup_steps", s.warmup_steps},
          {"drain_steps", s.drain_steps},
          {"counted_steps", s.counted_steps},
          {"mean_ci95_ms", {s.mean_ci95_low_ms, s.mean_ci95_high_ms}},
          {"all_steps_mean_ms", s.all_steps_mean_ms}};
}

nlohmann::json training_report_json(const TrainingReport& r) {
  auto breakdown = [](const RankAccount& a) {
    nlohmann::json b = nlohmann::json::object();
    b["compute"] = a.compute.to_ms();
    for (int c = 0; c < workload::kCommClassCount; ++c) {
      b[fmt::format("exposed_{}", workload::to_string(static_cast<CommClass>(c)))] =
          a.exposed_comm[static_cast<std::size_t>(c)].to_ms();
    }
    b["straggler_wait"] = a.straggler_wait.to_ms();
    b["bubble"] = a.bubble.to_ms();
    return b;
  };
  nlohmann::json terms = nlohmann::json::object();
  for (const auto& t : r.memory.ranks.at(static_cast<std::size_t>(r.fit.rank)).terms)
    terms[t.name] = t.bytes / kGiB;
  nlohmann::json traffic = nlohmann::json::object();
  for (auto c : kClasses) traffic[topology::to_string(c)] = r.traffic.bytes(c);
  nlohmann::json by_class = nlohmann::json::object();
  for (int c = 0; c < workload::kCommClassCount; ++c) {
    const auto& t = r.class_traffic[static_cast<std::size_t>(c)];
    if (t.transfers == 0) continue;
    auto& entry = by_class[workload::to_string(static_cast<CommClass>(c))];
    for (auto lc : kClasses) entry[topology::to_string(lc)] = t.bytes(lc);
  }
  nlohmann::json stragglers = nlohmann::json::array();
  for (const auto& s : r.top_stragglers)
    stragglers.push_back({{"rank", s.rank}, {"compute_ms", s.compute_ms}});
  return {{"scenario", r.scenario},
          {"cluster", r.cluster},
          {"gpus", r.gpus},
          {"mode", network::to_string(r.mode)},
          {"steps", r.steps},
          {"step_time_ms", r.stats.mean_ms},
          {"step_time_p50_ms", r.stats.p50_ms},
          {"step_time_p99_ms", r.stats.p99_ms},
          {"step_times_ms", r.step_ms},
          {"steady_state", steady_state_json(r.stats)},
          {"samples_per_sec", r.samples_per_sec},
          {"mfu", r.mfu},
          {"critical_rank", r.critical_rank},
          {"breakdown_ms", breakdown(r.average)},
          {"breakdown_critical_ms", breakdown(r.critical)},
          {"top_stragglers", stragglers},
          {"peak_memory_gib", r.fit.total / kGiB},
          {"peak_memory_rank", r.fit.rank},
          {"memory_capacity_gib", r.memory_capacity / kGiB},
          {"memory_fits", r.fit.fits},
          {"memory_terms_gib", terms},
          {"traffic_bytes", traffic},
          {"traffic_bytes_by_comm_class", by_class},
          {"kernel_implementations", r.kernel_implementations},
          {"ops", r.ops},
          {"events", r.events},
          {"build_wall_s", r.build_wall_s},
          {"sim_wall_s", r.sim_wall_s}};
}

}  // namespace strait::sim::run
