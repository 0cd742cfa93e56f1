#pragma once
// Steps 1-4 of fit_profile (calibration/fit.hpp): launch overhead, peaks and the kernel
// families' efficiency tables.

#include <vector>

#include "calibration/measurement.hpp"
#include "sim/cost/calibration_profile.hpp"

namespace strait::calibration::detail {

/// The family a kernel record costs under: a backward attention pass maps to its own family.
sim::cost::KernelKind kind_of(const Measurement& m);
/// The KernelWork the simulator builds for the record's kernel (same flops, bytes, key).
sim::cost::KernelWork work_of(const Measurement& m);

/// Fits `profile` in place from the fit-set kernel records: launch overhead, peaks (when
/// `fit_peaks`: best GEMM FLOP/s for every precision present, best copy bandwidth) and
/// every family with records. Returns the families it fitted.
std::vector<sim::cost::KernelKind> fit_kernels(const std::vector<const Measurement*>& fit_records,
                                               bool fit_peaks,
                                               sim::cost::CalibrationProfile& profile);

}  // namespace strait::calibration::detail
