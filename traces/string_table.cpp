#include "traces/string_table.hpp"

namespace strait::traces {

// Copies rebuild the index: the copied map's views would point into the source's storage.
StringTable::StringTable(const StringTable& other) : strings_(other.strings_) {
  ids_.reserve(strings_.size());
  for (std::size_t i = 0; i < strings_.size(); ++i) {
    ids_.emplace(strings_[i], static_cast<StringId>(i));
  }
}

StringTable& StringTable::operator=(const StringTable& other) {
  if (this != &other) *this = StringTable(other);
  return *this;
}

StringId StringTable::intern(std::string_view text) {
  if (auto it = ids_.find(text); it != ids_.end()) return it->second;
  const auto id = static_cast<StringId>(strings_.size());
  const std::string& stored = strings_.emplace_back(text);
  ids_.emplace(stored, id);
  return id;
}

StringId StringTable::find(std::string_view text) const {
  auto it = ids_.find(text);
  return it == ids_.end() ? -1 : it->second;
}

}  // namespace strait::traces
