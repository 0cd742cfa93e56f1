// strait plan: searches sharding, placement and schedule for a scenario (or a cluster,
// model and data) and writes the plan, a TorchRec sharding plan, a launch plan and a
// report. Exit status 0 with a plan; 1 when no plan fits or a constraint cannot be met.

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "cli/plan_report.hpp"
#include "cli/progress_line.hpp"
#include "planner/launch_job.hpp"
#include "planner/launch_plan.hpp"
#include "planner/plan_document.hpp"
#include "planner/plan_report.hpp"
#include "planner/planner.hpp"
#include "planner/torchrec_plan.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/bundled_configs.hpp"
#include "sim/core/error.hpp"
#include "sim/core/quantity.hpp"
#include "sim/run/training_run.hpp"

namespace strait::cli {

namespace {

using sim::workload::TrainingScenario;

double budget_seconds(const std::string& text) {
  const auto t = parse_duration(text);
  if (t && t->to_s() > 0) return t->to_s();
  try {
    std::size_t used = 0;
    const double s = std::stod(text, &used);
    // At most the 1e6 s a duration may take anywhere (a budget of 1e308 s overflowed).
    if (used == text.size() && s > 0 && s <= 1e6) return s;
  } catch (const std::exception&) {
  }
  throw UsageError(fmt::format(
      "plan: --budget: expected a positive duration up to 1e6 s such as 60s or 5 min, got '{}'",
      text));
}

/// The launch plan's "job" (planner/launch_job.hpp): the scenario's cluster, model and data
/// as the files it names (inline where it had them inline), or the files given without one.
Json launch_job(const po::variables_map& vm, const std::string& launch, const Json& document,
                const TrainingScenario& base) {
  std::map<std::string, std::string> files;
  Json hardware;
  if (vm.count("scenario")) {
    const auto config = load_config(vm["scenario"].as<std::string>());
    const auto parts = TrainingScenario::resolve_parts(config);
    const std::pair<const char*, const ConfigNode*> named[] = {
        {"cluster", &parts.cluster}, {"model", &parts.model}, {"data", &parts.data}};
    for (const auto& [key, part] : named) {
      if (config.at(key).is_string()) files[key] = part->file();
    }
    if (const auto h = config.find("hardware")) hardware = h->json();
  } else {
    for (const char* key : {"cluster", "model", "data"}) files[key] = vm[key].as<std::string>();
  }
  // Relative to the launch plan's folder (for "-", the working directory).
  const auto folder = std::filesystem::absolute(std::filesystem::path(launch)).parent_path();
  return planner::launch_job(base, document, files, hardware, folder.string());
}

planner::PlanRequest make_request(const po::variables_map& vm) {
  planner::PlanRequest req;
  if (vm.count("scenario")) {
    for (const char* k : {"cluster", "model", "data"}) {
      if (vm.count(k))
        throw UsageError(fmt::format("plan: --{} and a scenario file exclude each other", k));
    }
    const auto config = load_config(vm["scenario"].as<std::string>());
    if (config.is_object() && config.has("collectives"))
      config.at("collectives").fail("expected a training scenario (model, data, plan) to plan");
    req.base = TrainingScenario::from_config(config);
    req.has_baseline = true;
    req.baseline_document = TrainingScenario::resolve_parts(config).plan.json();
  } else {
    for (const char* k : {"cluster", "model", "data"}) {
      if (!vm.count(k))
        throw UsageError(fmt::format("plan: --{} is required without a scenario file", k));
    }
    // The same ranges a scenario file's "steps" and "seed" have.
    const int steps = vm["steps"].as<int>(), seed = vm["seed"].as<int>();
    if (steps < 1 || steps > 1000)
      throw UsageError(fmt::format("plan: --steps: expected 1..1000 steps, got {}", steps));
    if (seed < 0) throw UsageError(fmt::format("plan: --seed: expected a seed >= 0, got {}", seed));
    auto model = sim::workload::ModelConfig::load(vm["model"].as<std::string>());
    auto data = sim::workload::DataConfig::load(vm["data"].as<std::string>(), model);
    auto plan = planner::parse_plan(Json::object(), "<default plan>", model);
    req.base = TrainingScenario::from_parts(
        sim::topology::Cluster::load(vm["cluster"].as<std::string>()), std::move(model),
        std::move(data), std::move(plan), steps, static_cast<std::uint64_t>(seed));
    req.base.name = std::filesystem::path(vm["model"].as<std::string>()).stem().string();
    // The configurations as read, so the launch plan's fingerprint covers every input.
    req.base.parts = sim::workload::ScenarioParts{
        load_config(vm["cluster"].as<std::string>()), load_config(vm["model"].as<std::string>()),
        load_config(vm["data"].as<std::string>()), ConfigNode(Json::object(), "<default plan>")};
  }
  if (vm.count("baseline")) {
    const auto tr = planner::read_torchrec_plan(vm["baseline"].as<std::string>(), req.base.model);
    Json doc = req.has_baseline ? req.baseline_document : Json::object();
    req.base.plan =
        planner::apply_torchrec_plan(doc, req.base.plan, tr, req.base.model, &req.base.cluster);
    req.base.layout = sim::workload::Layout::build(req.base.cluster, req.base.plan);
    req.baseline_document = doc;
    req.has_baseline = true;
  }
  apply_max_work("plan", vm, req.base);
  req.constraints =
      vm.count("constraints")
          ? planner::Constraints::load(vm["constraints"].as<std::string>(), req.base.model)
          : planner::Constraints::none(req.base.model);
  return req;
}

/// What the launch lines run as the user named it: --entrypoint, or its deprecated name
/// --program; none when they named neither (the lines then run the placeholder).
std::optional<std::string> entrypoint_of(const po::variables_map& vm) {
  if (vm.count("entrypoint") && vm.count("program"))
    throw UsageError("plan: --entrypoint and --program (its deprecated name) exclude each other");
  const char* option = vm.count("program") ? "program" : "entrypoint";
  if (!vm.count(option)) return std::nullopt;
  const auto entrypoint = vm[option].as<std::string>();
  if (entrypoint.find_first_not_of(" \t") == std::string::npos)
    throw UsageError(fmt::format(
        "plan: --{}: expected a command such as \"train.py ARGS\" or \"python -m MODULE "
        "ARGS\", got '{}'",
        option, entrypoint));
  return entrypoint;
}

planner::PlannerOptions make_options(const po::variables_map& vm, const TrainingScenario& base) {
  planner::PlannerOptions o;
  o.budget_s = budget_seconds(vm["budget"].as<std::string>());
  o.evaluations = vm["evaluations"].as<int>();
  if (o.evaluations < 1 || o.evaluations > 100000)
    throw UsageError(fmt::format(
        "plan: --evaluations: expected a count of final-mode simulations in 1..100000, got {}",
        o.evaluations));
  o.top = vm["top"].as<int>();
  o.threads = vm["threads"].as<int>();
  if (o.top < 1) throw UsageError("plan: --top: expected at least 1");
  if (o.threads < 1) throw UsageError("plan: --threads: expected at least 1");
  o.final_mode = base.mode;
  if (vm.count("mode")) {
    o.final_mode =
        enum_option<sim::network::NetworkMode>("plan", "mode", vm["mode"].as<std::string>());
  }
  // On a terminal: the stage, what the effort has spent and the best plan so far.
  if (stderr_is_terminal()) {
    o.progress = [](const planner::PlanProgress& p) {
      const std::string best = p.best_by[0]
                                   ? fmt::format("best {:.4g} ms ({})", p.best_step_ms, p.best_by)
                                   : std::string("nothing fits yet");
      draw_progress_line(
          fmt::format("planning: {}  {} scored, {} simulated, {}/{} evaluations  {}", p.stage,
                      p.scored, p.simulated, p.evaluations, p.evaluation_limit, best),
          p.evaluation_limit ? static_cast<double>(p.evaluations) / p.evaluation_limit : 0.0);
    };
  }
  return o;
}

po::options_description plan_options() {
  const std::string entrypoint_help = fmt::format(
      "what the launch plan's lines run: your training script and its arguments (SCRIPT ARGS), "
      "a module (-m MODULE ARGS) or a command naming its Python (python -m MODULE ARGS); "
      "default: the placeholder \"{}\"",
      planner::kPlaceholderEntrypoint);
  po::options_description desc("options");
  desc.add_options()("scenario", po::value<std::string>(),
                     "scenario file: cluster, model and data; its plan is the baseline to beat")(
      "cluster", po::value<std::string>(), "cluster file (without a scenario)")(
      "model", po::value<std::string>(), "model file (without a scenario)")(
      "data", po::value<std::string>(), "data file (without a scenario)")(
      "steps", po::value<int>()->default_value(2), "steps per simulation (without a scenario)")(
      "seed", po::value<int>()->default_value(1), "seed (without a scenario)")(
      "max-work", po::value<double>(),
      "work items a simulation may take (default: the scenario's \"max_work\", else 2e8)")(
      "constraints", po::value<std::string>(), "constraints file (planner/README.md)")(
      "baseline", po::value<std::string>(), "a TorchRec sharding plan to beat (sparse part)")(
      "evaluations", po::value<int>()->default_value(48),
      "search effort: final-mode simulations (the same plan on any machine and load)")(
      "budget", po::value<std::string>()->default_value("600s"),
      "wall-clock upper bound on the search (reaching it is reported)")(
      "top", po::value<int>()->default_value(5), "best plans in the report")(
      "threads", po::value<int>()->default_value(1), "worker threads (oneTBB)")(
      "mode", po::value<std::string>(),
      ("final-stage network mode: " + enum_name_list<sim::network::NetworkMode>("", " | ") +
       " (default: the scenario's, else flow)")
          .c_str())("profiles", po::value<std::string>(), "calibration profiles directory")(
      "out", po::value<std::string>(),
      "write the best plan (plan format) to this file (-: stdout, the report to stderr)")(
      "torchrec", po::value<std::string>(),
      "write the TorchRec sharding plan to this file (-: stdout, the report to stderr)")(
      "torchrec-module", po::value<std::string>()->default_value("embedding_bag_collection"),
      "module path of pooled tables in the TorchRec plan written (e.g. model.sparse.ebc)")(
      "torchrec-sequence-module", po::value<std::string>()->default_value("embedding_collection"),
      "module path of sequence tables in the TorchRec plan written")(
      "launch", po::value<std::string>(),
      "write the launch plan to this file (-: stdout, the report to stderr)")(
      "entrypoint", po::value<std::string>(), entrypoint_help.c_str())(
      "program", po::value<std::string>(), "deprecated name of --entrypoint")(
      "json", po::value<std::string>(),
      "write the report as JSON to this file (-: stdout, the report to stderr)");
  return desc;
}

}  // namespace

int run_plan(const std::vector<std::string>& args) {
  const po::options_description desc = plan_options();
  po::positional_options_description positional;
  positional.add("scenario", 1);
  po::variables_map vm;
  if (!parse_options("plan", "[SCENARIO.json | --cluster C --model M --data D] [options]", args,
                     desc, positional, vm))
    return 0;
  prepare_outputs("plan", vm, {{"out"}, {"torchrec"}, {"launch"}, {"json"}});
  const auto entrypoint = entrypoint_of(vm);  // checked before the search, not after it
  const auto request = make_request(vm);
  const auto kernels = sim::run::load_cost_model(
      request.base,
      vm.count("profiles") ? vm["profiles"].as<std::string>() : bundled_profiles_dir().string());
  const auto options = make_options(vm, request.base);
  const auto outcome = planner::find_plan(request, kernels, options);
  if (options.progress) end_progress_line();
  // The one figure that depends on the machine, kept out of the report.
  std::fprintf(stderr, "strait plan: searched in %.1f s\n", outcome.stats.wall_s);
  const planner::TableCosts costs(request.base, kernels);
  print_plan_report(std::cout, outcome, request, costs);
  if (outcome.status == planner::PlanStatus::kFound && vm.count("launch") && !entrypoint) {
    std::cout << fmt::format(
        "\n  launch lines run the placeholder entrypoint \"{}\"; name yours with --entrypoint "
        "\"SCRIPT ARGS\" or --entrypoint \"python -m MODULE ARGS\"\n",
        planner::kPlaceholderEntrypoint);
  }
  // Each file written, named with what it holds, after the report.
  if (vm.count("json")) {
    const auto path = vm["json"].as<std::string>();
    write_json(path, planner::outcome_json(outcome, request, costs).dump(2) + "\n");
    std::cout << wrote(path, "report as JSON");
  }
  if (outcome.status != planner::PlanStatus::kFound) return 1;
  const auto& best = outcome.top.front();
  if (vm.count("out")) {
    const auto path = vm["out"].as<std::string>();
    write_json(path, best.document.dump(2) + "\n");
    std::cout << wrote(path, "plan: strait simulate --plan");
  }
  if (vm.count("torchrec")) {
    const auto path = vm["torchrec"].as<std::string>();
    write_json(path, planner::torchrec_plan_json(best.plan, request.base, costs,
                                                 {vm["torchrec-module"].as<std::string>(),
                                                  vm["torchrec-sequence-module"].as<std::string>()})
                             .dump(2) +
                         "\n");
    std::cout << wrote(path, "TorchRec sharding plan: strait simulate --torchrec");
  }
  if (vm.count("launch")) {
    const auto path = vm["launch"].as<std::string>();
    auto launch = planner::launch_plan_json(best.plan, best.document, request.base,
                                            {entrypoint.value_or(planner::kPlaceholderEntrypoint)});
    // The job's files relative to the launch plan's folder (for "-", the working directory).
    launch["job"] = launch_job(vm, path, best.document, request.base);
    // The steps the planner simulated the plan for, so `strait exec` measures the same.
    launch["job"]["steps"] = planner::compared_steps(request.base.steps, best.plan);
    write_json(path, launch.dump(2) + "\n");
    std::cout << wrote(path, "launch plan: strait exec, and its launcher lines");
  }
  return 0;
}

}  // namespace strait::cli
