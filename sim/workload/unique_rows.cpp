#include "sim/workload/unique_rows.hpp"

#include <algorithm>
#include <cmath>

namespace strait::sim::workload {
namespace {

constexpr double kHead = 256;
constexpr int kTailPoints = 64;

/// 1 - (1 - p)^n without cancellation for small p.
double touched(double p, double n) {
  return -std::expm1(n * std::log1p(-std::min(p, 1.0 - 1e-300)));
}

/// Integral of x^-s over [lo, hi].
double power_integral(double lo, double hi, double s) {
  if (std::abs(s - 1) < 1e-12) return std::log(hi / lo);
  return (std::pow(hi, 1 - s) - std::pow(lo, 1 - s)) / (1 - s);
}

/// sum_{i=1..n} i^-s: exact for the first kHead terms, the rest as an integral.
double harmonic(double n, double s) {
  const double head = std::min(n, kHead);
  double h = 0;
  for (double i = 1; i <= head; ++i) h += std::pow(i, -s);
  if (n > head) h += power_integral(head + 0.5, n + 0.5, s);
  return h;
}

}  // namespace

double zipf_head_mass(double rows, double head, double exponent) {
  if (rows <= 0 || head <= 0) return 0;
  if (head >= rows) return 1;
  if (exponent == 0) return head / rows;
  return harmonic(head, exponent) / harmonic(rows, exponent);
}

double expected_unique_rows(double rows, double lookups, double exponent) {
  if (rows <= 0 || lookups <= 0) return 0;
  if (exponent == 0) return rows * touched(1.0 / rows, lookups);
  const double head = std::min(rows, kHead);
  double h = 0;
  for (double i = 1; i <= head; ++i) h += std::pow(i, -exponent);
  const bool has_tail = rows > head;
  const double lo = head + 0.5, hi = rows + 0.5;
  if (has_tail) h += power_integral(lo, hi, exponent);
  double unique = 0;
  for (double i = 1; i <= head; ++i) unique += touched(std::pow(i, -exponent) / h, lookups);
  if (has_tail) {
    // Trapezoid in u = ln x: integral of f(x) dx = integral of f(e^u) e^u du.
    const double ulo = std::log(lo), uhi = std::log(hi), du = (uhi - ulo) / kTailPoints;
    double sum = 0;
    for (int j = 0; j <= kTailPoints; ++j) {
      const double x = std::exp(ulo + j * du);
      const double f = touched(std::pow(x, -exponent) / h, lookups) * x;
      sum += (j == 0 || j == kTailPoints) ? f / 2 : f;
    }
    unique += sum * du;
  }
  return std::min({unique, rows, lookups});
}

}  // namespace strait::sim::workload
