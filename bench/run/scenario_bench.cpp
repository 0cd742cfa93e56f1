// Wall time and peak memory of whole training simulations (strait simulate without the
// printing): op graph build + replay, each scenario in its own child process (wait4).
//
// usage: scenario_bench [SCENARIO...]   (default: the bundled HSTU scenarios at 1,024
//        GPUs in flow mode and 16,384 GPUs in analytical mode, from the repository root)

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/run/training_run.hpp"

namespace {

struct Outcome {
  double load_s = 0, build_s = 0, sim_s = 0, step_ms = 0;
  double events = 0, ops = 0;
  int gpus = 0, steps = 0;
  int mode = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> scenarios(argv + 1, argv + argc);
  if (scenarios.empty()) {
    scenarios = {"configs/scenarios/hstu-1024.json", "configs/scenarios/hstu-3dc.json",
                 "configs/scenarios/hstu-16k-4dc.json"};
  }
  fmt::print("# strait scenario benchmark: one core, each scenario in its own process\n");
  fmt::print("# {:<38} {:>6} {:<10} {:>5} {:>9} {:>8} {:>8} {:>8} {:>10} {:>10} {:>9} {:>9}\n",
             "scenario", "gpus", "mode", "steps", "step ms", "load s", "build s", "sim s", "ops",
             "events", "s/step", "peak MiB");
  for (const auto& path : scenarios) {
    int fds[2];
    if (pipe(fds) != 0) return 1;
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      Outcome o;
      try {
        const auto t0 = std::chrono::steady_clock::now();
        const auto sc = strait::sim::workload::TrainingScenario::load(path);
        const auto cost = strait::sim::run::load_cost_model(sc, "configs/profiles");
        o.load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const auto r = strait::sim::run::run_training(sc, cost, {});
        o.build_s = r.build_wall_s;
        o.sim_s = r.sim_wall_s;
        o.step_ms = r.stats.mean_ms;
        o.events = static_cast<double>(r.events);
        o.ops = static_cast<double>(r.ops);
        o.gpus = r.gpus;
        o.steps = r.steps;
        o.mode = r.mode == strait::sim::network::NetworkMode::kFlow ? 0 : 1;
      } catch (const std::exception& e) {
        fmt::print(stderr, "{}: {}\n", path, e.what());
        _exit(1);
      }
      if (write(fds[1], &o, sizeof o) != sizeof o) _exit(1);
      _exit(0);
    }
    close(fds[1]);
    Outcome o;
    const bool ok = read(fds[0], &o, sizeof o) == sizeof o;
    close(fds[0]);
    int status = 0;
    struct rusage usage {};
    wait4(pid, &status, 0, &usage);
    if (!ok) continue;
    const double total = o.build_s + o.sim_s;
    fmt::print(
        "  {:<38} {:>6} {:<10} {:>5} {:>9.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>10.0f} {:>10.0f} "
        "{:>9.3f} {:>9.1f}\n",
        path, o.gpus, o.mode == 0 ? "flow" : "analytical", o.steps, o.step_ms, o.load_s, o.build_s,
        o.sim_s, o.ops, o.events, total / std::max(1, o.steps),
        static_cast<double>(usage.ru_maxrss) / 1024.0);
  }
  return 0;
}
