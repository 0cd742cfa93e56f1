#include "sim/run/collective_scenario.hpp"

#include <chrono>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/network/rank_set.hpp"

namespace strait::sim::run {
namespace {

topology::Cluster load_cluster_ref(const ConfigNode& node) {
  if (node.is_object()) return topology::Cluster::from_config(node);
  const std::filesystem::path base = std::filesystem::path(node.file()).parent_path();
  const std::string path = (base / node.as_string()).lexically_normal().string();
  if (!std::filesystem::exists(path))
    node.fail(fmt::format("cluster file '{}' does not exist", path));
  return topology::Cluster::load(path);
}

network::NetworkMode parse_mode(const ConfigNode& node, std::string_view key) {
  return read_enum_or(node, key, network::NetworkMode::kFlow);
}

ScenarioCollective parse_collective(const ConfigNode& c, const topology::Cluster& cluster,
                                    const std::vector<ScenarioCollective>& earlier) {
  c.allow_only(
      {"name", "op", "algorithm", "bytes", "ranks", "start", "after", "priority", "root", "peer"});
  ScenarioCollective out;
  out.name = c.string("name");
  for (const auto& e : earlier) {
    if (e.name == out.name)
      c.at("name").fail(fmt::format("duplicate collective name \"{}\"", out.name));
  }
  const auto op_node = c.at("op");
  const auto op = network::parse_collective_op(op_node.as_string());
  if (!op || *op == network::CollectiveOp::kAllToAllV) {
    op_node.fail(fmt::format("expected one of {} (all_to_allv needs a send matrix: use all_to_all)",
                             network::collective_op_names()));
  }
  out.spec.op = *op;
  if (auto a = c.find("algorithm")) {
    out.spec.algorithm = as_enum<network::Algorithm>(*a);
  }
  out.spec.bytes = c.bytes("bytes");
  const auto ranks_node = c.at("ranks");
  if (ranks_node.is_array()) {
    for (const auto& r : ranks_node.elements()) {
      const auto g = r.as_integer();
      if (g < 0 || g >= cluster.gpu_count()) {
        r.fail(fmt::format("expected a GPU index in 0..{}", cluster.gpu_count() - 1));
      }
      out.spec.gpus.push_back(static_cast<int>(g));
    }
  } else {
    try {
      out.spec.gpus = network::parse_rank_set(ranks_node.as_string(), cluster);
    } catch (const ConfigError&) {
      throw;
    } catch (const Error& e) {
      ranks_node.fail(e.what());
    }
  }
  out.spec.root = c.int_or("root", 0, 0, 1 << 24);
  out.spec.peer = c.int_or("peer", 1, 0, 1 << 24);
  out.spec.priority = c.int_or("priority", 0, 0, 7);
  if (out.spec.priority < 0) c.at("priority").fail("expected a priority class >= 0");
  out.start = c.duration_or("start", Time::zero());
  if (auto after = c.find("after")) {
    for (const auto& a : after->elements()) {
      const auto name = a.as_string();
      auto it = std::find_if(earlier.begin(), earlier.end(),
                             [&](const auto& e) { return e.name == name; });
      if (it == earlier.end())
        a.fail(fmt::format("expected the name of a collective listed before \"{}\"", out.name));
      out.after.push_back(static_cast<int>(it - earlier.begin()));
    }
  }
  // Validate the rank set and algorithm now, so errors point at the file.
  try {
    network::build_schedule(out.spec, cluster, {});
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {
    c.fail(e.what());
  }
  return out;
}

}  // namespace

CollectiveScenario CollectiveScenario::load(const std::string& path) {
  return from_config(load_config(path));
}

CollectiveScenario CollectiveScenario::from_config(const ConfigNode& config) {
  config.allow_only({"name", "description", "cluster", "mode", "seed", "collectives"});
  return from_config(config, load_cluster_ref(config.at("cluster")));
}

CollectiveScenario CollectiveScenario::from_config(const ConfigNode& config,
                                                   topology::Cluster cluster) {
  config.allow_only({"name", "description", "cluster", "mode", "seed", "collectives"});
  CollectiveScenario s;
  s.file = config.file();
  s.name = config.string_or("name", std::filesystem::path(config.file()).stem().string());
  s.cluster = std::move(cluster);
  s.mode = parse_mode(config, "mode");
  const auto list = config.at("collectives");
  if (list.size() == 0) list.fail("expected at least one collective");
  for (const auto& c : list.elements())
    s.collectives.push_back(parse_collective(c, s.cluster, s.collectives));
  return s;
}

namespace {

// Per GPU: whether the timeline shows it (every GPU when no ranks are named).
std::vector<char> traced_gpus(const topology::Cluster& cluster, const RunOptions& options) {
  std::vector<char> traced(static_cast<std::size_t>(cluster.gpu_count()),
                           options.trace_ranks.empty());
  for (int r : options.trace_ranks) {
    if (r >= 0 && r < cluster.gpu_count()) traced[static_cast<std::size_t>(r)] = 1;
  }
  return traced;
}

// The traced GPUs' rows on the timeline, named by rank and node, under a collectives track.
void name_traced_ranks(TraceSink& timeline, const topology::Cluster& cluster,
                       const std::vector<char>& traced) {
  const auto comm_track = timeline.track("collectives");
  (void)comm_track;
  for (int g = 0; g < cluster.gpu_count(); ++g) {
    if (traced[static_cast<std::size_t>(g)]) {
      timeline.set_rank_name(
          g, fmt::format("rank {} ({})", g, cluster.nodes()[cluster.gpu(g).node].name));
    }
  }
}

// Each transfer a traced GPU sends or receives as a span on its row, with a flow arrow from
// sender to receiver when both are traced.
std::function<void(const network::TransferRecord&)> transfer_tracer(
    TraceSink* timeline, const std::vector<char>& traced) {
  return
      [timeline, &traced, next_flow = std::uint64_t{0}](const network::TransferRecord& t) mutable {
        const bool src = traced[static_cast<std::size_t>(t.src_gpu)];
        const bool dst = traced[static_cast<std::size_t>(t.dst_gpu)];
        if (!src && !dst) return;
        const std::string track = fmt::format("send/{}", topology::to_string(t.widest_class));
        const std::string name = fmt::format("send {} -> {}", t.src_gpu, t.dst_gpu);
        if (src) {
          timeline->add_span(t.src_gpu, track, name, "transfer", t.start, t.end,
                             {TraceArg("bytes", t.bytes)});
        }
        if (dst) {
          timeline->add_span(t.dst_gpu, fmt::format("recv/{}", topology::to_string(t.widest_class)),
                             fmt::format("recv {} <- {}", t.dst_gpu, t.src_gpu), "transfer",
                             t.start, t.end, {TraceArg("bytes", t.bytes)});
        }
        if (src && dst) {
          const auto from_track = timeline->track(track);
          const auto to_track =
              timeline->track(fmt::format("recv/{}", topology::to_string(t.widest_class)));
          timeline->add_flow(next_flow++, TraceFlowEnd{t.src_gpu, from_track, t.start},
                             TraceFlowEnd{t.dst_gpu, to_track, t.end});
        }
      };
}

// The scenario's collectives, each started once its start time has come and the
// collectives it comes after have finished; their outcomes recorded (and traced).
class CollectiveRun {
 public:
  CollectiveRun(const CollectiveScenario& scenario, engine::Simulator& sim, network::Network& net,
                TraceSink* timeline, const std::vector<char>& traced,
                std::vector<CollectiveOutcome>& outcomes)
      : scenario_(scenario),
        sim_(sim),
        net_(net),
        timeline_(timeline),
        traced_(traced),
        outcomes_(outcomes),
        waiting_(scenario.collectives.size(), 0),
        dependents_(scenario.collectives.size()) {
    const auto n = scenario.collectives.size();
    outcomes_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto& c = scenario.collectives[i];
      auto& out = outcomes_[i];
      out.name = c.name;
      out.ranks = static_cast<int>(c.spec.gpus.size());
      out.bytes = c.spec.bytes;
      out.algorithm = net.resolve_algorithm(c.spec);
      waiting_[i] = static_cast<int>(c.after.size()) + 1;  // +1: its start time
      for (int a : c.after) dependents_[static_cast<std::size_t>(a)].push_back(static_cast<int>(i));
    }
  }

  // Schedules every collective's start time and runs the simulation.
  void run() {
    for (std::size_t i = 0; i < scenario_.collectives.size(); ++i)
      sim_.at(scenario_.collectives[i].start, [this, i] { release(i); });
    sim_.run();
  }

 private:
  // One of collective i's conditions is met; it starts when none is left.
  void release(std::size_t i) {
    if (--waiting_[i] > 0) return;
    outcomes_[i].start = sim_.now();
    net_.start_collective(scenario_.collectives[i].spec, [this, i] { finish(i); });
  }
  void finish(std::size_t i) {
    auto& out = outcomes_[i];
    out.end = sim_.now();
    if (timeline_) trace(i);
    for (int d : dependents_[i]) release(static_cast<std::size_t>(d));
  }
  void trace(std::size_t i) {
    const auto& out = outcomes_[i];
    const auto track = timeline_->track("collectives");
    const auto name = timeline_->name(out.name);
    const auto category = timeline_->name(network::to_string(scenario_.collectives[i].spec.op));
    for (int g : scenario_.collectives[i].spec.gpus) {
      if (traced_[static_cast<std::size_t>(g)]) {
        timeline_->add_span(g, track, name, category, out.start, out.end,
                            {TraceArg("bytes", out.bytes),
                             TraceArg("algorithm", network::to_string(out.algorithm))});
      }
    }
  }

  const CollectiveScenario& scenario_;
  engine::Simulator& sim_;
  network::Network& net_;
  TraceSink* timeline_;
  const std::vector<char>& traced_;
  std::vector<CollectiveOutcome>& outcomes_;
  std::vector<int> waiting_;  // per collective: conditions not yet met
  std::vector<std::vector<int>> dependents_;
};

}  // namespace

ScenarioResult run_collective_scenario(const CollectiveScenario& scenario,
                                       const RunOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  ScenarioResult result;
  engine::Simulator sim;
  network::NetworkOptions net_options;
  net_options.mode = options.mode.value_or(scenario.mode);
  TraceSink* timeline = options.timeline;
  const std::vector<char> traced = traced_gpus(scenario.cluster, options);
  if (timeline) {
    name_traced_ranks(*timeline, scenario.cluster, traced);
    net_options.on_transfer = transfer_tracer(timeline, traced);
  }
  auto net = network::make_network(sim, scenario.cluster, net_options);
  CollectiveRun collectives(scenario, sim, *net, timeline, traced, result.collectives);
  collectives.run();
  for (const auto& c : result.collectives) result.makespan = std::max(result.makespan, c.end);
  result.traffic = net->traffic();
  result.events = sim.events();
  result.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace strait::sim::run
