// Over 400 lines: a Kineto trace's ops classified into kernel cases family by family: one table
// of rules, read top to bottom.

#include "calibration/kineto_import.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <climits>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "calibration/detail/kineto_trace_index.hpp"
#include "calibration/kernel_case.hpp"
#include "calibration/kernel_names.hpp"
#include "sim/core/config_node.hpp"
#include "traces/kineto_reader.hpp"

namespace strait::calibration {
namespace {

using detail::KinetoTraceIndex;
using detail::kNoOp;
using sim::cost::Precision;
using sim::network::CollectiveOp;
using traces::Timeline;

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// ---- Element types, as "Input type" ("float", "c10::BFloat16") and record_param_comms'
// "dtype" ("Float", "BFloat16") name them.
struct ElementType {
  int bytes = 0;
  std::optional<Precision> precision;  // nullopt: no strait precision (fp64, integers)
  bool integer = false;
};

std::optional<ElementType> element_type(std::string_view name) {
  std::string t = lower(name);
  if (t.starts_with("c10::")) t.erase(0, 5);
  if (t.starts_with("float8")) return ElementType{1, Precision::kFp8, false};
  static const std::map<std::string, ElementType, std::less<>> kTypes = {
      {"float", {4, Precision::kFp32, false}},  {"double", {8, std::nullopt, false}},
      {"half", {2, Precision::kFp16, false}},   {"bfloat16", {2, Precision::kBf16, false}},
      {"long", {8, std::nullopt, true}},        {"long int", {8, std::nullopt, true}},
      {"int", {4, std::nullopt, true}},         {"short", {2, std::nullopt, true}},
      {"short int", {2, std::nullopt, true}},   {"char", {1, std::nullopt, true}},
      {"signed char", {1, std::nullopt, true}}, {"unsigned char", {1, std::nullopt, true}},
      {"byte", {1, std::nullopt, true}},        {"bool", {1, std::nullopt, true}}};
  const auto it = kTypes.find(t);
  if (it == kTypes.end()) return std::nullopt;
  return it->second;
}

// ---- An op's inputs as "Input Dims" and "Input type" list them.
struct Tensor {
  std::vector<std::int64_t> dims;
  ElementType type;
  std::int64_t elements() const {
    std::int64_t n = 1;
    for (std::int64_t d : dims) n *= d;
    return n;
  }
};
using Inputs = std::vector<std::optional<Tensor>>;  // nullopt: not a tensor (or unknown)

Inputs op_inputs(const KinetoTraceIndex& index, std::size_t op) {
  const auto dims = index.structured(op, "Input Dims");
  const auto types = index.structured(op, "Input type");
  Inputs out;
  if (!dims || !types || !dims->is_array() || !types->is_array()) return out;
  for (std::size_t i = 0; i < dims->size() && i < types->size(); ++i) {
    const Json& d = (*dims)[i];
    const Json& t = (*types)[i];
    std::optional<Tensor> tensor;
    const auto type = t.is_string() ? element_type(t.get<std::string>()) : std::nullopt;
    const bool flat = d.is_array() && std::all_of(d.begin(), d.end(), [](const Json& e) {
                        return e.is_number_integer() && e.get<std::int64_t>() >= 0;
                      });
    if (type && flat) tensor = Tensor{d.get<std::vector<std::int64_t>>(), *type};
    out.push_back(std::move(tensor));
  }
  return out;
}

const Tensor* input(const Inputs& inputs, std::size_t i, std::size_t rank) {
  if (i >= inputs.size() || !inputs[i] || inputs[i]->dims.size() != rank) return nullptr;
  return &*inputs[i];
}

bool fits_int(std::int64_t v) { return v > 0 && v <= INT_MAX; }

// ---- Families: each returns the work of the kernels under op `op`, or nullopt.
std::optional<KernelCase> gemm_work(const std::string& op, const Inputs& in,
                                    const std::string& kernel) {
  std::int64_t m = 0, n = 0, k = 0;
  const Tensor* a = nullptr;
  const auto fold = [](const std::vector<std::int64_t>& dims) {  // all but the last
    std::int64_t p = 1;
    for (std::size_t i = 0; i + 1 < dims.size(); ++i) p *= dims[i];
    return p;
  };
  if (op == "aten::mm" || op == "aten::addmm") {
    const std::size_t first = op == "aten::mm" ? 0 : 1;
    a = input(in, first, 2);
    const Tensor* b = input(in, first + 1, 2);
    if (!a || !b || a->dims[1] != b->dims[0]) return std::nullopt;
    m = a->dims[0], k = a->dims[1], n = b->dims[1];
  } else if (op == "aten::bmm" || op == "aten::baddbmm") {
    const std::size_t first = op == "aten::bmm" ? 0 : 1;
    a = input(in, first, 3);
    const Tensor* b = input(in, first + 1, 3);
    if (!a || !b || a->dims[0] != b->dims[0] || a->dims[2] != b->dims[1]) return std::nullopt;
    m = a->dims[0] * a->dims[1], k = a->dims[2], n = b->dims[2];
  } else if (op == "aten::matmul" || op == "aten::linear") {
    if (in.size() < 2 || !in[0] || !in[1] || in[0]->dims.size() < 2) return std::nullopt;
    a = &*in[0];
    const auto& bd = in[1]->dims;
    k = a->dims.back();
    m = fold(a->dims);
    if (op == "aten::linear" && bd.size() == 2 && bd[1] == k) {
      n = bd[0];  // weight [n, k]
    } else if (op == "aten::matmul" && bd.size() == 2 && bd[0] == k) {
      n = bd[1];
    } else if (op == "aten::matmul" && bd.size() == a->dims.size() && bd[bd.size() - 2] == k &&
               std::equal(bd.begin(), bd.end() - 2, a->dims.begin())) {
      n = bd.back();  // batched: the batch folds into m
    } else {
      return std::nullopt;
    }
  } else {
    return std::nullopt;
  }
  if (m <= 0 || n <= 0 || k <= 0 || !a->type.precision) return std::nullopt;
  Precision p = *a->type.precision;
  if (p == Precision::kFp32 && contains(lower(kernel), "tf32")) p = Precision::kTf32;
  return gemm_case(m, n, k, p);
}

// aten::embedding(weight, indices), embedding_bag(weight, indices, offsets, ...) and their
// backward ops (grad [n, dim], indices): a 2-D floating first input and integer ids after it.
std::optional<KernelCase> embedding_work(bool update, const Inputs& in) {
  const Tensor* w = input(in, 0, 2);
  if (!w || !w->type.precision || in.size() < 2 || !in[1] || !in[1]->type.integer) {
    return std::nullopt;
  }
  const std::int64_t rows = w->dims[0], dim = w->dims[1], n = in[1]->elements();
  const Precision p = *w->type.precision;
  if (!fits_int(dim) || !fits_int(n)) return std::nullopt;
  if (update) {
    return embedding_update_case(1, static_cast<int>(n), static_cast<int>(dim), 1, rows, 0, p);
  }
  // Bags: B offsets (B + 1 with include_last_offset); without offsets every id is a bag.
  std::int64_t bags = n;
  if (const Tensor* offsets = input(in, 2, 1); offsets && offsets->type.integer) {
    const std::int64_t len = offsets->dims[0];
    if (len > 0 && n % len == 0) {
      bags = len;
    } else if (len > 1 && n % (len - 1) == 0) {
      bags = len - 1;
    } else {
      return std::nullopt;  // bags of unequal size: the record's pooling is an integer
    }
  }
  return embedding_lookup_case(1, static_cast<int>(bags), static_cast<int>(dim),
                               static_cast<int>(n / bags), rows, 0, p);
}

// Ops whose Q is [B, H, L, D], with the input indices of Q and of is_causal.
struct AttentionOp {
  std::string_view name;
  std::size_t query;
  std::size_t is_causal;
};
constexpr AttentionOp kAttentionOps[] = {
    {"aten::_scaled_dot_product_flash_attention", 0, 4},
    {"aten::_scaled_dot_product_flash_attention_backward", 1, 11},
    {"aten::scaled_dot_product_attention", 0, 5},
};

std::optional<KernelCase> attention_work(bool backward, const KinetoTraceIndex& index,
                                         std::size_t op, const Inputs& in) {
  const auto known = std::find_if(std::begin(kAttentionOps), std::end(kAttentionOps),
                                  [&](const AttentionOp& a) { return a.name == index.name(op); });
  if (known == std::end(kAttentionOps)) return std::nullopt;
  const auto concrete = index.structured(op, "Concrete Inputs");
  if (!concrete || !concrete->is_array() || known->is_causal >= concrete->size() ||
      (*concrete)[known->is_causal] != "True") {
    return std::nullopt;  // the work formula counts causal pairs only
  }
  const Tensor* q = input(in, known->query, 4);
  const Tensor* k = input(in, known->query + 1, 4);
  if (!q || !k || !q->type.precision || k->dims[2] != q->dims[2]) return std::nullopt;
  const auto& d = q->dims;  // [B, H, L, D]
  if (!fits_int(d[0]) || !fits_int(d[1]) || !fits_int(d[2]) || !fits_int(d[3])) return std::nullopt;
  const std::vector<int> lengths(static_cast<std::size_t>(d[0]), static_cast<int>(d[2]));
  return attention_case(false, backward, lengths, static_cast<int>(d[1]), static_cast<int>(d[3]),
                        *q->type.precision);
}

std::optional<KernelCase> elementwise_work(const std::string& op, const Inputs& in) {
  double read = 0, largest = 0;
  std::optional<Precision> p;
  for (const auto& t : in) {
    if (!t) continue;
    const double b = static_cast<double>(t->elements()) * t->type.bytes;
    read += b;
    largest = std::max(largest, b);
    if (!p) p = t->type.precision;
  }
  if (read <= 0) return std::nullopt;
  // Read every tensor input, write one output the size of the largest input.
  KernelCase c = elementwise_case(static_cast<std::int64_t>(read + largest));
  c.shape["op"] = op.starts_with("aten::") ? op.substr(6) : op;
  c.dtype = p.value_or(Precision::kFp32);
  return c;
}

// ---- Collectives.
std::optional<KernelCase> collective_work(const KinetoTraceIndex& index, std::size_t kernel,
                                          const std::vector<std::size_t>& ops, int world_size) {
  const auto kernel_op = nccl_kernel_op(index.name(kernel));
  if (!kernel_op) return std::nullopt;
  std::size_t meta = kernel;  // newer Kineto copies record_param_comms' args to the kernel
  if (!index.text(kernel, "Collective name")) {
    const auto comms = std::find_if(ops.begin(), ops.end(), [&](std::size_t op) {
      return index.name(op) == "record_param_comms";
    });
    if (comms == ops.end()) return std::nullopt;
    meta = *comms;
  }
  const auto name = index.text(meta, "Collective name");
  const CollectiveOp op = (name ? collective_name_op(*name) : std::nullopt).value_or(*kernel_op);
  const auto type = element_type(index.text(meta, "dtype").value_or(""));
  const std::int64_t in = index.integer(meta, "In msg nelems").value_or(0);
  const std::int64_t out = index.integer(meta, "Out msg nelems").value_or(0);
  const std::int64_t ranks = index.integer(meta, "Group size").value_or(world_size);
  if (!type || ranks <= 0 || ranks > INT_MAX) return std::nullopt;
  // nccl-tests' sizes: all-gather's output, send/recv's message, else the per-rank input.
  std::int64_t elements = in;
  if (op == CollectiveOp::kAllGather) elements = out;
  if (op == CollectiveOp::kSendRecv) elements = std::max(in, out);
  const std::int64_t bytes = elements * type->bytes;
  if (bytes <= 0) return std::nullopt;
  KernelCase c;
  c.family = Family{std::nullopt, op};
  c.shape = {{"ranks", ranks}, {"bytes", bytes}};
  c.dtype = type->precision.value_or(Precision::kFp32);
  c.bytes = static_cast<double>(bytes);
  return c;
}

// ---- Classification of one GPU event; `key_op` is the op the instance sums over (kNoOp:
// the event is an instance of its own).
struct Classified {
  std::optional<KernelCase> work;
  std::size_t key_op = kNoOp;
};

Classified classify(const KinetoTraceIndex& index, std::size_t i, int world_size) {
  const std::string& name = index.name(i);
  if (index.is_memcpy(i) || index.is_memset(i)) {
    const std::int64_t bytes = index.integer(i, "bytes").value_or(0);
    // Only device-to-device copies move HBM bytes; host and peer copies are link-bound.
    if (bytes <= 0 || (index.is_memcpy(i) && !contains(name, "DtoD"))) return {};
    KernelCase c = elementwise_case(index.is_memcpy(i) ? 2 * bytes : bytes);
    c.shape["op"] = index.is_memcpy(i) ? "memcpy" : "memset";
    return {c, kNoOp};
  }
  const KernelNameFamily family = kernel_family_of_name(name);
  // Optimizer kernels (multi_tensor_apply) carry no shape a record could hold.
  if (family == KernelNameFamily::kUnknown || family == KernelNameFamily::kOptimizer) return {};
  const std::vector<std::size_t> ops = index.linked_ops(i);
  if (family == KernelNameFamily::kNccl) return {collective_work(index, i, ops, world_size), kNoOp};
  for (std::size_t op : ops) {
    const Inputs in = op_inputs(index, op);
    std::optional<KernelCase> work;
    switch (family) {
      case KernelNameFamily::kGemm:
        work = gemm_work(index.name(op), in, name);
        break;
      case KernelNameFamily::kEmbeddingLookup:
        work = embedding_work(false, in);
        break;
      case KernelNameFamily::kEmbeddingUpdate:
        work = embedding_work(true, in);
        break;
      case KernelNameFamily::kAttentionForward:
      case KernelNameFamily::kAttentionBackward:
        work = attention_work(family == KernelNameFamily::kAttentionBackward, index, op, in);
        break;
      case KernelNameFamily::kElementwise:
        work = elementwise_work(index.name(op), in);
        break;
      default:
        break;
    }
    if (work) return {work, op};
    if (family == KernelNameFamily::kElementwise) break;  // only the innermost op's tensors
  }
  return {};
}

// ---- Trace metadata.
std::string iso8601_utc(std::int64_t ns) {
  using namespace std::chrono;
  const sys_seconds t = floor<seconds>(sys_time<nanoseconds>(nanoseconds(ns)));
  const sys_days day = floor<days>(t);
  const year_month_day ymd(day);
  const hh_mm_ss hms(t - day);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                     hms.hours().count(), hms.minutes().count(), hms.seconds().count());
}

// CUDA encodes versions as 1000 major + 10 minor (12060 -> "12.6").
std::string cuda_version(std::int64_t v) { return fmt::format("{}.{}", v / 1000, v % 1000 / 10); }

struct TraceInfo {
  std::string device = "unknown GPU";
  std::map<std::string, std::string> versions;
  std::string date = "unknown";
  int world_size = 0;
};

TraceInfo trace_info(const ConfigNode& root) {
  TraceInfo info;
  if (!root.is_object()) return info;
  if (auto props = root.find("deviceProperties")) {
    if (!props->is_array()) props->fail("expected an array of device property objects");
    if (props->size() > 0) {
      if (auto name = props->at(std::size_t{0}).find("name")) info.device = name->as_string();
    }
  }
  if (auto v = root.find("cuda_runtime_version")) {
    info.versions["cuda_runtime"] = cuda_version(v->as_integer());
  }
  if (auto v = root.find("cuda_driver_version")) {
    info.versions["cuda_driver"] = cuda_version(v->as_integer());
  }
  if (auto v = root.find("cupti_version")) info.versions["cupti"] = std::to_string(v->as_integer());
  if (auto dist = root.find("distributedInfo"); dist && dist->is_object()) {
    if (auto ws = dist->find("world_size")) {
      const std::int64_t n = ws->as_integer();
      if (n <= 0 || n > INT_MAX) ws->fail("expected a world size >= 1");
      info.world_size = static_cast<int>(n);
    }
    if (auto nccl = dist->find("nccl_version")) info.versions["nccl"] = nccl->as_string();
  }
  if (auto base = root.find("baseTimeNanoseconds")) info.date = iso8601_utc(base->as_integer());
  return info;
}

// ---- Grouping instances into records.
struct Group {
  KernelCase work;
  std::vector<double> samples_us;
};

std::string group_key(const KernelCase& c) {
  return c.family.name() + "|" + sim::cost::to_string(c.dtype) + "|" + c.shape.dump();
}

Measurement to_record(const Group& g, const TraceInfo& info) {
  Measurement m = measure(g.work, g.samples_us);
  m.warmup = 0;
  m.device = info.device;
  m.versions = info.versions;
  m.date = info.date;
  if (m.family.is_collective()) {
    set_bandwidths(m);
    m.check = "ok";  // required by the format; an imported result was not checked
  }
  return m;
}

// One timed piece of work: a GPU event, or the events of one family under one op.
struct Instance {
  KernelCase work;
  Time duration;
};

std::vector<Instance> collect_instances(const KinetoTraceIndex& index, int world_size,
                                        KinetoImportStats& counts) {
  std::vector<Instance> instances;
  std::map<std::pair<std::string, std::size_t>, std::size_t> instance_of_op;
  for (std::size_t i = 0; i < index.span_count(); ++i) {
    if (!index.is_gpu_event(i)) continue;
    ++counts.kernels;
    const Time duration = index.span(i).end - index.span(i).start;
    Classified c = duration > Time::zero() ? classify(index, i, world_size) : Classified{};
    if (!c.work) {
      ++counts.unrecognised_by_name[index.name(i)];
      continue;
    }
    ++counts.recognised;
    if (c.key_op != kNoOp) {
      const auto [it, fresh] =
          instance_of_op.try_emplace({group_key(*c.work), c.key_op}, instances.size());
      if (!fresh) {
        instances[it->second].duration += duration;
        continue;
      }
    }
    instances.push_back({std::move(*c.work), duration});
  }
  return instances;
}

MeasurementSet records_of(const std::vector<Instance>& instances, const TraceInfo& info) {
  std::map<std::string, Group> groups;
  for (const Instance& instance : instances) {
    Group& g = groups[group_key(instance.work)];
    if (g.samples_us.empty()) g.work = instance.work;
    g.samples_us.push_back(instance.duration.to_us());
  }
  MeasurementSet set;
  set.backend = "kineto";
  for (const auto& [key, g] : groups) set.records.push_back(to_record(g, info));
  // Within a family by table key, so the held-out shapes lie between the fitted ones.
  std::stable_sort(set.records.begin(), set.records.end(),
                   [](const Measurement& a, const Measurement& b) {
                     if (a.family.name() != b.family.name()) {
                       return a.family.name() < b.family.name();
                     }
                     return a.table_key() < b.table_key();
                   });
  std::map<std::string, int> seen;
  for (Measurement& m : set.records) {
    m.set = ++seen[m.family.name()] % 5 == 0 ? SampleSet::kValidation : SampleSet::kFit;
  }
  return set;
}

}  // namespace

MeasurementSet import_kineto(const std::string& path, const KinetoImportOptions& options) {
  return import_kineto(path, options, nullptr);
}

MeasurementSet import_kineto(const std::string& path, const KinetoImportOptions& options,
                             KinetoImportStats* stats) {
  const ConfigNode root = load_config(path);
  Timeline trace;
  traces::read_kineto_trace(root, trace, {.keep_structured_args = true});
  TraceInfo info = trace_info(root);
  if (!options.device.empty()) info.device = options.device;
  KinetoImportStats counts;
  const std::vector<Instance> instances =
      collect_instances(KinetoTraceIndex(trace), info.world_size, counts);
  if (stats) *stats = std::move(counts);
  return records_of(instances, info);
}

}  // namespace strait::calibration
