// Registration of the ONNX operator converters, one file per family: element-wise (onnx_ops_elementwise.cc),
// tensor and shape manipulation (onnx_ops_tensor.cc), neural-network layers (onnx_ops_nn.cc), recurrent
// layers (onnx_ops_recurrent.cc) and Resize (onnx_ops_resize.cc). Used only by onnx_converters()
// (workloads/onnx_graph.h).
#pragma once

#include <map>
#include <string>

#include "workloads/onnx_graph.h"

namespace ingot {

using OnnxConverterMap = std::map<std::string, OnnxConverter>;

void add_onnx_elementwise_converters(OnnxConverterMap& converters);
void add_onnx_tensor_converters(OnnxConverterMap& converters);
void add_onnx_nn_converters(OnnxConverterMap& converters);
void add_onnx_recurrent_converters(OnnxConverterMap& converters);
void add_onnx_resize_converters(OnnxConverterMap& converters);

// The converter map with every family registered (what onnx_converters() returns).
OnnxConverterMap make_onnx_converters();

}  // namespace ingot
