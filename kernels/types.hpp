#pragma once
// Element types, devices and errors shared by every kernel of strait::kernels.
//
// Tensors cross the interface as raw pointers plus a shape struct: host pointers for
// Device::kCpu, device pointers for Device::kCuda. 16-bit values are stored as
// std::uint16_t bit patterns (IEEE binary16 or bfloat16); conversions round to nearest even.

#include <cstdint>
#include <string>

#include "sim/core/error.hpp"

namespace strait::kernels {

enum class DType : std::uint8_t { kF32, kF16, kBF16 };
enum class Device : std::uint8_t { kCpu, kCuda };

/// Size of one element in bytes.
constexpr int dtype_size(DType t) { return t == DType::kF32 ? 4 : 2; }
/// "f32", "f16" or "bf16".
const char* dtype_name(DType t);

/// float -> bfloat16 bits (round to nearest even; NaN stays NaN).
std::uint16_t float_to_bf16(float x);
/// bfloat16 bits -> float (exact).
float bf16_to_float(std::uint16_t b);
/// float -> IEEE binary16 bits (round to nearest even, overflow to inf, subnormals kept).
std::uint16_t float_to_f16(float x);
/// IEEE binary16 bits -> float (exact).
float f16_to_float(std::uint16_t h);

/// A kernel was called with arguments that do not fit together (shape, dtype, alignment).
/// what() reads "KERNEL: ARGUMENT: expected ..., got ...".
class KernelArgumentError : public Error {
 public:
  KernelArgumentError(const std::string& kernel, const std::string& argument,
                      const std::string& expectation);
};

/// A CUDA call failed, or CUDA was asked for in a build or on a machine without it.
/// what() reads "FILE:LINE: CALL: CUDA error string".
class CudaError : public Error {
 public:
  using Error::Error;
};

/// True when this build has the CUDA kernels (STRAIT_HAVE_CUDA).
bool built_with_cuda();

}  // namespace strait::kernels
