#pragma once
// What `strait calibrate`'s subcommands share (cli/calibrate_command.cpp,
// cli/calibrate_run_command.cpp).

#include <string>

#include "calibration/measurement.hpp"

namespace strait::cli {

/// A measurement file, or for "-" the same JSON on standard output.
void write_measurements(const calibration::MeasurementSet& set, const std::string& path);

}  // namespace strait::cli
