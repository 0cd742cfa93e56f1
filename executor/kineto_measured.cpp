#include "executor/kineto_measured.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/core/config_node.hpp"
#include "sim/core/error.hpp"
#include "traces/kineto_reader.hpp"
#include "traces/timeline.hpp"

namespace strait::executor {
namespace {

using calibration::KernelNameFamily;
using Interval = std::pair<Time, Time>;

constexpr std::string_view kStepPrefix = "ProfilerStep#";

std::optional<std::int64_t> step_number(std::string_view name) {
  if (!name.starts_with(kStepPrefix)) return std::nullopt;
  name.remove_prefix(kStepPrefix.size());
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), n);
  if (ec != std::errc() || end != name.data() + name.size()) return std::nullopt;
  return n;
}

const traces::SpanArg* find_arg(const traces::Timeline& tl, const traces::Span& span,
                                std::string_view key) {
  for (const auto& a : tl.args(span))
    if (tl.name_of(a.key) == key) return &a;
  return nullptr;
}

std::optional<std::int64_t> integer_arg(const traces::Timeline& tl, const traces::Span& span,
                                        std::string_view key) {
  const auto* a = find_arg(tl, span, key);
  if (!a) return std::nullopt;
  if (const auto* i = std::get_if<std::int64_t>(&a->value)) return *i;
  return std::nullopt;
}

std::optional<std::string> text_arg(const traces::Timeline& tl, const traces::Span& span,
                                    std::string_view key) {
  const auto* a = find_arg(tl, span, key);
  if (!a) return std::nullopt;
  if (const auto* s = std::get_if<traces::InternedString>(&a->value)) return tl.name_of(s->id);
  return std::nullopt;
}

// Steps by N, each from the earliest start to the latest end of its annotations.
using Steps = std::map<std::int64_t, Interval>;

void widen(Steps& steps, std::int64_t n, const traces::Span& span) {
  const auto [it, fresh] = steps.try_emplace(n, span.start, span.end);
  if (fresh) return;
  it->second.first = std::min(it->second.first, span.start);
  it->second.second = std::max(it->second.second, span.end);
}

std::optional<std::int64_t> step_around(const Steps& steps, Time t) {
  for (const auto& [n, interval] : steps)
    if (interval.first <= t && t < interval.second) return n;
  return std::nullopt;
}

double union_ms(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  Time total = Time::zero();
  std::optional<Time> covered_to;
  for (const auto& [start, end] : intervals) {
    if (!covered_to || start >= *covered_to) {
      total += end - start;
      covered_to = end;
    } else if (end > *covered_to) {
      total += end - *covered_to;
      covered_to = end;
    }
  }
  return total.to_ms();
}

struct Indexed {
  Steps cpu_steps, gpu_steps;
  std::map<std::int64_t, Time> launch_by_correlation;
  std::map<std::int64_t, std::string> collective_by_external_id;
  std::vector<std::size_t> gpu_events;  // span indices
  bool has_kernels = false;
};

Indexed index_trace(traces::Timeline& tl) {
  const auto user = tl.name("user_annotation"), gpu_user = tl.name("gpu_user_annotation");
  const auto runtime = tl.name("cuda_runtime"), driver = tl.name("cuda_driver");
  const auto cpu_op = tl.name("cpu_op"), kernel = tl.name("kernel");
  const auto memcpy = tl.name("gpu_memcpy"), memset = tl.name("gpu_memset");
  Indexed ix;
  const auto& spans = tl.spans();
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const auto& s = spans[i];
    if (s.category == user || s.category == gpu_user) {
      if (const auto n = step_number(tl.name_of(s.name)))
        widen(s.category == user ? ix.cpu_steps : ix.gpu_steps, *n, s);
    } else if (s.category == runtime || s.category == driver) {
      if (const auto c = integer_arg(tl, s, "correlation")) ix.launch_by_correlation[*c] = s.start;
    } else if (s.category == cpu_op) {
      const auto id = integer_arg(tl, s, "External id");
      const auto name = text_arg(tl, s, "Collective name");
      if (id && name) ix.collective_by_external_id[*id] = *name;
    } else if (s.category == kernel || s.category == memcpy || s.category == memset) {
      ix.gpu_events.push_back(i);
      ix.has_kernels |= s.category == kernel;
    }
  }
  return ix;
}

// The step N a GPU event belongs to (see the header).
std::optional<std::int64_t> step_of(const traces::Timeline& tl, const traces::Span& s,
                                    const Indexed& ix) {
  if (!ix.cpu_steps.empty()) {
    if (const auto c = integer_arg(tl, s, "correlation")) {
      if (const auto launch = ix.launch_by_correlation.find(*c);
          launch != ix.launch_by_correlation.end())
        return step_around(ix.cpu_steps, launch->second);
    }
  }
  if (const auto n = step_around(ix.gpu_steps, s.start)) return n;
  return step_around(ix.cpu_steps, s.start);
}

std::optional<sim::network::CollectiveOp> collective_of(const traces::Timeline& tl,
                                                        const traces::Span& s, const Indexed& ix) {
  auto name = text_arg(tl, s, "Collective name");
  if (!name) {
    if (const auto id = integer_arg(tl, s, "External id")) {
      if (const auto it = ix.collective_by_external_id.find(*id);
          it != ix.collective_by_external_id.end())
        name = it->second;
    }
  }
  if (name)
    if (const auto op = calibration::collective_name_op(*name)) return op;
  return calibration::nccl_kernel_op(tl.name_of(s.name));
}

KinetoRankTrace read_rank(const std::string& file, traces::Timeline& tl, KinetoRun& run) {
  const Indexed ix = index_trace(tl);
  KinetoRankTrace rank;
  rank.file = file;
  const Steps& steps = ix.cpu_steps.empty() ? ix.gpu_steps : ix.cpu_steps;
  if (steps.empty()) {
    throw ConfigError(file, "/traceEvents",
                      "expected \"ProfilerStep#N\" annotations (cat \"user_annotation\" or "
                      "\"gpu_user_annotation\"), as torch.profiler writes on each prof.step()");
  }
  if (!ix.has_kernels) {
    throw ConfigError(file, "/traceEvents",
                      "expected GPU kernel events (cat \"kernel\"), as torch.profiler writes "
                      "with ProfilerActivity.CUDA");
  }
  std::map<std::int64_t, std::size_t> ordinal;
  for (const auto& [n, interval] : steps) {
    ordinal[n] = rank.step_numbers.size();
    rank.step_numbers.push_back(n);
  }
  const std::size_t count = rank.step_numbers.size();
  std::vector<std::optional<Interval>> extent(count);
  std::vector<std::vector<Interval>> compute(count);
  const auto kernel = tl.name("kernel");
  for (const std::size_t i : ix.gpu_events) {
    const auto& s = tl.spans()[i];
    const auto n = step_of(tl, s, ix);
    if (!n || !ordinal.contains(*n)) continue;
    const std::size_t k = ordinal.at(*n);
    auto& e = extent[k];
    e = e ? Interval{std::min(e->first, s.start), std::max(e->second, s.end)}
          : Interval{s.start, s.end};
    if (s.category != kernel) continue;
    const auto& name = tl.name_of(s.name);
    const auto family = calibration::kernel_family_of_name(name);
    if (family != KernelNameFamily::kNccl) compute[k].emplace_back(s.start, s.end);
    if (family == KernelNameFamily::kUnknown) {
      ++run.unknown_kernels[name];
      continue;
    }
    KinetoKernel kk{static_cast<std::int64_t>(k), name, family, std::nullopt,
                    (s.end - s.start).to_ms()};
    if (family == KernelNameFamily::kNccl) kk.collective = collective_of(tl, s, ix);
    rank.kernels.push_back(std::move(kk));
  }
  for (std::size_t k = 0; k < count; ++k) {
    rank.step_ms.push_back(extent[k] ? (extent[k]->second - extent[k]->first).to_ms() : 0.0);
    rank.compute_ms.push_back(union_ms(std::move(compute[k])));
  }
  return rank;
}

}  // namespace

std::string KinetoRun::files() const {
  std::vector<std::string> out;
  for (const auto& [r, trace] : ranks) out.push_back(trace.file);
  return fmt::format("{}", fmt::join(out, ", "));
}

std::vector<std::string> kineto_trace_files(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const auto& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::directory_iterator(path, ec))
        if (entry.is_regular_file() && entry.path().extension() == ".json")
          found.push_back(entry.path().string());
      if (found.empty())
        throw IoError(fmt::format("{}: expected Kineto traces (*.json) in this directory", path));
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else if (fs::exists(path, ec)) {
      out.push_back(path);
    } else {
      throw IoError(fmt::format("{}: no such Kineto trace file or directory", path));
    }
  }
  return out;
}

KinetoRun read_kineto_run(const std::vector<std::string>& files) {
  KinetoRun run;
  for (std::size_t position = 0; position < files.size(); ++position) {
    const auto& file = files[position];
    const ConfigNode root = load_config(file);
    int rank = static_cast<int>(position);
    std::string pointer = "";
    if (root.is_object()) {
      if (const auto dist = root.find("distributedInfo"); dist && dist->is_object()) {
        if (const auto r = dist->find("rank")) {
          const std::int64_t value = r->as_integer();
          if (value < 0 || value > INT32_MAX) r->fail("expected a rank (0..2^31-1)");
          rank = static_cast<int>(value);
          pointer = "/distributedInfo/rank";
        }
      }
    }
    if (const auto other = run.ranks.find(rank); other != run.ranks.end()) {
      throw ConfigError(
          file, pointer,
          fmt::format("expected one trace per rank; {} is rank {} too", other->second.file, rank));
    }
    traces::Timeline tl;
    traces::read_kineto_trace(root, tl);
    run.ranks.emplace(rank, read_rank(file, tl, run));
  }
  return run;
}

}  // namespace strait::executor
