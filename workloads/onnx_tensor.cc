#include "workloads/onnx_tensor.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "workloads/onnx_import.h"

namespace ingot {

namespace {

using onnx::TensorProto;

std::string shape_text(const TensorProto& proto) {
  std::string s = "[";
  for (int d = 0; d < proto.dims_size(); ++d) s += (d ? ", " : "") + std::to_string(proto.dims(d));
  return s + "]";
}

std::string tensor_label(const TensorProto& proto) {
  return proto.name().empty() ? std::string("tensor") : "tensor '" + proto.name() + "'";
}

// Copies `count` typed values into the tensor's storage, narrowing each as the dtype requires.
template <class Source>
void copy_typed(HostTensor& out, const Source& values) {
  switch (out.dtype()) {
    case DType::kFloat32:
      for (int i = 0; i < values.size(); ++i) out.f32()[i] = float(values.Get(i));
      break;
    case DType::kInt64:
      for (int i = 0; i < values.size(); ++i) out.i64()[i] = int64_t(values.Get(i));
      break;
    case DType::kInt32:
      for (int i = 0; i < values.size(); ++i) out.i32()[i] = int32_t(values.Get(i));
      break;
    case DType::kBool:
      for (int i = 0; i < values.size(); ++i) static_cast<uint8_t*>(out.data())[i] = values.Get(i) != 0;
      break;
    case DType::kFloat16:
    case DType::kBFloat16:
      // ONNX keeps 16-bit floats as their bit patterns in int32_data.
      for (int i = 0; i < values.size(); ++i) static_cast<uint16_t*>(out.data())[i] = uint16_t(values.Get(i));
      break;
  }
}

}  // namespace

std::string onnx_type_name(int32_t onnx_type) {
  if (TensorProto::DataType_IsValid(onnx_type)) return TensorProto::DataType_Name(TensorProto::DataType(onnx_type));
  return "data type " + std::to_string(onnx_type);
}

DType dtype_from_onnx(int32_t onnx_type, const std::string& what) {
  switch (onnx_type) {
    case TensorProto::FLOAT: return DType::kFloat32;
    case TensorProto::FLOAT16: return DType::kFloat16;
    case TensorProto::BFLOAT16: return DType::kBFloat16;
    case TensorProto::INT32: return DType::kInt32;
    case TensorProto::INT64: return DType::kInt64;
    case TensorProto::BOOL: return DType::kBool;
    default:
      throw OnnxUnsupportedError(what + ": element type " + onnx_type_name(onnx_type) +
                                 " is not supported (ingot holds FLOAT, FLOAT16, BFLOAT16, INT32, INT64, BOOL)");
  }
}

int32_t dtype_to_onnx(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return TensorProto::FLOAT;
    case DType::kFloat16: return TensorProto::FLOAT16;
    case DType::kBFloat16: return TensorProto::BFLOAT16;
    case DType::kInt32: return TensorProto::INT32;
    case DType::kInt64: return TensorProto::INT64;
    case DType::kBool: return TensorProto::BOOL;
  }
  throw std::logic_error("dtype_to_onnx: unknown dtype");
}

HostTensor tensor_from_onnx(const TensorProto& proto) {
  const std::string label = tensor_label(proto);
  if (proto.data_location() == TensorProto::EXTERNAL || proto.external_data_size() > 0)
    throw OnnxUnsupportedError(label + ": external data is not supported; save the model with its tensors inline");
  if (proto.has_segment()) throw OnnxUnsupportedError(label + ": segmented tensors are not supported");
  DType dtype = dtype_from_onnx(proto.data_type(), label);
  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  for (int64_t d : shape)
    if (d < 0) throw std::invalid_argument(label + " has a negative dimension in " + shape_text(proto));
  HostTensor out(dtype, shape);
  const int64_t n = out.num_elements();

  auto check_count = [&](int64_t have, const char* field) {
    if (have != n)
      throw std::invalid_argument(label + " of shape " + shape_text(proto) + " needs " + std::to_string(n) +
                                  " values but " + field + " holds " + std::to_string(have));
  };
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    check_count(int64_t(raw.size()) / dtype_bytes(dtype), "raw_data");
    if (raw.size() % size_t(dtype_bytes(dtype)) != 0)
      throw std::invalid_argument(label + ": raw_data size is not a multiple of the element size");
    std::memcpy(out.data(), raw.data(), out.num_bytes());
    if (dtype == DType::kBool)  // any non-zero byte is true; keep the canonical 0/1
      for (int64_t i = 0; i < n; ++i) static_cast<uint8_t*>(out.data())[i] = static_cast<uint8_t*>(out.data())[i] != 0;
    return out;
  }
  switch (dtype) {
    case DType::kFloat32:
      check_count(proto.float_data_size(), "float_data");
      copy_typed(out, proto.float_data());
      break;
    case DType::kInt64:
      check_count(proto.int64_data_size(), "int64_data");
      copy_typed(out, proto.int64_data());
      break;
    default:
      check_count(proto.int32_data_size(), "int32_data");
      copy_typed(out, proto.int32_data());
      break;
  }
  return out;
}

TensorProto tensor_to_onnx(const HostTensor& tensor, const std::string& name, bool use_typed_fields) {
  TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(dtype_to_onnx(tensor.dtype()));
  for (int64_t d : tensor.shape()) proto.add_dims(d);
  const int64_t n = tensor.num_elements();
  if (!use_typed_fields) {
    proto.set_raw_data(std::string(static_cast<const char*>(tensor.data()), tensor.num_bytes()));
    return proto;
  }
  switch (tensor.dtype()) {
    case DType::kFloat32:
      for (int64_t i = 0; i < n; ++i) proto.add_float_data(tensor.f32()[i]);
      break;
    case DType::kInt64:
      for (int64_t i = 0; i < n; ++i) proto.add_int64_data(tensor.i64()[i]);
      break;
    case DType::kInt32:
      for (int64_t i = 0; i < n; ++i) proto.add_int32_data(tensor.i32()[i]);
      break;
    case DType::kBool:
      for (int64_t i = 0; i < n; ++i) proto.add_int32_data(static_cast<const uint8_t*>(tensor.data())[i]);
      break;
    case DType::kFloat16:
    case DType::kBFloat16:
      for (int64_t i = 0; i < n; ++i) proto.add_int32_data(static_cast<const uint16_t*>(tensor.data())[i]);
      break;
  }
  return proto;
}

TensorProto read_tensor_proto_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open tensor file '" + path + "'");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  TensorProto proto;
  if (!proto.ParseFromString(bytes.str()))
    throw std::runtime_error("'" + path + "' is not a serialized ONNX TensorProto");
  return proto;
}

void write_tensor_proto_file(const TensorProto& proto, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  if (!out || !proto.SerializeToOstream(&out)) throw std::runtime_error("cannot write tensor file '" + path + "'");
}

}  // namespace ingot
