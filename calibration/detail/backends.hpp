#pragma once
// The suite's backends: something that times kernel cases on one device, and something
// that times collectives over all ranks. run_suite (suite.cpp) drives them.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "calibration/kernel_case.hpp"

namespace strait::calibration::detail {

class Communicator;

class KernelBackend {
 public:
  virtual ~KernelBackend() = default;
  /// The device as records name it, e.g. "NVIDIA H100 80GB HBM3 (driver 580.159.04)".
  virtual std::string device() const = 0;
  /// Library versions the timings depend on ({"cublas": "13.0.0", ...}).
  virtual std::map<std::string, std::string> versions() const = 0;
  /// False for cases this device cannot run (fp8 without hardware support); skipped.
  virtual bool supports(const KernelCase& c) const = 0;
  /// Runs `c` `warmup` times untimed, then `repetitions` timed samples (microseconds
  /// each), through the family's method below. May refine the case's work where it
  /// depends on the data (the unique rows of an embedding update).
  std::vector<double> time(KernelCase& c, int warmup, int repetitions);

 protected:
  /// Called before every case (select the device, check the case); default: nothing.
  virtual void prepare(const KernelCase& c) { (void)c; }
  virtual std::vector<double> time_gemm(const KernelCase& c, int warmup, int repetitions) = 0;
  /// Jagged or padded, forward or backward (shape "pass").
  virtual std::vector<double> time_attention(const KernelCase& c, int warmup, int repetitions) = 0;
  virtual std::vector<double> time_embedding(KernelCase& c, int warmup, int repetitions) = 0;
  virtual std::vector<double> time_copy(const KernelCase& c, int warmup, int repetitions) = 0;
  virtual std::vector<double> time_adam(const KernelCase& c, int warmup, int repetitions) = 0;
};

class CollectiveBackend {
 public:
  virtual ~CollectiveBackend() = default;
  virtual std::string device() const = 0;
  virtual std::map<std::string, std::string> versions() const = 0;
  /// Runs `c` over all ranks: `warmup` untimed, then `repetitions` samples; each sample
  /// starts after a barrier and is the slowest rank's time in microseconds (identical on
  /// every rank). Sets `*check_ok` to whether every rank's result equals the expected one.
  virtual std::vector<double> time(const CollectiveCase& c, int warmup, int repetitions,
                                   bool* check_ok) = 0;
};

/// The CPU device: Eigen GEMM, the CPU reference kernels of kernels/, memcpy, Adam.
std::unique_ptr<KernelBackend> make_cpu_kernel_backend();
/// CUDA on the rank's GPU (local rank modulo the device count): cuBLAS/cuBLASLt GEMM,
/// strait's attention and TBE kernels, device copies, Adam. Throws Error without a CUDA
/// build or without a GPU.
std::unique_ptr<KernelBackend> make_cuda_kernel_backend(int local_rank);

/// Collectives through MPI on `comm`'s ranks (CPU backend).
std::unique_ptr<CollectiveBackend> make_mpi_collectives(Communicator& comm);
/// Collectives through NCCL, the communicator bootstrapped over `comm` (CUDA backend).
/// Throws Error without an NCCL build.
std::unique_ptr<CollectiveBackend> make_nccl_collectives(Communicator& comm, int local_rank);

}  // namespace strait::calibration::detail
