#include "calibration/suite.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <set>

#include <fmt/format.h>

#include "calibration/detail/backends.hpp"
#include "calibration/detail/communicator.hpp"
#include "sim/core/error.hpp"

namespace strait::calibration {

std::vector<double> detail::KernelBackend::time(KernelCase& c, int warmup, int repetitions) {
  prepare(c);
  switch (*c.family.kernel) {
    case sim::cost::KernelKind::kGemm:
    case sim::cost::KernelKind::kGemmBackward:
      return time_gemm(c, warmup, repetitions);
    case sim::cost::KernelKind::kJaggedAttention:
    case sim::cost::KernelKind::kPaddedAttention:
    case sim::cost::KernelKind::kJaggedAttentionBackward:
    case sim::cost::KernelKind::kPaddedAttentionBackward:
      return time_attention(c, warmup, repetitions);
    case sim::cost::KernelKind::kEmbeddingLookup:
    case sim::cost::KernelKind::kEmbeddingUpdate:
      return time_embedding(c, warmup, repetitions);
    case sim::cost::KernelKind::kElementwise:
      return time_copy(c, warmup, repetitions);
    case sim::cost::KernelKind::kOptimizer:
      return time_adam(c, warmup, repetitions);
  }
  throw Error("calibrate: unknown kernel family");
}

namespace {

using detail::Communicator;

// Repetitions: enough for ~kTargetSeconds of samples per case, within [kMin, kMax].
constexpr double kTargetSeconds = 0.15;
constexpr int kMinRepetitions = 3;
constexpr int kMaxRepetitions = 25;
constexpr int kWarmup = 1;

int repetitions_for(double warmup_us) {
  const double n = kTargetSeconds * 1e6 / std::max(warmup_us, 1.0);
  return std::clamp(static_cast<int>(n), kMinRepetitions, kMaxRepetitions);
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

bool wanted(const SuiteOptions& options, const Family& family) {
  if (options.families.empty()) return true;
  return std::find(options.families.begin(), options.families.end(), family.name()) !=
         options.families.end();
}

// The suite's record of `c`: its samples, where and when they were taken.
Measurement record(const KernelCase& c, const std::vector<double>& samples,
                   const std::string& device, const std::map<std::string, std::string>& versions,
                   const std::string& date) {
  Measurement m = measure(c, samples);
  m.warmup = kWarmup;
  m.device = device;
  m.versions = versions;
  m.date = date;
  return m;
}

// Which of `labels` rank 0's earlier records hold, the same on every rank (rank 0 alone
// read them): the cases a resumed run skips.
std::vector<bool> already_done(const SuiteOptions& options, Communicator& comm,
                               const std::vector<std::string>& labels) {
  std::set<std::string> held;
  if (comm.rank() == 0) {
    for (const Measurement& m : options.done.records) held.insert(m.label());
  }
  std::vector<double> flags(labels.size(), 0);
  for (std::size_t i = 0; i < labels.size(); ++i) flags[i] = held.count(labels[i]) ? 1 : 0;
  comm.max_all(flags);
  std::vector<bool> out(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) out[i] = flags[i] > 0;
  return out;
}

// Tells rank 0's listener where the part stands.
void report(const SuiteOptions& options, const Communicator& comm, const char* part, int done,
            int total, std::string next, const MeasurementSet& out) {
  if (!options.progress || comm.rank() != 0) return;
  options.progress(SuiteProgress{part, done, total, std::move(next), &out});
}

void run_kernels(const SuiteOptions& options, Communicator& comm, detail::KernelBackend& backend,
                 MeasurementSet& out) {
  const std::string date = utc_now(), device = backend.device();
  const auto versions = backend.versions();
  std::vector<KernelCase> cases;
  std::vector<std::string> labels;
  for (KernelCase& c : kernel_cases(options.backend, options.quick)) {
    if (!wanted(options, c.family) || !backend.supports(c)) continue;
    labels.push_back(measure(c, {1.0}).label());
    cases.push_back(std::move(c));
  }
  const std::vector<bool> skip = already_done(options, comm, labels);
  const int total = static_cast<int>(cases.size());
  int done = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    KernelCase& c = cases[i];
    if (skip[i]) {
      ++done;
      continue;
    }
    report(options, comm, "kernels", done, total, labels[i], out);
    // Every rank times the case at once; warm-up decides the repetitions (the same on
    // every rank: the slowest rank's warm-up).
    comm.barrier();
    std::vector<double> warm{backend.time(c, 0, kWarmup).front()};
    comm.max_all(warm);
    const int reps = repetitions_for(warm.front());
    const std::vector<double> samples = comm.gather_all(backend.time(c, 0, reps));
    Measurement m = record(c, samples, device, versions, date);
    if (comm.rank() == 0) out.records.push_back(std::move(m));
    ++done;
  }
  report(options, comm, "kernels", done, total, "", out);
}

void run_collectives(const SuiteOptions& options, Communicator& comm,
                     detail::CollectiveBackend& backend, MeasurementSet& out) {
  const std::string date = utc_now(), device = backend.device();
  const auto versions = backend.versions();
  const int n = comm.size();
  std::vector<CollectiveCase> cases;
  std::vector<KernelCase> timed_cases;  // each case as the record names it
  std::vector<std::string> labels;
  for (const CollectiveCase& c : collective_cases(options.max_collective_bytes, options.quick)) {
    if (!wanted(options, Family{std::nullopt, c.op})) continue;
    KernelCase timed;
    timed.family = Family{std::nullopt, c.op};
    timed.shape = {{"ranks", n}, {"bytes", c.bytes}};
    timed.set = c.set;
    timed.bytes = static_cast<double>(c.bytes);
    labels.push_back(measure(timed, {1.0}).label());
    cases.push_back(c);
    timed_cases.push_back(std::move(timed));
  }
  const std::vector<bool> skip = already_done(options, comm, labels);
  const int total = static_cast<int>(cases.size());
  int done = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const CollectiveCase& c = cases[i];
    if (skip[i]) {
      ++done;
      continue;
    }
    report(options, comm, "collectives", done, total, labels[i], out);
    bool ok = false;
    const double warm = backend.time(c, 0, kWarmup, &ok).front();
    const std::vector<double> samples = backend.time(c, 0, repetitions_for(warm), &ok);
    if (!ok) {
      throw Error(fmt::format("calibrate: {} of {} bytes on {} ranks gave a wrong result",
                              sim::network::to_string(c.op), c.bytes, n));
    }
    Measurement m = record(timed_cases[i], samples, device, versions, date);
    set_bandwidths(m);
    m.check = "ok";
    if (comm.rank() == 0) out.records.push_back(std::move(m));
    ++done;
  }
  report(options, comm, "collectives", done, total, "", out);
}

}  // namespace

MeasurementSet run_suite(const SuiteOptions& options) {
  if (options.backend != "cpu" && options.backend != "cuda") {
    throw Error(
        fmt::format("calibrate: unknown backend \"{}\" (expected cpu or cuda)", options.backend));
  }
  Communicator& comm = Communicator::world();
  MeasurementSet out;
  out.backend = options.backend;
  if (comm.rank() == 0) out.records = options.done.records;
  const bool cuda = options.backend == "cuda";
  // Backends are made before anything runs, so a missing GPU stops the job at once.
  auto kernels = cuda ? detail::make_cuda_kernel_backend(comm.local_rank())
                      : detail::make_cpu_kernel_backend();
  std::unique_ptr<detail::CollectiveBackend> collectives;
  if (options.collectives && comm.size() > 1) {
    if (cuda) {
      collectives = detail::make_nccl_collectives(comm, comm.local_rank());
    } else {
#ifdef STRAIT_HAVE_MPI
      collectives = detail::make_mpi_collectives(comm);
#endif
    }
  }
  run_kernels(options, comm, *kernels, out);
  if (collectives) run_collectives(options, comm, *collectives, out);
  comm.barrier();
  return out;
}

}  // namespace strait::calibration
