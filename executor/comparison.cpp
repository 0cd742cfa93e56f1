// Over 400 lines: the comparison of a simulated and a measured run, key by key and op by op,
// and its JSON: the two sides' figures are matched in one place.

#include "executor/comparison.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "calibration/kernel_names.hpp"
#include "sim/core/error.hpp"
#include "sim/core/statistics.hpp"
#include "sim/cost/kernel_work.hpp"
#include "sim/run/training_run.hpp"
#include "sim/workload/op_graph.hpp"

namespace strait::executor {
namespace {

using sim::cost::KernelKind;

constexpr const char* kFamilies[] = {
    "gemm",        "attention_fwd", "attention_bwd", "embedding_lookup", "embedding_update",
    "elementwise", "optimizer"};
constexpr std::size_t kTopOps = 10;

const char* family_of(KernelKind k) {
  switch (k) {
    case KernelKind::kGemm:
    case KernelKind::kGemmBackward:  // one family, as in a Kineto trace (names do not tell)
      return "gemm";
    case KernelKind::kJaggedAttention:
    case KernelKind::kPaddedAttention:
      return "attention_fwd";
    case KernelKind::kJaggedAttentionBackward:
    case KernelKind::kPaddedAttentionBackward:
      return "attention_bwd";
    case KernelKind::kEmbeddingLookup:
      return "embedding_lookup";
    case KernelKind::kEmbeddingUpdate:
      return "embedding_update";
    case KernelKind::kElementwise:
      return "elementwise";
    case KernelKind::kOptimizer:
      return "optimizer";
  }
  return "other";
}

const char* family_of(calibration::KernelNameFamily f) {
  using calibration::KernelNameFamily;
  switch (f) {
    case KernelNameFamily::kGemm:
      return "gemm";
    case KernelNameFamily::kAttentionForward:
      return "attention_fwd";
    case KernelNameFamily::kAttentionBackward:
      return "attention_bwd";
    case KernelNameFamily::kEmbeddingLookup:
      return "embedding_lookup";
    case KernelNameFamily::kEmbeddingUpdate:
      return "embedding_update";
    case KernelNameFamily::kElementwise:
      return "elementwise";
    case KernelNameFamily::kOptimizer:
      return "optimizer";
    case KernelNameFamily::kNccl:
    case KernelNameFamily::kUnknown:
      break;
  }
  return "other";
}

// A real job's all-to-all is all_to_allv or all_to_all by how c10d was called, the
// simulator's by whether sizes differ: one row for both.
std::string comm_op_label(std::optional<sim::network::CollectiveOp> op) {
  using sim::network::CollectiveOp;
  if (!op) return "other";
  if (*op == CollectiveOp::kAllToAll || *op == CollectiveOp::kAllToAllV) return "all_to_all(v)";
  return sim::network::to_string(*op);
}

std::vector<std::string> comm_op_labels() {
  std::vector<std::string> out;
  for (int i = 0; i < sim::network::kCollectiveOpCount; ++i) {
    auto label = comm_op_label(static_cast<sim::network::CollectiveOp>(i));
    if (std::find(out.begin(), out.end(), label) == out.end()) out.push_back(std::move(label));
  }
  out.emplace_back("other");
  return out;
}

// An op's span as both runs write it: a kernel (its family) or a collective (its class).
struct OpSpan {
  int rank;
  std::int64_t step;
  std::string name;
  std::string group;  // family, communication purpose or (Kineto mode) collective op
  bool is_kernel;
  double ms;
};

struct TraceOps {
  std::vector<OpSpan> ops;
  std::set<int> ranks;
  std::set<std::int64_t> steps;
};

std::optional<std::int64_t> step_arg(const traces::Timeline& tl, const traces::Span& span) {
  for (const auto& a : tl.args(span)) {
    if (tl.name_of(a.key) != "step") continue;
    if (const auto* i = std::get_if<std::int64_t>(&a.value)) return *i;
    if (const auto* d = std::get_if<double>(&a.value)) return static_cast<std::int64_t>(*d);
  }
  return std::nullopt;
}

std::optional<sim::network::CollectiveOp> op_arg(const traces::Timeline& tl,
                                                 const traces::Span& span) {
  for (const auto& a : tl.args(span)) {
    if (tl.name_of(a.key) != "op") continue;
    if (const auto* s = std::get_if<traces::InternedString>(&a.value))
      return sim::network::parse_collective_op(tl.name_of(s->id));
  }
  return std::nullopt;
}

// The op spans of a strait trace; collectives grouped by purpose, or by op if `comm_by_op`.
TraceOps trace_ops(const traces::Timeline& tl, bool comm_by_op) {
  std::set<std::string, std::less<>> purposes;
  for (int c = 0; c < sim::workload::kCommClassCount; ++c)
    purposes.insert(sim::workload::to_string(static_cast<sim::workload::CommClass>(c)));
  TraceOps out;
  for (const auto& span : tl.spans()) {
    const auto& name = tl.name_of(span.name);
    if (name == "wait for peers") continue;
    const auto step = step_arg(tl, span);
    if (!step) continue;
    const auto& category = tl.name_of(span.category);
    OpSpan op{span.rank, *step, name, "", false, (span.end - span.start).to_ms()};
    if (const auto kind = sim::cost::parse_kernel_kind(category)) {
      op.group = family_of(*kind);
      op.is_kernel = true;
    } else if (purposes.contains(category)) {
      op.group = comm_by_op ? comm_op_label(op_arg(tl, span)) : category;
    } else {
      continue;
    }
    out.ranks.insert(op.rank);
    out.steps.insert(op.step);
    out.ops.push_back(std::move(op));
  }
  return out;
}

// Time per step of each family (kernels) or purpose (collectives): each op (rank, name,
// occurrence in its step) contributes its median over the steps, so a step disturbed by
// the machine (another process, a page-table scan) moves no figure.
std::map<std::string, double> per_step_totals(const TraceOps& t, bool kernels) {
  std::map<std::tuple<int, std::string, int>, std::pair<std::string, std::vector<double>>> per_op;
  std::map<std::tuple<int, std::int64_t, std::string>, int> seen;
  for (const auto& op : t.ops) {
    if (op.is_kernel != kernels) continue;
    const int k = seen[{op.rank, op.step, op.name}]++;
    auto& [group, times] = per_op[{op.rank, op.name, k}];
    group = op.group;
    times.push_back(op.ms);
  }
  std::map<std::string, double> totals;
  for (auto& [key, op] : per_op) {
    auto& times = op.second;
    // Steps without the op count as 0 (an op that only some steps run).
    times.resize(std::max(times.size(), t.steps.size()), 0.0);
    totals[op.first] += percentile(times, 0.5);
  }
  return totals;
}

std::vector<ComparedFigure> figures(const std::map<std::string, double>& sim,
                                    const std::map<std::string, double>& meas,
                                    const std::vector<std::string>& order) {
  std::vector<ComparedFigure> out;
  for (const auto& name : order) {
    const auto s = sim.find(name), m = meas.find(name);
    if (s == sim.end() && m == meas.end()) continue;
    out.push_back({name, s == sim.end() ? 0.0 : s->second, m == meas.end() ? 0.0 : m->second});
  }
  return out;
}

using OpKey = std::tuple<int, std::int64_t, std::string, int>;

// Ops keyed by (rank, step, name or group, occurrence), with their names and times.
std::map<OpKey, std::pair<std::string, double>> keyed_ops(const TraceOps& t, bool by_group) {
  std::map<std::tuple<int, std::int64_t, std::string>, int> seen;
  std::map<OpKey, std::pair<std::string, double>> out;
  for (const auto& op : t.ops) {
    const auto& key = by_group ? op.group : op.name;
    const int k = seen[{op.rank, op.step, key}]++;
    out[{op.rank, op.step, key, k}] = {op.name, op.ms};
  }
  return out;
}

// Fills the family, communication and top-op figures of `into`.
void compare_ops(const TraceOps& sim, const TraceOps& meas, const std::vector<std::string>& comm,
                 bool by_group, Comparison& into) {
  into.has_traces = true;
  const std::vector<std::string> families(std::begin(kFamilies), std::end(kFamilies));
  into.families = figures(per_step_totals(sim, true), per_step_totals(meas, true), families);
  into.purposes = figures(per_step_totals(sim, false), per_step_totals(meas, false), comm);

  const auto sim_ops = keyed_ops(sim, by_group), meas_ops = keyed_ops(meas, by_group);
  std::vector<ComparedOp> matched;
  for (const auto& [key, op] : meas_ops) {
    const auto s = sim_ops.find(key);
    if (s == sim_ops.end()) continue;
    const auto& [rank, step, name, occurrence] = key;
    matched.push_back({rank, step, s->second.first, occurrence, by_group ? op.first : std::string(),
                       s->second.second, op.second});
  }
  into.matched_ops = matched.size();
  into.unmatched_ops = sim_ops.size() + meas_ops.size() - 2 * matched.size();
  std::stable_sort(matched.begin(), matched.end(), [](const ComparedOp& a, const ComparedOp& b) {
    return std::abs(a.simulated_ms - a.measured_ms) > std::abs(b.simulated_ms - b.measured_ms);
  });
  if (matched.size() > kTopOps) matched.resize(kTopOps);
  into.top_ops = std::move(matched);
}

std::string no_ops(std::string_view command) {
  return fmt::format(
      "expected op spans (a kernel kind or communication class as \"cat\", a \"step\" arg), as "
      "strait {} --trace writes them",
      command);
}

double number_at(const ConfigNode& doc, std::string_view key) {
  const auto node = doc.at(key);
  if (!node.is_number()) node.fail("expected a number (milliseconds)");
  return node.as_number();
}

nlohmann::json figure_json(const ComparedFigure& f) {
  const auto e = f.error();
  return {{"name", f.name},
          {"simulated_ms", f.simulated_ms},
          {"measured_ms", f.measured_ms},
          {"error", e ? nlohmann::json(*e) : nlohmann::json(nullptr)}};
}

nlohmann::json figures_json(const std::vector<ComparedFigure>& fs) {
  auto out = nlohmann::json::array();
  for (const auto& f : fs) out.push_back(figure_json(f));
  return out;
}

nlohmann::json optional_json(std::optional<double> v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

// The measured ops of `ranks` in steps [0, steps), in the form of a strait trace's.
TraceOps kineto_ops(const KinetoRun& run, const std::set<int>& ranks, std::int64_t steps) {
  TraceOps out;
  for (std::int64_t k = 0; k < steps; ++k) out.steps.insert(k);
  for (const int r : ranks) {
    out.ranks.insert(r);
    for (const auto& kernel : run.ranks.at(r).kernels) {
      if (kernel.step >= steps) continue;
      const bool nccl = kernel.family == calibration::KernelNameFamily::kNccl;
      out.ops.push_back({r, kernel.step, kernel.name,
                         nccl ? comm_op_label(kernel.collective) : family_of(kernel.family), !nccl,
                         kernel.ms});
    }
  }
  return out;
}

void keep_steps(TraceOps& t, std::int64_t steps) {
  std::erase_if(t.ops, [steps](const OpSpan& op) { return op.step >= steps; });
  std::erase_if(t.steps, [steps](std::int64_t step) { return step >= steps; });
}

// Step time (mean, p50, p99) and the "compute" breakdown of the first `steps` steps.
void kineto_step_figures(const ConfigNode& simulated, const KinetoRun& run, std::int64_t steps,
                         Comparison& c) {
  std::vector<double> job_ms(static_cast<std::size_t>(steps), 0.0);
  double compute_ms = 0;
  for (const auto& [r, trace] : run.ranks) {
    for (std::size_t k = 0; k < job_ms.size(); ++k) {
      job_ms[k] = std::max(job_ms[k], trace.step_ms[k]);
      compute_ms += trace.compute_ms[k];
    }
  }
  compute_ms /= static_cast<double>(run.ranks.size() * job_ms.size());
  // The trace's steps over the simulation's steady steps, as the simulation counts them
  // (every step for a result that does not say).
  sim::run::SteadyState phases{0, 0};
  if (const auto st = simulated.find("steady_state"); st && st->is_object()) {
    phases.warmup = st->int_or("warmup_steps", phases.warmup, 0, 1 << 20);
    phases.drain = st->int_or("drain_steps", phases.drain, 0, 1 << 20);
  }
  const auto stats = sim::run::step_statistics(job_ms, phases);
  c.step_time.push_back({"mean", number_at(simulated, "step_time_ms"), stats.mean_ms});
  if (simulated.has("step_time_p50_ms"))
    c.step_time.push_back({"p50", number_at(simulated, "step_time_p50_ms"), stats.p50_ms});
  if (simulated.has("step_time_p99_ms"))
    c.step_time.push_back({"p99", number_at(simulated, "step_time_p99_ms"), stats.p99_ms});
  // Exposed communication by purpose, straggler wait and bubble have no measured figure.
  if (const auto b = simulated.find("breakdown_ms"); b && b->is_object() && b->has("compute"))
    c.breakdown.push_back({"compute", number_at(*b, "compute"), compute_ms});
}

void kineto_notes(const KinetoRun& run, const std::set<int>& sim_ranks, std::int64_t sim_steps,
                  std::int64_t measured_steps, Comparison& c) {
  const auto& first = run.ranks.begin()->second.step_numbers;
  if (measured_steps > sim_steps) {
    c.notes.push_back(fmt::format(
        "the Kineto traces have {} profiler steps (ProfilerStep#{}..#{}), the simulated trace "
        "{}: compared the first {}",
        measured_steps, first.front(), first[static_cast<std::size_t>(measured_steps) - 1],
        sim_steps, sim_steps));
  } else if (measured_steps < sim_steps) {
    c.notes.push_back(fmt::format(
        "the simulated trace has {} steps, the Kineto traces {}: compared the first {} of each "
        "(simulated step time: all its steps)",
        sim_steps, measured_steps, measured_steps));
  }
  for (const auto& [r, trace] : run.ranks) {
    if (static_cast<std::int64_t>(trace.step_numbers.size()) > measured_steps)
      c.notes.push_back(fmt::format("rank {} ({}) has {} profiler steps, another rank only {}", r,
                                    trace.file, trace.step_numbers.size(), measured_steps));
    if (!sim_ranks.contains(r))
      c.notes.push_back(
          fmt::format("rank {} ({}) is not in the simulated trace: in step time and compute only",
                      r, trace.file));
  }
  int unknown = 0;
  std::pair<std::string, int> most{"", 0};
  for (const auto& [name, n] : run.unknown_kernels) {
    unknown += n;
    if (n > most.second) most = {name, n};
  }
  if (unknown > 0)
    c.notes.push_back(
        fmt::format("{} kernels of no known family are not in the families (most frequent: {} x{})",
                    unknown, most.first, most.second));
}

}  // namespace

std::optional<double> ComparedFigure::error() const {
  if (measured_ms == 0) return simulated_ms == 0 ? std::optional<double>(0.0) : std::nullopt;
  return simulated_ms / measured_ms - 1;
}

bool in_mape(const ComparedFigure& f) {
  return f.measured_ms > 0 && std::max(f.simulated_ms, f.measured_ms) >= kMapeFloorMs;
}

std::optional<double> mape_percent(const std::vector<ComparedFigure>& fs) {
  double sum = 0;
  int n = 0;
  for (const auto& f : fs) {
    if (!in_mape(f)) continue;
    sum += std::abs(*f.error());
    ++n;
  }
  if (n == 0) return std::nullopt;
  return 100.0 * sum / n;
}

Comparison compare_results(const ConfigNode& simulated, const ConfigNode& measured) {
  Comparison c;
  c.simulated_file = simulated.file();
  c.measured_file = measured.file();
  for (const auto* doc : {&simulated, &measured})
    if (!doc->is_object()) doc->fail("expected an object (strait simulate --json, exec --out)");
  c.scenario = simulated.string_or("scenario", "");
  if (measured.has("scenario") && simulated.has("scenario") &&
      measured.string("scenario") != c.scenario) {
    measured.at("scenario")
        .fail(fmt::format("expected the simulated run's scenario '{}' ({})", c.scenario,
                          c.simulated_file));
  }
  c.ranks = simulated.int_or("gpus", 0, 0, 1 << 24);
  if (measured.has("gpus") && simulated.has("gpus") && measured.integer("gpus") != c.ranks) {
    measured.at("gpus").fail(
        fmt::format("expected the simulated run's {} ranks ({})", c.ranks, c.simulated_file));
  }
  const std::pair<const char*, const char*> steps[] = {
      {"mean", "step_time_ms"}, {"p50", "step_time_p50_ms"}, {"p99", "step_time_p99_ms"}};
  for (const auto& [label, key] : steps) {
    // The mean is required; the percentiles are compared where both results have them.
    if (std::string_view(label) != "mean" && !(simulated.has(key) && measured.has(key))) continue;
    c.step_time.push_back({label, number_at(simulated, key), number_at(measured, key)});
  }
  if (measured.has("kernel_spread_percent"))
    c.measured_kernel_spread_percent = number_at(measured, "kernel_spread_percent");
  if (const auto st = measured.find("steady_state");
      st && st->is_object() && st->has("mean_ci95_ms")) {
    const ConfigNode ci = st->at("mean_ci95_ms");
    const auto bounds = ci.elements();
    if (bounds.size() != 2 || bounds[0].as_number() > bounds[1].as_number())
      ci.fail("expected [low, high] milliseconds");
    c.measured_mean_ci95_ms = std::make_pair(bounds[0].as_number(), bounds[1].as_number());
    c.measured_counted_steps = st->int_or("counted_steps", 0, 0, 1 << 20);
  }
  const auto sim_b = simulated.at("breakdown_ms"), meas_b = measured.at("breakdown_ms");
  if (!sim_b.is_object()) sim_b.fail("expected an object of milliseconds by term");
  if (!meas_b.is_object()) meas_b.fail("expected an object of milliseconds by term");
  for (const auto& key : sim_b.keys()) {
    if (!meas_b.has(key)) continue;
    c.breakdown.push_back({key, number_at(sim_b, key), number_at(meas_b, key)});
  }
  return c;
}

void compare_traces(const traces::Timeline& simulated, const std::string& simulated_file,
                    const traces::Timeline& measured, const std::string& measured_file,
                    Comparison& into) {
  const auto sim = trace_ops(simulated, false), meas = trace_ops(measured, false);
  if (sim.ops.empty()) throw ConfigError(simulated_file, "/traceEvents", no_ops("simulate"));
  if (meas.ops.empty()) throw ConfigError(measured_file, "/traceEvents", no_ops("exec"));
  if (sim.ranks != meas.ranks) {
    throw ConfigError(
        measured_file, "/traceEvents",
        fmt::format("expected the ranks of {} ({}); this trace has ranks {} (a "
                    "different scenario?)",
                    simulated_file, fmt::join(sim.ranks, ","), fmt::join(meas.ranks, ",")));
  }
  std::vector<std::string> purposes;
  purposes.reserve(sim::workload::kCommClassCount);
  for (int c = 0; c < sim::workload::kCommClassCount; ++c)
    purposes.emplace_back(sim::workload::to_string(static_cast<sim::workload::CommClass>(c)));
  compare_ops(sim, meas, purposes, false, into);
}

Comparison compare_with_kineto(const ConfigNode& simulated, const traces::Timeline& sim_trace,
                               const std::string& sim_trace_file, const KinetoRun& measured) {
  Comparison c;
  c.simulated_file = simulated.file();
  c.measured_file = measured.files();
  c.comm_by_op = true;
  if (!simulated.is_object()) simulated.fail("expected an object (strait simulate --json)");
  c.scenario = simulated.string_or("scenario", "");
  c.ranks = simulated.int_or("gpus", 0, 0, 1 << 24);
  auto sim = trace_ops(sim_trace, true);
  if (sim.ops.empty()) throw ConfigError(sim_trace_file, "/traceEvents", no_ops("simulate"));
  if (measured.ranks.empty())
    throw ConfigError(c.measured_file, "", "expected at least one Kineto trace");
  std::vector<int> measured_ranks;
  for (const auto& [r, trace] : measured.ranks) measured_ranks.push_back(r);
  for (const int r : sim.ranks) {
    if (!measured.ranks.contains(r)) {
      throw ConfigError(c.measured_file, "",
                        fmt::format("expected a Kineto trace of rank {} (traced in {}); these "
                                    "traces are of ranks {}",
                                    r, sim_trace_file, fmt::join(measured_ranks, ",")));
    }
  }
  std::int64_t measured_steps = -1;
  for (const auto& [r, trace] : measured.ranks) {
    const auto n = static_cast<std::int64_t>(trace.step_numbers.size());
    measured_steps = measured_steps < 0 ? n : std::min(measured_steps, n);
  }
  const auto sim_steps = static_cast<std::int64_t>(sim.steps.size());
  const std::int64_t steps = std::min(sim_steps, measured_steps);
  kineto_step_figures(simulated, measured, steps, c);
  kineto_notes(measured, sim.ranks, sim_steps, measured_steps, c);
  keep_steps(sim, steps);
  compare_ops(sim, kineto_ops(measured, sim.ranks, steps), comm_op_labels(), true, c);
  return c;
}

nlohmann::json comparison_json(const Comparison& c) {
  nlohmann::json out = {
      {"scenario", c.scenario},
      {"gpus", c.ranks},
      {"simulated", c.simulated_file},
      {"measured", c.measured_file},
      {"step_time", figures_json(c.step_time)},
      {"breakdown_ms", figures_json(c.breakdown)},
      {"measured_kernel_spread_percent", optional_json(c.measured_kernel_spread_percent)}};
  if (c.measured_mean_ci95_ms) {
    const auto [low, high] = *c.measured_mean_ci95_ms;
    const double simulated = c.step_time.empty() ? 0 : c.step_time.front().simulated_ms;
    out["measured_mean_ci95_ms"] = {low, high};
    out["simulated_mean_in_ci95"] = simulated >= low && simulated <= high;
  }
  if (!c.has_traces) return out;
  out["kernel_families"] = figures_json(c.families);
  out["kernel_family_mape_percent"] = optional_json(mape_percent(c.families));
  const std::string comm = c.comm_by_op ? "comm_ops" : "comm_purposes";
  out[comm] = figures_json(c.purposes);
  out[comm.substr(0, comm.size() - 1) + "_mape_percent"] = optional_json(mape_percent(c.purposes));
  auto ops = nlohmann::json::array();
  for (const auto& op : c.top_ops) {
    ops.push_back({{"rank", op.rank},
                   {"step", op.step},
                   {"name", op.name},
                   {"occurrence", op.occurrence},
                   {"measured_name", op.measured_name.empty() ? op.name : op.measured_name},
                   {"simulated_ms", op.simulated_ms},
                   {"measured_ms", op.measured_ms},
                   {"abs_error_ms", std::abs(op.simulated_ms - op.measured_ms)}});
  }
  out["top_ops"] = ops;
  out["matched_ops"] = c.matched_ops;
  out["unmatched_ops"] = c.unmatched_ops;
  if (!c.notes.empty()) out["notes"] = c.notes;
  return out;
}

traces::Timeline side_by_side(const traces::Timeline& simulated, const traces::Timeline& measured) {
  traces::Timeline out;
  const auto sim_ranks = simulated.ranks();
  const int offset = sim_ranks.empty() ? 0 : sim_ranks.back() + 1;
  auto copy = [&out](const traces::Timeline& from, int shift, std::string_view prefix) {
    for (const int r : from.ranks()) {
      const auto name = from.rank_name(r);
      out.set_rank_name(r + shift,
                        fmt::format("{}{}", prefix,
                                    name.empty() ? fmt::format("rank {}", r) : std::string(name)));
    }
    std::vector<std::string> text;  // keeps string args alive until add_span copies them
    std::vector<traces::Arg> args;
    for (const auto& span : from.spans()) {
      text.clear();
      args.clear();
      const auto span_args = from.args(span);
      text.reserve(span_args.size());
      for (const auto& a : span_args) {
        const auto& key = from.name_of(a.key);
        if (const auto* i = std::get_if<std::int64_t>(&a.value)) {
          args.emplace_back(key, *i);
        } else if (const auto* d = std::get_if<double>(&a.value)) {
          args.emplace_back(key, *d);
        } else {
          text.push_back(from.name_of(std::get<traces::InternedString>(a.value).id));
          args.emplace_back(key, std::string_view(text.back()));
        }
      }
      out.add_span(span.rank + shift, out.track(from.track_name(span.track)),
                   out.name(from.name_of(span.name)), out.name(from.name_of(span.category)),
                   span.start, span.end, std::span<const traces::Arg>(args));
    }
  };
  copy(simulated, 0, "simulated: ");
  copy(measured, offset, "measured: ");
  return out;
}

}  // namespace strait::executor
