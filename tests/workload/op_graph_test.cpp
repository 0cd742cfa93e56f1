// One rank, one table, one MLP layer: every kernel checked by hand.
//   table t0: 1000 rows, dim 16, sum pooling, pooling factor 2; 13 dense features... here 32;
//   batch B = 128 samples; top MLP one layer 48 -> 64 (48 = 16 pooled + 32 dense features).
//   emb/lookup      ids = 2 x 128 = 256; flops = 256 x 16 = 4096;
//                   bytes = 256 x (16 x 4 + 8) + 128 x 16 x 4 = 26624
//   top_mlp.0/fwd   GEMM m = 128, n = 64, k = 48: flops 2 x 128 x 48 x 64 = 786432,
//                   bytes (128 x 48 + 48 x 64 + 128 x 64) x 2 (bf16) = 34816
//   top_mlp.0/bwd   2 x forward flops = 1572864
//   one rank: no collectives; ops in order lookup, fwd, loss, loss bwd, bwd, update, optimizer.
#include <map>

#include <gtest/gtest.h>

#include "sim/workload/memory_model.hpp"
#include "sim/workload/op_graph_builder.hpp"
#include "sim/workload/op_graph_json.hpp"
#include "test_support.hpp"

namespace strait::sim::workload {
namespace {

using testing_support::scenario_of;

const char* kOneLayerModel = R"({"embedding": {"tables": [{"name": "t0", "rows": 1000, "dim": 16}]},
  "dense": {"dense_features": 32, "top_mlp": {"layers": [64]}}})";
const char* kFixedData = R"({"batch_size": {"per_rank": 128},
  "pooling_factors": {"default": {"distribution": "fixed", "value": 2}}})";

TEST(OpGraph, OneRankOneLayerHasExactlyTheHandComputedKernels) {
  const auto sc = scenario_of("hgx-h100-8.json", kOneLayerModel, kFixedData, R"({"ranks": 1})");
  const OpGraph g = build_op_graph(sc);
  ASSERT_EQ(g.ranks.size(), 1u);
  const auto& ops = g.ranks[0].ops;
  std::vector<std::string> names;
  for (const auto& op : ops) names.push_back(g.names[static_cast<std::size_t>(op.name)]);
  EXPECT_EQ(names, (std::vector<std::string>{"emb/lookup", "top_mlp.0/fwd", "loss/fwd", "loss/bwd",
                                             "top_mlp.0/bwd", "emb/update", "optimizer"}));
  for (const auto& op : ops) EXPECT_EQ(op.kind, OpKind::kKernel);
  EXPECT_DOUBLE_EQ(ops[0].kernel.flops, 4096);
  EXPECT_DOUBLE_EQ(ops[0].kernel.hbm_bytes, 26624);
  EXPECT_EQ(ops[0].kernel.embedding_dim, 16);
  const Kernel& fwd = ops[1].kernel;
  EXPECT_EQ(fwd.kind, KernelKind::kGemm);
  EXPECT_EQ(fwd.m, 128);
  EXPECT_EQ(fwd.n, 64);
  EXPECT_EQ(fwd.k, 48);
  EXPECT_DOUBLE_EQ(fwd.flops, 786432);
  EXPECT_DOUBLE_EQ(fwd.hbm_bytes, 34816);
  EXPECT_DOUBLE_EQ(ops[4].kernel.flops, 2 * 786432.0);
  EXPECT_EQ(g.ranks[0].samples, 128);
  // Deps point backwards and the optimizer waits for the embedding update.
  for (std::size_t i = 0; i < ops.size(); ++i) {
    for (auto d : ops[i].deps) EXPECT_LT(static_cast<std::size_t>(d), i);
  }
  const auto& opt_deps = ops.back().deps;
  EXPECT_NE(std::find(opt_deps.begin(), opt_deps.end(), 5), opt_deps.end());
}

// HSTU attention forward on one rank with fixed length L = 100, B = 4, h = 2, d = 32:
//   flops = 2 h (dqk + dv) sum L(L+1)/2 = 4 h d x 4 x 5050 = 4 x 2 x 32 x 20200 = 5171200;
//   backward = 2.5 x forward; mean_length 100.
TEST(OpGraph, JaggedAttentionFlopsFollowCausalPairs) {
  const auto sc = scenario_of("hgx-h100-8.json", testing_support::kSmallHstu,
                              R"({"batch_size": {"per_rank": 4}, "max_length": 1000,
                                  "sequence_length": {"distribution": "fixed", "value": 100}})",
                              R"({"ranks": 1})");
  const OpGraph g = build_op_graph(sc);
  const Op* fwd = nullptr;
  const Op* bwd = nullptr;
  for (const auto& op : g.ranks[0].ops) {
    if (g.names[static_cast<std::size_t>(op.name)] == "hstu.0/attention") fwd = &op;
    if (g.names[static_cast<std::size_t>(op.name)] == "hstu.0/attention_bwd") bwd = &op;
  }
  ASSERT_NE(fwd, nullptr);
  ASSERT_NE(bwd, nullptr);
  EXPECT_EQ(fwd->kernel.kind, KernelKind::kJaggedAttention);
  EXPECT_DOUBLE_EQ(fwd->kernel.flops, 5171200);
  EXPECT_DOUBLE_EQ(bwd->kernel.flops, 2.5 * 5171200);
  EXPECT_DOUBLE_EQ(fwd->kernel.mean_length, 100);
  EXPECT_EQ(fwd->kernel.heads, 2);
  EXPECT_EQ(fwd->kernel.head_dim, 32);
}

TEST(OpGraph, JsonOfOneRankNamesStreamsAndGroups) {
  const auto sc = scenario_of("hgx-h100-8.json", kOneLayerModel, kFixedData,
                              R"({"sparse": {"default": "row_wise"}})");
  const OpGraph g = build_op_graph(sc);
  const auto j = to_json(g, 3);
  EXPECT_EQ(j["rank"], 3);
  const auto& first = j["ops"][0];
  EXPECT_EQ(first["name"], "emb/input_dist");
  EXPECT_EQ(first["stream"], "embedding_comm");
  EXPECT_EQ(first["collective"]["group"], "sparse_mp");
  EXPECT_EQ(first["collective"]["group_ranks"].size(), 8u);
  // Row-wise: every member gets 1/8 of the ids: 256 x 8 / 8 + 128 x 4 bytes each.
  EXPECT_EQ(first["collective"]["op"], "all_to_all");
  EXPECT_EQ(first["collective"]["bytes"], 8 * (256 + 512));
  EXPECT_THROW(to_json(g, 8), Error);
}

// The embedding all-to-alls' element types (TorchRec's QCommsConfig). t0 table-wise on
// member 0 of 8, dim 16, 128 samples a rank: member 0 sends each member 128 x 16 pooled
// values, 8,192 bytes in fp32 (the weights' type; 65,536 for the 8 members, the op's size
// as nccl-tests counts it), 4,096 with "forward": "fp16"; each member sends member 0 their
// gradients: 8,192 bytes unless "backward" says bf16 (4,096).
TEST(OpGraph, CommPrecisionSetsTheEmbeddingAllToAllBytes) {
  auto rows = [](const char* comm) {
    const auto sc =
        scenario_of("hgx-h100-8.json", kOneLayerModel, kFixedData,
                    std::string(R"({"sparse": {"default": {"type": "table_wise", "ranks": [0]})") +
                        comm + "}}");
    const OpGraph g = build_op_graph(sc);
    std::pair<Json, Json> out;  // rank 0's output_dist size, rank 3's grad_dist row
    const Json rank0 = to_json(g, 0), rank3 = to_json(g, 3);
    for (const auto& op : rank0["ops"])
      if (op["name"] == "emb/output_dist") out.first = op["collective"]["bytes"];
    for (const auto& op : rank3["ops"])
      if (op["name"] == "emb/grad_dist") out.second = op["collective"]["send_row"];
    return out;
  };
  const auto fp32 = rows("");
  EXPECT_EQ(fp32.first, 8 * 8192);
  EXPECT_EQ(fp32.second[0], 8192);
  const auto fwd16 = rows(R"(, "comm_precision": {"forward": "fp16"})");
  EXPECT_EQ(fwd16.first, 8 * 4096);
  EXPECT_EQ(fwd16.second[0], 8192);
  const auto both = rows(R"(, "comm_precision": {"forward": "fp16", "backward": "bf16"})");
  EXPECT_EQ(both.first, 8 * 4096);
  EXPECT_EQ(both.second[0], 4096);
  EXPECT_EQ(both.second[3], 0);  // nothing to itself
}

// Hybrid embedding: t0 (1,000 rows, dim 16, pooling 2, uniform ids, 128 samples a rank)
// row-wise over 8 members with its 250 hottest rows on every rank: h = 250 / 1000 = 0.25
// of the ids stay local.
//   input dist, each member to each: 256 x 0.75 / 8 ids x 8 B + 128 x 4 B = 704 (768 without;
//   the op's size counts the 8 members, as nccl-tests does)
//   output dist: a sample needs the shards unless both its ids are hot:
//     128 x (1 - 0.25^2) = 120 pooled rows x 16 x 4 B = 7,680 to each member, 61,440 in all
//   dense sync: the hot rows' gradients join the DDP bucket: 12,544 + 250 x 16 x 4 = 28,544
//   memory: weights 1,000 x 16 x 4 / 8 + 250 x 16 x 4 = 8,000 + 16,000 B per rank
TEST(OpGraph, HybridTablesKeepTheirHotRowsLocal) {
  const char* data = R"({"batch_size": {"per_rank": 128}, "id_skew": {"default": 0},
    "pooling_factors": {"default": {"distribution": "fixed", "value": 2}}})";
  auto run = [&](const char* table) {
    const auto sc = scenario_of("hgx-h100-8.json", kOneLayerModel, data,
                                std::string(R"({"sparse": {"tables": {"t0": )") + table + "}}}");
    const Json rank3 = to_json(build_op_graph(sc), 3);
    std::map<std::string, Json> ops;
    for (const auto& op : rank3["ops"])
      if (op.contains("collective")) ops[op["name"]] = op["collective"];
    return std::pair{ops, memory_per_rank(sc).ranks[3].term("embedding_weights")};
  };
  const auto [plain, plain_weights] = run(R"("row_wise")");
  EXPECT_EQ(plain.at("emb/input_dist")["bytes"], 8 * 768);
  EXPECT_EQ(plain.at("emb/output_dist")["bytes"], 8 * 8192);
  EXPECT_EQ(plain.at("ddp/bucket.0")["bytes"], 12544);
  EXPECT_DOUBLE_EQ(plain_weights, 8000);
  const auto [hybrid, hybrid_weights] = run(R"({"type": "row_wise", "hot_rows": 250})");
  EXPECT_EQ(hybrid.at("emb/input_dist")["bytes"], 8 * 704);
  EXPECT_EQ(hybrid.at("emb/grad_dist")["bytes"], 8 * 7680);
  EXPECT_EQ(hybrid.at("emb/output_dist")["bytes"], 8 * 7680);
  EXPECT_EQ(hybrid.at("ddp/bucket.0")["bytes"], 28544);
  EXPECT_DOUBLE_EQ(hybrid_weights, 8000 + 16000);
}

// Dense gradient sync, DDP buckets against HugeCTR's grouped all-reduce. Top MLP 48 -> 64 ->
// 64 on 8 ranks, t0 (1,000 x 16) replicated on every rank:
//   gradients, fp32: top_mlp.1 64 x 64 + 64 = 4,160 params = 16,640 B, top_mlp.0 48 x 64 + 64
//   = 3,136 = 12,544 B; t0 1,000 x 16 x 4 = 64,000 B
//   buckets of 4 KiB: top_mlp.1 fills bucket.0 (16,640), top_mlp.0 bucket.1 (12,544), and
//     t0 a last one after the embedding update: 64,000
//   grouped: one all-reduce after top_mlp.0's backward: 16,640 + 12,544 + 64,000 = 93,184;
//     "comm_precision": "fp16" halves it: 46,592
TEST(OpGraph, GroupedGradSyncIsOneAllReduceAfterTheDenseBackward) {
  const char* model = R"({"embedding": {"tables": [{"name": "t0", "rows": 1000, "dim": 16}]},
    "dense": {"dense_features": 32, "top_mlp": {"layers": [64, 64]}}})";
  auto syncs = [&](const char* dense) {
    const auto sc = scenario_of(
        "hgx-h100-8.json", model, kFixedData,
        std::string(R"({"sparse": {"default": "data_parallel"}, "dense": )") + dense + "}");
    const Json ops = to_json(build_op_graph(sc), 3)["ops"];
    std::vector<std::pair<Json, std::string>> out;  // bytes, the op it waits on first
    for (const auto& op : ops) {
      if (op["step"] != 0 || op["stream"] != "dense_comm") continue;
      out.emplace_back(op["collective"]["bytes"], ops[op["deps"][0].get<int>()]["name"]);
    }
    return out;
  };
  using Sync = std::vector<std::pair<Json, std::string>>;
  EXPECT_EQ(syncs(R"({"bucket_size": "4 KiB"})"),
            (Sync{{16640, "top_mlp.1/bwd"}, {12544, "top_mlp.0/bwd"}, {64000, "emb/update"}}));
  EXPECT_EQ(syncs(R"({"bucket_size": "4 KiB", "grad_sync": "grouped"})"),
            (Sync{{93184, "top_mlp.0/bwd"}}));
  EXPECT_EQ(syncs(R"({"grad_sync": "grouped", "comm_precision": "fp16"})"),
            (Sync{{46592, "top_mlp.0/bwd"}}));
}

// What a pipelined step (depth 2, 3 steps, t0 row-wise over 8 ranks) runs ahead. Step 1's
// lookup: "sparse_forward" issues it on sparse_compute before step 0's dense forward, free
// of step 0; "input_dist" issues only step 1's input dist then, and step 1's lookup on the
// compute stream after step 0's dense optimizer (the updates it must read).
TEST(OpGraph, PipelinedInputDistLeavesTheLookupAfterTheUpdates) {
  auto lookup = [](const char* pipelined) {
    const auto sc = scenario_of(
        "hgx-h100-8.json", kOneLayerModel, kFixedData,
        std::string(R"({"sparse": {"default": "row_wise"}, "schedule": {"pipeline_depth": 2)") +
            pipelined + "}}",
        3);
    const Json ops = to_json(build_op_graph(sc), 3)["ops"];
    std::vector<std::string> issued;  // ops in issue order up to step 1's lookup
    std::pair<std::string, std::vector<std::string>> step1;  // its stream and deps
    for (const auto& op : ops) {
      issued.push_back(op["name"].get<std::string>() + "@" + std::to_string(op["step"].get<int>()));
      if (op["name"] != "emb/lookup" || op["step"] != 1) continue;
      step1.first = op["stream"];
      for (const auto& d : op["deps"])
        step1.second.push_back(ops[d.get<int>()]["name"].get<std::string>() + "@" +
                               std::to_string(ops[d.get<int>()]["step"].get<int>()));
      break;
    }
    return std::pair{issued, step1};
  };
  const auto [semi, semi_lookup] = lookup("");
  EXPECT_EQ(semi_lookup.first, "sparse_compute");
  EXPECT_EQ(semi_lookup.second, (std::vector<std::string>{"emb/input_dist@1"}));
  EXPECT_EQ(semi, (std::vector<std::string>{"emb/input_dist@0", "emb/lookup@0", "emb/output_dist@0",
                                            "emb/input_dist@1", "emb/lookup@1"}));
  const auto [dist, dist_lookup] = lookup(R"(, "pipelined": "input_dist")");
  EXPECT_EQ(dist_lookup.first, "compute");
  EXPECT_EQ(dist_lookup.second, (std::vector<std::string>{"emb/input_dist@1", "optimizer@0"}));
  ASSERT_GE(dist.size(), 5u);
  EXPECT_EQ(std::vector<std::string>(dist.begin(), dist.begin() + 5),
            (std::vector<std::string>{"emb/input_dist@0", "emb/input_dist@1", "emb/lookup@0",
                                      "emb/output_dist@0", "top_mlp.0/fwd@0"}));
}

// TorchRec's table-row-wise pooled dist: partial sums are reduce-scattered inside the host
// block first, then cross hosts once. 16 ranks on two HGX hosts (blocks of 8), t0 (dim 16,
// pooling 2, 128 samples a rank, fp32) table-row-wise on block 0 (least loaded, lowest):
//   input dist, each rank to each member of block 0: 256 / 8 ids x 8 B + 128 x 4 B = 768,
//     nothing to block 1: 8 x 768 in all
//   output, block 0: reduce-scatter of every group sample's partial sums,
//     16 x 128 x 16 x 4 B = 131,072; then rank k sends rank 8 + k (and itself) the summed
//     rows of its samples, 128 x 16 x 4 = 8,192 each, among {k, 8 + k}; block 1 holds no
//     shard: no reduce-scatter, sends nothing; no group-wide output dist
//   grad: rank 8 + k sends rank k its samples' gradients (8,192), then block 0 all-gathers
//     131,072
TEST(OpGraph, TableRowWiseOutputsAreSummedInsideTheHostFirst) {
  const auto sc = scenario_of("h100-64-rail.json", kOneLayerModel, kFixedData,
                              R"({"ranks": 16, "sparse": {"tables": {"t0": "table_row_wise"}}})");
  const OpGraph g = build_op_graph(sc);
  auto collectives = [&](int rank) {
    std::map<std::string, Json> ops;
    const Json j = to_json(g, rank);
    for (const auto& op : j["ops"])
      if (op.contains("collective") && op["step"] == 0) ops[op["name"]] = op["collective"];
    return ops;
  };
  const auto r3 = collectives(3), r11 = collectives(11);
  EXPECT_EQ(r3.at("emb/input_dist")["bytes"], 8 * 768);
  EXPECT_EQ(r3.count("emb/output_dist"), 0u);
  EXPECT_EQ(r3.count("emb/grad_dist"), 0u);
  const auto& rs = r3.at("emb/output_dist/host_reduce_scatter");
  EXPECT_EQ(rs["op"], "reduce_scatter");
  EXPECT_EQ(rs["bytes"], 131072);
  EXPECT_EQ(rs["group"], "sparse_host/0/0");
  const auto& out = r3.at("emb/output_dist/cross_host");
  EXPECT_EQ(out["group"], "sparse_cross/0/3");
  EXPECT_EQ(out["group_ranks"], Json::array({3, 11}));
  EXPECT_EQ(out["bytes"], 2 * 8192);
  EXPECT_EQ(r11.count("emb/output_dist/host_reduce_scatter"), 0u);
  EXPECT_EQ(r11.at("emb/output_dist/cross_host")["bytes"], 0);
  EXPECT_EQ(r11.at("emb/grad_dist/cross_host")["send_row"], Json::array({8192, 0}));
  EXPECT_EQ(r3.at("emb/grad_dist/host_all_gather")["bytes"], 131072);
  EXPECT_EQ(r11.count("emb/grad_dist/host_all_gather"), 0u);
}

// The same table's rows over both blocks (HugeCTR's hier_auto puts a big table on several
// nodes): every rank holds 1/16 of t0, both blocks reduce-scatter their partial sums of
// every group sample (131,072 B each), and rank k and 8 + k each send the other, and
// themselves, their host's sums for the other's samples: 2 x 8,192 from both sides. The
// lookups split the same way: each rank looks up 1/16 of the group's 16 x 256 ids.
TEST(OpGraph, TableRowWiseOverTwoBlocksSplitsRowsOverBoth) {
  const auto sc = scenario_of(
      "h100-64-rail.json", kOneLayerModel, kFixedData,
      R"({"ranks": 16, "sparse": {"tables": {"t0": {"type": "table_row_wise", "ranks": [0, 8]}}}})");
  const OpGraph g = build_op_graph(sc);
  for (int rank : {3, 11}) {
    std::map<std::string, Json> ops;
    double lookup_flops = 0;
    const Json j = to_json(g, rank);
    for (const auto& op : j["ops"]) {
      if (op["step"] != 0) continue;
      if (op.contains("collective")) ops[op["name"]] = op["collective"];
      if (op["name"] == "emb/lookup") lookup_flops = op["kernel"]["flops"].get<double>();
    }
    EXPECT_EQ(ops.at("emb/output_dist/host_reduce_scatter")["bytes"], 131072) << rank;
    EXPECT_EQ(ops.at("emb/output_dist/cross_host")["bytes"], 2 * 8192) << rank;
    EXPECT_DOUBLE_EQ(lookup_flops, 16.0 * 256 / 16 * 16) << rank;  // ids x dim 16
  }
  EXPECT_THROW(
      scenario_of(
          "h100-64-rail.json", kOneLayerModel, kFixedData,
          R"({"ranks": 16, "sparse": {"tables": {"t0": {"type": "table_row_wise", "ranks": [0, 0]}}}})"),
      ConfigError);
}

}  // namespace
}  // namespace strait::sim::workload
