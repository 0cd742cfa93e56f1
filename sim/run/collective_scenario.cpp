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

ScenarioResult run_collective_scenario(const CollectiveScenario& scenario,
                                       const RunOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  ScenarioResult result;
  engine::Simulator sim;
  network::NetworkOptions net_options;
  net_options.mode = options.mode.value_or(scenario.mode);
  TraceSink* timeline = options.timeline;
  std::vector<char> traced(static_cast<std::size_t>(scenario.cluster.gpu_count()),
                           options.trace_ranks.empty());
  for (int r : options.trace_ranks) {
    if (r >= 0 && r < scenario.cluster.gpu_count()) traced[static_cast<std::size_t>(r)] = 1;
  }
  if (timeline) {
    const auto comm_track = timeline->track("collectives");
    (void)comm_track;
    for (int g = 0; g < scenario.cluster.gpu_count(); ++g) {
      if (traced[static_cast<std::size_t>(g)]) {
        timeline->set_rank_name(
            g, fmt::format("rank {} ({})", g,
                           scenario.cluster.nodes()[scenario.cluster.gpu(g).node].name));
      }
    }
    std::uint64_t next_flow = 0;
    net_options.on_transfer = [timeline, &traced, &next_flow](const network::TransferRecord& t) {
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
                           fmt::format("recv {} <- {}", t.dst_gpu, t.src_gpu), "transfer", t.start,
                           t.end, {TraceArg("bytes", t.bytes)});
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
  auto net = network::make_network(sim, scenario.cluster, net_options);

  const auto n = scenario.collectives.size();
  result.collectives.resize(n);
  std::vector<int> waiting(n, 0);
  std::vector<std::vector<int>> dependents(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& c = scenario.collectives[i];
    auto& out = result.collectives[i];
    out.name = c.name;
    out.ranks = static_cast<int>(c.spec.gpus.size());
    out.bytes = c.spec.bytes;
    out.algorithm = net->resolve_algorithm(c.spec);
    waiting[i] = static_cast<int>(c.after.size()) + 1;  // +1: its start time
    for (int a : c.after) dependents[static_cast<std::size_t>(a)].push_back(static_cast<int>(i));
  }
  std::function<void(std::size_t)> release = [&](std::size_t i) {
    if (--waiting[i] > 0) return;
    const auto& c = scenario.collectives[i];
    result.collectives[i].start = sim.now();
    net->start_collective(c.spec, [&, i] {
      auto& out = result.collectives[i];
      out.end = sim.now();
      if (timeline) {
        const auto track = timeline->track("collectives");
        const auto name = timeline->name(out.name);
        const auto category = timeline->name(network::to_string(scenario.collectives[i].spec.op));
        for (int g : scenario.collectives[i].spec.gpus) {
          if (traced[static_cast<std::size_t>(g)]) {
            timeline->add_span(g, track, name, category, out.start, out.end,
                               {TraceArg("bytes", out.bytes),
                                TraceArg("algorithm", network::to_string(out.algorithm))});
          }
        }
      }
      for (int d : dependents[i]) release(static_cast<std::size_t>(d));
    });
  };
  for (std::size_t i = 0; i < n; ++i) sim.at(scenario.collectives[i].start, [&, i] { release(i); });
  sim.run();

  for (const auto& c : result.collectives) result.makespan = std::max(result.makespan, c.end);
  result.traffic = net->traffic();
  result.events = sim.events();
  result.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace strait::sim::run
