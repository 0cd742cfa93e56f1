#pragma once
// fit_profile: a calibration profile (configs/profiles/README.md) fitted to measurements,
// with its held-out error per family. `strait calibrate fit` is this plus save_profile.
//
// Kernels (sim/cost's roofline: t = launch + max(flops / (peak e_c), bytes / (bw e_m))):
//   1. launch overhead: intercept of t = a + b * bytes over the three smallest copies;
//   2. peaks, unless a --base profile gives them: the best GEMM FLOP/s (every precision of
//      the backend, so no efficiency exceeds 1) and the best copy bandwidth;
//   3. per family, each fit record's observed efficiency against the peak that binds it
//      (compute: GEMM, attention; memory: embeddings, elementwise, optimizer), and a table
//      through them by least squares of relative error (detail/table_fit.hpp), monotone
//      non-decreasing in the key for GEMM, attention and embeddings;
//   4. embeddings: call_latency, the intercept of t = a + b * bytes (less the launch) per
//      row size with two or more sizes of uniform-id records (kept as it was otherwise);
//      repeat_hit_rate h from records with repeated ids (unique fraction < 0.95), by least
//      squares with the uniform records' table, then the table again.
// Collectives (sim/network on the cluster the ranks ran on):
//   5. link classes on the path between ranks 0 and 1: latency L, the smallest that any
//      operation's small messages (<= 4 KiB, t = a + y L) imply; per operation its
//      start-up a >= 0, the median rest of its small messages;
//   6. per record the achieved bandwidth s = T_bw / (t - a - y L) against strait's own
//      collective model (T_bw: its bandwidth part at the cluster's nominal links); the link
//      class efficiency is the best s any operation reaches, and per operation a table of
//      s relative to it over message size (weighted by the bandwidth share of the time).
// Every prediction (fit and held out) is what strait simulates with the written profile:
// CostModel::cost for kernels, simulate_collective on the calibrated cluster for
// collectives, so the reported errors are the simulator's.

#include <string>
#include <vector>

#include "calibration/measurement.hpp"
#include "sim/cost/calibration_profile.hpp"

namespace strait::calibration {

struct FitOptions {
  std::string measurements_file;  // named in the provenance
  std::string gpu_type;           // "" = the base profile's, else "CPU" for cpu measurements
  std::string base_profile;       // "" = none: peaks from the data (CPU); else kept from it
  std::string cluster_file;       // the cluster the collectives ran on (ranks = its first GPUs)
};

struct RecordFit {
  Measurement measurement;
  std::string family;  // attention backward records: the backward family
  double key = 0;
  double predicted_us = 0;
  double error = 0;           // predicted / measured - 1
  bool extrapolated = false;  // key outside the family's fitted keys
};

struct FamilyFit {
  std::string family;
  int fit_records = 0;
  int validation_records = 0;
  double fit_mape = 0;         // fractions, over the fit records
  double validation_mape = 0;  // over the held-out records (0 when none)
  double validation_worst = 0;
  double key_min = 0;  // fitted key range
  double key_max = 0;
};

struct FitResult {
  sim::cost::CalibrationProfile profile;
  std::vector<FamilyFit> families;
  std::vector<RecordFit> records;
};

/// Fits a profile to `set`. Throws Error when a family the profile needs has no records and
/// there is no base profile, or when collectives were measured but no cluster is given.
FitResult fit_profile(const MeasurementSet& set, const FitOptions& options);
/// Writes the profile (provenance with the held-out errors and per-record rows) atomically.
void save_profile(const FitResult& fit, const std::string& path);

}  // namespace strait::calibration
