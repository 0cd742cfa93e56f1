#pragma once
// Printing and JSON of a training simulation's report (strait simulate).

#include <iosfwd>

#include <nlohmann/json.hpp>

#include "sim/run/training_report_json.hpp"
#include "sim/run/training_run.hpp"

namespace strait::cli {

void print_training_report(std::ostream& out, const sim::run::TrainingReport& report);
using sim::run::training_report_json;

}  // namespace strait::cli
