#pragma once
// Small JSON text helpers for streaming writers: string escaping and exact decimal
// microseconds from integer picoseconds.

#include <string>
#include <string_view>

#include "sim/core/units.hpp"

namespace strait::traces::detail {

/// `text` as a quoted JSON string literal. Quotes, backslashes and control characters are
/// escaped; invalid UTF-8 bytes become U+FFFD so the output always parses.
std::string json_quote(std::string_view text);

/// `t` in microseconds as an exact JSON number ("1.5", "3", "0.000001", "-2.25").
std::string json_microseconds(Time t);

/// `v` as a JSON number (shortest round-trip form); non-finite values become null.
std::string json_number(double v);

}  // namespace strait::traces::detail
