#include "ir/dtype.h"

#include <stdexcept>

namespace ingot {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kBool: return "bool";
    case DType::kInt32: return "i32";
    case DType::kInt64: return "i64";
    case DType::kFloat16: return "f16";
    case DType::kBFloat16: return "bf16";
    case DType::kFloat32: return "f32";
  }
  return "?";
}

DType parse_dtype(const std::string& name) {
  for (DType t : {DType::kBool, DType::kInt32, DType::kInt64, DType::kFloat16, DType::kBFloat16, DType::kFloat32})
    if (name == dtype_name(t)) return t;
  throw std::invalid_argument("unknown dtype '" + name + "' (expected bool, i32, i64, f16, bf16 or f32)");
}

int dtype_bytes(DType t) {
  switch (t) {
    case DType::kBool: return 1;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kFloat16: return 2;
    case DType::kBFloat16: return 2;
    case DType::kFloat32: return 4;
  }
  return 0;
}

}  // namespace ingot
