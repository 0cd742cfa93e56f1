#pragma once
// Enum names: one table of {value, name} pairs per enum, read alike by config parsing,
// printing, JSON, CLI options and the Python bindings, so a name is spelled once.
//
//   enum class NetworkMode { kFlow, kAnalytical };
//   constexpr auto enum_names(NetworkMode) {  // next to the enum: found by ADL
//     return std::to_array<EnumName<NetworkMode>>(
//         {{NetworkMode::kFlow, "flow"}, {NetworkMode::kAnalytical, "analytical"}});
//   }
//
//   name_of(NetworkMode::kFlow)                  "flow"
//   parse_enum<NetworkMode>("analytical")        NetworkMode::kAnalytical (nullopt: no name)
//   enum_name_list<NetworkMode>("\"")            "\"flow\", \"analytical\""
//   enum_name_list<NetworkMode>("", " or ")      "flow or analytical"
//   read_enum<NetworkMode>(node, "mode")         fails: FILE: /mode: expected one of "flow",
//                                                "analytical", got "fast" (ConfigNode::choice)
//
// A value's first entry is its name; later entries for the same value are aliases that
// parse and are listed ("rack" and "pod"). Names are string literals (name_of returns a
// C string). Every function also takes an explicit table, for a second vocabulary of one
// enum (TorchRec's names of the sharding types).

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "sim/core/config_node.hpp"

namespace strait {

template <typename E>
struct EnumName {
  E value;
  std::string_view name;  // a string literal
};

/// An enum with a name table: `enum_names(E{})`, declared next to the enum, returns it.
template <typename E>
concept NamedEnum = std::is_enum_v<E> && requires(E e) {
  { enum_names(e).front().name } -> std::convertible_to<std::string_view>;
};

/// The name of `value` in `table` ("?" for a value the table lacks).
template <typename E, std::size_t N>
constexpr const char* name_of(E value, const std::array<EnumName<E>, N>& table) {
  for (const auto& entry : table) {
    if (entry.value == value) return entry.name.data();
  }
  return "?";
}

/// The value named `text` in `table`, or nullopt.
template <typename E, std::size_t N>
constexpr std::optional<E> parse_enum(std::string_view text,
                                      const std::array<EnumName<E>, N>& table) {
  for (const auto& entry : table) {
    if (entry.name == text) return entry.value;
  }
  return std::nullopt;
}

/// The names in table order, each between `quote`s, joined by ", " (the last two by
/// `last`): for error messages and --help.
template <typename E, std::size_t N>
std::string enum_name_list(const std::array<EnumName<E>, N>& table, std::string_view quote = "",
                           std::string_view last = ", ") {
  std::string out;
  for (std::size_t i = 0; i < N; ++i) {
    if (i > 0) out += i + 1 == N ? last : std::string_view(", ");
    out.append(quote).append(table[i].name).append(quote);
  }
  return out;
}

/// The names in table order (for closest_match).
template <typename E, std::size_t N>
std::vector<std::string> enum_name_vector(const std::array<EnumName<E>, N>& table) {
  std::vector<std::string> out;
  out.reserve(N);
  for (const auto& entry : table) out.emplace_back(entry.name);
  return out;
}

/// `node` (a string) as a value of `table`; fails as ConfigNode::choice does.
template <typename E, std::size_t N>
E as_enum(const ConfigNode& node, const std::array<EnumName<E>, N>& table) {
  const std::string text = node.as_string();
  if (const auto value = parse_enum(text, table)) return *value;
  node.fail_not_one_of(text, enum_name_vector(table));
}

/// Member `key` of `node` as a value of `table` (required).
template <typename E, std::size_t N>
E read_enum(const ConfigNode& node, std::string_view key, const std::array<EnumName<E>, N>& table) {
  return as_enum(node.at(key), table);
}

/// Member `key` of `node` as a value of `table`, or `fallback` where it is absent.
template <typename E, std::size_t N>
E read_enum_or(const ConfigNode& node, std::string_view key, E fallback,
               const std::array<EnumName<E>, N>& table) {
  const auto member = node.find(key);
  return member ? as_enum(*member, table) : fallback;
}

// The same with the enum's own table.

template <NamedEnum E>
constexpr const char* name_of(E value) {
  return name_of(value, enum_names(E{}));
}
template <NamedEnum E>
constexpr std::optional<E> parse_enum(std::string_view text) {
  return parse_enum(text, enum_names(E{}));
}
template <NamedEnum E>
std::string enum_name_list(std::string_view quote = "", std::string_view last = ", ") {
  return enum_name_list(enum_names(E{}), quote, last);
}
template <NamedEnum E>
std::vector<std::string> enum_name_vector() {
  return enum_name_vector(enum_names(E{}));
}
template <NamedEnum E>
E as_enum(const ConfigNode& node) {
  return as_enum(node, enum_names(E{}));
}
template <NamedEnum E>
E read_enum(const ConfigNode& node, std::string_view key) {
  return read_enum(node, key, enum_names(E{}));
}
template <NamedEnum E>
E read_enum_or(const ConfigNode& node, std::string_view key, E fallback) {
  return read_enum_or(node, key, fallback, enum_names(E{}));
}

}  // namespace strait
