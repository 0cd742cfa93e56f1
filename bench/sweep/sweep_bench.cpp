// sweep_bench [POINTS]: the sweep benchmark of bench/README.md. Runs bench/sweep/hstu-3dc-lhs.json
// (768 GPUs in three datacenters, analytical mode, a Latin hypercube over long-haul bandwidth
// and latency) with POINTS samples (default 100; the README's figure is 1,000), first on one
// thread, then on two, and prints points/s and the speed-up. Run from the repository root.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "sweep/sweep.hpp"

namespace {

constexpr const char* kSweep = "bench/sweep/hstu-3dc-lhs.json";

strait::sweep::SweepSummary run(const strait::sweep::SweepSpec& spec, int threads) {
  const auto dir = std::filesystem::temp_directory_path();
  strait::sweep::SweepOptions options;
  options.csv_path = (dir / fmt::format("sweep_bench_{}.csv", threads)).string();
  options.jsonl_path = (dir / fmt::format("sweep_bench_{}.jsonl", threads)).string();
  options.threads = threads;
  options.default_profiles_dir = "configs/profiles";
  auto summary = strait::sweep::run_sweep(spec, options);
  std::filesystem::remove(options.csv_path);
  std::filesystem::remove(options.jsonl_path);
  return summary;
}

}  // namespace

int main(int argc, char** argv) {
  const long points = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 100;
  if (points < 1) {
    std::fprintf(stderr, "usage: sweep_bench [POINTS >= 1]\n");
    return 2;
  }
  try {
    auto config = strait::load_config(kSweep).json();
    config["axes"][0]["latin_hypercube"]["count"] = points;
    const auto spec = strait::sweep::SweepSpec::from_config(strait::ConfigNode(config, kSweep));
    std::printf("| sweep | points | threads | wall | points/s | speed-up | failed |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    double serial_rate = 0;
    for (int threads : {1, 2}) {
      const auto s = run(spec, threads);
      const double rate = static_cast<double>(s.progress.ran) / s.progress.elapsed_s;
      if (threads == 1) serial_rate = rate;
      std::printf("| %s | %zu | %d | %.1f s | %.2f | %.2fx | %zu |\n", spec.name().c_str(),
                  s.progress.total, threads, s.progress.elapsed_s, rate, rate / serial_rate,
                  s.progress.failed);
      std::fflush(stdout);
    }
  } catch (const strait::Error& e) {
    std::fprintf(stderr, "sweep_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
