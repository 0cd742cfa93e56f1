#pragma once
// Text reports of a fitted profile: the summary `strait calibrate fit` prints, and
// `strait calibrate report PROFILE.json` (per family: measured vs fitted, held-out error,
// and the shapes whose key lies outside the fitted range, i.e. extrapolated).

#include <string>

#include "calibration/fit.hpp"

namespace strait::calibration {

/// One line per family: records, fitted key range, fit and held-out MAPE, worst error;
/// then the held-out MAPE per group (family_group).
std::string format_fit_summary(const FitResult& fit);
/// The group a family reports under: gemm, attention (jagged/padded, forward/backward),
/// embedding (lookup, update), elementwise (with the optimizer), collectives.
std::string family_group(const std::string& family);
/// The report of a fitted profile file (its provenance's "validation" and "records");
/// `all` lists every record, else the worst three per family and every extrapolated one.
/// Throws ConfigError for a profile that was not fitted by strait calibrate.
std::string format_profile_report(const std::string& profile_path, bool all);

}  // namespace strait::calibration
