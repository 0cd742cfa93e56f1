// planner_bench: `strait plan` on one core for every bundled training scenario and for
// 256 GPUs x 100 tables, with the default deterministic effort (48 final-mode
// evaluations) under a wall-clock bound, printing the wall time, the search effort, what
// stopped it and how the found plan compares (steady step, final-stage mode) with the
// scenario's hand-written plan and the TorchRec-style baseline, and how well the closed
// form ranked the candidates it shares with an analytical simulation (Spearman's rho over
// that many pairs).
// Usage: planner_bench [--evaluations N] [NAME ...] (default: all, the planner's default
// effort).

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "planner/plan_report.hpp"
#include "planner/planner.hpp"
#include "sim/run/training_run.hpp"

namespace {

using namespace strait;

struct Case {
  std::string name;
  std::string scenario;              // a bundled scenario, or
  std::string cluster, model, data;  // parts
  double budget_s;
};

/// The command line: `--evaluations N` (0: the planner's default) and the cases wanted.
struct BenchArgs {
  int evaluations = 0;
  std::vector<std::string> names;  // empty: all
};

BenchArgs parse_args(int argc, char** argv) {
  BenchArgs a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--evaluations" && i + 1 < argc)
      a.evaluations = std::stoi(argv[++i]);
    else
      a.names.push_back(arg);
  }
  return a;
}

/// Spearman's rho to two decimals, "-" without a figure.
std::string rank_correlation(const strait::planner::SearchStats& s) {
  if (!s.closed_form_rank_correlation) return "-";
  char text[16];
  std::snprintf(text, sizeof text, "%.2f", *s.closed_form_rank_correlation);
  return text;
}

std::string src(const std::string& p) { return std::string(STRAIT_SOURCE_DIR) + "/" + p; }

planner::PlanRequest request_of(const Case& c) {
  planner::PlanRequest r;
  if (!c.scenario.empty()) {
    const auto config = load_config(src(c.scenario));
    r.base = sim::workload::TrainingScenario::from_config(config);
    r.has_baseline = true;
    const auto node = config.at("plan");
    r.baseline_document = node.is_object()
                              ? node.json()
                              : load_config(src("configs/scenarios/" + node.as_string())).json();
  } else {
    auto model = sim::workload::ModelConfig::load(src(c.model));
    auto data = sim::workload::DataConfig::load(src(c.data), model);
    auto plan =
        sim::workload::ParallelPlan::from_config(ConfigNode(Json::object(), "<default>"), model);
    r.base = sim::workload::TrainingScenario::from_parts(
        sim::topology::Cluster::load(src(c.cluster)), std::move(model), std::move(data),
        std::move(plan), 2, 1);
    r.base.name = c.name;
  }
  r.constraints = planner::Constraints::none(r.base.model);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  // Every bundled training scenario but hstu-131k-4dc (analytical only: issue 9's scale
  // benchmark, not a planner case), in its own mode, and 256 GPUs x 100 tables.
  constexpr double kBound = 600;  // wall-clock upper bound; the effort is the evaluations
  std::vector<Case> cases = {{"dlrm-256x100", "", "configs/clusters/h100-256-rail.json",
                              "configs/models/dlrm-100-tables.json",
                              "configs/data/dlrm-100-tables.json", kBound}};
  for (const char* name : {"dlrm-8gpu", "dlrm-mlperf-8", "dlrm-mlperf-64", "dlrm-mlperf-128",
                           "dlrm-tiny-cpu", "dlrm-tiny-cpu-4", "hstu-tiny-cpu", "hstu-tiny-cpu-4",
                           "hstu-dlrm-v3-1gpu", "hstu-1024", "hstu-3dc", "hstu-16k-4dc"}) {
    cases.push_back({name, std::string("configs/scenarios/") + name + ".json", "", "", "", kBound});
  }
  std::printf(
      "| case | GPUs | tables | final mode | evaluations | bound | wall | stopped by | scored | "
      "simulated | found ms | scenario plan ms | TorchRec-style ms | vs scenario | vs "
      "TorchRec | rank pairs | Spearman |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  const BenchArgs args = parse_args(argc, argv);
  for (const auto& c : cases) {
    bool wanted = args.names.empty();
    for (const auto& name : args.names) wanted = wanted || c.name == name;
    if (!wanted) continue;
    const auto t0 = std::chrono::steady_clock::now();
    const auto req = request_of(c);
    const auto kernels = sim::run::load_cost_model(req.base, src("configs/profiles"));
    planner::PlannerOptions o;
    o.budget_s = c.budget_s;
    o.threads = 1;
    o.final_mode = req.base.mode;
    if (args.evaluations > 0) o.evaluations = args.evaluations;
    const auto out = planner::find_plan(req, kernels, o);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (out.status != planner::PlanStatus::kFound) {
      std::printf("| %s | no plan found |\n", c.name.c_str());
      continue;
    }
    const auto& best = out.top.front().best();
    auto ms = [](const std::optional<planner::RankedPlan>& p) {
      return p && p->best().fits ? std::to_string(p->best().step_ms).substr(0, 7)
                                 : std::string("-");
    };
    auto ratio = [&](const std::optional<planner::RankedPlan>& p) {
      if (!p) return std::string("-");
      const double x = planner::speedup(out.objective, best, p->best());
      return x > 0 ? std::to_string(x).substr(0, 5) + "x" : std::string("does not fit");
    };
    std::printf(
        "| %s | %d | %zu | %s | %d | %.0f s | %.1f s | %s | %d | %d | %.3f | %s | %s | %s | %s "
        "| %d | %s |\n",
        c.name.c_str(), req.base.layout.world, req.base.model.tables.size(),
        sim::network::to_string(out.final_mode), out.stats.evaluations, c.budget_s, wall,
        planner::to_string(out.stats.stopped_by), out.stats.scored, out.stats.simulated,
        best.step_ms, ms(out.baseline).c_str(), ms(out.torchrec).c_str(),
        ratio(out.baseline).c_str(), ratio(out.torchrec).c_str(), out.stats.rank_pairs,
        rank_correlation(out.stats).c_str());
    std::fflush(stdout);
  }
  return 0;
}
