#include "sim/workload/data.hpp"

#include <fmt/format.h>

#include "sim/core/error.hpp"

namespace strait::sim::workload {
namespace {

/// Per-table settings {"default": X, "<table>": X}: checks table names with did-you-mean.
template <typename Parse, typename T>
std::vector<T> per_table(const std::optional<ConfigNode>& node, const ModelConfig& model,
                         T fallback, Parse parse) {
  std::vector<T> out(model.tables.size(), fallback);
  if (!node) return out;
  std::vector<std::string> allowed = model.table_names();
  allowed.insert(allowed.begin(), "default");
  node->allow_only(allowed);
  if (auto d = node->find("default")) {
    const T v = parse(*d);
    for (auto& x : out) x = v;
  }
  for (std::size_t i = 0; i < model.tables.size(); ++i) {
    if (auto t = node->find(model.tables[i].name)) out[i] = parse(*t);
  }
  return out;
}

}  // namespace

DataConfig DataConfig::load(const std::string& path, const ModelConfig& model) {
  return from_config(load_config(path), model);
}

DataConfig DataConfig::from_config(const ConfigNode& node, const ModelConfig& model) {
  node.allow_only({"name", "description", "batch_size", "sequence_length", "max_length",
                   "pooling_factors", "id_skew"});
  DataConfig d;
  d.file = node.file();
  d.name = node.string_or("name", "data");
  const ConfigNode batch = node.at("batch_size");
  batch.allow_only({"per_rank", "global"});
  if (batch.has("per_rank") == batch.has("global")) {
    batch.fail("expected exactly one of \"per_rank\" or \"global\"");
  }
  // Per rank up to 2^24 samples, globally 2^34: past any job, and sums over a batch stay
  // exact (a batch of 2^32 per rank ran out of memory).
  if (batch.has("per_rank"))
    d.batch_per_replica = batch.at("per_rank").as_integer_in(1, std::int64_t{1} << 24);
  else
    d.global_batch = batch.at("global").as_integer_in(1, std::int64_t{1} << 34);
  d.batch_node_ = batch;

  bool has_sequence = false;
  for (const auto& t : model.tables) has_sequence |= t.pooling == Pooling::kSequence;
  if (auto s = node.find("sequence_length")) {
    d.sequence_length = Distribution::from_config(*s);
    d.max_length = node.at("max_length").as_integer_in(1, std::int64_t{1} << 30);
  } else if (has_sequence) {
    throw ConfigError(node.file(), node.pointer() + "/sequence_length",
                      "missing required key (the model has sequence tables)");
  }
  d.pooling = per_table(node.find("pooling_factors"), model, Distribution::fixed(1),
                        [](const ConfigNode& n) { return Distribution::from_config(n); });
  d.zipf_exponent = per_table(node.find("id_skew"), model, 0.0, [](const ConfigNode& n) {
    const double s = n.as_number();
    if (s < 0) n.fail(fmt::format("expected a Zipf exponent >= 0, got {}", s));
    return s;
  });
  return d;
}

std::int64_t DataConfig::batch_for(int replicas) const {
  if (batch_per_replica > 0) return batch_per_replica;
  if (global_batch % replicas != 0 || global_batch < replicas) {
    batch_node_->at("global").fail(
        fmt::format("expected a global batch divisible by the {} data-parallel replicas, got {}",
                    replicas, global_batch));
  }
  return global_batch / replicas;
}

}  // namespace strait::sim::workload
