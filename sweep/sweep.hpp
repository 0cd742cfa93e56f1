#pragma once
// strait::sweep: runs every point of a sweep (see sweep_spec.hpp) and writes a CSV with
// one row per point and a JSON Lines file with each point's full report.
//
//   const auto spec = strait::sweep::SweepSpec::load("configs/sweeps/wan-3dc.json");
//   strait::sweep::SweepOptions options;
//   options.csv_path = "wan-3dc.csv";
//   options.jsonl_path = "wan-3dc.jsonl";
//   const auto summary = strait::sweep::run_sweep(spec, options);
//
// Rows are written in the sweep's point order whatever runs them: threads of one process
// (oneTBB) or the ranks of an MPI job (dynamic distribution, rank 0 writes), so the files
// are byte-identical to a serial run's apart from the wall-time columns. Points run
// independently and deterministically; a point that fails is a row with its error.
// Each point is one `strait simulate` of a training scenario, preceded by one
// `strait plan` (one thread) when the sweep's "plan_search" asks for it at that point.
// Limits: an MPI rank runs one point at a time; a plan search that reaches its budget may
// choose differently from run to run (plan_budget_reached marks it).

#include <atomic>
#include <cstddef>
#include <functional>
#include <string>

#include "sim/core/error.hpp"
#include "sweep/sweep_spec.hpp"

namespace strait::sweep {

/// --resume found output files that another sweep wrote (other columns or points).
class ResumeMismatch : public Error {
 public:
  using Error::Error;
};

/// Where a sweep stands, after each written row.
struct SweepProgress {
  std::size_t done = 0;    // rows in the files, resumed ones included
  std::size_t total = 0;   // points of the sweep
  std::size_t ran = 0;     // points run by this call
  std::size_t failed = 0;  // error rows, resumed ones included
  double elapsed_s = 0;    // wall time of this call so far
};

struct SweepOptions {
  std::string csv_path;
  std::string jsonl_path;
  int threads = 0;                   // 0: all cores
  bool resume = false;               // continue existing files instead of replacing them
  std::string default_profiles_dir;  // for scenarios that name no "profiles"
  /// Points whose edits differ only in links' bandwidths and latencies replay one expansion
  /// (op graphs, batches, memory) instead of each building its own: the same rows, built
  /// once (detail/expansion_cache.hpp). false builds every point from scratch.
  bool reuse_expansions = true;
  /// Called by the writing thread after each row (and once at the start).
  std::function<void(const SweepProgress&)> progress;
  /// When it becomes true no new point starts; rows finished in order are still written.
  const std::atomic<bool>* stop = nullptr;
};

struct SweepSummary {
  SweepProgress progress;    // at the end
  bool interrupted = false;  // stopped before every point was written
  int workers = 1;           // threads, or MPI ranks
};

/// Checks each value of the sweep file (every axis value with its unit, and the "set"
/// block's) against the rules of the key it sets, before any point runs: loads the configs
/// a point would with that value, the other axes at their first values, using the loaders a
/// point uses (config parsing only: no op graph, no simulation), one load per value, not
/// per point. Throws ConfigError "SWEEP: /axes/1/values/0: axis 'NAME' cannot take the value
/// V: FILE: KEY: EXPECTATION" (the config's own message). Only an error at the key a value
/// sets, or in the part file it picks, is the value's: values wrong only together (a plan
/// for more GPUs than a cluster has) are left to the points, whose rows report them.
void check_values(const SweepSpec& spec);

/// Runs the sweep on `options.threads` threads of this process. Throws ConfigError
/// (check_values, before any file is touched), IoError when an output cannot be written,
/// ResumeMismatch (see above); never for a failing point. Creates the outputs' folders.
SweepSummary run_sweep(const SweepSpec& spec, const SweepOptions& options);

/// Whether this build can distribute points over MPI ranks.
bool mpi_built();
/// Whether this process was started by mpirun / srun (so MPI should be used).
bool launched_by_mpi();
/// Runs the sweep over the ranks of MPI_COMM_WORLD (MPI is initialized and finalized
/// here): every rank calls it with the same spec; rank 0 writes the files and reports
/// progress, the others only run points. `options.threads` is ignored (one point at a
/// time per rank; rank 0 runs points too while it serves the others). Every rank runs
/// check_values before MPI starts, so a bad value stops each one with the same error.
SweepSummary run_sweep_mpi(const SweepSpec& spec, const SweepOptions& options, int& rank);

}  // namespace strait::sweep
