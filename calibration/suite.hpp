#pragma once
// The microbenchmark suite of `strait calibrate run`.
//
// Every rank of the job (one process per rank: `mpirun -np N strait calibrate run`, or a
// single process) runs the same kernel cases at the same time, barrier to barrier, so a
// kernel is timed while its neighbours load the shared memory system as they do in a
// training step; the recorded median is over the samples of all ranks. Then the
// collectives run over all ranks and rank 0 records them the way nccl-tests reports them
// (time, algbw, busbw), each checked against the expected result.
// Timing: CPU backend with a monotonic clock, the last-level cache flushed before each
// sample of kernels whose inputs would otherwise stay cached; CUDA backend with CUDA events.
// Only rank 0 returns records; the others return an empty set.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "calibration/measurement.hpp"

namespace strait::calibration {

/// Where a suite run stands, for a progress line.
struct SuiteProgress {
  const char* part = "";    // "kernels" or "collectives"
  int done = 0, total = 0;  // cases of this part run (or taken from SuiteOptions::done)
  std::string next;         // the case about to run ("family key=value ..."); "" after the last
  const MeasurementSet* so_far = nullptr;  // every record so far
};

struct SuiteOptions {
  std::string backend = "cpu";        // "cpu" | "cuda"
  std::vector<std::string> families;  // empty: every family the backend has
  bool quick = false;                 // a few shapes per family (tests, smoke runs)
  bool collectives = true;            // run the collective part (needs >= 2 ranks)
  std::int64_t max_collective_bytes = std::int64_t{1} << 30;
  /// Records of an earlier run of the same suite (rank 0's; `--resume`): their cases are
  /// not run again, and the result starts with them.
  MeasurementSet done;
  /// Called on rank 0 before each case and after the last one (to show, or to save so that
  /// a stopped run keeps what it measured); empty = silent.
  std::function<void(const SuiteProgress& progress)> progress;
};

/// Runs the suite; rank 0 returns the records. Throws Error when the backend is not
/// available (no CUDA build or no GPU for "cuda") before anything is measured.
MeasurementSet run_suite(const SuiteOptions& options);

}  // namespace strait::calibration
