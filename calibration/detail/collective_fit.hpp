#pragma once
// Steps 5-6 of fit_profile (calibration/fit.hpp): link-class and per-operation factors
// from collective measurements, and predictions through strait's own collective model.

#include <vector>

#include "calibration/measurement.hpp"
#include "sim/cost/collective_factors.hpp"
#include "sim/topology/cluster.hpp"

namespace strait::calibration::detail {

/// Fits `factors` (link classes on the rank 0 -> 1 path from send/recv, then every measured
/// operation) from the fit-set collective records; their ranks are `cluster`'s first GPUs.
void fit_collectives(const std::vector<const Measurement*>& fit_records,
                     const sim::topology::Cluster& cluster, sim::cost::CollectiveFactors& factors);

/// What strait simulates for the record, in microseconds, on the `calibrated` cluster (link
/// factors applied, sim/run/calibrated_cluster.hpp) with the per-operation factors `ops`.
double predict_collective_us(const Measurement& m, const sim::topology::Cluster& calibrated,
                             const sim::network::CollectiveCalibration& ops);

}  // namespace strait::calibration::detail
