// Speed and accuracy of flow-mode collectives on the bundled 1,024-GPU cluster
// (configs/clusters/h100-1024-rail.json): a 64 MiB ring all-reduce and a direct
// all-to-all of 64 MiB per rank over the first 64, 256 and 1,024 GPUs.
//
// For each run: simulated time, its closed-form bound, wall time, events, engine events
// per second and peak memory (each run in its own child process, measured with wait4).
// Bounds: ring all-reduce with C channels, one per NIC rail, each channel's host
// crossing on its own NIC of bandwidth B: T = 2(n-1)/n * S / (C B) (+ 2(n-1) step
// latencies); direct all-to-all: every rank sends (n-g)/n of S through its NIC:
// T = (n-g)/n * S / B (+ one path latency). "zero-latency" rows run the same cluster with
// every latency set to 0 and no NCCL protocol costs ("nccl": "none"), so the time must
// equal the bandwidth bound alone.
//
// usage: collective_bench [CLUSTER_FILE [GPUS...]]
//   default: configs/clusters/h100-1024-rail.json over 64, 256 and 1,024 GPUs; the scale
//   rows of bench/README.md: configs/clusters/h100-16k-rail.json 1024 4096 8192 16384. A GPU
//   count suffixed "r" (e.g. 16384r) runs the ring all-reduce only.

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/core/config_node.hpp"
#include "sim/network/network.hpp"
#include "sim/network/rank_set.hpp"
#include "sim/topology/cluster.hpp"

namespace {

using namespace strait;
using namespace strait::sim;

void zero_latencies(Json& j) {
  if (j.is_object()) {
    for (auto& [key, value] : j.items()) {
      if ((key == "latency" || key == "link_latency") && value.is_string()) {
        value = "0 us";
      } else {
        zero_latencies(value);
      }
    }
  } else if (j.is_array()) {
    for (auto& v : j) zero_latencies(v);
  }
}

struct Outcome {
  double sim_us = 0, wall_s = 0, cpu_s = 0, events = 0;
};

// CPU time of this process so far (the machine may be shared: wall time alone misleads).
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Runs one collective in a child process; returns its outcome and peak RSS in MiB.
Outcome run_child(const topology::Cluster& cluster, network::CollectiveOp op,
                  network::Algorithm algo, int n, Bytes bytes, double& peak_mib) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    network::CollectiveSpec spec;
    spec.op = op;
    spec.algorithm = algo;
    spec.bytes = bytes;
    spec.gpus = network::parse_rank_set(fmt::format("first:{}", n), cluster);
    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = cpu_seconds();
    const auto r = network::simulate_collective(cluster, spec, {});
    Outcome o{r.time.to_us(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
              cpu_seconds() - cpu0, static_cast<double>(r.events)};
    if (write(fds[1], &o, sizeof o) != sizeof o) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  Outcome o;
  if (read(fds[0], &o, sizeof o) != sizeof o) o = {};
  close(fds[0]);
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  peak_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "configs/clusters/h100-1024-rail.json";
  auto config = load_config(path);
  Json zero = config.json();
  zero_latencies(zero);
  zero["nccl"] = "none";  // no protocol step, proxy or per-peer latencies either
  const auto cluster = topology::Cluster::from_config(config);
  const auto flat = topology::Cluster::from_config(ConfigNode(zero, path + " (zero latency)"));
  const Bytes s = 64 * kMiB;
  const double nic = 50e9;  // 400 Gb/s per GPU
  const int g = 8, channels = 8;

  fmt::print("# strait collective benchmark: {} ({} GPUs), flow mode, one core\n", cluster.name(),
             cluster.gpu_count());
  fmt::print("# {:<12} {:>5} {:<13} {:>12} {:>12} {:>8} {:>8} {:>8} {:>10} {:>10} {:>9}\n",
             "collective", "gpus", "latency", "sim (us)", "bound (us)", "error", "wall (s)",
             "cpu (s)", "events", "Mevents/s", "peak MiB");
  std::vector<std::pair<int, bool>> sizes;  // (GPUs, ring only)
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    sizes.emplace_back(std::stoi(arg), !arg.empty() && arg.back() == 'r');
  }
  if (sizes.empty()) sizes = {{64, false}, {256, false}, {1024, false}};
  for (const auto& [n, ring_only] : sizes) {
    if (n > cluster.gpu_count()) continue;
    for (int zero_latency = 1; zero_latency >= 0; --zero_latency) {
      const auto& c = zero_latency ? flat : cluster;
      struct Case {
        const char* name;
        network::CollectiveOp op;
        network::Algorithm algo;
        double bandwidth_bound_s;
      } cases[] = {
          {"ring_allred", network::CollectiveOp::kAllReduce, network::Algorithm::kRing,
           2.0 * (n - 1) / n * static_cast<double>(s) / (channels * nic)},
          {"direct_a2a", network::CollectiveOp::kAllToAll, network::Algorithm::kDirect,
           static_cast<double>(n - g) / n * static_cast<double>(s) / nic},
      };
      for (const auto& k : cases) {
        if (ring_only && k.op != network::CollectiveOp::kAllReduce) continue;
        double peak = 0;
        const auto o = run_child(c, k.op, k.algo, n, s, peak);
        // With latencies, the closed form adds what analytical mode computes on top of the
        // bandwidth term: the same schedule's per-phase path latencies.
        double bound_us = k.bandwidth_bound_s * 1e6;
        if (!zero_latency) {
          network::CollectiveSpec spec;
          spec.op = k.op;
          spec.algorithm = k.algo;
          spec.bytes = s;
          spec.gpus = network::parse_rank_set(fmt::format("first:{}", n), c);
          network::NetworkOptions analytical;
          analytical.mode = network::NetworkMode::kAnalytical;
          bound_us = network::simulate_collective(c, spec, analytical).time.to_us();
        }
        fmt::print(
            "  {:<12} {:>5} {:<13} {:>12.2f} {:>12.2f} {:>7.2f}% {:>8.3f} {:>8.3f} {:>10.0f} "
            "{:>10.2f} {:>9.1f}\n",
            k.name, n, zero_latency ? "zero" : "cluster file", o.sim_us, bound_us,
            (o.sim_us / bound_us - 1) * 100, o.wall_s, o.cpu_s, o.events,
            o.wall_s > 0 ? o.events / o.wall_s / 1e6 : 0.0, peak);
      }
    }
  }
  return 0;
}
