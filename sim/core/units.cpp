#include "sim/core/units.hpp"

#include <fmt/format.h>

namespace strait {

TimeOverflow::TimeOverflow(double ps)
    : Error(fmt::format("a duration of {:.3g} s is past what simulated time holds (2^63 ps, "
                        "about 106 days): check the sizes and rates of the run (bandwidths, "
                        "peaks, batch and table sizes)",
                        ps * 1e-12)) {}

}  // namespace strait
