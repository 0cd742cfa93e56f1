// engine_bench: throughput of strait's event engine (Simulator + FluidModel) on three
// shapes, at small, medium and large sizes. Counts are machine-independent; wall time
// and rates are not.
//   ring:   N ranks, each step one flow per rank over 3 private resources; rank i starts
//           step s+1 when the flow into it (from rank i-1) of step s ends, as in a ring
//           all-reduce. Every step ends in one instant, all components are tiny.
//   shared: K activities in flight on one resource, random sizes; each completion starts
//           a new one. Every completion re-solves a component of K.
//   paths:  A activities in flight over random paths of 2-8 resources out of R; each
//           completion starts a new one. Components are as large as the paths make them.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "sim/core/rng.hpp"
#include "sim/engine/simulator.hpp"

namespace {

using strait::Rng;
using strait::Time;
using strait::sim::engine::ActivitySpec;
using strait::sim::engine::ResourceId;
using strait::sim::engine::ResourceUse;
using strait::sim::engine::Simulator;

struct Result {
  std::uint64_t activities = 0;
  std::uint64_t events = 0;
  Time end;
  double wall_s = 0;
};

template <class Body>
Result timed(Body body) {
  const auto t0 = std::chrono::steady_clock::now();
  Result r = body();
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

struct Ring {
  Simulator sim;
  int ranks = 0;
  int steps = 0;
  std::vector<ResourceUse> uses;  // 3 per rank
  std::uint64_t started = 0;

  void start(int rank, int step) {
    ++started;
    ActivitySpec spec{.work = 1 << 20, .on_done = [this, rank, step] {
                        if (step + 1 < steps) start((rank + 1) % ranks, step + 1);
                      }};
    sim.fluid().start(std::move(spec), {&uses[static_cast<std::size_t>(3 * rank)], 3});
  }
};

Result ring(int ranks) {
  return timed([&] {
    Ring r;
    r.ranks = ranks;
    r.steps = 2 * (ranks - 1);
    for (int i = 0; i < 3 * ranks; ++i) r.uses.push_back({r.sim.fluid().add_resource(50e9)});
    for (int i = 0; i < ranks; ++i) r.start(i, 0);
    r.sim.run();
    return Result{r.started, r.sim.events(), r.sim.now(), 0};
  });
}

struct Churn {
  Simulator sim;
  Rng rng{42};
  std::vector<ResourceId> pool;
  int min_path = 1, max_path = 1;
  std::uint64_t started = 0, total = 0;
  std::vector<ResourceUse> path;

  void start() {
    if (started == total) return;
    ++started;
    path.clear();
    const auto length = static_cast<std::uint64_t>(min_path) +
                        rng.uniform_int(static_cast<std::uint64_t>(max_path - min_path + 1));
    for (std::uint64_t k = 0; k < length; ++k) path.push_back({pool[rng.uniform_int(pool.size())]});
    sim.fluid().start({.work = 1e6 * (0.5 + rng.uniform()), .on_done = [this] { start(); }}, path);
  }
};

Result churn(int resources, int in_flight, int min_path, int max_path, std::uint64_t total) {
  return timed([&] {
    Churn c;
    c.min_path = min_path;
    c.max_path = max_path;
    c.total = total;
    for (int i = 0; i < resources; ++i) c.pool.push_back(c.sim.fluid().add_resource(50e9));
    for (int i = 0; i < in_flight; ++i) c.start();
    c.sim.run();
    return Result{c.started, c.sim.events(), c.sim.now(), 0};
  });
}

bool wanted(int argc, char** argv, const char* shape) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], shape) == 0) return true;
  }
  return argc == 1;
}

void print(const char* shape, const char* size, const char* params, const Result& r) {
  std::printf("%-7s %-7s %-28s %10llu %10llu %14.3f %10.1f %12.3g %10.1f\n", shape, size, params,
              static_cast<unsigned long long>(r.activities),
              static_cast<unsigned long long>(r.events), r.end.to_us(), r.wall_s * 1e3,
              static_cast<double>(r.events) / r.wall_s,
              r.wall_s * 1e9 / static_cast<double>(r.activities));
}

}  // namespace

// Usage: engine_bench [ring] [shared] [paths]   (default: all three shapes)
int main(int argc, char** argv) {
  std::printf("%-7s %-7s %-28s %10s %10s %14s %10s %12s %10s\n", "shape", "size", "parameters",
              "activities", "events", "sim_end_us", "wall_ms", "events/s", "ns/activity");
  if (wanted(argc, argv, "ring")) {
    print("ring", "small", "N=64 steps=126 uses=3", ring(64));
    print("ring", "medium", "N=256 steps=510 uses=3", ring(256));
    print("ring", "large", "N=1024 steps=2046 uses=3", ring(1024));
  }
  if (wanted(argc, argv, "shared")) {
    print("shared", "small", "K=16 total=200000", churn(1, 16, 1, 1, 200000));
    print("shared", "medium", "K=256 total=100000", churn(1, 256, 1, 1, 100000));
    print("shared", "large", "K=4096 total=20000", churn(1, 4096, 1, 1, 20000));
  }
  if (wanted(argc, argv, "paths")) {
    print("paths", "small", "R=64 A=16 len=2-8 tot=100k", churn(64, 16, 2, 8, 100000));
    print("paths", "medium", "R=1024 A=256 len=2-8 tot=20k", churn(1024, 256, 2, 8, 20000));
    print("paths", "large", "R=16384 A=4096 len=2-8 tot=5k", churn(16384, 4096, 2, 8, 5000));
  }
  return 0;
}
