#pragma once
// StringTable: interns strings to small dense ids (0, 1, 2, ... in order of first use).
//
// A timeline repeats a handful of names millions of times ("ring step 3", "compute"), so
// events store an int32 id and the text lives here once. Lookup of an existing string
// allocates nothing. Ids are stable for the table's lifetime; views returned by str() stay
// valid until the table is destroyed (storage is a deque, which never moves its elements).

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

namespace strait::traces {

/// Id of an interned string; dense, starting at 0.
using StringId = std::int32_t;

class StringTable {
 public:
  StringTable() = default;
  StringTable(const StringTable& other);
  StringTable& operator=(const StringTable& other);
  StringTable(StringTable&&) noexcept = default;
  StringTable& operator=(StringTable&&) noexcept = default;
  ~StringTable() = default;

  /// The id of `text`, adding it if new.
  StringId intern(std::string_view text);
  /// The id of `text` if interned, else -1.
  StringId find(std::string_view text) const;
  /// The text of `id`; `id` must come from this table.
  const std::string& str(StringId id) const { return strings_[static_cast<std::size_t>(id)]; }
  /// How many distinct strings are interned.
  std::size_t size() const { return strings_.size(); }

 private:
  std::deque<std::string> strings_;
  std::unordered_map<std::string_view, StringId> ids_;  // views into strings_
};

}  // namespace strait::traces
