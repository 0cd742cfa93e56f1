#pragma once
// ExpansionCache: the expansions (sim/run/training_expansion.hpp) of a sweep's points,
// shared by the points whose edits differ only in links' bandwidths and latencies, which
// only the replay reads. A sweep over the WAN's bandwidth and latency then builds its op
// graphs once and replays them at each point: on hstu-3dc in analytical mode a point spent
// 1.16 s building and 0.08 s replaying. Rows are the same as without the cache (a test
// runs every bundled scenario both ways); a point's row reports the build time of the
// expansion it used. Safe to use from many threads: a point that needs an expansion
// another thread is building waits for it.

#include <cstddef>
#include <functional>
#include <future>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "sim/run/training_expansion.hpp"
#include "sweep/scenario_edit.hpp"

namespace strait::sweep::detail {

class ExpansionCache {
 public:
  using Expansion = std::shared_ptr<const sim::run::TrainingExpansion>;

  /// Keeps the `capacity` expansions used last (each holds a whole job's ops).
  explicit ExpansionCache(std::size_t capacity = 4) : capacity_(capacity) {}

  /// Whether an edit changes only the network's performance: a cluster link's
  /// "bandwidth", "latency" or "link_latency".
  static bool network_only(const Edit& edit);
  /// What a point's expansion depends on: its edits less the network-only ones.
  static std::string key(const std::vector<Edit>& edits);

  /// The expansion for `key`, made by `build` when no point has made it (or it was
  /// evicted). An exception from `build` reaches every point waiting on that key.
  Expansion get(const std::string& key, const std::function<sim::run::TrainingExpansion()>& build);

 private:
  struct Entry {
    std::string key;
    std::shared_future<Expansion> expansion;
  };
  std::size_t capacity_;
  std::mutex mutex_;
  std::list<Entry> entries_;  // most recently used first
};

}  // namespace strait::sweep::detail
