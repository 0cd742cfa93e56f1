#include "traces/kineto_trace_writer.hpp"

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "sim/core/atomic_file.hpp"
#include "sim/core/error.hpp"
#include "traces/detail/event_stream.hpp"
#include "traces/detail/json_text.hpp"

namespace strait::traces {
namespace {

using detail::json_microseconds;
using detail::json_number;
using detail::json_quote;

constexpr int kComputeStream = 7;      // the stream PyTorch's default stream shows as
constexpr int kFirstOtherStream = 20;  // side streams (communication, sparse compute)
constexpr int kCpuPidBase = 10'000;    // CPU pid = tid of rank r: 10000 + r
constexpr Time kLaunchLead = Time::from_us(5);
constexpr Time kLaunchOp = Time::from_us(4);
// 2023-11-14T22:13:20Z: a fixed epoch keeps the output deterministic.
constexpr std::int64_t kBaseTimeNs = 1'700'000'000'000'000'000;
constexpr std::string_view kNcclArgs = "(ncclDevKernelArgsStorage<4096ul>)";

// ---- Kernel names by strait kernel kind (the span category sim/run writes).
struct KernelKindName {
  std::string_view kind;
  std::string_view name;
};
constexpr KernelKindName kKernelNames[] = {
    {"gemm",
     "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
     "segment_k_off_kernel__5x_cublas"},
    {"jagged_attention", "hstu_jagged_attention_fwd_kernel<cutlass::bfloat16_t, 128, 64, true>"},
    {"padded_attention",
     "flash_attention_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t>>"},
    {"jagged_attention_backward",
     "hstu_jagged_attention_bwd_kernel<cutlass::bfloat16_t, 128, 64, true>"},
    {"padded_attention_backward",
     "flash_attention_bwd_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t>>"},
    {"embedding_lookup",
     "split_embedding_codegen_forward_unweighted_kernel<float, float, int64_t, int64_t, 8, 4>"},
    {"embedding_update",
     "split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<float, "
     "float, int64_t, 8>"},
    {"elementwise",
     "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
     "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
     "at::detail::Array<char*, 3>)"},
    {"gemm_backward",
     "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
     "segment_k_off_kernel__5x_cublas"},
    {"optimizer",
     "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
     "namespace)::TensorListMetadata<4>, at::native::(anonymous "
     "namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double, "
     "double, double, double, double, double, bool, float*, float*>"},
};
// A100-class GPUs run Ampere cuBLAS kernels, not Hopper's sm90 ones.
constexpr std::string_view kAmpereGemm =
    "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn";

const std::string_view* kernel_name(std::string_view kind) {
  for (const auto& k : kKernelNames) {
    if (k.kind == kind) return &k.name;
  }
  return nullptr;
}

// ---- Collectives by strait op name (network::to_string, or the nccl-tests spelling the
// parser also accepts), as NCCL and c10d name them.
enum class MessageShape { kSame, kGather, kScatter };  // in/out elements per rank
struct CollectiveName {
  std::string_view strait;
  std::string_view alias;
  std::string_view nccl;  // kernel name stem after "ncclDevKernel_"
  bool reduces;           // "_Sum_<type>" in the kernel name
  std::string_view c10d;  // record_param_comms' "Collective name"
  MessageShape shape;
};
constexpr CollectiveName kCollectives[] = {
    {"all_reduce", "allreduce", "AllReduce", true, "allreduce", MessageShape::kSame},
    {"all_gather", "allgather", "AllGather", false, "_allgather_base", MessageShape::kGather},
    {"reduce_scatter", "reducescatter", "ReduceScatter", true, "_reduce_scatter_base",
     MessageShape::kScatter},
    {"all_to_all", "alltoall", "SendRecv", false, "all_to_all", MessageShape::kSame},
    {"all_to_allv", "alltoallv", "SendRecv", false, "all_to_allv", MessageShape::kSame},
    {"broadcast", "bcast", "Broadcast", false, "broadcast", MessageShape::kSame},
    {"reduce", "reduce", "Reduce", true, "reduce", MessageShape::kSame},
    {"sendrecv", "send_recv", "SendRecv", false, "send", MessageShape::kSame},
};

const CollectiveName* collective_name(std::string_view op) {
  for (const auto& c : kCollectives) {
    if (c.strait == op || c.alias == op) return &c;
  }
  return nullptr;
}

using detail::EventStream;

// One GPU event: a span of the rank that is kernel or collective work.
struct GpuEvent {
  const Span* span;
  std::string name;
  std::string args;  // the args object's members after the common ones, each ",key:value"
  bool collective;
  std::int64_t step;
};

class KinetoTraceWriter {
 public:
  KinetoTraceWriter(const Timeline& timeline, const std::vector<const Span*>& spans,
                    const std::map<TrackId, int>& streams, const KinetoTraceOptions& options)
      : timeline_(timeline), streams_(streams), options_(options) {
    for (const Span* s : spans) {
      if (auto e = gpu_event(*s)) events_.push_back(std::move(*e));
    }
    std::stable_sort(events_.begin(), events_.end(), [](const GpuEvent& a, const GpuEvent& b) {
      return a.span->start < b.span->start;
    });
  }

  void write(std::ostream& out) const {
    EventStream json(out);
    const auto [major, minor] = compute_capability(options_.device.name);
    json.append(
        "{{\n\"schemaVersion\":1,\n\"deviceProperties\":[{{\"id\":{},\"name\":{},"
        "\"totalGlobalMem\":{},\"computeMajor\":{},\"computeMinor\":{},"
        "\"maxThreadsPerBlock\":1024,\"maxThreadsPerMultiprocessor\":2048,"
        "\"regsPerBlock\":65536,\"warpSize\":32,\"sharedMemPerBlock\":49152,\"numSms\":{}}}],\n"
        "\"distributedInfo\":{{\"backend\":\"nccl\",\"rank\":{},\"world_size\":{}}},\n"
        "\"traceEvents\":[",
        options_.device.id, json_quote(options_.device.name), options_.device.total_memory, major,
        minor, options_.device.sm_count, options_.rank, options_.world_size);
    write_metadata(json);
    write_events(json);
    json.append("\n],\n\"displayTimeUnit\":\"ms\",\n\"baseTimeNanoseconds\":{}\n}}\n", kBaseTimeNs);
    json.flush();
  }

 private:
  int cpu_pid() const { return kCpuPidBase + options_.rank; }
  int stream(const Span& s) const { return streams_.at(s.track); }
  const std::string& text(NameId id) const { return timeline_.name_of(id); }

  std::string arg_value(const SpanArg& a) const {
    if (const auto* i = std::get_if<std::int64_t>(&a.value)) return fmt::format("{}", *i);
    if (const auto* d = std::get_if<double>(&a.value)) return json_number(*d);
    return json_quote(text(std::get<InternedString>(a.value).id));
  }

  std::optional<GpuEvent> gpu_event(const Span& s) const {
    std::optional<std::string> op;
    std::optional<std::string> group;
    std::optional<std::int64_t> bytes;
    std::optional<std::int64_t> group_size;
    std::int64_t step = 0;
    std::string args;
    for (const SpanArg& a : timeline_.args(s)) {
      const std::string& key = text(a.key);
      const auto* i = std::get_if<std::int64_t>(&a.value);
      const auto* str = std::get_if<InternedString>(&a.value);
      if (key == "step" && i) {
        step = *i;
        args += fmt::format(",\"step\":{}", *i);
        continue;
      }
      if (key == "op" && str) op = text(str->id);
      if (key == "group" && str) group = text(str->id);
      if (key == "bytes" && i) bytes = *i;
      if (key == "group_size" && i) group_size = *i;
      args += fmt::format(",{}:{}", json_quote(key == "op" ? "strait collective" : "strait " + key),
                          arg_value(a));
    }
    const std::string& category = text(s.category);
    if (const std::string_view* name = kernel_name(category)) {
      const bool ampere = compute_capability(options_.device.name).first == 8;
      return GpuEvent{
          &s,
          std::string((category == "gemm" || category == "gemm_backward") && ampere ? kAmpereGemm
                                                                                    : *name),
          fmt::format(",\"strait op\":{},\"strait kind\":{}", json_quote(text(s.name)),
                      json_quote(category)) +
              args,
          false, step};
    }
    // Collective scenarios name the op in the category; training runs in the "op" arg (their
    // category is the communication purpose).
    const CollectiveName* c = collective_name(op.value_or(category));
    if (!c) return std::nullopt;  // "wait for peers", link transfers: no GPU work
    const std::int64_t n = std::max<std::int64_t>(1, group_size.value_or(options_.world_size));
    const std::int64_t size = bytes.value_or(0);
    const std::int64_t per_rank = c->shape == MessageShape::kSame ? 1 : n;
    const bool floats = size % (4 * per_rank) == 0;
    const std::int64_t elements = size / (floats ? 4 : 1);
    const std::int64_t in = c->shape == MessageShape::kGather ? elements / n : elements;
    const std::int64_t out = c->shape == MessageShape::kScatter ? elements / n : elements;
    const std::string kernel =
        fmt::format("ncclDevKernel_{}{}{}{}", c->nccl,
                    c->reduces ? fmt::format("_Sum_{}", floats ? "f32" : "u8") : "",
                    c->nccl == "SendRecv" ? "" : "_RING_LL", kNcclArgs);
    std::string meta = fmt::format(
        ",\"Collective name\":{},\"In msg nelems\":{},\"Out msg nelems\":{},\"Group size\":{},"
        "\"dtype\":{},\"Process Group Name\":{},\"strait op\":{},\"strait purpose\":{}",
        json_quote(c->c10d), in, out, n, floats ? "\"Float\"" : "\"Byte\"",
        json_quote(group.value_or("default_pg")), json_quote(text(s.name)), json_quote(category));
    return GpuEvent{&s, kernel, meta + args, true, step};
  }

  void write_metadata(EventStream& json) const {
    const int pid = cpu_pid();
    json.event(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":{}}}}})", pid,
               json_quote(fmt::format("strait rank {}", options_.rank)));
    json.event(
        R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"thread {}"}}}})", pid,
        pid, pid);
    const int device = options_.device.id;
    json.event(R"({{"ph":"M","name":"process_name","pid":{},"tid":0,"args":{{"name":"GPU {}"}}}})",
               device, device);
    json.event(R"({{"ph":"M","name":"process_labels","pid":{},"tid":0,"args":{{"labels":{}}}}})",
               device, json_quote(options_.device.name));
    std::set<int> used{kComputeStream};
    for (const GpuEvent& e : events_) used.insert(stream(*e.span));
    for (int s : used) {
      json.event(
          R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":"stream {}"}}}})",
          device, s, s);
      json.event(
          R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
          device, s, s);
    }
  }

  struct StepExtent {
    Time cpu_first = Time::infinite();
    Time gpu_first = Time::infinite();
    Time gpu_last = Time::zero();
  };

  void write_events(EventStream& json) const {
    const int pid = cpu_pid();
    const int device = options_.device.id;
    std::map<std::int64_t, StepExtent> steps;
    Time cpu = Time::zero();  // end of the previous launch's op; <= every later kernel's start
    std::int64_t correlation = 0;
    for (const GpuEvent& e : events_) {
      const Span& s = *e.span;
      ++correlation;
      // The op that launches it: [a, a + w] before the kernel, the launch inside it.
      const Time a = std::max(cpu, s.start - kLaunchLead);
      const Time w = std::min(kLaunchOp, s.start - a);
      const Time launch = a + Time::from_ps(w.ps() / 8);
      const Time launch_dur = w - Time::from_ps(w.ps() / 4);
      cpu = a + w;
      json.event(
          R"({{"ph":"X","cat":"cpu_op","name":{},"pid":{},"tid":{},"ts":{},"dur":{},"args":{{"External id":{},"Sequence number":{},"Fwd thread id":0,"Record function id":0,"Ev Idx":{}}}}})",
          e.collective ? json_quote("record_param_comms") : json_quote(text(s.name)), pid, pid,
          json_microseconds(a), json_microseconds(w), correlation, correlation, correlation - 1);
      json.event(
          R"({{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"External id":{},"cbid":211,"correlation":{}}}}})",
          pid, pid, json_microseconds(launch), json_microseconds(launch_dur), correlation,
          correlation);
      const int blocks = std::max(1, options_.device.sm_count);
      json.event(
          R"({{"ph":"X","cat":"kernel","name":{},"pid":{},"tid":{},"ts":{},"dur":{},"args":{{"External id":{},"queued":0,"device":{},"context":1,"stream":{},"correlation":{},"registers per thread":128,"shared memory":0,"grid":[{},1,1],"block":[256,1,1]{}}}}})",
          json_quote(e.name), device, stream(s), json_microseconds(s.start),
          json_microseconds(s.end - s.start), correlation, device, stream(s), correlation, blocks,
          e.args);
      json.event(R"({{"ph":"s","id":{},"pid":{},"tid":{},"ts":{},"cat":"ac2g","name":"ac2g"}})",
                 correlation, pid, pid, json_microseconds(launch));
      json.event(
          R"({{"ph":"f","id":{},"pid":{},"tid":{},"ts":{},"cat":"ac2g","name":"ac2g","bp":"e"}})",
          correlation, device, stream(s), json_microseconds(s.start));
      StepExtent& step = steps[e.step];
      step.cpu_first = std::min(step.cpu_first, a);
      step.gpu_first = std::min(step.gpu_first, s.start);
      step.gpu_last = std::max(step.gpu_last, s.end);
    }
    // CPU steps partition the launches' time: each runs to the next step's first launch.
    for (auto it = steps.begin(); it != steps.end(); ++it) {
      const auto next = std::next(it);
      const Time start = it->second.cpu_first;
      const Time end = next == steps.end() ? cpu : std::max(start, next->second.cpu_first);
      if (next != steps.end()) next->second.cpu_first = end;
      json.event(
          R"({{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{}","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"External id":{}}}}})",
          it->first, pid, pid, json_microseconds(start), json_microseconds(end - start),
          ++correlation);
      json.event(
          R"({{"ph":"X","cat":"gpu_user_annotation","name":"ProfilerStep#{}","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"External id":{}}}}})",
          it->first, device, kComputeStream, json_microseconds(it->second.gpu_first),
          json_microseconds(it->second.gpu_last - it->second.gpu_first), correlation);
    }
  }

  const Timeline& timeline_;
  const std::map<TrackId, int>& streams_;
  const KinetoTraceOptions& options_;
  std::vector<GpuEvent> events_;
};

bool is_gpu_work(const Timeline& timeline, const Span& s) {
  if (kernel_name(timeline.name_of(s.category))) return true;
  if (collective_name(timeline.name_of(s.category))) return true;
  for (const SpanArg& a : timeline.args(s)) {
    const auto* str = std::get_if<InternedString>(&a.value);
    if (str && timeline.name_of(a.key) == "op" && collective_name(timeline.name_of(str->id))) {
      return true;
    }
  }
  return false;
}

// Stream ids by track, the same on every rank: "compute" is 7, the others 20, 21, ... in
// TrackId order among the tracks that carry GPU work.
std::map<TrackId, int> stream_ids(const Timeline& timeline) {
  std::set<TrackId> tracks;
  for (const Span& s : timeline.spans()) {
    if (!tracks.contains(s.track) && is_gpu_work(timeline, s)) tracks.insert(s.track);
  }
  std::map<TrackId, int> streams;
  int next = kFirstOtherStream;
  for (TrackId t : tracks) {
    streams[t] = timeline.track_name(t) == "compute" ? kComputeStream : next++;
  }
  return streams;
}

void write_rank(const Timeline& timeline, const std::vector<const Span*>& spans,
                const std::map<TrackId, int>& streams, const std::string& path,
                const KinetoTraceOptions& options) {
  const KinetoTraceWriter writer(timeline, spans, streams, options);
  write_file_atomically(path, [&](std::ostream& out) { writer.write(out); });
}

}  // namespace

std::pair<int, int> compute_capability(std::string_view gpu_type) {
  static constexpr std::pair<std::string_view, std::pair<int, int>> kKnown[] = {
      {"GB200", {10, 0}}, {"B200", {10, 0}}, {"H100", {9, 0}}, {"H200", {9, 0}},
      {"H800", {9, 0}},   {"GH200", {9, 0}}, {"L40", {8, 9}},  {"L4", {8, 9}},
      {"A100", {8, 0}},   {"A800", {8, 0}},  {"A10", {8, 6}},  {"V100", {7, 0}},
  };
  for (const auto& [prefix, cc] : kKnown) {
    if (gpu_type.find(prefix) != std::string_view::npos) return cc;
  }
  return {0, 0};
}

void write_kineto_trace(const Timeline& timeline, const std::string& path,
                        const KinetoTraceOptions& options) {
  std::vector<const Span*> spans;
  for (const Span& s : timeline.spans()) {
    if (s.rank == options.rank) spans.push_back(&s);
  }
  write_rank(timeline, spans, stream_ids(timeline), path, options);
}

std::vector<std::string> write_kineto_trace_directory(const Timeline& timeline,
                                                      const std::string& directory,
                                                      const KinetoJob& job) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec || !std::filesystem::is_directory(directory)) {
    throw IoError(fmt::format("{}: cannot create the trace directory{}", directory,
                              ec ? ": " + ec.message() : std::string()));
  }
  std::map<int, std::vector<const Span*>> by_rank;
  for (int r : timeline.ranks()) by_rank[r];
  for (const Span& s : timeline.spans()) {
    if (s.rank != kGlobalRank) by_rank[s.rank].push_back(&s);
  }
  const std::map<TrackId, int> streams = stream_ids(timeline);
  std::vector<std::string> paths;
  for (const auto& [rank, spans] : by_rank) {
    const KinetoTraceOptions options{
        .rank = rank,
        .world_size = job.world_size,
        .device = job.device_of ? job.device_of(rank) : KinetoDevice{0, "unknown GPU", 0, 0}};
    paths.push_back(
        (std::filesystem::path(directory) / fmt::format("rank-{}.json", rank)).string());
    write_rank(timeline, spans, streams, paths.back(), options);
  }
  return paths;
}

}  // namespace strait::traces
