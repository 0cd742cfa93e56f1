// strait collective: the simulated counterpart of nccl-tests. One collective over a
// size sweep (-b, -e, -f or -i as in nccl-tests), printed as nccl-tests' table.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"
#include "sim/core/quantity.hpp"
#include "sim/network/network.hpp"
#include "sim/network/rank_set.hpp"
#include "sim/topology/cluster.hpp"

namespace strait::cli {
namespace {

using sim::network::Algorithm;
using sim::network::CollectiveOp;

struct DataType {
  const char* name;
  int bytes;
};
constexpr DataType kTypes[] = {{"int8", 1},   {"uint8", 1},   {"int32", 4}, {"uint32", 4},
                               {"int64", 8},  {"uint64", 8},  {"half", 2},  {"float", 4},
                               {"double", 8}, {"bfloat16", 2}};

Bytes size_option(const po::variables_map& vm, const char* key) {
  const auto text = vm[key].as<std::string>();
  const auto v = parse_size_suffix(text);
  if (!v || *v < 0)
    throw UsageError(
        fmt::format("collective: --{}: expected a size like 8, 1K or 128M, got '{}'", key, text));
  return *v;
}

po::options_description collective_options() {
  po::options_description desc("options (sizes as in nccl-tests: 8, 1K, 128M, 1G)");
  desc.add_options()("cluster", po::value<std::string>()->required(),
                     "cluster file (configs/clusters/*.json)")(
      "op", po::value<std::string>()->default_value("all_reduce"),
      ("collective: " + sim::network::collective_op_names()).c_str())(
      "algo", po::value<std::string>()->default_value("auto"),
      ("algorithm: " + enum_name_list<sim::network::Algorithm>()).c_str())(
      "protocol", po::value<std::string>()->default_value("auto"),
      ("NCCL protocol: " + enum_name_list<sim::network::Protocol>()).c_str())(
      "mode", po::value<std::string>()->default_value(name_of(sim::network::NetworkMode::kFlow)),
      enum_name_list<sim::network::NetworkMode>("", " | ").c_str())(
      "ranks", po::value<std::string>()->default_value("all"),
      "GPUs taking part: all, 0-7,16, dc0, host:3, first:64, local:0")(
      "minbytes,b", po::value<std::string>()->default_value("32M"), "smallest size")(
      "maxbytes,e", po::value<std::string>()->default_value("32M"), "largest size")(
      "stepfactor,f", po::value<double>()->default_value(2.0),
      "multiply the size by this each step")("stepbytes,i", po::value<std::string>(),
                                             "add this many bytes each step instead of -f")(
      "datatype,d", po::value<std::string>()->default_value("float"),
      "element type (for the count column)")("root,r", po::value<int>()->default_value(0),
                                             "root rank of broadcast/reduce, sender of sendrecv")(
      "peer", po::value<int>()->default_value(1), "receiver rank of sendrecv")(
      "channels", po::value<int>()->default_value(0), "rings in parallel (0 = one per NIC rail)")(
      "chunk-bytes", po::value<std::string>()->default_value("512K"),
      "pipelining chunk of tree/chain")("ecmp", po::value<std::string>()->default_value("dmodk"),
                                        "equal-cost path choice: dmodk | hash")(
      "json", po::value<std::string>(),
      "also write the results as JSON to this file (-: stdout, the table to stderr)");
  return desc;
}

// --op, --algo, --protocol, --ranks, --root and --peer (the size is the sweep's).
sim::network::CollectiveSpec collective_spec(const po::variables_map& vm,
                                             const sim::topology::Cluster& cluster) {
  sim::network::CollectiveSpec spec;
  const auto op = sim::network::parse_collective_op(vm["op"].as<std::string>());
  if (!op || *op == CollectiveOp::kAllToAllV) {
    // all_to_allv needs a send matrix, which a size sweep cannot give.
    std::string names = sim::network::collective_op_names();
    names.erase(names.find(", all_to_allv"), std::string(", all_to_allv").size());
    throw UsageError(fmt::format("collective: --op: expected one of {}, got '{}'", names,
                                 vm["op"].as<std::string>()));
  }
  spec.op = *op;
  spec.algorithm =
      enum_option<sim::network::Algorithm>("collective", "algo", vm["algo"].as<std::string>());
  spec.protocol = enum_option<sim::network::Protocol>("collective", "protocol",
                                                      vm["protocol"].as<std::string>());
  spec.gpus = sim::network::parse_rank_set(vm["ranks"].as<std::string>(), cluster);
  spec.root = vm["root"].as<int>();
  spec.peer = vm["peer"].as<int>();
  return spec;
}

// --mode, --channels, --chunk-bytes and --ecmp (their ranges are checked after the sizes).
sim::network::NetworkOptions network_options(const po::variables_map& vm) {
  sim::network::NetworkOptions options;
  options.mode =
      enum_option<sim::network::NetworkMode>("collective", "mode", vm["mode"].as<std::string>());
  options.schedule.channels = vm["channels"].as<int>();
  options.schedule.chunk_bytes = size_option(vm, "chunk-bytes");
  const auto ecmp = vm["ecmp"].as<std::string>();
  if (ecmp != "dmodk" && ecmp != "hash") {
    throw UsageError(fmt::format("collective: --ecmp: expected dmodk or hash, got '{}'", ecmp));
  }
  options.ecmp = ecmp == "dmodk" ? sim::topology::EcmpPolicy::kDestinationModK
                                 : sim::topology::EcmpPolicy::kHash;
  return options;
}

// The sizes of the sweep: -b to -e, times -f or plus -i.
struct SizeSweep {
  Bytes min_bytes = 0, max_bytes = 0, step = 0;
  double factor = 2;

  Bytes next(Bytes size) const {
    Bytes n = step > 0 ? size + step : static_cast<Bytes>(static_cast<double>(size) * factor);
    // A factor too small to grow a small size (8 * 1.0000001 truncates to 8) still moves on.
    return n <= size ? size + 1 : n;
  }
};

SizeSweep size_sweep(const po::variables_map& vm) {
  SizeSweep s;
  s.min_bytes = size_option(vm, "minbytes");
  s.max_bytes = size_option(vm, "maxbytes");
  if (s.max_bytes < s.min_bytes) throw UsageError("collective: --maxbytes must be >= --minbytes");
  s.factor = vm["stepfactor"].as<double>();
  s.step = vm.count("stepbytes") ? size_option(vm, "stepbytes") : 0;
  if (s.step == 0 && !(s.factor > 1.0 && std::isfinite(s.factor))) {
    throw UsageError(
        fmt::format("collective: --stepfactor: expected a finite number > 1, got {}", s.factor));
  }
  if (vm.count("stepbytes") && s.step <= 0)
    throw UsageError("collective: --stepbytes: expected a positive size");
  // The sizes to run, counted before any is: -f 1.0000001 or -i 1 over 1 B .. 1 GiB made
  // 10^7 .. 10^9 of them.
  constexpr double kMaxSizes = 10000;
  const double hi = static_cast<double>(s.max_bytes), lo = static_cast<double>(s.min_bytes);
  // A geometric step grows a size by at least one byte, so both counts bound it.
  const double linear = hi - lo + 1;
  const double sizes =
      s.step > 0 ? (hi - lo) / static_cast<double>(s.step) + 1
                 : std::min(linear, (s.min_bytes == 0 ? 1 : 0) +
                                        std::log(hi / std::max(lo, 1.0)) / std::log(s.factor) + 1);
  if (sizes > kMaxSizes) {
    throw UsageError(fmt::format(
        "collective: {} to {} by {} is {:.0f} sizes; at most {:.0f} (raise --{})", format_bytes(lo),
        format_bytes(hi),
        s.step > 0 ? format_bytes(static_cast<double>(s.step)) : fmt::format("x{}", s.factor),
        sizes, kMaxSizes, s.step > 0 ? "stepbytes" : "stepfactor"));
  }
  return s;
}

int datatype_bytes(const std::string& name) {
  for (const auto& t : kTypes) {
    if (name == t.name) return t.bytes;
  }
  throw UsageError(fmt::format("collective: --datatype: unknown type '{}'", name));
}

void print_header(const sim::network::CollectiveSpec& spec,
                  const sim::network::NetworkOptions& options,
                  const sim::topology::Cluster& cluster, Bytes first_size) {
  auto first_spec = spec;
  first_spec.bytes = first_size;
  sim::engine::Simulator probe;
  const auto first_algo =
      sim::network::make_network(probe, cluster, options)->resolve_algorithm(first_spec);
  std::cout << fmt::format("# strait collective: {} on {} GPUs of cluster '{}', {} mode\n",
                           sim::network::to_string(spec.op), spec.gpus.size(), cluster.name(),
                           sim::network::to_string(options.mode));
  std::cout << fmt::format("# algorithm {} (auto picks {} at the smallest size)\n",
                           sim::network::to_string(spec.algorithm),
                           sim::network::to_string(first_algo));
  std::cout << fmt::format(
      "#\n# {:>10} {:>12} {:>8} {:>6} {:>6} {:>12} {:>8} {:>8}  {:<12} {:>10} {:>8}\n", "size",
      "count", "type", "redop", "root", "time", "algbw", "busbw", "algorithm", "events", "wall");
  std::cout << fmt::format(
      "# {:>10} {:>12} {:>8} {:>6} {:>6} {:>12} {:>8} {:>8}  {:<12} {:>10} {:>8}\n", "(B)",
      "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "", "(s)");
}

// The table's rows, one per size, and their JSON objects.
struct SweepResults {
  nlohmann::json rows = nlohmann::json::array();
  double busbw_sum = 0, wall_s = 0;
  std::uint64_t events = 0;
};

SweepResults run_sizes(sim::network::CollectiveSpec spec,
                       const sim::network::NetworkOptions& options,
                       const sim::topology::Cluster& cluster, const SizeSweep& sweep,
                       const std::string& type_name, int type_bytes) {
  SweepResults out;
  const int n = static_cast<int>(spec.gpus.size());
  const bool rooted = spec.op == CollectiveOp::kBroadcast || spec.op == CollectiveOp::kReduce;
  const bool reduces = spec.op == CollectiveOp::kAllReduce ||
                       spec.op == CollectiveOp::kReduceScatter || spec.op == CollectiveOp::kReduce;
  for (Bytes size = sweep.min_bytes; size <= sweep.max_bytes; size = sweep.next(size)) {
    spec.bytes = size;
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = sim::network::simulate_collective(cluster, spec, options);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double seconds = r.time.to_s();
    const double algbw = seconds > 0 ? static_cast<double>(size) / seconds / 1e9 : 0.0;
    const double busbw = algbw * sim::network::busbw_factor(spec.op, n);
    std::cout << fmt::format(
        "  {:>10} {:>12} {:>8} {:>6} {:>6} {:>12.2f} {:>8.2f} {:>8.2f}  {:<12} {:>10} {:>8.3f}\n",
        size, size / type_bytes, type_name, reduces ? "sum" : "none", rooted ? spec.root : -1,
        r.time.to_us(), algbw, busbw,
        fmt::format("{}/{}", sim::network::to_string(r.algorithm),
                    sim::network::to_string(r.protocol)),
        r.events, wall);
    out.rows.push_back({{"size_bytes", size},
                        {"count", size / type_bytes},
                        {"time_us", r.time.to_us()},
                        {"algbw_GBps", algbw},
                        {"busbw_GBps", busbw},
                        {"algorithm", sim::network::to_string(r.algorithm)},
                        {"protocol", sim::network::to_string(r.protocol)},
                        {"channels", r.channels},
                        {"chunks", r.chunks},
                        {"nccl_channels", r.nccl_channels},
                        {"events", r.events},
                        {"wall_s", wall}});
    out.busbw_sum += busbw;
    out.wall_s += wall;
    out.events += r.events;
    if (size == sweep.max_bytes) break;
  }
  return out;
}

}  // namespace

int run_collective(const std::vector<std::string>& args) {
  const po::options_description desc = collective_options();
  po::positional_options_description positional;
  po::variables_map vm;
  if (!parse_options("collective", "--cluster FILE [options]", args, desc, positional, vm))
    return 0;
  prepare_outputs("collective", vm, {{"json"}});

  const auto cluster = sim::topology::Cluster::load(vm["cluster"].as<std::string>());
  const auto spec = collective_spec(vm, cluster);
  const auto options = network_options(vm);
  const auto type_name = vm["datatype"].as<std::string>();
  const int type_bytes = datatype_bytes(type_name);
  const SizeSweep sweep = size_sweep(vm);
  if (options.schedule.chunk_bytes <= 0)
    throw UsageError("collective: --chunk-bytes: expected a positive size");
  if (vm["channels"].as<int>() < 0) {
    throw UsageError(
        fmt::format("collective: --channels: expected 0 (one per NIC rail) or more, got {}",
                    vm["channels"].as<int>()));
  }

  print_header(spec, options, cluster, sweep.min_bytes);
  const SweepResults results = run_sizes(spec, options, cluster, sweep, type_name, type_bytes);
  const auto rows = results.rows.size();
  std::cout << fmt::format("# Avg bus bandwidth    : {:.3f} GB/s\n",
                           rows ? results.busbw_sum / static_cast<double>(rows) : 0.0);
  std::cout << fmt::format("# Simulated {} events in {:.3f} s of wall time\n", results.events,
                           results.wall_s);

  if (vm.count("json")) {
    nlohmann::json out = {{"cluster", cluster.name()},
                          {"op", sim::network::to_string(spec.op)},
                          {"algorithm", sim::network::to_string(spec.algorithm)},
                          {"mode", sim::network::to_string(options.mode)},
                          {"ranks", static_cast<int>(spec.gpus.size())},
                          {"datatype", type_name},
                          {"results", results.rows},
                          {"events", results.events},
                          {"wall_s", results.wall_s}};
    const auto path = vm["json"].as<std::string>();
    write_json(path, out.dump(2) + "\n");
    // A comment line, as nccl-tests' own: its table stays readable by tools that parse it.
    if (const auto line = wrote(path, "results as JSON"); !line.empty()) std::cout << "# " << line;
  }
  return 0;
}

}  // namespace strait::cli
