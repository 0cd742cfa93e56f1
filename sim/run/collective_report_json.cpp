#include "sim/run/collective_report_json.hpp"

namespace strait::sim::run {
namespace {

using topology::LinkClass;

constexpr LinkClass kClasses[] = {LinkClass::kNvlink, LinkClass::kPcie, LinkClass::kScaleOut,
                                  LinkClass::kCrossDc};

}  // namespace

nlohmann::json collective_report_json(const CollectiveScenario& s, const ScenarioResult& r,
                                      network::NetworkMode mode) {
  nlohmann::json collectives = nlohmann::json::array();
  for (std::size_t i = 0; i < r.collectives.size(); ++i) {
    const auto& c = r.collectives[i];
    collectives.push_back({{"name", c.name},
                           {"op", network::to_string(s.collectives[i].spec.op)},
                           {"algorithm", network::to_string(c.algorithm)},
                           {"ranks", c.ranks},
                           {"bytes", c.bytes},
                           {"start_us", c.start.to_us()},
                           {"end_us", c.end.to_us()},
                           {"time_us", (c.end - c.start).to_us()}});
  }
  nlohmann::json traffic = nlohmann::json::object();
  for (auto c : kClasses) traffic[topology::to_string(c)] = r.traffic.bytes(c);
  return {{"scenario", s.name},
          {"cluster", s.cluster.name()},
          {"gpus", s.cluster.gpu_count()},
          {"mode", network::to_string(mode)},
          {"makespan_ms", r.makespan.to_ms()},
          {"collectives", collectives},
          {"traffic_bytes", traffic},
          {"events", r.events},
          {"sim_wall_s", r.wall_s}};
}

}  // namespace strait::sim::run
