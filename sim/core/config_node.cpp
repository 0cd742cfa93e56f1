// Over 400 lines: ConfigNode's typed reads, error wording (path, line, closest key) and loading
// belong together.

#include "sim/core/config_node.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_set>

#include <fmt/format.h>

#include "sim/core/error.hpp"
#include "sim/core/quantity.hpp"

namespace strait {
namespace {

std::string type_name(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return fmt::format("the string \"{}\"", v.get<std::string>());
    case Json::value_t::boolean:
      return v.get<bool>() ? "true" : "false";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return fmt::format("the number {}", v.dump());
    default:
      return "a value of another type";
  }
}

std::string escape_token(std::string_view token) {
  std::string out;
  for (char c : token) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

ConfigNode::ConfigNode(Json document, std::string file)
    : root_(std::make_shared<const Json>(std::move(document))),
      file_(std::make_shared<const std::string>(std::move(file))),
      value_(root_.get()) {}

ConfigNode::ConfigNode(std::shared_ptr<const Json> root, std::shared_ptr<const std::string> file,
                       const Json* value, std::string pointer)
    : root_(std::move(root)), file_(std::move(file)), value_(value), pointer_(std::move(pointer)) {}

ConfigNode ConfigNode::child(const Json& value, std::string_view token) const {
  return ConfigNode(root_, file_, &value, pointer_ + "/" + escape_token(token));
}

void ConfigNode::fail(std::string_view expectation) const {
  throw ConfigError(*file_, pointer_, std::string(expectation));
}

bool ConfigNode::has(std::string_view key) const {
  return value_->is_object() && value_->contains(key);
}

ConfigNode ConfigNode::at(std::string_view key) const {
  if (!value_->is_object()) fail(fmt::format("expected an object, got {}", type_name(*value_)));
  auto it = value_->find(key);
  if (it == value_->end()) {
    throw ConfigError(*file_, pointer_ + "/" + escape_token(key), "missing required key");
  }
  return child(*it, key);
}

std::optional<ConfigNode> ConfigNode::find(std::string_view key) const {
  if (!value_->is_object()) fail(fmt::format("expected an object, got {}", type_name(*value_)));
  auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) return std::nullopt;
  return child(*it, key);
}

void ConfigNode::allow_only(std::initializer_list<std::string_view> allowed) const {
  allow_only(std::vector<std::string>(allowed.begin(), allowed.end()));
}

void ConfigNode::allow_only(const std::vector<std::string>& allowed) const {
  if (!value_->is_object()) fail(fmt::format("expected an object, got {}", type_name(*value_)));
  // Long lists (a model's table names) are looked up in a set: loading stays linear.
  std::unordered_set<std::string_view> lookup;
  if (allowed.size() > 16) lookup.insert(allowed.begin(), allowed.end());
  for (const auto& [key, value] : value_->items()) {
    if (lookup.empty() ? std::find(allowed.begin(), allowed.end(), key) != allowed.end()
                       : lookup.count(key) > 0)
      continue;
    std::string hint = closest_match(key, allowed);
    // The known keys, at most 16 of them: a message stays short whatever the list.
    std::string known;
    for (std::size_t i = 0; i < allowed.size() && i < 16; ++i)
      known += (known.empty() ? "" : ", ") + allowed[i];
    if (allowed.size() > 16) known += fmt::format(", and {} more", allowed.size() - 16);
    child(value, key)
        .fail(hint.empty() ? fmt::format("unknown key (known keys: {})", known)
                           : fmt::format("unknown key; did you mean \"{}\"?", hint));
  }
}

std::vector<std::string> ConfigNode::keys() const {
  if (!value_->is_object()) fail(fmt::format("expected an object, got {}", type_name(*value_)));
  std::vector<std::string> out;
  for (const auto& [key, value] : value_->items()) out.push_back(key);
  return out;
}

std::size_t ConfigNode::size() const {
  if (!value_->is_array()) fail(fmt::format("expected an array, got {}", type_name(*value_)));
  return value_->size();
}

ConfigNode ConfigNode::at(std::size_t index) const {
  if (index >= size()) fail(fmt::format("expected at least {} elements", index + 1));
  return child((*value_)[index], std::to_string(index));
}

std::vector<ConfigNode> ConfigNode::elements() const {
  std::vector<ConfigNode> out;
  const std::size_t n = size();
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back(child((*value_)[i], std::to_string(i)));
  return out;
}

double ConfigNode::as_number() const {
  if (!value_->is_number()) fail(fmt::format("expected a number, got {}", type_name(*value_)));
  const double v = value_->get<double>();
  if (!std::isfinite(v)) fail("expected a finite number");
  return v;
}

std::int64_t ConfigNode::as_integer() const {
  if (!value_->is_number_integer()) {
    fail(fmt::format("expected an integer, got {}", type_name(*value_)));
  }
  // An unsigned value past int64's range would wrap to a negative one.
  if (value_->is_number_unsigned() &&
      value_->get<std::uint64_t>() >
          static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    fail(fmt::format("expected an integer below 2^63, got {}", value_->get<std::uint64_t>()));
  }
  return value_->get<std::int64_t>();
}

std::int64_t ConfigNode::as_integer_in(std::int64_t lo, std::int64_t hi) const {
  const std::int64_t v = as_integer();
  if (v < lo || v > hi) fail(fmt::format("expected an integer in [{}, {}], got {}", lo, hi, v));
  return v;
}

std::string ConfigNode::as_string() const {
  if (!value_->is_string()) fail(fmt::format("expected a string, got {}", type_name(*value_)));
  return value_->get<std::string>();
}

bool ConfigNode::as_bool() const {
  if (!value_->is_boolean())
    fail(fmt::format("expected true or false, got {}", type_name(*value_)));
  return value_->get<bool>();
}

BytesPerSec ConfigNode::as_bandwidth() const {
  if (value_->is_string()) {
    if (auto v = parse_bandwidth(value_->get<std::string>())) return *v;
  }
  fail(
      fmt::format("expected a bandwidth with its unit such as \"400 Gb/s\" or \"450 GB/s\", got {}",
                  type_name(*value_)));
}

Time ConfigNode::as_duration() const {
  if (value_->is_string()) {
    if (auto v = parse_duration(value_->get<std::string>())) return *v;
  }
  static_assert(kMaxDurationSeconds == 1e6, "the message below names the limit");
  fail(fmt::format(
      "expected a duration with its unit such as \"2 us\" or \"5 ms\" (at most 1e6 s), got {}",
      type_name(*value_)));
}

Bytes ConfigNode::as_bytes() const {
  if (value_->is_number_integer() && value_->get<std::int64_t>() >= 0 &&
      static_cast<double>(value_->get<std::int64_t>()) <= kMaxBytes) {
    return value_->get<std::int64_t>();
  }
  if (value_->is_string()) {
    if (auto v = parse_bytes(value_->get<std::string>())) return *v;
  }
  fail(fmt::format("expected a size such as \"64 MiB\" or a byte count (at most 2^60), got {}",
                   type_name(*value_)));
}

double ConfigNode::positive_number(std::string_view key) const {
  ConfigNode n = at(key);
  const double v = n.as_number();
  if (!(v > 0)) n.fail(fmt::format("expected a positive number, got {}", v));
  return v;
}

std::int64_t ConfigNode::positive_integer(std::string_view key) const {
  ConfigNode n = at(key);
  const std::int64_t v = n.as_integer();
  if (v <= 0) n.fail(fmt::format("expected a positive integer, got {}", v));
  return v;
}

BytesPerSec ConfigNode::bandwidth(std::string_view key) const {
  ConfigNode n = at(key);
  const BytesPerSec v = n.as_bandwidth();
  if (!(v > 0)) n.fail(fmt::format("expected a positive bandwidth, got \"{}\"", n.as_string()));
  // 8 Kb/s .. 8 Pb/s: a transfer's time stays in simulated time's range (a link of
  // 1e-300 GB/s was free in analytical mode and deadlocked flow mode).
  if (v < 1e3 || v > 1e15)
    n.fail(
        fmt::format("expected a bandwidth between 8 Kb/s and 8 Pb/s, got \"{}\"", n.as_string()));
  return v;
}

double ConfigNode::number_or(std::string_view key, double fallback) const {
  auto n = find(key);
  return n ? n->as_number() : fallback;
}

std::int64_t ConfigNode::integer_or(std::string_view key, std::int64_t fallback) const {
  auto n = find(key);
  return n ? n->as_integer() : fallback;
}

int ConfigNode::int_or(std::string_view key, int fallback, int lo, int hi) const {
  auto n = find(key);
  return n ? n->as_int_in(lo, hi) : fallback;
}

std::string ConfigNode::string_or(std::string_view key, std::string fallback) const {
  auto n = find(key);
  return n ? n->as_string() : std::move(fallback);
}

bool ConfigNode::bool_or(std::string_view key, bool fallback) const {
  auto n = find(key);
  return n ? n->as_bool() : fallback;
}

Time ConfigNode::duration_or(std::string_view key, Time fallback) const {
  auto n = find(key);
  return n ? n->as_duration() : fallback;
}

std::string ConfigNode::choice(std::string_view key,
                               std::initializer_list<std::string_view> choices) const {
  ConfigNode n = at(key);
  std::string v = n.as_string();
  for (auto c : choices) {
    if (v == c) return v;
  }
  n.fail_not_one_of(v, std::vector<std::string>(choices.begin(), choices.end()));
}

void ConfigNode::fail_not_one_of(std::string_view text,
                                 const std::vector<std::string>& names) const {
  std::string listed;
  for (const auto& name : names)
    listed += fmt::format("{}\"{}\"", listed.empty() ? "" : ", ", name);
  fail(fmt::format("expected one of {}, got \"{}\"", listed, text));
}

std::string ConfigNode::choice_or(std::string_view key,
                                  std::initializer_list<std::string_view> choices,
                                  std::string fallback) const {
  return has(key) ? choice(key, choices) : std::move(fallback);
}

namespace {

// "line L, column C" of byte offset `byte` (0-based) of `text`.
std::string line_column(const std::string& text, std::size_t byte) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < std::min(byte, text.size()); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return fmt::format("line {}, column {}", line, column);
}

// Deeper nesting than any configuration needs; refused before it costs memory or time.
constexpr int kMaxNesting = 64;

// The byte offset where `text` first nests deeper than kMaxNesting arrays and objects, or
// npos. A linear scan before parsing: nlohmann's parse callback, which could count depth,
// makes parsing quadratic in an array of objects (a model of 100,000 tables took 7 s).
std::size_t too_deep_at(const std::string& text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxNesting) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::string::npos;
}

}  // namespace

ConfigNode load_config(const std::string& path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (error == std::errc::too_many_symbolic_link_levels)
    throw IoError(fmt::format("{}: a loop of symbolic links, not a JSON file", path));
  if (std::filesystem::is_directory(status))
    throw IoError(fmt::format("{}: is a directory, not a JSON file", path));
  // A FIFO nobody writes to would wait forever, /dev/zero would never end.
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw IoError(
        fmt::format("{}: not a regular file (a FIFO, device or socket), not a JSON file", path));
  std::ifstream in(path);
  if (!in) throw IoError(fmt::format("{}: cannot open file for reading", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  if (const auto at = too_deep_at(text); at != std::string::npos)
    throw ConfigError(path, "",
                      fmt::format("malformed JSON: nested deeper than {} levels at {}", kMaxNesting,
                                  line_column(text, at)));
  try {
    return ConfigNode(Json::parse(text), path);
  } catch (const Json::parse_error& e) {
    // nlohmann reports the byte offset; turn it into line:column for humans.
    throw ConfigError(
        path, "",
        fmt::format("malformed JSON at {}", line_column(text, e.byte == 0 ? 0 : e.byte - 1)));
  } catch (const Json::out_of_range& e) {
    // A number past a double's range ("1e400"): nlohmann names it in quotes.
    const std::string what = e.what();
    const auto open = what.find('\''), close = what.rfind('\'');
    const std::string number =
        open != std::string::npos && close > open ? what.substr(open + 1, close - open - 1) : "";
    const auto at = number.empty() ? std::string::npos : text.find(number);
    throw ConfigError(path, "",
                      fmt::format("number {} out of range{} (expected a finite number)", number,
                                  at == std::string::npos ? "" : " at " + line_column(text, at)));
  }
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

}  // namespace strait
