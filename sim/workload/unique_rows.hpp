#pragma once
// Expected number of distinct rows touched by n lookups into a table of R rows whose ids
// follow a Zipf law with exponent s (p_i = i^-s / H, H = sum_{i=1..R} i^-s):
//
//   E[unique] = sum_{i=1..R} 1 - (1 - p_i)^n
//
// Exact for the K = 256 hottest rows; the tail i > K is approximated by the integral
// of 1 - exp(-n p(x)) over x in [K + 1/2, R + 1/2] (64-point trapezoid in log x), and H
// by the head sum plus the integral of x^-s. s = 0 (uniform) is exact: R (1 - (1 - 1/R)^n).
// Relative error below 2e-3 against the exact sum (tests: R = 1e5, s in 0..1.5, n up to 1e6).

#include <cstdint>

namespace strait::sim::workload {

/// Expected distinct rows among `lookups` Zipf(`exponent`) draws from `rows` rows.
double expected_unique_rows(double rows, double lookups, double exponent);

/// The share of Zipf(`exponent`) draws from `rows` rows that fall on the `head` hottest
/// rows: H(head) / H(rows), H(n) = sum_{i=1..n} i^-s, exact up to 256 rows and the
/// integral of x^-s from 256.5 on (head / rows when s = 0).
double zipf_head_mass(double rows, double head, double exponent);

}  // namespace strait::sim::workload
