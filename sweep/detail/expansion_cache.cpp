#include "sweep/detail/expansion_cache.hpp"

#include <algorithm>

namespace strait::sweep::detail {

bool ExpansionCache::network_only(const Edit& edit) {
  if (edit.part != "cluster") return false;
  const auto slash = edit.pointer.rfind('/');
  const std::string last =
      slash == std::string::npos ? edit.pointer : edit.pointer.substr(slash + 1);
  return last == "bandwidth" || last == "latency" || last == "link_latency";
}

std::string ExpansionCache::key(const std::vector<Edit>& edits) {
  std::string key;
  for (const auto& e : edits) {
    if (network_only(e)) continue;
    key += e.part;
    key += e.pointer;
    key += '=';
    key += e.value.dump();
    key += '\n';
  }
  return key;
}

ExpansionCache::Expansion ExpansionCache::get(
    const std::string& key, const std::function<sim::run::TrainingExpansion()>& build) {
  std::promise<Expansion> promise;
  std::shared_future<Expansion> expansion;
  bool mine = false;
  {
    std::lock_guard lock(mutex_);
    const auto it = std::find_if(entries_.begin(), entries_.end(),
                                 [&](const Entry& e) { return e.key == key; });
    if (it != entries_.end()) {
      entries_.splice(entries_.begin(), entries_, it);
      expansion = it->expansion;
    } else {
      expansion = promise.get_future().share();
      entries_.push_front({key, expansion});
      if (entries_.size() > capacity_) entries_.pop_back();
      mine = true;
    }
  }
  if (!mine) return expansion.get();
  try {
    promise.set_value(std::make_shared<const sim::run::TrainingExpansion>(build()));
  } catch (...) {
    promise.set_exception(std::current_exception());
  }
  return expansion.get();
}

}  // namespace strait::sweep::detail
