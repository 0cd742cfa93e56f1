#pragma once
// `strait sweep` on threads (sweep_command.cpp) and on MPI ranks (sweep_mpi_command.cpp, in
// strait-mpi): one command line, one report, two ways to distribute the points.

#include <functional>
#include <string>
#include <vector>

#include "sweep/sweep.hpp"

namespace strait::cli {

/// Runs every point of `spec` with `options`; sets `rank` (0 writes the report).
using SweepRunner = std::function<sweep::SweepSummary(
    const sweep::SweepSpec& spec, const sweep::SweepOptions& options, int& rank)>;

/// `strait sweep ARGS` with the points run by `runner` on `workers` ("threads", "MPI ranks").
int sweep_points(const std::vector<std::string>& args, const SweepRunner& runner,
                 const char* workers);

}  // namespace strait::cli
