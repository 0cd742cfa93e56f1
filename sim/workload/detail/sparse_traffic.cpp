#include "sim/workload/detail/sparse_traffic.hpp"

#include <algorithm>
#include <cmath>

#include "sim/cost/kernel_shapes.hpp"
#include "sim/workload/unique_rows.hpp"

namespace strait::sim::workload::detail {
namespace {

using cost::kIdBytes;
constexpr double kLengthBytes = 4;  // a bag length (int32) in the input dist

}  // namespace

SparseTraffic::SparseTraffic(const ModelConfig& model, const DataConfig& data, const ShardMap& map,
                             std::vector<std::vector<double>> ids, std::vector<double> samples,
                             const CommPrecision& comm)
    : model_(model),
      map_(map),
      ids_(std::move(ids)),
      samples_(std::move(samples)),
      same_shards_(!map.member_shards.empty() && same_shards()) {
  forward_element_ = bytes_per_element(comm.forward.value_or(model.embedding_dtype));
  backward_element_ = bytes_per_element(comm.backward.value_or(model.embedding_dtype));
  unique_fraction_.assign(model.tables.size(), 1.0);
  arriving_.assign(model.tables.size(), {});
  hot_share_.assign(model.tables.size(), 0.0);
  host_reduced_.assign(model.tables.size(), 0);
  for (std::size_t t = 0; t < model.tables.size(); ++t) {
    host_reduced_[t] = map.host_reduced(model, static_cast<int>(t)) ? 1 : 0;
    any_host_reduced_ = any_host_reduced_ || host_reduced_[t];
    if (t < map.hot_rows.size() && map.hot_rows[t] > 0) {
      hot_share_[t] = zipf_head_mass(static_cast<double>(model.tables[t].rows),
                                     static_cast<double>(map.hot_rows[t]), data.zipf_exponent[t]);
    }
    double total = 0;
    for (const auto& member : ids_) total += member[t];
    // Data-parallel tables dedup only the rank's own ids.
    if (map.type[t] == ShardingType::kDataParallel && !ids_.empty()) total = ids_.front()[t];
    if (total > 0) {
      unique_fraction_[t] = expected_unique_rows(static_cast<double>(model.tables[t].rows), total,
                                                 data.zipf_exponent[t]) /
                            total;
    }
  }
}

double SparseTraffic::cold_samples(std::size_t i, std::size_t t) const {
  const double h = hot_share_[t];
  if (h == 0 || samples_[i] <= 0) return samples_[i];
  return samples_[i] * (1 - std::pow(h, ids_[i][t] / samples_[i]));
}

double SparseTraffic::arriving_ids(int table, double row_fraction) const {
  auto& memo = arriving_[static_cast<std::size_t>(table)];
  if (memo.row_fraction != row_fraction) {
    double ids = 0;
    for (std::size_t i = 0; i < ids_.size(); ++i)
      ids += cold_ids(i, static_cast<std::size_t>(table)) * row_fraction;
    memo.row_fraction = row_fraction;
    memo.ids = ids;
  }
  return memo.ids;
}

double SparseTraffic::pooled_rows(int table) const {
  auto& memo = arriving_[static_cast<std::size_t>(table)];
  if (memo.pooled_rows < 0) {
    double rows = 0;
    for (std::size_t i = 0; i < ids_.size(); ++i)
      rows += cold_samples(i, static_cast<std::size_t>(table));
    memo.pooled_rows = rows;
  }
  return memo.pooled_rows;
}

bool SparseTraffic::same_shards() const {
  for (const auto& shards : map_.member_shards) {
    const auto& first = map_.member_shards.front();
    if (shards.size() != first.size()) return false;
    for (std::size_t k = 0; k < shards.size(); ++k) {
      if (shards[k].table != first[k].table || shards[k].row_fraction != first[k].row_fraction ||
          shards[k].col_fraction != first[k].col_fraction)
        return false;
    }
  }
  return true;
}

Bytes SparseTraffic::input_bytes(int i, int j) const {
  double b = 0;
  for (const Shard& s : map_.member_shards[static_cast<std::size_t>(j)]) {
    b += cold_ids(static_cast<std::size_t>(i), static_cast<std::size_t>(s.table)) * s.row_fraction *
             kIdBytes +
         samples_[static_cast<std::size_t>(i)] * kLengthBytes;
  }
  return static_cast<Bytes>(std::llround(b));
}

SendRow SparseTraffic::input_row(int i) const {
  std::vector<Bytes> row(static_cast<std::size_t>(map_.group_size), 0);
  for (int j = 0; j < map_.group_size; ++j) row[static_cast<std::size_t>(j)] = input_bytes(i, j);
  return SendRow(std::move(row));
}

std::optional<Bytes> SparseTraffic::uniform_input(int i) const {
  if (!same_shards_ || map_.group_size < 1) return std::nullopt;
  return input_bytes(i, 0);
}

std::optional<Bytes> SparseTraffic::uniform_grad(int i) const {
  if (!same_shards_ || map_.group_size < 1) return std::nullopt;
  return grad_bytes(0, i);
}

Bytes SparseTraffic::grad_bytes(int j, int i) const {
  return static_cast<Bytes>(std::llround(output_bytes(j, i, backward_element_)));
}

double SparseTraffic::output_bytes(int j, int i, double e) const {
  double b = 0;
  for (const Shard& s : map_.member_shards[static_cast<std::size_t>(j)]) {
    if (host_reduced_[static_cast<std::size_t>(s.table)]) continue;
    const auto& t = model_.tables[static_cast<std::size_t>(s.table)];
    const double width = t.dim * s.col_fraction * e;
    const auto ii = static_cast<std::size_t>(i), tt = static_cast<std::size_t>(s.table);
    b += t.pooling == Pooling::kSequence ? cold_ids(ii, tt) * s.row_fraction * width
                                         : cold_samples(ii, tt) * width;
  }
  return b;
}

double SparseTraffic::pooled_bytes(int j, int i, double e) const {
  double b = 0;
  for (const Shard& s : map_.member_shards[static_cast<std::size_t>(j)]) {
    if (!host_reduced_[static_cast<std::size_t>(s.table)]) continue;
    const auto& t = model_.tables[static_cast<std::size_t>(s.table)];
    b += cold_samples(static_cast<std::size_t>(i), static_cast<std::size_t>(s.table)) * t.dim *
         s.col_fraction * e;
  }
  return b;
}

Bytes SparseTraffic::host_reduce_bytes(int j, bool backward) const {
  const double e = backward ? backward_element_ : forward_element_;
  double b = 0;
  for (int i = 0; i < map_.group_size; ++i) b += pooled_bytes(j, i, e);
  return static_cast<Bytes>(std::llround(b));
}

SendRow SparseTraffic::cross_output_row(int j) const {
  const int hs = map_.host_size, k = j % hs;
  std::vector<Bytes> row(static_cast<std::size_t>(map_.group_size / hs), 0);
  for (std::size_t b = 0; b < row.size(); ++b) {
    row[b] = static_cast<Bytes>(
        std::llround(pooled_bytes(j, static_cast<int>(b) * hs + k, forward_element_)));
  }
  return SendRow(std::move(row));
}

SendRow SparseTraffic::cross_grad_row(int i) const {
  const int hs = map_.host_size, k = i % hs;
  std::vector<Bytes> row(static_cast<std::size_t>(map_.group_size / hs), 0);
  for (std::size_t b = 0; b < row.size(); ++b) {
    row[b] = static_cast<Bytes>(
        std::llround(pooled_bytes(static_cast<int>(b) * hs + k, i, backward_element_)));
  }
  return SendRow(std::move(row));
}

SendRow SparseTraffic::output_row(int j) const {
  // Members holding the same shards send the same row: computed once (O(M), not O(M^2)
  // per group).
  if (same_shards_ && !first_output_row_.empty()) return first_output_row_;
  std::vector<Bytes> row(static_cast<std::size_t>(map_.group_size), 0);
  for (int i = 0; i < map_.group_size; ++i)
    row[static_cast<std::size_t>(i)] =
        static_cast<Bytes>(std::llround(output_bytes(j, i, forward_element_)));
  SendRow shared(std::move(row));
  if (same_shards_) first_output_row_ = shared;
  return shared;
}

SendRow SparseTraffic::grad_row(int i) const {
  std::vector<Bytes> row(static_cast<std::size_t>(map_.group_size), 0);
  for (int j = 0; j < map_.group_size; ++j) row[static_cast<std::size_t>(j)] = grad_bytes(j, i);
  return SendRow(std::move(row));
}

double SparseTraffic::output_buffer_bytes(int j) const {
  double send = 0, recv = 0;
  if (same_shards_) {
    // Every member sends what member 0 sends, and receives M times one member's output.
    if (!first_output_sum_) {
      double sum = 0;
      for (int i = 0; i < map_.group_size; ++i) sum += output_bytes(0, i, forward_element_);
      first_output_sum_ = sum;
    }
    send = *first_output_sum_;
    recv = map_.group_size * output_bytes(0, j, forward_element_);
  } else {
    for (int i = 0; i < map_.group_size; ++i) {
      send += output_bytes(j, i, forward_element_);
      recv += output_bytes(i, j, forward_element_);
    }
  }
  if (!any_host_reduced_) return send + recv;
  // Host-reduced tables: the reduce-scatter's input, then the all-to-all's send and receive
  // buffers among the members at j's position of every block.
  const int hs = map_.host_size;
  send += static_cast<double>(host_reduce_bytes(j, false));
  for (int b = 0; b < map_.group_size / hs; ++b) {
    send += pooled_bytes(j, b * hs + j % hs, forward_element_);
    recv += pooled_bytes(b * hs + j % hs, j, forward_element_);
  }
  return send + recv;
}

Kernel SparseTraffic::lookup(int j) const {
  cost::EmbeddingOpWork op(KernelKind::kEmbeddingLookup, model_.embedding_dtype);
  auto add = [&](int table, double arriving, double dim, double out_rows) {
    op.add({arriving, out_rows, dim, unique_fraction_[static_cast<std::size_t>(table)]});
  };
  for (const Shard& s : map_.member_shards[static_cast<std::size_t>(j)]) {
    const auto& t = model_.tables[static_cast<std::size_t>(s.table)];
    const double arriving = arriving_ids(s.table, s.row_fraction);
    add(s.table, arriving, t.dim * s.col_fraction,
        t.pooling == Pooling::kSequence ? arriving : pooled_rows(s.table));
  }
  for (int table : map_.data_parallel_tables) {
    const auto& t = model_.tables[static_cast<std::size_t>(table)];
    const double mine = ids_[static_cast<std::size_t>(j)][static_cast<std::size_t>(table)];
    add(table, mine, t.dim,
        t.pooling == Pooling::kSequence ? mine : samples_[static_cast<std::size_t>(j)]);
  }
  for (std::size_t table = 0; table < hot_share_.size(); ++table) {
    if (hot_share_[table] == 0) continue;
    const auto& t = model_.tables[table];
    const double hot = ids_[static_cast<std::size_t>(j)][table] * hot_share_[table];
    add(static_cast<int>(table), hot, t.dim,
        t.pooling == Pooling::kSequence ? hot : samples_[static_cast<std::size_t>(j)]);
  }
  return op.work();
}

Kernel SparseTraffic::update(int j) const {
  const int es = bytes_per_element(model_.embedding_optimizer_dtype);
  cost::EmbeddingOpWork op(KernelKind::kEmbeddingUpdate, model_.embedding_dtype);
  // A gradient row per arriving id; the optimizer state of one row of `dim`.
  auto add = [&](int table, double arriving, double dim) {
    op.add({arriving, arriving, dim, unique_fraction_[static_cast<std::size_t>(table)]},
           optimizer_state_bytes(model_.embedding_optimizer, 1, dim, es));
  };
  for (const Shard& s : map_.member_shards[static_cast<std::size_t>(j)]) {
    add(s.table, arriving_ids(s.table, s.row_fraction),
        model_.tables[static_cast<std::size_t>(s.table)].dim * s.col_fraction);
  }
  for (int table : map_.data_parallel_tables) {
    add(table, ids_[static_cast<std::size_t>(j)][static_cast<std::size_t>(table)],
        model_.tables[static_cast<std::size_t>(table)].dim);
  }
  for (std::size_t table = 0; table < hot_share_.size(); ++table) {
    if (hot_share_[table] == 0) continue;
    add(static_cast<int>(table), ids_[static_cast<std::size_t>(j)][table] * hot_share_[table],
        model_.tables[table].dim);
  }
  return op.work();
}

}  // namespace strait::sim::workload::detail
