#pragma once
// ConfigNode: a view on one value of a JSON config file that knows where it is (file
// and JSON pointer), so every check can fail with one clear message naming both.
//
//   ConfigNode root = load_config("configs/clusters/h100.json");
//   root.allow_only({"name", "hosts", "nvlink"});        // unknown keys -> error
//   BytesPerSec bw = root.at("nvlink").bandwidth("bandwidth");  // "450 GB/s", > 0
//
// Views share ownership of the parsed document, so they stay valid on their own.

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/core/units.hpp"

namespace strait {

using Json = nlohmann::json;

class ConfigNode {
 public:
  /// Wraps an in-memory document; `file` names it in errors (e.g. "<inline>").
  ConfigNode(Json document, std::string file);

  const std::string& file() const { return *file_; }
  const std::string& pointer() const { return pointer_; }
  const Json& json() const { return *value_; }

  /// Throws ConfigError at this node: "FILE: POINTER: expectation".
  [[noreturn]] void fail(std::string_view expectation) const;
  /// Fails for a value naming none of `names`: 'expected one of "a", "b", got "text"'.
  [[noreturn]] void fail_not_one_of(std::string_view text,
                                    const std::vector<std::string>& names) const;

  bool is_object() const { return value_->is_object(); }
  bool is_array() const { return value_->is_array(); }
  bool is_string() const { return value_->is_string(); }
  bool is_number() const { return value_->is_number(); }

  // Objects.
  bool has(std::string_view key) const;
  /// The member `key`; fails "missing required key" if absent (or if this is no object).
  ConfigNode at(std::string_view key) const;
  std::optional<ConfigNode> find(std::string_view key) const;
  /// Fails on the first key not in `allowed`, suggesting the closest allowed one.
  void allow_only(std::initializer_list<std::string_view> allowed) const;
  void allow_only(const std::vector<std::string>& allowed) const;
  std::vector<std::string> keys() const;

  // Arrays.
  std::size_t size() const;  // fails unless an array
  ConfigNode at(std::size_t index) const;
  std::vector<ConfigNode> elements() const;

  // Values at this node.
  double as_number() const;
  std::int64_t as_integer() const;  // an integer of int64's range, else fails
  /// An integer in [lo, hi]; anything else (a fraction, text, a value outside the range,
  /// which is never wrapped or truncated) fails naming the range.
  std::int64_t as_integer_in(std::int64_t lo, std::int64_t hi) const;
  int as_int_in(int lo, int hi) const { return static_cast<int>(as_integer_in(lo, hi)); }
  std::string as_string() const;
  bool as_bool() const;
  BytesPerSec as_bandwidth() const;  // "400 Gb/s" | "450 GB/s"
  Time as_duration() const;          // "2 us" | "5 ms"
  Bytes as_bytes() const;            // "64 MiB" | integer

  // Members, required; positivity checks name the key in the error.
  double number(std::string_view key) const { return at(key).as_number(); }
  double positive_number(std::string_view key) const;
  std::int64_t integer(std::string_view key) const { return at(key).as_integer(); }
  std::int64_t positive_integer(std::string_view key) const;
  int int_in(std::string_view key, int lo, int hi) const { return at(key).as_int_in(lo, hi); }
  std::string string(std::string_view key) const { return at(key).as_string(); }
  BytesPerSec bandwidth(std::string_view key) const;  // must be > 0
  Time duration(std::string_view key) const { return at(key).as_duration(); }
  Bytes bytes(std::string_view key) const { return at(key).as_bytes(); }

  // Members, optional with a default.
  double number_or(std::string_view key, double fallback) const;
  std::int64_t integer_or(std::string_view key, std::int64_t fallback) const;
  int int_or(std::string_view key, int fallback, int lo, int hi) const;
  std::string string_or(std::string_view key, std::string fallback) const;
  bool bool_or(std::string_view key, bool fallback) const;
  Time duration_or(std::string_view key, Time fallback) const;

  /// One of `choices`, else fails listing them. An enum's value: read_enum (enum_names.hpp).
  std::string choice(std::string_view key, std::initializer_list<std::string_view> choices) const;
  std::string choice_or(std::string_view key, std::initializer_list<std::string_view> choices,
                        std::string fallback) const;

 private:
  ConfigNode(std::shared_ptr<const Json> root, std::shared_ptr<const std::string> file,
             const Json* value, std::string pointer);
  ConfigNode child(const Json& value, std::string_view token) const;

  std::shared_ptr<const Json> root_;
  std::shared_ptr<const std::string> file_;
  const Json* value_;
  std::string pointer_;
};

/// Reads and parses a JSON file; IoError if unreadable, ConfigError with line and column
/// if malformed.
ConfigNode load_config(const std::string& path);

/// "did you mean" helper: the closest of `candidates` to `word`, or "" if none is close.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace strait
