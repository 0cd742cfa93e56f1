#pragma once
// Statistics over samples that the simulator, the executor and calibration report alike:
// step-time percentiles, the median of repeated measurements, spreads between quartiles.
// One definition, so a simulated p99 and a measured one are the same statistic.

#include <vector>

namespace strait {

/// The p-quantile (p in [0, 1]) of `values`, linear between order statistics (the closest
/// ranks either side of p * (n - 1)); 0 if empty.
double percentile(std::vector<double> values, double p);

}  // namespace strait
