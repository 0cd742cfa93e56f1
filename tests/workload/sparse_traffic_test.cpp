// Embedding lookup and update on shards of one table at different row fractions, by hand.
// Table t0 (1,000,000 rows, dim 16, sum pooling, uniform ids) over a group of 2: member 0
// holds a quarter of its rows, member 1 the other three quarters. Member 0 has 100 ids and
// 10 samples, member 1 300 ids and 30 samples.
//   ids arriving: member 0 (100 + 300) / 4 = 100, member 1 400 x 3/4 = 300
//   lookup flops: arriving x 16 = 1,600 and 4,800
//   lookup bytes: arriving (16 e + 8) + pooled rows (every sample, 40) x 16 e
//   update flops: arriving x 16 + 4 U x 16 with U = arriving x the group's unique fraction
// Asked in any order (the sums are kept per table and fraction), each member gets its own.
#include <gtest/gtest.h>

#include "sim/workload/detail/sparse_traffic.hpp"
#include "sim/workload/unique_rows.hpp"

namespace strait::sim::workload::detail {
namespace {

TEST(SparseTraffic, ShardsOfOneTableAtDifferentFractionsEachGetTheirShareOfIds) {
  ModelConfig model;
  model.tables.push_back({"t0", 1'000'000, 16, Pooling::kSum});
  DataConfig data;
  data.zipf_exponent = {0};
  ShardMap map;
  map.group_size = 2;
  map.member_shards = {{{0, 0.25, 1.0}}, {{0, 0.75, 1.0}}};
  map.type = {ShardingType::kRowWise};
  const SparseTraffic traffic(model, data, map, {{100}, {300}}, {10, 30});
  const double e = bytes_per_element(model.embedding_dtype);
  const double unique = expected_unique_rows(1e6, 400, 0) / 400;
  const double arriving[] = {100, 300};
  for (int j : {0, 1, 0, 1, 1, 0}) {
    const double a = arriving[j];
    const Kernel lookup = traffic.lookup(j);
    EXPECT_DOUBLE_EQ(lookup.flops, a * 16) << j;
    EXPECT_DOUBLE_EQ(lookup.hbm_bytes, a * (16 * e + 8) + 40 * 16 * e) << j;
    EXPECT_EQ(lookup.embedding_dim, 16);
    const Kernel update = traffic.update(j);
    EXPECT_DOUBLE_EQ(update.flops, a * 16 + 4 * a * unique * 16) << j;
    EXPECT_DOUBLE_EQ(update.unique_fraction, unique);
  }
}

}  // namespace
}  // namespace strait::sim::workload::detail
