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

}  // namespace ingot
