#include "sim/workload/model.hpp"

#include <unordered_set>

#include <fmt/format.h>

namespace strait::sim::workload {
namespace {

int positive_int(const ConfigNode& node, std::string_view key) {
  const auto v = node.positive_integer(key);
  if (v > (1 << 30)) node.at(key).fail("expected a value below 2^30");
  return static_cast<int>(v);
}

MlpConfig parse_mlp(const ConfigNode& node, Precision fallback) {
  node.allow_only({"layers", "precision"});
  MlpConfig mlp;
  for (const auto& l : node.at("layers").elements()) {
    const auto w = l.as_integer();
    if (w <= 0) l.fail(fmt::format("expected a positive layer width, got {}", w));
    if (w > (1 << 24)) l.fail(fmt::format("expected a layer width of at most 2^24, got {}", w));
    mlp.layers.push_back(static_cast<int>(w));
  }
  if (mlp.layers.empty()) node.at("layers").fail("expected at least one layer width");
  mlp.precision = precision_or(node, "precision", fallback);
  return mlp;
}

void parse_embedding(const ConfigNode& node, ModelConfig& m) {
  node.allow_only({"weight_dtype", "optimizer", "optimizer_dtype", "tables"});
  m.embedding_dtype = precision_or(node, "weight_dtype", Precision::kFp32);
  m.embedding_optimizer = read_enum_or(node, "optimizer", Optimizer::kRowWiseAdagrad);
  m.embedding_optimizer_dtype = precision_or(node, "optimizer_dtype", Precision::kFp32);
  std::unordered_set<std::string> names;  // duplicates found in linear time
  for (const auto& t : node.at("tables").elements()) {
    t.allow_only({"name", "rows", "dim", "pooling"});
    EmbeddingTable table;
    table.name = t.string("name");
    if (!names.insert(table.name).second) {
      t.at("name").fail(fmt::format("duplicate table name \"{}\"", table.name));
    }
    table.rows = t.positive_integer("rows");
    table.dim = positive_int(t, "dim");
    table.pooling = read_enum_or(t, "pooling", Pooling::kSum);
    m.tables.push_back(std::move(table));
  }
}

void parse_dense(const ConfigNode& node, ModelConfig& m) {
  node.allow_only({"param_dtype", "optimizer", "precision", "dense_features", "bottom_mlp",
                   "interaction", "top_mlp", "hstu", "moe"});
  m.param_dtype = precision_or(node, "param_dtype", Precision::kFp32);
  m.dense_optimizer = read_enum_or(node, "optimizer", Optimizer::kAdam);
  const Precision compute = precision_or(node, "precision", Precision::kBf16);
  m.dense_features = node.int_or("dense_features", 0, 0, 1 << 20);
  if (m.dense_features < 0) node.at("dense_features").fail("expected a count >= 0");
  if (auto b = node.find("bottom_mlp")) m.bottom_mlp = parse_mlp(*b, compute);
  if (auto t = node.find("top_mlp")) m.top_mlp = parse_mlp(*t, compute);
  if (auto i = node.find("interaction")) {
    const std::string type = i->choice("type", {"dot", "dcn"});
    if (type == "dot") {
      i->allow_only({"type", "precision"});
      m.interaction.type = InteractionConfig::Type::kDot;
    } else {
      i->allow_only({"type", "layers", "low_rank", "precision"});
      m.interaction.type = InteractionConfig::Type::kDcn;
      m.interaction.layers = positive_int(*i, "layers");
      m.interaction.low_rank = positive_int(*i, "low_rank");
    }
    m.interaction.precision = precision_or(*i, "precision", compute);
  }
  if (auto h = node.find("hstu")) {
    h->allow_only({"layers", "model_dim", "heads", "head_dim", "linear_dim", "relative_bias",
                   "attention", "attention_kernel", "attention_window", "dropout", "negatives",
                   "negative_sampling", "precision"});
    m.hstu.layers = positive_int(*h, "layers");
    m.hstu.model_dim = positive_int(*h, "model_dim");
    m.hstu.heads = positive_int(*h, "heads");
    m.hstu.head_dim = positive_int(*h, "head_dim");
    m.hstu.linear_dim = h->has("linear_dim") ? positive_int(*h, "linear_dim") : m.hstu.head_dim;
    m.hstu.relative_bias = h->bool_or("relative_bias", true);
    m.hstu.padded = h->choice_or("attention", {"jagged", "padded"}, "jagged") == "padded";
    m.hstu.fused_attention =
        h->choice_or("attention_kernel", {"fused", "unfused"}, "fused") == "fused";
    m.hstu.attention_window = h->has("attention_window") ? positive_int(*h, "attention_window") : 0;
    m.hstu.dropout = h->number_or("dropout", 0.3);
    if (!(m.hstu.dropout >= 0 && m.hstu.dropout < 1)) {
      h->at("dropout").fail(
          fmt::format("expected a dropout ratio in [0, 1), got {}", m.hstu.dropout));
    }
    m.hstu.negatives = h->has("negatives") ? positive_int(*h, "negatives") : 512;
    m.hstu.shared_negatives =
        h->choice_or("negative_sampling", {"shared", "per_token"}, "shared") == "shared";
    m.hstu.precision = precision_or(*h, "precision", compute);
  }
  if (auto e = node.find("moe")) {
    e->allow_only({"layers", "experts", "top_k", "expert_hidden", "precision"});
    m.moe.layers = positive_int(*e, "layers");
    m.moe.experts = positive_int(*e, "experts");
    m.moe.top_k = positive_int(*e, "top_k");
    m.moe.expert_hidden = positive_int(*e, "expert_hidden");
    if (m.moe.top_k > m.moe.experts) {
      e->at("top_k").fail(
          fmt::format("expected top_k <= experts ({}), got {}", m.moe.experts, m.moe.top_k));
    }
    m.moe.precision = precision_or(*e, "precision", compute);
  }
}

}  // namespace

double optimizer_state_bytes(Optimizer o, double rows, double dim, int state_bytes) {
  switch (o) {
    case Optimizer::kRowWiseAdagrad:
      return rows * state_bytes;
    case Optimizer::kAdagrad:
      return rows * dim * state_bytes;
    case Optimizer::kAdam:
      return 2 * rows * dim * state_bytes;
    case Optimizer::kSgd:
      return 0;
  }
  return 0;
}

Precision precision_or(const ConfigNode& node, std::string_view key, Precision fallback) {
  const auto member = node.find(key);
  if (!member) return fallback;
  // The names are sim/cost's (kernel_work.hpp: to_string, parse_precision).
  const std::string v = member->as_string();
  if (const auto p = cost::parse_precision(v)) return *p;
  std::vector<std::string> names;
  names.reserve(cost::kPrecisionCount);
  for (int p = 0; p < cost::kPrecisionCount; ++p)
    names.emplace_back(to_string(static_cast<Precision>(p)));
  member->fail_not_one_of(v, names);
}

ModelConfig ModelConfig::load(const std::string& path) { return from_config(load_config(path)); }

ModelConfig ModelConfig::from_config(const ConfigNode& node) {
  node.allow_only({"name", "description", "embedding", "dense"});
  ModelConfig m;
  m.file = node.file();
  m.name = node.string_or("name", "model");
  parse_embedding(node.at("embedding"), m);
  parse_dense(node.at("dense"), m);
  const ConfigNode dense = node.at("dense");
  bool has_sequence = false;
  for (const auto& t : m.tables) has_sequence |= t.pooling == Pooling::kSequence;
  if (m.has_hstu() && !has_sequence) {
    dense.at("hstu").fail("an HSTU stack needs at least one table with \"pooling\": \"sequence\"");
  }
  if (m.interaction.type == InteractionConfig::Type::kDot) {
    // Dot interaction multiplies features pairwise: all of them need one width.
    const int width = m.bottom_mlp.layers.empty() ? 0 : m.bottom_mlp.layers.back();
    for (std::size_t i = 0; i < m.tables.size(); ++i) {
      const auto& t = m.tables[i];
      if (t.pooling == Pooling::kSequence || width == 0 || t.dim == width) continue;
      node.at("embedding")
          .at("tables")
          .at(i)
          .at("dim")
          .fail(fmt::format("dot interaction needs every pooled table's dim to equal the bottom "
                            "MLP output ({}), got {}",
                            width, t.dim));
    }
  }
  if (!m.has_hstu() && m.top_mlp.layers.empty()) {
    dense.fail("expected a dense part: \"top_mlp\" and/or \"hstu\"");
  }
  return m;
}

int ModelConfig::table_index(const std::string& table) const {
  for (std::size_t i = 0; i < tables.size(); ++i) {
    if (tables[i].name == table) return static_cast<int>(i);
  }
  return -1;
}

std::vector<std::string> ModelConfig::table_names() const {
  std::vector<std::string> out;
  out.reserve(tables.size());
  for (const auto& t : tables) out.push_back(t.name);
  return out;
}

}  // namespace strait::sim::workload
