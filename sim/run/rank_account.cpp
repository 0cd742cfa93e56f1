#include "sim/run/rank_account.hpp"

#include <algorithm>

#include "sim/run/detail/wait_chain.hpp"

namespace strait::sim::run {

namespace {

using workload::OpKind;

// OpTimes (whole ops, times per op) in the shape account_wait_chain reads.
struct WholeOpTimes {
  const OpTimes& t;
  static std::size_t u(std::int32_t i) { return static_cast<std::size_t>(i); }
  bool collective(std::int32_t i) const { return t.ops[u(i)].kind == OpKind::kCollective; }
  workload::CommClass comm_class(std::int32_t i) const { return t.ops[u(i)].collective.comm_class; }
  Time issued(std::int32_t i) const { return t.issued[u(i)]; }
  Time started(std::int32_t i) const { return t.started[u(i)]; }
  Time ended(std::int32_t i) const { return t.ended[u(i)]; }
  std::int32_t stream_prev(std::int32_t i) const {
    // The previous op on i's stream (its ops are in increasing index).
    const auto& on_stream = t.stream_ops[static_cast<std::size_t>(t.ops[u(i)].stream)];
    const auto at = std::lower_bound(on_stream.begin(), on_stream.end(), i);
    return at == on_stream.begin() ? detail::kNone : *(at - 1);
  }
  template <class F>
  void for_each_dep(std::int32_t i, F f) const {
    for (auto d : t.ops[u(i)].deps) f(d);
  }
};

}  // namespace

Time RankAccount::exposed_comm_total() const {
  Time sum = Time::zero();
  for (const auto& t : exposed_comm) sum += t;
  return sum;
}

void account_tail(RankAccount& a, Time from, Time makespan, std::vector<CollectiveSpan> spans) {
  if (makespan <= from) return;
  std::erase_if(spans, [&](const CollectiveSpan& s) {
    return s.end <= from || s.start >= makespan || s.end <= s.start;
  });
  std::vector<Time> cuts = {from, makespan};
  for (const auto& s : spans) {
    cuts.push_back(std::max(s.start, from));
    cuts.push_back(std::min(s.end, makespan));
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
    const Time lo = cuts[k], hi = cuts[k + 1];
    const CollectiveSpan* running = nullptr;
    for (const auto& s : spans) {
      if (s.start <= lo && s.end >= hi && (!running || s.end > running->end)) running = &s;
    }
    if (running) {
      a.exposed_comm[static_cast<std::size_t>(running->comm_class)] += hi - lo;
    } else {
      a.straggler_wait += hi - lo;
    }
  }
}

std::vector<std::vector<std::int32_t>> ops_by_stream(const std::vector<workload::Op>& ops) {
  std::vector<std::vector<std::int32_t>> out;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto s = static_cast<std::size_t>(ops[i].stream);
    if (s >= out.size()) out.resize(s + 1);
    out[s].push_back(static_cast<std::int32_t>(i));
  }
  return out;
}

void account_wait(RankAccount& a, Time idle_since, Time now, std::int32_t blocker,
                  const OpTimes& times) {
  detail::account_wait_chain(a, idle_since, now, blocker, WholeOpTimes{times});
}

RankAccount per_step(const RankAccount& a, std::int64_t steps) {
  RankAccount out = a;
  const std::int64_t k = std::max<std::int64_t>(1, steps);
  auto div = [k](Time t) { return Time::from_ps(t.ps() / k); };
  out.compute = div(a.compute);
  out.straggler_wait = div(a.straggler_wait);
  out.bubble = div(a.bubble);
  for (auto& t : out.exposed_comm) t = div(t);
  out.flops = a.flops / static_cast<double>(k);
  return out;
}

}  // namespace strait::sim::run
