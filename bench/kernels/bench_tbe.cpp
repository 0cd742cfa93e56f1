// Table-batched embedding benchmark, printed like nccl-tests, next to the device-to-device
// copy bandwidth measured in the same run.
// Bytes (FBGEMM's convention): forward = rows read (ids * dim * weight bytes) + output
// written (f32); backward = 2 x rows (read + write) + grad_output read. copy GB/s counts
// bytes read + written of a 1 GiB cudaMemcpy. Skew: "uniform" ids or "zipf" (s = 1.1).
// Without a CUDA device it times the CPU reference at a small size instead.

#include <algorithm>
#include <cstdio>
#include <exception>

#include <fmt/format.h>

#include "bench/kernels/bench_util.hpp"
#include "kernels/tbe.hpp"

namespace strait::kernels::bench {
namespace {

struct Config {
  int tables;
  int batch;
  int dim;
  int pooling_factor;
  std::int64_t rows;  // per table
  const char* skew;
  DType dtype;
};

struct Inputs {
  std::vector<std::int64_t> table_rows, indices, offsets;
};

Inputs make_inputs(const Config& c, Rng& rng) {
  Inputs in;
  for (int t = 0; t <= c.tables; ++t) in.table_rows.push_back(t * c.rows);
  std::vector<double> cdf;
  if (std::string(c.skew) == "zipf") {
    const std::int64_t support = std::min<std::int64_t>(c.rows, 1 << 20);
    cdf.resize(static_cast<std::size_t>(support));
    double acc = 0;
    for (std::int64_t r = 0; r < support; ++r)
      cdf[static_cast<std::size_t>(r)] = acc += std::pow(r + 1.0, -1.1);
    for (auto& x : cdf) x /= acc;
  }
  in.offsets.push_back(0);
  for (int bag = 0; bag < c.tables * c.batch; ++bag) {
    for (int e = 0; e < c.pooling_factor; ++e) {
      std::int64_t id = 0;
      if (cdf.empty()) {
        id = static_cast<std::int64_t>(rng.uniform_int(static_cast<std::uint64_t>(c.rows)));
      } else {
        // Hot ids spread over the table by a fixed odd multiplier (a permutation mod rows).
        const auto rank = std::lower_bound(cdf.begin(), cdf.end(), rng.uniform()) - cdf.begin();
        id = static_cast<std::int64_t>((static_cast<std::uint64_t>(rank) * 2654435761ull) %
                                       static_cast<std::uint64_t>(c.rows));
      }
      in.indices.push_back(id);
    }
    in.offsets.push_back(static_cast<std::int64_t>(in.indices.size()));
  }
  return in;
}

double copy_bandwidth_gbs() {
  const std::size_t bytes = std::size_t{1} << 30;
  DeviceBuffer a(bytes), b(bytes);
  a.zero();
  const double ms = time_gpu_ms([&] { cuda_copy_device_to_device(b.data(), a.data(), bytes); });
  return 2.0 * static_cast<double>(bytes) / (ms * 1e6);
}

void run_gpu(const Config& c, double copy_gbs, Rng& rng) {
  const Inputs in = make_inputs(c, rng);
  const TbeShape s{c.tables,
                   c.batch,
                   c.dim,
                   c.rows * c.tables,
                   static_cast<std::int64_t>(in.indices.size()),
                   c.dtype,
                   PoolingMode::kSum};
  const std::size_t wbytes = static_cast<std::size_t>(s.total_rows) * c.dim * dtype_size(c.dtype);
  const std::size_t out_n = static_cast<std::size_t>(c.batch) * c.tables * c.dim;
  DeviceBuffer w(wbytes), state(static_cast<std::size_t>(s.total_rows) * 4), out(out_n * 4),
      go(out_n * 4);
  w.zero();
  state.zero();
  go.zero();
  DeviceBuffer rows = DeviceBuffer::from_host(in.table_rows),
               idx = DeviceBuffer::from_host(in.indices), off = DeviceBuffer::from_host(in.offsets);
  TbeForwardArgs fa;
  fa.weights = w.data();
  fa.table_row_offsets = rows.as<std::int64_t>();
  fa.indices = idx.as<std::int64_t>();
  fa.offsets = off.as<std::int64_t>();
  fa.output = out.as<float>();
  fa.bounds_check = false;
  TbeBackwardArgs ba;
  ba.weights = w.data();
  ba.momentum = state.as<float>();
  ba.table_row_offsets = fa.table_row_offsets;
  ba.indices = fa.indices;
  ba.offsets = fa.offsets;
  ba.grad_output = go.as<float>();
  ba.bounds_check = false;
  const double fwd_ms = time_gpu_ms([&] { tbe_forward(Device::kCuda, s, fa); });
  const double bwd_ms = time_gpu_ms([&] { tbe_backward(Device::kCuda, s, ba); });
  const double row_bytes = static_cast<double>(s.num_indices) * c.dim * dtype_size(c.dtype);
  const double fwd_bytes = row_bytes + static_cast<double>(out_n) * 4;
  const double bwd_bytes = 2 * row_bytes + static_cast<double>(out_n) * 4;
  const double fwd_gbs = fwd_bytes / (fwd_ms * 1e6);
  fmt::print(
      "  {:>6} {:>6} {:>4} {:>4} {:>9} {:>7} {:>5} {:>9.3f} {:>8.1f} {:>6.1f} {:>9.3f} {:>8.1f} "
      "{:>8.1f}\n",
      c.tables, c.batch, c.dim, c.pooling_factor, c.rows, c.skew, dtype_name(c.dtype), fwd_ms,
      fwd_gbs, 100.0 * fwd_gbs / copy_gbs, bwd_ms, bwd_bytes / (bwd_ms * 1e6), copy_gbs);
}

void run_cpu() {
  const Config c{2, 256, 64, 20, 10000, "uniform", DType::kF32};
  Rng rng(1);
  const Inputs in = make_inputs(c, rng);
  const TbeShape s{c.tables,
                   c.batch,
                   c.dim,
                   c.rows * c.tables,
                   static_cast<std::int64_t>(in.indices.size()),
                   c.dtype,
                   PoolingMode::kSum};
  std::vector<float> w(static_cast<std::size_t>(s.total_rows) * c.dim, 0.01f),
      state(static_cast<std::size_t>(s.total_rows));
  std::vector<float> out(static_cast<std::size_t>(c.batch) * c.tables * c.dim),
      go(out.size(), 0.01f);
  TbeForwardArgs fa;
  fa.weights = w.data();
  fa.table_row_offsets = in.table_rows.data();
  fa.indices = in.indices.data();
  fa.offsets = in.offsets.data();
  fa.output = out.data();
  TbeBackwardArgs ba;
  ba.weights = w.data();
  ba.momentum = state.data();
  ba.table_row_offsets = in.table_rows.data();
  ba.indices = in.indices.data();
  ba.offsets = in.offsets.data();
  ba.grad_output = go.data();
  const double fwd_ms = time_cpu_ms([&] { tbe_forward(Device::kCpu, s, fa); });
  const double bwd_ms = time_cpu_ms([&] { tbe_backward(Device::kCpu, s, ba); });
  const double row_bytes = static_cast<double>(s.num_indices) * c.dim * 4;
  fmt::print("#\n# {:>6} {:>6} {:>4} {:>4} {:>9} {:>7} {:>5} {:>9} {:>8} {:>9} {:>8}\n", "tables",
             "batch", "dim", "L", "rows", "skew", "type", "fwd(ms)", "GB/s", "bwd(ms)", "GB/s");
  fmt::print("  {:>6} {:>6} {:>4} {:>4} {:>9} {:>7} {:>5} {:>9.3f} {:>8.2f} {:>9.3f} {:>8.2f}\n",
             c.tables, c.batch, c.dim, c.pooling_factor, c.rows, c.skew, dtype_name(c.dtype),
             fwd_ms, (row_bytes + static_cast<double>(out.size()) * 4) / (fwd_ms * 1e6), bwd_ms,
             (2 * row_bytes + static_cast<double>(out.size()) * 4) / (bwd_ms * 1e6));
}

}  // namespace
}  // namespace strait::kernels::bench

int main() {
  using namespace strait::kernels;
  using namespace strait::kernels::bench;
  try {
    fmt::print(
        "# strait bench: table-batched embeddings, sum pooling, row-wise AdaGrad backward\n");
    fmt::print(
        "# GB/s: fwd = (ids*dim*wbytes + output f32) / t; bwd = (2*ids*dim*wbytes + grad f32) / "
        "t\n");
    if (cuda_device_count() == 0) {
      fmt::print("# no CUDA device found: timing the CPU reference at a small size\n");
      run_cpu();
      return 0;
    }
    fmt::print("# device: {}\n", cuda_device_name());
    const double copy_gbs = copy_bandwidth_gbs();
    fmt::print("# device-to-device copy: {:.1f} GB/s (read + write)\n#\n", copy_gbs);
    fmt::print("# {:>6} {:>6} {:>4} {:>4} {:>9} {:>7} {:>5} {:>9} {:>8} {:>6} {:>9} {:>8} {:>8}\n",
               "tables", "batch", "dim", "L", "rows", "skew", "type", "fwd(ms)", "GB/s", "%copy",
               "bwd(ms)", "GB/s", "copyGB/s");
    strait::Rng rng(42);
    for (const DType t : {DType::kF32, DType::kF16})
      for (const int dim : {64, 128, 256})
        for (const int pf : {1, 20})
          for (const std::int64_t rows : {std::int64_t{100000}, std::int64_t{1000000}})
            for (const char* skew : {"uniform", "zipf"})
              run_gpu({8, 8192, dim, pf, rows, skew, t}, copy_gbs, rng);
    // The one-GPU scenarios' embedding ops as strait exec runs them: hstu-1gpu's item table
    // (one id per bag, dim 512, 10M rows) and dlrm-1gpu's 26 tables as one (pooling ~214).
    for (const char* skew : {"uniform", "zipf"}) {
      run_gpu({1, 22696, 512, 1, 10000000, skew, DType::kF32}, copy_gbs, rng);
      run_gpu({1, 55296, 128, 214, 2000000, skew, DType::kF32}, copy_gbs, rng);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_tbe: %s\n", e.what());
    return 1;
  }
  return 0;
}
