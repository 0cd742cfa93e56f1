// strait graph SCENARIO --rank R: the op graph of one rank, as JSON (stdout or --json).

#include <iostream>

#include <fmt/format.h>

#include "cli/command.hpp"
#include "cli/options.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/config_node.hpp"
#include "sim/core/error.hpp"
#include "sim/workload/op_graph_builder.hpp"
#include "sim/workload/op_graph_json.hpp"
#include "sim/workload/scenario.hpp"

namespace strait::cli {

int run_graph(const std::vector<std::string>& args) {
  po::options_description desc("options");
  desc.add_options()("scenario", po::value<std::string>()->required(), "training scenario file")(
      "rank", po::value<int>()->default_value(0), "rank whose ops to show")(
      "json", po::value<std::string>(), "write to this file instead of stdout (-: stdout)");
  po::positional_options_description positional;
  positional.add("scenario", 1);
  po::variables_map vm;
  if (!parse_options("graph", "SCENARIO.json [--rank R] [--json FILE]", args, desc, positional, vm))
    return 0;
  prepare_outputs("graph", vm, {{"json"}});
  const auto config = load_config(vm["scenario"].as<std::string>());
  if (config.is_object() && config.has("collectives")) {
    throw Error(
        fmt::format("{}: is a scenario of collectives; 'strait graph' shows the ops of a training "
                    "scenario (one with model, data and plan)",
                    config.file()));
  }
  const auto scenario = sim::workload::TrainingScenario::from_config(config);
  const auto graph = sim::workload::build_op_graph(scenario);
  const auto text = sim::workload::to_json(graph, vm["rank"].as<int>()).dump(2) + "\n";
  if (vm.count("json")) {
    const auto path = vm["json"].as<std::string>();
    write_json(path, text);
    std::cout << wrote(path, fmt::format("op graph of rank {} as JSON", vm["rank"].as<int>()));
  } else {
    std::cout << text;
  }
  return 0;
}

}  // namespace strait::cli
