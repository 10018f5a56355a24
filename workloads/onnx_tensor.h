// Conversion between ONNX TensorProto (initializers, Constant values, the input_N.pb / output_N.pb files of
// ONNX test data) and ingot's HostTensor. Use it wherever ONNX tensors enter or leave ingot; dtypes ingot
// cannot hold (double, int8, string, ...) and external data throw OnnxUnsupportedError naming the tensor.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>

#include "ir/host_tensor.h"

namespace ingot {

// The ingot dtype of an ONNX TensorProto::DataType (FLOAT, FLOAT16, BFLOAT16, INT32, INT64, BOOL); throws
// OnnxUnsupportedError (workloads/onnx_import.h) for any other, with `what` (e.g. "input 'x'") at the head of the
// message.
DType dtype_from_onnx(int32_t onnx_type, const std::string& what);
int32_t dtype_to_onnx(DType dtype);
// The ONNX name of a data type ("DOUBLE", "UINT8", ...), for messages.
std::string onnx_type_name(int32_t onnx_type);

// Reads the values from raw_data or from the typed repeated field (float_data, int32_data, int64_data),
// whichever the proto uses. Throws std::invalid_argument when the element count does not match the dims.
HostTensor tensor_from_onnx(const onnx::TensorProto& proto);
// Writes raw_data (little-endian, as ONNX requires) unless use_typed_fields asks for float_data /
// int32_data / int64_data.
onnx::TensorProto tensor_to_onnx(const HostTensor& tensor, const std::string& name, bool use_typed_fields = false);

// A serialized TensorProto file, such as test_data_set_0/input_0.pb; throws std::runtime_error when the
// file is missing or does not parse.
onnx::TensorProto read_tensor_proto_file(const std::string& path);
void write_tensor_proto_file(const onnx::TensorProto& proto, const std::string& path);

}  // namespace ingot
