#pragma once
// Parsing of quantities with units, as users write them in configs and on the command
// line: "400 Gb/s", "450 GB/s", "2 us", "5 ms", "64 MiB", and nccl-tests sizes ("128M").
// Each returns nullopt on malformed text; callers turn that into a ConfigError or
// UsageError that names where the text came from.

#include <optional>
#include <string>
#include <string_view>

#include "sim/core/units.hpp"

namespace strait {

/// "400 Gb/s", "400Gbps", "50 GB/s", "1.6 Tb/s", "100 MB/s" -> bytes per second (> 0 not checked).
std::optional<BytesPerSec> parse_bandwidth(std::string_view text);
/// Durations a config or command line may give, in seconds either side of zero: far past
/// any latency or budget, and well inside simulated time's range (int64 picoseconds, about
/// 106 days), so that no conversion overflows.
inline constexpr double kMaxDurationSeconds = 1e6;
/// Sizes a config or command line may give: 2^60 bytes (1 EiB).
inline constexpr double kMaxBytes = 1152921504606846976.0;

/// "2 us", "1.5 ms", "800 ns", "0 s" -> Time; nullopt past kMaxDurationSeconds.
std::optional<Time> parse_duration(std::string_view text);
/// "64 MiB", "4 KiB", "1 GB" (10^9), "1024 B", "1024" -> bytes; nullopt if negative or
/// past kMaxBytes.
std::optional<Bytes> parse_bytes(std::string_view text);
/// nccl-tests sizes: "8", "1K", "128M", "1G" (K, M, G are powers of 1024).
std::optional<Bytes> parse_size_suffix(std::string_view text);

/// "1.50 MiB"-style text for reports.
std::string format_bytes(double bytes);
/// "123.4 us" / "12.3 ms" / "1.23 s" for reports.
std::string format_duration(Time t);

}  // namespace strait
