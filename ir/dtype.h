// Element types of tensors and index expressions. f16/bf16 are representable in the IR; which backends
// accept them is for each printer to say.
#pragma once

#include <cstdint>
#include <string>

namespace ingot {

enum class DType : uint8_t { kBool, kInt32, kInt64, kFloat16, kBFloat16, kFloat32 };

const char* dtype_name(DType t);
// Inverse of dtype_name; throws std::invalid_argument naming the bad string.
DType parse_dtype(const std::string& name);
int dtype_bytes(DType t);
inline bool is_float(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat32; }
inline bool is_int(DType t) { return t == DType::kInt32 || t == DType::kInt64; }

// The rtol and atol (as measure.rtol, measure.atol) at least that a program rounding values to bf16 is verified with:
// bf16 keeps 8 significant bits, so an f32 difference of one unit in the last place before a rounding (a sum in
// another order) moves the rounded value by 2^-8 of it, and through the layers of a model (BERT's 12) the outputs
// of a correct program differ from the interpreter's by a few 1e-3 of their largest value.
constexpr double kBf16Tolerance = 1e-2;

}  // namespace ingot
