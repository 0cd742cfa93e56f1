#pragma once
// Units of strait: integer simulated time, bytes, rates.
//
// Simulated time is an integer count of picoseconds (`Time`), so runs are exactly
// repeatable: same inputs and seed give byte-identical outputs. int64 picoseconds
// cover about 106 days, far beyond any training step. Amounts of data are `Bytes`
// (int64), rates are `BytesPerSec` and `FlopsPerSec` (double): the unit is in the name.

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>

#include "sim/core/error.hpp"

namespace strait {

using Bytes = std::int64_t;
using BytesPerSec = double;
using Flops = double;
using FlopsPerSec = double;

inline constexpr Bytes kKiB = 1024;
inline constexpr Bytes kMiB = 1024 * kKiB;
inline constexpr Bytes kGiB = 1024 * kMiB;

/// One of `parts` equal shares of `bytes`, rounded up (parts > 0).
constexpr Bytes divide_up(Bytes bytes, std::int64_t parts) { return (bytes + parts - 1) / parts; }

/// Gigabits per second -> bytes per second (networking habit: a 400 Gb/s NIC).
constexpr BytesPerSec gbit_per_s(double gbps) { return gbps * 1e9 / 8.0; }
/// Gigabytes per second (10^9 bytes) -> bytes per second (NVLink, HBM habit).
constexpr BytesPerSec gbyte_per_s(double gBps) { return gBps * 1e9; }

/// A duration that simulated time cannot hold: a kernel or transfer of more than about
/// 106 days, from inputs each within its range (2^60 bytes over 8 Kb/s).
class TimeOverflow : public Error {
 public:
  explicit TimeOverflow(double ps);
};

/// A point or span of simulated time, in integer picoseconds.
class Time {
 public:
  constexpr Time() = default;
  static constexpr Time from_ps(std::int64_t ps) { return Time(ps); }
  static constexpr Time from_ns(double ns) { return Time(round(ns * 1e3)); }
  static constexpr Time from_us(double us) { return Time(round(us * 1e6)); }
  static constexpr Time from_ms(double ms) { return Time(round(ms * 1e9)); }
  static constexpr Time from_s(double s) { return Time(round(s * 1e12)); }
  /// The time to move `amount` units at `rate` units per second, rounded up to a picosecond.
  /// Throws TimeOverflow past what simulated time holds (2^63 ps, about 106 days).
  static Time for_work(double amount, double rate) {
    return Time(checked(std::ceil(amount / rate * 1e12 - 1e-6)));
  }
  static constexpr Time zero() { return Time(0); }
  static constexpr Time infinite() { return Time(std::numeric_limits<std::int64_t>::max()); }

  constexpr std::int64_t ps() const { return ps_; }
  constexpr double to_ns() const { return static_cast<double>(ps_) * 1e-3; }
  constexpr double to_us() const { return static_cast<double>(ps_) * 1e-6; }
  constexpr double to_ms() const { return static_cast<double>(ps_) * 1e-9; }
  constexpr double to_s() const { return static_cast<double>(ps_) * 1e-12; }
  constexpr bool is_infinite() const { return ps_ == infinite().ps_; }

  constexpr Time operator+(Time o) const { return Time(ps_ + o.ps_); }
  constexpr Time operator-(Time o) const { return Time(ps_ - o.ps_); }
  constexpr Time& operator+=(Time o) {
    ps_ += o.ps_;
    return *this;
  }
  constexpr Time& operator-=(Time o) {
    ps_ -= o.ps_;
    return *this;
  }
  constexpr Time operator*(std::int64_t k) const { return Time(ps_ * k); }
  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy < 18 flags defaulted <=> (llvm#53961)
  constexpr auto operator<=>(const Time&) const = default;

 private:
  constexpr explicit Time(std::int64_t ps) : ps_(ps) {}
  static constexpr std::int64_t round(double v) { return checked(v < 0 ? v - 0.5 : v + 0.5); }
  // A duration formed past int64's range was converted anyway (undefined behaviour, then a
  // wrapped time): every conversion from a double goes through here.
  static constexpr std::int64_t checked(double ps) {
    if (!(ps > -9.2e18 && ps < 9.2e18)) throw TimeOverflow(ps);
    return static_cast<std::int64_t>(ps);
  }
  std::int64_t ps_ = 0;
};

}  // namespace strait
