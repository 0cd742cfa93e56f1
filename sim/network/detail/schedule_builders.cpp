// Over 400 lines: the algorithm builders (ring, tree, hierarchical, all-to-all) share
// BuildContext and are read side by side.

#include "sim/network/detail/schedule_builders.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace strait::sim::network::detail {
namespace {

[[noreturn]] void unsupported(const BuildContext& ctx) {
  throw Error(fmt::format("collective: algorithm '{}' is not available for {}",
                          to_string(ctx.schedule.algorithm), to_string(ctx.spec.op)));
}

int ring_channels(const BuildContext& ctx) {
  const auto& layout = ctx.layout;
  int channels = ctx.options.channels > 0
                     ? ctx.options.channels
                     : (layout.hosts.size() > 1 && layout.uniform_hosts ? layout.rails : 1);
  if (!layout.uniform_hosts) channels = 1;
  return std::clamp(channels, 1, static_cast<int>(layout.hosts.front().size()));
}

// A chain from the root along topology order: chain[0] is the root.
std::vector<int> chain_from_root(const RankLayout& layout, int root) {
  std::vector<int> chain = layout.order;
  std::rotate(chain.begin(), std::find(chain.begin(), chain.end(), root), chain.end());
  return chain;
}

// Broadcast (down = true) or reduce (down = false) along a chain, pipelined in chunks.
void build_chain(BuildContext& ctx, bool down) {
  const auto chain = chain_from_root(ctx.layout, ctx.spec.root);
  const int n = static_cast<int>(chain.size());
  ctx.schedule.chunks = chunk_count(ctx.spec.bytes, ctx.options);
  for (int k = 0; k < n - 1; ++k) {
    Phase p;
    p.name = down ? "broadcast/chain" : "reduce/chain";
    const int from = down ? k : n - 1 - k;
    const int to = down ? k + 1 : n - 2 - k;
    p.transfers.push_back({chain[static_cast<std::size_t>(from)],
                           chain[static_cast<std::size_t>(to)], ctx.spec.bytes});
    ctx.schedule.phases.push_back(std::move(p));
  }
}

}  // namespace

int chunk_count(Bytes bytes, const ScheduleOptions& options) {
  if (options.chunk_bytes <= 0 || bytes <= options.chunk_bytes) return 1;
  return static_cast<int>(
      std::min<Bytes>(divide_up(bytes, options.chunk_bytes), std::max(1, options.max_chunks)));
}

std::vector<std::vector<int>> channel_rings(const RankLayout& layout, int channels) {
  std::vector<std::vector<int>> rings(static_cast<std::size_t>(channels));
  const bool alternate = layout.hosts.size() % 2 == 0;
  for (int c = 0; c < channels; ++c) {
    auto& ring = rings[static_cast<std::size_t>(c)];
    ring.reserve(static_cast<std::size_t>(layout.n));
    for (std::size_t h = 0; h < layout.hosts.size(); ++h) {
      const auto& block = layout.hosts[h];
      const int g = static_cast<int>(block.size());
      for (int i = 0; i < g; ++i) {
        // Even hosts: c, c+1, ..., c-1; odd hosts (when alternating): c-1, c-2, ..., c.
        const int pos = (alternate && h % 2 == 1) ? ((c - 1 - i) % g + 2 * g) % g : (c + i) % g;
        ring.push_back(block[static_cast<std::size_t>(pos)]);
      }
    }
  }
  return rings;
}

void add_ring_step(Phase& phase, const std::vector<std::vector<int>>& rings, Bytes bytes) {
  phase.pipelined = true;
  if (bytes <= 0) return;
  for (const auto& ring : rings) {
    const std::size_t n = ring.size();
    if (n < 2) continue;
    for (std::size_t i = 0; i < n; ++i)
      phase.transfers.push_back({ring[i], ring[(i + 1) % n], bytes});
  }
}

void build_ring(BuildContext& ctx) {
  const auto op = ctx.spec.op;
  if (op == CollectiveOp::kBroadcast || op == CollectiveOp::kReduce) {
    build_chain(ctx, op == CollectiveOp::kBroadcast);
    return;
  }
  if (op != CollectiveOp::kAllReduce && op != CollectiveOp::kAllGather &&
      op != CollectiveOp::kReduceScatter) {
    unsupported(ctx);
  }
  const int n = ctx.layout.n;
  const int channels = ring_channels(ctx);
  ctx.schedule.channels = channels;
  const auto rings = channel_rings(ctx.layout, channels);
  const Bytes step_bytes = divide_up(ctx.spec.bytes, static_cast<std::int64_t>(n) * channels);
  auto add = [&](const char* name) {
    Phase p;
    p.name = name;
    p.repeat = n - 1;
    add_ring_step(p, rings, step_bytes);
    ctx.schedule.phases.push_back(std::move(p));
  };
  if (op != CollectiveOp::kAllGather) add("reduce_scatter/ring");
  if (op != CollectiveOp::kReduceScatter) add("all_gather/ring");
}

// Depth of position i in a heap-ordered binary tree (the root, 0, at depth 0; the parent
// of i is (i - 1) / 2): NCCL's tree across hosts and NVLS tree's two trees.
int heap_depth(int i) {
  int d = 0;
  for (int x = i + 1; x > 1; x >>= 1) ++d;
  return d;
}

void build_tree(BuildContext& ctx) {
  const auto op = ctx.spec.op;
  if (op != CollectiveOp::kAllReduce && op != CollectiveOp::kBroadcast &&
      op != CollectiveOp::kReduce) {
    unsupported(ctx);
  }
  // NCCL's tree: a chain inside each host from its head, and a binary tree (heap layout)
  // over the hosts' heads; the root (rank 0 in topology order for all-reduce) heads the
  // first host. A reduction climbs every chain at once, then the tree's levels; a broadcast
  // goes down in reverse: 2 ((g - 1) + ceil(log2 h)) steps for h hosts of g ranks, the
  // count NCCL's tuner charges (intra-node steps, then log2(nNodes) network steps).
  const int root = op == CollectiveOp::kAllReduce ? ctx.layout.order[0] : ctx.spec.root;
  std::vector<std::vector<int>> chains = ctx.layout.hosts;
  for (std::size_t h = 0; h < chains.size(); ++h) {
    auto& chain = chains[h];
    const auto at = std::find(chain.begin(), chain.end(), root);
    if (at == chain.end()) continue;
    std::rotate(chain.begin(), at, chain.end());
    std::rotate(chains.begin(), chains.begin() + static_cast<std::ptrdiff_t>(h),
                chains.begin() + static_cast<std::ptrdiff_t>(h) + 1);
    break;
  }
  std::size_t longest = 0;
  for (const auto& chain : chains) longest = std::max(longest, chain.size());
  const int hosts = static_cast<int>(chains.size());
  const int max_depth = heap_depth(hosts - 1);
  ctx.schedule.chunks = chunk_count(ctx.spec.bytes, ctx.options);
  auto add = [&](const char* name, auto&& edges) {
    Phase p;
    p.name = name;
    edges(p);
    if (!p.transfers.empty()) ctx.schedule.phases.push_back(std::move(p));
  };
  auto chain_step = [&](std::size_t pos, bool up) {
    add(up ? "reduce/tree_chain" : "broadcast/tree_chain", [&](Phase& p) {
      for (const auto& chain : chains) {
        if (pos >= chain.size()) continue;
        const int child = chain[pos], parent = chain[pos - 1];
        p.transfers.push_back(up ? Transfer{child, parent, ctx.spec.bytes}
                                 : Transfer{parent, child, ctx.spec.bytes});
      }
    });
  };
  auto tree_level = [&](int level, bool up) {
    add(up ? "reduce/tree" : "broadcast/tree", [&](Phase& p) {
      for (int i = 1; i < hosts; ++i) {
        if (heap_depth(i) != level) continue;
        const int child = chains[static_cast<std::size_t>(i)].front();
        const int parent = chains[static_cast<std::size_t>((i - 1) / 2)].front();
        p.transfers.push_back(up ? Transfer{child, parent, ctx.spec.bytes}
                                 : Transfer{parent, child, ctx.spec.bytes});
      }
    });
  };
  if (op != CollectiveOp::kBroadcast) {
    for (std::size_t pos = longest; pos-- > 1;) chain_step(pos, true);
    for (int level = max_depth; level >= 1; --level) tree_level(level, true);
  }
  if (op != CollectiveOp::kReduce) {
    for (int level = 1; level <= max_depth; ++level) tree_level(level, false);
    for (std::size_t pos = 1; pos < longest; ++pos) chain_step(pos, false);
  }
}

void build_hierarchical(BuildContext& ctx) {
  const auto op = ctx.spec.op;
  if (op == CollectiveOp::kAllToAll || op == CollectiveOp::kAllToAllV) {
    build_all_to_all(ctx);
    return;
  }
  if (op != CollectiveOp::kAllReduce) unsupported(ctx);
  const auto& layout = ctx.layout;
  if (!layout.uniform_hosts || !layout.uniform_datacenters) {
    throw Error(
        "collective: hierarchical all_reduce needs the same number of ranks on every host and "
        "of hosts in every datacenter");
  }
  const auto g = static_cast<std::int64_t>(layout.hosts.front().size());
  const auto h = static_cast<std::int64_t>(layout.datacenters.front().size());
  const auto d = static_cast<std::int64_t>(layout.datacenters.size());
  const Bytes s = ctx.spec.bytes;

  // Level 1: inside each host. Level 2: across the hosts of a datacenter, one ring per
  // local position. Level 3: across datacenters, one ring per (host position, local position).
  std::vector<std::vector<int>> host_rings = layout.hosts;
  std::vector<std::vector<int>> dc_rings, cross_rings;
  for (const auto& dc : layout.datacenters) {
    for (std::int64_t l = 0; l < g; ++l) {
      std::vector<int> ring;
      ring.reserve(dc.size());
      for (int host : dc)
        ring.push_back(layout.hosts[static_cast<std::size_t>(host)][static_cast<std::size_t>(l)]);
      dc_rings.push_back(std::move(ring));
    }
  }
  for (std::int64_t j = 0; j < h; ++j) {
    for (std::int64_t l = 0; l < g; ++l) {
      std::vector<int> ring;
      for (const auto& dc : layout.datacenters) {
        ring.push_back(layout.hosts[static_cast<std::size_t>(dc[static_cast<std::size_t>(j)])]
                                   [static_cast<std::size_t>(l)]);
      }
      cross_rings.push_back(std::move(ring));
    }
  }
  auto add = [&](const char* name, const std::vector<std::vector<int>>& rings, std::int64_t steps,
                 Bytes bytes) {
    if (steps <= 0) return;
    Phase p;
    p.name = name;
    p.repeat = static_cast<int>(steps);
    add_ring_step(p, rings, bytes);
    ctx.schedule.phases.push_back(std::move(p));
  };
  add("reduce_scatter/host", host_rings, g - 1, divide_up(s, g));
  add("reduce_scatter/datacenter", dc_rings, h - 1, divide_up(s, g * h));
  // Across datacenters latency dominates: exchange directly (every member sends each other
  // member its slice: a reduce-scatter, then the same for the all-gather) in 2 phases
  // instead of a ring's 2(d-1), with the same bytes per rank.
  if (d > 1) {
    for (const char* name : {"reduce_scatter/cross_dc", "all_gather/cross_dc"}) {
      Phase p;
      p.name = name;
      const Bytes slice = divide_up(s, g * h * d);
      for (const auto& group : cross_rings) {
        for (int from : group) {
          for (int to : group) {
            if (from != to) p.transfers.push_back({from, to, slice});
          }
        }
      }
      ctx.schedule.phases.push_back(std::move(p));
    }
  }
  add("all_gather/datacenter", dc_rings, h - 1, divide_up(s, g * h));
  add("all_gather/host", host_rings, g - 1, divide_up(s, g));
}

namespace {

// What rank `from` sends rank `to` in an all-to-all: its all_to_allv matrix entry, else an
// n-th of its own size (per-rank sizes) or of the spec's.
class AllToAllSizes {
 public:
  explicit AllToAllSizes(const BuildContext& ctx)
      : spec_(ctx.spec),
        n_(ctx.layout.n),
        matrix_(ctx.spec.op == CollectiveOp::kAllToAllV),
        uniform_(divide_up(ctx.spec.bytes, n_)) {}

  Bytes operator()(int from, int to) const {
    if (matrix_)
      return spec_.send_matrix[static_cast<std::size_t>(from) * static_cast<std::size_t>(n_) +
                               static_cast<std::size_t>(to)];
    return spec_.send_bytes.empty()
               ? uniform_
               : divide_up(spec_.send_bytes[static_cast<std::size_t>(from)], n_);
  }
  // Every rank sends the same to every other.
  bool same_share() const {
    return !matrix_ && std::all_of(spec_.send_bytes.begin(), spec_.send_bytes.end(),
                                   [&](Bytes b) { return divide_up(b, n_) == (*this)(0, 1); });
  }

 private:
  const CollectiveSpec& spec_;
  int n_;
  bool matrix_;
  Bytes uniform_;
};

void add_transfer_if_any(Phase& p, int from, int to, Bytes b) {
  if (from != to && b > 0) p.transfers.push_back({from, to, b});
}

void build_direct_all_to_all(BuildContext& ctx, const AllToAllSizes& bytes) {
  const int n = ctx.layout.n;
  Phase p;
  p.name = "all_to_all/direct";
  // Every rank sending the same to every other: one implicit all-pairs phase, not n^2
  // stored transfers (see schedule.hpp).
  if (bytes.same_share()) {
    p.all_pairs = bytes(0, 1);
    ctx.schedule.phases.push_back(std::move(p));
    return;
  }
  // Sized once: an all_to_allv of 256 ranks lists 65,280 transfers (1 MiB), and growing
  // by doubling wrote each about twice, into fresh memory every time.
  p.transfers.reserve(static_cast<std::size_t>(n) * static_cast<std::size_t>(n - 1));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) add_transfer_if_any(p, i, j, bytes(i, j));
  }
  ctx.schedule.phases.push_back(std::move(p));
}

void build_pairwise_all_to_all(BuildContext& ctx, const AllToAllSizes& bytes) {
  const int n = ctx.layout.n;
  const auto& order = ctx.layout.order;
  for (int k = 1; k < n; ++k) {
    Phase p;
    p.name = "all_to_all/pairwise";
    p.transfers.reserve(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      const int from = order[static_cast<std::size_t>(i)];
      const int to = order[static_cast<std::size_t>((i + k) % n)];
      add_transfer_if_any(p, from, to, bytes(from, to));
    }
    ctx.schedule.phases.push_back(std::move(p));
  }
}

// Hierarchical (2D): inside each host, (a,l) hands (a,l') everything bound for local
// position l' on any host; then same-position ranks exchange across hosts pairwise,
// so scale-out traffic stays on each rank's own rail.
void build_hierarchical_all_to_all(BuildContext& ctx, const AllToAllSizes& bytes) {
  const auto& layout = ctx.layout;
  if (!layout.uniform_hosts) {
    throw Error("collective: hierarchical all_to_all needs the same number of ranks on every host");
  }
  const int hosts = static_cast<int>(layout.hosts.size());
  const int g = static_cast<int>(layout.hosts.front().size());
  auto rank_at = [&](int a, int l) {
    return layout.hosts[static_cast<std::size_t>(a)][static_cast<std::size_t>(l)];
  };
  Phase intra;
  intra.name = "all_to_all/host";
  for (int a = 0; a < hosts; ++a) {
    for (int l = 0; l < g; ++l) {
      for (int lp = 0; lp < g; ++lp) {
        Bytes sum = 0;
        for (int b = 0; b < hosts; ++b) sum += bytes(rank_at(a, l), rank_at(b, lp));
        add_transfer_if_any(intra, rank_at(a, l), rank_at(a, lp), sum);
      }
    }
  }
  ctx.schedule.phases.push_back(std::move(intra));
  for (int k = 1; k < hosts; ++k) {
    Phase p;
    p.name = "all_to_all/cross_host";
    for (int a = 0; a < hosts; ++a) {
      const int b = (a + k) % hosts;
      for (int l = 0; l < g; ++l) {
        Bytes sum = 0;
        for (int lp = 0; lp < g; ++lp) sum += bytes(rank_at(a, lp), rank_at(b, l));
        add_transfer_if_any(p, rank_at(a, l), rank_at(b, l), sum);
      }
    }
    ctx.schedule.phases.push_back(std::move(p));
  }
}

}  // namespace

void build_all_to_all(BuildContext& ctx) {
  const AllToAllSizes bytes(ctx);
  if (ctx.schedule.algorithm == Algorithm::kDirect) {
    build_direct_all_to_all(ctx, bytes);
  } else if (ctx.schedule.algorithm == Algorithm::kPairwise) {
    build_pairwise_all_to_all(ctx, bytes);
  } else {
    build_hierarchical_all_to_all(ctx, bytes);
  }
}

void build_nvls(BuildContext& ctx) {
  // NVLink SHARP all-reduce: rank i owns slice i; the switch sums every rank's slice i
  // for its owner (multimem ld_reduce) and multicasts the result (multimem st), the two
  // halves pipelined. On the wire that is each rank sending its slice j to rank j and
  // receiving every rank's slice of its own: one phase of S/n to every other rank.
  const int n = ctx.layout.n;
  const Bytes slice = divide_up(ctx.spec.bytes, n);
  Phase p;
  p.name = "all_reduce/nvls";
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i != j && slice > 0) p.transfers.push_back({i, j, slice});
    }
  }
  ctx.schedule.phases.push_back(std::move(p));
}

// NVLS tree and CollNet: a lane per chunk of the options, up to max_chunks (Network::
// resolve may choose fewer). A lane is one of NCCL's chunks; what is in flight at once is
// a lane per stage (2 ceil(log2 h) + 2 for NVLS tree), near NCCL_STEPS (8) per channel.
// Capping the lanes at 8 made the pipeline's fill (stages - 1 lanes) 40-90% of an 8 GiB
// all-reduce on 8-16 hosts (NVLS tree 290 and 266 GB/s busbw against 321-356 measured).
int pipeline_depth(const BuildContext& ctx) { return chunk_count(ctx.spec.bytes, ctx.options); }

// One of NVLS's two in-host stages inside NVLS tree and CollNet: the switch's reduce
// (multimem ld_reduce) or its multicast (multimem st) of every host's g slices. Single-host
// NVLS (build_nvls) moves both as one phase of S/g to every other rank at NVLS's bandwidth
// share; each stage here is half of that phase (S/2g to every other rank), marked `nvls`
// so that apply_protocol gives it NVLS's share, and the two together cost what NVLS does
// on one host. As full point-to-point copies (S/g each, 1.75 S over each GPU's NVLink for
// the pair) they capped 2-host NVLS tree at 372 GB/s busbw against 469 measured.
void add_nvls_stage(BuildContext& ctx, const char* name, Bytes slice) {
  Phase p;
  p.name = name;
  p.nvls = true;
  const Bytes half = divide_up(slice, 2);
  for (const auto& host : ctx.layout.hosts) {
    for (int from : host) {
      for (int to : host) {
        if (from != to && half > 0) p.transfers.push_back({from, to, half});
      }
    }
  }
  ctx.schedule.phases.push_back(std::move(p));
}

// The ranks at each local position, one per host (host order): rails[l][i] is host i's
// rank l.
std::vector<std::vector<int>> ranks_by_position(const RankLayout& layout) {
  std::vector<std::vector<int>> rails(layout.hosts.front().size());
  for (std::size_t l = 0; l < rails.size(); ++l) {
    for (const auto& host : layout.hosts) rails[l].push_back(host[l]);
  }
  return rails;
}

void build_nvls_tree(BuildContext& ctx) {
  // NVLS reduce inside each host leaves local rank l with slice l of its host's sum; the
  // ranks of local position l all-reduce that slice across hosts on NCCL's double binary
  // tree; NVLS multicast spreads the slices inside each host. The stages are pipelined
  // chunk by chunk. The double binary tree: two heap-ordered binary trees over the hosts,
  // the second mirrored (host i at position h - 1 - i) so that the first one's leaves are
  // its inner nodes, each carrying half the slice: a NIC moves about 2 slices each way
  // (one at 2 hosts, where both trees are the one edge), against a ring's 2 (h - 1) / h,
  // in 2 ceil(log2 h) network steps instead of 2 (h - 1).
  ctx.schedule.chunks = pipeline_depth(ctx);
  const auto g = static_cast<std::int64_t>(ctx.layout.hosts.front().size());
  const int h = static_cast<int>(ctx.layout.hosts.size());
  const Bytes slice = divide_up(ctx.spec.bytes, g);
  const Bytes half = divide_up(slice, 2);
  const auto rails = ranks_by_position(ctx.layout);
  const int max_depth = heap_depth(h - 1);
  // Level `level`'s edges of both trees, child -> parent (up) or parent -> child.
  auto tree_level = [&](int level, bool up) {
    Phase p;
    p.name = up ? "reduce/nvls_tree" : "broadcast/nvls_tree";
    for (const auto& rail : rails) {
      for (int mirrored = 0; mirrored < 2; ++mirrored) {
        const auto host = [&](int position) {
          return rail[static_cast<std::size_t>(mirrored ? h - 1 - position : position)];
        };
        for (int i = 1; i < h; ++i) {
          if (heap_depth(i) != level || half <= 0) continue;
          const int child = host(i), parent = host((i - 1) / 2);
          p.transfers.push_back(up ? Transfer{child, parent, half} : Transfer{parent, child, half});
        }
      }
    }
    ctx.schedule.phases.push_back(std::move(p));
  };
  add_nvls_stage(ctx, "reduce/nvls", slice);
  for (int level = max_depth; level >= 1; --level) tree_level(level, true);
  for (int level = 1; level <= max_depth; ++level) tree_level(level, false);
  add_nvls_stage(ctx, "broadcast/nvls", slice);
}

void build_collnet(BuildContext& ctx) {
  // CollNet (SHARP): inside each host a reduce leaves local rank l with slice l of the
  // host's sum (NVLS where the switch has it, else a ring reduce-scatter); the rank sends
  // its slice up its NIC to the switch tree, which sums the slices of every host and sends
  // the result back down; a broadcast inside the host (NVLS or a ring all-gather) ends it.
  // On the wire the switch step is each NIC sending S/g up and receiving S/g down once: one
  // ring step of S/g among the ranks of each local position has the same NIC loads (and
  // one network step's latency), so it stands for the switch tree here. NCCL pipelines the
  // three stages chunk by chunk (in-host and network links work at once): lanes here.
  ctx.schedule.chunks = pipeline_depth(ctx);
  const auto& hosts = ctx.layout.hosts;
  const auto g = static_cast<std::int64_t>(hosts.front().size());
  const Bytes slice = divide_up(ctx.spec.bytes, g);
  const bool nvls = ctx.cluster.comm().nvls && g > 1;
  auto in_host = [&](const char* name) {
    if (nvls) {
      add_nvls_stage(ctx, name, slice);
      return;
    }
    Phase p;
    p.name = name;
    p.repeat = static_cast<int>(g - 1);
    add_ring_step(p, hosts, slice);
    ctx.schedule.phases.push_back(std::move(p));
  };
  in_host(nvls ? "reduce/nvls" : "reduce_scatter/host");
  Phase sharp;
  sharp.name = "all_reduce/sharp";
  add_ring_step(sharp, ranks_by_position(ctx.layout), slice);
  ctx.schedule.phases.push_back(std::move(sharp));
  in_host(nvls ? "broadcast/nvls" : "all_gather/host");
}

void build_phases(BuildContext& ctx) {
  const auto op = ctx.spec.op;
  if (op == CollectiveOp::kSendRecv) {
    if (ctx.schedule.algorithm != Algorithm::kDirect) unsupported(ctx);
    Phase p;
    p.name = "sendrecv";
    if (ctx.spec.root != ctx.spec.peer && ctx.spec.bytes > 0) {
      p.transfers.push_back({ctx.spec.root, ctx.spec.peer, ctx.spec.bytes});
    }
    ctx.schedule.phases.push_back(std::move(p));
    return;
  }
  switch (ctx.schedule.algorithm) {
    case Algorithm::kRing:
      build_ring(ctx);
      return;
    case Algorithm::kTree:
      build_tree(ctx);
      return;
    case Algorithm::kHierarchical:
      build_hierarchical(ctx);
      return;
    case Algorithm::kDirect:
    case Algorithm::kPairwise:
      if (op != CollectiveOp::kAllToAll && op != CollectiveOp::kAllToAllV) unsupported(ctx);
      build_all_to_all(ctx);
      return;
    case Algorithm::kNvls:
      if (op != CollectiveOp::kAllReduce) unsupported(ctx);
      build_nvls(ctx);
      return;
    case Algorithm::kNvlsTree:
      if (op != CollectiveOp::kAllReduce) unsupported(ctx);
      build_nvls_tree(ctx);
      return;
    case Algorithm::kCollNet:
      if (op != CollectiveOp::kAllReduce) unsupported(ctx);
      build_collnet(ctx);
      return;
    case Algorithm::kAuto:
      break;
  }
  unsupported(ctx);
}

}  // namespace strait::sim::network::detail
