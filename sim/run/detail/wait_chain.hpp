#pragma once
// account_wait's rule over any store of a rank's op times: the executor's whole ops
// (rank_account.cpp) and a rank of the replay as it runs (detail/rank_state.hpp), which
// books every compute-stream gap through it, so it is a template, inlined there.

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "sim/run/rank_account.hpp"

namespace strait::sim::run::detail {

/// No op (a stream's first op has no predecessor; an op without dependencies waited for none).
inline constexpr std::int32_t kNone = -1;

/// account_wait (rank_account.hpp) on `times`, which has per op i: collective(i),
/// comm_class(i), issued(i), started(i), ended(i), stream_prev(i) (kNone: none) and
/// for_each_dep(i, f).
template <class Times>
void account_wait_chain(RankAccount& a, Time idle_since, Time now, std::int32_t blocker,
                        const Times& times) {
  if (now <= idle_since) return;
  const auto live_collective = [&](std::int32_t i) {
    return i >= 0 && times.collective(i) && times.ended(i) > idle_since;
  };
  if (!live_collective(blocker)) {
    a.bubble += now - idle_since;
    return;
  }
  Time hi = now;
  for (std::int32_t b = blocker; live_collective(b) && hi > idle_since;) {
    const Time started = std::clamp(times.started(b), idle_since, hi);
    a.exposed_comm[static_cast<std::size_t>(times.comm_class(b))] += hi - started;
    const Time issued = std::clamp(times.issued(b), idle_since, started);
    a.straggler_wait += started - issued;
    hi = issued;
    std::int32_t next = times.stream_prev(b);
    times.for_each_dep(b, [&](std::int32_t d) {
      if (next == kNone || times.ended(d) > times.ended(next)) next = d;
    });
    b = next;
  }
  a.straggler_wait += hi - idle_since;
}

}  // namespace strait::sim::run::detail
